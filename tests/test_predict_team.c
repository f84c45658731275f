/* Issue 33: operation costs at the replay's thread count. The overlapped
 * replay of a team takes each operation's time measured within the team
 * (rp_analysis_opts.team_us) with the contention in, applying no share
 * of a core nor bandwidth cap again; the team's share of its cores
 * measured during those replays withholds the prediction below 0.85;
 * rp_exec_profile_team() measures both. Exact figures from given costs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* open_memstream */
#endif
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include "reprise.h"
#include "util.h"

static unsigned char mem[2][64];

/* An op of pts points over buffer i that costs us at one thread (a
 * kernel that does nothing: only the given cost counts). */
static void kern(rp_graph *g, rp_buf x, uint64_t pts, double us) {
  static const rp_mode io[1] = {RP_INOUT};
  static rp_param ps[1];
  static rp_kernel k;
  if (!k.name)
    k = tu_nop_kernel("k", 1, io, ps);
  rp_arg arg = rp_arg_buf(rp_whole(x));
  rp_op_opts o = RP_OP_OPTS_WITH(.cost_us = us);
  TU_OK(g, rp_record_kernel(g, &k, 0, rp_dims3(pts, 1, 1), &arg, &o, NULL));
}

static rp_graph *graph_of(unsigned nbuf, rp_buf *b) {
  rp_graph *g = NULL;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  for (unsigned i = 0; i < nbuf; i++)
    TU_OK(g, rp_buffer_register(g, i ? "B1" : "B0", mem[i], 64, &b[i]));
  return g;
}

/* A team of 2 threads whose share of a core is 0.5 with both busy and
 * whose memory bandwidth is one 10 us kernel's draw (12.8 B/us). */
static void team_model(rp_model *m) {
  rp_model_init(m);
  snprintf(m->backend, sizeof m->backend, "test");
  snprintf(m->mode[0].name, sizeof m->mode[0].name, "parallel");
  snprintf(m->mode[1].name, sizeof m->mode[1].name, "serial");
  m->mode[1].host_issue = 1;
  m->nmode = 2;
  m->units[0] = 2;
  m->phys[0] = 0;
  m->host_units = 2;
  m->split_min = 100;
  m->split_efficiency = 0.5;
  m->mem1_gbps = m->mem_gbps = 0.0128;
}

static rp_analysis *analyse(rp_graph *g, const rp_model *m, const double *tus,
                            double share) {
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = m;
  o.team_us = tus;
  o.team_share = share;
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK, "%s", rp_last_error());
  return a;
}

#define EXACT(x, v)                                                            \
  cr_assert(fabs((x) - (v)) < 1e-9, #x " = %.17g, not %.17g", (double)(x),     \
            (double)(v))

static rp_graph *two_kernels(void) {
  rp_buf b[2];
  rp_graph *g = graph_of(2, b);
  kern(g, b[0], 16, 10);
  kern(g, b[1], 16, 10);
  TU_OK(g, rp_graph_end(g));
  return g;
}

Test(predict_team, team_costs_replace_the_modelled_contention) {
  rp_model m;
  team_model(&m);
  rp_graph *g = two_kernels();
  rp_summary s;
  /* Modelled: both busy at half a core and half the bandwidth: 20. */
  rp_analysis *a = analyse(g, &m, NULL, 0);
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 20);
  cr_assert_eq(s.team_costs, 0);
  rp_analysis_destroy(a);
  /* Timed within the team: 12 and 13 us, nothing applied again; the
   * two kernels are identical, so both take the median of their ratios
   * to their serial cost (1.2, 1.3): 12.5 (test_predict_pool). */
  const double tus[2] = {12, 13};
  a = analyse(g, &m, tus, 0);
  rp_analysis_summary(a, &s);
  EXACT(s.model_serial_us, 20); /* the serial costs */
  EXACT(s.model_overlap_us, 12.5);
  EXACT(s.predicted_speedup, 20.0 / 12.5);
  cr_assert_eq(s.team_costs, 2);
  cr_assert_eq(s.withheld, 0);
  double st, en;
  cr_assert_eq(rp_analysis_op_model(a, 0, &st, &en), RP_OK);
  EXACT(en, 12.5);
  rp_analysis_destroy(a);
  /* A negative entry: that one modelled. Beside the other (whose draw is
   * not counted) op 0 runs at half a core until 13 (6.5 done), then at a
   * whole one: 16.5. */
  const double half[2] = {-1, 13};
  a = analyse(g, &m, half, 0);
  rp_analysis_summary(a, &s);
  cr_assert_eq(s.team_costs, 1);
  cr_assert_eq(rp_analysis_op_model(a, 0, &st, &en), RP_OK);
  EXACT(en, 16.5);
  rp_analysis_destroy(a);
  /* task_us and the mode's op_us still come on top. */
  m.task_us = 1;
  m.mode[0].op_us = 2;
  a = analyse(g, &m, tus, 0);
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 2 + 12.5 + 1);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* Two independent kernels of given cost 10 us over their own buffers: a
 * split one (1000 points >= 100) and one of 16 points, one thread; the
 * split one first unless @p split_last. */
static rp_graph *split_and_one(int split_last) {
  rp_buf b[2];
  rp_graph *g = graph_of(2, b);
  kern(g, b[split_last], split_last ? 16 : 1000, 10);
  kern(g, b[!split_last], split_last ? 1000 : 16, 10);
  TU_OK(g, rp_graph_end(g));
  return g;
}

/* The model's overlapped time of g with team times @p tus. */
static double overlap_of(rp_graph *g, const rp_model *m, const double *tus) {
  rp_analysis *a = analyse(g, m, tus, 0);
  rp_summary s;
  rp_analysis_summary(a, &s);
  rp_analysis_destroy(a);
  return s.model_overlap_us;
}

/* A split kernel whose team time is its serial cost ran on one thread
 * (the other ran the independent kernel meanwhile): it holds one, and
 * the two overlap. At half its serial cost it held both (the test
 * below: 10 over 6 rounds to 2). */
Test(predict_team, split_kernel_holds_the_threads_it_used) {
  rp_model m;
  team_model(&m);
  rp_graph *g = split_and_one(0);
  const double beside[2] = {10, 10};
  EXACT(overlap_of(g, &m, beside), 10); /* side by side */
  const double alone[2] = {5, 10};      /* ran 2x faster: held both */
  EXACT(overlap_of(g, &m, alone), 15);  /* 5, then the other 10 */
  rp_graph_destroy(g);
}

/* A split kernel timed within the team ran over the free threads: it
 * holds them, and its split_us is in its time. */
Test(predict_team, split_kernel_holds_the_free_threads) {
  rp_model m;
  team_model(&m);
  m.split_us = 2;
  rp_graph *g = split_and_one(0);
  /* 10 / 6 = 1.67 threads: both for 4 us (2/3 of 6), then one. */
  const double tus[2] = {6, 10};
  EXACT(overlap_of(g, &m, tus), 14); /* 4, then the other 10 */
  rp_analysis *a = analyse(g, &m, tus, 0);
  double st, en;
  cr_assert_eq(rp_analysis_op_model(a, 1, &st, &en), RP_OK);
  EXACT(st, 4);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
  /* In the other order the unsplit one holds one thread: the split one
   * gets the other, its team time all the same. */
  g = split_and_one(1);
  const double rev[2] = {10, 6};
  EXACT(overlap_of(g, &m, rev), 10);
  rp_graph_destroy(g);
}

/* The text report of a (free it). */
static char *report(const rp_analysis *a) {
  char *t = NULL;
  size_t n = 0;
  FILE *fp = open_memstream(&t, &n);
  cr_assert_not_null(fp);
  cr_assert_eq(rp_analysis_write_text(a, fp), RP_OK);
  cr_assert_eq(fclose(fp), 0);
  return t;
}

Test(predict_team, a_team_kept_waiting_withholds) {
  rp_model m;
  team_model(&m);
  rp_graph *g = two_kernels();
  const double tus[2] = {12, 13};
  rp_summary s;
  rp_analysis *a = analyse(g, &m, tus, 0.5);
  rp_analysis_summary(a, &s);
  cr_assert_eq(s.withheld, 1);
  EXACT(s.team_share, 0.5);
  EXACT(s.predicted_speedup, 20.0 / 12.5); /* kept, not printed */
  char *t = report(a);
  cr_assert(strstr(t, "withheld: machine busy: the team of 2 got 50% of its "
                      "cores"),
            "%s", t);
  cr_assert(strstr(t, "team costs      2 operations"), "%s", t);
  free(t);
  rp_analysis_destroy(a);
  a = analyse(g, &m, tus, 0.85); /* at the line: predicted */
  rp_analysis_summary(a, &s);
  cr_assert_eq(s.withheld, 0);
  rp_analysis_destroy(a);
  /* One thread, or a replay in program order: never withheld. */
  m.in_order = 1;
  a = analyse(g, &m, tus, 0.3);
  rp_analysis_summary(a, &s);
  cr_assert_eq(s.withheld, 0);
  EXACT(s.predicted_speedup, 1);
  rp_analysis_destroy(a);
  /* A share outside [0, 1], a team time that is not finite: refused. */
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = &m;
  o.team_share = 1.5;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  const double inf[2] = {INFINITY, 1};
  o.team_share = 0;
  o.team_us = inf;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  rp_graph_destroy(g);
}

/* A caller compiled before team_us (its size ends at net_gbps) is
 * accepted, and what lies past its size is not read. */
Test(predict_team, older_layout_keeps_the_defaults) {
  rp_model m;
  team_model(&m);
  rp_graph *g = two_kernels();
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = &m;
  const double tus[2] = {12, 13};
  o.team_us = tus;
  o.team_share = 0.1;
  o.size = offsetof(rp_analysis_opts, team_us);
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK, "%s", rp_last_error());
  rp_summary s;
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 20);
  cr_assert_eq(s.withheld, 0);
  rp_analysis_destroy(a);
  o.size = offsetof(rp_analysis_opts, team_us) - 1;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  rp_graph_destroy(g);
}

/* rp_exec_profile_team on a real team: a host task that takes at least
 * 3 ms and one that adds to its buffer; the user's arrays are put back. */
static void slow(void *u, void *const *p) {
  (void)u;
  (void)p;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do
    clock_gettime(CLOCK_MONOTONIC, &t1);
  while ((t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3 <
         3000);
}

static void add(void *u, void *const *p) {
  (void)u;
  ((unsigned char *)p[0])[0] += 1;
}

/* The summary of exec x analysed with team times tus (an uncalibrated
 * model of its backend: the team's threads, no overheads). */
static rp_summary exec_summary(const rp_exec *x, const double *tus) {
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  rp_model m;
  rp_model_init(&m);
  cr_assert_eq(rp_analysis_opts_from_exec(&o, &m, NULL, x), RP_OK);
  o.team_us = tus;
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze_exec(x, &o, &a), RP_OK, "%s", rp_last_error());
  rp_summary s;
  rp_analysis_summary(a, &s);
  rp_analysis_destroy(a);
  return s;
}

Test(predict_team, profile_team_times_within_the_team, .timeout = 30) {
  const rp_backend *be = NULL;
  cr_assert_eq(rp_backend_find("openmp", &be), RP_OK);
  rp_buf b[2];
  rp_graph *g = graph_of(2, b);
  memset(mem, 0, sizeof mem);
  rp_access av = {rp_whole(b[0]), RP_INOUT}, aw = {rp_whole(b[1]), RP_INOUT};
  TU_OK(g, rp_record_host(g, slow, NULL, &aw, 1, NULL, NULL));
  TU_OK(g, rp_record_host(g, add, NULL, &av, 1, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  rp_exec_opts xo = RP_EXEC_OPTS_INIT;
  xo.nthreads = 2;
  rp_exec *x = NULL;
  cr_assert_eq(rp_exec_create(&x, g, be, &xo), RP_OK);
  double med[2], mn[2], mx[2], share = -1;
  cr_assert_eq(rp_exec_profile_team(x, 3, med, mn, mx, &share), RP_OK, "%s",
               rp_exec_error(x));
  cr_assert(med[0] >= 3000 && mn[0] >= 3000, "%g %g", med[0], mn[0]);
  cr_assert(mn[0] <= med[0] && med[0] <= mx[0]);
  cr_assert(mn[1] <= med[1] && med[1] <= mx[1] && med[1] < med[0]);
  cr_assert(share >= 0 && share <= 1, "%g", share);
  cr_assert_eq(mem[0][0], 0, "the user's array advanced: %d", mem[0][0]);
  cr_assert_eq(rp_exec_profile_team(x, 1001, med, NULL, NULL, NULL), RP_EINVAL);
  /* Fit for the analysis of the exec: both operations timed. */
  rp_summary s = exec_summary(x, med);
  cr_assert_eq(s.team_costs, 2);
  cr_assert(s.model_overlap_us >= med[0]);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* An exec that cut a kernel into chunks: a team time spans the recorded
 * operation, not a chunk, so the chunks are modelled; the operation kept
 * whole takes its team time. */
static void nop_body(const rp_kargs *a, const uint64_t lo[3],
                     const uint64_t hi[3]) {
  (void)a, (void)lo, (void)hi;
}

Test(predict_team, chunks_of_a_split_exec_are_modelled) {
  static const rp_param ps[1] = {{"a", RP_INOUT}};
  static const rp_kernel cut = {.size = sizeof(rp_kernel),
                                .name = "cut",
                                .nparams = 1,
                                .params = ps,
                                .cpu = nop_body,
                                .split_axis = RP_SPLIT_X,
                                .split_follow = 1};
  const rp_backend *be = NULL;
  cr_assert_eq(rp_backend_find("openmp", &be), RP_OK);
  rp_buf b[2];
  rp_graph *g = graph_of(2, b);
  rp_arg arg = rp_arg_buf(rp_whole(b[0]));
  TU_OK(g, rp_record_kernel(g, &cut, 0, rp_dims3(64, 1, 1), &arg, NULL, NULL));
  rp_access acc = {rp_whole(b[1]), RP_INOUT};
  TU_OK(g, rp_record_host(g, add, NULL, &acc, 1, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  const double tus[2] = {5, 7};
  for (unsigned split = 1; split <= 2; split++) {
    rp_exec_opts xo = RP_EXEC_OPTS_INIT;
    xo.nthreads = 2;
    xo.split = split == 2 ? 2 : 0;
    rp_exec *x = NULL;
    cr_assert_eq(rp_exec_create(&x, g, be, &xo), RP_OK, "%s", rp_last_error());
    cr_assert_eq(rp_exec_split_chunks(x, NULL, NULL), split);
    rp_summary s = exec_summary(x, tus);
    cr_assert_eq(s.team_costs, split == 2 ? 1 : 2, "split %u: %d", split,
                 s.team_costs);
    rp_exec_destroy(x);
  }
  rp_graph_destroy(g);
}
