#!/usr/bin/env bash
# Steadiness of the openmp backend: each CPU example (build/examples/*) run
# RUNS times with --backend openmp --threads T; prints the achieved speedup
# (serial replay / overlapped replay, as the example measures it) of every
# run, its min, max and max/min (issue 23's target: max/min <= 1.10).
#   tools/bench/steady.sh [BUILD_DIR] [THREADS] [RUNS]   (build 2 10)
# EXAMPLES="jacobi2d matpow" picks examples; extra example arguments in
# ARGS_<name> (ARGS_jacobi2d="--n 2048").
set -euo pipefail
dir=${1:-build}
threads=${2:-2}
runs=${3:-10}
examples=${EXAMPLES:-"jacobi2d matpow recurrence blackscholes gemm heat2d"}
echo "steadiness: $runs runs per example, openmp, $threads threads," \
     "OMP_PROC_BIND=${OMP_PROC_BIND:-(unset)}" \
     "OMP_PLACES=${OMP_PLACES:-(unset)}," \
     "load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| example | achieved speedups | min | max | max/min |\n'
printf '|---|---|---|---|---|\n'
worst=0
for ex in $examples; do
  exe="$dir/examples/$ex"
  [ -x "$exe" ] || { echo "| $ex | not built | | | |"; continue; }
  var="ARGS_$ex"
  read -r -a extra <<< "${!var:-}"
  vals=()
  for ((r = 0; r < runs; r++)); do
    v=$("$exe" --backend openmp --threads "$threads" "${extra[@]}" 2>/dev/null |
        awk '/^achieved speedup/ {sub("x", "", $3); print $3}')
    [ -n "$v" ] && vals+=("$v")
  done
  [ ${#vals[@]} -gt 0 ] || { echo "| $ex | no figure | | | |"; continue; }
  read -r mn mx ratio < <(printf '%s\n' "${vals[@]}" |
    awk 'NR==1{mn=$1;mx=$1} {if($1<mn)mn=$1; if($1>mx)mx=$1}
         END{printf "%.2f %.2f %.3f\n", mn, mx, mx/mn}')
  printf '| %s | %s | %s | %s | %s |\n' "$ex" "${vals[*]}" "$mn" "$mx" "$ratio"
  worst=$(awk -v a="$worst" -v b="$ratio" 'BEGIN{print (b>a)?b:a}')
done
echo "worst max/min: $worst (target <= 1.10); load after:" \
     "$(cut -d' ' -f1-3 /proc/loadavg)"
