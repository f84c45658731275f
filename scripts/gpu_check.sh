#!/usr/bin/env bash
# Build and test reprise on a GPU machine that has nvcc and CMake but no
# package manager: cJSON and Criterion come as Debian .deb files in DEBS
# (default .gl/debs; fill it here with `apt-get download libcjson1
# libcjson-dev libcriterion3 libcriterion-dev libgit2-1.5 libnanomsg5 libffi8
# libmbedtls14 libmbedx509-1 libmbedcrypto7 libssh2-1 libhttp-parser2.9`),
# unpacked into a private prefix, never into /. Runs every test (the GPU
# ones really run there), the examples on the cuda backend, and, with
# BENCH=1, the CUDA benchmarks. Logs go to $OUT (or out/gpu).
set -uo pipefail
cd "$(dirname "$0")/.."
debs=${DEBS:-.gl/debs}
out=${OUT:-out/gpu}
mkdir -p "$out"
out=$(cd "$out" && pwd)
prefix=/tmp/rp-deps
mkdir -p "$prefix"
for d in "$debs"/*.deb; do
  [ -e "$d" ] && dpkg -x "$d" "$prefix"
done
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
  | tee "$out/gpu.txt"
dir=build-gpu
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DRP_WERROR=ON \
  -DCMAKE_PREFIX_PATH="$prefix/usr" >"$out/configure.log" 2>&1 ||
  { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$dir" -j"$(nproc)" >"$out/build.log" 2>&1 ||
  { grep -E "error" "$out/build.log" | head -40; exit 1; }
if [ "${BENCH_ONLY:-0}" = 1 ]; then
  for b in bench_cuda_examples bench_cuda; do
    [ -x "$dir/tools/bench/$b" ] && "$dir/tools/bench/$b" >"$out/$b.log" 2>&1
    tail -12 "$out/$b.log"
  done
  sh scripts/prediction_table.sh "$dir" cuda 5 >"$out/prediction.md" 2>&1
  tail -15 "$out/prediction.md"
  exit 0
fi
(cd "$dir" && ctest --output-on-failure -j4 >"$out/ctest.log" 2>&1)
ct=$?
summary="ctest: $(grep -E 'tests passed|tests failed' "$out/ctest.log")"
ex=0
for e in jacobi2d matpow recurrence blackscholes heat2d \
         matmul_rows twokernels gemm; do
  [ -x "$dir/examples/$e" ] || continue
  if "$dir/examples/$e" --backend cuda >"$out/ex_$e.log" 2>&1; then
    summary+=$'\n'"example $e: ok ($(grep -iE 'achieved' "$out/ex_$e.log" | head -1))"
  else
    summary+=$'\n'"example $e: FAILED"
    ex=1
  fi
done
# The copies reshaped (rp_exec_opts.reshape_copies) on the GPU.
for e in recurrence blackscholes gemm jacobi2d heat2d; do
  [ -x "$dir/examples/$e" ] || continue
  if "$dir/examples/$e" --reshape-copies --backend cuda \
       >"$out/ex_${e}_reshaped.log" 2>&1; then
    summary+=$'\n'"example $e --reshape-copies: ok ($(grep -E 'copies reshaped' "$out/ex_${e}_reshaped.log" | head -1))"
  else
    summary+=$'\n'"example $e --reshape-copies: FAILED"
    ex=1
  fi
done
if "$dir/examples/jacobi2d" --mixed --backend cuda >"$out/ex_jacobi2d_mixed.log" 2>&1; then
  summary+=$'\n'"example jacobi2d --mixed: ok ($(grep -iE 'achieved' "$out/ex_jacobi2d_mixed.log" | head -1))"
else
  summary+=$'\n'"example jacobi2d --mixed: FAILED"
  ex=1
fi
if [ "${BENCH:-0}" = 1 ]; then
  for b in "$dir"/tools/bench/bench_cuda*; do
    [ -x "$b" ] && "$b" >"$out/$(basename "$b").log" 2>&1
  done
fi
grep -E "Skipped|Failed|\*\*\*" "$out/ctest.log" | head -20
echo "$summary"
[ $ct -eq 0 ] && [ $ex -eq 0 ]
