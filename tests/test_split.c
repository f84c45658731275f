/* Automatic chunked pipelining (rp_exec_opts.split, rp_split_advise):
 * results byte-identical to the reference replay of the unsplit graph,
 * exact edges of a split graph, kernels not declared splittable never
 * split, and the advice's exact figures. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"
#include "reprise/backend.h"
#include "transform/split.h"
#include "split/split_kernels.h"
#include "util.h"
#undef TU_OK
#define TU_OK(g, expr)                                                         \
  do {                                                                         \
    rp_status tu_s_ = (expr);                                                  \
    cr_assert_eq(tu_s_, RP_OK, "%s -> %s: %s %s", #expr,                       \
                 rp_status_name(tu_s_), (g) ? rp_graph_error(g) : "",          \
                 rp_last_error());                                             \
  } while (0)

#define N 1009u  /* elements of the elementwise case (prime) */
#define ROWS 37u /* rows of the row-block cases (prime) */
#define COLS 24u
#define PAIRS 19u /* ts_pairs: 2 * PAIRS rows */

typedef struct wl {
  rp_graph *g;
  uint32_t x[N], y[N];
  uint32_t a[ROWS * COLS], b[COLS], c[ROWS * COLS];
  uint32_t pa[2 * PAIRS * COLS], pd[2 * PAIRS * COLS];
  rp_node kern[3];
} wl;

static void fill(wl *w) {
  for (uint32_t i = 0; i < N; i++) {
    w->x[i] = i * 2654435761u;
    w->y[i] = i ^ 0x5a5a5a5au;
  }
  for (uint32_t i = 0; i < ROWS * COLS; i++) {
    w->a[i] = i * 40503u + 7;
    w->c[i] = i * 2246822519u;
  }
  for (uint32_t i = 0; i < COLS; i++)
    w->b[i] = i + 3;
  for (uint32_t i = 0; i < 2 * PAIRS * COLS; i++) {
    w->pa[i] = i * 97u + 1;
    w->pd[i] = 0xdeadbeefu;
  }
}

/* copy in -> kernel -> copy out for each kernel, recorded naively: whole
 * buffers, one kernel over the whole space. ew: the elementwise kernel
 * (ts_ew or ts_ew_whole). */
static void record(wl *w, const rp_kernel *ew) {
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  w->g = g;
  rp_buf X, Y, A, B, C, PA, PD;
  TU_OK(g, rp_buffer_register(g, "X", w->x, sizeof w->x, &X));
  TU_OK(g, rp_buffer_register(g, "Y", w->y, sizeof w->y, &Y));
  TU_OK(g, rp_buffer_register_2d(g, "A", w->a, ROWS, COLS, 4, &A));
  TU_OK(g, rp_buffer_register(g, "B", w->b, sizeof w->b, &B));
  TU_OK(g, rp_buffer_register_2d(g, "C", w->c, ROWS, COLS, 4, &C));
  TU_OK(g, rp_buffer_register_2d(g, "PA", w->pa, 2 * PAIRS, COLS, 4, &PA));
  TU_OK(g, rp_buffer_register_2d(g, "PD", w->pd, 2 * PAIRS, COLS, 4, &PD));
  /* Elementwise, byte ranges. */
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(X), 0, NULL, NULL));
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(Y), 0, NULL, NULL));
  rp_arg ea[3] = {rp_arg_buf(rp_bytes(X, 0, sizeof w->x)),
                  rp_arg_buf(rp_bytes(Y, 0, sizeof w->y)), rp_arg_i32(3)};
  TU_OK(g,
        rp_record_kernel(g, ew, 0, rp_dims3(N, 1, 1), ea, NULL, &w->kern[0]));
  TU_OK(g, rp_record_copy_to_host(g, rp_whole(Y), 0, NULL, NULL));
  /* Row blocks, 2-d boxes; B read whole by every chunk. */
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(A), 0, NULL, NULL));
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(B), 0, NULL, NULL));
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(C), 0, NULL, NULL));
  rp_arg ra[4] = {rp_arg_buf(rp_box2(A, 0, ROWS, 0, COLS)),
                  rp_arg_buf(rp_whole(B)),
                  rp_arg_buf(rp_box2(C, 0, ROWS, 0, COLS)), rp_arg_i32(5)};
  TU_OK(g, rp_record_kernel(g, &ts_rows, 0, rp_dims3(COLS, ROWS, 1), ra, NULL,
                            &w->kern[1]));
  TU_OK(g, rp_record_copy_to_host(g, rp_whole(C), 0, NULL, NULL));
  /* Two rows per point, an out region. */
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(PA), 0, NULL, NULL));
  rp_arg pa[3] = {rp_arg_buf(rp_whole(PA)), rp_arg_buf(rp_whole(PD)),
                  rp_arg_i32(COLS)};
  TU_OK(g, rp_record_kernel(g, &ts_pairs, 0, rp_dims3(PAIRS, 1, 1), pa, NULL,
                            &w->kern[2]));
  TU_OK(g, rp_record_copy_to_host(g, rp_whole(PD), 0, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
}

typedef struct snap {
  uint32_t y[N], c[ROWS * COLS], pd[2 * PAIRS * COLS];
} snap;

static void take(const wl *w, snap *s) {
  memcpy(s->y, w->y, sizeof s->y);
  memcpy(s->c, w->c, sizeof s->c);
  memcpy(s->pd, w->pd, sizeof s->pd);
}

/* The backends to compare: reference, openmp, and cuda where a GPU is. */
static const char *const backends[] = {"reference", "openmp", "cuda"};

static int usable(const char *name, const rp_backend **be) {
  return rp_backend_find(name, be) == RP_OK && rp_backend_probe(*be) == RP_OK;
}

Test(split, identical_results_k1_to_7) {
  static wl w;
  fill(&w);
  record(&w, &ts_ew);
  TU_OK(w.g, rp_replay_reference(w.g, 2));
  snap ref, got;
  take(&w, &ref);
  int ran = 0;
  for (unsigned bi = 0; bi < 3; bi++) {
    const rp_backend *be;
    if (!usable(backends[bi], &be))
      continue;
    for (unsigned k = 1; k <= 7; k++) {
      fill(&w);
      rp_exec_opts o = RP_EXEC_OPTS_INIT;
      o.split = k;
      rp_exec *x;
      cr_assert_eq(rp_exec_create(&x, w.g, be, &o), RP_OK, "%s k %u: %s",
                   backends[bi], k, rp_last_error());
      uint32_t nk, nc;
      unsigned got_k = rp_exec_split_chunks(x, &nk, &nc);
      cr_assert_eq(got_k, k, "%s: k %u gave %u", backends[bi], k, got_k);
      /* k 1: nothing rewritten; else 3 kernels and the 8 copies of their
       * following regions (not B, read whole). */
      cr_assert_eq(nk, k > 1 ? 3u : 0u);
      cr_assert_eq(nc, k > 1 ? 8u : 0u);
      cr_assert_eq(rp_graph_num_nodes(rp_exec_graph(x)),
                   k > 1 ? 11 * k + 1 : 12u);
      cr_assert_eq(rp_exec_run(x, 2), RP_OK, "%s", rp_exec_error(x));
      take(&w, &got);
      cr_assert(!memcmp(got.y, ref.y, sizeof ref.y), "%s k %u: Y differs",
                backends[bi], k);
      cr_assert(!memcmp(got.c, ref.c, sizeof ref.c), "%s k %u: C differs",
                backends[bi], k);
      cr_assert(!memcmp(got.pd, ref.pd, sizeof ref.pd), "%s k %u: PD differs",
                backends[bi], k);
      rp_exec_destroy(x);
      ran++;
    }
  }
  cr_assert_geq(ran, 14);
  rp_graph_destroy(w.g);
}

/* The split changes the results if a chunk sees a wrong origin or region:
 * the reference of the unsplit graph against a hand-computed value. */
Test(split, reference_values_by_hand) {
  static wl w;
  fill(&w);
  record(&w, &ts_ew);
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  o.split = 4;
  const rp_backend *be;
  cr_assert(usable("openmp", &be));
  rp_exec *x;
  TU_OK(w.g, rp_exec_create(&x, w.g, be, &o));
  cr_assert_eq(rp_exec_run(x, 1), RP_OK);
  for (uint32_t i = 0; i < N; i++) {
    uint32_t y0 = i ^ 0x5a5a5a5au, x0 = i * 2654435761u;
    cr_assert_eq(w.y[i], y0 * 3 + x0 + i + N, "Y[%u]", i);
  }
  for (uint32_t r = 0; r < ROWS; r++)
    for (uint32_t c = 0; c < COLS; c++) {
      uint32_t e = r * COLS + c;
      uint32_t c0 = e * 2246822519u, a0 = e * 40503u + 7;
      cr_assert_eq(w.c[e], c0 * 5 + a0 * (c + 3) + r * ROWS + c, "C[%u]", e);
    }
  for (uint32_t i = 0; i < 2 * PAIRS * COLS; i++)
    cr_assert_eq(w.pd[i], (i * 97u + 1) * 7u + i / COLS / 2 + (i / COLS) % 2);
  rp_exec_destroy(x);
  rp_graph_destroy(w.g);
}

Test(split, not_declared_never_split) {
  static wl w;
  fill(&w);
  record(&w, &ts_ew_whole);
  const rp_backend *be;
  cr_assert(usable("openmp", &be));
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  o.split = 5;
  rp_exec *x;
  TU_OK(w.g, rp_exec_create(&x, w.g, be, &o));
  uint32_t nk, nc;
  rp_exec_split_chunks(x, &nk, &nc);
  /* Only the two declared kernels and their 5 copies are cut. */
  cr_assert_eq(nk, 2u);
  cr_assert_eq(nc, 5u);
  const rp_graph *sg = rp_exec_graph(x);
  uint32_t ew = 0;
  for (rp_node n = 0; n < rp_graph_num_nodes(sg); n++) {
    rp_node_info ni;
    rp_node_info_get(sg, n, &ni);
    if (ni.kernel == &ts_ew_whole) {
      ew++;
      cr_assert_eq(ni.space.x, N);
    }
  }
  cr_assert_eq(ew, 1u);
  char why[160];
  cr_assert(!rp__split_eligible(w.g, w.kern[0], NULL, why, sizeof why));
  cr_assert_str_eq(why, "not declared splittable");
  rp_exec_destroy(x);
  /* A graph with no splittable kernel is replayed as recorded. */
  rp_graph *g;
  uint32_t buf[64] = {0};
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "b", buf, sizeof buf, &b));
  rp_arg ba[2] = {rp_arg_buf(rp_whole(b)), rp_arg_i64(0)};
  TU_OK(g, rp_record_kernel(g, &tu_bump, 0, rp_dims3(sizeof buf, 1, 1), ba,
                            NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  TU_OK(g, rp_exec_create(&x, g, be, &o));
  cr_assert_eq(rp_exec_split_chunks(x, NULL, NULL), 1u);
  cr_assert_eq(rp_exec_graph(x), g);
  rp_exec_destroy(x);
  rp_split_advice adv;
  TU_OK(g, rp_split_advise(g, NULL, 0, &adv));
  cr_assert_eq(adv.k, 1u);
  cr_assert_eq(adv.first_kernel, RP_NONE);
  rp_graph_destroy(g);
}

/* copy X, copy Y, kernel, copy Y back, split in 2: the exact edges. */
Test(split, exact_edges) {
  static uint32_t xs[10], ys[10];
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  rp_buf X, Y;
  TU_OK(g, rp_buffer_register(g, "X", xs, sizeof xs, &X));
  TU_OK(g, rp_buffer_register(g, "Y", ys, sizeof ys, &Y));
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(X), 0, NULL, NULL));
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(Y), 0, NULL, NULL));
  rp_arg ea[3] = {rp_arg_buf(rp_whole(X)), rp_arg_buf(rp_whole(Y)),
                  rp_arg_i32(3)};
  TU_OK(g, rp_record_kernel(g, &ts_ew, 0, rp_dims3(10, 1, 1), ea, NULL, NULL));
  TU_OK(g, rp_record_copy_to_host(g, rp_whole(Y), 0, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  const rp_backend *be;
  cr_assert(usable("reference", &be));
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  o.split = 2;
  rp_exec *x;
  TU_OK(g, rp_exec_create(&x, g, be, &o));
  const rp_graph *s = rp_exec_graph(x);
  char buf[512];
  cr_assert_eq(rp_graph_num_nodes(s), 8u);
  /* 0,1: X halves in; 2,3: Y halves in; 4,5: the kernel's chunks; 6,7: Y
   * halves out. */
  const char *names[8] = {"moveto X[0]",   "moveto X[1]",  "moveto Y[0]",
                          "moveto Y[1]",   "ts_ew_k[0]",   "ts_ew_k[1]",
                          "movefrom Y[0]", "movefrom Y[1]"};
  for (rp_node n = 0; n < 8; n++) {
    rp_node_info ni;
    rp_node_info_get(s, n, &ni);
    cr_assert_str_eq(ni.name, names[n]);
    rp_access_info ai;
    rp_node_access(s, n, n >= 4 && n < 6 ? 1 : 0, &ai);
    cr_assert_eq(ai.region.offset, n % 2 ? 20u : 0u);
    cr_assert_eq(ai.region.bytes, 20u);
  }
  cr_assert_eq(rp_graph_num_edges(s), 6u, "%s", tu_edges_str(s, buf, 512));
  cr_assert(tu_has_edge(s, 0, 4, RP_EDGE_RAW, X));
  cr_assert(tu_has_edge(s, 2, 4, RP_EDGE_RAW, Y));
  cr_assert(tu_has_edge(s, 1, 5, RP_EDGE_RAW, X));
  cr_assert(tu_has_edge(s, 3, 5, RP_EDGE_RAW, Y));
  cr_assert(tu_has_edge(s, 4, 6, RP_EDGE_RAW, Y));
  cr_assert(tu_has_edge(s, 5, 7, RP_EDGE_RAW, Y));
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* Scalars, profiles and timelines keep the user's node numbers. */
Test(split, user_nodes_kept) {
  static wl w;
  fill(&w);
  record(&w, &ts_ew);
  const rp_backend *be;
  cr_assert(usable("reference", &be));
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  o.split = 3;
  rp_exec *x;
  TU_OK(w.g, rp_exec_create(&x, w.g, be, &o));
  rp_slot v = {0};
  v.u32 = 9;
  cr_assert_eq(rp_exec_set_scalar(x, w.kern[0], 2, v), RP_OK, "%s",
               rp_exec_error(x));
  cr_assert_eq(rp_exec_set_scalar(x, 0, 2, v), RP_EINVAL);
  cr_assert_eq(rp_exec_run(x, 1), RP_OK);
  for (uint32_t i = 0; i < N; i++)
    cr_assert_eq(w.y[i], (i ^ 0x5a5a5a5au) * 9 + i * 2654435761u + i + N);
  uint32_t nn = rp_graph_num_nodes(w.g);
  double *t = calloc(nn, sizeof *t), *t2 = calloc(nn, sizeof *t2);
  cr_assert_eq(rp_exec_profile(x, t), RP_OK);
  cr_assert_eq(rp_exec_timeline(x, t, t2), RP_OK);
  for (uint32_t n = 1; n < nn; n++)
    cr_assert_geq(t[n], t2[n - 1] - 1e-9, "op %u starts before %u ends", n,
                  n - 1);
  free(t);
  free(t2);
  rp_exec_destroy(x);
  rp_graph_destroy(w.g);
}

/* Given costs of 100 us for the copy in, the kernel and the copy out,
 * 2 copy engines, no model: split in k the schedule is 100 + 200 / k; the
 * best up to 16 is 112.5, the smallest k within 3 % of it is 13. */
Test(split, advice_exact) {
  static uint32_t ys[4096];
  rp_graph *g;
  rp_buf X, Y;
  rp_op_opts c = RP_OP_OPTS_WITH(.cost_us = 100);
  TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  TU_OK(g, rp_buffer_register(g, "X", ys, sizeof ys / 2, &X));
  TU_OK(g, rp_buffer_register(g, "Y", ys + 2048, sizeof ys / 2, &Y));
  /* X lives on the device already (no coherence): only Y moves. */
  rp_arg ea[3] = {rp_arg_buf(rp_whole(X)), rp_arg_buf(rp_whole(Y)),
                  rp_arg_i32(3)};
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(Y), 0, &c, NULL));
  TU_OK(g, rp_record_kernel(g, &ts_ew, 0, rp_dims3(2048, 1, 1), ea, &c, NULL));
  TU_OK(g, rp_record_copy_to_host(g, rp_whole(Y), 0, &c, NULL));
  TU_OK(g, rp_graph_end(g));
  rp_split_advice adv;
  TU_OK(g, rp_split_advise(g, NULL, 16, &adv));
  cr_assert_eq(adv.k, 13u);
  cr_assert_eq(adv.first_kernel, 1u);
  cr_assert_eq(adv.nkernels, 1u);
  cr_assert_eq(adv.ncopies, 2u);
  cr_assert_float_eq(adv.unsplit_us, 300.0, 1e-9);
  cr_assert_float_eq(adv.split_us, 100.0 + 200.0 / 13, 1e-9);
  cr_assert_float_eq(adv.speedup, 300.0 / (100.0 + 200.0 / 13), 1e-9);
  char *txt;
  size_t len;
  FILE *fp = open_memstream(&txt, &len);
  TU_OK(g, rp_split_write_text(g, &adv, fp));
  fclose(fp);
  cr_assert_str_eq(txt, "split \"ts_ew_k\" in 13: predicted 2.60x "
                        "(0.300 ms -> 0.115 ms); 2 copies cut with it\n");
  free(txt);
  /* RP_EXEC_SPLIT_AUTO takes the advice (no model saved in the test's
   * environment: the schedule's). */
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  o.split = RP_EXEC_SPLIT_AUTO;
  const rp_backend *be;
  cr_assert(usable("reference", &be));
  setenv("XDG_CACHE_HOME", "/nonexistent/reprise-test", 1);
  rp_exec *x;
  TU_OK(g, rp_exec_create(&x, g, be, &o));
  cr_assert_eq(rp_exec_split_chunks(x, NULL, NULL), 13u);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* Host tasks, explicit dependencies and coherence-inserted copies are
 * recorded again as they were; the results still match the reference. */
Test(split, other_operations_kept) {
  static uint8_t xs[4000], ys[4000];
  for (unsigned i = 0; i < sizeof xs; i++) {
    xs[i] = (uint8_t)(i * 7);
    ys[i] = (uint8_t)(i * 13 + 1);
  }
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  rp_buf X, Y;
  TU_OK(g, rp_buffer_register(g, "X", xs, sizeof xs, &X));
  TU_OK(g, rp_buffer_register(g, "Y", ys, sizeof ys, &Y));
  static tu_host_arg ha = {0, 4000};
  rp_access acx = {rp_whole(X), RP_INOUT};
  rp_node h0, k0;
  TU_OK(g, rp_record_host(g, tu_host_bump, &ha, &acx, 1, NULL, &h0));
  /* No explicit copies: coherence inserts X and Y in, Y back. */
  rp_arg ea[3] = {rp_arg_buf(rp_whole(X)), rp_arg_buf(rp_whole(Y)),
                  rp_arg_i32(3)};
  TU_OK(g, rp_record_kernel(g, &ts_ew, 0, rp_dims3(1000, 1, 1), ea, NULL, &k0));
  TU_OK(g, rp_record_sync_host(g, rp_whole(Y), NULL));
  rp_access acy = {rp_whole(Y), RP_INOUT};
  rp_op_opts ao = RP_OP_OPTS_WITH(.name = "after", .after = &k0, .nafter = 1);
  TU_OK(g, rp_record_host(g, tu_host_bump, &ha, &acy, 1, &ao, NULL));
  TU_OK(g, rp_graph_end(g));
  uint8_t x0[4000], y0[4000], rx[4000], ry[4000];
  memcpy(x0, xs, sizeof xs);
  memcpy(y0, ys, sizeof ys);
  TU_OK(g, rp_replay_reference(g, 2));
  memcpy(rx, xs, sizeof xs);
  memcpy(ry, ys, sizeof ys);
  const rp_backend *be;
  cr_assert(usable("openmp", &be));
  for (unsigned k = 2; k <= 5; k++) {
    memcpy(xs, x0, sizeof xs);
    memcpy(ys, y0, sizeof ys);
    rp_exec_opts o = RP_EXEC_OPTS_INIT;
    o.split = k;
    rp_exec *x;
    TU_OK(g, rp_exec_create(&x, g, be, &o));
    uint32_t nk, nc;
    cr_assert_eq(rp_exec_split_chunks(x, &nk, &nc), k);
    cr_assert_eq(nk, 1u);
    cr_assert_eq(nc, 3u); /* X in, Y in, Y back: inserted, cut */
    const rp_graph *s = rp_exec_graph(x);
    /* The last host task waits on every chunk of the kernel. */
    rp_node last = rp_graph_num_nodes(s) - 1;
    for (rp_node c = 0; c < rp_graph_num_nodes(s); c++) {
      rp_node_info ni;
      rp_node_info_get(s, c, &ni);
      if (ni.kernel == &ts_ew)
        cr_assert(tu_has_edge(s, c, last, RP_EDGE_AFTER, RP_NONE),
                  "k %u: no after edge %u -> %u", k, c, last);
    }
    cr_assert_eq(rp_exec_run(x, 2), RP_OK, "%s", rp_exec_error(x));
    cr_assert(!memcmp(xs, rx, sizeof xs), "k %u: X differs", k);
    cr_assert(!memcmp(ys, ry, sizeof ys), "k %u: Y differs", k);
    rp_exec_destroy(x);
  }
  rp_graph_destroy(g);
}
