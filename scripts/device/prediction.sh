#!/usr/bin/env bash
# Issue 24 on the GPU machine (16 Xeon cores, one H200), from the repo
# root: one predicted speedup a user can trust out of the box.
#  1. bench_predict (tools/bench/predict_workloads.c: nine workloads the
#     model was never tuned on) on openmp at 4, 8 and 16 threads with an
#     EMPTY model cache: every model is calibrated on first use (the
#     progress lines and the time it took are in the log);
#  2. the same again with the WARM cache (0 calibrations);
#  3. bench_predict on cuda (the H200; its model calibrated on first use);
#  4. the examples at 4 and 16 threads (openmp) and on cuda: their
#     "predicted speedup" and "achieved speedup" lines and warnings;
#  5. reprise plot of one workload (SVG in $OUT).
# Everything goes to "$OUT/prediction.log"; the summary lines (median and
# largest |error| per setting) are echoed at the end. Under 6 minutes.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/prediction-out}
mkdir -p "$OUT"
LOG=$OUT/prediction.log
: > "$LOG"
. scripts/device/env.sh
B=build-prediction
T0=$(date +%s)
log() { echo "$@" | tee -a "$LOG"; }
run() { log "\$ $*"; "$@" >> "$LOG" 2>&1; local rc=$?; [ $rc = 0 ] || log "(exit $rc)"; return $rc; }

log "== machine: $(hostname), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
nvidia-smi -L >> "$LOG" 2>&1
log "load: $(cut -d' ' -f1-3 /proc/loadavg)"
run cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DRP_BUILD_BENCH=ON \
    -DRP_BUILD_EXAMPLES=ON -DRP_BUILD_TESTS=OFF -DRP_WITH_XRT=OFF || exit 1
run cmake --build $B -j16 --target bench_predict reprise_cli jacobi2d \
    matpow recurrence blackscholes twokernels heat2d || exit 1
log "build done at +$(( $(date +%s) - T0 )) s"

export XDG_CACHE_HOME=$(mktemp -d)
BP=$B/tools/bench/bench_predict
log "== 1. openmp 4,8,16 threads, empty cache ($XDG_CACHE_HOME)"
t=$(date +%s)
run $BP --threads 4,8,16 --save "$OUT/predict"
log "   took $(( $(date +%s) - t )) s, calibrations included"
log "== 2. openmp 4,8,16 threads, warm cache"
run $BP --threads 4,8,16
log "== 3. cuda (H200), empty cache for cuda"
t=$(date +%s)
run $BP --backend cuda
log "   took $(( $(date +%s) - t )) s"
log "== 4. examples (their first runs calibrate nothing more: same keys)"
for e in jacobi2d matpow recurrence blackscholes twokernels heat2d; do
  # twokernels is sized for a GPU: a tenth of its work on the cores.
  args="--iters 3"; [ $e = twokernels ] && args="--iters 3 --inner 20"
  for th in 4 16; do
    log "-- $e openmp $th threads"
    timeout 60 $B/examples/$e --backend openmp --threads $th $args 2>&1 |
      grep -E '^(reprise: calibrating|predicted speedup|achieved speedup|warning)' |
      tee -a "$LOG"
  done
  log "-- $e cuda"
  timeout 60 $B/examples/$e --backend cuda --iters 3 2>&1 |
    grep -E '^(reprise: calibrating|predicted speedup|achieved speedup|warning)' |
    tee -a "$LOG"
done
log "== 5. plot"
run $B/tools/reprise plot "$OUT/predict/cholesky.json" --threads 4,8,16 \
    --achieved "$OUT/predict/cholesky.csv" -o "$OUT/cholesky.svg"
log "== models"
for f in "$XDG_CACHE_HOME"/reprise/*.json; do log "-- $f"; cat "$f" >> "$LOG"; done
log "== summary (total $(( $(date +%s) - T0 )) s; load $(cut -d' ' -f1-3 /proc/loadavg))"
grep -E 'median \|error\||calibrations run' "$LOG" | tee -a "$LOG.summary"
cat "$LOG.summary" >> "$LOG"; rm -f "$LOG.summary"
rm -rf "$XDG_CACHE_HOME"
