#!/usr/bin/env bash
# Issue 27 on the GPU machine: every example on every backend it lists
# (cuda included: the matrix of examples/tests.cmake), and a saved Jacobi
# graph replayed from the command line with the example's kernel library
# (compiled by nvcc: CUDA bodies) on cuda, openmp and the reference, the
# buffers written back compared byte for byte. One log: $OUT/user_cli.log.
# Run from the repo root:  bash scripts/device/user_cli.sh
set -u
. scripts/device/env.sh
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
LOG=$OUT/user_cli.log
B=build-user-cli
: >"$LOG"
say() { echo "$@" | tee -a "$LOG"; }
say "== user_cli $(date -u +%FT%TZ) $(hostname) load $(cut -d' ' -f1-3 /proc/loadavg)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$LOG" 2>&1
cmake -S . -B $B -DRP_WITH_CUDA=ON -DRP_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=Release >>"$LOG" 2>&1 || { say "configure FAILED"; exit 1; }
EX="jacobi2d matpow recurrence blackscholes gemm converge heat2d matmul_rows twokernels"
LIBS=""
for e in $EX; do LIBS="$LIBS ${e}_kernels"; done
cmake --build $B -j16 --target reprise_cli gpu_gate test_cli test_checking \
  $EX $LIBS >>"$LOG" 2>&1 || { say "build FAILED (see the log)"; exit 1; }
# 1. The example matrix: one ctest entry per example and backend.
say "== examples on every backend (ctest -R _on_)"
(cd $B && ctest -R '_on_' -j8 --timeout 120 2>&1) | tee -a "$LOG" | tail -15
# 2. A saved graph replayed by the tool on each backend.
say "== reprise run --kernels on a saved Jacobi graph"
T=$(mktemp -d)
$B/examples/jacobi2d --backend reference --n 512 --steps 8 --every 4 \
  --blocks 8 --iters 1 --save $T/j.json >>"$LOG" 2>&1
for be in reference openmp cuda; do
  /usr/bin/time -f "$be: %e s" $B/tools/reprise run -b $be --iters 20 \
    -k $B/examples/libjacobi2d_kernels.so \
    --save-buffer A=$T/A.$be --save-buffer B=$T/B.$be \
    --save-buffer sums=$T/s.$be $T/j.json 2>&1 | tee -a "$LOG"
done
for be in openmp cuda; do
  for b in A B s; do
    if cmp -s $T/$b.reference $T/$b.$be; then say "$be $b: identical"
    else say "$be $b: DIFFERENT from the reference"; fi
  done
done
# 3. The tool's and the checking mode's tests (cuda: --check refused).
say "== test_cli, test_checking"
(cd $B && ctest -R 'test_cli|test_checking' --output-on-failure 2>&1) |
  tee -a "$LOG" | tail -6
$B/tools/reprise run -b cuda --check -k $B/examples/libjacobi2d_kernels.so \
  $T/j.json 2>&1 | tee -a "$LOG"
say "(expected: cuda refuses --check, naming compute-sanitizer)"
rm -rf "$T"
say "== done; log: $LOG"
