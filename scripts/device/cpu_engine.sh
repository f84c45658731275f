#!/usr/bin/env bash
# Issue 23 on the GPU machine's 16-core host (run from the repo root; the
# lead copies ../shared/anchors/cpu into .anchors/cpu, ignored and carried,
# for the lean-engine peer):
#   . scripts/device/env.sh; scripts/device/cpu_engine.sh
# Builds build-cpu-engine (-j16, no CUDA) and measures, each program
# printing its ratios against peers measured in the same run:
#  1. tiled Cholesky (bench_cholesky): 32x32 tiles of 64^2 and of 128^2,
#     16x16 tiles of 64^2 and of 128^2, at 4, 8 and 16 threads: reprise
#     against OpenMP depend tasks and oneTBB's flow graph (target: reprise
#     <= the best of the two: the last column <= 1.00);
#  2. the same with 4 of the 16 cores kept busy by other processes
#     (BENCH_BUSY=4; target: reprise <= 1.1 x OpenMP depend);
#  3. bench_omp heavy wavefront and tree (~19 us tasks) at 4, 8, 16
#     threads against the anchors' lean engine (target: lean / reprise >=
#     0.91), the real Jacobi (16 row blocks of 1216^2, 50 iterations)
#     against OpenMP depend with a taskwait per iteration (omp-task/tw /
#     reprise >= 1), the tiny shapes against oneTBB (tbb-flow / reprise >=
#     1) and the whole tiny Jacobi against one iteration replayed;
#  4. steadiness: jacobi2d, matpow, recurrence 10 runs each at 4 and 16
#     threads (max/min of the achieved speedup <= 1.10).
# One log: $OUT/cpu_engine.log (OUT defaults to .); a summary on stdout.
# Budget: under 6 minutes there; parts are skipped past 5 minutes.
# Elsewhere (a smoke run): RP_BUILD (build folder), CPU_THREADS ("2"),
# CPU_BUSY, CHOL_SIZES / CHOL_BUSY_SIZES ("8:64"), STEADY_THREADS.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.}
log="$OUT/cpu_engine.log"
: > "$log"
t0=$SECONDS
say() { echo "$*" | tee -a "$log"; }
left() { [ $((SECONDS - t0)) -lt 300 ] || { say "(skipped: time)"; return 1; }; }
run() { say "\$ $*"; "$@" >> "$log" 2>&1; }

say "== issue 23, CPU engine: $(date -u), $(nproc) cores," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)"
say "$(grep -m1 'model name' /proc/cpuinfo)"
B=${RP_BUILD:-build-cpu-engine}
T=${CPU_THREADS:-4,8,16}    # smaller on another machine, e.g. 2
TMAX=${T##*,}
SIZES=${CHOL_SIZES:-"16:64 16:128 32:64 32:128"}
BUSY_SIZES=${CHOL_BUSY_SIZES:-"16:64 32:64 32:128"}
BUSY=${CPU_BUSY:-4}
anchors=""
[ -f .anchors/cpu/dag_replay.c ] && anchors="-DRP_ANCHORS_CPU=$PWD/.anchors/cpu"
cmake -S . -B "$B" -DRP_WITH_CUDA=OFF -DRP_BUILD_TESTS=OFF $anchors \
  >> "$log" 2>&1 || { say "configure failed"; exit 1; }
cmake --build "$B" -j16 --target bench_omp bench_cholesky jacobi2d matpow \
  recurrence >> "$log" 2>&1 || { say "build failed"; exit 1; }
grep "bench: " "$log" | sed 's/^-- /  /'
say "built in $((SECONDS - t0)) s"
export OMP_PROC_BIND=true OPENBLAS_NUM_THREADS=1

say "== 1. tiled Cholesky, threads $T (ms; last column: / best of"
say "   omp-depend and tbb-flow, target <= 1.00)"
for sz in $SIZES; do
  left || break
  BENCH_THREADS=$T BENCH_REPS=7 run "$B/tools/bench/bench_cholesky" \
    "${sz%:*}" "${sz#*:}"
  grep -E "^\| [0-9]+ \| (reprise|omp-depend|tbb-flow) " "$log" |
    tail -n $((3 * $(echo "$T" | tr ',' ' ' | wc -w))) | sed "s/^/  [$sz] /"
done

say "== 2. the same, $TMAX threads, $BUSY cores busy (target: reprise <="
say "   1.1 x omp-depend)"
for sz in $BUSY_SIZES; do
  left || break
  BENCH_THREADS=$TMAX BENCH_REPS=7 BENCH_BUSY=$BUSY BENCH_BUSY_S=120 \
    run "$B/tools/bench/bench_cholesky" "${sz%:*}" "${sz#*:}"
  grep -E "^RESULT .*busy=$BUSY" "$log" | tail -n 3 | sed "s/^/  [$sz] /"
done

say "== 3. bench_omp: heavy shapes vs the lean engine, real Jacobi vs"
say "   OpenMP depend, tiny shapes vs oneTBB, threads $T"
if left; then
  BENCH_THREADS=$T BENCH_REPS=7 BENCH_REPS_REAL=5 JAC_ITERS=50 \
    BENCH_METHODS=seq,reprise,reprise/1it,lean,lean/1it,tbb-flow,tbb-flow/1it,omp-task/tw \
    run "$B/tools/bench/bench_omp" wavefront_heavy tree_heavy jacobi_real
fi
if left; then
  BENCH_THREADS=$T BENCH_REPS=7 \
    BENCH_METHODS=seq,reprise,reprise/1it,tbb-flow,tbb-flow/1it,lean,lean/1it \
    run "$B/tools/bench/bench_omp" chain indep wavefront tree jacobi_tiny
fi
grep -E "^  thr=" "$log" | sed 's/^/  /'

say "== 4. steadiness, 10 runs per example (max/min <= 1.10)"
for t in ${STEADY_THREADS:-4 16}; do
  left || break
  EXAMPLES="jacobi2d matpow recurrence" tools/bench/steady.sh "$B" "$t" 10 \
    2>&1 | tee -a "$log" | grep -E "^\| (jacobi2d|matpow|recurrence) |worst"
done
say "== done in $((SECONDS - t0)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
