/* The CUDA benchmarks' checks: RK (bench_check.h) and CK, a failing call
 * of the CUDA runtime ending the benchmark with where and why. Valid C
 * and C++. */
#ifndef RP_BENCH_CUDA_CHECK_H
#define RP_BENCH_CUDA_CHECK_H

#include <cuda_runtime.h>
#include "bench_check.h"

#define CK(x)                                                              \
  do {                                                                     \
    cudaError_t e_ = (x);                                                  \
    if (e_ != cudaSuccess) {                                               \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,            \
              cudaGetErrorString(e_));                                     \
      exit(2);                                                             \
    }                                                                      \
  } while (0)

#endif
