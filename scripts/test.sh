#!/usr/bin/env bash
# The tests: install what is missing, build with warnings as errors, run
# every test (Criterion, through CTest). GPU tests skip, saying why, when no
# GPU is present. RP_SANITIZE=1 builds with AddressSanitizer and UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
dir=build-test
extra=()
if [ "${RP_SANITIZE:-0}" = 1 ]; then
  dir=build-asan
  extra=(-DRP_SANITIZE=ON)
fi
cmake -S . -B "$dir" -DRP_WERROR=ON "${extra[@]}"
cmake --build "$dir" -j"$(nproc)"
cd "$dir"
ctest --output-on-failure -j"$(nproc)"
