/* CUDA bodies through StarPU, where StarPU has CUDA: compiled when
 * starpu_config.h defines STARPU_USE_CUDA. Debian's libstarpu-1.3
 * (1.3.10+dfsg-2) does not (STARPU_USE_CUDA is #undef there, the library
 * links no CUDA runtime), so this file is empty in the builds of this
 * repository's CI; see docs/mpi.md.
 *
 * A kernel item may run on a CUDA worker when its kernel has a CUDA body
 * (a __global__ function or a host wrapper) and its task names the
 * kernel's images as StarPU data (modes "implicit" and "mpi"; tasks of
 * mode "explicit" carry no data: their bodies use host images). StarPU
 * moves the data to the device and back; the body points each buffer
 * argument at the device copy of its image's handle. Packs, unpacks, host
 * tasks and local copies stay on CPU workers. */
#include <stdio.h>
#include "sp_internal.h"

#ifdef STARPU_USE_CUDA
#include <cuda_runtime.h>

int rp__sp_can_execute(unsigned worker, struct starpu_task *task,
                       unsigned nimpl) {
  (void)nimpl;
  if (starpu_worker_get_type((int)worker) != STARPU_CUDA_WORKER)
    return 1;
  const sp_tctx *c = task->cl_arg;
  const sp_item *it = c ? c->it : NULL;
  if (!it || it->kind != SP_RUN || it->piece != RP_NONE)
    return 0;
  const sp *s = it->s;
  const rp_kernel *k = s->kern[it->v];
  return s->mode != SP_EXPLICIT && s->p->node[it->v].type == RP_OP_KERNEL &&
         k && (k->cuda || k->cuda_host);
}

/* The cuda backend's launch shape: the kernel's block, else one from the
 * index space's rank; a grid covering the index space. */
static void geometry(const rp_kernel *k, const rp_kargs *a, dim3 *grid,
                     dim3 *block) {
  const unsigned *bk = k->block;
  if (bk[0] || bk[1] || bk[2])
    *block = (dim3){bk[0] ? bk[0] : 1, bk[1] ? bk[1] : 1, bk[2] ? bk[2] : 1};
  else if (a->n[2] > 1)
    *block = (dim3){32, 4, 4};
  else if (a->n[1] > 1)
    *block = (dim3){32, 8, 1};
  else
    *block = (dim3){256, 1, 1};
  uint64_t b[3] = {block->x, block->y, block->z}, g[3];
  for (int i = 0; i < 3; i++) {
    uint64_t n = a->n[i] ? a->n[i] : 1;
    g[i] = (n + b[i] - 1) / b[i];
    if (g[i] > UINT32_MAX)
      g[i] = UINT32_MAX; /* the launch then fails and says so */
  }
  *grid = (dim3){(unsigned)g[0], (unsigned)g[1], (unsigned)g[2]};
}

void rp__sp_cuda_body(void *buffers[], void *arg) {
  const sp_item *it = ((const sp_tctx *)arg)->it;
  sp *s = it->s;
  const rp_plan *p = s->p;
  const rp_plan_node *nd = &p->node[it->v];
  const rp_plan_access *a = p->acc + nd->acc0;
  const rp_kernel *k = s->kern[it->v];
  char msg[256] = "";
  int code = 0;
  if (!__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE)) {
    rp_kargs ka = *rp_exec_args(s->x, nd->op);
    for (uint32_t j = 0; j < nd->nacc; j++) {
      if (a[j].image == RP_NONE)
        continue;
      /* the task's buffer of this image (repeats were merged) */
      uint32_t b = 0;
      while (b < it->nd && s->descr[it->d0 + b].handle != s->h[a[j].image])
        b++;
      const rp_plan_image *im = &p->image[a[j].image];
      uintptr_t dev = STARPU_VECTOR_GET_PTR(buffers[b]);
      /* handles of our images cover [lo, hi); user arrays all of it */
      ka.a[j].p =
          (void *)(dev -
                   (rp__sp_in_user(p, &s->part, a[j].image) ? 0 : im->lo));
    }
    cudaStream_t st = starpu_cuda_get_local_stream();
    cudaError_t e;
    if (k->cuda) {
      dim3 grid, block;
      geometry(k, &ka, &grid, &block);
      void *args[1] = {&ka};
      e = cudaLaunchKernel(k->cuda, grid, block, args, 0, st);
    } else {
      int rc = k->cuda_host(&ka, st);
      e = cudaGetLastError();
      if (rc && e == cudaSuccess)
        e = cudaErrorLaunchFailure;
    }
    if (e == cudaSuccess)
      e = cudaStreamSynchronize(st); /* done when the body returns */
    if (e != cudaSuccess) {
      code = (int)e;
      snprintf(msg, sizeof msg, "starpu: CUDA body of node %u: %s", it->v,
               cudaGetErrorString(e));
    }
  }
  rp__sp_item_done(it, code, msg);
}
#endif
