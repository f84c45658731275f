/* Kernels of the CUDA benchmark (tools/bench/bench_cuda.c), built by nvcc. */
#ifndef RP_BENCH_CUDA_KERNELS_H
#define RP_BENCH_CUDA_KERNELS_H

#include "reprise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* p[0] += v by thread 0 (params: inout p, scalar float v); space 1. */
extern const rp_kernel bc_tiny;
/* iters FMAs per element of p[off + x] (inout p, scalar u64 off, scalar
 * i32 iters), as the anchor's burn kernel. */
extern const rp_kernel bc_burn;
/* bc_burn declared splittable along x (p follows): for rp_exec_opts.split. */
extern const rp_kernel bc_burn_split;

/* The hand-built WHILE loop's state in device memory (bench_cuda). */
typedef struct bc_while_state {
  const double *res; /* the residual, in device memory */
  double tol;
  unsigned max, count;
} bc_while_state;
/* Its test kernel (cudaGraphConditionalHandle, bc_while_state *), or NULL
 * when the toolkit has no conditional nodes. */
const void *bc_while_kernel(void);

#ifdef __cplusplus
}
#endif
#endif
