/* The CUDA benchmarks' checks: RK (bench_check.h) and CK, a failing call
 * of the CUDA runtime ending the benchmark with where and why. Valid C
 * and C++. And the tiny kernel's argument block (bc_tiny_block). */
#ifndef RP_BENCH_CUDA_CHECK_H
#define RP_BENCH_CUDA_CHECK_H

#include <string.h>
#include <cuda_runtime.h>
#include "reprise.h"
#include "bench_check.h"

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,                \
              cudaGetErrorString(e_));                                         \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

/* The argument block of the tiny kernel (bc_tiny: p[0] += v) on one
 * float in device memory, *dp, allocated and zeroed here. */
static inline void bc_tiny_block(rp_kargs *ka, float **dp) {
  CK(cudaMalloc((void **)dp, 4));
  CK(cudaMemset(*dp, 0, 4));
  memset(ka, 0, sizeof *ka);
  ka->n[0] = ka->n[1] = ka->n[2] = 1;
  ka->a[0].p = *dp;
  ka->a[1].f32 = 1.0f;
}

#endif
