#!/usr/bin/env bash
# The tests (CI runs exactly this, through .ci/run): install what is
# missing, then
#   plain  build with warnings as errors, run every test (build-test);
#          GPU tests are reported Skipped, saying why, without a GPU;
#   asan   the same suite under AddressSanitizer + UBSan (build-asan; no
#          CUDA, no benchmarks);
#   fuzz   fuzz the graph reader, the analysis and the reports for
#          RP_FUZZ_SECONDS (default 60) s with libFuzzer (scripts/fuzz.sh);
#   package  build the Debian packages with dpkg-buildpackage and check
#          them (scripts/package.sh, build-package), then check the Spack
#          recipe against CMake (scripts/check_spack.sh).
# RP_TEST_STAGES picks stages (default "plain asan fuzz package");
# RP_SANITIZE=1 runs the asan stage alone.
#
# Time budget (issue 21): each stage prints its five slowest tests and
# fails when any test used more than half of its timeout (120 s, set in
# tests/CMakeLists.txt), so that a test drifting towards its limit is seen
# on the machine where it drifts, not on the next one where it times out.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
stages=${RP_TEST_STAGES:-plain asan fuzz package}
[ "${RP_SANITIZE:-0}" = 1 ] && stages=asan
jobs=$(nproc)
t_start=$SECONDS

suite() {   # suite DIR CMAKE-ARGS...
  local dir=$1 t0=$SECONDS
  shift
  echo "== reprise tests: $dir ($*)"
  cmake -S . -B "$dir" -DRP_WERROR=ON "$@"
  cmake --build "$dir" -j"$jobs"
  local rc=0
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 120) \
    2>&1 | tee "$dir/ctest.log" || rc=$?
  [ "$rc" -eq 0 ] && rc=${PIPESTATUS[0]}
  scripts/test_budget.sh "$dir" || rc=$?
  echo "== $dir: $((SECONDS - t0)) s"
  return "$rc"
}

for s in $stages; do
  case $s in
    plain) suite build-test ;;
    asan) suite build-asan -DRP_SANITIZE=ON -DRP_WITH_CUDA=OFF \
                -DRP_BUILD_BENCH=OFF ;;
    fuzz) echo "== reprise fuzzing: ${RP_FUZZ_SECONDS:-60} s"
          scripts/fuzz.sh "${RP_FUZZ_SECONDS:-60}" ;;
    package) t0=$SECONDS
             echo "== reprise packaging: Debian packages, Spack recipe"
             scripts/package.sh build-package
             scripts/check_spack.sh build-package/spack
             echo "== build-package: $((SECONDS - t0)) s" ;;
    *) echo "scripts/test.sh: unknown stage '$s'" >&2; exit 2 ;;
  esac
done
echo "== reprise tests: all stages passed in $((SECONDS - t_start)) s"
