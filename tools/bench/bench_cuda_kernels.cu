/* Kernels of the CUDA benchmark: the anchor's tiny and burn kernels. */
#include "bench_cuda_kernels.h"
#include "reprise/kernel.h"

RP_KERNEL(bc_tiny_k, {
  float *p = RP_PTR(float, 0);
  if (RP_X == 0)
    p[0] += RP_VAL(float, 1);
})
static const rp_param bc_tiny_params[] = {{"p", RP_INOUT}, {"v", RP_SCALAR}};
extern "C" const rp_kernel bc_tiny = RP_KERNEL_DESC(bc_tiny_k, bc_tiny_params);

#include "burn_kernel.inc"
extern "C" const rp_kernel bc_burn = RP_KERNEL_DESC(bc_burn_k, bc_burn_params);
/* The same kernel declared splittable along x, p following the cut. */
extern "C" const rp_kernel bc_burn_split =
    RP_KERNEL_DESC_SPLIT(bc_burn_k, bc_burn_params, RP_SPLIT_X, 0x1u);

/* The hand-built WHILE graph's test (bench_cuda, "device loop"): after
 * each pass count it and keep looping while the residual in device memory
 * is not below the tolerance and fewer than max passes ran, as reprise's
 * loop kernel does for the same predicate. */
#if CUDART_VERSION >= 12040
__global__ void bc_while_test(cudaGraphConditionalHandle h,
                              bc_while_state *st) {
  unsigned n = ++st->count;
  double v = __longlong_as_double(__ldcv((const long long *)st->res));
  cudaGraphSetConditional(h, n < st->max && !(v < st->tol) ? 1u : 0u);
}
extern "C" const void *bc_while_kernel(void) {
  return (const void *)bc_while_test;
}
#else
extern "C" const void *bc_while_kernel(void) { return 0; }
#endif
