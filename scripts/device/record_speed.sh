#!/usr/bin/env bash
# Recording speed (issues 26, 36) on the 16-core host of the GPU machine,
# from the repo root:  bash scripts/device/record_speed.sh
# Builds the library, the two benchmarks and the CLI (no CUDA, -j16), then
# runs on one core (taskset -c 2):
#  - bench_record: shapes uniform, sweep, solver, gather, rowmix (whole
#    matrices read, rows written), coherence off and on, 100 k ops (median
#    of 3) and 1 M ops (median of 5): rate against the goal (3 M ops/s on
#    one host core; rowmix 1 M ops/s), ratio 10N/N (goal <= 12);
#  - bench_loaded: rp_graph_read_json + rp_analyze of a file another
#    program wrote (edges derived on reading) at 20 k, 200 k (median of 5)
#    and 2 M ops (1 run): CPU seconds (goal 200 k < 1 s, 2 M < 10 s) and
#    the child's peak RSS (goal < 2 GB);
#  - `reprise analyze` of the 200 k-op file itself (wall seconds, median
#    of 3).
# One log: $OUT/record_speed.log; the summary table comes last. Takes
# about three and a half minutes. Smaller, to try it (2-core VM, ~1 min):
#   RS_NO_ENV=1 RS_OPS=20000 RS_RUNS10=1 RS_LOADED="2000 20000" \
#     RS_CLI_OPS=20000 bash scripts/device/record_speed.sh
# RS_10M=1 adds bench_record at 10 M ops for one shape (uniform, coherence
# off), about a minute more.
set -euo pipefail
# RS_NO_ENV=1: the packages are installed already (the 2-core VM).
[ "${RS_NO_ENV:-0}" = 1 ] || . scripts/device/env.sh
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
LOG=$OUT/record_speed.log
B=${RS_BUILD:-build-record-speed}
OPS=${RS_OPS:-100000}
RUNS10=${RS_RUNS10:-5}
LOADED=${RS_LOADED:-20000 200000 2000000}
CLI_OPS=${RS_CLI_OPS:-200000}
CPU=${RS_CPU:-2}
# A machine with fewer cores (the 2-core VM): its last one.
[ "$CPU" -lt "$(nproc)" ] || CPU=$(($(nproc) - 1))
{
  echo "== record_speed: $(date -u) $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "== host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load $(cat /proc/loadavg)"
} >"$LOG"
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRP_WITH_CUDA=OFF \
  -DRP_BUILD_TESTS=OFF -DRP_BUILD_EXAMPLES=OFF >>"$LOG" 2>&1
cmake --build "$B" -j"$(nproc)" --target bench_record bench_loaded \
  reprise_cli >>"$LOG" 2>&1
run() { echo "== $*" | tee -a "$LOG"; taskset -c "$CPU" "$@" 2>&1 | tee -a "$LOG"; }
REC=$OUT/bench_record.txt
run "$B/tools/bench/bench_record" --ops "$OPS" --runs 3 --runs10 "$RUNS10" \
  >"$REC"
if [ "${RS_10M:-0}" = 1 ]; then
  run "$B/tools/bench/bench_record" --ops "$OPS" --10m --runs 1 --runs10 1 \
    --shape uniform --coherence off
fi
LD=$OUT/bench_loaded.txt
# shellcheck disable=SC2086 # LOADED is a list of sizes
run "$B/tools/bench/bench_loaded" $LOADED >"$LD"
# `reprise analyze` of a foreign file, as a user runs it.
F=$OUT/foreign.json
"$B/tools/bench/bench_loaded" --write "$F" "$CLI_OPS"
CLI=()
for i in 1 2 3; do
  t0=$(date +%s.%N)
  taskset -c "$CPU" "$B/tools/reprise" analyze "$F" >"$OUT/analyze.txt" 2>&1
  t1=$(date +%s.%N)
  CLI+=("$(awk "BEGIN { printf \"%.3f\", $t1 - $t0 }")")
done
rm -f "$F"
CLI_MED=$(printf '%s\n' "${CLI[@]}" | sort -n | sed -n 2p)
echo "== reprise analyze, $CLI_OPS ops: ${CLI[*]} s (median $CLI_MED s)" |
  tee -a "$LOG"
{
  echo
  echo "== summary (one core of $(nproc); load $(cat /proc/loadavg | cut -d' ' -f1-3))"
  sed -n '/^summary/,$p' "$REC"
  echo "bench_loaded (read + analyze, CPU s; goals 200 k < 1 s, 2 M < 10 s, < 2 GB):"
  grep -E '^ *[0-9]+ ops,' "$LD" || true
  echo "reprise analyze $CLI_OPS ops: median $CLI_MED s wall of 3 (goal < 1 s at 200 k)"
  echo "== done: load $(cat /proc/loadavg)"
} | tee -a "$LOG"
