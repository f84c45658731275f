/* CUDA backend: argument blocks packed to a kernel's parameters
 * (rp_cuda_args.cuda_packed). A graph node keeps a copy of its kernel's
 * parameter bytes, and cudaGraphInstantiate and the setters pay for
 * them: the whole rp_kargs is 856 bytes, a kernel of two parameters
 * packs into 184. */
#include <string.h>
#include "rp_cuda.h"

void rp__cu_pack(const rp_kargs *a, unsigned np, void *out) {
  char *p = out;
  memcpy(p, a->n, sizeof a->n);
  p += sizeof a->n;
  memcpy(p, a->a, np * sizeof a->a[0]);
  p += np * sizeof a->a[0];
  memcpy(p, a->r, np * sizeof a->r[0]);
  p += np * sizeof a->r[0];
  memcpy(p, a->origin, sizeof a->origin);
  p += sizeof a->origin;
  memcpy(p, a->whole, sizeof a->whole);
}

/* Whether fn takes one parameter of `bytes` bytes, as CUDA reports it
 * (CUDA 12.4 on; before it, the descriptor is taken at its word). */
static bool takes(const void *fn, size_t bytes) {
#if CUDART_VERSION >= 12040
  size_t off = 0, sz = 0, o2, s2;
  bool ok = cudaFuncGetParamInfo(fn, 0, &off, &sz) == cudaSuccess && off == 0 &&
            sz == bytes && cudaFuncGetParamInfo(fn, 1, &o2, &s2) != cudaSuccess;
  (void)cudaGetLastError(); /* the second query's refusal */
  return ok;
#else
  (void)fn, (void)bytes;
  return true;
#endif
}

void rp__cu_entry(cu_state *s, cu_op *o) {
  const rp_cuda_args *ca = o->k->cuda_args;
  o->fn = o->k->cuda;
  o->pnp = 0;
  if (!s->pack || !ca || !o->k->cuda || ca->cuda != o->k->cuda ||
      !ca->cuda_packed || ca->packed_params < o->k->nparams ||
      ca->packed_params == 0 || ca->packed_params > RP_MAX_PARAMS)
    return;
  if (s->pk_fn != ca->cuda_packed) {
    s->pk_fn = ca->cuda_packed;
    s->pk_ok = takes(ca->cuda_packed, RP_KARGS_PACKED_BYTES(ca->packed_params));
  }
  if (s->pk_ok) {
    o->fn = ca->cuda_packed;
    o->pnp = ca->packed_params;
  }
}
