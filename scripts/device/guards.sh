#!/usr/bin/env bash
# Issue 32 on the GPU machine's 16-core host (run from the repo root):
#   . scripts/device/env.sh; scripts/device/guards.sh
# The cost of the guard zones' check after each replay against the replay
# itself, in one run (tools/bench/bench_guard.c): the worst case, K tiny
# kernels each over its own internal buffer (an image to check per task),
# K = 1, 16, 256, 4096, on openmp at 1, 4 and 16 threads and on the
# reference. One log: $OUT/guards.log (OUT defaults to .); the summary
# table last. Budget: about 2 minutes (the build most of it).
# Elsewhere (a smoke run): RP_BUILD (build folder), GUARD_THREADS ("1,2"),
# BENCH_REPS.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.}
log="$OUT/guards.log"
: > "$log"
say() { echo "$*" | tee -a "$log"; }
say "== issue 32, guard zones: $(date -u), $(nproc) cores," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)"
say "$(grep -m1 'model name' /proc/cpuinfo)"
B=${RP_BUILD:-build-guards}
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRP_WITH_CUDA=OFF \
  -DRP_BUILD_TESTS=OFF -DRP_BUILD_EXAMPLES=OFF >> "$log" 2>&1 ||
  { say "configure failed"; exit 1; }
cmake --build "$B" -j"$(nproc)" --target bench_guard >> "$log" 2>&1 ||
  { say "build failed"; exit 1; }
sum=$(mktemp)
IFS=, read -r -a TH <<< "${GUARD_THREADS:-1,4,16}"
for t in "${TH[@]}"; do
  say "\$ BENCH_THREADS=$t bench_guard (openmp)"
  BENCH_THREADS=$t OMP_PROC_BIND=true "$B/tools/bench/bench_guard" |
    tee -a "$log" | awk -v t="openmp/$t" 'NR > 1 {print t, $0}' >> "$sum"
done
say "\$ BENCH_BACKEND=reference bench_guard"
BENCH_BACKEND=reference "$B/tools/bench/bench_guard" | tee -a "$log" |
  awk 'NR > 1 {print "reference", $0}' >> "$sum"
say ""
say "== summary: check after each replay / replay (median of BENCH_REPS," \
    "worst case: an image per task)"
say "$(printf '%-12s %-6s %8s %12s %12s %8s' backend K guarded replay_us \
       check_us ratio)"
while read -r be k g r c ratio; do
  say "$(printf '%-12s %-6s %8s %12s %12s %8s' "$be" "$k" "$g" "$r" "$c" \
         "$ratio")"
done < "$sum"
rm -f "$sum"
