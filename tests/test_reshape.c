/* Copies reshaped (rp_exec_opts.reshape_copies): exact counts of what is
 * merged and split, exactly which recorded copies disappear (their profile
 * is zero, the merged copy's is not), copies never moved across what they
 * depend on nor over a gap, copies back split only behind independent
 * writers, and results byte-identical to the reference
 * replay of the graph as recorded on every CPU backend. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"
#include "reprise/backend.h"
#include "util.h"

#define BLK 256u            /* bytes of a block */
#define NB 16u              /* blocks */
#define BYTES (BLK * NB)

typedef struct wl {
  rp_graph *g;
  uint8_t x[BYTES], y[BYTES];
  tu_host_arg h;
} wl;

static void fill(wl *w) {
  for (unsigned i = 0; i < BYTES; i++) {
    w->x[i] = (uint8_t)(i * 37 + 11);
    w->y[i] = (uint8_t)(i * 101 + 3);
  }
}

/* Y block b = 3 Y + X block b + 1 on device 0. */
static void block(wl *w, rp_buf X, rp_buf Y, unsigned b) {
  rp_arg a[4] = {rp_arg_buf(rp_bytes(X, b * BLK, BLK)),
                 rp_arg_buf(rp_bytes(Y, b * BLK, BLK)),
                 rp_arg_i64((int64_t)(b * BLK)), rp_arg_i64((int64_t)(b * BLK))};
  TU_OK(w->g, rp_record_kernel(w->g, &tu_mix, 0, rp_dims3(BLK, 1, 1), a,
                               NULL, NULL));
}

/* The blocks in `which` (a bit per block), with a host task bumping X's
 * block `bump` before the block after it when bump < NB, after one kernel
 * bumping all of Y on the device when `common`; then Y synced back
 * whole. */
static void record_with(wl *w, uint32_t which, unsigned bump, int common) {
  rp_buf X, Y;
  fill(w);
  TU_OK(NULL, rp_graph_create(&w->g, 0));
  TU_OK(w->g, rp_buffer_register(w->g, "X", w->x, BYTES, &X));
  TU_OK(w->g, rp_buffer_register(w->g, "Y", w->y, BYTES, &Y));
  if (common) {
    rp_arg a[2] = {rp_arg_buf(rp_bytes(Y, 0, BYTES)), rp_arg_i64(0)};
    TU_OK(w->g, rp_record_kernel(w->g, &tu_bump, 0, rp_dims3(BYTES, 1, 1),
                                 a, NULL, NULL));
  }
  for (unsigned b = 0; b < NB; b++) {
    if (b == bump) {
      w->h = (tu_host_arg){b * BLK, BLK};
      rp_access acc = {rp_bytes(X, b * BLK, BLK), RP_INOUT};
      TU_OK(w->g, rp_record_host(w->g, tu_host_bump, &w->h, &acc, 1, NULL,
                                 NULL));
    }
    if (which >> b & 1u)
      block(w, X, Y, b);
  }
  TU_OK(w->g, rp_record_sync_host(w->g, rp_whole(Y), NULL));
  TU_OK(w->g, rp_graph_end(w->g));
}

static void record(wl *w, uint32_t which, unsigned bump) {
  record_with(w, which, bump, 0);
}

/* Replays the graph twice on backend `be` with threshold `t`: the exec's
 * counts, X and Y after it; compared with the reference replay of the
 * graph as recorded from the same start. */
static void check(wl *w, const char *be_name, size_t t, uint32_t *merged,
                  uint32_t *split) {
  uint8_t wx[BYTES], wy[BYTES];
  fill(w);
  TU_OK(w->g, rp_replay_reference(w->g, 2));
  memcpy(wx, w->x, BYTES);
  memcpy(wy, w->y, BYTES);
  const rp_backend *be;
  rp_exec *x;
  rp_exec_opts eo = RP_EXEC_OPTS_INIT;
  eo.reshape_copies = t;
  cr_assert_eq(rp_backend_find(be_name, &be), RP_OK);
  fill(w);
  cr_assert_eq(rp_exec_create(&x, w->g, be, &eo), RP_OK, "%s",
               rp_last_error());
  rp_exec_copies_reshaped(x, merged, split);
  cr_assert_eq(rp_exec_run(x, 2), RP_OK, "%s", rp_exec_error(x));
  cr_assert(!memcmp(w->x, wx, BYTES), "%s: X differs", be_name);
  cr_assert(!memcmp(w->y, wy, BYTES), "%s: Y differs", be_name);
  rp_exec_destroy(x);
}

static uint32_t merged_on_every_backend(wl *w, size_t t, uint32_t *split) {
  uint32_t m = 0, s = 0, m2, s2;
  check(w, "reference", t, &m, &s);
  check(w, "openmp", t, &m2, &s2);
  cr_assert_eq(m2, m);
  cr_assert_eq(s2, s);
  *split = s;
  return m;
}

Test(reshape, small_copies_in_merge_into_one_per_buffer) {
  wl w;
  uint32_t split;
  record(&w, 0xffffu, NB);
  /* 16 copies in of X and 16 of Y (256 bytes each): 15 + 15 merged at a
   * threshold above 256; the copy back (16 writers of 256 bytes) is not
   * split below it. */
  cr_assert_eq(merged_on_every_backend(&w, 4096, &split), 30);
  cr_assert_eq(split, 0);
  /* Exactly which disappear: the first copy of each buffer carries the
   * whole buffer, the other 15 take no time at all. */
  const rp_backend *ref;
  rp_exec *x;
  rp_exec_opts eo = RP_EXEC_OPTS_INIT;
  eo.reshape_copies = 4096;
  cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
  cr_assert_eq(rp_exec_create(&x, w.g, ref, &eo), RP_OK);
  uint32_t n = rp_graph_num_nodes(w.g), copies_in = 0, kept = 0;
  double *us = calloc(n, sizeof *us);
  cr_assert_eq(rp_exec_profile(x, us), RP_OK);
  for (rp_node i = 0; i < n; i++) {
    rp_node_info ni;
    rp_node_info_get(w.g, i, &ni);
    if (ni.type != RP_OP_COPY_H2D)
      continue;
    copies_in++;
    kept += us[i] > 0;
  }
  cr_assert_eq(copies_in, 32);
  cr_assert_eq(kept, 2);
  free(us);
  rp_exec_destroy(x);
  rp_graph_destroy(w.g);
}

Test(reshape, copy_back_splits_per_writer) {
  wl w;
  uint32_t split;
  record(&w, 0xffffu, NB);
  /* At 256 bytes the copies in (256 each) do not average fewer: none
   * merged; the copy back splits into its 16 writers' blocks. */
  cr_assert_eq(merged_on_every_backend(&w, BLK, &split), 0);
  cr_assert_eq(split, 1);
  /* One byte more: the blocks fall short of it, so the copies in merge
   * and the copy back is not split. */
  cr_assert_eq(merged_on_every_backend(&w, BLK + 1, &split), 30);
  cr_assert_eq(split, 0);
  rp_graph_destroy(w.g);
}

Test(reshape, copy_back_whole_behind_a_common_step) {
  wl w;
  uint32_t split;
  /* One kernel over all of Y before the blocks: the 16 writers of the
   * copy back share it as an ancestor and end together: not split. X's
   * 16 copies in still merge at a threshold above 256 bytes. */
  record_with(&w, 0xffffu, NB, 1);
  cr_assert_eq(merged_on_every_backend(&w, BLK, &split), 0);
  cr_assert_eq(split, 0);
  cr_assert_eq(merged_on_every_backend(&w, 4096, &split), 15);
  cr_assert_eq(split, 0);
  rp_graph_destroy(w.g);
}

Test(reshape, never_across_a_host_write) {
  wl w;
  uint32_t split;
  /* Blocks 0, 1, 2; the host bumps X's block 1 between blocks 0 and 1, so
   * X's copy of block 1 must stay after it: X's copies of blocks 1 and 2
   * merge (block 2's depends on nothing), not with block 0's; Y's three
   * copies merge. */
  record(&w, 0x7u, 1);
  cr_assert_eq(merged_on_every_backend(&w, (size_t)1 << 40, &split), 3);
  cr_assert_eq(split, 0);
  rp_graph_destroy(w.g);
}

/* Records the 4 first blocks with a host task after X's copy in of block
 * `named` (an explicit dependency on an inserted copy). */
static void record_after(wl *w, unsigned named) {
  rp_buf X, Y;
  fill(w);
  TU_OK(NULL, rp_graph_create(&w->g, 0));
  TU_OK(w->g, rp_buffer_register(w->g, "X", w->x, BYTES, &X));
  TU_OK(w->g, rp_buffer_register(w->g, "Y", w->y, BYTES, &Y));
  rp_node copy_x = RP_NONE;
  for (unsigned b = 0; b < 4; b++) {
    rp_node first = rp_graph_num_nodes(w->g);
    block(w, X, Y, b);
    if (b == named)
      copy_x = first; /* the copies come before their kernel, X's first */
  }
  rp_node_info ni;
  rp_node_info_get(w->g, copy_x, &ni);
  cr_assert(ni.inserted && ni.type == RP_OP_COPY_H2D, "%s", ni.name);
  w->h = (tu_host_arg){BYTES - 1, 1}; /* the function gets Y's base */
  rp_access acc = {rp_bytes(Y, BYTES - 1, 1), RP_INOUT};
  rp_op_opts o = {"after X's copy", -1, &copy_x, 1};
  TU_OK(w->g, rp_record_host(w->g, tu_host_bump, &w->h, &acc, 1, &o, NULL));
  TU_OK(w->g, rp_record_sync_host(w->g, rp_whole(Y), NULL));
  TU_OK(w->g, rp_graph_end(w->g));
}

Test(reshape, a_copy_named_by_an_explicit_dependency_stays) {
  wl w;
  uint32_t split;
  /* X's copies of blocks 0..3: block 2's is named by an `after`, so it
   * stays and leads a group of its own: {0, 1} and {2, 3} merge (2
   * merged); Y's four merge into one (3). */
  record_after(&w, 2);
  cr_assert_eq(merged_on_every_backend(&w, (size_t)1 << 40, &split), 5);
  cr_assert_eq(split, 0);
  rp_graph_destroy(w.g);
}

Test(reshape, never_over_a_gap) {
  wl w;
  uint32_t split;
  /* Blocks 0 and 2: the copies of X and of Y leave block 1 between them,
   * whose device bytes a merged copy would overwrite: nothing merged. */
  record(&w, 0x5u, NB);
  cr_assert_eq(merged_on_every_backend(&w, (size_t)1 << 40, &split), 0);
  cr_assert_eq(split, 0);
  rp_graph_destroy(w.g);
}

Test(reshape, off_by_default) {
  wl w;
  uint32_t m = 1, s = 1;
  record(&w, 0xffffu, NB);
  check(&w, "reference", 0, &m, &s);
  cr_assert_eq(m, 0);
  cr_assert_eq(s, 0);
  const rp_backend *ref;
  rp_exec *x;
  cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
  cr_assert_eq(rp_exec_create(&x, w.g, ref, NULL), RP_OK);
  cr_assert_eq(rp_exec_copies_reshaped(x, NULL, NULL), 0);
  cr_assert_eq(rp_exec_copies_reshaped(NULL, &m, &s), 0);
  cr_assert_eq(m + s, 0);
  rp_exec_destroy(x);
  rp_graph_destroy(w.g);
}
