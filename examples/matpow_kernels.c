/* Matrix power workload: X <- X * M repeated, row blocks of each product.
 * Valid C and C++ (built by nvcc). */
#include <string.h>
#include "examples.h"

/* Rows [r0, r0 + NY) of C = A * B, n x n row-major doubles; one point per
 * element of C. Shared by matpow and matmul_rows. */
RP_KERNEL(matmul_rows, {
  const double *a = RP_PTR(const double, 0), *b = RP_PTR(const double, 1);
  uint64_t n = (uint64_t)RP_VAL(int64_t, 3);
  uint64_t i = (uint64_t)RP_VAL(int64_t, 4) + RP_Y, j = RP_X;
  double s = 0;
  for (uint64_t k = 0; k < n; k++)
    s += a[i * n + k] * b[k * n + j];
  RP_PTR(double, 2)[i * n + j] = s;
})
static const rp_param matmul_rows_params[] = {{"A", RP_IN},
                                              {"B", RP_IN},
                                              {"C", RP_OUT},
                                              {"n", RP_SCALAR},
                                              {"r0", RP_SCALAR}};
const rp_kernel ex_matmul_rows_k =
    RP_KERNEL_DESC(matmul_rows, matmul_rows_params);

void ex_matpow_init(const ex_matpow *p, double *m, double *x, double *y) {
  uint64_t n = p->n;
  for (uint64_t i = 0; i < n; i++)
    for (uint64_t j = 0; j < n; j++) {
      m[i * n + j] = (double)((i * 31 + j * 17) % 100) / (50.0 * (double)n);
      x[i * n + j] = i == j ? 1.0 : 0.0;
    }
  memset(y, 0, n * n * sizeof *y);
}

rp_status ex_matpow_record(rp_graph *g, const ex_matpow *p, double *m,
                           double *x, double *y) {
  uint64_t n = p->n, nb = p->blocks ? p->blocks : 1;
  rp_buf M, X, Y;
  rp_status rc;
  if (n < 1 || nb > n)
    return RP_EINVAL;
  if ((rc = rp_buffer_register_2d(g, "M", m, n, n, 8, &M)) ||
      (rc = rp_buffer_register_2d(g, "X", x, n, n, 8, &X)) ||
      (rc = rp_buffer_register_2d(g, "Y", y, n, n, 8, &Y)))
    return rc;
  for (unsigned s = 0; s < p->steps; s++) {
    rp_buf src = s % 2 ? Y : X, dst = s % 2 ? X : Y;
    for (uint64_t i = 0; i < nb; i++) {
      uint64_t r0 = n * i / nb, r1 = n * (i + 1) / nb;
      rp_arg a[5];
      /* Block i reads only rows [r0, r1) of the source: declared so, each
       * block follows the same block of the product before (a chain per
       * block, as the hand-built dag has), not all of them; the 8 copies
       * of X's rows coherence inserts merge back into one (reshaped
       * copies, the default on cuda). */
      a[0] = rp_arg_buf(rp_box2_elems(src, r0, r1, 0, n));
      a[1] = rp_arg_buf(rp_whole(M));
      a[2] = rp_arg_buf(rp_box2_elems(dst, r0, r1, 0, n));
      a[3] = rp_arg_i64((int64_t)n);
      a[4] = rp_arg_i64((int64_t)r0);
      if ((rc = rp_record_kernel(g, &ex_matmul_rows_k, p->device,
                                 rp_dims3(n, r1 - r0, 1), a, NULL, NULL)))
        return rc;
    }
  }
  if ((rc = rp_record_sync_host(g, rp_whole(X), NULL)))
    return rc;
  return rp_record_sync_host(g, rp_whole(Y), NULL);
}

void ex_matpow_check(const ex_matpow *p, unsigned replays, const double *m,
                     double *x, double *y) {
  uint64_t n = p->n;
  for (unsigned r = 0; r < replays; r++)
    for (unsigned s = 0; s < p->steps; s++) {
      const double *a = s % 2 ? y : x;
      double *d = s % 2 ? x : y;
      for (uint64_t i = 0; i < n; i++)
        for (uint64_t j = 0; j < n; j++) {
          double t = 0;
          for (uint64_t k = 0; k < n; k++)
            t += a[i * n + k] * m[k * n + j];
          d[i * n + j] = t;
        }
    }
}

#ifdef EX_KERNEL_LIBRARY
/* The kernel library libmatpow_kernels.so (examples/CMakeLists.txt): its
 * graphs replay with `reprise run --kernels` (reprise/library.h). */
static const rp_kernel *const ex_lib_kernels[] = {&ex_matmul_rows_k, NULL};
RP_KERNEL_LIBRARY(ex_lib_kernels, NULL)
#endif
