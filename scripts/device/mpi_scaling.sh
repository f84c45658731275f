#!/bin/sh
# Strong scaling of reprise's two replays over MPI against hand-written MPI
# (issues 25, 35): the starpu backend's mode "mpi" (StarPU-MPI) and the mpi
# backend (the openmp engine with nonblocking MPI messages as tasks, one
# thread per rank: --own-threads 1; own_p/a: its prediction, the same
# simulation of every rank's tasks with no runtime cost, against
# achieved), on the GPU machine's 16-core host,
# from the repo root:
#   scripts/device/mpi_scaling.sh
# Builds with StarPU/Open MPI from /tmp/P (scripts/device/env.sh), then for
# 1, 2, 4 and 8 ranks runs tools/bench/bench_mpi_jacobi for the Jacobi and
# the heat codes at n = 2048, 4096, 8192, each grid in both forms
# (replicated: rank 0 scatters and gathers every run; distributed: every
# rank keeps its rows), the hand-written MPI code and reprise alternating
# in the same run (median of 5). Steps per run: 20 at 2048, 6 at 4096, 2
# at 8192 (about the same work per run). The whole script stays under 8
# minutes: each bench call is cut at 100 s, and once 380 s have gone
# the calls left are skipped (said in the summary). The net model's latency and bandwidth come from
# bench_mpi_pingpong on 2 ranks first. Writes $OUT/mpi_scaling.log (every
# table the bench prints: per-rank breakdown of reprise's time, per-thread
# CPU, lowering) and prints the ratio table (reprise / MPI; targets: <=
# 1.15 at n >= 4096, <= 1.3 at 2048, on 2, 4 and 8 ranks) for both
# lowerings (own: the mpi backend; faster: which of the two took less),
# the analysis'
# prediction against the achieved time (target within 15 %: the net
# model over every rank's lowering, rp__starpu_predict, its costs per
# task, request and launch calibrated by the bench's probe; an/ach: the
# analysis' makespan, which has no such costs; pm/ach: pred with the
# bodies slowed by the ranks sharing memory, as the probe measured), the
# set-up
# at n = 8192 against one run, and for the mpi backend mpi_p/a (its own
# model, rp_exec_predict(): its lists after the cut, each task's profiled
# time, the engine's cost per task and a ping-pong's network on the
# ranks in use; per rank for Jacobi at the largest n, distributed) and
# 1st/rep (its create + first run over a replay; target <= 2 at 8192), LAST; before it, the overlap of halos with
# computation on the mpi backend (issue 35, item 2: its stencils cut into
# interior and boundary rows, own_ms, against the same backend with them
# whole, whole_ms, timed alternately in the same run: whole/own > 1 is
# the gain) and the slices of the last grid on the most ranks; before it, where the time went on
# the most ranks, and each rank's wall time and wait on receives for
# Jacobi at the largest n, distributed (issue 35: with a chain through the
# ranks they grew with the rank). Each rank's workers and cores are
# chosen from the ranks on the node (STARPU_NCPU=1 here: one worker, as
# the hand-written code has one thread; mpirun --bind-to none leaves the
# binding to the backend), printed in the log.
# Overrides (to try it elsewhere): MPI_SCALING_CALL_S (a bench call's
# limit, 100 s), MPI_SCALING_BUDGET_S (no call starts after it, 380 s),
# MPI_SCALING_RANKS, MPI_SCALING_N,
# MPI_SCALING_STEPS, MPI_SCALING_BUILD (build folder), MPI_SCALING_NOBUILD=1
# (use it as built); RP_NO_DEVENV=1 uses the machine's own packages.
# Smoke test on a small machine:
#   RP_NO_DEVENV=1 MPI_SCALING_RANKS=2 MPI_SCALING_N=64,128 \
#     MPI_SCALING_STEPS=4,2 OUT=/tmp/mpis scripts/device/mpi_scaling.sh
set -u
[ -n "${RP_NO_DEVENV:-}" ] || . scripts/device/env.sh
RANKS=${MPI_SCALING_RANKS:-1 2 4 8}
NS=${MPI_SCALING_N:-2048,4096,8192}
STEPS=${MPI_SCALING_STEPS:-20,6,2}
CALL_S=${MPI_SCALING_CALL_S:-100}
BUDGET_S=${MPI_SCALING_BUDGET_S:-380}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
LOG=$OUT/mpi_scaling.log
B=${MPI_SCALING_BUILD:-build-mpi-scaling}
T0=$(date +%s)
{
  echo "== mpi_scaling: $(date -u) $(uname -n), $(nproc) cpus"
  echo "== load: $(cat /proc/loadavg)"
  lscpu 2>/dev/null | grep -E 'Model name|Thread|Core|Socket|NUMA node\(s\)'
} > "$LOG"
[ -n "${MPI_SCALING_NOBUILD:-}" ] ||
  { cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DRP_WITH_CUDA=OFF \
      -DRP_WITH_XRT=OFF -DRP_BUILD_TESTS=OFF -DRP_BUILD_EXAMPLES=ON \
      -DRP_BUILD_BENCH=ON >> "$LOG" 2>&1 &&
    cmake --build $B -j"$(nproc)" --target bench_mpi_jacobi \
      bench_mpi_pingpong >> "$LOG" 2>&1; }
if [ ! -x $B/tools/bench/bench_mpi_jacobi ]; then
  echo "mpi_scaling: build failed (see $LOG)"; tail -30 "$LOG"; exit 1
fi
echo "== built in $(( $(date +%s) - T0 )) s" | tee -a "$LOG"

export STARPU_NCPU=1 STARPU_SILENT=1 OMPI_MCA_mpi_yield_when_idle=1
MPIRUN="mpirun --oversubscribe --bind-to none"
$MPIRUN -np 2 $B/tools/bench/bench_mpi_pingpong --json "$OUT/net.json" \
  >> "$LOG" 2>&1
LAT=$(sed -n 's/.*"latency_us": *\([0-9.eE+-]*\).*/\1/p' "$OUT/net.json")
BPS=$(sed -n 's/.*"bandwidth_bps": *\([0-9.eE+-]*\).*/\1/p' "$OUT/net.json")
GBPS=$(awk -v b="${BPS:-5e9}" 'BEGIN { printf "%.3f", b / 1e9 }')
LAT=${LAT:-2}
echo "== net model (bench_mpi_pingpong): $LAT us + bytes / $GBPS GB/s" |
  tee -a "$LOG"

SKIPPED=""
for np in $RANKS; do
  for app in jacobi heat; do
    t=$(( $(date +%s) - T0 ))
    : > "$OUT/run_${app}_$np.txt"
    if [ $t -gt $BUDGET_S ]; then
      SKIPPED="$SKIPPED $app/$np"
      continue
    fi
    echo "== $app, $np ranks ($t s, load $(cut -d' ' -f1 /proc/loadavg))" \
      >> "$LOG"
    timeout $CALL_S $MPIRUN -np $np $B/tools/bench/bench_mpi_jacobi --app $app \
      --n $NS --steps $STEPS --runs 5 --net-latency-us "$LAT" \
      --net-gbps "$GBPS" --own-threads 1 > "$OUT/run_${app}_$np.txt" 2>&1
    echo "   rc=$?" >> "$LOG"
    sed "s/^/[$app np$np] /" "$OUT/run_${app}_$np.txt" >> "$LOG"
  done
done
echo "== done in $(( $(date +%s) - T0 )) s" | tee -a "$LOG"

# Summary: where the time went on the most ranks; each rank's wait on
# receives for Jacobi at the largest n, distributed; the ratio table,
# prediction and set-up LAST.
last=$(echo $RANKS | awk '{ print $NF }')
NMAX=$(echo "$NS" | tr ',' '\n' | sort -n | tail -1)
{
  echo
  echo "where the time went, $last ranks (ms per run):"
  for app in jacobi heat; do
    grep -A$((last + 1)) "where the time went" "$OUT/run_${app}_$last.txt" |
      grep -v "^--"
  done
  echo
  echo "per rank, jacobi n = $NMAX distributed, $last ranks (ms per run;" \
    "a chain through the ranks makes wall and recv_wt grow with the rank):"
  awk -v t="jacobi, n = $NMAX, distributed" '
    index($0, "where the time went") { f = index($0, t) > 0; next }
    f && $1 == "rank" { printf "  %4s %9s %9s %9s\n", "rank", "wall",
                               "bodies", "recv_wt"; next }
    f && $1 ~ /^[0-9]+$/ && NF > 6 { printf "  %4s %9s %9s %9s\n", $1, $2,
                                            $3, $6; next }
    { f = 0 }' "$OUT/run_jacobi_$last.txt"
  echo
  grep -h "^net model:" "$OUT/run_jacobi_$last.txt" | head -1
  echo "predicted per rank, jacobi n = $NMAX distributed, $last ranks" \
    "(rp__starpu_predict: the lowering of every rank, the net model):"
  awk -v n="$NMAX" '
    $1 == "jacobi" && $2 == n && $3 == "distributed" { f = 1; next }
    f && $1 == "rank" { print; next }
    f && NF == 4 && $1 ~ /^[0-9]+$/ { print; next }
    f && /predicted per rank/ { next }
    { f = 0 }' "$OUT/run_jacobi_$last.txt"
  echo
  grep -h "^mpi backend model" "$OUT/run_jacobi_$last.txt" | head -1
  echo "the mpi backend's prediction per rank, jacobi n = $NMAX" \
    "distributed, $last ranks (rp_exec_predict: its own lists after the" \
    "cut, each task's profiled time, the ping-pong's network):"
  awk -v n="$NMAX" '
    $1 == "jacobi" && $2 == n && $3 == "distributed" { f = 1; next }
    f && $1 == "mpi_rank" { print; next }
    f && /^  / { next }
    { f = 0 }' "$OUT/run_jacobi_$last.txt"
  echo
  echo "overlap on the mpi backend (own: stencils cut into interior and" \
    "boundary rows; whole: left whole, mode \"whole\"; ms per run):"
  printf "%5s %-6s %-5s %-11s %9s %9s %9s\n" ranks app n form own_ms \
    whole_ms whole/own
  for np in $RANKS; do
    for app in jacobi heat; do
      awk -v np=$np '($1 == "jacobi" || $1 == "heat") && NF >= 20 {
        printf "%5d %-6s %-5s %-11s %9s %9s %9s\n", np, $1, $2, $3, $15,
               $19, $20 }' "$OUT/run_${app}_$np.txt"
    done
  done
  grep -h "own: stencils cut" "$OUT/run_jacobi_$last.txt" | tail -1
  echo
  [ -z "$SKIPPED" ] || echo "skipped (past $BUDGET_S s):$SKIPPED"
  echo "starpu: the starpu backend (StarPU-MPI); own: the mpi backend" \
    "(the openmp engine, MPI_Isend/MPI_Irecv tasks); ratio: / mpi_ms"
  printf "%s %s %s\n" "ranks app    n     form        mpi_ms   starpu_ms" \
    "ratio  target results   pred/ach setup_ms first_ms  an/ach  pm/ach" \
    "  own_ms  ratio  target results   faster own_p/a mpi_p/a 1st/rep"
  for np in $RANKS; do
    for app in jacobi heat; do
      awk -v np=$np '$1 == "jacobi" || $1 == "heat" {
        t = $2 >= 4096 ? 1.15 : 1.3
        ok = np == 1 ? "-" : ($7 <= t ? "met" : "MISSED")
        own = NF >= 17 && $15 > 0
        ook = !own ? "-" : np == 1 ? "-" : ($16 <= t ? "met" : "MISSED")
        fast = !own ? "-" : $15 < $6 ? "own" : "starpu"
        printf "%5d %-6s %-5s %-11s %8s %10s %6s %6s %-9s %7s %8s %8s " \
               "%7s %7s %8s %6.3f %6s %-9s %6s %7s %7s %7s\n", np, $1, $2,
               $3, $5, $6, $7, ok, $8, $10, $11, $12, $13, $14,
               own ? $15 : "-", own ? $16 : 0, ook, own ? $17 : "-", fast,
               (NF >= 18 ? $18 : "-"), (NF >= 21 ? $21 : "-"),
               (NF >= 22 ? $22 : "-") }' \
        "$OUT/run_${app}_$np.txt"
    done
  done
  # how often each lowering met its target and was the faster
  for np in $RANKS; do
    for app in jacobi heat; do
      cat "$OUT/run_${app}_$np.txt" | sed "s/^/$np /"
    done
  done | awk -v nmax="$NMAX" '$2 == "jacobi" || $2 == "heat" {
      if ($1 == 1 || NF < 18 || $16 <= 0) next
      t = $3 >= 4096 ? 1.15 : 1.3; cells++
      sm += $8 <= t; om += $17 <= t; of += $16 < $7
      if (NF >= 19 && $19 > 0) { np++; pin += $19 >= 0.85 && $19 <= 1.15 }
      if (NF >= 22 && $22 > 0) { mp++; min += $22 >= 0.85 && $22 <= 1.15 }
      if (NF >= 23 && $23 > 0 && $3 == nmax) { su++; sok += $23 <= 2 } }
    END { if (cells) printf "targets met (2 ranks and more): starpu %d, own" \
            " %d of %d cells; own faster than starpu in %d of %d; own" \
            " predicted within 15%%: %d of %d (own_p/a), %d of %d" \
            " (mpi_p/a); own set-up at n = %s within 2 replays: %d of" \
            " %d\n", sm, om, cells, of, cells, pin, np, min, mp, nmax, sok,
            su }'
} | tee -a "$LOG"
