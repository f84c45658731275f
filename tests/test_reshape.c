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

#define BLK 256u /* bytes of a block */
#define NB 16u   /* blocks */
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
                 rp_arg_i64((int64_t)(b * BLK)),
                 rp_arg_i64((int64_t)(b * BLK))};
  TU_OK(w->g,
        rp_record_kernel(w->g, &tu_mix, 0, rp_dims3(BLK, 1, 1), a, NULL, NULL));
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
    TU_OK(w->g, rp_record_kernel(w->g, &tu_bump, 0, rp_dims3(BYTES, 1, 1), a,
                                 NULL, NULL));
  }
  for (unsigned b = 0; b < NB; b++) {
    if (b == bump) {
      w->h = (tu_host_arg){b * BLK, BLK};
      rp_access acc = {rp_bytes(X, b * BLK, BLK), RP_INOUT};
      TU_OK(w->g,
            rp_record_host(w->g, tu_host_bump, &w->h, &acc, 1, NULL, NULL));
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
static int check_on(wl *w, const rp_backend *be, size_t t, uint32_t *merged,
                    uint32_t *split) {
  uint8_t wx[BYTES], wy[BYTES];
  fill(w);
  TU_OK(w->g, rp_replay_reference(w->g, 2));
  memcpy(wx, w->x, BYTES);
  memcpy(wy, w->y, BYTES);
  rp_exec *x;
  rp_exec_opts eo = RP_EXEC_OPTS_INIT;
  eo.reshape_copies = t;
  fill(w);
  cr_assert_eq(rp_exec_create(&x, w->g, be, &eo), RP_OK, "%s", rp_last_error());
  int on = rp_exec_copies_reshaped(x, merged, split);
  cr_assert_eq(rp_exec_run(x, 2), RP_OK, "%s", rp_exec_error(x));
  cr_assert(!memcmp(w->x, wx, BYTES), "%s: X differs", be->name);
  cr_assert(!memcmp(w->y, wy, BYTES), "%s: Y differs", be->name);
  rp_exec_destroy(x);
  return on;
}

static void check(wl *w, const char *be_name, size_t t, uint32_t *merged,
                  uint32_t *split) {
  const rp_backend *be;
  cr_assert_eq(rp_backend_find(be_name, &be), RP_OK);
  check_on(w, be, t, merged, split);
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
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "after X's copy", .cost_us = -1,
                                 .after = &copy_x, .nafter = 1);
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

/* ---- The backend's default (issue 28): a backend that pays per copy
 * (RP_BACKEND_RESHAPE_COPIES, as cuda) reshapes with reshape_copies 0;
 * RP_EXEC_RESHAPE_NONE keeps the copies as recorded there. The reference
 * backend's table with that flag stands for it. */
extern const rp_backend rp_backend_reference;

static void run_on(wl *w, const rp_backend *be, size_t t, uint32_t *merged,
                   int *reshaped) {
  *reshaped = check_on(w, be, t, merged, NULL);
}

Test(reshape, default_on_a_backend_that_pays_per_copy) {
  wl w;
  uint32_t m = 0, m_auto = 0;
  int on = 0;
  rp_backend per_copy = rp_backend_reference;
  per_copy.flags |= RP_BACKEND_RESHAPE_COPIES;
  record(&w, 0xffffu, NB);
  run_on(&w, &per_copy, 0, &m, &on);
  cr_assert_eq(on, 1);
  run_on(&w, &per_copy, RP_EXEC_RESHAPE_AUTO, &m_auto, &on);
  cr_assert_eq(m, m_auto);
  cr_assert_gt(m, 0);
  run_on(&w, &per_copy, RP_EXEC_RESHAPE_NONE, &m, &on);
  cr_assert_eq(on, 0);
  cr_assert_eq(m, 0);
  /* Without the flag 0 stays "as recorded". */
  run_on(&w, &rp_backend_reference, 0, &m, &on);
  cr_assert_eq(on, 0);
  rp_graph_destroy(w.g);
}

/* ---- Runs of larger copies (RP_EXEC_RESHAPE_AUTO): 8 pieces of PIECE
 * bytes of A come in, one per block kernel; each kernel is followed by
 * another kernel (feeds), or by a copy of its block back (pipeline). */
#define PIECE (512u * 1024u) /* above the 256 KiB threshold */
#define NPIECE 8u

static void record_run(rp_graph **g, uint8_t *a, uint8_t *b, int pipeline,
                       size_t piece) {
  rp_buf A, B;
  TU_OK(NULL, rp_graph_create(g, 0));
  TU_OK(*g, rp_buffer_register(*g, "A", a, piece * NPIECE, &A));
  TU_OK(*g, rp_buffer_register(*g, "B", b, piece * NPIECE, &B));
  for (unsigned i = 0; i < NPIECE; i++) {
    rp_arg k[4] = {rp_arg_buf(rp_bytes(A, i * piece, 256)),
                   rp_arg_buf(rp_bytes(B, i * piece, 256)),
                   rp_arg_i64((int64_t)(i * piece)),
                   rp_arg_i64((int64_t)(i * piece))};
    /* The kernel reads the whole piece (coherence brings it in whole). */
    k[0] = rp_arg_buf(rp_bytes(A, i * piece, piece));
    TU_OK(*g,
          rp_record_kernel(*g, &tu_mix, 0, rp_dims3(256, 1, 1), k, NULL, NULL));
    if (pipeline)
      TU_OK(*g, rp_record_sync_host(*g, rp_bytes(B, i * piece, 256), NULL));
  }
  if (!pipeline) /* each block then feeds one kernel over all of B */
    for (unsigned i = 0; i < NPIECE; i++) {
      rp_arg k[2] = {rp_arg_buf(rp_bytes(B, i * piece, 256)),
                     rp_arg_i64((int64_t)(i * piece))};
      TU_OK(*g, rp_record_kernel(*g, &tu_bump, 0, rp_dims3(256, 1, 1), k, NULL,
                                 NULL));
    }
  TU_OK(*g, rp_record_sync_host(*g, rp_whole(B), NULL));
  TU_OK(*g, rp_graph_end(*g));
}

/* How many copies of A's run merged with threshold t; results checked
 * against the reference replay of the graph as recorded. */
static uint32_t run_merged(int pipeline, size_t piece, size_t t) {
  size_t n = piece * NPIECE;
  uint8_t *a = malloc(n), *b = malloc(n), *wb = malloc(n);
  cr_assert(a && b && wb);
  for (size_t i = 0; i < n; i++)
    a[i] = (uint8_t)(i * 7 + 1), b[i] = (uint8_t)(i * 13 + 5);
  rp_graph *g;
  record_run(&g, a, b, pipeline, piece);
  TU_OK(g, rp_replay_reference(g, 1));
  memcpy(wb, b, n);
  for (size_t i = 0; i < n; i++)
    b[i] = (uint8_t)(i * 13 + 5);
  rp_exec *x;
  rp_exec_opts eo = RP_EXEC_OPTS_INIT;
  eo.reshape_copies = t;
  cr_assert_eq(rp_exec_create(&x, g, &rp_backend_reference, &eo), RP_OK, "%s",
               rp_last_error());
  uint32_t m = 0;
  rp_exec_copies_reshaped(x, &m, NULL);
  cr_assert_eq(rp_exec_run(x, 1), RP_OK, "%s", rp_exec_error(x));
  cr_assert(!memcmp(b, wb, n), "B differs from the reference");
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(a);
  free(b);
  free(wb);
  return m;
}

Test(reshape, a_run_feeding_only_kernels_merges, .timeout = 30) {
  /* 8 x 512 KiB feeding kernels that feed kernels: one copy. */
  cr_assert_eq(run_merged(0, PIECE, RP_EXEC_RESHAPE_AUTO), NPIECE - 1);
  /* An explicit threshold keeps the size rule only. */
  cr_assert_eq(run_merged(0, PIECE, 256 * 1024), 0);
}

Test(reshape, a_run_feeding_a_pipeline_stays, .timeout = 30) {
  /* Each piece's kernel is followed by its copy back: pipelined. */
  cr_assert_eq(run_merged(1, PIECE, RP_EXEC_RESHAPE_AUTO), 0);
}

Test(reshape, a_run_past_16_mib_stays, .timeout = 30) {
  /* 8 x 4 MiB = 32 MiB: past the run's cap. */
  cr_assert_eq(run_merged(0, 4u << 20, RP_EXEC_RESHAPE_AUTO), 0);
}

/* ---- rp_analyze_exec: the graph an exec replays, with the costs given
 * per recorded operation carried onto it. */
Test(reshape, the_analysis_describes_the_reshaped_graph) {
  wl w;
  record(&w, 0xffffu, NB);
  uint32_t nop = rp_graph_num_nodes(w.g);
  double *us = calloc(nop, sizeof *us);
  cr_assert(us);
  for (uint32_t n = 0; n < nop; n++)
    us[n] = 1.0 + n;
  rp_exec *x;
  rp_exec_opts eo = RP_EXEC_OPTS_INIT;
  eo.reshape_copies = 4096;
  cr_assert_eq(rp_exec_create(&x, w.g, &rp_backend_reference, &eo), RP_OK);
  uint32_t merged = 0;
  cr_assert(rp_exec_copies_reshaped(x, &merged, NULL));
  const rp_graph *rg = rp_exec_graph(x);
  cr_assert_eq(rp_graph_num_nodes(rg), nop - merged);
  /* Every replayed op maps back, in program order; merged-away copies
   * carry no cost, the rest theirs: serial = the sum over kept ops. */
  double want = 0;
  rp_node prev = 0;
  for (rp_node m = 0; m < rp_graph_num_nodes(rg); m++) {
    rp_node u = rp_exec_op_origin(x, m);
    cr_assert_neq(u, RP_NONE);
    cr_assert_geq(u, prev);
    prev = u;
    want += us[u];
  }
  cr_assert_eq(rp_exec_op_origin(x, rp_graph_num_nodes(rg)), RP_NONE);
  rp_analysis_opts ao;
  rp_analysis_opts_init(&ao);
  ao.measured_us = us;
  rp_analysis *an;
  cr_assert_eq(rp_analyze_exec(x, &ao, &an), RP_OK);
  rp_summary sm;
  rp_analysis_summary(an, &sm);
  cr_assert_float_eq(sm.serial_us, want, 1e-9);
  rp_analysis_destroy(an);
  rp_exec_destroy(x);
  free(us);
  rp_graph_destroy(w.g);
}
