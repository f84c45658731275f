/* Single-point kernels: tasks. */
#include "reprise/record.h"

rp_status rp_record_task(rp_graph *g, const rp_kernel *k, int device,
                         const rp_arg *args, const rp_op_opts *o,
                         rp_node *out) {
  return rp_record_kernel(g, k, device, rp_dims3(1, 1, 1), args, o, out);
}
