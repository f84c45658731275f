#!/usr/bin/env bash
# scripts/test_budget.sh BUILD-DIR: after ctest ran in BUILD-DIR, prints
# the five slowest tests and fails (exit 1) when any test used more than
# half of its timeout. Timings come from ctest's own log of the last run
# (Testing/Temporary/LastTest.log: "Test time" per test), timeouts from
# CTestTestfile.cmake (TIMEOUT property; ctest's --timeout 120 otherwise).
set -euo pipefail
dir=${1:?usage: scripts/test_budget.sh BUILD-DIR}
log=$dir/Testing/Temporary/LastTest.log
[ -f "$log" ] || { echo "test_budget: no $log" >&2; exit 2; }
# name seconds, one line per test that ran.
times=$(awk '/^[0-9]+\/[0-9]+ Test: /{name=$3}
             /^"?Test time =/{gsub(/[^0-9.]/, "", $4); print name, $4}' "$log")
# name timeout, from every CTestTestfile.cmake under the build folder.
timeouts=$(find "$dir" -name CTestTestfile.cmake -exec cat {} + |
  awk '/^add_test\(/{sub(/^add_test\(\[?=*\[?/, ""); n=$0; sub(/[] "].*/, "", n); name=n}
       /^set_tests_properties\(/ && /TIMEOUT/ {
         s=$0; sub(/^set_tests_properties\(\[?=*\[?/, "", s); sub(/[] "].*/, "", s)
         t=$0; sub(/.*TIMEOUT "/, "", t); sub(/".*/, "", t); print s, t }')
echo "== slowest tests in $dir:"
# No "head" here: under pipefail, head closing the pipe early kills sort
# with SIGPIPE once the list outgrows one write (exit 141 in CI).
sort -k2 -g -r <<<"$times" |
  awk 'NR <= 5 { printf "   %7.2f s  %s\n", $2, $1 }'
bad=$(awk -v deflt=120 'NR==FNR { to[$1] = $2; next }
  { t = ($1 in to) ? to[$1] : deflt
    if ($2 > t / 2) printf "   %s: %.1f s, more than half of its %s s timeout\n", $1, $2, t }' \
  <(echo "$timeouts") <(echo "$times"))
if [ -n "$bad" ]; then
  echo "== test budget exceeded in $dir:"
  echo "$bad"
  exit 1
fi
