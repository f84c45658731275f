#!/bin/sh
# scripts/skip_reasons.sh on a real ctest run: a test that exits 77
# (SKIP_RETURN_CODE) is listed with the reason it printed, a test that
# passed saying "SKIP: ..." as partly skipped, a plain test not at all.
#   usage: skip_reasons_check.sh SOURCE WORK
set -eu
src=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
cat >"$work/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(skips NONE)
enable_testing()
add_test(NAME gate COMMAND sh -c "echo 'skipped: no usable CUDA device'; exit 77")
set_tests_properties(gate PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME partly COMMAND sh -c "echo 'ok: one'; echo 'SKIP: two (no xrt)'")
add_test(NAME plain COMMAND sh -c "echo fine")
CM
cmake -S "$work" -B "$work/b" >/dev/null
(cd "$work/b" && ctest >ctest.log 2>&1)
out=$(sh "$src/scripts/skip_reasons.sh" "$work/b")
echo "$out"
expect="skipped: gate
    skipped: no usable CUDA device
parts skipped: partly
    SKIP: two (no xrt)
(2 tests with skips; the reasons above)"
[ "$out" = "$expect" ] || { echo "FAIL: expected:"; echo "$expect"; exit 1; }
echo "skip_reasons: ok"
