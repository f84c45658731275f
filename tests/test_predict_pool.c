/* Issue 33: a prediction that two identical runs agree on. Identical
 * operations share the median of their team time over their serial cost
 * (src/analyze/pool.c), and a split kernel holds its extra thread for the
 * share of its time it used it (src/analyze/predict.c), so that a noisy
 * profile moves the prediction by little and smoothly. No timing here:
 * the profiles are drawn from a seeded generator, the figures exact. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"
#include "util.h"

#define EXACT(x, v)                                                            \
  cr_assert(fabs((x) - (v)) < 1e-9, #x " = %.17g, not %.17g", (double)(x),     \
            (double)(v))

static unsigned char mem[9][64];

/* A kernel named @p name of @p pts points over buffer x, given cost us. */
static void kern(rp_graph *g, const char *name, rp_buf x, uint64_t pts,
                 double us) {
  static const rp_mode io[1] = {RP_INOUT};
  static rp_param ps[1];
  static rp_kernel k[2];
  int i = strcmp(name, "k") != 0;
  if (!k[i].name)
    k[i] = tu_nop_kernel(name, 1, io, ps);
  rp_arg arg = rp_arg_buf(rp_whole(x));
  rp_op_opts o = RP_OP_OPTS_WITH(.cost_us = us);
  TU_OK(g, rp_record_kernel(g, &k[i], 0, rp_dims3(pts, 1, 1), &arg, &o, NULL));
}

static rp_graph *graph_of(unsigned nbuf, rp_buf *b) {
  rp_graph *g = NULL;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  for (unsigned i = 0; i < nbuf; i++) {
    char name[8];
    snprintf(name, sizeof name, "B%u", i);
    TU_OK(g, rp_buffer_register(g, name, mem[i], 64, &b[i]));
  }
  return g;
}

/* A team of @p threads threads, no overheads: only the costs count. */
static rp_model team_of(unsigned threads) {
  rp_model m;
  rp_model_init(&m);
  strcpy(m.backend, "test");
  strcpy(m.mode[0].name, "parallel");
  strcpy(m.mode[1].name, "serial");
  m.mode[1].host_issue = 1;
  m.nmode = 2;
  m.units[0] = m.host_units = threads;
  m.phys[0] = 0;
  m.split_min = 100;
  return m;
}

/* The summary of g's analysis with serial costs @p cus, team times @p tus. */
static rp_summary summary_of(rp_graph *g, const rp_model *m, const double *cus,
                             const double *tus) {
  rp_analysis *a = NULL;
  rp_summary s;
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = m, o.measured_us = cus, o.team_us = tus;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK, "%s", rp_last_error());
  rp_analysis_summary(a, &s);
  rp_analysis_destroy(a);
  return s;
}

/* Identical kernels (same name, size, bytes) share their team ratio: two
 * of serial cost 10 timed 12 and 13 within the team are both taken as
 * 12.5; a kernel of another name keeps its own. */
Test(predict_pool, identical_operations_share_their_team_ratio) {
  const rp_model m = team_of(3);
  rp_buf b[3];
  rp_graph *g = graph_of(3, b);
  kern(g, "k", b[0], 16, 10);
  kern(g, "k", b[1], 16, 10);
  kern(g, "other", b[2], 16, 10);
  TU_OK(g, rp_graph_end(g));
  const double cus[3] = {10, 10, 10};
  const double tus[3] = {12, 13, 11};
  rp_summary s = summary_of(g, &m, cus, tus);
  EXACT(s.model_serial_us, 30);
  EXACT(s.model_overlap_us, 12.5);
  /* The ratio, not the time: a kernel measured 20 alone is taken as 25
   * within the team, its twin as 12.5. */
  const double cus2[3] = {20, 10, 10};
  const double tus2[3] = {24, 13, 11};
  s = summary_of(g, &m, cus2, tus2);
  EXACT(s.model_overlap_us, 20 * (1.2 + 1.3) / 2);
  /* A change that reaches every kernel of the kind is not hidden: both
   * 1.5 times slower within the team, the prediction follows. */
  const double tus3[3] = {18, 19.5, 11};
  s = summary_of(g, &m, cus, tus3);
  EXACT(s.model_overlap_us, 18.75);
  /* The kernel named otherwise, slowest, is the overlap on its own. */
  const double tus4[3] = {12, 13, 30};
  s = summary_of(g, &m, cus, tus4);
  EXACT(s.model_overlap_us, 30);
  rp_graph_destroy(g);
}

/* A split kernel that ran u = 1.5 times faster within the team than
 * alone holds two threads for half its time, then one: the kernel beside
 * it starts at a quarter of 10 / 1.5 ... exactly when the extra thread's
 * share is used, and the overlap moves smoothly with u (the old rule held
 * round(u) threads for all of it: 16.67 at 1.5, 10 at 1.49). */
Test(predict_pool, a_split_kernel_holds_its_extra_thread_for_its_share) {
  const rp_model m = team_of(2);
  rp_buf b[2];
  rp_graph *g = graph_of(2, b);
  kern(g, "k", b[0], 1000, 10);   /* split: 1000 >= 100 points */
  kern(g, "other", b[1], 16, 10); /* one thread */
  TU_OK(g, rp_graph_end(g));
  const double cus[2] = {10, 10};
  const double us[4] = {1.5, 1.49, 1.51, 1.25};
  for (int i = 0; i < 4; i++) {
    const double t = 10 / us[i], tus[2] = {t, 10};
    rp_summary s = summary_of(g, &m, cus, tus);
    /* the other kernel waits for (u - 1) t, then runs 10 */
    EXACT(s.model_overlap_us, 10 + (us[i] - 1) * t);
  }
  const double whole[2] = {5, 10}; /* u = 2: both threads, all of it */
  EXACT(summary_of(g, &m, cus, whole).model_overlap_us, 15);
  const double same[2] = {10, 10}; /* u = 1: one thread */
  EXACT(summary_of(g, &m, cus, same).model_overlap_us, 10);
  rp_graph_destroy(g);
}

/* A Jacobi-like graph: 8 chains (blocks) of 8 steps of split kernels,
 * 100 us alone. @p distinct: every kernel a size of its own, so that none
 * is identical to another (the same graph without the pooling). A host
 * task between the steps would be an operation of its own kind, with
 * its own noise: the pooling cannot take that away (docs/model.md). */
#define NB 8
#define NS 8
#define MAXOP (NB * NS)
static rp_graph *blocks(int distinct, uint32_t *nop) {
  rp_buf b[NB];
  rp_graph *g = graph_of(NB, b);
  for (int s = 0; s < NS; s++)
    for (int i = 0; i < NB; i++)
      kern(g, "k", b[i], 1000 + (distinct ? (uint64_t)(s * NB + i) : 0), 100);
  TU_OK(g, rp_graph_end(g));
  *nop = rp_graph_num_nodes(g);
  cr_assert_eq(*nop, MAXOP);
  return g;
}

/* A generator the test owns: the same draws on every machine. */
static double uniform(uint64_t *x) {
  *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*x >> 11) / 9007199254740992.0; /* [0, 1) */
}

static int by_value(const void *x, const void *y) {
  const double p = *(const double *)x, q = *(const double *)y;
  return p < q ? -1 : p > q;
}

/* A profile as the examples take it of ops whose true costs are @p c
 * alone and @p t within the team: 5 rounds of a serial profiled replay,
 * then a team one, each op's time in a round the round's factor (the
 * load then: 0.9 - 1.1, the same for both replays of the round) times
 * its own noise (+-10 %), one time in 10 a preemption (x 3); per op the
 * median of its rounds into @p cus and @p tus. */
#define ROUNDS 5
static void profile(const double *c, const double *t, uint32_t n, uint64_t *x,
                    double *cus, double *tus) {
  double r[2][ROUNDS][MAXOP];
  for (int k = 0; k < ROUNDS; k++) {
    const double load = 0.9 + 0.2 * uniform(x);
    for (int p = 0; p < 2; p++)
      for (uint32_t v = 0; v < n; v++) {
        double f = load * (0.9 + 0.2 * uniform(x));
        if (uniform(x) < 0.1)
          f *= 3;
        r[p][k][v] = (p ? t : c)[v] * f;
      }
  }
  for (int p = 0; p < 2; p++)
    for (uint32_t v = 0; v < n; v++) {
      double col[ROUNDS];
      for (int k = 0; k < ROUNDS; k++)
        col[k] = r[p][k][v];
      qsort(col, ROUNDS, sizeof *col, by_value);
      (p ? tus : cus)[v] = col[ROUNDS / 2];
    }
}

/* The prediction of graph g on a team of 4 from a profile drawn with
 * @p seed: kernels 100 us alone, 55 us within the team. */
static double predicted(rp_graph *g, uint32_t n, uint64_t seed) {
  const rp_model m = team_of(4);
  double c[MAXOP], t[MAXOP], cus[MAXOP], tus[MAXOP];
  for (uint32_t v = 0; v < n; v++) {
    c[v] = 100;
    t[v] = 55;
  }
  profile(c, t, n, &seed, cus, tus);
  return summary_of(g, &m, cus, tus).predicted_speedup;
}

/* The largest over the smallest prediction of 8 profiles, minus 1. */
static double spread(rp_graph *g, uint32_t n) {
  double lo = INFINITY, hi = 0;
  for (uint64_t seed = 1; seed <= 8; seed++) {
    double p = predicted(g, n, seed * 7919);
    lo = fmin(lo, p);
    hi = fmax(hi, p);
  }
  return hi / lo - 1;
}

/* Eight profiles of one graph with noise and preemptions, as eight runs
 * of an example take them: the predictions agree within 2 %. The same
 * profiles of the same graph with no two kernels identical (nothing to
 * pool: each op's own team time, as before) spread beyond it. */
Test(predict_pool, noisy_profiles_of_one_graph_agree_within_2_percent) {
  uint32_t n;
  rp_graph *g = blocks(0, &n);
  const double pooled = spread(g, n);
  rp_graph_destroy(g);
  g = blocks(1, &n);
  const double alone = spread(g, n);
  rp_graph_destroy(g);
  cr_assert(pooled < 0.02, "pooled: the predictions spread %.1f %%",
            100 * pooled);
  cr_assert(alone > 0.02,
            "unpooled: %.1f %%: the draws are too quiet to "
            "show anything",
            100 * alone);
}

/* What happens between operations still comes on top of their team
 * times, as calibrated at the team's thread count: a join waits the
 * hand-off (edge_us) after its inputs, every task takes task_us of its
 * thread, every op waits the mode's op_us. Two kernels of 10 us side by
 * side on a team of 2 (1 + 10 + 1 each), then one reading both: 12, a
 * hand-off of 3 and a delay of 1 (16), then 10 + 1: 27. */
Test(predict_pool, hand_offs_and_task_costs_come_on_top_of_team_times) {
  rp_model m = team_of(2);
  m.task_us = 1;
  m.edge_us = 3;
  m.mode[0].op_us = 1;
  rp_buf b[3];
  rp_graph *g = graph_of(3, b);
  kern(g, "k", b[0], 16, 10);
  kern(g, "k", b[1], 16, 10);
  static const rp_mode io[2] = {RP_IN, RP_IN};
  static rp_param ps[2];
  static rp_kernel join;
  if (!join.name)
    join = tu_nop_kernel("join", 2, io, ps);
  rp_arg args[2] = {rp_arg_buf(rp_whole(b[0])), rp_arg_buf(rp_whole(b[1]))};
  rp_op_opts o = RP_OP_OPTS_WITH(.cost_us = 10);
  TU_OK(g, rp_record_kernel(g, &join, 0, rp_dims3(16, 1, 1), args, &o, NULL));
  TU_OK(g, rp_graph_end(g));
  const double cus[3] = {10, 10, 10}, tus[3] = {10, 10, 10};
  rp_summary s = summary_of(g, &m, cus, tus);
  EXACT(s.model_overlap_us, 27);
  m.edge_us = 0; /* without the hand-off: 3 less */
  EXACT(summary_of(g, &m, cus, tus).model_overlap_us, 24);
  rp_graph_destroy(g);
}
