/* CUDA backend: what the host side and the loop kernel of run_until share
 * (rp_cuda_cond.cu, rp_cuda_until.c). */
#ifndef RP_CUDA_COND_H
#define RP_CUDA_COND_H

#ifdef __cplusplus
extern "C" {
#endif

/* In device memory, written before each loop: the predicate and the
 * replays counted so far. */
typedef struct rp_cu_until_dev {
  const void *val; /* the value: mapped host memory */
  int type, cmp;   /* rp_until_type, rp_until_cmp */
  double thr;
  unsigned max, count;
  unsigned every; /* test after every `every` replays */
} rp_cu_until_dev;

/* The loop kernel (a __global__ taking a cudaGraphConditionalHandle and an
 * rp_cu_until_dev *), or NULL when the toolkit has no conditional nodes. */
const void *rp__cu_until_kernel(void);

#ifdef __cplusplus
}
#endif
#endif
