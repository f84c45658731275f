#!/usr/bin/env bash
# tests/scripts/test_budget_script.sh SRC-DIR WORK-DIR: scripts/test_budget.sh
# on synthetic ctest logs.
#  1. 400 fast tests (the list outgrows one pipe write): exit 0 and exactly
#     five "slowest" lines. CI once died here with 141 (SIGPIPE) when head
#     closed the pipe under pipefail.
#  2. One test above half its timeout: exit 1, naming it.
set -uo pipefail
src=${1:?src} work=${2:?work}
rm -rf "$work" && mkdir -p "$work/Testing/Temporary"
fail() { echo "FAIL: $*"; exit 1; }
mk() {  # mk SLOW-SECONDS
  local log=$work/Testing/Temporary/LastTest.log i
  : >"$log"
  : >"$work/CTestTestfile.cmake"
  for i in $(seq 1 400); do
    printf '%d/400 Test: a_rather_long_test_name_number_%d\n' "$i" "$i" >>"$log"
    printf 'Test time =   0.%02d sec\n' $((i % 100)) >>"$log"
    printf 'add_test([=[a_rather_long_test_name_number_%d]=] "x")\n' "$i" \
      >>"$work/CTestTestfile.cmake"
    printf 'set_tests_properties([=[a_rather_long_test_name_number_%d]=] PROPERTIES  TIMEOUT "10")\n' \
      "$i" >>"$work/CTestTestfile.cmake"
  done
  printf '401/401 Test: slow_one\nTest time =  %s sec\n' "$1" >>"$log"
}
mk 2.5
out=$("$src/scripts/test_budget.sh" "$work"); rc=$?
[ "$rc" = 0 ] || fail "exit $rc on a passing budget: $out"
n=$(grep -c ' s  ' <<<"$out")
[ "$n" = 5 ] || fail "$n slowest lines, want 5: $out"
grep -q '2.50 s  slow_one' <<<"$out" || fail "slowest test not first: $out"
mk 70
out=$("$src/scripts/test_budget.sh" "$work"); rc=$?
[ "$rc" = 1 ] || fail "exit $rc, want 1 for a test over half its timeout"
grep -q 'slow_one: 70.0 s, more than half of its 120 s' <<<"$out" ||
  fail "over-budget test not named: $out"
echo "test_budget.sh: ok"
