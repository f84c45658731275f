/* The split tests' kernels, CPU bodies only (no nvcc). */
#include "split_kernels.h"
#define RP_EXTERN_C
#include "split_kernels.inc"
