/* CUDA backend: the kernel that ends each pass of the device-side loop of
 * rp_exec_run_until() (a conditional WHILE node around the replay). Built
 * by nvcc into the plugin; the rest of the backend is plain C. */
#include <cuda_runtime.h>
#include "rp_cuda_cond.h"

#if CUDART_VERSION >= 12040
/* After one replay: count it; every `every` replays read the value the
 * replay brought home (in mapped host memory: fetched again, never from a
 * cache); keep looping while the predicate does not hold and fewer than
 * max replays ran (as the host checks every `every` replays). */
__global__ void rp_cu_until_cond(cudaGraphConditionalHandle h,
                                 rp_cu_until_dev *d) {
  unsigned n = ++d->count;
  if (n >= d->max) {
    cudaGraphSetConditional(h, 0u);
    return;
  }
  if (n % d->every) {
    cudaGraphSetConditional(h, 1u);
    return;
  }
  double v;
  switch (d->type) {
  case 1:
    v = __int_as_float(__ldcv((const int *)d->val));
    break;
  case 2:
    v = (double)(long long)__ldcv((const unsigned long long *)d->val);
    break;
  case 3:
    v = (double)__ldcv((const int *)d->val);
    break;
  default:
    v = __longlong_as_double(__ldcv((const long long *)d->val));
    break;
  }
  int holds = d->cmp == 1   ? v <= d->thr
              : d->cmp == 2 ? v > d->thr
              : d->cmp == 3 ? v >= d->thr
                            : v < d->thr;
  cudaGraphSetConditional(h, holds ? 0u : 1u);
}

extern "C" const void *rp__cu_until_kernel(void) {
  return (const void *)rp_cu_until_cond;
}
#else
extern "C" const void *rp__cu_until_kernel(void) { return 0; }
#endif
