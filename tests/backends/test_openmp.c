/* Tests of the OpenMP backend against the sequential reference replay. */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "reprise/kernel.h"
#include "util.h"
#ifdef RP_HAVE_EXAMPLES
#include "examples.h"
#endif

static const rp_backend *omp_be(void) {
  const rp_backend *be = NULL;
  cr_assert_eq(rp_backend_find("openmp", &be), RP_OK);
  return be;
}

static rp_exec *mk(const rp_graph *g, int nth, const char *mode,
                   const int *cores, unsigned ncores) {
  rp_exec_opts o;
  rp_exec *x = NULL;
  rp_exec_opts_init(&o);
  o.nthreads = nth;
  o.mode = mode;
  o.cores = cores;
  o.ncores = ncores;
  rp_status s = rp_exec_create(&x, g, omp_be(), &o);
  cr_assert_eq(s, RP_OK, "exec_create: %s: %s", rp_status_name(s),
               x ? rp_exec_error(x) : "");
  return x;
}

typedef void (*reset_fn)(void *ctx);

/* iters replays by the reference and by openmp (nth threads, mode) from the
 * same initial data must leave identical host images. */
static void same_as_reference(const rp_graph *g, reset_fn reset, void *ctx,
                              unsigned iters, int nth, const char *mode,
                              const int *cores, unsigned ncores) {
  size_t n1, n2;
  reset(ctx);
  cr_assert_eq(rp_replay_reference(g, iters), RP_OK);
  unsigned char *ref = tu_snapshot(g, &n1);
  reset(ctx);
  rp_exec *x = mk(g, nth, mode, cores, ncores);
  cr_assert_eq(rp_exec_run(x, iters), RP_OK, "%s", rp_exec_error(x));
  unsigned char *got = tu_snapshot(g, &n2);
  cr_assert_eq(n1, n2);
  cr_assert(memcmp(ref, got, n1) == 0,
            "openmp (%d threads, %s) differs from the reference", nth,
            mode ? mode : "parallel");
  rp_exec_destroy(x);
  free(ref);
  free(got);
}

/* ---- random graphs: x = a x + b over boxes, mixes, host tasks ---- */

RP_KERNEL(t_affine, {
  uint64_t cols = RP_VAL(uint64_t, 3);
  uint64_t i = (RP_VAL(uint64_t, 4) + RP_Y) * cols + RP_VAL(uint64_t, 5) + RP_X;
  uint64_t *p = RP_PTR(uint64_t, 0);
  p[i] = p[i] * RP_VAL(uint64_t, 1) + RP_VAL(uint64_t, 2);
})
static const rp_param t_affine_p[] = {{"x", RP_INOUT},   {"a", RP_SCALAR},
                                      {"b", RP_SCALAR},  {"cols", RP_SCALAR},
                                      {"r0", RP_SCALAR}, {"c0", RP_SCALAR}};
static const rp_kernel t_affine_k = RP_KERNEL_DESC(t_affine, t_affine_p);

RP_KERNEL(t_mix, {
  uint64_t cols = RP_VAL(uint64_t, 2);
  uint64_t s = (RP_VAL(uint64_t, 3) + RP_Y) * cols + RP_VAL(uint64_t, 4) + RP_X;
  uint64_t d = (RP_VAL(uint64_t, 5) + RP_Y) * cols + RP_VAL(uint64_t, 6) + RP_X;
  uint64_t *dst = RP_PTR(uint64_t, 1);
  dst[d] = dst[d] * 3 + RP_PTR(const uint64_t, 0)[s];
})
static const rp_param t_mix_p[] = {{"src", RP_IN},      {"dst", RP_INOUT},
                                   {"cols", RP_SCALAR}, {"sr", RP_SCALAR},
                                   {"sc", RP_SCALAR},   {"dr", RP_SCALAR},
                                   {"dc", RP_SCALAR}};
static const rp_kernel t_mix_k = RP_KERNEL_DESC(t_mix, t_mix_p);

typedef struct hbox {
  uint64_t r0, r1, c0, c1, cols, a, b;
} hbox;

static void h_affine(void *user, void *const *ptrs) {
  const hbox *h = user;
  uint64_t *p = ptrs[0];
  for (uint64_t r = h->r0; r < h->r1; r++)
    for (uint64_t c = h->c0; c < h->c1; c++)
      p[r * h->cols + c] = p[r * h->cols + c] * h->a + h->b;
}

#define RG_MAXB 4
typedef struct rgraph {
  rp_graph *g;
  unsigned nbuf;
  uint64_t rows, cols, seed;
  uint64_t *buf[RG_MAXB];
  hbox *hb;
} rgraph;

static void rg_reset(void *v) {
  rgraph *r = v;
  uint64_t s = r->seed;
  for (unsigned b = 0; b < r->nbuf; b++)
    for (uint64_t i = 0; i < r->rows * r->cols; i++)
      r->buf[b][i] = tu_rand(&s);
}

static void rbox(uint64_t *s, uint64_t n, uint64_t *lo, uint64_t *hi) {
  uint64_t len = 1 + tu_rand(s) % n;
  if (tu_rand(s) % 4 == 0)
    len = n;
  *lo = tu_rand(s) % (n - len + 1);
  *hi = *lo + len;
}

static void rg_build(rgraph *r, uint64_t seed, unsigned nops, unsigned ndev,
                     uint64_t rows, uint64_t cols) {
  memset(r, 0, sizeof *r);
  r->nbuf = 3;
  r->rows = rows;
  r->cols = cols;
  r->seed = seed;
  r->hb = calloc(nops, sizeof *r->hb);
  TU_OK(NULL, rp_graph_create(&r->g, 0));
  for (unsigned b = 0; b < r->nbuf; b++) {
    char nm[8] = {'R', (char)('0' + b), 0};
    r->buf[b] = malloc(rows * cols * 8);
    TU_OK(r->g,
          rp_buffer_register_2d(r->g, nm, r->buf[b], rows, cols, 8, NULL));
  }
  uint64_t s = seed * 2654435761u + 1;
  for (unsigned i = 0; i < nops; i++) {
    unsigned kind = (unsigned)(tu_rand(&s) % 8);
    int dev = (int)(tu_rand(&s) % ndev);
    rp_buf b = (rp_buf)(tu_rand(&s) % r->nbuf);
    uint64_t r0, r1, c0, c1;
    rbox(&s, rows, &r0, &r1);
    rbox(&s, cols, &c0, &c1);
    uint64_t a = tu_rand(&s) | 1, bb = tu_rand(&s);
    if (kind < 4) {
      rp_arg g[6] = {rp_arg_buf(rp_box2(b, r0, r1, c0, c1)),
                     rp_arg_i64(0),
                     rp_arg_i64(0),
                     rp_arg_i64(0),
                     rp_arg_i64(0),
                     rp_arg_i64(0)};
      g[1].value.u64 = a;
      g[2].value.u64 = bb;
      g[3].value.u64 = cols;
      g[4].value.u64 = r0;
      g[5].value.u64 = c0;
      TU_OK(r->g,
            rp_record_kernel(r->g, &t_affine_k, dev,
                             rp_dims3(c1 - c0, r1 - r0, 1), g, NULL, NULL));
    } else if (kind < 7) {
      rp_buf d = (rp_buf)((b + 1 + tu_rand(&s) % (r->nbuf - 1)) % r->nbuf);
      uint64_t dr = tu_rand(&s) % (rows - (r1 - r0) + 1);
      uint64_t dc = tu_rand(&s) % (cols - (c1 - c0) + 1);
      rp_arg g[7] = {rp_arg_buf(rp_box2(b, r0, r1, c0, c1)),
                     rp_arg_buf(rp_box2(d, dr, dr + r1 - r0, dc, dc + c1 - c0)),
                     rp_arg_i64((int64_t)cols),
                     rp_arg_i64((int64_t)r0),
                     rp_arg_i64((int64_t)c0),
                     rp_arg_i64((int64_t)dr),
                     rp_arg_i64((int64_t)dc)};
      TU_OK(r->g,
            rp_record_kernel(r->g, &t_mix_k, dev, rp_dims3(c1 - c0, r1 - r0, 1),
                             g, NULL, NULL));
    } else {
      hbox *h = &r->hb[i];
      h->r0 = r0, h->r1 = r1, h->c0 = c0, h->c1 = c1, h->cols = cols;
      h->a = a, h->b = bb;
      rp_access acc = {rp_box2(b, r0, r1, c0, c1), RP_INOUT};
      TU_OK(r->g, rp_record_host(r->g, h_affine, h, &acc, 1, NULL, NULL));
    }
  }
  for (unsigned b = 0; b < r->nbuf; b++)
    TU_OK(r->g, rp_record_sync_host(r->g, rp_whole(b), NULL));
  TU_OK(r->g, rp_graph_end(r->g));
}

static void rg_free(rgraph *r) {
  rp_graph_destroy(r->g);
  for (unsigned b = 0; b < r->nbuf; b++)
    free(r->buf[b]);
  free(r->hb);
}

Test(openmp, random_graphs_1_and_2_threads, .timeout = 120) {
  for (uint64_t seed = 1; seed <= 40; seed++) {
    rgraph r;
    unsigned ndev = 1 + (unsigned)(seed % 3);
    /* every fourth graph is large enough for kernels to be split */
    uint64_t n = seed % 4 == 0 ? 128 : 12;
    rg_build(&r, seed, 20 + (unsigned)(seed % 5) * 20, ndev, n, n);
    same_as_reference(r.g, rg_reset, &r, 3, 1, NULL, NULL, 0);
    same_as_reference(r.g, rg_reset, &r, 3, 2, NULL, NULL, 0);
    same_as_reference(r.g, rg_reset, &r, 2, 3, NULL, NULL, 0);
    rg_free(&r);
  }
}

static void tr_reset(void *v) {
  tu_random *r = v;
  tu_random_reset(r, 99);
}

/* The shared helper's graphs, with explicit (possibly stale) copies too:
 * buffers whose copies move stale data keep one image per space. */
Test(openmp, random_graphs_with_explicit_copies, .timeout = 120) {
  for (uint64_t seed = 1; seed <= 30; seed++) {
    tu_random r;
    cr_assert_eq(
        tu_random_graph(&r, 99, 3, 256, 60, 1 + seed % 3, 0, (int)(seed % 2)),
        0);
    TU_OK(r.g, rp_graph_end(r.g));
    same_as_reference(r.g, tr_reset, &r, 2, 2, NULL, NULL, 0);
    same_as_reference(r.g, tr_reset, &r, 2, 1, NULL, NULL, 0);
    tu_random_free(&r);
  }
}

Test(openmp, serial_mode_and_core_subsets, .timeout = 60) {
  rgraph r;
  rg_build(&r, 7, 60, 2, 100, 100);
  int c0[1] = {0}, c01[2] = {0, 1};
  int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  same_as_reference(r.g, rg_reset, &r, 2, 0, "serial", NULL, 0);
  same_as_reference(r.g, rg_reset, &r, 2, 2, NULL, c0, 1);
  if (ncpu >= 2) {
    same_as_reference(r.g, rg_reset, &r, 2, 0, NULL, c01, 2);
    int c1[1] = {1};
    same_as_reference(r.g, rg_reset, &r, 2, 1, NULL, c1, 1);
  }
  rg_free(&r);
}

Test(openmp, empty_graphs, .timeout = 20) {
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = mk(g, 2, NULL, NULL, 0);
  cr_assert_eq(rp_exec_run(x, 5), RP_OK);
  cr_assert_eq(rp_exec_run(x, 0), RP_OK);
  double us[1];
  cr_assert_eq(rp_exec_profile(x, us), RP_OK);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  /* buffers but no operation */
  uint64_t mem[4] = {1, 2, 3, 4};
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "m", mem, sizeof mem, NULL));
  TU_OK(g, rp_graph_end(g));
  x = mk(g, 1, NULL, NULL, 0);
  cr_assert_eq(rp_exec_run(x, 3), RP_OK);
  cr_assert_eq(mem[3], 4);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(openmp, bad_options_and_missing_bodies, .timeout = 20) {
  rp_graph *g;
  uint64_t mem[8] = {0};
  TU_OK(NULL, rp_graph_create(&g, 0));
  rp_buf b;
  TU_OK(g, rp_buffer_register(g, "m", mem, sizeof mem, &b));
  static const rp_param p[] = {{"x", RP_INOUT}};
  static const rp_kernel nocpu =
      RP_KERNEL_WITH(.name = "nocpu", .nparams = 1, .params = p);
  rp_arg a = rp_arg_buf(rp_whole(b));
  TU_OK(g, rp_record_kernel(g, &nocpu, 0, rp_dims3(8, 1, 1), &a, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = NULL;
  cr_assert_eq(rp_exec_create(&x, g, omp_be(), NULL), RP_ENOKERNEL);
  cr_assert_null(x);
  rp_graph_destroy(g);

  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_graph_end(g));
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.mode = "sideways";
  cr_assert_eq(rp_exec_create(&x, g, omp_be(), &o), RP_EINVAL);
  int bad = -3;
  o.mode = NULL;
  o.cores = &bad;
  o.ncores = 1;
  cr_assert_eq(rp_exec_create(&x, g, omp_be(), &o), RP_EINVAL);
  rp_graph_destroy(g);
}

/* Logical devices 0 and 1 run on disjoint cores: each kernel writes the
 * core it ran on. The placement is a hint (a group that stalls for 100 µs,
 * descheduled on a loaded machine, has its work taken by the other): the
 * results are always right, and a replay in which nothing stalled keeps
 * every kernel on its device's core. */
RP_KERNEL(t_where, {
  RP_PTR(int64_t, 0)[RP_VAL(int64_t, 1) + RP_X] = sched_getcpu();
})
static const rp_param t_where_p[] = {{"out", RP_OUT}, {"off", RP_SCALAR}};
static const rp_kernel t_where_k = RP_KERNEL_DESC(t_where, t_where_p);

Test(openmp, logical_devices_on_disjoint_cores, .timeout = 30) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
    cr_skip_test("needs two cores");
  int64_t out[64];
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "out", out, sizeof out, &b));
  for (int k = 0; k < 64; k++) {
    rp_arg a[2] = {rp_arg_buf(rp_bytes(b, 8 * (uint64_t)k, 8)), rp_arg_i64(k)};
    TU_OK(g, rp_record_kernel(g, &t_where_k, k % 2, rp_dims3(1, 1, 1), a, NULL,
                              NULL));
  }
  TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
  TU_OK(g, rp_graph_end(g));
  int cores[2] = {1, 0};
  rp_exec *x = mk(g, 2, NULL, cores, 2);
  int clean = 0, off = 0;
  for (int rep = 0; rep < 50; rep++) {
    memset(out, 0xff, sizeof out);
    cr_assert_eq(rp_exec_run(x, 1), RP_OK);
    int moved = 0;
    for (int k = 0; k < 64; k++) {
      cr_assert(out[k] == 0 || out[k] == 1, "kernel %d on core %lld", k,
                (long long)out[k]);
      moved += out[k] != (k % 2 ? 0 : 1);
    }
    clean += !moved;
    off += moved;
  }
  cr_assert(clean > 0,
            "no replay kept every kernel on its device's core "
            "(%d of 3200 moved)",
            off);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(openmp, profile_times_every_op, .timeout = 30) {
  rgraph r;
  rg_build(&r, 11, 40, 1, 64, 64);
  rp_exec *x = mk(r.g, 2, NULL, NULL, 0);
  uint32_t n = rp_graph_num_nodes(r.g);
  double *us = malloc(n * sizeof *us);
  for (uint32_t i = 0; i < n; i++)
    us[i] = -1;
  cr_assert_eq(rp_exec_profile(x, us), RP_OK);
  for (uint32_t i = 0; i < n; i++)
    cr_assert_geq(us[i], 0.0, "op %u", i);
  free(us);
  rp_exec_destroy(x);
  rg_free(&r);
}

#ifdef RP_HAVE_EXAMPLES
typedef struct jctx {
  ex_jacobi2d p;
  double *a, *b, *s;
} jctx;

static void j_reset(void *v) {
  jctx *c = v;
  ex_jacobi2d_init(&c->p, c->a, c->b, c->s);
}

static void j_setup(jctx *c, uint64_t n, unsigned steps, unsigned every,
                    unsigned blocks, rp_graph **g) {
  memset(c, 0, sizeof *c);
  c->p.n = n;
  c->p.steps = steps;
  c->p.every = every;
  c->p.blocks = blocks;
  c->a = malloc(n * n * 8);
  c->b = malloc(n * n * 8);
  c->s = malloc(ex_jacobi2d_nsums(&c->p) * 8);
  TU_OK(NULL, rp_graph_create(g, 0));
  TU_OK(*g, ex_jacobi2d_record(*g, &c->p, c->a, c->b, c->s));
  TU_OK(*g, rp_graph_end(*g));
}

static void j_free(jctx *c, rp_graph *g) {
  rp_graph_destroy(g);
  free(c->a);
  free(c->b);
  free(c->s);
}

/* Plain check from the initial state into fresh arrays; compares. */
static void j_expect(const jctx *c, unsigned replays, const double *a,
                     const double *b, const double *s) {
  uint64_t nn = c->p.n * c->p.n, ns = ex_jacobi2d_nsums(&c->p);
  double *ea = malloc(nn * 8), *eb = malloc(nn * 8), *es = malloc(ns * 8);
  ex_jacobi2d_init(&c->p, ea, eb, es);
  ex_jacobi2d_check(&c->p, replays, ea, eb, es);
  cr_assert(memcmp(ea, a, nn * 8) == 0, "A differs from the plain check");
  cr_assert(memcmp(eb, b, nn * 8) == 0, "B differs from the plain check");
  cr_assert(memcmp(es, s, ns * 8) == 0, "sums differ from the plain check");
  free(ea);
  free(eb);
  free(es);
}

Test(openmp, jacobi_like_reference_and_plain_check, .timeout = 60) {
  jctx c;
  rp_graph *g;
  j_setup(&c, 130, 6, 2, 5, &g);
  for (int nth = 1; nth <= 2; nth++) {
    same_as_reference(g, j_reset, &c, 4, nth, NULL, NULL, 0);
    j_expect(&c, 4, c.a, c.b, c.s);
  }
  same_as_reference(g, j_reset, &c, 3, 0, "serial", NULL, 0);
  j_free(&c, g);
}

Test(openmp, jacobi_rebind_swaps_buffers, .timeout = 60) {
  jctx c;
  rp_graph *g;
  j_setup(&c, 40, 3, 3, 4, &g);
  uint64_t nn = 40 * 40;
  double *a2 = malloc(nn * 8), *b2 = malloc(nn * 8), *s2 = malloc(8);
  rp_buf A, B, S;
  TU_OK(g, rp_graph_find_buffer(g, "A", &A));
  TU_OK(g, rp_graph_find_buffer(g, "B", &B));
  TU_OK(g, rp_graph_find_buffer(g, "sums", &S));
  rp_exec *x = mk(g, 2, NULL, NULL, 0);
  /* other memory: the graph's arrays stay untouched */
  ex_jacobi2d_init(&c.p, c.a, c.b, c.s);
  ex_jacobi2d_init(&c.p, a2, b2, s2);
  cr_assert_eq(rp_exec_rebind(x, A, a2, nn * 8), RP_OK);
  cr_assert_eq(rp_exec_rebind(x, B, b2, nn * 8), RP_OK);
  cr_assert_eq(rp_exec_rebind(x, S, s2, 8), RP_OK);
  cr_assert_eq(rp_exec_run(x, 2), RP_OK);
  j_expect(&c, 2, a2, b2, s2);
  double *ia = malloc(nn * 8), *ib = malloc(nn * 8), is[1];
  ex_jacobi2d_init(&c.p, ia, ib, is);
  cr_assert(memcmp(ia, c.a, nn * 8) == 0, "graph's A was written");
  /* swap: A is now the memory that was B's, and back */
  ex_jacobi2d_init(&c.p, b2, a2, s2);
  cr_assert_eq(rp_exec_rebind(x, A, b2, nn * 8), RP_OK);
  cr_assert_eq(rp_exec_rebind(x, B, a2, nn * 8), RP_OK);
  cr_assert_eq(rp_exec_run(x, 3), RP_OK);
  j_expect(&c, 3, b2, a2, s2);
  free(a2);
  free(b2);
  free(s2);
  free(ia);
  free(ib);
  rp_exec_destroy(x);
  j_free(&c, g);
}

Test(openmp, thousand_replays_of_one_instance, .timeout = 60) {
  jctx c;
  rp_graph *g;
  j_setup(&c, 16, 2, 1, 3, &g);
  rp_exec *x = mk(g, 2, NULL, NULL, 0);
  j_reset(&c);
  for (int i = 0; i < 1000; i++)
    cr_assert_eq(rp_exec_run(x, 1), RP_OK);
  j_expect(&c, 1000, c.a, c.b, c.s);
  j_reset(&c);
  cr_assert_eq(rp_exec_launch(x, 1000), RP_OK);
  cr_assert_eq(rp_exec_wait(x), RP_OK);
  j_expect(&c, 1000, c.a, c.b, c.s);
  rp_exec_destroy(x);
  j_free(&c, g);
}

typedef struct rctx {
  ex_recurrence p;
  double *u;
} rctx;

static void r_reset(void *v) {
  rctx *c = v;
  ex_recurrence_init(&c->p, c->u);
}

Test(openmp, recurrence_and_set_scalar, .timeout = 60) {
  rctx c;
  memset(&c, 0, sizeof c);
  c.p.rows = 96;
  c.p.cols = 100;
  c.p.inner = 3;
  c.p.rounds = 3;
  c.p.blocks = 6;
  c.p.r = 3.6;
  c.p.c = 0.002;
  size_t bytes = 96 * 100 * 8;
  c.u = malloc(bytes);
  double *e = malloc(bytes);
  rp_graph *g;
  rp_node first = RP_NONE;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_recurrence_record(g, &c.p, c.u, &first));
  TU_OK(g, rp_graph_end(g));
  cr_assert_neq(first, RP_NONE);
  same_as_reference(g, r_reset, &c, 2, 2, NULL, NULL, 0);
  rp_exec *x = mk(g, 2, NULL, NULL, 0);
  rp_slot v;
  v.f64 = 3.9;
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    if (ni.type == RP_OP_KERNEL)
      cr_assert_eq(rp_exec_set_scalar(x, n, 2, v), RP_OK);
  }
  r_reset(&c);
  cr_assert_eq(rp_exec_run(x, 2), RP_OK);
  c.p.r = 3.9;
  ex_recurrence_init(&c.p, e);
  ex_recurrence_check(&c.p, 2, e);
  cr_assert(memcmp(e, c.u, bytes) == 0, "set_scalar not applied");
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(c.u);
  free(e);
}

typedef struct mctx {
  ex_matpow p;
  double *m, *x, *y;
} mctx;

static void m_reset(void *v) {
  mctx *c = v;
  ex_matpow_init(&c->p, c->m, c->x, c->y);
}

typedef struct bctx {
  ex_blackscholes p;
  double *s, *k, *t, *c, *q;
} bctx;

static void b_reset(void *v) {
  bctx *c = v;
  ex_blackscholes_init(&c->p, c->s, c->k, c->t);
  memset(c->c, 0, c->p.n * 8);
  memset(c->q, 0, c->p.n * 8);
}

Test(openmp, matpow_and_blackscholes, .timeout = 60) {
  mctx m;
  memset(&m, 0, sizeof m);
  m.p.n = 40;
  m.p.steps = 4;
  m.p.blocks = 5;
  m.m = malloc(40 * 40 * 8);
  m.x = malloc(40 * 40 * 8);
  m.y = malloc(40 * 40 * 8);
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_matpow_record(g, &m.p, m.m, m.x, m.y));
  TU_OK(g, rp_graph_end(g));
  same_as_reference(g, m_reset, &m, 2, 2, NULL, NULL, 0);
  double *ex = malloc(40 * 40 * 8), *ey = malloc(40 * 40 * 8);
  double *em = malloc(40 * 40 * 8);
  ex_matpow_init(&m.p, em, ex, ey);
  ex_matpow_check(&m.p, 2, em, ex, ey);
  cr_assert(memcmp(ex, m.x, 40 * 40 * 8) == 0);
  rp_graph_destroy(g);
  free(m.m), free(m.x), free(m.y), free(ex), free(ey), free(em);

  bctx b;
  memset(&b, 0, sizeof b);
  b.p.n = 3000;
  b.p.blocks = 7;
  b.p.r = 0.03;
  b.p.v = 0.25;
  double **arr[5] = {&b.s, &b.k, &b.t, &b.c, &b.q};
  for (int i = 0; i < 5; i++)
    *arr[i] = malloc(3000 * 8);
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_blackscholes_record(g, &b.p, b.s, b.k, b.t, b.c, b.q));
  TU_OK(g, rp_graph_end(g));
  same_as_reference(g, b_reset, &b, 2, 2, NULL, NULL, 0);
  double *ec = malloc(3000 * 8), *eq = malloc(3000 * 8);
  ex_blackscholes_check(&b.p, b.s, b.k, b.t, ec, eq);
  cr_assert(memcmp(ec, b.c, 3000 * 8) == 0);
  cr_assert(memcmp(eq, b.q, 3000 * 8) == 0);
  cr_assert(b.c[0] > 0.0);
  rp_graph_destroy(g);
  for (int i = 0; i < 5; i++)
    free(*arr[i]);
  free(ec);
  free(eq);
}
#endif

/* Kernels large enough to be split over idle threads, many of them
 * concurrently ready, none idempotent: a chunk run twice or skipped shows. */
Test(openmp, split_kernels_run_every_chunk_once, .timeout = 60) {
  enum { R = 256, C = 256, BANDS = 8, ROUNDS = 4, REPS = 200 };
  uint64_t *x = malloc(R * C * 8), *e = malloc(R * C * 8);
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register_2d(g, "x", x, R, C, 8, &b));
  for (int r = 0; r < ROUNDS; r++)
    for (int k = 0; k < BANDS; k++) {
      uint64_t r0 = (uint64_t)k * (R / BANDS);
      rp_arg a[6] = {rp_arg_buf(rp_box2(b, r0, r0 + R / BANDS, 0, C)),
                     rp_arg_i64(3 + 2 * (r * BANDS + k)),
                     rp_arg_i64(k + 1),
                     rp_arg_i64(C),
                     rp_arg_i64((int64_t)r0),
                     rp_arg_i64(0)};
      TU_OK(g, rp_record_kernel(g, &t_affine_k, 0, rp_dims3(C, R / BANDS, 1), a,
                                NULL, NULL));
    }
  TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
  TU_OK(g, rp_graph_end(g));
  for (uint64_t i = 0; i < R * C; i++)
    x[i] = e[i] = i;
  for (int rep = 0; rep < REPS; rep++)
    for (int r = 0; r < ROUNDS; r++)
      for (uint64_t i = 0; i < R * C; i++) {
        int k = (int)(i / C / (R / BANDS));
        e[i] = e[i] * (uint64_t)(3 + 2 * (r * BANDS + k)) + (uint64_t)k + 1;
      }
  for (int nth = 2; nth <= 4; nth += 2) {
    rp_exec *xe = mk(g, nth, NULL, NULL, 0);
    for (uint64_t i = 0; i < R * C; i++)
      x[i] = i;
    cr_assert_eq(rp_exec_run(xe, REPS), RP_OK);
    cr_assert(memcmp(x, e, R * C * 8) == 0, "%d threads: wrong result", nth);
    rp_exec_destroy(xe);
  }
  rp_graph_destroy(g);
  free(x);
  free(e);
}

/* openmp has no launch geometry: rp_exec_kernel_block() says so. */
Test(openmp, no_launch_geometry, .timeout = 20) {
  uint8_t h[64] = {0};
  rp_graph *g;
  rp_buf b;
  rp_node kn;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "A", h, sizeof h, &b));
  rp_arg args[2] = {rp_arg_buf(rp_whole(b)), rp_arg_i64(0)};
  TU_OK(g, rp_record_kernel(g, &tu_bump, 0, rp_dims3(sizeof h, 1, 1), args,
                            NULL, &kn));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = NULL;
  TU_OK(g, rp_exec_create(&x, g, omp_be(), NULL));
  rp_kernel_block kb;
  cr_assert_eq(rp_exec_kernel_block(x, kn, &kb), RP_ENOTSUP);
  cr_assert_eq(rp_exec_kernel_block(x, kn, NULL), RP_EINVAL);
  cr_assert_eq(rp_exec_kernel_block(x, kn + 1, &kb), RP_EINVAL);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}
