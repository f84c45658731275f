/* The graph -> graph passes rp_exec_create runs before the plan
 * (src/transform), with what rp_exec_opts asks: the split's chunks (for
 * RP_EXEC_SPLIT_AUTO, chosen by the exec's chooser), the reshape's
 * threshold. */
#include <string.h>
#include "replay/exec.h"

/* rp_exec_opts.reshape_copies = RP_EXEC_RESHAPE_AUTO: the threshold. On
 * the H200 a copy of 256 KiB takes about as long as the fixed cost of a
 * copy in a graph (docs/benchmarks.md). Runs of larger copies that feed no
 * pipeline merge up to RESHAPE_RUN bytes (jacobi2d's 8 copies of 1 MiB,
 * whose kernels only feed more kernels, cost 3-4 % more than one copy of
 * 8 MiB): past that a merged transfer delays its first reader by more
 * than the fixed costs it saves could repay (16 MiB take ~330 us at
 * 50 GB/s; 64 pieces' fixed costs ~200 us). */
enum { RESHAPE_BYTES = 256 * 1024, RESHAPE_RUN = 16 * 1024 * 1024 };

/* The chunks k that rp_exec_opts.split asks for on graph g and backend
 * be: k itself, or RP_EXEC_SPLIT_AUTO resolved by the exec's chooser
 * (src/measure/exec_create.c: the lane model); none: 1. */
static unsigned split_choose(const rp_exec *x, const rp_graph *g,
                             const rp_backend *be) {
  if (x->opts.split != RP_EXEC_SPLIT_AUTO)
    return x->opts.split;
  return x->choose_split ? x->choose_split(g, be, &x->opts) : 1;
}

rp_status rp__exec_passes(rp_exec *x, const rp_graph *g, const rp_backend *be) {
  x->g = g;
  /* 0: the backend's default (cuda reshapes: RP_BACKEND_RESHAPE_COPIES). */
  size_t rs = x->opts.reshape_copies;
  if (!rs)
    rs = be->flags & RP_BACKEND_RESHAPE_COPIES ? RP_EXEC_RESHAPE_AUTO
                                               : RP_EXEC_RESHAPE_NONE;
  if (rs == RP_EXEC_RESHAPE_NONE)
    rs = 0;
  if (!x->opts.split && !rs)
    return RP_OK;
  rp__pass_opts po = {0, 0, 0};
  po.split = x->opts.split ? split_choose(x, g, be) : 1;
  po.reshape_bytes = rs == RP_EXEC_RESHAPE_AUTO ? RESHAPE_BYTES : (uint64_t)rs;
  po.reshape_run = rs == RP_EXEC_RESHAPE_AUTO ? RESHAPE_RUN : 0;
  rp_status s = rp__transform(g, &po, &x->rw, x->err, sizeof x->err);
  if (s == RP_ENOTSUP) /* a graph loaded from a file: replayed as it is */
    s = RP_OK;
  if (s != RP_OK)
    return s;
  x->err[0] = 0;
  if (x->rw.g) {
    x->g = x->rw.g;
    x->chunks = po.split;
  }
  return RP_OK;
}
