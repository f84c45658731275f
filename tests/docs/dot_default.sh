#!/bin/sh
# `reprise dot` draws the readable grouped view at every size (issue 37):
# a graph of over 2000 operations (Jacobi, 260 steps) is drawn grouped by
# step, every operation counted, not cut to its critical path; --critical
# gives the critical path and the operations next to it.
#   usage: dot_default.sh TOOL JACOBI2D WORK
set -eu
tool=$1 jacobi=$2 work=$3
mkdir -p "$work"
"$jacobi" --n 32 --steps 260 --blocks 4 --every 0 --iters 1 \
  --save "$work/big.json" >"$work/jacobi.log" 2>&1
n=$(grep -c '"type"' "$work/big.json")
[ "$n" -gt 2000 ] || { echo "FAIL: only $n operations"; exit 1; }
"$tool" dot "$work/big.json" -o "$work/default.dot"
"$tool" dot --critical "$work/big.json" -o "$work/critical.dot"
grep -q 'label="steps 2 to 259, alike' "$work/default.dot" ||
  { echo "FAIL: the default is not grouped by step"; exit 1; }
if grep -q 'operations drawn' "$work/default.dot"; then
  echo "FAIL: the default drew a part"; exit 1
fi
grep -q "of $n operations drawn: the critical path" "$work/critical.dot" ||
  { echo "FAIL: --critical did not draw the critical path"; exit 1; }
echo "dot_default: ok ($n operations: grouped; --critical: the path)"
