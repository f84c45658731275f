#!/usr/bin/env bash
# Issue 27 on the GPU machine (the device tool), from the repo root:
#   bash scripts/device/first_contact.sh
# 1. The demo from nothing, then again: scripts/demo.sh must pick cuda (a
#    GPU is present), build only jacobi2d and the cuda archive, and say
#    so; the first and second runs' wall times, the achieved and predicted
#    speedups.
# 2. The installed library with CUDA built: consumer_install, then the
#    consumers in a cleared environment (tests/consumer/run.sh): the shared
#    one with CUDAToolkit hidden, loading the cuda plugin on the GPU; the
#    static one on reprise::static_cuda replaying on the GPU; pkg-config.
# Writes $OUT/first_contact.log and prints a summary. About 3 to 5 minutes.
set -uo pipefail
cd "$(dirname "$0")/../.." && [ -f scripts/demo.sh ] || { echo "run me from a reprise tree"; exit 1; }
. scripts/device/env.sh
OUT=${OUT:-/tmp}
log=$OUT/first_contact.log
export RP_NO_DEPS=1          # the packages are unpacked by env.sh
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }
summary=()
{
  echo "== machine: $(nproc) cores; $(nvidia-smi -L 2>/dev/null | head -1);" \
       "$(cmake --version | head -1); load $(cat /proc/loadavg)"

  echo "== 1. demo, first run (nothing built)"
  rm -rf build-demo out
  t=$(now)
  scripts/demo.sh; rc1=$?
  first=$(since "$t")
  echo "== 1. demo, second run"
  t=$(now)
  scripts/demo.sh; rc2=$?
  second=$(since "$t")
  echo "== demo: first run ${first} s (rc $rc1), second run ${second} s (rc $rc2)"
  RP_DEMO_DRY_RUN=1 scripts/demo.sh | sed -n '/backend:/p;/would build/,$p'

  echo "== 2. the installed library, CUDA built"
  t=$(now)
  mkdir -p build-fc
  cmake -S . -B build-fc -DRP_WITH_CUDA=ON -DRP_BUILD_TESTS=OFF \
        -DRP_BUILD_EXAMPLES=OFF -DRP_BUILD_BENCH=OFF >build-fc/build.log 2>&1 &&
    cmake --build build-fc -j16 >>build-fc/build.log 2>&1 ||
    { tail -30 build-fc/build.log; echo "== build-fc: FAILED"; }
  echo "== build-fc: $(since "$t") s"
  for s in install shared static pkgconfig; do
    t=$(now)
    RP_CLEAN_KEEP="LD_LIBRARY_PATH OPAL_PREFIX" \
      sh tests/consumer/run.sh "$s" build-fc . "$PWD/build-fc/consumer"
    echo "== consumer $s: rc $? in $(since "$t") s"
  done
} 2>&1 | tee "$log"
echo
echo "== summary (full log: $log)"
grep -E '^== (machine|demo:|consumer |build-fc)|backend: |replay vs reference|achieved speedup|predicted speedup|consumer: reprise|FAIL' "$log"
