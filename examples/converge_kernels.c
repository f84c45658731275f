/* Jacobi 2D converging to a tolerance (issue 15, item 4): the kernels,
 * the recording and a plain C check. */
#include <string.h>
#include "examples.h"
#include "reprise/kernel.h"

/* One Jacobi step over rows [r0, r0 + NY) of the n x n grid: boundary
 * cells are 1, interior cells the average of their four neighbours in the
 * input. 0.25 * (sum) rounds alike on CPU and GPU (no multiply-add). */
RP_KERNEL(ex_cv_step, {
  const double *u = RP_PTR(const double, 0);
  double *v = RP_PTR(double, 1);
  uint64_t n = RP_VAL(uint64_t, 2), i = RP_VAL(uint64_t, 3) + RP_Y;
  uint64_t j = RP_X;
  if (i == 0 || j == 0 || i == n - 1 || j == n - 1)
    v[i * n + j] = 1.0;
  else
    v[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] +
                           u[i * n + j - 1] + u[i * n + j + 1]);
})
static const rp_param ex_cv_step_params[] = {
    {"u", RP_IN}, {"v", RP_OUT}, {"n", RP_SCALAR}, {"r0", RP_SCALAR}};
static const rp_kernel ex_cv_step_k =
    RP_KERNEL_DESC(ex_cv_step, ex_cv_step_params);

/* Rows [r0, r0 + NX): rowres[i] = max_j |u - v| (one thread per row). */
RP_KERNEL(ex_cv_rowres, {
  const double *u = RP_PTR(const double, 0), *v = RP_PTR(const double, 1);
  double *rr = RP_PTR(double, 2);
  uint64_t n = RP_VAL(uint64_t, 3), i = RP_VAL(uint64_t, 4) + RP_X;
  double m = 0;
  for (uint64_t j = 0; j < n; j++) {
    double d = u[i * n + j] - v[i * n + j];
    d = d < 0 ? -d : d;
    m = d > m ? d : m;
  }
  rr[i] = m;
})
static const rp_param ex_cv_rowres_params[] = {{"u", RP_IN},
                                               {"v", RP_IN},
                                               {"rowres", RP_OUT},
                                               {"n", RP_SCALAR},
                                               {"r0", RP_SCALAR}};
static const rp_kernel ex_cv_rowres_k =
    RP_KERNEL_DESC(ex_cv_rowres, ex_cv_rowres_params);

/* res[0] = max of rowres[0 .. n) (one thread). */
RP_KERNEL(ex_cv_max, {
  const double *rr = RP_PTR(const double, 0);
  double *res = RP_PTR(double, 1);
  uint64_t n = RP_VAL(uint64_t, 2);
  double m = 0;
  for (uint64_t i = 0; i < n; i++)
    m = rr[i] > m ? rr[i] : m;
  res[0] = m;
})
static const rp_param ex_cv_max_params[] = {
    {"rowres", RP_IN}, {"res", RP_OUT}, {"n", RP_SCALAR}};
static const rp_kernel ex_cv_max_k =
    RP_KERNEL_DESC(ex_cv_max, ex_cv_max_params);

void ex_converge_init(const ex_converge *p, double *u, double *res) {
  if (u)
    memset(u, 0, p->n * p->n * sizeof *u);
  res[0] = 1e300;
}

static rp_status steps(rp_graph *g, const ex_converge *p, rp_buf from,
                       rp_buf to) {
  uint64_t n = p->n, rows = n / p->blocks;
  for (unsigned b = 0; b < p->blocks; b++) {
    uint64_t r0 = b * rows, nr = b + 1 == p->blocks ? n - r0 : rows;
    uint64_t lo = r0 ? r0 - 1 : 0, hi = r0 + nr + 1 < n ? r0 + nr + 1 : n;
    rp_arg a[4] = {
        rp_arg_buf(rp_range_bytes(from, lo * n * 8, (hi - lo) * n * 8)),
        rp_arg_buf(rp_range_bytes(to, r0 * n * 8, nr * n * 8)),
        rp_arg_i64((int64_t)n), rp_arg_i64((int64_t)r0)};
    rp_status s = rp_record_kernel(g, &ex_cv_step_k, p->device,
                                   rp_dims3(n, nr, 1), a, NULL, NULL);
    if (s)
      return s;
  }
  return RP_OK;
}

rp_status ex_converge_record(rp_graph *g, const ex_converge *p, double *u,
                             double *res, rp_buf *res_buf) {
  uint64_t n = p->n, bytes = n * n * 8;
  rp_buf U, V, R, S;
  rp_buffer_desc du = {"U", NULL, bytes, 8, 2, {n, n, 0}};
  rp_buffer_desc dv = {"V", NULL, bytes, 8, 2, {n, n, 0}};
  rp_buffer_desc dr = {"rowres", NULL, n * 8, 8, 1, {n, 0, 0}};
  rp_status s;
  if (p->blocks == 0 || p->blocks > n || n < 3)
    return RP_EINVAL;
  if (u)
    s = rp_buffer_register(g, "U", u, bytes, &U);
  else
    s = rp_buffer_add(g, &du, &U);
  if (s || (s = rp_buffer_add(g, &dv, &V)) || (s = rp_buffer_add(g, &dr, &R)) ||
      (s = rp_buffer_register(g, "res", res, 8, &S)) ||
      (s = steps(g, p, U, V)) || (s = steps(g, p, V, U)))
    return s;
  uint64_t rows = n / p->blocks;
  for (unsigned b = 0; b < p->blocks; b++) {
    uint64_t r0 = b * rows, nr = b + 1 == p->blocks ? n - r0 : rows;
    rp_arg a[5] = {rp_arg_buf(rp_range_bytes(U, r0 * n * 8, nr * n * 8)),
                   rp_arg_buf(rp_range_bytes(V, r0 * n * 8, nr * n * 8)),
                   rp_arg_buf(rp_range_bytes(R, r0 * 8, nr * 8)),
                   rp_arg_i64((int64_t)n), rp_arg_i64((int64_t)r0)};
    if ((s = rp_record_kernel(g, &ex_cv_rowres_k, p->device, rp_dims3(nr, 1, 1),
                              a, NULL, NULL)))
      return s;
  }
  rp_arg m[3] = {rp_arg_buf(rp_whole(R)), rp_arg_buf(rp_whole(S)),
                 rp_arg_i64((int64_t)n)};
  if ((s = rp_record_kernel(g, &ex_cv_max_k, p->device, rp_dims3(1, 1, 1), m,
                            NULL, NULL)) ||
      (s = rp_record_sync_host(g, rp_whole(S), NULL)))
    return s;
  if (u && (s = rp_record_sync_host(g, rp_whole(U), NULL)))
    return s;
  if (res_buf)
    *res_buf = S;
  return RP_OK;
}

unsigned ex_converge_check(const ex_converge *p, double tol, unsigned max,
                           double *u, double *v, double *res) {
  uint64_t n = p->n;
  unsigned k = 0;
  while (k < max) {
    for (int h = 0; h < 2; h++) {
      const double *a = h ? v : u;
      double *b = h ? u : v;
      for (uint64_t i = 0; i < n; i++)
        for (uint64_t j = 0; j < n; j++)
          b[i * n + j] = i == 0 || j == 0 || i == n - 1 || j == n - 1
                             ? 1.0
                             : 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] +
                                       a[i * n + j - 1] + a[i * n + j + 1]);
    }
    double m = 0;
    for (uint64_t i = 0; i < n * n; i++) {
      double d = u[i] - v[i];
      d = d < 0 ? -d : d;
      m = d > m ? d : m;
    }
    res[0] = m;
    k++;
    if (m < tol)
      break;
  }
  return k;
}

#ifdef EX_KERNEL_LIBRARY
/* The kernel library libconverge_kernels.so (examples/CMakeLists.txt): its
 * graphs replay with `reprise run --kernels` (reprise/library.h). */
static const rp_kernel *const ex_lib_kernels[] = {
    &ex_cv_step_k, &ex_cv_rowres_k, &ex_cv_max_k, NULL};
RP_KERNEL_LIBRARY(ex_lib_kernels, NULL)
#endif
