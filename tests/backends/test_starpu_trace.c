/* rp_exec_trace() and rp_exec_predict(): the starpu backend's breakdown
 * of a launch's time and its prediction per rank reach a program through
 * public calls (issue 34), equal to the backend's own
 * (rp__starpu_breakdown_get, rp__starpu_predict); a backend or mode that
 * has neither says so. */
#include <criterion/criterion.h>
#include <string.h>
#include "reprise/kernel.h"
#include "rp_starpu.h"
#include "util.h"

TestSuite(starpu_trace, .timeout = 60);

static rp_exec *starpu_exec(rp_graph *g, const char *mode) {
  const rp_backend *be;
  TU_OK(NULL, rp_backend_find("starpu", &be));
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.mode = mode;
  rp_exec *x;
  TU_OK(NULL, rp_exec_create(&x, g, be, &o));
  return x;
}

/* The public figures trace_* equal the backend's breakdown, field by
 * field. */
static void trace_equals_breakdown(const rp_exec *x) {
  rp__starpu_breakdown b;
  TU_OK(NULL, rp__starpu_breakdown_get(x, &b));
#define SAME(f) cr_assert_eq(tu_stat(x, "trace_" #f), (double)b.f, "trace_" #f)
  SAME(launches);
  SAME(replays);
  SAME(tasks);
  SAME(recvs);
  SAME(wall_us);
  SAME(body_us);
  SAME(halo_us);
  SAME(host_us);
  SAME(sched_us);
  SAME(recv_us);
  SAME(host_recv_us);
  SAME(submit_wait_us);
  SAME(other_us);
  SAME(submit_us);
  SAME(ready_lat_us);
  SAME(done_lat_us);
#undef SAME
}

Test(starpu_trace, traced_launches_reach_the_public_figures) {
  unsigned char a[64] = {1, 2, 3};
  rp_graph *g = tu_two_bumps(a);
  rp_exec *x = starpu_exec(g, "implicit");
  unsigned n = 0;
  TU_OK(NULL, rp_exec_stats(x, NULL, 0, &n));
  cr_assert_eq(n, 19 + 16, "the lowering's figures and the breakdown's");
  TU_OK(NULL, rp_exec_run(x, 1)); /* untraced */
  cr_assert_eq(tu_stat(x, "trace_launches"), 0);
  TU_OK(NULL, rp_exec_trace(x, 1));
  TU_OK(NULL, rp_exec_run(x, 3));
  TU_OK(NULL, rp_exec_run(x, 2));
  cr_assert_eq(tu_stat(x, "trace_launches"), 2);
  cr_assert_eq(tu_stat(x, "trace_replays"), 5);
  /* every replay stamps the exec's tasks */
  cr_assert_eq(tu_stat(x, "trace_tasks"), 5 * tu_stat(x, "tasks"));
  cr_assert_gt(tu_stat(x, "trace_wall_us"), 0);
  trace_equals_breakdown(x);
  /* stopped: a launch adds nothing */
  TU_OK(NULL, rp_exec_trace(x, 0));
  TU_OK(NULL, rp_exec_run(x, 1));
  cr_assert_eq(tu_stat(x, "trace_launches"), 2);
  /* started again: the totals from zero */
  TU_OK(NULL, rp_exec_trace(x, 1));
  cr_assert_eq(tu_stat(x, "trace_launches"), 0);
  cr_assert_eq(tu_stat(x, "trace_wall_us"), 0);
  TU_OK(NULL, rp_exec_run(x, 1));
  cr_assert_eq(tu_stat(x, "trace_replays"), 1);
  trace_equals_breakdown(x);
  /* the replays ran: m as 8 replays of the reference leave it */
  unsigned char r[64] = {1, 2, 3};
  rp_graph *rg = tu_two_bumps(r);
  const rp_backend *ref;
  rp_exec *rx;
  TU_OK(NULL, rp_backend_find("reference", &ref));
  TU_OK(NULL, rp_exec_create(&rx, rg, ref, NULL));
  TU_OK(NULL, rp_exec_run(rx, 8));
  cr_assert_arr_eq(a, r, 64);
  cr_assert_neq(a[0], 1);
  rp_exec_destroy(rx);
  rp_graph_destroy(rg);
  /* the layout is mode "mpi"'s */
  double v = 7;
  cr_assert_eq(rp_exec_stat_get(x, "workers", &v), RP_ENOTFOUND);
  cr_assert_eq(rp_exec_trace(NULL, 1), RP_EINVAL);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(starpu_trace, a_mode_or_backend_without_a_trace_says_so) {
  unsigned char a[64] = {1, 2, 3};
  rp_graph *g = tu_two_bumps(a);
  rp_exec *x = starpu_exec(g, "explicit");
  cr_assert_eq(rp_exec_trace(x, 1), RP_ENOTSUP);
  cr_assert(strstr(rp_last_error(), "rp_exec_trace: starpu: mode \"explicit\""),
            "%s", rp_last_error());
  unsigned n = 0;
  TU_OK(NULL, rp_exec_stats(x, NULL, 0, &n));
  cr_assert_eq(n, 19, "no trace figures in mode \"explicit\"");
  rp_exec_destroy(x);
  const rp_backend *ref;
  TU_OK(NULL, rp_backend_find("reference", &ref));
  TU_OK(NULL, rp_exec_create(&x, g, ref, NULL));
  cr_assert_eq(rp_exec_trace(x, 1), RP_ENOTSUP);
  cr_assert(strstr(rp_last_error(), "reference backend does not trace"), "%s",
            rp_last_error());
  double us[8] = {0}, t[2];
  cr_assert_eq(rp_exec_predict(x, NULL, 0, us, 2, t), RP_ENOTSUP);
  cr_assert(strstr(rp_last_error(), "reference backend does not predict"), "%s",
            rp_last_error());
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* rp_exec_predict(x, model) equals rp__starpu_predict on x's plan with
 * the same model, n. */
static void predict_equals(const rp_exec *x, const rp_exec_stat *m, unsigned nm,
                           const rp__starpu_net *n, int whole,
                           const double *us) {
  double pub[3] = {-1, -1, -1}, own[3] = {-2, -2, -2};
  TU_OK(NULL, rp_exec_predict(x, m, nm, us, 3, pub));
  TU_OK(NULL, rp__starpu_predict(rp_exec_plan(x), 3, whole, n, us, own));
  for (int r = 0; r < 3; r++)
    cr_assert_eq(pub[r], own[r], "rank %d: %g against %g (%u parameters)", r,
                 pub[r], own[r], nm);
}

Test(starpu_trace, the_public_prediction_is_the_backends) {
  unsigned char a[64] = {1, 2, 3};
  rp_graph *g = tu_two_bumps(a);
  rp_exec *x = starpu_exec(g, "implicit");
  uint32_t nn = rp_exec_plan(x)->nnode;
  double us[64];
  cr_assert_leq(rp_graph_num_nodes(g), 64);
  for (rp_node v = 0; v < rp_graph_num_nodes(g); v++)
    us[v] = 100 + 10.0 * v;
  cr_assert_gt(nn, 0);
  /* the defaults: every figure 0, one worker, bodies as profiled */
  rp__starpu_net n = {0, 0, 0, 0, 0, 1, 1};
  predict_equals(x, NULL, 0, &n, 0, us);
  /* each parameter by its name reaches its own member: set alone, it
   * gives what the member alone gives */
  static const char *const names[] = {"latency_us", "gbps",      "task_us",
                                      "msg_us",     "launch_us", "body_scale"};
  double *const member[] = {&n.latency_us, &n.gbps,      &n.task_us,
                            &n.msg_us,     &n.launch_us, &n.body_scale};
  for (unsigned i = 0; i < 6; i++) {
    rp__starpu_net one = {0, 0, 0, 0, 0, 1, 1};
    n = one;
    *member[i] = 3 + i;
    rp_exec_stat m = {names[i], 3 + i};
    predict_equals(x, &m, 1, &n, 0, us);
  }
  /* all at once, the workers and the order of whole-image handles */
  rp_exec_stat all[] = {{"latency_us", 5},   {"gbps", 0.008},   {"task_us", 2},
                        {"msg_us", 3},       {"launch_us", 10}, {"workers", 2},
                        {"body_scale", 1.5}, {"whole", 1}};
  rp__starpu_net full = {5, 0.008, 2, 3, 10, 2, 1.5};
  predict_equals(x, all, 8, &full, 1, us);
  /* launch_us delays every rank by exactly itself */
  double t0[3], t1[3];
  rp_exec_stat l = {"launch_us", 1000};
  TU_OK(NULL, rp_exec_predict(x, NULL, 0, us, 3, t0));
  TU_OK(NULL, rp_exec_predict(x, &l, 1, us, 3, t1));
  for (int r = 0; r < 3; r++)
    cr_assert_eq(t1[r], t0[r] + 1000, "rank %d", r);
  /* figures that are no model */
  rp_exec_stat bad[] = {{"latency", 5},
                        {"task_us", -1},
                        {"workers", 1.5},
                        {"whole", 2},
                        {NULL, 0}};
  for (unsigned i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_assert_eq(rp_exec_predict(x, &bad[i], 1, us, 3, t0), RP_EINVAL, "%s",
                 bad[i].name ? bad[i].name : "NULL");
    cr_assert(strstr(rp_last_error(), "rp_exec_predict: starpu: "), "%s",
              rp_last_error());
  }
  cr_assert(strstr(rp_last_error(), "no model parameter \"(null)\""), "%s",
            rp_last_error());
  cr_assert_eq(rp_exec_predict(x, NULL, 0, us, 0, t0), RP_EINVAL);
  cr_assert_eq(rp_exec_predict(x, NULL, 1, us, 3, t0), RP_EINVAL);
  cr_assert_eq(rp_exec_predict(x, NULL, 0, NULL, 3, t0), RP_EINVAL);
  cr_assert_eq(rp_exec_predict(x, NULL, 0, us, 3, NULL), RP_EINVAL);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}
