#!/usr/bin/env bash
# The tests (CI runs exactly this, through .ci/run): install what is
# missing, then
#   plain  build with warnings as errors, run every test (build-test);
#          GPU tests are reported Skipped, saying why, without a GPU;
#   asan   the same suite under AddressSanitizer + UBSan (build-asan; no
#          CUDA, no benchmarks);
#   fuzz   fuzz the graph reader, the analysis and the reports for
#          RP_FUZZ_SECONDS (default 60) s with libFuzzer (scripts/fuzz.sh).
# RP_TEST_STAGES picks stages (default "plain asan fuzz"); RP_SANITIZE=1
# runs the asan stage alone.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
stages=${RP_TEST_STAGES:-plain asan fuzz}
[ "${RP_SANITIZE:-0}" = 1 ] && stages=asan
jobs=$(nproc)

suite() {   # suite DIR CMAKE-ARGS...
  local dir=$1
  shift
  echo "== reprise tests: $dir ($*)"
  cmake -S . -B "$dir" -DRP_WERROR=ON "$@"
  cmake --build "$dir" -j"$jobs"
  (cd "$dir" && ctest --output-on-failure -j"$jobs")
}

for s in $stages; do
  case $s in
    plain) suite build-test ;;
    # Under the sanitizers the plan's differential test replays 250 random
    # programs on every backend instead of 1 000 (the plain stage runs all).
    asan) RP_TEST_PROGRAMS=${RP_TEST_PROGRAMS:-250} \
          suite build-asan -DRP_SANITIZE=ON -DRP_WITH_CUDA=OFF \
                -DRP_BUILD_BENCH=OFF ;;
    fuzz) echo "== reprise fuzzing: ${RP_FUZZ_SECONDS:-60} s"
          scripts/fuzz.sh "${RP_FUZZ_SECONDS:-60}" ;;
    *) echo "scripts/test.sh: unknown stage '$s'" >&2; exit 2 ;;
  esac
done
