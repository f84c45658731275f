/* Heat 2D by rows over several devices: kernel, recording (automatic or
 * explicit halo exchange) and sequential check. Valid C and C++. */
#include <stdio.h>
#include <string.h>
#include "multidev.h"

/* One point of a step; the check loop uses the same expression. */
#define HEAT_POINT(u, i, n)                                                    \
  ((u)[i] + 0.125 * ((((u)[(i) - (n)] + (u)[(i) + (n)]) +                      \
                      ((u)[(i)-1] + (u)[(i) + 1])) -                           \
                     4.0 * (u)[i]))

RP_KERNEL(heat_step, {
  const double *u = RP_PTR(const double, 0);
  uint64_t n = (uint64_t)RP_VAL(int64_t, 2);
  uint64_t r = (uint64_t)RP_VAL(int64_t, 3) + RP_Y, c = RP_X;
  uint64_t i = r * n + c;
  if (r > 0 && r + 1 < n && c > 0 && c + 1 < n)
    RP_PTR(double, 1)[i] = HEAT_POINT(u, i, n);
  else
    RP_PTR(double, 1)[i] = u[i];
})
static const rp_param heat_params[] = {
    {"src", RP_IN}, {"dst", RP_OUT}, {"n", RP_SCALAR}, {"r0", RP_SCALAR}};
/* A 5-point stencil over rows (y): rp_kernel.halo, docs/mpi.md. */
static const rp_kernel heat_k =
    RP_KERNEL_DESC_HALO(heat_step, heat_params, 0, 1, 0);

void ex_heat2d_rows(const ex_heat2d *p, unsigned d, uint64_t *r0,
                    uint64_t *r1) {
  unsigned nd = p->devices ? p->devices : 1;
  *r0 = p->n * d / nd;
  *r1 = p->n * (d + 1) / nd;
}

void ex_heat2d_init(const ex_heat2d *p, double *u, double *v) {
  uint64_t n = p->n;
  for (uint64_t i = 0; i < n * n; i++)
    u[i] = i < n ? 1.0 : (double)((i * 7919) % 1000) / 1000.0;
  memset(v, 0, n * n * sizeof *v);
}

/* A named copy of rows [r0, r1) of buffer b. kind: 0 to device d, 1 home
 * from d, 2 peer from s to d. */
static rp_status copy_rows(rp_graph *g, rp_buf b, uint64_t n, uint64_t r0,
                           uint64_t r1, int kind, int s, int d) {
  char name[64];
  rp_op_opts o = RP_OP_OPTS_WITH(.name = name);
  rp_region r = rp_box2_elems(b, r0, r1, 0, n);
  const char *bn = b ? "V" : "U";
  if (kind == 0) {
    snprintf(name, sizeof name, "to%d %s[%llu:%llu]", d, bn,
             (unsigned long long)r0, (unsigned long long)r1);
    return rp_record_copy_to_device(g, r, d, &o, NULL);
  }
  if (kind == 1) {
    snprintf(name, sizeof name, "home%d %s[%llu:%llu]", d, bn,
             (unsigned long long)r0, (unsigned long long)r1);
    return rp_record_copy_to_host(g, r, d, &o, NULL);
  }
  snprintf(name, sizeof name, "halo %s[%llu] %d->%d", bn,
           (unsigned long long)r0, s, d);
  return rp_record_copy_peer(g, r, s, d, &o, NULL);
}

rp_status ex_heat2d_record(rp_graph *g, const ex_heat2d *p, double *u,
                           double *v) {
  uint64_t n = p->n;
  unsigned nd = p->devices ? p->devices : 1;
  rp_buf B[2];
  rp_status rc;
  if (n < 3 || nd > n || nd > RP_MAX_DEVICES || n >= (1ull << 31))
    return RP_EINVAL;
  if ((rc = rp_buffer_register_2d(g, "U", u, n, n, 8, &B[0])) ||
      (rc = rp_buffer_register_2d(g, "V", v, n, n, 8, &B[1])))
    return rc;
  for (unsigned d = 0; p->explicit_halo && d < nd; d++) {
    uint64_t r0, r1;
    ex_heat2d_rows(p, d, &r0, &r1);
    rc = copy_rows(g, B[0], n, r0 ? r0 - 1 : 0, r1 < n ? r1 + 1 : n, 0, 0,
                   (int)d);
    if (rc)
      return rc;
  }
  for (unsigned s = 0; s < p->steps; s++) {
    rp_buf src = B[s % 2], dst = B[(s + 1) % 2];
    for (unsigned d = 0; p->explicit_halo && s > 0 && d < nd; d++) {
      uint64_t r0, r1;
      ex_heat2d_rows(p, d, &r0, &r1);
      if (d > 0 &&
          (rc = copy_rows(g, src, n, r0 - 1, r0, 2, (int)d - 1, (int)d)))
        return rc;
      if (d + 1 < nd &&
          (rc = copy_rows(g, src, n, r1, r1 + 1, 2, (int)d + 1, (int)d)))
        return rc;
    }
    for (unsigned d = 0; d < nd; d++) {
      uint64_t r0, r1;
      rp_arg args[4];
      ex_heat2d_rows(p, d, &r0, &r1);
      args[0] = rp_arg_buf(
          rp_box2_elems(src, r0 ? r0 - 1 : 0, r1 < n ? r1 + 1 : n, 0, n));
      args[1] = rp_arg_buf(rp_box2_elems(dst, r0, r1, 0, n));
      args[2] = rp_arg_i64((int64_t)n);
      args[3] = rp_arg_i64((int64_t)r0);
      rc = rp_record_kernel(g, &heat_k, (int)d, rp_dims3(n, r1 - r0, 1), args,
                            NULL, NULL);
      if (rc)
        return rc;
    }
  }
  if (!p->explicit_halo) {
    if ((rc = rp_record_sync_host(g, rp_whole(B[0]), NULL)))
      return rc;
    return rp_record_sync_host(g, rp_whole(B[1]), NULL);
  }
  /* Home: each device's rows of the buffers it wrote. */
  for (unsigned k = 0; k < 2 && k < p->steps; k++)
    for (unsigned d = 0; d < nd; d++) {
      uint64_t r0, r1;
      ex_heat2d_rows(p, d, &r0, &r1);
      if ((rc = copy_rows(g, B[(p->steps - k) % 2], n, r0, r1, 1, 0, (int)d)))
        return rc;
    }
  return RP_OK;
}

void ex_heat2d_check(const ex_heat2d *p, unsigned replays, double *u,
                     double *v) {
  uint64_t n = p->n;
  for (unsigned r = 0; r < replays; r++)
    for (unsigned s = 0; s < p->steps; s++) {
      const double *a = s % 2 ? v : u;
      double *b = s % 2 ? u : v;
      for (uint64_t i = 0; i < n; i++)
        for (uint64_t j = 0; j < n; j++) {
          uint64_t x = i * n + j;
          b[x] = i > 0 && i + 1 < n && j > 0 && j + 1 < n ? HEAT_POINT(a, x, n)
                                                          : a[x];
        }
    }
}

#ifdef EX_KERNEL_LIBRARY
/* The kernel library libheat2d_kernels.so (examples/CMakeLists.txt): its
 * graphs replay with `reprise run --kernels` (reprise/library.h). */
static const rp_kernel *const ex_lib_kernels[] = {&heat_k, NULL};
RP_KERNEL_LIBRARY(ex_lib_kernels, NULL)
#endif
