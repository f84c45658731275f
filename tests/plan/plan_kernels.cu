/* The plan tests' kernels with CUDA bodies (built by nvcc). */
#include "plan_kernels.inc"
