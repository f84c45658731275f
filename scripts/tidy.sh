#!/usr/bin/env bash
# clang-tidy over the library, the backends and the CLI with .clang-tidy's
# checks (bugprone, performance, portability); any finding fails (CI's
# `tidy` stage of scripts/test.sh). Builds build-tidy for its compile
# commands (CUDA off: nvcc's flags are not clang's).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-tidy
cmake -S . -B "$dir" -DRP_WITH_CUDA=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DRP_BUILD_TESTS=OFF -DRP_BUILD_BENCH=OFF -DRP_BUILD_EXAMPLES=OFF >/dev/null
# Generated headers (the backend table) must exist before tidy reads them.
cmake --build "$dir" --target rp_obj -j"$(nproc)" >/dev/null
files=$(ls src/*/*.c backends/openmp/*.c backends/starpu/*.c backends/mpi/*.c \
           backends/xrt/*.c tools/*.c)
if command -v run-clang-tidy >/dev/null 2>&1; then
  run-clang-tidy -quiet -p "$dir" -j "$(nproc)" $files
else
  clang-tidy -p "$dir" --quiet $files
fi
echo "== clang-tidy: clean"
