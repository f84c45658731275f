#!/usr/bin/env bash
# Issues 23 and 31 on the GPU machine's 16-core host (run from the repo
# root; the lead copies ../shared/anchors/cpu into .anchors/cpu, ignored
# and carried, for the lean-engine peer):
#   . scripts/device/env.sh; scripts/device/cpu_engine.sh
# Builds build-cpu-engine (-j16, no CUDA, no tests) and measures, under
# each binding B of: OMP_PROC_BIND unset, true, close with OMP_PLACES=cores,
# spread (reprise follows it: no cores given; every runtime in a process of
# its own, tools/bench/bench_isolate.h):
#  1. tiled Cholesky (bench_cholesky) 16x16 and 32x32 tiles of 64^2 and
#     128^2 at 4, 8 and 16 threads: reprise against OpenMP depend tasks and
#     oneTBB's flow graph (target: reprise <= the best of the two);
#  2. the same at 16 threads with 4 of the 16 cores kept busy by other
#     processes, unset and true (target: reprise <= 1.1 x OpenMP depend);
#  3. bench_omp heavy wavefront and tree (~19 us tasks) at 4, 8, 16
#     threads against the anchors' lean engine, unset and true (target:
#     lean / reprise >= 0.91);
#  4. steadiness: jacobi2d, matpow, recurrence 10 runs each at 4, 8, 16
#     threads, unset and true (target: max/min of the achieved speedup
#     <= 1.10);
#  5. if time is left: the real Jacobi against OpenMP depend and the tiny
#     shapes against oneTBB (issue 23), unset.
# Logs under $OUT (OUT defaults to .): cpu_engine.log, every program's
# output in $OUT/cpu_engine/; a summary table last on stdout.
# Budget: under 9 minutes there. A part starts only if its estimate fits
# in BUDGET_S (490 s) from the start, so the script ends by about 8.5
# minutes whatever the machine does; what was skipped says so.
# Elsewhere (a smoke run): RP_BUILD (build folder), CPU_THREADS ("2"),
# CPU_BUSY, CHOL_SIZES, CHOL_BUSY_SIZES, STEADY_THREADS, STEADY_RUNS,
# BINDINGS ("unset true close spread"), BUDGET_S, JOBS (16).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.}
D="$OUT/cpu_engine"
mkdir -p "$D"
rm -f "$D"/*.txt
log="$OUT/cpu_engine.log"
: > "$log"
t0=$SECONDS
BUDGET=${BUDGET_S:-490}
say() { echo "$*" | tee -a "$log"; }
# fits EST: true when a part of about EST seconds ends within the budget
fits() {
  [ $((SECONDS - t0 + $1)) -le "$BUDGET" ] && return 0
  say "  (skipped, time: $((SECONDS - t0)) s gone, ~$1 s more)"
  return 1
}
# bind B CMD...: CMD under binding B (unset, true, close, spread)
bind() {
  local b=$1
  shift
  case $b in
    unset) env -u OMP_PROC_BIND -u OMP_PLACES "$@" ;;
    close) env OMP_PROC_BIND=close OMP_PLACES=cores "$@" ;;
    *) env -u OMP_PLACES OMP_PROC_BIND="$b" "$@" ;;
  esac
}
# run FILE CMD...: CMD's output into FILE and the log
run() {
  local f=$1
  shift
  echo "\$ $*" >> "$log"
  "$@" > "$f" 2>&1
  cat "$f" >> "$log"
}

say "== issues 23, 31, CPU engine: $(date -u), $(nproc) cores," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)"
say "$(grep -m1 'model name' /proc/cpuinfo)"
B=${RP_BUILD:-build-cpu-engine}
T=${CPU_THREADS:-4,8,16}    # smaller on another machine, e.g. 2
TMAX=${T##*,}
SIZES=${CHOL_SIZES-"16:64 16:128 32:64 32:128"}
BUSY_SIZES=${CHOL_BUSY_SIZES-"16:64 32:128"}
BUSY=${CPU_BUSY:-4}
BINDS=${BINDINGS:-"unset true close spread"}
anchors=""
[ -f .anchors/cpu/dag_replay.c ] && anchors="-DRP_ANCHORS_CPU=$PWD/.anchors/cpu"
cmake -S . -B "$B" -DRP_WITH_CUDA=OFF -DRP_BUILD_TESTS=OFF $anchors \
  >> "$log" 2>&1 || { say "configure failed"; exit 1; }
cmake --build "$B" -j"${JOBS:-16}" --target bench_omp bench_cholesky \
  jacobi2d matpow recurrence >> "$log" 2>&1 || { say "build failed"; exit 1; }
grep "bench: " "$log" | sed 's/^-- /  /'
say "built in $((SECONDS - t0)) s"
export OPENBLAS_NUM_THREADS=1 BENCH_PIN=0

# seconds a Cholesky run of T x T tiles of nb^2 takes (3 methods, threads
# T, 9 runs each + the reference): a guess from the host's figures
chol_est() {
  local t=${1%:*} nb=${1#*:}
  echo $(( (t * t * t * nb * nb * nb / 1000000000) / 4 + 3 ))
}

say "== 1. tiled Cholesky, threads $T, bindings: $BINDS"
for b in $BINDS; do
  for sz in $SIZES; do
    fits "$(chol_est "$sz")" || continue
    f="$D/chol_${b}_${sz/:/x}.txt"
    BENCH_THREADS=$T BENCH_REPS=7 BENCH_METHODS=reprise,omp-depend,tbb-flow \
      run "$f" bind "$b" "$B/tools/bench/bench_cholesky" "${sz%:*}" "${sz#*:}"
    grep -E "^\| [0-9]+ \| (reprise|omp-depend|tbb-flow) " "$f" |
      sed "s/^/  [$b $sz] /"
  done
done

say "== 2. the same, $TMAX threads, $BUSY cores busy (target: reprise <="
say "   1.1 x omp-depend)"
for b in unset true; do
  for sz in $BUSY_SIZES; do
    fits "$(chol_est "$sz")" || continue
    f="$D/busy_${b}_${sz/:/x}.txt"
    BENCH_THREADS=$TMAX BENCH_REPS=7 BENCH_BUSY=$BUSY BENCH_BUSY_S=120 \
      BENCH_METHODS=reprise,omp-depend,tbb-flow \
      run "$f" bind "$b" "$B/tools/bench/bench_cholesky" "${sz%:*}" "${sz#*:}"
    grep -E "^RESULT .*busy=$BUSY" "$f" | sed "s/^/  [$b $sz] /"
  done
done

say "== 3. heavy wavefront and tree vs the lean engine, threads $T"
for b in unset true; do
  fits 25 || continue
  f="$D/heavy_${b}.txt"
  BENCH_THREADS=$T BENCH_REPS_REAL=5 BENCH_METHODS=seq,reprise,lean \
    run "$f" bind "$b" "$B/tools/bench/bench_omp" wavefront_heavy tree_heavy
  grep -E "^  thr=" "$f" | sed "s/^/  [$b]/"
done

say "== 4. steadiness, ${STEADY_RUNS:-10} runs per example (max/min <= 1.10)"
for t in ${STEADY_THREADS-4 16 8}; do
  for b in unset true; do
    # a batch's estimate: the last one's time, 60 s before the first
    fits "${est:-60}" || continue
    s=$SECONDS
    f="$D/steady_${b}_${t}.txt"
    EXAMPLES="jacobi2d matpow recurrence" \
      run "$f" bind "$b" tools/bench/steady.sh "$B" "$t" "${STEADY_RUNS:-10}"
    grep -E "^\| (jacobi2d|matpow|recurrence) |worst" "$f" |
      sed "s/^/  [$b $t] /"
    est=$((SECONDS - s + 5))
  done
done

say "== 5. the real Jacobi vs OpenMP depend, tiny shapes vs oneTBB (unset)"
if fits 60; then
  BENCH_THREADS=$T BENCH_REPS=7 BENCH_REPS_REAL=5 JAC_ITERS=50 \
    BENCH_METHODS=seq,reprise,reprise/1it,tbb-flow,tbb-flow/1it,omp-task/tw \
    run "$D/jacobi_tiny.txt" bind unset "$B/tools/bench/bench_omp" \
    jacobi_real chain indep wavefront tree jacobi_tiny
  grep -E "^  thr=" "$D/jacobi_tiny.txt" | sed 's/^/  /'
fi

# ---- summary ----
# the ratio of reprise to the best of omp-depend and tbb-flow per thread
# count of a bench_cholesky output (busy: to omp-depend)
chol_ratios() {
  awk -v busy="${2:-0}" -v T="$T" '
    /^RESULT / {
      n = $2; split($3, a, "="); t = a[2]
      for (i = 4; i <= NF; i++) if ($i ~ /^ms=/) { split($i, b, "="); ms = b[2] }
      if (n == "reprise") r[t] = ms
      else if (n == "omp-depend" || (!busy && n == "tbb-flow"))
        if (!(t in best) || ms < best[t]) best[t] = ms
    }
    END {
      m = split(T, th, ",")
      for (i = 1; i <= m; i++) {
        t = th[i]
        if ((t in r) && (t in best) && best[t] > 0)
          printf " %.2f (%.1f ms) |", r[t] / best[t], r[t]
        else printf " - |"
      }
    }' "$1"
}
hdr() { printf '| %s |' "$1"; for t in ${T//,/ }; do printf ' %s thr |' "$t"; done
        echo; printf '|---|'; for t in ${T//,/ }; do printf -- '---|'; done; echo; }
{
echo
echo "== summary: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)," \
     "$((SECONDS - t0)) s"
echo
# chol_rows PREFIX BINDINGS SIZES [busy]: a row per output file
chol_rows() {
  for b in $2; do
    for sz in $3; do
      f="$D/${1}_${b}_${sz/:/x}.txt"
      [ -f "$f" ] && echo "| $b ${sz/:/ tiles of } |$(chol_ratios "$f" "${4:-0}")"
    done
  done
}
hdr "Cholesky: reprise / best of omp-depend, tbb-flow (reprise ms)"
chol_rows chol "$BINDS" "$SIZES"
echo
echo "| $BUSY cores busy, $TMAX threads: reprise / omp-depend | ratio |"
echo "|---|---|"
T=$TMAX chol_rows busy "unset true" "$BUSY_SIZES" 1
echo
lean_of() { grep -E "^  thr=$2 $3 " "$1" | grep -oE 'lean [0-9.]+x' |
            head -1 | cut -d' ' -f2; }
steady_of() { awk -F'|' -v e="$2" '$2 ~ " "e" " {gsub(/ /, "", $6); print $6}' "$1"; }
# cells LABEL CMD FILE ARG...: a row, a cell per ARG: CMD FILE ARG (split)
cells() {
  local l=$1 c=$2 f=$3 v
  shift 3
  printf '| %s |' "$l"
  for a in "$@"; do
    v=$($c "$f" $a)
    printf ' %s |' "${v:--}"
  done
  echo
}
hdr "lean / reprise (heavy shapes)"
for b in unset true; do
  f="$D/heavy_${b}.txt"
  [ -f "$f" ] || continue
  for sh in wavefront_heavy tree_heavy; do
    args=()
    for t in ${T//,/ }; do args+=("$t $sh"); done
    cells "$b $sh" lean_of "$f" "${args[@]}"
  done
done
echo
echo "| steadiness: max/min of the achieved speedup | threads | jacobi2d |" \
     "matpow | recurrence |"
echo "|---|---|---|---|---|"
for t in ${STEADY_THREADS-4 16 8}; do
  for b in unset true; do
    f="$D/steady_${b}_${t}.txt"
    [ -f "$f" ] && cells "$b | $t" steady_of "$f" jacobi2d matpow recurrence
  done
done
echo
echo "== done in $((SECONDS - t0)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee -a "$log"
