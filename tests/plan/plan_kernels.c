/* The plan tests' kernels, CPU bodies only. */
#include "plan_kernels.inc"
