#!/usr/bin/env bash
# Steadiness of the openmp backend: each CPU example (build/examples/*) run
# RUNS times with --backend openmp --threads T. An example times PAIRS
# alternating pairs of a serial and an overlapped replay (--pairs) and
# reports the median of the pairs' ratios (the achieved speedup) and each
# side's median and spread. Per example this prints the achieved speedup
# of every run, its min, max and max/min (issue 23's target: <= 1.10),
# and where the spread comes from: max/min over the runs of the serial
# medians and of the overlapped medians, and the median over the runs of
# the spread of the pairs within one run (a run's own noise). A spread of
# the achieved speedup that the serial medians share comes from the
# baseline; one the overlapped medians carry alone comes from the
# parallel replays; one within runs as large as across them is noise of
# the moment rather than of a process (its threads' placement, its
# memory). And the run-queue wait of the process's threads over a run's
# serial and overlapped replays (median over the runs, ms: time they were
# runnable while their CPU ran another thread; Linux).
#   tools/bench/steady.sh [BUILD_DIR] [THREADS] [RUNS]   (build 2 10)
# EXAMPLES="jacobi2d matpow" picks examples; extra example arguments in
# ARGS_<name> (ARGS_jacobi2d="--n 2048"); PAIRS (5); STEADY_RAW=FILE
# appends every run's figures (example, threads, binding, achieved,
# serial ms, overlapped ms, pairs' min and max ratio, first overlapped ms,
# run-queue wait ms serial and overlapped) to FILE.
set -euo pipefail
dir=${1:-build}
threads=${2:-2}
runs=${3:-10}
pairs=${PAIRS:-5}
examples=${EXAMPLES:-"jacobi2d matpow recurrence blackscholes gemm heat2d"}
echo "steadiness: $runs runs per example, openmp, $threads threads," \
     "$pairs pairs a run, OMP_PROC_BIND=${OMP_PROC_BIND:-(unset)}" \
     "OMP_PLACES=${OMP_PLACES:-(unset)}," \
     "load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| example | achieved speedups | min | max | max/min | serial ms'
printf ' (max/min) | overlapped ms (max/min) | within a run | run-queue'
printf ' wait ms serial, overlapped |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
worst=0
# one run's figures: achieved serial_ms overlapped_ms pair_lo pair_hi first
# wait_serial wait_overlapped
figures() {
  awk '
    /^serial replay/ { s = $3 }
    /^overlapped replay/ { o = $3; f = $(NF - 1)
                           if (f !~ /^[0-9.]+$/) f = "-" }
    /^achieved speedup/ { a = $3; sub("x", "", a)
                          lo = $(NF - 2); hi = $NF
                          gsub(/[x)]/, "", lo); gsub(/[x)]/, "", hi) }
    /^run-queue wait/ { ws = $3; wo = $6 }
    END { if (a != "") print a, s, o, lo, hi, f, (ws == "" ? "-" : ws),
                             (wo == "" ? "-" : wo) }'
}
for ex in $examples; do
  exe="$dir/examples/$ex"
  [ -x "$exe" ] || { echo "| $ex | not built | | | | | | | |"; continue; }
  var="ARGS_$ex"
  read -r -a extra <<< "${!var:-}"
  rows=()
  for ((r = 0; r < runs; r++)); do
    v=$("$exe" --backend openmp --threads "$threads" --pairs "$pairs" \
          "${extra[@]}" 2>/dev/null | figures)
    [ -n "$v" ] && rows+=("$v")
    [ -n "$v" ] && [ -n "${STEADY_RAW:-}" ] &&
      echo "$ex $threads ${OMP_PROC_BIND:-unset} $v" >> "$STEADY_RAW"
  done
  [ ${#rows[@]} -gt 0 ] || { echo "| $ex | no figure | | | | | | | |"; continue; }
  line=$(printf '%s\n' "${rows[@]}" | awk -v ex="$ex" '
    function spread(x, n,   i, mn, mx) {
      mn = mx = x[1]
      for (i = 2; i <= n; i++) { if (x[i] < mn) mn = x[i]; if (x[i] > mx) mx = x[i] }
      return mn > 0 ? mx / mn : 0
    }
    function median(x, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
        if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
      return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
    }
    { n++; a[n] = $1; s[n] = $2; o[n] = $3; w[n] = $4 > 0 ? $5 / $4 : 0
      if ($7 != "-") { nq++; qs[nq] = $7; qo[nq] = $8 }
      all = all (n > 1 ? " " : "") $1
      if (n == 1 || $1 < mn) mn = $1; if (n == 1 || $1 > mx) mx = $1 }
    END {
      wm = median(w, n) # the median of the within-run spreads
      q = nq ? sprintf("%.1f, %.1f", median(qs, nq), median(qo, nq)) : "-"
      smin = s[1]; smax = s[1]; omin = o[1]; omax = o[1]
      for (i = 2; i <= n; i++) {
        if (s[i] < smin) smin = s[i]; if (s[i] > smax) smax = s[i]
        if (o[i] < omin) omin = o[i]; if (o[i] > omax) omax = o[i] }
      printf "| %s | %s | %.2f | %.2f | %.3f | %.4g-%.4g (%.3f) | %.4g-%.4g (%.3f) | %.3f | %s |\n",
        ex, all, mn, mx, mx / mn, smin, smax, spread(s, n), omin, omax,
        spread(o, n), wm, q
    }')
  echo "$line"
  ratio=$(echo "$line" | awk -F'|' '{gsub(/ /, "", $6); print $6}')
  worst=$(awk -v a="$worst" -v b="$ratio" 'BEGIN{print (b>a)?b:a}')
done
echo "worst max/min: $worst (target <= 1.10); load after:" \
     "$(cut -d' ' -f1-3 /proc/loadavg)"
