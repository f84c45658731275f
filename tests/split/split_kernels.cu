/* The split tests' kernels with their CUDA bodies. */
#include "split_kernels.h"
#define RP_EXTERN_C extern "C"
#include "split_kernels.inc"
