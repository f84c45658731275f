/* Hazard edges: exact edge sets on hand-made graphs, and a property test
 * against a brute-force pairwise check. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "record/hazard.h"
#include "util.h"

static char ebuf[4096];
#define EDGES(g) tu_edges_str(g, ebuf, sizeof ebuf)

static rp_kernel k1, k2, k3;
static rp_param p1[1], p2[2], p3[3];

static void setup(void) {
  rp_mode m1[] = {RP_INOUT};
  rp_mode m2[] = {RP_IN, RP_IN};
  rp_mode m3[] = {RP_IN, RP_OUT, RP_IN};
  k1 = tu_nop_kernel("k", 1, m1, p1);
  k2 = tu_nop_kernel("k2", 2, m2, p2);
  k3 = tu_nop_kernel("k3", 3, m3, p3);
}

TestSuite(hazards, .init = setup, .timeout = 60);

static rp_node kern(rp_graph *g, const rp_kernel *k, int dev, rp_region a,
                    rp_region b) {
  rp_arg args[3] = {rp_arg_buf(a), rp_arg_buf(b), rp_arg_buf(a)};
  rp_node n = RP_NONE;
  TU_OK(g, rp_record_kernel(g, k, dev, rp_dims3(1, 1, 1), args, NULL, &n));
  return n;
}

Test(hazards, attach_kernel_attach_kernel) {
  char A[64], B[64];
  rp_graph *g;
  rp_buf a, b;
  TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  TU_OK(g, rp_buffer_register(g, "A", A, 64, &a));
  TU_OK(g, rp_buffer_register(g, "B", B, 64, &b));
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(a), 0, NULL, NULL));
  kern(g, &k1, 0, rp_whole(a), rp_whole(a));
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(b), 0, NULL, NULL));
  kern(g, &k2, 0, rp_whole(a), rp_whole(b));
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp_graph_num_edges(g), 3, "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 0, 1, RP_EDGE_RAW, a), "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 1, 3, RP_EDGE_RAW, a), "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 2, 3, RP_EDGE_RAW, b), "%s", EDGES(g));
  rp_graph_destroy(g);
}

Test(hazards, same_with_automatic_coherence) {
  char A[64], B[64];
  rp_graph *g;
  rp_buf a, b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "A", A, 64, &a));
  TU_OK(g, rp_buffer_register(g, "B", B, 64, &b));
  cr_assert_eq(kern(g, &k1, 0, rp_whole(a), rp_whole(a)), 1);
  cr_assert_eq(kern(g, &k2, 0, rp_whole(a), rp_whole(b)), 3);
  TU_OK(g, rp_graph_end(g));
  rp_node_info in;
  rp_node_info_get(g, 0, &in);
  cr_assert_eq(in.type, RP_OP_COPY_H2D);
  cr_assert(in.inserted);
  cr_assert_str_eq(in.name, "moveto A for k");
  rp_node_info_get(g, 2, &in);
  cr_assert_str_eq(in.name, "moveto B for k2");
  cr_assert_eq(rp_graph_num_edges(g), 3, "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 0, 1, RP_EDGE_RAW, a));
  cr_assert(tu_has_edge(g, 1, 3, RP_EDGE_RAW, a));
  cr_assert(tu_has_edge(g, 2, 3, RP_EDGE_RAW, b));
  rp_graph_destroy(g);
}

Test(hazards, ping_pong_jacobi) {
  rp_graph *g;
  rp_buf a, b;
  rp_mode m[] = {RP_IN, RP_OUT};
  rp_param ps[2];
  rp_kernel k = tu_nop_kernel("jacobi", 2, m, ps);
  TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  rp_buffer_desc d = {"A", NULL, 256, 4, 2, {8, 8, 0}};
  TU_OK(g, rp_buffer_add(g, &d, &a));
  d.name = "B";
  TU_OK(g, rp_buffer_add(g, &d, &b));
  for (int i = 0; i < 4; i++)
    kern(g, &k, 0, rp_whole(i % 2 ? b : a), rp_whole(i % 2 ? a : b));
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp_graph_num_edges(g), 3, "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 0, 1, RP_EDGE_RAW, b));
  cr_assert(tu_has_edge(g, 1, 2, RP_EDGE_RAW, a));
  cr_assert(tu_has_edge(g, 2, 3, RP_EDGE_RAW, b));
  rp_graph_destroy(g);
}

Test(hazards, halo_rows_touching_and_not) {
  rp_graph *g;
  rp_buf a;
  rp_mode mw[] = {RP_OUT}, mr[] = {RP_IN};
  rp_param pw[1], pr[1];
  rp_kernel kw = tu_nop_kernel("w", 1, mw, pw),
            kr = tu_nop_kernel("r", 1, mr, pr);
  TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  rp_buffer_desc d = {"A", NULL, 8 * 4 * 4, 4, 2, {8, 4, 0}};
  TU_OK(g, rp_buffer_add(g, &d, &a));
  kern(g, &kw, 0, rp_box2(a, 0, 4, 0, 4), rp_whole(a)); /* 0 */
  kern(g, &kw, 0, rp_box2(a, 4, 8, 0, 4), rp_whole(a)); /* 1 */
  kern(g, &kr, 0, rp_box2(a, 3, 5, 0, 4), rp_whole(a)); /* 2: halo */
  kern(g, &kr, 0, rp_box2(a, 0, 3, 0, 4), rp_whole(a)); /* 3: inside */
  kern(g, &kw, 0, rp_box2(a, 0, 4, 0, 4), rp_whole(a)); /* 4 */
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp_graph_num_edges(g), 5, "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 0, 2, RP_EDGE_RAW, a));
  cr_assert(tu_has_edge(g, 1, 2, RP_EDGE_RAW, a));
  cr_assert(tu_has_edge(g, 0, 3, RP_EDGE_RAW, a));
  cr_assert(tu_has_edge(g, 2, 4, RP_EDGE_WAR, a));
  cr_assert(tu_has_edge(g, 3, 4, RP_EDGE_WAR, a));
  rp_graph_destroy(g);
}

Test(hazards, boxes_against_byte_ranges) {
  rp_graph *g;
  rp_buf a;
  rp_mode mw[] = {RP_OUT}, mr[] = {RP_IN};
  rp_param pw[1], pr[1];
  rp_kernel kw = tu_nop_kernel("w", 1, mw, pw),
            kr = tu_nop_kernel("r", 1, mr, pr);
  TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  rp_buffer_desc d = {"A", NULL, 64, 4, 2, {4, 4, 0}};
  TU_OK(g, rp_buffer_add(g, &d, &a));
  kern(g, &kw, 0, rp_box2(a, 1, 2, 0, 4), rp_whole(a)); /* 0: bytes 16-32 */
  kern(g, &kr, 0, rp_bytes(a, 20, 4), rp_whole(a));     /* 1 */
  kern(g, &kr, 0, rp_bytes(a, 32, 16), rp_whole(a));    /* 2 */
  kern(g, &kw, 0, rp_box2(a, 0, 4, 1, 2), rp_whole(a)); /* 3: column 1 */
  kern(g, &kr, 0, rp_bytes(a, 8, 8), rp_whole(a));      /* 4 */
  kern(g, &kr, 0, rp_bytes(a, 36, 4), rp_whole(a));     /* 5 */
  TU_OK(g, rp_graph_end(g));
  cr_assert(tu_has_edge(g, 0, 1, RP_EDGE_RAW, a), "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 1, 3, RP_EDGE_WAR, a), "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 2, 3, RP_EDGE_WAR, a), "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 3, 5, RP_EDGE_RAW, a), "%s", EDGES(g));
  cr_assert_eq(rp_graph_num_edges(g), 4, "%s", EDGES(g));
  uint64_t iv[16];
  rp_region col = rp_box2(a, 0, 4, 1, 2);
  cr_assert_eq(rp_region_intervals(g, &col, iv, 8), 4);
  cr_assert_eq(iv[0], 4);
  cr_assert_eq(iv[1], 4);
  cr_assert_eq(iv[6], 52);
  rp_region rows = rp_box2(a, 1, 3, 0, 4);
  cr_assert_eq(rp_region_intervals(g, &rows, iv, 8), 1);
  cr_assert_eq(iv[0], 16);
  cr_assert_eq(iv[1], 32);
  rp_graph_destroy(g);
}

Test(hazards, copies_between_spaces) {
  char A[32];
  rp_graph *g;
  rp_buf a;
  TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  TU_OK(g, rp_buffer_register(g, "A", A, 32, &a));
  tu_host_arg h = {0, 4};
  rp_access acc = {rp_whole(a), RP_INOUT};
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(a), 0, NULL, NULL));  /* 0 */
  TU_OK(g, rp_record_host(g, tu_host_bump, &h, &acc, 1, NULL, NULL)); /* 1 */
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(a), 0, NULL, NULL));  /* 2 */
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(a), 1, NULL, NULL));  /* 3 */
  TU_OK(g, rp_record_copy_peer(g, rp_whole(a), 0, 1, NULL, NULL));    /* 4 */
  TU_OK(g, rp_graph_end(g));
  cr_assert(tu_has_edge(g, 0, 1, RP_EDGE_WAR, a), "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 1, 2, RP_EDGE_RAW, a), "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 1, 3, RP_EDGE_RAW, a), "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 2, 4, RP_EDGE_RAW, a), "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 3, 4, RP_EDGE_WAW, a), "%s", EDGES(g));
  cr_assert_eq(rp_graph_num_edges(g), 5, "%s", EDGES(g));
  cr_assert_eq(rp_graph_num_devices(g), 2);
  rp_graph_destroy(g);
}

Test(hazards, explicit_after_edges_are_kept) {
  char A[8], B[8];
  rp_graph *g;
  rp_buf a, b;
  TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  TU_OK(g, rp_buffer_register(g, "A", A, 8, &a));
  TU_OK(g, rp_buffer_register(g, "B", B, 8, &b));
  kern(g, &k1, 0, rp_whole(a), rp_whole(a));
  rp_node dep = 0;
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "second", .after = &dep, .nafter = 1);
  rp_arg arg = rp_arg_buf(rp_whole(b));
  TU_OK(g, rp_record_kernel(g, &k1, 0, rp_dims3(1, 1, 1), &arg, &o, NULL));
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp_graph_num_edges(g), 1);
  cr_assert(tu_has_edge(g, 0, 1, RP_EDGE_AFTER, RP_NONE));
  uint32_t n;
  const rp_node *s = rp_graph_succs(g, 0, &n);
  cr_assert_eq(n, 1);
  cr_assert_eq(s[0], 1);
  s = rp_graph_preds(g, 1, &n);
  cr_assert_eq(n, 1);
  cr_assert_eq(s[0], 0);
  rp_graph_destroy(g);
}

/* Whole-buffer reads are kept apart from the segments (record/hazard.c):
 * the writers since the latest whole read are the candidates of the next
 * one, or that read's own when nothing was written since; a write finds
 * the whole readers since each piece's writer. */
Test(hazards, whole_reads_and_piece_writes) {
  char A[64], B[64];
  rp_graph *g;
  rp_buf a, b;
  TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  TU_OK(g, rp_buffer_register(g, "A", A, 64, &a));
  TU_OK(g, rp_buffer_register(g, "B", B, 64, &b));
  rp_mode m2[] = {RP_IN, RP_OUT};
  rp_param p2x[2];
  rp_kernel rw = tu_nop_kernel("rw", 2, m2, p2x);
  kern(g, &k1, 0, rp_bytes(a, 0, 16), rp_bytes(a, 0, 16));   /* 0 */
  kern(g, &k1, 0, rp_bytes(a, 16, 16), rp_bytes(a, 16, 16)); /* 1 */
  kern(g, &rw, 0, rp_whole(a), rp_bytes(b, 0, 8));           /* 2 */
  kern(g, &k1, 0, rp_bytes(a, 0, 16), rp_bytes(a, 0, 16));   /* 3 */
  kern(g, &rw, 0, rp_whole(a), rp_bytes(b, 8, 8));           /* 4 */
  kern(g, &rw, 0, rp_whole(a), rp_bytes(b, 16, 8));          /* 5 */
  kern(g, &k1, 0, rp_bytes(a, 32, 8), rp_bytes(a, 32, 8));   /* 6 */
  /* Reads A whole and writes a piece of it: its own read is no WAR. */
  kern(g, &rw, 0, rp_whole(a), rp_bytes(a, 48, 8)); /* 7 */
  TU_OK(g, rp_graph_end(g));
  cr_assert(tu_has_edge(g, 0, 2, RP_EDGE_RAW, a), "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 1, 2, RP_EDGE_RAW, a), "%s", EDGES(g));
  /* 0 reaches 3 through 2: no WAW. */
  cr_assert(tu_has_edge(g, 2, 3, RP_EDGE_WAR, a), "%s", EDGES(g));
  /* 1 reaches 4 through 2 and 3: only the writer since 2 is needed. */
  cr_assert(tu_has_edge(g, 3, 4, RP_EDGE_RAW, a), "%s", EDGES(g));
  /* Nothing written since 4: 5 sees what 4 saw. */
  cr_assert(tu_has_edge(g, 3, 5, RP_EDGE_RAW, a), "%s", EDGES(g));
  /* 6 overwrites bytes 4 and 5 read (2 reaches 4 through 3). */
  cr_assert(tu_has_edge(g, 4, 6, RP_EDGE_WAR, a), "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 5, 6, RP_EDGE_WAR, a), "%s", EDGES(g));
  cr_assert(tu_has_edge(g, 6, 7, RP_EDGE_RAW, a), "%s", EDGES(g));
  cr_assert_eq(rp_graph_num_edges(g), 8, "%s", EDGES(g));
  rp_graph_destroy(g);
}

/* ---- property test ----------------------------------------------------- */

/* Byte set of an access, as a bitmap over the buffer. */
static void mark(void *ctx, uint64_t off, uint64_t len) {
  uint8_t *m = ctx;
  memset(m + off, 1, len);
}

static int conflict(const rp_graph *g, rp_node i, rp_node j) {
  rp_node_info a, b;
  rp_node_info_get(g, i, &a);
  rp_node_info_get(g, j, &b);
  for (unsigned x = 0; x < a.naccess; x++)
    for (unsigned y = 0; y < b.naccess; y++) {
      rp_access_info p, q;
      rp_node_access(g, i, x, &p);
      rp_node_access(g, j, y, &q);
      if (p.region.buf != q.region.buf || p.space != q.space)
        continue;
      if (!((p.mode & RP_OUT) || (q.mode & RP_OUT)))
        continue;
      const rp__buffer *bb = &g->buf[p.region.buf];
      uint8_t *m1 = calloc(1, bb->bytes), *m2 = calloc(1, bb->bytes);
      rp__region_each(bb, &p.region, mark, m1);
      rp__region_each(bb, &q.region, mark, m2);
      int hit = 0;
      for (uint64_t k = 0; k < bb->bytes && !hit; k++)
        hit = m1[k] && m2[k];
      free(m1);
      free(m2);
      if (hit)
        return 1;
    }
  return 0;
}

/* Reachability matrix (closure) of an adjacency matrix, n small. */
static void closure(uint8_t *r, uint32_t n) {
  for (uint32_t j = 0; j < n; j++)
    for (uint32_t i = j; i-- > 0;)
      if (r[i * n + j])
        for (uint32_t k = 0; k < i; k++)
          if (r[k * n + i])
            r[k * n + j] = 1;
}

static void check_random(uint64_t seed, unsigned flags, unsigned ndev,
                         unsigned nops) {
  tu_random r;
  cr_assert_eq(tu_random_graph(&r, seed, 4, 64, nops, ndev, flags, 1), 0, "%s",
               rp_graph_error(r.g));
  rp_graph *g = r.g;
  TU_OK(g, rp_graph_end(g));
  uint32_t n = rp_graph_num_nodes(g);
  uint8_t *want = calloc((size_t)n * n, 1), *got = calloc((size_t)n * n, 1);
  uint8_t *direct = calloc((size_t)n * n, 1);
  for (uint32_t j = 0; j < n; j++) {
    for (uint32_t i = 0; i < j; i++)
      if (conflict(g, i, j))
        want[i * n + j] = 1;
    const rp__op *o = &g->op[j];
    for (uint32_t k = 0; k < o->nafter; k++)
      want[g->after[o->after0 + k] * n + j] = 1;
  }
  for (uint32_t e = 0; e < rp_graph_num_edges(g); e++) {
    rp_edge ed;
    rp_graph_edge(g, e, &ed);
    cr_assert_lt(ed.from, ed.to);
    got[ed.from * n + ed.to] = direct[ed.from * n + ed.to] = 1;
  }
  closure(want, n);
  closure(got, n);
  cr_assert_eq(memcmp(want, got, (size_t)n * n), 0,
               "closures differ (seed %llu)", (unsigned long long)seed);
  /* Reduced: no hazard edge is implied by a longer path (the reduction is
   * exact; test_reduce.c compares it with a brute-force one). */
  for (uint32_t e = 0; e < rp_graph_num_edges(g); e++) {
    rp_edge ed;
    rp_graph_edge(g, e, &ed);
    if (ed.kind == RP_EDGE_AFTER)
      continue;
    for (uint32_t k = ed.from + 1; k < ed.to; k++)
      cr_assert(!(got[ed.from * n + k] && got[k * n + ed.to]),
                "edge %u->%u is implied through %u (seed %llu)", ed.from, ed.to,
                k, (unsigned long long)seed);
  }
  free(want);
  free(got);
  free(direct);
  tu_random_free(&r);
}

Test(hazards, random_graphs_match_brute_force) {
  for (uint64_t seed = 1; seed <= 40; seed++) {
    check_random(seed, RP_GRAPH_NO_COHERENCE, 2, 90);
    check_random(seed, 0, 1 + seed % 3, 90);
    check_random(seed, RP_GRAPH_NO_COHERENCE, 2, 14);
    check_random(seed, 0, 1 + seed % 3, 9);
  }
}
