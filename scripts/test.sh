#!/usr/bin/env bash
# The tests (CI runs exactly this, through .ci/run): install everything
# missing first (scripts/deps.sh package), then
#   plain  build with warnings as errors, run every test (build-test);
#          GPU tests are reported Skipped, saying why, without a GPU;
#   asan   the same suite under AddressSanitizer + UBSan (build-asan; no
#          CUDA, no benchmarks);
#   fuzz   fuzz the graph reader, the analysis and the reports for
#          RP_FUZZ_SECONDS (default 60) s with libFuzzer (scripts/fuzz.sh);
#   tsan   ThreadSanitizer (build-tsan: clang, -DRP_SANITIZE=thread, libomp
#          with its archer tool for OpenMP) over the CPU examples on the
#          openmp and starpu backends at 2 and 3 threads; any report fails
#          it (65 s from scratch on the 2-core VM at load 2). Races seen
#          through StarPU's uninstrumented library are suppressed
#          (scripts/tsan.supp says why).
#   package  build the Debian packages with dpkg-buildpackage and check
#          them (scripts/package.sh, build-package), then check the Spack
#          recipe against CMake (scripts/check_spack.sh);
#   format  fail on any file that .clang-format would change
#          (scripts/format.sh --check; the fix is scripts/format.sh --fix,
#          a commit of its own);
#   tidy   fail on any clang-tidy finding (scripts/tidy.sh, .clang-tidy;
#          a finding is fixed, or suppressed on its line with the reason).
# RP_TEST_STAGES picks stages (default
# "format tidy plain asan tsan fuzz package");
# RP_SANITIZE=1 runs the asan stage alone, RP_SANITIZE=thread the tsan stage.
#
# Time budget (issue 21): each stage prints its five slowest tests and
# fails when any test used more than half of its timeout (120 s, set in
# tests/CMakeLists.txt), so that a test drifting towards its limit is seen
# on the machine where it drifts, not on the next one where it times out.
set -euo pipefail
cd "$(dirname "$0")/.."
stages=${RP_TEST_STAGES:-format tidy plain asan tsan fuzz package}
[ "${RP_SANITIZE:-0}" = 1 ] && stages=asan
[ "${RP_SANITIZE:-0}" = thread ] && stages=tsan
# Everything the stages need is installed first, the packaging tools too
# (not 25 minutes in, when the stage "package" starts).
case " $stages " in
  *" package "*) scripts/deps.sh package ;;
  *) scripts/deps.sh ;;
esac
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
  scripts/skip_reasons.sh "$dir"   # why tests were skipped, without -V
  scripts/test_budget.sh "$dir" || rc=$?
  echo "== $dir: $((SECONDS - t0)) s"
  return "$rc"
}

# The examples at the smoke tests' sizes (examples/tests*.cmake).
tsan_examples=(
  "jacobi2d --n 64 --steps 4 --every 2 --blocks 4 --iters 3"
  "jacobi2d --mixed --n 64 --steps 4 --every 2 --blocks 4 --iters 2"
  "matpow --n 48 --steps 4 --blocks 4 --iters 2"
  "recurrence --rows 64 --cols 64 --inner 5 --rounds 3 --blocks 8 --iters 2"
  "blackscholes --n 5000 --blocks 8 --iters 2"
  "gemm --n 64 --tile 16 --iters 2"
  "converge --n 24 --blocks 3 --tol 3"
  "heat2d --n 64 --steps 4 --devices 2 --iters 3"
  "matmul_rows --n 48 --devices 3 --iters 2"
  "twokernels --n 4096 --inner 20 --rounds 2 --iters 2")

tsan() {
  local dir=build-tsan t0=$SECONDS rc=0 n=0
  echo "== reprise tests: $dir (clang, ThreadSanitizer, examples)"
  CC=clang cmake -S . -B "$dir" -DRP_SANITIZE=thread -DRP_WITH_CUDA=OFF \
    -DRP_BUILD_TESTS=OFF -DRP_BUILD_BENCH=OFF
  cmake --build "$dir" -j"$jobs"
  local archer
  archer=$(ls /usr/lib/llvm-*/lib/libarcher.so 2>/dev/null | tail -1 || true)
  mkdir -p "$dir/tsan-logs"
  for cmd in "${tsan_examples[@]}"; do
    read -r -a args <<< "$cmd"
    [ -x "$dir/examples/${args[0]}" ] || continue
    for be in openmp starpu; do
      [ "$be" = starpu ] && [ ! -e "$dir/reprise/libreprise-starpu.so" ] &&
        continue
      for t in 2 3; do
        n=$((n + 1))
        local log="$dir/tsan-logs/$n.log" r=0
        TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$PWD/scripts/tsan.supp ${TSAN_OPTIONS:-}" \
          OMP_TOOL_LIBRARIES=$archer STARPU_SILENT=1 \
          "$dir/examples/${args[0]}" "${args[@]:1}" --backend "$be" \
          --threads "$t" > "$log" 2>&1 || r=$?
        # An example exits 2 when its serial baseline cannot run (starpu
        # has no "serial" mode); its comparisons still say "identical".
        if [ "$r" = 66 ] || grep -q "ThreadSanitizer" "$log" ||
           grep -q "differ" "$log" || ! grep -q "identical" "$log" ||
           { [ "$r" != 0 ] && [ "$r" != 2 ]; }; then
          echo "tsan: FAILED ($be, $t threads, exit $r): $cmd"
          cat "$log"
          rc=1
        else
          echo "tsan: ok ($be, $t threads): $cmd"
        fi
      done
    done
  done
  echo "== $dir: $n runs, $((SECONDS - t0)) s"
  return "$rc"
}

for s in $stages; do
  case $s in
    format) scripts/format.sh --check ;;
    tidy) t0=$SECONDS
          scripts/tidy.sh
          echo "== clang-tidy: $((SECONDS - t0)) s" ;;
    plain) suite build-test ;;
    asan) suite build-asan -DRP_SANITIZE=ON -DRP_WITH_CUDA=OFF \
                -DRP_BUILD_BENCH=OFF ;;
    tsan) tsan ;;
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
