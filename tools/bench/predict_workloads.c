/* Workloads of the prediction suite: tiled Cholesky (kernels and host
 * tasks), tiled LU, a random DAG with random costs, a wavefront, an FFT
 * butterfly, a halo stencil, a reduction tree and a copy -> kernel -> copy
 * pipeline. Each replay starts from the same data (the factorisations
 * reset their tiles first; the others keep their values bounded), so that
 * every replay does the same work. Valid C and C++. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "predict_workloads.h"

#define PW_PARAMS(name) static const rp_param name[]

static double *dalloc(uint64_t n) {
  return (double *)calloc(n ? n : 1, sizeof(double));
}

/* A deterministic generator (64-bit LCG), the same on every machine. */
static uint32_t rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*s >> 33);
}

/* ------------------------------------------------------------------ */
/* Tile rows, shared by the kernels (a row per index point) and the host
 * tasks (every row in turn). Tiles are b x b, row-major. */

static RP_HD void row_copy(const double *s, double *t, uint64_t b, uint64_t r) {
  for (uint64_t j = 0; j < b; j++)
    t[r * b + j] = s[r * b + j];
}

/* Cholesky of a tile in place (lower). */
static RP_HD void tile_potrf(double *a, uint64_t b) {
  for (uint64_t j = 0; j < b; j++) {
    double d = a[j * b + j];
    for (uint64_t k = 0; k < j; k++)
      d -= a[j * b + k] * a[j * b + k];
    d = sqrt(d > 1e-300 ? d : 1e-300);
    a[j * b + j] = d;
    for (uint64_t i = j + 1; i < b; i++) {
      double v = a[i * b + j];
      for (uint64_t k = 0; k < j; k++)
        v -= a[i * b + k] * a[j * b + k];
      a[i * b + j] = v / d;
    }
  }
}

/* Row r of X L^T = B (B overwritten by X). */
static RP_HD void row_trsm_lt(const double *l, double *x, uint64_t b,
                              uint64_t r) {
  double *xr = x + r * b;
  for (uint64_t j = 0; j < b; j++) {
    double v = xr[j];
    for (uint64_t k = 0; k < j; k++)
      v -= xr[k] * l[j * b + k];
    xr[j] = v / l[j * b + j];
  }
}

/* Row r of C -= A A^T, lower part. */
static RP_HD void row_syrk(const double *a, double *c, uint64_t b, uint64_t r) {
  for (uint64_t cc = 0; cc <= r; cc++) {
    double v = 0;
    for (uint64_t k = 0; k < b; k++)
      v += a[r * b + k] * a[cc * b + k];
    c[r * b + cc] -= v;
  }
}

/* Row r of C -= A B^T. */
static RP_HD void row_gemm_nt(const double *a, const double *bt, double *c,
                              uint64_t b, uint64_t r) {
  for (uint64_t cc = 0; cc < b; cc++) {
    double v = 0;
    for (uint64_t k = 0; k < b; k++)
      v += a[r * b + k] * bt[cc * b + k];
    c[r * b + cc] -= v;
  }
}

/* Row r of C -= A B. */
static RP_HD void row_gemm_nn(const double *a, const double *bm, double *c,
                              uint64_t b, uint64_t r) {
  for (uint64_t cc = 0; cc < b; cc++) {
    double v = 0;
    for (uint64_t k = 0; k < b; k++)
      v += a[r * b + k] * bm[k * b + cc];
    c[r * b + cc] -= v;
  }
}

/* LU of a tile in place, no pivoting (L unit lower, U upper). */
static RP_HD void tile_getrf(double *a, uint64_t b) {
  for (uint64_t k = 0; k < b; k++)
    for (uint64_t i = k + 1; i < b; i++) {
      double l = a[i * b + k] / a[k * b + k];
      a[i * b + k] = l;
      for (uint64_t j = k + 1; j < b; j++)
        a[i * b + j] -= l * a[k * b + j];
    }
}

/* Column c of X = L^-1 X, L unit lower. */
static RP_HD void col_trsm_l(const double *l, double *x, uint64_t b,
                             uint64_t c) {
  for (uint64_t i = 0; i < b; i++) {
    double v = x[i * b + c];
    for (uint64_t k = 0; k < i; k++)
      v -= l[i * b + k] * x[k * b + c];
    x[i * b + c] = v;
  }
}

/* Row r of X = X U^-1, U upper. */
static RP_HD void row_trsm_u(const double *u, double *x, uint64_t b,
                             uint64_t r) {
  double *xr = x + r * b;
  for (uint64_t j = 0; j < b; j++) {
    double v = xr[j];
    for (uint64_t k = 0; k < j; k++)
      v -= xr[k] * u[k * b + j];
    xr[j] = v / u[j * b + j];
  }
}

RP_KERNEL(pw_reset, {
  row_copy(RP_PTR(const double, 0), RP_PTR(double, 1),
           (uint64_t)RP_VAL(int64_t, 2), RP_X);
})
RP_KERNEL(pw_potrf,
          { tile_potrf(RP_PTR(double, 0), (uint64_t)RP_VAL(int64_t, 1)); })
RP_KERNEL(pw_trsm_lt, {
  row_trsm_lt(RP_PTR(const double, 0), RP_PTR(double, 1),
              (uint64_t)RP_VAL(int64_t, 2), RP_X);
})
RP_KERNEL(pw_syrk, {
  row_syrk(RP_PTR(const double, 0), RP_PTR(double, 1),
           (uint64_t)RP_VAL(int64_t, 2), RP_X);
})
RP_KERNEL(pw_gemm_nt, {
  row_gemm_nt(RP_PTR(const double, 0), RP_PTR(const double, 1),
              RP_PTR(double, 2), (uint64_t)RP_VAL(int64_t, 3), RP_X);
})
RP_KERNEL(pw_getrf,
          { tile_getrf(RP_PTR(double, 0), (uint64_t)RP_VAL(int64_t, 1)); })
RP_KERNEL(pw_trsm_l, {
  col_trsm_l(RP_PTR(const double, 0), RP_PTR(double, 1),
             (uint64_t)RP_VAL(int64_t, 2), RP_X);
})
RP_KERNEL(pw_trsm_u, {
  row_trsm_u(RP_PTR(const double, 0), RP_PTR(double, 1),
             (uint64_t)RP_VAL(int64_t, 2), RP_X);
})
RP_KERNEL(pw_gemm_nn, {
  row_gemm_nn(RP_PTR(const double, 0), RP_PTR(const double, 1),
              RP_PTR(double, 2), (uint64_t)RP_VAL(int64_t, 3), RP_X);
})

PW_PARAMS(p_reset) = {{"src", RP_IN}, {"dst", RP_OUT}, {"b", RP_SCALAR}};
PW_PARAMS(p_tile) = {{"a", RP_INOUT}, {"b", RP_SCALAR}};
PW_PARAMS(p_solve) = {{"l", RP_IN}, {"x", RP_INOUT}, {"b", RP_SCALAR}};
PW_PARAMS(p_gemm) = {
    {"a", RP_IN}, {"b2", RP_IN}, {"c", RP_INOUT}, {"b", RP_SCALAR}};
static const rp_kernel k_reset = RP_KERNEL_DESC(pw_reset, p_reset);
static const rp_kernel k_potrf = RP_KERNEL_DESC(pw_potrf, p_tile);
static const rp_kernel k_trsm_lt = RP_KERNEL_DESC(pw_trsm_lt, p_solve);
static const rp_kernel k_syrk = RP_KERNEL_DESC(pw_syrk, p_solve);
static const rp_kernel k_gemm_nt = RP_KERNEL_DESC(pw_gemm_nt, p_gemm);
static const rp_kernel k_getrf = RP_KERNEL_DESC(pw_getrf, p_tile);
static const rp_kernel k_trsm_l = RP_KERNEL_DESC(pw_trsm_l, p_solve);
static const rp_kernel k_trsm_u = RP_KERNEL_DESC(pw_trsm_u, p_solve);
static const rp_kernel k_gemm_nn = RP_KERNEL_DESC(pw_gemm_nn, p_gemm);

/* Tiled matrices: nt x nt tiles of b x b, one buffer per tile ("A3.1"),
 * with a pristine copy ("S3.1") the replay starts from. */
typedef struct tiled {
  unsigned nt, b;
  int lower; /* Cholesky: the lower tiles only */
  double **a, **s;
  rp_buf *ba, *bs;
} tiled;

static void tiled_release(void *p) {
  tiled *t = (tiled *)p;
  if (!t)
    return;
  for (unsigned i = 0; i < t->nt * t->nt; i++) {
    free(t->a ? t->a[i] : NULL);
    free(t->s ? t->s[i] : NULL);
  }
  free(t->a);
  free(t->s);
  free(t->ba);
  free(t->bs);
  free(t);
}

static void tiled_reset(void *p) {
  tiled *t = (tiled *)p;
  uint64_t bb = (uint64_t)t->b * t->b;
  for (unsigned i = 0; i < t->nt * t->nt; i++)
    if (t->a[i])
      memcpy(t->a[i], t->s[i], bb * sizeof(double));
}

/* Diagonally dominant: symmetric positive definite for Cholesky, and
 * stable without pivoting for LU. */
static rp_status tiled_make(rp_graph *g, unsigned nt, unsigned b, int lower,
                            tiled **out) {
  tiled *t = (tiled *)calloc(1, sizeof *t);
  if (!t)
    return RP_ENOMEM;
  t->nt = nt;
  t->b = b;
  t->lower = lower;
  unsigned n2 = nt * nt;
  t->a = (double **)calloc(n2, sizeof(double *));
  t->s = (double **)calloc(n2, sizeof(double *));
  t->ba = (rp_buf *)calloc(n2, sizeof(rp_buf));
  t->bs = (rp_buf *)calloc(n2, sizeof(rp_buf));
  *out = t;
  if (!t->a || !t->s || !t->ba || !t->bs)
    return RP_ENOMEM;
  double n = (double)nt * b;
  uint64_t bb = (uint64_t)b * b;
  rp_status s = RP_OK;
  for (unsigned i = 0; i < nt && s == RP_OK; i++)
    for (unsigned j = 0; j < nt && s == RP_OK; j++) {
      if (lower && j > i)
        continue;
      unsigned k = i * nt + j;
      if (!(t->a[k] = dalloc(bb)) || !(t->s[k] = dalloc(bb)))
        return RP_ENOMEM;
      for (unsigned r = 0; r < b; r++)
        for (unsigned c = 0; c < b; c++) {
          double gi = (double)i * b + r, gj = (double)j * b + c;
          double v = 1.0 / (1.0 + fabs(gi - gj)) + (gi == gj ? n : 0.0);
          if (!lower)
            v += 0.5 / (1.0 + gi + 2 * gj);
          t->s[k][r * b + c] = v;
        }
      char name[32];
      snprintf(name, sizeof name, "A%u.%u", i, j);
      s = rp_buffer_register(g, name, t->a[k], bb * sizeof(double), &t->ba[k]);
      snprintf(name, sizeof name, "S%u.%u", i, j);
      if (s == RP_OK)
        s = rp_buffer_register(g, name, t->s[k], bb * sizeof(double),
                               &t->bs[k]);
    }
  if (s == RP_OK)
    tiled_reset(t);
  return s;
}

static rp_region tile(const tiled *t, unsigned i, unsigned j) {
  return rp_whole(t->ba[i * t->nt + j]);
}

/* The resets of every tile, then a sync of the results home. */
static rp_status tiled_resets(rp_graph *g, const tiled *t, int dev) {
  rp_status s = RP_OK;
  for (unsigned i = 0; i < t->nt && s == RP_OK; i++)
    for (unsigned j = 0; j < t->nt && s == RP_OK; j++) {
      if (!t->a[i * t->nt + j])
        continue;
      rp_arg a[3] = {rp_arg_buf(rp_whole(t->bs[i * t->nt + j])),
                     rp_arg_buf(tile(t, i, j)), rp_arg_i64(t->b)};
      s = rp_record_kernel(g, &k_reset, dev, rp_dims3(t->b, 1, 1), a, NULL,
                           NULL);
    }
  return s;
}

static rp_status tiled_sync(rp_graph *g, const tiled *t) {
  rp_status s = RP_OK;
  for (unsigned k = 0; k < t->nt * t->nt && s == RP_OK; k++)
    if (t->a[k])
      s = rp_record_sync_host(g, rp_whole(t->ba[k]), NULL);
  return s;
}

static rp_status k2(rp_graph *g, const rp_kernel *k, int dev, uint64_t pts,
                    rp_region x, rp_region y, uint64_t b) {
  rp_arg a[3] = {rp_arg_buf(x), rp_arg_buf(y), rp_arg_i64((int64_t)b)};
  return rp_record_kernel(g, k, dev, rp_dims3(pts, 1, 1), a, NULL, NULL);
}

static rp_status k3(rp_graph *g, const rp_kernel *k, int dev, rp_region x,
                    rp_region y, rp_region z, uint64_t b) {
  rp_arg a[4] = {rp_arg_buf(x), rp_arg_buf(y), rp_arg_buf(z),
                 rp_arg_i64((int64_t)b)};
  return rp_record_kernel(g, k, dev, rp_dims3(b, 1, 1), a, NULL, NULL);
}

static rp_status cholesky_rec(rp_graph *g, int dev, unsigned scale,
                              void **state) {
  tiled *t = NULL;
  rp_status s = tiled_make(g, 6 * scale, 96, 1, &t);
  *state = t;
  unsigned nt = t ? t->nt : 0, b = t ? t->b : 0;
  if (s == RP_OK)
    s = tiled_resets(g, t, dev);
  for (unsigned k = 0; k < nt && s == RP_OK; k++) {
    rp_arg a[2] = {rp_arg_buf(tile(t, k, k)), rp_arg_i64(b)};
    s = rp_record_task(g, &k_potrf, dev, a, NULL, NULL);
    for (unsigned i = k + 1; i < nt && s == RP_OK; i++)
      s = k2(g, &k_trsm_lt, dev, b, tile(t, k, k), tile(t, i, k), b);
    for (unsigned i = k + 1; i < nt && s == RP_OK; i++) {
      s = k2(g, &k_syrk, dev, b, tile(t, i, k), tile(t, i, i), b);
      for (unsigned j = k + 1; j < i && s == RP_OK; j++)
        s = k3(g, &k_gemm_nt, dev, tile(t, i, k), tile(t, j, k), tile(t, i, j),
               b);
    }
  }
  return s == RP_OK ? tiled_sync(g, t) : s;
}

/* The same factorisation as host tasks (user: the tile size). */
static void h_reset(void *u, void *const *p) {
  uint64_t b = *(const unsigned *)u;
  for (uint64_t r = 0; r < b; r++)
    row_copy((const double *)p[0], (double *)p[1], b, r);
}
static void h_potrf(void *u, void *const *p) {
  tile_potrf((double *)p[0], *(const unsigned *)u);
}
static void h_trsm(void *u, void *const *p) {
  uint64_t b = *(const unsigned *)u;
  for (uint64_t r = 0; r < b; r++)
    row_trsm_lt((const double *)p[0], (double *)p[1], b, r);
}
static void h_syrk(void *u, void *const *p) {
  uint64_t b = *(const unsigned *)u;
  for (uint64_t r = 0; r < b; r++)
    row_syrk((const double *)p[0], (double *)p[1], b, r);
}
static void h_gemm(void *u, void *const *p) {
  uint64_t b = *(const unsigned *)u;
  for (uint64_t r = 0; r < b; r++)
    row_gemm_nt((const double *)p[0], (const double *)p[1], (double *)p[2], b,
                r);
}

static rp_status host(rp_graph *g, rp_host_fn fn, tiled *t, rp_region x,
                      rp_mode mx, rp_region y, rp_mode my, rp_region z,
                      unsigned n) {
  rp_access acc[3] = {{x, mx}, {y, my}, {z, RP_INOUT}};
  return rp_record_host(g, fn, &t->b, acc, n, NULL, NULL);
}

static rp_status cholesky_host_rec(rp_graph *g, int dev, unsigned scale,
                                   void **state) {
  (void)dev;
  tiled *t = NULL;
  rp_status s = tiled_make(g, 6 * scale, 96, 1, &t);
  *state = t;
  unsigned nt = t ? t->nt : 0;
  for (unsigned k = 0; k < nt * nt && s == RP_OK; k++)
    if (t->a[k])
      s = host(g, h_reset, t, rp_whole(t->bs[k]), RP_IN, rp_whole(t->ba[k]),
               RP_OUT, rp_whole(t->ba[k]), 2);
  for (unsigned k = 0; k < nt && s == RP_OK; k++) {
    s = host(g, h_potrf, t, tile(t, k, k), RP_INOUT, tile(t, k, k), RP_INOUT,
             tile(t, k, k), 1);
    for (unsigned i = k + 1; i < nt && s == RP_OK; i++)
      s = host(g, h_trsm, t, tile(t, k, k), RP_IN, tile(t, i, k), RP_INOUT,
               tile(t, i, k), 2);
    for (unsigned i = k + 1; i < nt && s == RP_OK; i++) {
      s = host(g, h_syrk, t, tile(t, i, k), RP_IN, tile(t, i, i), RP_INOUT,
               tile(t, i, i), 2);
      for (unsigned j = k + 1; j < i && s == RP_OK; j++)
        s = host(g, h_gemm, t, tile(t, i, k), RP_IN, tile(t, j, k), RP_IN,
                 tile(t, i, j), 3);
    }
  }
  return s;
}

static rp_status lu_rec(rp_graph *g, int dev, unsigned scale, void **state) {
  tiled *t = NULL;
  rp_status s = tiled_make(g, 5 * scale, 96, 0, &t);
  *state = t;
  unsigned nt = t ? t->nt : 0, b = t ? t->b : 0;
  if (s == RP_OK)
    s = tiled_resets(g, t, dev);
  for (unsigned k = 0; k < nt && s == RP_OK; k++) {
    rp_arg a[2] = {rp_arg_buf(tile(t, k, k)), rp_arg_i64(b)};
    s = rp_record_task(g, &k_getrf, dev, a, NULL, NULL);
    for (unsigned j = k + 1; j < nt && s == RP_OK; j++)
      s = k2(g, &k_trsm_l, dev, b, tile(t, k, k), tile(t, k, j), b);
    for (unsigned i = k + 1; i < nt && s == RP_OK; i++)
      s = k2(g, &k_trsm_u, dev, b, tile(t, k, k), tile(t, i, k), b);
    for (unsigned i = k + 1; i < nt && s == RP_OK; i++)
      for (unsigned j = k + 1; j < nt && s == RP_OK; j++)
        s = k3(g, &k_gemm_nn, dev, tile(t, i, k), tile(t, k, j), tile(t, i, j),
               b);
  }
  return s == RP_OK ? tiled_sync(g, t) : s;
}

/* ------------------------------------------------------------------ */
/* Compute-bound loops: a logistic map in registers, `n` steps. */
static RP_HD double spin(double v, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    v = 3.7 * v * (1.0 - v);
  return v;
}

/* Slots of one double, a cache line apart, in one buffer. */
typedef struct slots {
  double *v, *seed;
  uint64_t n;
} slots;

static void slots_release(void *p) {
  slots *s = (slots *)p;
  if (s) {
    free(s->v);
    free(s->seed);
    free(s);
  }
}

static void slots_reset(void *p) {
  slots *s = (slots *)p;
  for (uint64_t i = 0; i < s->n * 8; i++)
    s->v[i] = 0.25 + 0.5 * (double)(i % 97) / 97.0;
  for (int i = 0; i < 8; i++)
    s->seed[i] = 0.3 + 0.05 * i;
}

static rp_status slots_make(rp_graph *g, uint64_t n, slots **out, rp_buf *bv,
                            rp_buf *bseed) {
  slots *s = (slots *)calloc(1, sizeof *s);
  *out = s;
  if (!s || !(s->v = dalloc(n * 8)) || !(s->seed = dalloc(8)))
    return RP_ENOMEM;
  s->n = n;
  slots_reset(s);
  rp_status st = rp_buffer_register(g, "v", s->v, n * 64, bv);
  if (st == RP_OK)
    st = rp_buffer_register(g, "seed", s->seed, 64, bseed);
  return st;
}

/* A random DAG: task k reads the slots of 1 to 3 of the 24 tasks before
 * it (the seed before there are any) and spends a random 2e3 to 6e4 steps
 * (about 10 to 300 us) before writing its own slot. */
RP_KERNEL(pw_dag, {
  const double *a = RP_REGION_PTR(const double, 1);
  const double *b = RP_REGION_PTR(const double, 2);
  const double *c = RP_REGION_PTR(const double, 3);
  double v = (a[0] + b[0] + c[0]) / 3.0;
  RP_REGION_PTR(double, 0)
  [0] = spin(v > 0.05 && v < 0.95 ? v : 0.5, RP_VAL(int64_t, 4));
})
PW_PARAMS(p_dag) = {{"out", RP_OUT},
                    {"a", RP_IN},
                    {"b", RP_IN},
                    {"c", RP_IN},
                    {"steps", RP_SCALAR}};
static const rp_kernel k_dag = RP_KERNEL_DESC(pw_dag, p_dag);

static rp_status randdag_rec(rp_graph *g, int dev, unsigned scale,
                             void **state) {
  const uint64_t n = 256;
  slots *sl = NULL;
  rp_buf bv, bseed;
  rp_status s = slots_make(g, n, &sl, &bv, &bseed);
  *state = sl;
  uint64_t seed = 12345;
  for (uint64_t k = 0; k < n && s == RP_OK; k++) {
    rp_arg a[5];
    a[0] = rp_arg_buf(rp_range_bytes(bv, k * 64, 8));
    unsigned np = 1 + rnd(&seed) % 3;
    for (unsigned i = 0; i < 3; i++) {
      uint64_t back = 1 + rnd(&seed) % 24;
      a[1 + i] = i < np && back <= k
                     ? rp_arg_buf(rp_range_bytes(bv, (k - back) * 64, 8))
                     : rp_arg_buf(rp_whole(bseed));
    }
    a[4] = rp_arg_i64((int64_t)(2000 + rnd(&seed) % 58000) * scale);
    s = rp_record_task(g, &k_dag, dev, a, NULL, NULL);
  }
  if (s == RP_OK)
    s = rp_record_sync_host(g, rp_whole(bv), NULL);
  return s;
}

/* ------------------------------------------------------------------ */
/* Wavefront: G x G blocks of b x b; block (i, j) after (i - 1, j) and
 * (i, j - 1): row r of it runs along from the left block's row r, each
 * cell averaged with the top block's last row, then spun. */
RP_KERNEL(pw_wave, {
  uint64_t b = (uint64_t)RP_VAL(int64_t, 3), r = RP_X;
  const double *left = RP_PTR(const double, 0);
  const double *top = RP_PTR(const double, 1);
  double *x = RP_PTR(double, 2);
  double prev = left[r * b + b - 1];
  for (uint64_t c = 0; c < b; c++) {
    double v = 0.5 * (prev + top[(b - 1) * b + c]);
    v = spin(v > 0.05 && v < 0.95 ? v : 0.5, RP_VAL(int64_t, 4));
    x[r * b + c] = v;
    prev = v;
  }
})
PW_PARAMS(p_wave) = {{"left", RP_IN},
                     {"top", RP_IN},
                     {"x", RP_OUT},
                     {"b", RP_SCALAR},
                     {"steps", RP_SCALAR}};
static const rp_kernel k_wave = RP_KERNEL_DESC(pw_wave, p_wave);

void pw_blocks_release(void *p) {
  pw_blocks *b = (pw_blocks *)p;
  if (!b)
    return;
  for (unsigned i = 0; b->x && i < b->n; i++)
    free(b->x[i]);
  free(b->x);
  free(b->bx);
  free(b);
}

void pw_blocks_reset(void *p) {
  pw_blocks *b = (pw_blocks *)p;
  for (unsigned i = 0; i < b->n; i++)
    for (uint64_t k = 0; k < b->len; k++)
      b->x[i][k] = 0.2 + 0.6 * (double)((k * 7 + i) % 101) / 101.0;
}

rp_status pw_blocks_make(rp_graph *g, unsigned n, uint64_t len,
                         pw_blocks **out) {
  pw_blocks *b = (pw_blocks *)calloc(1, sizeof *b);
  *out = b;
  if (!b)
    return RP_ENOMEM;
  b->n = n;
  b->len = len;
  b->x = (double **)calloc(n, sizeof(double *));
  b->bx = (rp_buf *)calloc(n, sizeof(rp_buf));
  if (!b->x || !b->bx)
    return RP_ENOMEM;
  rp_status s = RP_OK;
  for (unsigned i = 0; i < n && s == RP_OK; i++) {
    char name[24];
    snprintf(name, sizeof name, "X%u", i);
    if (!(b->x[i] = dalloc(len)))
      return RP_ENOMEM;
    s = rp_buffer_register(g, name, b->x[i], len * sizeof(double), &b->bx[i]);
  }
  if (s == RP_OK)
    pw_blocks_reset(b);
  return s;
}

rp_status pw_blocks_sync(rp_graph *g, const pw_blocks *b) {
  rp_status s = RP_OK;
  for (unsigned i = 0; i < b->n && s == RP_OK; i++)
    s = rp_record_sync_host(g, rp_whole(b->bx[i]), NULL);
  return s;
}

static rp_status wavefront_rec(rp_graph *g, int dev, unsigned scale,
                               void **state) {
  const unsigned G = 12, bs = 48;
  pw_blocks *b = NULL;
  /* G x G blocks and one boundary block (index G * G). */
  rp_status s = pw_blocks_make(g, G * G + 1, (uint64_t)bs * bs, &b);
  *state = b;
  for (unsigned i = 0; i < G && s == RP_OK; i++)
    for (unsigned j = 0; j < G && s == RP_OK; j++) {
      unsigned left = j ? i * G + j - 1 : G * G,
               top = i ? (i - 1) * G + j : G * G;
      rp_arg a[5] = {rp_arg_buf(rp_whole(b->bx[left])),
                     rp_arg_buf(rp_whole(b->bx[top])),
                     rp_arg_buf(rp_whole(b->bx[i * G + j])), rp_arg_i64(bs),
                     rp_arg_i64(12 * (int64_t)scale)};
      s = rp_record_kernel(g, &k_wave, dev, rp_dims3(bs, 1, 1), a, NULL, NULL);
    }
  return s == RP_OK ? pw_blocks_sync(g, b) : s;
}

/* ------------------------------------------------------------------ */
/* FFT butterfly: P blocks of m complex values (re, im pairs); each block
 * first turned by its own twiddles, then log2 P stages of butterflies
 * between blocks i and i ^ 2^s, scaled by 1/sqrt(2) (unitary: the values
 * stay bounded over replays). Each point computes a few twiddles. */
static RP_HD void twiddle(double t, double *c, double *s) {
  double cr = 1, ci = 0;
  for (int k = 1; k <= 3; k++) { /* a product of unit turns: unit */
    double a = t * k, ar = cos(a), ai = sin(a);
    double nr = cr * ar - ci * ai, ni = cr * ai + ci * ar;
    cr = nr;
    ci = ni;
  }
  *c = cr;
  *s = ci;
}

RP_KERNEL(pw_turn, {
  double *x = RP_PTR(double, 0);
  uint64_t e = RP_X, m = (uint64_t)RP_VAL(int64_t, 1);
  double c, s, re = x[2 * e], im = x[2 * e + 1];
  twiddle(6.283185307179586 * (double)e * (double)RP_VAL(int64_t, 2) /
              (double)m,
          &c, &s);
  x[2 * e] = re * c - im * s;
  x[2 * e + 1] = re * s + im * c;
})
RP_KERNEL(pw_bfly, {
  double *a = RP_PTR(double, 0), *b = RP_PTR(double, 1);
  uint64_t e = RP_X, m = (uint64_t)RP_VAL(int64_t, 2);
  double c, s;
  twiddle(-6.283185307179586 * (double)(e + m * (uint64_t)RP_VAL(int64_t, 3)) /
              (double)(m << (RP_VAL(int64_t, 4) + 1)),
          &c, &s);
  double br = b[2 * e] * c - b[2 * e + 1] * s;
  double bi = b[2 * e] * s + b[2 * e + 1] * c;
  double ar = a[2 * e], ai = a[2 * e + 1], h = 0.7071067811865476;
  a[2 * e] = (ar + br) * h;
  a[2 * e + 1] = (ai + bi) * h;
  b[2 * e] = (ar - br) * h;
  b[2 * e + 1] = (ai - bi) * h;
})
PW_PARAMS(p_turn) = {{"x", RP_INOUT}, {"m", RP_SCALAR}, {"blk", RP_SCALAR}};
PW_PARAMS(p_bfly) = {{"a", RP_INOUT},
                     {"b", RP_INOUT},
                     {"m", RP_SCALAR},
                     {"i", RP_SCALAR},
                     {"stage", RP_SCALAR}};
static const rp_kernel k_turn = RP_KERNEL_DESC(pw_turn, p_turn);
static const rp_kernel k_bfly = RP_KERNEL_DESC(pw_bfly, p_bfly);

static rp_status fft_rec(rp_graph *g, int dev, unsigned scale, void **state) {
  const unsigned P = 32;
  const uint64_t m = 2048 * (uint64_t)scale;
  pw_blocks *b = NULL;
  rp_status s = pw_blocks_make(g, P, 2 * m, &b);
  *state = b;
  for (unsigned i = 0; i < P && s == RP_OK; i++) {
    rp_arg a[3] = {rp_arg_buf(rp_whole(b->bx[i])), rp_arg_i64((int64_t)m),
                   rp_arg_i64(i)};
    s = rp_record_kernel(g, &k_turn, dev, rp_dims3(m, 1, 1), a, NULL, NULL);
  }
  for (unsigned st = 0; (1u << st) < P && s == RP_OK; st++)
    for (unsigned i = 0; i < P && s == RP_OK; i++) {
      unsigned j = i ^ (1u << st);
      if (j < i)
        continue;
      rp_arg a[5] = {rp_arg_buf(rp_whole(b->bx[i])),
                     rp_arg_buf(rp_whole(b->bx[j])), rp_arg_i64((int64_t)m),
                     rp_arg_i64(i), rp_arg_i64(st)};
      s = rp_record_kernel(g, &k_bfly, dev, rp_dims3(m, 1, 1), a, NULL, NULL);
    }
  return s == RP_OK ? pw_blocks_sync(g, b) : s;
}

/* ------------------------------------------------------------------ */
/* Halo stencil: a 1-D heat equation on n doubles in `nb` blocks, `steps`
 * steps between two arrays; each block reads its neighbours' edge cells.
 * Blocks are large (split over a team): a streaming workload. */
RP_KERNEL(pw_heat, {
  const double *u = RP_PTR(const double, 0);
  double *v = RP_PTR(double, 1);
  uint64_t n = (uint64_t)RP_VAL(int64_t, 2), i = RP_VAL(int64_t, 3) + RP_X;
  v[i] =
      i == 0 || i == n - 1 ? u[i] : (u[i - 1] + u[i] + u[i + 1]) * (1.0 / 3.0);
})
PW_PARAMS(p_heat) = {
    {"u", RP_IN}, {"v", RP_OUT}, {"n", RP_SCALAR}, {"lo", RP_SCALAR}};
static const rp_kernel k_heat = RP_KERNEL_DESC(pw_heat, p_heat);

static rp_status halo_rec(rp_graph *g, int dev, unsigned scale, void **state) {
  const uint64_t n = ((uint64_t)1 << 21) * scale, nb = 8, steps = 4;
  pw_blocks *b = NULL;
  rp_status s = pw_blocks_make(g, 2, n, &b);
  *state = b;
  for (uint64_t st = 0; st < steps && s == RP_OK; st++) {
    rp_buf u = b->bx[st & 1], v = b->bx[(st + 1) & 1];
    for (uint64_t k = 0; k < nb && s == RP_OK; k++) {
      uint64_t lo = n * k / nb, hi = n * (k + 1) / nb;
      uint64_t rlo = lo ? lo - 1 : 0, rhi = hi < n ? hi + 1 : n;
      rp_arg a[4] = {rp_arg_buf(rp_range_bytes(u, rlo * 8, (rhi - rlo) * 8)),
                     rp_arg_buf(rp_range_bytes(v, lo * 8, (hi - lo) * 8)),
                     rp_arg_i64((int64_t)n), rp_arg_i64((int64_t)lo)};
      s = rp_record_kernel(g, &k_heat, dev, rp_dims3(hi - lo, 1, 1), a, NULL,
                           NULL);
    }
  }
  return s == RP_OK ? pw_blocks_sync(g, b) : s;
}

/* ------------------------------------------------------------------ */
/* Reduction tree: 64 leaves each reduce 16 Ki doubles (a log and a
 * square root per value) into a slot; then a binary tree of tiny
 * additions. */
RP_KERNEL(pw_leaf, {
  const double *x = RP_REGION_PTR(const double, 0);
  uint64_t n = (uint64_t)RP_VAL(int64_t, 2);
  double acc = 0;
  for (uint64_t i = 0; i < n; i++)
    acc += log(1.0 + x[i] * x[i]) + sqrt(x[i] + 1.0);
  RP_REGION_PTR(double, 1)[0] = acc;
})
RP_KERNEL(pw_add, {
  RP_REGION_PTR(double, 2)
  [0] = RP_REGION_PTR(const double, 0)[0] + RP_REGION_PTR(const double, 1)[0];
})
PW_PARAMS(p_leaf) = {{"x", RP_IN}, {"out", RP_OUT}, {"n", RP_SCALAR}};
PW_PARAMS(p_add) = {{"a", RP_IN}, {"b", RP_IN}, {"out", RP_OUT}};
static const rp_kernel k_leaf = RP_KERNEL_DESC(pw_leaf, p_leaf);
static const rp_kernel k_add = RP_KERNEL_DESC(pw_add, p_add);

static rp_status reduce_rec(rp_graph *g, int dev, unsigned scale,
                            void **state) {
  const uint64_t leaves = 64, len = 16384 * (uint64_t)scale;
  pw_blocks *b = NULL;
  rp_status s = pw_blocks_make(g, 2, leaves * len, &b); /* data, slots */
  *state = b;
  rp_buf x = b ? b->bx[0] : 0, p = b ? b->bx[1] : 0;
  for (uint64_t k = 0; k < leaves && s == RP_OK; k++) {
    rp_arg a[3] = {rp_arg_buf(rp_range_bytes(x, k * len * 8, len * 8)),
                   rp_arg_buf(rp_range_bytes(p, k * 64, 8)),
                   rp_arg_i64((int64_t)len)};
    s = rp_record_task(g, &k_leaf, dev, a, NULL, NULL);
  }
  /* Level by level: slots [base, base + w) into [base + w, ...). */
  for (uint64_t w = leaves, base = 0; w > 1 && s == RP_OK; base += w, w /= 2)
    for (uint64_t k = 0; k < w / 2 && s == RP_OK; k++) {
      rp_arg a[3] = {rp_arg_buf(rp_range_bytes(p, (base + 2 * k) * 64, 8)),
                     rp_arg_buf(rp_range_bytes(p, (base + 2 * k + 1) * 64, 8)),
                     rp_arg_buf(rp_range_bytes(p, (base + w + k) * 64, 8))};
      s = rp_record_task(g, &k_add, dev, a, NULL, NULL);
    }
  if (s == RP_OK)
    s = rp_record_sync_host(g, rp_whole(p), NULL);
  return s;
}

/* ------------------------------------------------------------------ */
/* Pipeline: 16 chunks, each copied to the device, a polynomial of degree
 * 24 evaluated per value, the result copied back: copies overlap kernels
 * on a GPU; on CPU cores the copies cost nothing. */
RP_KERNEL(pw_poly, {
  uint64_t i = RP_VAL(int64_t, 2) + RP_X;
  double x = RP_PTR(const double, 0)[i], y = 0;
  for (int k = 24; k >= 0; k--)
    y = y * x + 1.0 / (1.0 + k);
  RP_PTR(double, 1)[i] = y;
})
PW_PARAMS(p_poly) = {{"x", RP_IN}, {"y", RP_OUT}, {"lo", RP_SCALAR}};
static const rp_kernel k_poly = RP_KERNEL_DESC(pw_poly, p_poly);

static rp_status pipeline_rec(rp_graph *g, int dev, unsigned scale,
                              void **state) {
  const uint64_t chunks = 16, len = 65536 * (uint64_t)scale;
  pw_blocks *b = NULL;
  rp_status s = pw_blocks_make(g, 2, chunks * len, &b);
  *state = b;
  rp_buf x = b ? b->bx[0] : 0, y = b ? b->bx[1] : 0;
  for (uint64_t c = 0; c < chunks && s == RP_OK; c++) {
    uint64_t off = c * len * 8, bytes = len * 8;
    s = rp_record_copy_to_device(g, rp_range_bytes(x, off, bytes), dev, NULL,
                                 NULL);
    rp_arg a[3] = {rp_arg_buf(rp_range_bytes(x, off, bytes)),
                   rp_arg_buf(rp_range_bytes(y, off, bytes)),
                   rp_arg_i64((int64_t)(c * len))};
    if (s == RP_OK)
      s = rp_record_kernel(g, &k_poly, dev, rp_dims3(len, 1, 1), a, NULL, NULL);
    if (s == RP_OK)
      s = rp_record_copy_to_host(g, rp_range_bytes(y, off, bytes), dev, NULL,
                                 NULL);
  }
  return s;
}

const pw_workload pw_workloads[] = {
    {"cholesky", "tiled Cholesky, 6x6 tiles of 96^2, kernels", cholesky_rec,
     tiled_reset, tiled_release},
    {"cholesky_host", "the same as host tasks", cholesky_host_rec, tiled_reset,
     tiled_release},
    {"lu", "tiled LU without pivoting, 5x5 tiles of 96^2", lu_rec, tiled_reset,
     tiled_release},
    {"randdag", "random DAG of 256 tasks of 10-300 us", randdag_rec,
     slots_reset, slots_release},
    {"wavefront", "12x12 blocks, each after its left and top", wavefront_rec,
     pw_blocks_reset, pw_blocks_release},
    {"fft", "32 blocks of 2048 complex, 5 butterfly stages", fft_rec,
     pw_blocks_reset, pw_blocks_release},
    {"halo", "1-D stencil, 2 Mi doubles in 8 blocks, 4 steps", halo_rec,
     pw_blocks_reset, pw_blocks_release},
    {"reduce", "64 leaves of 16 Ki doubles, then a binary tree", reduce_rec,
     pw_blocks_reset, pw_blocks_release},
    {"pipeline", "16 chunks: copy in, polynomial, copy out", pipeline_rec,
     pw_blocks_reset, pw_blocks_release},
};
const unsigned pw_nworkloads = sizeof pw_workloads / sizeof pw_workloads[0];
