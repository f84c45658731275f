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

#include "burn_kernel.inc"
extern "C" const rp_kernel bc_burn = RP_KERNEL_DESC(bc_burn_k,
                                                    bc_burn_params);
/* The same kernel declared splittable along x, p following the cut. */
extern "C" const rp_kernel bc_burn_split = RP_KERNEL_DESC_SPLIT(
    bc_burn_k, bc_burn_params, RP_SPLIT_X, 0x1u);
