#!/usr/bin/env bash
# Every documented command example runs (issue 37): the lines of the
# EXAMPLES sections of tools/man/*.1 (inside .nf/.fi) and the README's
# command examples — the lines of its indented blocks that start with
# `build/tools/reprise`, `build/examples/` or `VAR=value build/` — run,
# page by page in one work folder, with the built tool and examples, and
# must exit 0 (`reprise check`: 0 or 3, its "races found"). Test data:
# copies.json from tests/data, jacobi.json saved by the Jacobi example,
# streams.json (a transcribed program with `after` orders and a race:
# d2h A does not wait for h2d A), measured.txt.
# An example that needs what this build lacks (the cuda or xrt plugin,
# Graphviz, man, jq) is skipped, and says so: "SKIP: LINE (reason)"; an
# example reading a file that a skipped one would have written is skipped
# too. The summary line counts both.
#   usage: doc_examples.sh SOURCE BUILD WORK [man|readme|all]
# (two ctest entries, the pages and the README, keep each well under a
# minute on 2 cores)
set -uo pipefail
src=$1 build=$2 work=$3 which=${4:-all}
rm -rf "$work"
mkdir -p "$work/build" "$work/cache"
ln -s "$build/tools" "$work/build/tools"
ln -s "$build/examples" "$work/build/examples"
ln -s "$src/tests" "$work/tests"   # the README's tests/data/...
export PATH="$build/tools:$build/examples:$PATH"
export XDG_CACHE_HOME="$work/cache" HOME="$work/cache" RP_NO_PROGRESS=1
unset RP_BACKEND
cd "$work"
cp "$src/tests/data/copies.json" .
# The Jacobi graph, small, with measured costs (jacobi2d --save).
jacobi2d --n 64 --steps 4 --blocks 4 --iters 2 --save jacobi.json \
  >setup.log 2>&1 || { cat setup.log; echo "FAIL: jacobi2d --save"; exit 1; }
cat >streams.json <<'JSON'
{"format": "reprise-graph", "version": 1,
 "buffers": [{"id": 0, "name": "A", "bytes": 4096},
             {"id": 1, "name": "B", "bytes": 4096}],
 "ops": [
  {"id": 0, "name": "h2d A", "type": "copy_h2d", "device": 0, "cost_us": 10,
   "access": [{"buffer": 0, "space": "host", "mode": "in"},
              {"buffer": 0, "space": "device:0", "mode": "out"}],
   "after": []},
  {"id": 1, "name": "h2d B", "type": "copy_h2d", "device": 0, "cost_us": 10,
   "access": [{"buffer": 1, "space": "host", "mode": "in"},
              {"buffer": 1, "space": "device:0", "mode": "out"}],
   "after": [0]},
  {"id": 2, "name": "d2h A", "type": "copy_d2h", "device": 0, "cost_us": 10,
   "access": [{"buffer": 0, "space": "device:0", "mode": "in"},
              {"buffer": 0, "space": "host", "mode": "out"}],
   "after": []}]}
JSON
printf '1 1.00\n2 1.60 1.50 1.70\n' >measured.txt

has_plugin() { [ -e "$build/reprise/libreprise-$1.so" ]; }
# A usable GPU: the cuda plugin built and a device it can use (gpu_gate
# runs `true` only then, else exits 77).
gpu=""
if has_plugin cuda && [ -x "$build/tests/gpu_gate" ] &&
   "$build/tests/gpu_gate" /bin/true >/dev/null 2>&1; then
  gpu=1
fi
# why LINE: why this build cannot run LINE ("" when it can)
why() {
  local l=$1 be f
  for be in cuda xrt starpu; do
    if [[ $l =~ (--backend|-b)[\ =]$be([^a-z]|$) ]] ||
       { [ $be = xrt ] && [[ $l == *RP_XRT_EMULATE* ]]; }; then
      has_plugin $be || { echo "no $be backend in this build"; return; }
      [ $be = cuda ] && [ -z "$gpu" ] && { echo "no usable GPU"; return; }
    fi
  done
  [[ $l =~ (^|[|&;]\ *)dot\  ]] && ! command -v dot >/dev/null &&
    { echo "no Graphviz"; return; }
  [[ $l =~ (^|[|&;]\ *)man\  ]] && ! command -v man >/dev/null &&
    { echo "no man"; return; }
  [[ $l =~ \|\ *jq\  ]] && ! command -v jq >/dev/null &&
    { echo "no jq"; return; }
  for f in "${skipped_out[@]}"; do
    [[ " $l " == *[\ =]"$f"[\ ]* ]] && { echo "needs $f of a skipped example"; return; }
  done
  echo ""
}
# outputs LINE: files a line writes with -o/--out FILE (for the skip chain)
outputs() { grep -oE '(-o|--out)[ =][^ ]+' <<<"$1" | sed -E 's/^(-o|--out)[ =]//'; }

ran=0 skip=0 fail=0
skipped_out=()
run_line() {   # run_line WHERE LINE
  local where=$1 l=$2 r out w
  w=$(why "$l")
  if [ -n "$w" ]; then
    echo "SKIP: $l ($w)"
    skip=$((skip + 1))
    while read -r f; do [ -n "$f" ] && skipped_out+=("$f"); done < <(outputs "$l")
    return
  fi
  local t0=$SECONDS
  out=$(timeout 60 bash -c "$l" 2>&1)
  r=$?
  if [ $r -eq 0 ] || { [ $r -eq 3 ] && [[ $l == *"reprise check"* ]]; }; then
    echo "ok ($((SECONDS - t0)) s): $l"
    ran=$((ran + 1))
  else
    echo "FAIL ($where, exit $r): $l"
    echo "$out" | tail -15 | sed 's/^/    /'
    fail=$((fail + 1))
  fi
}

# The manual pages: EXAMPLES sections, .nf/.fi blocks; roff escapes undone.
pages=("$src"/tools/man/*.1)
[ "$which" = readme ] && pages=()
for page in "${pages[@]}"; do
  while IFS= read -r l; do
    run_line "$(basename "$page")" "$l"
  done < <(awk '/^\.SH/ { ex = ($2 == "EXAMPLES") } ex && /^\.nf/ { nf = 1; next }
                ex && /^\.fi/ { nf = 0 } ex && nf && !/^\./' "$page" |
           sed -e 's/\\-/-/g' -e 's/\\e/\\/g' -e 's/\\(aq/'"'"'/g')
done
# The README: indented command lines, joined over trailing backslashes.
readme=$src/README.md
[ "$which" = man ] && readme=/dev/null
while IFS= read -r l; do
  run_line README.md "$l"
done < <(awk '/^    / { s = substr($0, 5)
                if (cont != "") { s = cont " " s; sub(/^ +/, "", s) }
                if (s ~ /\\$/) { sub(/\\$/, "", s); cont = s; next }
                cont = ""
                if (s ~ /^([A-Z_]+=[^ ]+ )*build\/(tools\/reprise|examples\/)/) print s }' \
           "$readme")
echo "doc examples: $ran ran, $skip skipped, $fail failed"
[ $fail -eq 0 ] && [ $ran -gt 0 ]
