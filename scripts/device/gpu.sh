#!/usr/bin/env bash
# The GPU machine's one command (issue 28): scripts/gpu_check.sh, which
# sources scripts/device/env.sh, builds, tests, runs the examples, the
# sanitizer and the CUDA benchmarks, and writes "$OUT/gpu.log".
exec bash "$(dirname "$0")/../gpu_check.sh" "$@"
