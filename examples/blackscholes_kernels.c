/* Black-Scholes workload: European call and put prices, blocks of options.
 * Valid C and C++ (built by nvcc). */
#include <math.h>
#include "examples.h"

static RP_HD inline double bs_cnd(double x) {
  return 0.5 * erfc(-x * 0.70710678118654752440);
}

static RP_HD inline void bs_price(double s, double k, double t, double r,
                                  double v, double *call, double *put) {
  double sq = v * sqrt(t);
  double d1 = (log(s / k) + (r + 0.5 * v * v) * t) / sq, d2 = d1 - sq;
  double e = k * exp(-r * t);
  *call = s * bs_cnd(d1) - e * bs_cnd(d2);
  *put = e * bs_cnd(-d2) - s * bs_cnd(-d1);
}

RP_KERNEL(bs_opt, {
  uint64_t i = (uint64_t)RP_VAL(int64_t, 7) + RP_X;
  bs_price(RP_PTR(const double, 0)[i], RP_PTR(const double, 1)[i],
           RP_PTR(const double, 2)[i], RP_VAL(double, 5), RP_VAL(double, 6),
           RP_PTR(double, 3) + i, RP_PTR(double, 4) + i);
})
static const rp_param bs_opt_params[] = {
    {"s", RP_IN},    {"k", RP_IN},     {"t", RP_IN},     {"call", RP_OUT},
    {"put", RP_OUT}, {"r", RP_SCALAR}, {"v", RP_SCALAR}, {"off", RP_SCALAR}};
static const rp_kernel bs_opt_k = RP_KERNEL_DESC(bs_opt, bs_opt_params);

void ex_blackscholes_init(const ex_blackscholes *p, double *s, double *k,
                          double *t) {
  for (uint64_t i = 0; i < p->n; i++) {
    s[i] = 50.0 + (double)((i * 37) % 100);
    k[i] = 40.0 + (double)((i * 53) % 80);
    t[i] = 0.25 + (double)(i % 40) / 20.0;
  }
}

rp_status ex_blackscholes_record(rp_graph *g, const ex_blackscholes *p,
                                 double *s, double *k, double *t, double *call,
                                 double *put) {
  uint64_t n = p->n, nb = p->blocks ? p->blocks : 1, by = 8 * n;
  rp_buf S, K, T, C, P;
  rp_status rc;
  if (!n || nb > n)
    return RP_EINVAL;
  if ((rc = rp_buffer_register(g, "S", s, by, &S)) ||
      (rc = rp_buffer_register(g, "K", k, by, &K)) ||
      (rc = rp_buffer_register(g, "T", t, by, &T)) ||
      (rc = rp_buffer_register(g, "call", call, by, &C)) ||
      (rc = rp_buffer_register(g, "put", put, by, &P)))
    return rc;
  for (uint64_t i = 0; i < nb; i++) {
    uint64_t o0 = n * i / nb, o1 = n * (i + 1) / nb;
    rp_arg a[8];
    a[0] = rp_arg_buf(rp_range_bytes(S, 8 * o0, 8 * (o1 - o0)));
    a[1] = rp_arg_buf(rp_range_bytes(K, 8 * o0, 8 * (o1 - o0)));
    a[2] = rp_arg_buf(rp_range_bytes(T, 8 * o0, 8 * (o1 - o0)));
    a[3] = rp_arg_buf(rp_range_bytes(C, 8 * o0, 8 * (o1 - o0)));
    a[4] = rp_arg_buf(rp_range_bytes(P, 8 * o0, 8 * (o1 - o0)));
    a[5] = rp_arg_f64(p->r);
    a[6] = rp_arg_f64(p->v);
    a[7] = rp_arg_i64((int64_t)o0);
    if ((rc = rp_record_kernel(g, &bs_opt_k, p->device, rp_dims3(o1 - o0, 1, 1),
                               a, NULL, NULL)))
      return rc;
  }
  if ((rc = rp_record_sync_host(g, rp_whole(C), NULL)))
    return rc;
  return rp_record_sync_host(g, rp_whole(P), NULL);
}

void ex_blackscholes_check(const ex_blackscholes *p, const double *s,
                           const double *k, const double *t, double *call,
                           double *put) {
  for (uint64_t i = 0; i < p->n; i++)
    bs_price(s[i], k[i], t[i], p->r, p->v, call + i, put + i);
}

#ifdef EX_KERNEL_LIBRARY
/* The kernel library libblackscholes_kernels.so (examples/CMakeLists.txt): its
 * graphs replay with `reprise run --kernels` (reprise/library.h). */
static const rp_kernel *const ex_lib_kernels[] = {&bs_opt_k, NULL};
RP_KERNEL_LIBRARY(ex_lib_kernels, NULL)
#endif
