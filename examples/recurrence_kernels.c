/* Recurrence workload: u <- r u (1 - u) + c applied to every element of a
 * matrix, row blocks over several rounds. Valid C and C++ (built by nvcc). */
#include "examples.h"

static RP_HD inline double rec_apply(double v, int64_t inner, double r,
                                     double c) {
  for (int64_t t = 0; t < inner; t++)
    v = r * v * (1.0 - v) + c;
  return v;
}

RP_KERNEL(rec_step, {
  uint64_t i =
      ((uint64_t)RP_VAL(int64_t, 5) + RP_Y) * (uint64_t)RP_VAL(int64_t, 4) +
      RP_X;
  double *u = RP_PTR(double, 0);
  u[i] =
      rec_apply(u[i], RP_VAL(int64_t, 1), RP_VAL(double, 2), RP_VAL(double, 3));
})
static const rp_param rec_step_params[] = {
    {"u", RP_INOUT},  {"inner", RP_SCALAR}, {"r", RP_SCALAR},
    {"c", RP_SCALAR}, {"cols", RP_SCALAR},  {"r0", RP_SCALAR}};
static const rp_kernel rec_step_k = RP_KERNEL_DESC(rec_step, rec_step_params);

void ex_recurrence_init(const ex_recurrence *p, double *u) {
  for (uint64_t i = 0; i < p->rows * p->cols; i++)
    u[i] = 0.05 + 0.9 * (double)((i * 2654435761u) % 1000) / 1000.0;
}

rp_status ex_recurrence_record(rp_graph *g, const ex_recurrence *p, double *u,
                               rp_node *first) {
  uint64_t nb = p->blocks ? p->blocks : 1;
  rp_buf U;
  rp_status rc;
  if (!p->rows || !p->cols || nb > p->rows)
    return RP_EINVAL;
  if ((rc = rp_buffer_register_2d(g, "U", u, p->rows, p->cols, 8, &U)))
    return rc;
  for (unsigned k = 0; k < p->rounds; k++)
    for (uint64_t i = 0; i < nb; i++) {
      uint64_t r0 = p->rows * i / nb, r1 = p->rows * (i + 1) / nb;
      rp_arg a[6];
      rp_node nd;
      a[0] = rp_arg_buf(rp_box2_elems(U, r0, r1, 0, p->cols));
      a[1] = rp_arg_i64((int64_t)p->inner);
      a[2] = rp_arg_f64(p->r);
      a[3] = rp_arg_f64(p->c);
      a[4] = rp_arg_i64((int64_t)p->cols);
      a[5] = rp_arg_i64((int64_t)r0);
      if ((rc = rp_record_kernel(g, &rec_step_k, p->device,
                                 rp_dims3(p->cols, r1 - r0, 1), a, NULL, &nd)))
        return rc;
      if (first && k == 0 && i == 0)
        *first = nd;
    }
  return rp_record_sync_host(g, rp_whole(U), NULL);
}

void ex_recurrence_check(const ex_recurrence *p, unsigned replays, double *u) {
  for (unsigned r = 0; r < replays; r++)
    for (unsigned k = 0; k < p->rounds; k++)
      for (uint64_t i = 0; i < p->rows * p->cols; i++)
        u[i] = rec_apply(u[i], (int64_t)p->inner, p->r, p->c);
}

#ifdef EX_KERNEL_LIBRARY
/* The kernel library librecurrence_kernels.so (examples/CMakeLists.txt): its
 * graphs replay with `reprise run --kernels` (reprise/library.h). */
static const rp_kernel *const ex_lib_kernels[] = {&rec_step_k, NULL};
RP_KERNEL_LIBRARY(ex_lib_kernels, NULL)
#endif
