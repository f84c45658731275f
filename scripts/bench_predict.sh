#!/bin/sh
# The prediction suite's table (issue 24): runs tools/bench/bench_predict
# (workloads the model was never tuned on; see its header) and puts its
# table in docs/benchmarks.md between the lines
#   <!-- bench_predict:NAME:begin --> and <!-- bench_predict:NAME:end -->
# of section "Predictions out of the box (issue 24)", with the machine and
# its load.
#
# usage: scripts/bench_predict.sh [BUILD_DIR] [NAME] [-- BENCH_ARGS...]
#   BUILD_DIR   a build with -DRP_BUILD_BENCH=ON (default build)
#   NAME        the table's name in the docs (default vm); a table not yet
#               there is appended to the section
#   BENCH_ARGS  passed to bench_predict (default --threads 1,2)
# Environment: DOCS (default docs/benchmarks.md), XDG_CACHE_HOME (the
# models' cache; RP_NO_AUTOCALIBRATE=1 to forbid calibrating).
set -eu
build=${1:-build}
name=${2:-vm}
[ $# -ge 1 ] && shift
[ $# -ge 1 ] && [ "$1" != "--" ] && shift
[ $# -ge 1 ] && [ "$1" = "--" ] && shift
[ $# -ge 1 ] || set -- --threads 1,2
docs=${DOCS:-docs/benchmarks.md}
bench=$build/tools/bench/bench_predict
[ -x "$bench" ] || { echo "no $bench: build with -DRP_BUILD_BENCH=ON" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out" "$out.new"' EXIT
"$bench" "$@" | tee "$out"
begin="<!-- bench_predict:$name:begin -->"
end="<!-- bench_predict:$name:end -->"
{
  echo "$begin"
  echo "\`bench_predict $*\` on $(hostname), $(nproc) cores, $(date -u +%Y-%m-%d):"
  echo
  cat "$out"
  echo "$end"
} > "$out.new"
if grep -qF "$begin" "$docs"; then
  awk -v b="$begin" -v e="$end" -v f="$out.new" '
    $0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
    $0 == e { skip = 0; next }
    !skip { print }' "$docs" > "$docs.tmp" && mv "$docs.tmp" "$docs"
else
  sec="## Predictions out of the box (issue 24)"
  grep -qF "$sec" "$docs" || printf '\n%s\n' "$sec" >> "$docs"
  # Appended at the end of the section (before the next "## ").
  awk -v s="$sec" -v f="$out.new" '
    function put() { print ""; while ((getline l < f) > 0) print l; print "" }
    $0 == s { in_s = 1; print; next }
    in_s && /^## / { put(); in_s = 0 }
    { print }
    END { if (in_s) put() }' "$docs" > "$docs.tmp" && mv "$docs.tmp" "$docs"
fi
echo "table $name written to $docs" >&2
