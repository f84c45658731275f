#!/bin/sh
# Prints why tests were skipped, from a ctest run's log, so that the
# reasons show without `ctest -V` (scripts/test.sh calls it after each
# suite): a test ctest reports Skipped (exit 77, SKIP_RETURN_CODE) with
# the lines of its output that say why ("skipped: ...", "SKIP: ...",
# Criterion's "[SKIP]"), and a test that passed but skipped parts of its
# work (the doc examples without a GPU) with those lines.
#   usage: scripts/skip_reasons.sh BUILD_DIR   (reads
#          BUILD_DIR/Testing/Temporary/LastTest.log, where ctest logs a
#          skipped test as passed, and BUILD_DIR/ctest.log, ctest's
#          console output with its "NAME (Skipped)" list, when there)
dir=${1:?usage: skip_reasons.sh BUILD_DIR}
log=$dir/Testing/Temporary/LastTest.log
[ -f "$log" ] || exit 0
skipped=$(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' \
          "$dir/ctest.log" 2>/dev/null | tr '\n' ' ')
awk -v skipped_list=" $skipped " '
  / Test: / && !name { name = $3; n = 0; inout = 0; next }
  name && /^Output:/ { inout = 1; next }
  name && /^<end of output>/ { inout = 0; next }
  name && inout && (tolower($0) ~ /^(skipped:|skip:)/ || /\[SKIP\]/) {
    why[++n] = $0; next }
  name && /^Test (Passed|Failed|Skipped|Not Run)/ {
    skipped = ($0 ~ /Skipped|Not Run/) || index(skipped_list, " " name " ")
    if (skipped || n) {
      printf "%s %s\n", (skipped ? "skipped:" : "parts skipped:"), name
      if (!n) print "    (the test printed no reason)"
      for (i = 1; i <= n && i <= 8; i++) print "    " why[i]
      if (n > 8) printf "    ... %d more\n", n - 8
      total++
    }
    name = ""
  }
  END { if (total) printf "(%d tests with skips; the reasons above)\n", total }
' "$log"
