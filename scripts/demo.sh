#!/usr/bin/env bash
# The main job: install what is missing, build, then record, analyse and
# replay the Jacobi 2D example on the best backend present (CUDA when a GPU
# is there, OpenMP otherwise), printing the analysis and the theoretical
# against the achieved speedup. Writes the graph's dot, SVG and timeline
# to out/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
# The build's log goes into the build folder, the pictures into out/
# (ignored by git): the demo leaves nothing untracked in the tree.
mkdir -p build
log=build/demo-build.log
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1 ||
  { cat "$log"; exit 1; }
cmake --build build -j"$(nproc)" >>"$log" 2>&1 || { cat "$log"; exit 1; }
mkdir -p out
build/examples/jacobi2d --dot out/jacobi2d.dot --trace out/jacobi2d.trace.json "$@"
if command -v dot >/dev/null; then
  dot -Tsvg out/jacobi2d.dot -o out/jacobi2d.svg
fi
echo
echo "graph: out/jacobi2d.dot (and .svg); timeline: out/jacobi2d.trace.json" \
     "(open it in https://ui.perfetto.dev)"
