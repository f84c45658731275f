#!/usr/bin/env bash
# Fuzzes the graph-file reader, the analysis, the dependency check
# (rp_check_deps, `reprise check`) and every report writer
# (tests/fuzz/fuzz_graph.c) with libFuzzer, AddressSanitizer and UBSan.
#   scripts/fuzz.sh [SECONDS] [WORKERS]   (default: 60 s, 1 worker)
# The seed corpus is tests/fuzz/corpus; what the fuzzer finds goes to
# build-fuzz/corpus, crashes to build-fuzz/crash-* (reproduce: build-fuzz/
# tests/fuzz_graph FILE). docs/fuzzing.md records the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
workers=${2:-1}
dir=build-fuzz
CC=clang cmake -S . -B "$dir" -DRP_FUZZ=ON -DRP_WITH_CUDA=OFF \
  -DRP_WITH_XRT=OFF -DRP_WITH_OPENMP=OFF -DRP_BUILD_EXAMPLES=OFF \
  -DRP_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/tmp/rp_fuzz_build.$$.log 2>&1 ||
  { cat /tmp/rp_fuzz_build.$$.log; exit 1; }
cmake --build "$dir" -j2 --target fuzz_graph >>/tmp/rp_fuzz_build.$$.log 2>&1 ||
  { cat /tmp/rp_fuzz_build.$$.log; exit 1; }
rm -f /tmp/rp_fuzz_build.$$.log
mkdir -p "$dir/corpus"
args=(-max_total_time="$secs" -dict=tests/fuzz/graph.dict -max_len=8192
      -print_final_stats=1 -artifact_prefix="$dir/")
if [ "$workers" -gt 1 ]; then
  args+=(-fork="$workers")
fi
"$dir/tests/fuzz_graph" "${args[@]}" "$dir/corpus" tests/fuzz/corpus 2>&1 |
  grep -v '^#[0-9].*\(NEW\|REDUCE\|pulse\)' | tail -25
