/* Single-point kernels: tasks. */
#include "core/core.h"
#include "reprise/record.h"

rp_status rp_record_task(rp_graph *g, const rp_kernel *k, int device,
                         const rp_arg *args, const rp_op_opts *o,
                         rp_node *out) {
  RP_ENTER();
  if (!g)
    return RP_NULL_ARG();
  return rp_record_kernel(g, k, device, rp_dims3(1, 1, 1), args, o, out);
}
