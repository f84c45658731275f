/* Running one plan node on the calling thread: what every backend does
 * for the work it runs on the host (the reference for all of it). */
#include <string.h>
#include "core/core.h"
#include "reprise/backend.h"

rp_status rp_plan_run_on_host(rp_exec *x, uint32_t node, rp_image_addr_fn addr,
                              void *ctx, void **scratch) {
  RP_ENTER();
  if (!x || !addr)
    return RP_NULL_ARG();
  const rp_plan *p = rp_exec_plan(x);
  if (!p || node >= p->nnode)
    return RP_BAD_ARG();
  const rp_plan_node *nd = &p->node[node];
  const rp_plan_access *a = p->acc + nd->acc0;
  switch (nd->type) {
  case RP_OP_KERNEL: {
    rp_node_info ni;
    rp_node_info_get(p->graph, nd->op, &ni);
    if (!ni.kernel || !ni.kernel->cpu)
      return RP_ENOKERNEL;
    rp_kargs ka = *rp_exec_args(x, nd->op);
    for (uint32_t k = 0; k < nd->nacc; k++)
      if (a[k].image != RP_NONE)
        ka.a[k].p = addr(ctx, a[k].image);
    uint64_t lo[3] = {0, 0, 0};
    ni.kernel->cpu(&ka, lo, ka.n);
    return RP_OK;
  }
  case RP_OP_HOST: {
    rp_host_fn fn;
    void *user;
    if (rp_node_host_fn(p->graph, nd->op, &fn, &user) != RP_OK || !fn ||
        (!scratch && nd->nacc))
      return fn ? RP_EINVAL : RP_ENOKERNEL;
    for (uint32_t k = 0; k < nd->nacc; k++)
      scratch[k] = addr(ctx, a[k].image);
    fn(user, scratch);
    return RP_OK;
  }
  default: {
    char *dst = addr(ctx, a[1].image);
    const char *src = addr(ctx, a[0].image);
    const uint64_t *iv = p->iv + 2 * (uint64_t)a[1].iv0;
    for (uint32_t i = 0; i < a[1].niv; i++)
      memmove(dst + iv[2 * i], src + iv[2 * i], iv[2 * i + 1]);
    return RP_OK;
  }
  }
}
