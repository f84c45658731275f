#!/bin/sh
# Prediction-error table of the examples for one backend (issues 13, 24):
# runs every example RUNS times (the model calibrated on first use, cached;
# CALIBRATE=1 recalibrates before each example), and prints a Markdown
# table of the median achieved speedup (the "achieved speedup" line: the
# median of the example's timed pairs), the median prediction (the
# "predicted speedup" line) and the error (predicted - achieved) /
# achieved, with the machine load before and after.
#
# usage: scripts/prediction_table.sh [BUILD_DIR] [BACKEND] [RUNS] [THREADS]
#   BUILD_DIR  a build with the examples and the tool (default build)
#   BACKEND    openmp, cuda, xrt, reference (default openmp)
#   RUNS       runs per example, the median kept (default 5, at least 5)
#   THREADS    openmp threads (default 2; ignored by other backends)
# Environment: EXAMPLES (default: the examples below), EXTRA (arguments
# given to every example), XDG_CACHE_HOME (where the model is kept).
set -eu
build=${1:-build}
backend=${2:-openmp}
runs=${3:-5}
threads=${4:-2}
[ "$runs" -ge 5 ] || { echo "RUNS must be at least 5" >&2; exit 2; }
examples=${EXAMPLES:-"jacobi2d matpow recurrence blackscholes heat2d matmul_rows twokernels"}
tool=$build/tools/reprise
[ -x "$tool" ] || { echo "no $tool: build first" >&2; exit 2; }

median() { sort -g | awk '{v[NR] = $1} END {
  if (NR == 0) { print "nan"; exit }
  if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Threads are an openmp option; the other backends refuse it.
topt=""
[ "$backend" = openmp ] && topt="--threads $threads"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "| example | backend | predicted | achieved | error | runs (achieved min-max) |"
echo "| --- | --- | ---: | ---: | ---: | --- |"
errs=""
for e in $examples; do
  exe=$build/examples/$e
  [ -x "$exe" ] || { echo "| $e | $backend | - | - | - | not built |"; continue; }
  ach=""; pred=""
  # CALIBRATE=1: calibrated right before the example's runs (on a shared
  # machine the share of a core the team gets changes by the minute);
  # else the cached model, calibrated on first use.
  if [ "${CALIBRATE:-0}" = 1 ] &&
     ! cal=$("$tool" calibrate --backend "$backend" $topt --quiet 2>&1); then
    echo "$e: calibration failed: $cal" >&2
  fi
  i=0
  while [ $i -lt "$runs" ]; do
    out=$("$exe" --backend "$backend" $topt ${EXTRA:-} 2>&1) ||
      { echo "$e failed: $out" >&2; break; }
    a=$(printf '%s\n' "$out" | awk '/^achieved speedup/ {sub("x", "", $3); print $3; exit}')
    p=$(printf '%s\n' "$out" | awk '/^predicted speedup/ && /model of/ {sub("x", "", $3); print $3; exit}')
    ach="$ach $a"; pred="$pred $p"
    i=$((i + 1))
  done
  ma=$(echo $ach | tr ' ' '\n' | median)
  mp=$(echo $pred | tr ' ' '\n' | median)
  lo=$(echo $ach | tr ' ' '\n' | sort -g | head -1)
  hi=$(echo $ach | tr ' ' '\n' | sort -g | tail -1)
  if [ -z "$mp" ] || [ "$mp" = nan ]; then # every run withheld its figure: the machine was busy
    echo "| $e | $backend | withheld | ${ma}x | - | $runs ($lo-$hi) |"
    continue
  fi
  err=$(awk -v p="$mp" -v a="$ma" 'BEGIN { printf "%+.1f%%", 100 * (p - a) / a }')
  errs="$errs $(awk -v p="$mp" -v a="$ma" 'BEGIN { e = 100 * (p - a) / a; print e < 0 ? -e : e }')"
  echo "| $e | $backend | ${mp}x | ${ma}x | $err | $runs ($lo-$hi) |"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
echo
echo "median |error| over rows: $(echo $errs | tr ' ' '\n' | median)%;" \
     "load average before: $load0, after: $load1; $(nproc) cores; $(hostname)"
