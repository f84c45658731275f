/* Matmul partitioned by rows of A over several devices: recording and the
 * plain triple loop; the kernel is ex_matmul_rows_k (matpow_kernels.c).
 * Valid C and C++. */
#include <string.h>
#include "multidev.h"

void ex_mmrows_init(const ex_mmrows *p, double *a, double *b, double *c) {
  uint64_t n = p->n;
  for (uint64_t i = 0; i < n; i++)
    for (uint64_t j = 0; j < n; j++) {
      a[i * n + j] = (double)((i * 3 + j * 5) % 7) - 3.0;
      b[i * n + j] = (double)((i * 2 + j) % 5) - 2.0;
    }
  memset(c, 0, n * n * sizeof *c);
}

rp_status ex_mmrows_record(rp_graph *g, const ex_mmrows *p, double *a,
                           double *b, double *c) {
  uint64_t n = p->n;
  unsigned nd = p->devices ? p->devices : 1;
  rp_buf A, B, C;
  rp_status rc;
  if (!n || nd > n || nd > RP_MAX_DEVICES || n >= (1ull << 24))
    return RP_EINVAL;
  if ((rc = rp_buffer_register_2d(g, "A", a, n, n, 8, &A)) ||
      (rc = rp_buffer_register_2d(g, "B", b, n, n, 8, &B)) ||
      (rc = rp_buffer_register_2d(g, "C", c, n, n, 8, &C)))
    return rc;
  for (unsigned d = 0; d < nd; d++) {
    uint64_t r0 = n * d / nd, r1 = n * (d + 1) / nd;
    rp_arg args[5];
    args[0] = rp_arg_buf(rp_box2_elems(A, r0, r1, 0, n));
    args[1] = rp_arg_buf(rp_whole(B));
    args[2] = rp_arg_buf(rp_box2_elems(C, r0, r1, 0, n));
    args[3] = rp_arg_i64((int64_t)n);
    args[4] = rp_arg_i64((int64_t)r0);
    rc = rp_record_kernel(g, &ex_matmul_rows_k, (int)d, rp_dims3(n, r1 - r0, 1),
                          args, NULL, NULL);
    if (rc)
      return rc;
  }
  return rp_record_sync_host(g, rp_whole(C), NULL);
}

void ex_mmrows_check(const ex_mmrows *p, const double *a, const double *b,
                     double *c) {
  uint64_t n = p->n;
  for (uint64_t i = 0; i < n; i++)
    for (uint64_t j = 0; j < n; j++) {
      double s = 0;
      for (uint64_t k = 0; k < n; k++)
        s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
}
