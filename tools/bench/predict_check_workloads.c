/* Check workloads of the prediction suite (issue 33): written only to
 * check the model, never to tune it, with shapes, sizes and task
 * granularities unlike the tuned suite's (predict_workloads.c) and the
 * examples': a fan-out of 1024 tiny tasks, uneven independent chains,
 * memory-bound split kernels, host tasks and kernels mixed on one team,
 * three logical devices, and a cache-sized 2-D stencil in row blocks.
 * Every replay does the same work and keeps its values bounded. Valid C
 * and C++. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "predict_workloads.h"

#define PC_PARAMS(name) static const rp_param name[]

/* A logistic map in registers, n steps: compute-bound, stays in (0, 1). */
static RP_HD double pc_spin(double v, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    v = 3.7 * v * (1.0 - v);
  return v;
}

/* n arrays of len doubles (pw_blocks) as the workload's state. */
static rp_status arrays_make(rp_graph *g, unsigned n, uint64_t len,
                             void **state) {
  pw_blocks *b = NULL;
  rp_status s = pw_blocks_make(g, n, len, &b);
  *state = b;
  return s;
}

/* One slot (a cache line) spun in place. */
RP_KERNEL(pc_step, {
  double *v = RP_REGION_PTR(double, 0);
  v[0] = pc_spin(v[0], RP_VAL(int64_t, 1));
})
PC_PARAMS(p_step) = {{"v", RP_INOUT}, {"steps", RP_SCALAR}};
static const rp_kernel k_step = RP_KERNEL_DESC(pc_step, p_step);

static rp_status step(rp_graph *g, int dev, rp_buf b, uint64_t slot,
                      int64_t steps) {
  rp_arg a[2] = {rp_arg_buf(rp_range_bytes(b, slot * 64, 8)),
                 rp_arg_i64(steps)};
  return rp_record_task(g, &k_step, dev, a, NULL, NULL);
}

/* 1. 1024 independent tasks of about 3 us each: the engine's per-task
 * cost, not the work, decides. */
static rp_status fanout_rec(rp_graph *g, int dev, unsigned scale,
                            void **state) {
  const uint64_t n = 1024;
  rp_status s = arrays_make(g, 1, n * 8, state);
  pw_blocks *a = (pw_blocks *)*state;
  for (uint64_t k = 0; k < n && s == RP_OK; k++)
    s = step(g, dev, a->bx[0], k, 1500 * (int64_t)scale);
  return s == RP_OK ? pw_blocks_sync(g, a) : s;
}

/* 2. Six independent chains of 4, 8, ..., 24 tasks of about 40 us: the
 * longest chain bounds the replay whatever the team. */
static rp_status chains_rec(rp_graph *g, int dev, unsigned scale,
                            void **state) {
  rp_status s = arrays_make(g, 1, 6 * 8, state);
  pw_blocks *a = (pw_blocks *)*state;
  for (unsigned t = 0; t < 24 && s == RP_OK; t++)
    for (unsigned c = 0; c < 6 && s == RP_OK; c++)
      if (t < 4 + 4 * c) /* chain c has 4 + 4c tasks, interleaved */
        s = step(g, dev, a->bx[0], c, 20000 * (int64_t)scale);
  return s == RP_OK ? pw_blocks_sync(g, a) : s;
}

/* 3. Memory-bound: two independent streams of 4 split kernels, each
 * y = 0.5 y + 0.25 x over 2 Mi doubles (x, y alternate roles). */
RP_KERNEL(pc_axpy, {
  uint64_t i = RP_X;
  double *y = RP_PTR(double, 1);
  y[i] = 0.5 * y[i] + 0.25 * RP_PTR(const double, 0)[i];
})
PC_PARAMS(p_axpy) = {{"x", RP_IN}, {"y", RP_INOUT}};
static const rp_kernel k_axpy = RP_KERNEL_DESC(pc_axpy, p_axpy);

static rp_status stream_rec(rp_graph *g, int dev, unsigned scale,
                            void **state) {
  const uint64_t n = ((uint64_t)1 << 21) * scale;
  rp_status s = arrays_make(g, 4, n, state);
  pw_blocks *a = (pw_blocks *)*state;
  for (unsigned k = 0; k < 4 && s == RP_OK; k++)
    for (unsigned p = 0; p < 2 && s == RP_OK; p++) {
      rp_buf x = a->bx[2 * p + (k & 1)], y = a->bx[2 * p + 1 - (k & 1)];
      rp_arg args[2] = {rp_arg_buf(rp_whole(x)), rp_arg_buf(rp_whole(y))};
      s = rp_record_kernel(g, &k_axpy, dev, rp_dims3(n, 1, 1), args, NULL,
                           NULL);
    }
  return s == RP_OK ? pw_blocks_sync(g, a) : s;
}

/* 4. Host tasks and kernels on one team: per step a kernel, four host
 * tasks reading its slot (about 150 us each), a kernel joining them. */
static void h_spin(void *u, void *const *p) {
  const double *in = (const double *)p[0];
  double *out = (double *)p[1];
  out[0] = pc_spin(0.5 * (in[0] + out[0]), *(const int64_t *)u);
}

RP_KERNEL(pc_join, {
  double v = 0;
  for (int i = 1; i <= 4; i++)
    v += RP_PTR(const double, i)[0];
  double *o = RP_PTR(double, 0);
  o[0] = pc_spin(0.25 * v, RP_VAL(int64_t, 5));
})
PC_PARAMS(p_join) = {{"o", RP_INOUT}, {"a", RP_IN}, {"b", RP_IN},
                     {"c", RP_IN},    {"d", RP_IN}, {"steps", RP_SCALAR}};
static const rp_kernel k_join = RP_KERNEL_DESC(pc_join, p_join);

typedef struct mix {
  pw_blocks *a;
  int64_t hsteps;
} mix;

static void mix_reset(void *p) { pw_blocks_reset(((mix *)p)->a); }
static void mix_release(void *p) {
  mix *m = (mix *)p;
  if (m) {
    pw_blocks_release(m->a);
    free(m);
  }
}

static rp_status hostmix_rec(rp_graph *g, int dev, unsigned scale,
                             void **state) {
  mix *m = (mix *)calloc(1, sizeof *m);
  *state = m;
  if (!m)
    return RP_ENOMEM;
  void *st = NULL;
  rp_status s = arrays_make(g, 5, 8, &st);
  m->a = (pw_blocks *)st;
  m->hsteps = 80000 * (int64_t)scale;
  if (s != RP_OK)
    return s;
  const rp_buf *b = m->a->bx;
  for (unsigned it = 0; it < 8 && s == RP_OK; it++) {
    s = step(g, dev, b[0], 0, 10000 * (int64_t)scale);
    for (unsigned i = 1; i <= 4 && s == RP_OK; i++) {
      rp_access acc[2] = {{rp_whole(b[0]), RP_IN}, {rp_whole(b[i]), RP_INOUT}};
      s = rp_record_host(g, h_spin, &m->hsteps, acc, 2, NULL, NULL);
    }
    rp_arg args[6] = {
        rp_arg_buf(rp_whole(b[0])), rp_arg_buf(rp_whole(b[1])),
        rp_arg_buf(rp_whole(b[2])), rp_arg_buf(rp_whole(b[3])),
        rp_arg_buf(rp_whole(b[4])), rp_arg_i64(10000 * (int64_t)scale)};
    if (s == RP_OK)
      s = rp_record_task(g, &k_join, dev, args, NULL, NULL);
  }
  return s == RP_OK ? pw_blocks_sync(g, m->a) : s;
}

/* 5. Three logical devices (the workload's device and the next two),
 * each a block copied in, 6 split compute kernels, copied out. */
RP_KERNEL(pc_map, {
  uint64_t i = RP_X;
  double *x = RP_PTR(double, 0);
  x[i] = pc_spin(x[i], RP_VAL(int64_t, 1));
})
PC_PARAMS(p_map) = {{"x", RP_INOUT}, {"steps", RP_SCALAR}};
static const rp_kernel k_map = RP_KERNEL_DESC(pc_map, p_map);

static rp_status devices_rec(rp_graph *g, int dev, unsigned scale,
                             void **state) {
  const uint64_t n = 16384;
  rp_status s = arrays_make(g, 3, n, state);
  pw_blocks *a = (pw_blocks *)*state;
  for (int d = 0; d < 3 && s == RP_OK; d++)
    s = rp_record_copy_to_device(g, rp_whole(a->bx[d]), dev + d, NULL, NULL);
  for (unsigned k = 0; k < 6 && s == RP_OK; k++)
    for (int d = 0; d < 3 && s == RP_OK; d++) {
      rp_arg args[2] = {rp_arg_buf(rp_whole(a->bx[d])),
                        rp_arg_i64(40 * (int64_t)scale)};
      s = rp_record_kernel(g, &k_map, dev + d, rp_dims3(n, 1, 1), args, NULL,
                           NULL);
    }
  for (int d = 0; d < 3 && s == RP_OK; d++)
    s = rp_record_copy_to_host(g, rp_whole(a->bx[d]), dev + d, NULL, NULL);
  return s;
}

/* 6. A cache-sized 2-D Jacobi: 640 x 640 doubles (two grids, 6.5 MB),
 * 10 row blocks of 64 rows (a point per row, not split), 8 steps: each
 * block waits on its neighbours of the step before. */
RP_KERNEL(pc_rows, {
  uint64_t n = (uint64_t)RP_VAL(int64_t, 2);
  uint64_t r = (uint64_t)RP_VAL(int64_t, 3) + RP_X;
  const double *u = RP_PTR(const double, 0);
  double *v = RP_PTR(double, 1);
  if (r == 0 || r + 1 >= n)
    return;
  for (uint64_t c = 1; c + 1 < n; c++)
    v[r * n + c] = 0.25 * (u[(r - 1) * n + c] + u[(r + 1) * n + c] +
                           u[r * n + c - 1] + u[r * n + c + 1]);
})
PC_PARAMS(p_rows) = {
    {"u", RP_IN}, {"v", RP_INOUT}, {"n", RP_SCALAR}, {"r0", RP_SCALAR}};
static const rp_kernel k_rows = RP_KERNEL_DESC(pc_rows, p_rows);

static rp_status grid_rec(rp_graph *g, int dev, unsigned scale, void **state) {
  const uint64_t n = 640, rows = 64, steps = 8 * (uint64_t)scale;
  rp_status s = arrays_make(g, 2, n * n, state);
  pw_blocks *a = (pw_blocks *)*state;
  for (uint64_t st = 0; st < steps && s == RP_OK; st++) {
    rp_buf u = a->bx[st & 1], v = a->bx[(st + 1) & 1];
    for (uint64_t r0 = 0; r0 < n && s == RP_OK; r0 += rows) {
      uint64_t lo = r0 ? r0 - 1 : 0, hi = r0 + rows < n ? r0 + rows + 1 : n;
      rp_arg args[4] = {
          rp_arg_buf(rp_range_bytes(u, lo * n * 8, (hi - lo) * n * 8)),
          rp_arg_buf(rp_range_bytes(v, r0 * n * 8, rows * n * 8)),
          rp_arg_i64((int64_t)n), rp_arg_i64((int64_t)r0)};
      s = rp_record_kernel(g, &k_rows, dev, rp_dims3(rows, 1, 1), args, NULL,
                           NULL);
    }
  }
  return s == RP_OK ? pw_blocks_sync(g, a) : s;
}

const pw_workload pc_workloads[] = {
    {"c_fanout", "1024 independent tasks of ~3 us", fanout_rec, pw_blocks_reset,
     pw_blocks_release},
    {"c_chains", "6 independent chains of 4..24 tasks of ~40 us", chains_rec,
     pw_blocks_reset, pw_blocks_release},
    {"c_stream", "2 streams of 4 split axpy over 2 Mi doubles", stream_rec,
     pw_blocks_reset, pw_blocks_release},
    {"c_hostmix", "8 steps: kernel, 4 host tasks of ~150 us, join", hostmix_rec,
     mix_reset, mix_release},
    {"c_devices", "3 logical devices, 6 split kernels each", devices_rec,
     pw_blocks_reset, pw_blocks_release},
    {"c_grid", "640^2 Jacobi, 10 row blocks, 8 steps", grid_rec,
     pw_blocks_reset, pw_blocks_release},
};
const unsigned pc_nworkloads = sizeof pc_workloads / sizeof pc_workloads[0];
