/* Mode "mpi": no chain through the ranks within a step (issue 35), seen
 * in the task lists and dependencies every rank lowers (fake ranks, no
 * StarPU or MPI: rp__starpu_msg_depth). The run on 4 real ranks is
 * tests/backends/starpu_mpi_chain.c. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "examples.h"
#include "multidev.h"
#include "reprise.h"
#include "reprise/backend.h"
#include "rp_starpu.h"

/* The heat graph of `steps` steps over `nr` devices (one per rank), its
 * grids distributed one part per rank or not, and its plan by the
 * reference backend; the longest chain of messages per rank, lowered as
 * the backend does (whole 0) or as whole-image handles would (whole 1). */
static void heat_depth(unsigned nr, unsigned steps, int dist, int whole,
                       uint32_t *depth) {
  ex_heat2d hp = {6 * (uint64_t)nr, steps, nr, 0};
  double *u = malloc(hp.n * hp.n * 8), *v = malloc(hp.n * hp.n * 8);
  rp_graph *g;
  rp_exec *x;
  const rp_backend *ref;
  cr_assert(u && v);
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(ex_heat2d_record(g, &hp, u, v), RP_OK);
  for (rp_buf b = 0; dist && b < 2; b++)
    cr_assert_eq(rp_buffer_distribute(g, b, nr, NULL), RP_OK);
  cr_assert_eq(rp_graph_end(g), RP_OK);
  cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
  cr_assert_eq(rp_exec_create(&x, g, ref, NULL), RP_OK);
  cr_assert_eq(rp__starpu_msg_depth(rp_exec_plan(x), (int)nr, whole, depth),
               RP_OK);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(u);
  free(v);
}

/* Heat, 4 steps, distributed grids: every rank's longest chain of
 * messages is at most one per step plus the first step's host rows (the
 * steps' halos; measured: 4 on rank 0, 5 on the others, from 3 ranks to
 * 16); ordered as whole-image handles order it (before issue 35), rank r's
 * is r longer than rank 0's (7 + r): a chain through the ranks. */
Test(starpu_chain, heat_messages_wait_for_neighbours_only) {
  enum { STEPS = 4, NK = 4 };
  unsigned ranks[NK] = {3, 4, 8, 16};
  uint32_t d[16], w[16];
  for (unsigned k = 0; k < NK; k++) {
    unsigned nr = ranks[k];
    heat_depth(nr, STEPS, 1, 0, d);
    heat_depth(nr, STEPS, 1, 1, w);
    for (unsigned r = 0; r < nr; r++) {
      cr_assert_leq(d[r], STEPS + 1,
                    "%u ranks, rank %u: %u messages in a "
                    "row",
                    nr, r, d[r]);
      cr_assert_leq(d[r], d[0] + 1,
                    "%u ranks, rank %u: %u messages in a "
                    "row, rank 0: %u",
                    nr, r, d[r], d[0]);
      /* whole-image handles: one more per rank (measured: 7 + r) */
      cr_assert_geq(w[r], w[0] + r,
                    "whole-image order, %u ranks, rank "
                    "%u: %u, rank 0: %u",
                    nr, r, w[r], w[0]);
    }
  }
}

/* The same in the replicated form (rank 0 scatters and gathers): the
 * gather adds its hop, nothing grows with the ranks. */
Test(starpu_chain, replicated_heat_has_no_chain) {
  enum { STEPS = 3 };
  uint32_t d3[3], d8[8], w8[8];
  heat_depth(3, STEPS, 0, 0, d3);
  heat_depth(8, STEPS, 0, 0, d8);
  heat_depth(8, STEPS, 0, 1, w8);
  uint32_t m3 = 0, m8 = 0;
  for (unsigned r = 0; r < 3; r++)
    m3 = d3[r] > m3 ? d3[r] : m3;
  for (unsigned r = 0; r < 8; r++)
    m8 = d8[r] > m8 ? d8[r] : m8;
  cr_assert_eq(m8, m3, "longest chain: %u on 8 ranks, %u on 3", m8, m3);
  cr_assert_gt(w8[7], m8, "whole-image order: %u, byte spans: %u", w8[7], m8);
}
