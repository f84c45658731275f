/* Mode "mpi": the predicted time of a replay per rank
 * (rp__starpu_predict, issue 35), from the task lists and dependencies
 * every rank lowers (fake ranks, no StarPU or MPI) and a network model:
 * an exact figure on a two-rank graph worked out by hand, and the shape
 * of a stencil's prediction over 4 and 8 ranks. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include "examples.h"
#include "multidev.h"
#include "reprise.h"
#include "reprise/backend.h"
#include "reprise/kernel.h"
#include "rp_starpu.h"

RP_KERNEL(pr_touch, { RP_REGION_PTR(double, 0)[RP_X] += 1; })
static const rp_param pr_touch_params[] = {{"a", RP_INOUT}};
static const rp_kernel pr_touch_k = RP_KERNEL_DESC(pr_touch, pr_touch_params);

RP_KERNEL(pr_add, {
  RP_REGION_PTR(double, 1)[RP_X] += RP_REGION_PTR(const double, 0)[RP_X];
})
static const rp_param pr_add_params[] = {{"a", RP_IN}, {"b", RP_INOUT}};
static const rp_kernel pr_add_k = RP_KERNEL_DESC(pr_add, pr_add_params);

/* The plan of g by the reference backend (the placement and lowering of
 * mode "mpi" are computed from it, as test_starpu_chain does). */
static rp_exec *plan_of(rp_graph *g) {
  const rp_backend *ref;
  rp_exec *x;
  cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
  cr_assert_eq(rp_exec_create(&x, g, ref, NULL), RP_OK);
  return x;
}

/* The prediction of plan p on two ranks is exactly t0 and t1 us. */
static void two_ranks_are(const rp_plan *p, const rp__starpu_net *n,
                          const double *us, double t0, double t1) {
  double t[2];
  cr_assert_eq(rp__starpu_predict(p, 2, 0, n, us, t), RP_OK);
  cr_assert_float_eq(t[0], t0, 1e-9, "rank 0: %g, not %g", t[0], t0);
  cr_assert_float_eq(t[1], t1, 1e-9, "rank 1: %g, not %g", t[1], t1);
}

/* A: 2 rows of one double, distributed one row per rank. Device 0 (rank
 * 0) adds 1 to row 0; device 1 (rank 1) adds row 0 to row 1: one message
 * (row 0, 8 bytes) from rank 0 to rank 1. Each rank's row reaches its
 * device by a copy from its own host row, which that rank keeps in one
 * memory in the backend's own plan; in the reference's plan used here it
 * moves its row (8 us).
 * Model: task 2 us, request 3 us, launch 10 us, latency 5 us, 8 bytes per
 * us (1 us for the row), one worker; kernels 100 us (device 0) and 50 us
 * (device 1), every copy 8 us (a pack or unpack of the whole row: 8 us,
 * a copy within one memory: 0).
 * Rank 0: copy in 10 -> 20, kernel 20 -> 122, pack 122 -> 132, send
 *   132 -> 135 (the request), the message arriving at 135 + 5 + 1 = 141.
 * Rank 1: copy in 10 -> 20, receive 141 -> 144, unpack 144 -> 154, the
 *   kernel (after the unpack and the copy in) 154 -> 206. */
Test(starpu_predict, two_ranks_by_hand) {
  double a[2] = {1, 2};
  rp_graph *g;
  rp_buf A;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(rp_buffer_register_2d(g, "A", a, 2, 1, 8, &A), RP_OK);
  rp_arg a0 = rp_arg_buf(rp_box2_elems(A, 0, 1, 0, 1));
  rp_arg a01[2] = {rp_arg_buf(rp_box2_elems(A, 0, 1, 0, 1)),
                   rp_arg_buf(rp_box2_elems(A, 1, 2, 0, 1))};
  cr_assert_eq(
      rp_record_kernel(g, &pr_touch_k, 0, rp_dims3(1, 1, 1), &a0, NULL, NULL),
      RP_OK);
  cr_assert_eq(
      rp_record_kernel(g, &pr_add_k, 1, rp_dims3(1, 1, 1), a01, NULL, NULL),
      RP_OK);
  cr_assert_eq(rp_buffer_distribute(g, A, 2, NULL), RP_OK);
  cr_assert_eq(rp_graph_end(g), RP_OK);
  rp_exec *x = plan_of(g);
  uint32_t nn = rp_graph_num_nodes(g);
  double us[16];
  cr_assert_leq(nn, 16);
  unsigned nk = 0;
  for (rp_node v = 0; v < nn; v++) {
    rp_node_info ni;
    rp_node_info_get(g, v, &ni);
    us[v] = ni.type == RP_OP_KERNEL ? (nk++ ? 50 : 100) : 8;
  }
  rp__starpu_net net = {.latency_us = 5,
                        .gbps = 0.008,
                        .task_us = 2,
                        .msg_us = 3,
                        .launch_us = 10,
                        .workers = 1};
  const rp_plan *p = rp_exec_plan(x);
  two_ranks_are(p, &net, us, 135, 206);
  /* a slower network: rank 1 later by exactly as much */
  net.latency_us = 25;
  two_ranks_are(p, &net, us, 135, 226);
  /* bodies twice as long (the ranks sharing memory bandwidth), latency 5:
   * rank 0 copy in 10 -> 28, kernel -> 230, pack -> 248, send -> 251,
   * arriving at 257; rank 1 receive 257 -> 260, unpack -> 278, kernel
   * -> 380 */
  net.latency_us = 5;
  net.body_scale = 2;
  two_ranks_are(p, &net, us, 251, 380);
  net.body_scale = 1;
  /* figures that are no model */
  double t[2];
  net.task_us = -1;
  cr_assert_eq(rp__starpu_predict(p, 2, 0, &net, us, t), RP_EINVAL);
  net.task_us = 2;
  cr_assert_eq(rp__starpu_predict(p, 0, 0, &net, us, t), RP_EINVAL);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* Heat over `nr` ranks (one device and one part of each grid per rank),
 * `steps` steps; kernels 1000 us, copies 1 us per KB; the prediction per
 * rank, lowered as the backend does (whole 0) or as whole-image handles
 * order it (whole 1). */
static void heat_pred(unsigned nr, unsigned steps, int whole, double *t) {
  ex_heat2d hp = {16 * (uint64_t)nr, steps, nr, 0};
  double *u = calloc(hp.n * hp.n, 8), *v = calloc(hp.n * hp.n, 8);
  rp_graph *g;
  cr_assert(u && v);
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(ex_heat2d_record(g, &hp, u, v), RP_OK);
  for (rp_buf b = 0; b < 2; b++)
    cr_assert_eq(rp_buffer_distribute(g, b, nr, NULL), RP_OK);
  cr_assert_eq(rp_graph_end(g), RP_OK);
  rp_exec *x = plan_of(g);
  uint32_t nn = rp_graph_num_nodes(g);
  double *us = calloc(nn, sizeof *us);
  cr_assert(us);
  for (rp_node k = 0; k < nn; k++) {
    rp_node_info ni;
    rp_node_info_get(g, k, &ni);
    us[k] = ni.type == RP_OP_KERNEL ? 1000 : 1;
  }
  rp__starpu_net net = {.latency_us = 20,
                        .gbps = 1,
                        .task_us = 10,
                        .msg_us = 30,
                        .launch_us = 50,
                        .workers = 1};
  cr_assert_eq(rp__starpu_predict(rp_exec_plan(x), (int)nr, whole, &net, us, t),
               RP_OK);
  free(us);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(u);
  free(v);
}

/* Distributed heat, 6 steps: nothing grows with the rank: ranks 1 ..
 * nr - 1 within 200 us of each other (a fifth of a stencil: a few tasks,
 * requests and latencies; measured on 4 ranks 6877, 6888, 6899 us, on 8
 * from 6831 to 6902 us, rank 0 6816 and 6819 us); ordered as whole-image
 * handles order it (the chain before issue 35), the last rank is
 * predicted at least a stencil per rank later than rank 1 (measured:
 * about 1120 us more per rank). */
Test(starpu_predict, stencil_per_rank_does_not_grow_with_rank) {
  enum { STEPS = 6 };
  unsigned ranks[2] = {4, 8};
  for (unsigned k = 0; k < 2; k++) {
    unsigned nr = ranks[k];
    double t[8], w[8];
    heat_pred(nr, STEPS, 0, t);
    heat_pred(nr, STEPS, 1, w);
    /* at least the steps' stencils, at most a stencil more than rank 1 */
    for (unsigned r = 0; r < nr; r++) {
      cr_assert_geq(t[r], STEPS * 1000.0, "%u ranks, rank %u: %g", nr, r, t[r]);
      cr_assert_leq(t[r], t[1] + 1000, "%u ranks, rank %u: %g, rank 1: %g", nr,
                    r, t[r], t[1]);
    }
    for (unsigned r = 1; r < nr; r++)
      cr_assert_leq(fabs(t[r] - t[1]), 200,
                    "%u ranks, rank %u: %g, rank "
                    "1: %g",
                    nr, r, t[r], t[1]);
    cr_assert_geq(w[nr - 1], w[1] + (nr - 2) * 1000.0,
                  "whole-image "
                  "order, %u ranks: last rank %g, rank 1 %g",
                  nr, w[nr - 1], w[1]);
  }
}
