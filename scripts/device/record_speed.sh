#!/usr/bin/env bash
# Recording speed (issue 26) on the 16-core host of the GPU machine, from
# the repo root:  bash scripts/device/record_speed.sh
# Builds the library and the two benchmarks (no CUDA, -j16), then runs on
# one core (taskset -c 2):
#  - bench_record: shapes uniform, sweep, solver, gather, coherence off
#    and on, 100 k ops (median of 5) and 1 M ops (median of 5): rate
#    against the goal (3 M ops/s; gather 1 M ops/s), ratio 10N/N (goal
#    <= 12);
#  - bench_loaded: rp_graph_read_json + rp_analyze of a file another
#    program wrote (edges derived on reading) at 20 k, 200 k (median of 5)
#    and 2 M ops (1 run): CPU seconds (goal 200 k < 1 s, 2 M < 10 s) and
#    the child's peak RSS (goal < 2 GB).
# One log: $OUT/record_speed.log (the summary is echoed too). Takes about
# three minutes. RS_10M=1 adds bench_record at 10 M ops for one shape
# (uniform, coherence off), about a minute more.
set -euo pipefail
. scripts/device/env.sh
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
LOG=$OUT/record_speed.log
B=build-record-speed
{
  echo "== record_speed: $(date -u) $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "== host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load $(cat /proc/loadavg)"
} >"$LOG"
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRP_WITH_CUDA=OFF \
  -DRP_BUILD_TESTS=OFF -DRP_BUILD_EXAMPLES=OFF >>"$LOG" 2>&1
cmake --build "$B" -j16 --target bench_record bench_loaded >>"$LOG" 2>&1
run() { echo "== $*" | tee -a "$LOG"; taskset -c 2 "$@" 2>&1 | tee -a "$LOG"; }
run "$B/tools/bench/bench_record" --ops 100000 --runs 5 --runs10 5
if [ "${RS_10M:-0}" = 1 ]; then
  run "$B/tools/bench/bench_record" --ops 100000 --10m --runs 1 --runs10 1 \
    --shape uniform --coherence off
fi
run "$B/tools/bench/bench_loaded" 20000 200000 2000000
echo "== done: load $(cat /proc/loadavg)" | tee -a "$LOG"
