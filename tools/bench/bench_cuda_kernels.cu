/* Kernels of the CUDA benchmark: the anchor's tiny and burn kernels. */
#include "bench_cuda_kernels.h"
#include "reprise/kernel.h"

RP_KERNEL(bc_tiny_k, {
  float *p = RP_PTR(float, 0);
  if (RP_X == 0)
    p[0] += RP_VAL(float, 1);
})
static const rp_param bc_tiny_params[] = {{"p", RP_INOUT}, {"v", RP_SCALAR}};
extern "C" const rp_kernel bc_tiny = RP_KERNEL_DESC(bc_tiny_k,
                                                    bc_tiny_params);

RP_KERNEL(bc_burn_k, {
  float *p = RP_PTR(float, 0);
  uint64_t i = RP_VAL(uint64_t, 1) + RP_X;
  int iters = RP_VAL(int32_t, 2);
  float x = p[i];
  for (int k = 0; k < iters; k++)
    x = x * 0.999f + 0.001f;
  p[i] = x;
})
static const rp_param bc_burn_params[] = {
    {"p", RP_INOUT}, {"off", RP_SCALAR}, {"iters", RP_SCALAR}};
extern "C" const rp_kernel bc_burn = RP_KERNEL_DESC(bc_burn_k,
                                                    bc_burn_params);
/* The same kernel declared splittable along x, p following the cut. */
extern "C" const rp_kernel bc_burn_split = RP_KERNEL_DESC_SPLIT(
    bc_burn_k, bc_burn_params, RP_SPLIT_X, 0x1u);
