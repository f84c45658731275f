/* The end-of-graph coherence check's fast paths (issue 36): buffers used
 * on the host only are skipped, a box that is one run of bytes gives it
 * without a walk, and regular breakpoints are sorted through a bitmap.
 * Each test gives the exact warnings the check must still report, so a
 * shortcut that drops one, or moves its bytes, fails here. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "core/core.h"
#include "util.h"

static void host_nop(void *user, void *const *ptrs) {
  (void)user;
  (void)ptrs;
}

static const rp_mode in_out[2] = {RP_IN, RP_OUT};
static const rp_mode only_in[1] = {RP_IN};
static const rp_mode only_out[1] = {RP_OUT};

/* Records kernel `name` on device 0 over regions r[0 .. n) with modes m. */
static void kern(rp_graph *g, const char *name, unsigned n, const rp_mode *m,
                 const rp_region *r) {
  rp_param ps[2];
  rp_kernel k = tu_nop_kernel(name, n, m, ps);
  rp_arg args[2];
  for (unsigned i = 0; i < n; i++)
    args[i] = rp_arg_buf(r[i]);
  rp_op_opts o = RP_OP_OPTS_WITH(.name = name);
  TU_OK(g, rp_record_kernel(g, &k, 0, rp_dims3(1, 1, 1), args, &o, NULL));
}

static void host_op(rp_graph *g, rp_region r, rp_mode m) {
  rp_access a = {r, m};
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "h");
  TU_OK(g, rp_record_host(g, host_nop, NULL, &a, 1, &o, NULL));
}

static rp_buf buffer(rp_graph *g, const char *name, void *host, uint64_t bytes,
                     uint64_t elem, unsigned nd, uint64_t d0, uint64_t d1,
                     uint64_t d2) {
  rp_buffer_desc d = {name, host, bytes, elem, nd, {d0, d1, d2}};
  rp_buf b;
  TU_OK(g, rp_buffer_add(g, &d, &b));
  return b;
}

static void expect(const rp_graph *g, unsigned n, const char *const *want) {
  cr_assert_eq(rp_graph_num_warnings(g), n, "%u warnings, first: %s",
               rp_graph_num_warnings(g), rp_graph_warning(g, 0));
  for (unsigned i = 0; i < n; i++)
    cr_assert(strstr(rp_graph_warning(g, i), want[i]), "warning %u: %s", i,
              rp_graph_warning(g, i));
}

/* A buffer used on the host only gives nothing; one whose only device
 * access comes after fifty host ones still gives both of its warnings. */
Test(coh_fast, host_only_skipped_others_kept) {
  static uint8_t H[64], D[64];
  rp_graph *g;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  rp_buf h = buffer(g, "H", H, 64, 1, 0, 0, 0, 0);
  rp_buf d = buffer(g, "D", D, 64, 1, 0, 0, 0, 0);
  rp_buf z = buffer(g, "Z", NULL, 64, 1, 0, 0, 0, 0);
  for (int i = 0; i < 100; i++) /* ops 0 .. 99 */
    host_op(g, rp_whole(h), RP_INOUT);
  for (int i = 0; i < 50; i++) /* ops 100 .. 149 */
    host_op(g, rp_whole(d), RP_INOUT);
  rp_region kd[2] = {rp_range_bytes(d, 0, 16), rp_range_bytes(d, 16, 16)};
  kern(g, "kd", 2, in_out, kd);            /* op 150 */
  host_op(g, rp_whole(z), RP_OUT);         /* op 151 */
  rp_region kz = rp_range_bytes(z, 8, 16); /* op 152 */
  kern(g, "kz", 1, only_in, &kz);
  TU_OK(g, rp_graph_end(g));
  const char *want[] = {
      "op 150 \"kd\" reads bytes [0, 16) of buffer \"D\" on device 0",
      "buffer \"D\": bytes [16, 32) last written by op 150 \"kd\" on device 0 "
      "never reach the host array",
      "op 152 \"kz\" reads bytes [8, 24) of buffer \"Z\" on device 0"};
  expect(g, 3, want);
  rp_graph_destroy(g);
}

/* Boxes of one run (a row, part of a row, a plane, part of a plane's row)
 * and of several runs give the bytes they cover. */
Test(coh_fast, box_runs_exact) {
  static uint8_t M[8 * 16 * 4];
  rp_graph *g;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  rp_buf m = buffer(g, "M", M, sizeof M, 4, 2, 8, 16, 0);
  rp_buf n = buffer(g, "N", NULL, 8 * 16 * 4, 4, 2, 8, 16, 0);
  rp_buf p = buffer(g, "P", NULL, 4 * 6 * 8, 1, 3, 4, 6, 8);
  rp_buf q = buffer(g, "Q", NULL, 4 * 6 * 8, 1, 3, 4, 6, 8);
  rp_buf r = buffer(g, "R", NULL, 4 * 6 * 8, 1, 3, 4, 6, 8);
  rp_region w1 = rp_box2_elems(m, 2, 3, 0, 16); /* [128, 192) */
  rp_region w2 = rp_box2_elems(m, 4, 6, 4, 8);  /* [272, 288) [336, 352) */
  rp_region w3 = rp_box2_elems(m, 6, 7, 2, 6);  /* [392, 408) */
  kern(g, "k1", 1, only_out, &w1);              /* op 0 */
  kern(g, "k2", 1, only_out, &w2);
  kern(g, "k3", 1, only_out, &w3);
  rp_region r4 = rp_box2_elems(n, 1, 3, 0, 16); /* [64, 192) */
  kern(g, "k4", 1, only_in, &r4);               /* op 3 */
  rp_region r5 = {p, RP_REGION_BOX, 3, 0, 0, {1, 0, 0}, {2, 6, 8}};
  kern(g, "k5", 1, only_in, &r5); /* op 4: [48, 96) */
  rp_region r6 = {q, RP_REGION_BOX, 3, 0, 0, {0, 2, 0}, {2, 3, 8}};
  kern(g, "k6", 1, only_in, &r6); /* op 5: [16, 24) [64, 72) */
  rp_region r7 = {r, RP_REGION_BOX, 3, 0, 0, {1, 2, 3}, {2, 3, 7}};
  kern(g, "k7", 1, only_in, &r7); /* op 6: [67, 71) */
  TU_OK(g, rp_graph_end(g));
  const char *want[] = {
      "buffer \"M\": bytes [128, 408) (and other pieces) last written by op "
      "0 \"k1\" on device 0",
      "op 3 \"k4\" reads bytes [64, 192) of buffer \"N\" on device 0",
      "op 4 \"k5\" reads bytes [48, 96) of buffer \"P\" on device 0",
      "op 5 \"k6\" reads bytes [16, 24) of buffer \"Q\" on device 0",
      "op 6 \"k7\" reads bytes [67, 71) of buffer \"R\" on device 0"};
  expect(g, 5, want);
  rp_graph_destroy(g);
}

/* 32 device writes, then a read over them: breakpoints that are multiples
 * of 64 (sorted through the bitmap) and odd ones (the radix sort). */
static void many_runs(uint64_t step, uint64_t off, uint64_t len,
                      const char *const *want) {
  static uint8_t V[1 << 20];
  rp_graph *g;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  rp_buf v = buffer(g, "V", V, sizeof V, 1, 0, 0, 0, 0);
  for (uint64_t i = 0; i < 32; i++) {
    rp_region w = rp_range_bytes(v, off + step * i, len);
    kern(g, "w", 1, only_out, &w);
  }
  rp_region rd = rp_range_bytes(v, off, step * 40);
  kern(g, "r", 1, only_in, &rd); /* op 32 */
  TU_OK(g, rp_graph_end(g));
  expect(g, 2, want);
  rp_graph_destroy(g);
}

/* Multiples of 64 (the bitmap), then odd offsets (the radix sort). */
Test(coh_fast, many_runs_bitmap_and_radix) {
  const char *bitmap[] = {
      "op 32 \"r\" reads bytes [64, 128) of buffer \"V\" on device 0",
      "buffer \"V\": bytes [0, 4032) (and other pieces) last written by op 0 "
      "\"w\" on device 0"};
  const char *radix[] = {
      "op 32 \"r\" reads bytes [501, 1001) of buffer \"V\" on device 0",
      "buffer \"V\": bytes [1, 31501) (and other pieces) last written by op 0 "
      "\"w\" on device 0"};
  many_runs(128, 0, 64, bitmap);
  many_runs(1000, 1, 500, radix);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* rp__segs_sort against qsort and unique, on values sharing trailing
 * zeros or not, few distinct or many, with zeros, small and large n. */
Test(coh_fast, segs_sort_matches_qsort) {
  uint64_t seed = 12345;
  for (int t = 0; t < 400; t++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    uint64_t n = 1 + seed % 700;
    unsigned shift = (unsigned)(seed >> 20) % 20;
    uint64_t span = 1 + (seed >> 30) % (t % 2 ? 40 : 100000);
    uint64_t *v = malloc(n * sizeof *v), *ref = malloc(n * sizeof *ref),
             *tmp = malloc(n * sizeof *tmp);
    cr_assert(v && ref && tmp);
    uint64_t max = 0;
    for (uint64_t i = 0; i < n; i++) {
      seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
      v[i] = (seed % span) << shift;
      if (t % 5 == 0)
        v[i] += seed >> 60; /* low bits: no common shift */
      ref[i] = v[i];
      if (v[i] > max)
        max = v[i];
    }
    qsort(ref, n, sizeof *ref, cmp_u64);
    uint64_t u = 0;
    for (uint64_t i = 0; i < n; i++)
      if (!u || ref[u - 1] != ref[i])
        ref[u++] = ref[i];
    uint64_t got = rp__segs_sort(v, tmp, n, max);
    cr_assert_eq(got, u, "case %d: %llu distinct, got %llu", t,
                 (unsigned long long)u, (unsigned long long)got);
    cr_assert_eq(memcmp(v, ref, u * sizeof *v), 0, "case %d", t);
    free(v);
    free(ref);
    free(tmp);
  }
}

/* A run's segments from the table of breakpoint indices (breakpoints on
 * a grid of 4 KiB) and, once a byte off that grid is touched on the
 * host, from binary searches: the same warnings, bytes exact. */
static void grid_or_not(int off_grid) {
  static uint8_t A[1 << 20];
  rp_graph *g;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  rp_buf a = buffer(g, "A", A, sizeof A, 1, 0, 0, 0, 0);
  rp_region w0 = rp_range_bytes(a, 4096, 4096);  /* op 0 */
  rp_region r1 = rp_range_bytes(a, 0, 12288);    /* op 1 */
  rp_region w2 = rp_range_bytes(a, 16384, 8192); /* op 2 */
  rp_region r3 = rp_range_bytes(a, 4096, 20480); /* op 3 */
  rp_region w4 = rp_range_bytes(a, 20480, 4096); /* op 4 */
  kern(g, "w", 1, only_out, &w0);
  kern(g, "r", 1, only_in, &r1);
  kern(g, "w", 1, only_out, &w2);
  kern(g, "r", 1, only_in, &r3);
  kern(g, "v", 1, only_out, &w4);
  if (off_grid)
    host_op(g, rp_range_bytes(a, sizeof A - 3, 2), RP_IN);
  TU_OK(g, rp_graph_end(g));
  const char *want[] = {
      "op 1 \"r\" reads bytes [0, 4096) of buffer \"A\" on device 0",
      "buffer \"A\": bytes [4096, 24576) (and other pieces) last written by "
      "op 0 \"w\" on device 0"};
  expect(g, 2, want);
  rp_graph_destroy(g);
}

Test(coh_fast, segment_table_and_search_agree) {
  grid_or_not(0);
  grid_or_not(1);
}
