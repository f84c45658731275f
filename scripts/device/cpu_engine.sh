#!/usr/bin/env bash
# Issues 23 and 31 on the GPU machine's 16-core host, third run: what the
# first (c0b6332: Cholesky fixed under binding) left open, after the
# stealing engine's wake-ups were cut to one per task (branch engine31b)
# (run from the repo root; the lead copies ../shared/anchors/cpu into
# .anchors/cpu, ignored and carried, for the lean-engine peer):
#   . scripts/device/env.sh; scripts/device/cpu_engine.sh
# Builds build-cpu-engine (-j16, no CUDA, no tests) and measures (reprise
# follows OMP_PROC_BIND: no cores given; every runtime in a process of
# its own, tools/bench/bench_isolate.h), parts in the order CPU_PARTS
# ("heavy chol busy steady"):
#  0. the machine: SMT, governor, the busiest processes before starting;
#  1. heavy: bench_omp heavy wavefront and tree (~19 us tasks) at 4, 8, 16
#     threads against the anchors' lean engine, with the CPUs each
#     method's tasks ran on and its threads' run-queue wait over the timed
#     reps (BENCH_VERBOSE: a pinned thread whose CPU another thread holds
#     waits there), twice per binding in the
#     order unset, true, true, unset (an effect that follows the binding
#     shows in both rounds, one that follows the clock does not), each
#     with the hypervisor's steal time per CPU and the least busy CPU
#     while it ran (/proc/stat); then the wavefront at 16 threads with the main
#     thread's tasks twice as long (BENCH_SLOW=2: a thread sharing its
#     core), unset and true (target: lean / reprise >= 0.91); ~130 s;
#  2. chol: tiled Cholesky 16x16 and 32x32 tiles of 64^2 and 128^2
#     (CHOL_SIZES) at 4, 8, 16 threads under OMP_PROC_BIND unset, true,
#     close + OMP_PLACES=cores and spread (CHOL_BINDINGS): the issue's 48
#     cells (target: reprise <= the best of OpenMP depend and oneTBB's
#     flow graph); ~130 s;
#  4. busy: 4 of the cores kept busy by other processes (BENCH_BUSY=4,
#     BUSY_PROCS), tiled Cholesky 16x16 and 32x32 tiles of 64^2
#     (BUSY_SIZES) at the most threads, unset and true (BINDINGS),
#     BUSY_ROUNDS (1) rounds, each with reprise's idle policy as it
#     decides (auto: it should yield, "IDLE ... idle_yield=1") and forced
#     to the old one (RP_OMP_IDLE=spin) one after the other (target:
#     reprise <= 1.1x OpenMP depend); ~35 s a round;
#  3. steady: jacobi2d, matpow, recurrence 10 runs each at 4, 16, 8
#     threads, unset and true, each run's serial and overlapped medians
#     apart (tools/bench/steady.sh; target: max/min of the achieved
#     speedup <= 1.10); ~80 s a batch: 4 threads unset and true fit the
#     budget after the parts above, 16 and 8 threads only on a fast build
#     (CPU_PARTS="steady chol" or STEADY_THREADS="16 8" for them).
# Logs under $OUT (OUT defaults to .): cpu_engine.log, every program's
# output in $OUT/cpu_engine/; a summary table last on stdout.
# Budget: under 9 minutes there. A part starts only if its estimate fits
# in BUDGET_S (490 s) from the start, so the script ends by about 8.5
# minutes whatever the machine does; what was skipped says so.
# Elsewhere (a smoke run): RP_BUILD (build folder), CPU_THREADS ("4,8,16"),
# CHOL_SIZES, CHOL_BINDINGS, BUSY_PROCS, BUSY_SIZES, BUSY_ROUNDS,
# STEADY_THREADS, STEADY_RUNS, BINDINGS
# ("unset true"; steadiness), CPU_PARTS, BUDGET_S, JOBS (16),
# ARGS_<example> (steady.sh).
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

say "== issues 23, 31, CPU engine (third run): $(date -u), $(nproc)" \
    "cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
say "$(grep -m1 'model name' /proc/cpuinfo)"
B=${RP_BUILD:-build-cpu-engine}
T=${CPU_THREADS:-4,8,16}    # smaller on another machine, e.g. 2
TMAX=${T##*,}
SIZES=${CHOL_SIZES-"16:64 32:64 16:128 32:128"}
BINDS=${BINDINGS:-"unset true"}
CBINDS=${CHOL_BINDINGS:-"unset true close spread"}
anchors=""
[ -f .anchors/cpu/dag_replay.c ] && anchors="-DRP_ANCHORS_CPU=$PWD/.anchors/cpu"
cmake -S . -B "$B" -DRP_WITH_CUDA=OFF -DRP_BUILD_TESTS=OFF $anchors \
  >> "$log" 2>&1 || { say "configure failed"; exit 1; }
cmake --build "$B" -j"${JOBS:-16}" --target bench_omp bench_cholesky \
  jacobi2d matpow recurrence >> "$log" 2>&1 || { say "build failed"; exit 1; }
grep "bench: " "$log" | sed 's/^-- /  /'
say "built in $((SECONDS - t0)) s"
export OPENBLAS_NUM_THREADS=1 BENCH_PIN=0

# /proc/stat per CPU: "cpuN busy steal idle" in ticks (busy: user, nice,
# system, irq, softirq)
cpu_ticks() {
  awk '/^cpu[0-9]/ {print $1, $2 + $3 + $4 + $7 + $8, $9, $5 + $6}' /proc/stat
}
# cpu_delta BEFORE: per CPU over the interval since BEFORE (a cpu_ticks
# output), the share busy and the share stolen by the hypervisor; one
# line: the CPUs with >= 5 % steal, and the least busy CPU
cpu_delta() {
  cpu_ticks | awk -v before="$1" '
    BEGIN { n = split(before, l, "\n")
            for (i = 1; i <= n; i++) { split(l[i], f, " ")
              b[f[1]] = f[2]; st[f[1]] = f[3]; id[f[1]] = f[4] } }
    { db = $2 - b[$1]; ds = $3 - st[$1]; di = $4 - id[$1]; tot = db + ds + di
      if (tot <= 0) next
      if (ds / tot >= 0.05) steal = steal sprintf(" %s %.0f%%", $1, 100 * ds / tot)
      tsteal += ds; ttot += tot
      if (!seen || db / tot < low) { low = db / tot; lowc = $1; seen = 1 } }
    END { printf "steal %.1f%% of all CPU time%s; least busy %s %.0f%%\n",
            ttot ? 100 * tsteal / ttot : 0,
            steal == "" ? "" : " (" substr(steal, 2) ")", lowc, 100 * low }'
}

say "== 0. the machine"
say "  $(lscpu 2>/dev/null | grep -E '^(Thread|Core|Socket|NUMA node)\(s\)' |
        tr -s ' ' | paste -sd';' -)"
say "  governor: $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor \
                   2>/dev/null || echo none)"
say "  busiest processes: $(ps -eo pcpu=,comm= --sort=-pcpu 2>/dev/null |
        head -5 | awk '{printf "%s %s%%, ", $2, $1}')"
c0=$(cpu_ticks); sleep 2
say "  2 s idle: $(cpu_delta "$c0")"

# seconds a Cholesky run of T x T tiles of nb^2 takes (3 methods, threads
# T, 9 runs each + the reference): a guess from the host's figures
chol_est() {
  local t=${1%:*} nb=${1#*:}
  echo $(( (t * t * t * nb * nb * nb / 1000000000) / 4 + 3 ))
}

part_heavy() {
  local r=0 b f c0
  say "== 1. heavy wavefront and tree vs the lean engine, threads $T," \
      "rounds unset true true unset"
  for b in unset true true unset; do
    r=$((r + 1))
    fits 25 || continue
    f="$D/heavy_${r}_${b}.txt"
    c0=$(cpu_ticks)
    BENCH_THREADS=$T BENCH_REPS_REAL=5 BENCH_METHODS=seq,reprise,lean \
      BENCH_VERBOSE=1 \
      run "$f" bind "$b" "$B/tools/bench/bench_omp" wavefront_heavy tree_heavy
    echo "  during: $(cpu_delta "$c0")" >> "$f"
    grep -E "^  thr=|^  during" "$f" | sed "s/^/  [$r $b]/"
    grep -E "^CPUS (reprise|lean) thr=$TMAX wavefront" "$f" |
      sed 's/^/    /' | cut -c1-160 | tee -a "$log"
  done
  for b in unset true; do
    fits 15 || continue
    f="$D/heavy_slow_${b}.txt"
    c0=$(cpu_ticks)
    BENCH_THREADS=$TMAX BENCH_REPS_REAL=5 BENCH_METHODS=reprise,lean \
      BENCH_SLOW=2 BENCH_VERBOSE=1 \
      run "$f" bind "$b" "$B/tools/bench/bench_omp" wavefront_heavy
    echo "  during: $(cpu_delta "$c0")" >> "$f"
    grep -E "^  thr=|^  during" "$f" | sed "s/^/  [slow main $b]/"
  done
}

part_steady() {
  local t b s f c0 est
  say "== 3. steadiness, ${STEADY_RUNS:-10} runs per example (max/min <= 1.10)"
  for t in ${STEADY_THREADS-4 16 8}; do
    for b in $BINDS; do
      # a batch's estimate: the last one's time, 80 s before the first
      fits "${est:-80}" || continue
      s=$SECONDS
      f="$D/steady_${b}_${t}.txt"
      c0=$(cpu_ticks)
      EXAMPLES="jacobi2d matpow recurrence" STEADY_RAW="$D/steady_raw.txt" \
        run "$f" bind "$b" tools/bench/steady.sh "$B" "$t" "${STEADY_RUNS:-10}"
      echo "  during: $(cpu_delta "$c0")" >> "$f"
      grep -E "^\| (jacobi2d|matpow|recurrence) |worst|during" "$f" |
        sed "s/^/  [$b $t] /"
      est=$((SECONDS - s + 5))
    done
  done
}

part_chol() {
  local b sz f
  say "== 2. tiled Cholesky, threads $T, bindings: $CBINDS"
  for b in $CBINDS; do
    for sz in $SIZES; do
      fits "$(chol_est "$sz")" || continue
      f="$D/chol_${b}_${sz/:/x}.txt"
      BENCH_THREADS=$T BENCH_REPS=7 BENCH_METHODS=reprise,omp-depend,tbb-flow \
        run "$f" bind "$b" "$B/tools/bench/bench_cholesky" "${sz%:*}" "${sz#*:}"
      grep -E "^\| [0-9]+ \| (reprise|omp-depend|tbb-flow) " "$f" |
        sed "s/^/  [$b $sz] /"
    done
  done
}

part_busy() {
  local r b pol sz f
  say "== 4. busy: ${BUSY_PROCS:-4} cores kept busy, tiled Cholesky at" \
      "$TMAX threads, reprise's idle policy auto and spin alternating"
  for r in $(seq "${BUSY_ROUNDS:-1}"); do
    for b in $BINDS; do
      for sz in ${BUSY_SIZES:-16:64 32:64}; do
        for pol in auto spin; do
          fits "$(chol_est "$sz")" || continue
          f="$D/busy_${r}_${b}_${sz/:/x}_${pol}.txt"
          BENCH_THREADS=$TMAX BENCH_BUSY=${BUSY_PROCS:-4} BENCH_REPS=9 \
            BENCH_METHODS=reprise,omp-depend,tbb-flow \
            run "$f" bind "$b" env "RP_OMP_IDLE=${pol/auto/}" \
            "$B/tools/bench/bench_cholesky" "${sz%:*}" "${sz#*:}"
          grep -E "^\| [0-9]+ \| (reprise|omp-depend|tbb-flow) |^IDLE" "$f" |
            sed "s/^/  [$r $b $sz $pol] /"
        done
      done
    done
  done
}

# the parts, the one this run is for first (CPU_PARTS)
for p in ${CPU_PARTS:-heavy chol busy steady}; do
  part_"$p"
done

# ---- summary ----
# the ratio of reprise to the best of omp-depend and tbb-flow per thread
# count of a bench_cholesky output
chol_ratios() {
  awk -v T="$T" '
    /^RESULT / {
      n = $2; split($3, a, "="); t = a[2]
      for (i = 4; i <= NF; i++) if ($i ~ /^ms=/) { split($i, b, "="); ms = b[2] }
      if (n == "reprise") r[t] = ms
      else if (n == "omp-depend" || n == "tbb-flow")
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
# lean / reprise, and reprise's ms, for threads $2 and shape $3
lean_of() {
  local l ms
  l=$(grep -E "^  thr=$2 $3 " "$1" | grep -oE 'lean [0-9.]+x' | head -1 |
      cut -d' ' -f2)
  ms=$(grep -E "^RESULT reprise +thr=$2 $3 " "$1" | grep -oE 'ms/rep= *[0-9.]+' |
       grep -oE '[0-9.]+$')
  [ -n "$l" ] && echo "$l (${ms:-?} ms)"
}
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
hdr "lean / reprise, heavy shapes (reprise ms)"
for f in "$D"/heavy_[0-9]_*.txt; do
  [ -f "$f" ] || continue
  lab=$(basename "$f" .txt | sed 's/heavy_\([0-9]\)_/round \1 /')
  for sh in wavefront_heavy tree_heavy; do
    args=()
    for t in ${T//,/ }; do args+=("$t $sh"); done
    cells "$lab $sh" lean_of "$f" "${args[@]}"
  done
done
for b in unset true; do
  f="$D/heavy_slow_${b}.txt"
  [ -f "$f" ] && echo "| main thread 2x slow, $b, $TMAX thr wavefront_heavy:" \
    "$(lean_of "$f" "$TMAX" wavefront_heavy) |"
done
echo
echo "| $TMAX thr wavefront_heavy: the threads' run-queue wait over the timed" \
     "reps | reprise | lean |"
echo "|---|---|---|"
for f in "$D"/heavy_[0-9]_*.txt "$D"/heavy_slow_*.txt; do
  [ -f "$f" ] || continue
  printf '| %s |' "$(basename "$f" .txt)"
  for m in reprise lean; do
    printf ' %s |' "$(grep -E "^CPUS $m +thr=$TMAX wavefront_heavy: run-queue" \
      "$f" | sed 's/.*wait \([0-9.]*\) ms over \([0-9.]*\) ms.*/\1 of \2 ms/')"
  done
  echo
done
echo
echo "| steadiness, max/min over the runs | threads | example | achieved |" \
     "serial medians | overlapped medians | pairs within a run (median) |" \
     "run-queue wait ms, serial, overlapped (median) |"
echo "|---|---|---|---|---|---|---|---|"
for t in ${STEADY_THREADS-4 16 8}; do
  for b in $BINDS; do
    f="$D/steady_${b}_${t}.txt"
    [ -f "$f" ] || continue
    awk -F'|' -v b="$b" -v t="$t" '$2 ~ /^ (jacobi2d|matpow|recurrence) $/ {
      s = $7; o = $8; gsub(/.*\(|\).*/, "", s); gsub(/.*\(|\).*/, "", o)
      printf "| %s | %s |%s|%s| %s | %s |%s|%s|\n", b, t, $2, $6, s, o, $9,
             $10 }' "$f"
  done
done
if ls "$D"/chol_*.txt > /dev/null 2>&1; then
  echo
  hdr "Cholesky: reprise / best of omp-depend, tbb-flow (reprise ms)"
  for b in $CBINDS; do
    for sz in $SIZES; do
      f="$D/chol_${b}_${sz/:/x}.txt"
      [ -f "$f" ] && echo "| $b ${sz/:/ tiles of } |$(chol_ratios "$f")"
    done
  done
fi
if ls "$D"/busy_*.txt > /dev/null 2>&1; then
  echo
  echo "| ${BUSY_PROCS:-4} cores busy, $TMAX thr: round binding size policy |" \
       "reprise / omp-depend | reprise / tbb-flow | reprise ms |" \
       "idle_yield, spin_max |"
  echo "|---|---|---|---|---|"
  for f in "$D"/busy_*.txt; do
    awk -v lab="$(basename "$f" .txt | sed 's/^busy_//; s/_/ /g')" '
      /^RESULT / { for (i = 3; i <= NF; i++) if ($i ~ /^ms=/) {
                     split($i, a, "="); ms[$2] = a[2] } }
      /^IDLE reprise/ { for (i = 3; i <= NF; i++) { split($i, a, "=")
                          f[a[1]] = a[2] } }
      END { r = ms["reprise"]; o = ms["omp-depend"]; t = ms["tbb-flow"]
            printf "| %s | %s | %s | %s | %s, %s |\n", lab,
              (o > 0 ? sprintf("%.2f", r / o) : "-"),
              (t > 0 ? sprintf("%.2f", r / t) : "-"), (r ? r : "-"),
              f["idle_yield"], f["spin_max"] }' "$f"
  done
fi
echo
echo "== done in $((SECONDS - t0)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee -a "$log"
