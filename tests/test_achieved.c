/* Tests of the achieved timeline's reports, on synthetic timelines. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"
#include "util.h"

static void nop_cpu(const rp_kargs *a, const uint64_t lo[3],
                    const uint64_t hi[3]) {}
static const rp_param p_io[] = {{"a", RP_INOUT}};
static const rp_kernel k_io = RP_KERNEL_WITH(.name = "k_io", .nparams = 1,
                                             .params = p_io, .cpu = nop_cpu);
static unsigned char ma[64], mb[64];

/* h2d A (10) -> K(A) (20) -> d2h A (10); d2h B (10) alone. Schedule:
 * [0,10] [10,30] [30,40] and [0,10] on d2h:0. */
static rp_graph *pipeline(void) {
  rp_graph *g;
  rp_buf A, B;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  TU_OK(g, rp_buffer_register(g, "A", ma, sizeof ma, &A));
  TU_OK(g, rp_buffer_register(g, "B", mb, sizeof mb, &B));
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "h2d A", .cost_us = 10);
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(A), 0, &o, NULL));
  rp_arg arg = rp_arg_buf(rp_whole(A));
  o.name = "K";
  o.cost_us = 20;
  TU_OK(g, rp_record_kernel(g, &k_io, 0, rp_dims3(4, 1, 1), &arg, &o, NULL));
  o.name = "d2h A";
  o.cost_us = 10;
  TU_OK(g, rp_record_copy_to_host(g, rp_whole(A), 0, &o, NULL));
  o.name = "d2h B";
  TU_OK(g, rp_record_copy_to_host(g, rp_whole(B), 0, &o, NULL));
  TU_OK(g, rp_graph_end(g));
  return g;
}

Test(achieved, departures_and_causes) {
  rp_graph *g = pipeline();
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(g, NULL, &a), RP_OK);
  /* The h2d ran 5 us longer while d2h B ran: the rest is late by 5. */
  double s[4] = {0, 15, 35, 0}, e[4] = {15, 35, 45, 10};
  rp_departure d[4];
  uint32_t k = 0;
  cr_assert_eq(rp_analysis_departures(a, s, e, d, 4, &k), RP_OK);
  cr_assert_eq(k, 4);
  cr_assert_eq(d[0].node, 0);
  cr_assert_str_eq(d[0].cause, "shared link");
  cr_assert_eq(d[0].blame, 3);
  cr_assert_float_eq(d[0].own_us, 5, 1e-12);
  cr_assert_eq(d[1].node, 1);
  cr_assert_str_eq(d[1].cause, "waited on a copy");
  cr_assert_eq(d[1].blame, 0);
  cr_assert_float_eq(d[1].late_us, 5, 1e-12);
  cr_assert_float_eq(d[1].own_us, 0, 1e-12);
  cr_assert_eq(d[2].node, 2);
  cr_assert_str_eq(d[2].cause, "waited on an op");
  cr_assert_eq(d[2].blame, 1);
  cr_assert_eq(d[3].node, 3);
  /* Only two asked for: the two largest. */
  cr_assert_eq(rp_analysis_departures(a, s, e, d, 2, &k), RP_OK);
  cr_assert_eq(k, 2);
  /* Bad timelines are refused. */
  e[2] = 30;
  cr_assert_eq(rp_analysis_departures(a, s, e, d, 2, &k), RP_EINVAL);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* Two independent kernels on one compute lane: predicted [0,10] [10,20]. */
Test(achieved, launch_and_lane) {
  rp_graph *g;
  rp_buf A, B;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  TU_OK(g, rp_buffer_register(g, "A", ma, sizeof ma, &A));
  TU_OK(g, rp_buffer_register(g, "B", mb, sizeof mb, &B));
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "K1", .cost_us = 10);
  rp_arg arg = rp_arg_buf(rp_whole(A));
  TU_OK(g, rp_record_kernel(g, &k_io, 0, rp_dims3(4, 1, 1), &arg, &o, NULL));
  o.name = "K2";
  arg = rp_arg_buf(rp_whole(B));
  TU_OK(g, rp_record_kernel(g, &k_io, 0, rp_dims3(4, 1, 1), &arg, &o, NULL));
  TU_OK(g, rp_graph_end(g));
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(g, NULL, &a), RP_OK);
  /* K2 starts 2 us after K1 ended: launch. */
  double s[2] = {0, 12}, e[2] = {10, 22};
  rp_departure d[2];
  uint32_t k;
  cr_assert_eq(rp_analysis_departures(a, s, e, d, 2, &k), RP_OK);
  cr_assert_eq(d[0].node, 1);
  cr_assert_str_eq(d[0].cause, "launch");
  cr_assert_float_eq(d[0].own_us, 2, 1e-12);
  /* K1 ran 3 us longer, K2 waited for it on the lane. */
  double s2[2] = {0, 13}, e2[2] = {13, 23};
  cr_assert_eq(rp_analysis_departures(a, s2, e2, d, 2, &k), RP_OK);
  cr_assert_eq(d[0].node, 0);
  cr_assert_str_eq(d[0].cause, "ran longer");
  cr_assert_eq(d[1].node, 1);
  cr_assert_str_eq(d[1].cause, "waited on a lane");
  cr_assert_eq(d[1].blame, 0);
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  cr_assert_eq(rp_analysis_write_departures(a, s2, e2, 5, fp), RP_OK);
  fclose(fp);
  cr_assert(strstr(buf, "achieved 23.000 us against predicted 20.000 us"), "%s",
            buf);
  cr_assert(strstr(buf, "waited on a lane (#0 K1)"), "%s", buf);
  free(buf);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(achieved, two_track_trace) {
  rp_graph *g = pipeline();
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(g, NULL, &a), RP_OK);
  double s[4] = {0, 15, 35, 0}, e[4] = {15, 35, 45, 10};
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  cr_assert_eq(rp_analysis_write_trace_achieved(a, s, e, fp), RP_OK);
  fclose(fp);
  cJSON *j = cJSON_Parse(buf);
  cr_assert_not_null(j, "%s", buf);
  const cJSON *ev = cJSON_GetObjectItem(j, "traceEvents"), *x;
  int slices[3] = {0}, flows_s = 0, flows_f = 0, ach_k = 0;
  cJSON_ArrayForEach(x, ev) {
    const char *ph = cJSON_GetObjectItem(x, "ph")->valuestring;
    int pid = cJSON_GetObjectItem(x, "pid")->valueint;
    if (!strcmp(ph, "X")) {
      slices[pid]++;
      if (pid == 2 &&
          !strcmp(cJSON_GetObjectItem(x, "name")->valuestring, "K")) {
        cr_assert_eq(cJSON_GetObjectItem(x, "ts")->valuedouble, 15);
        cr_assert_eq(cJSON_GetObjectItem(x, "dur")->valuedouble, 20);
        ach_k = 1;
      }
    }
    flows_s += !strcmp(ph, "s");
    flows_f += !strcmp(ph, "f");
  }
  cr_assert_eq(slices[1], 4);
  cr_assert_eq(slices[2], 4);
  cr_assert(ach_k);
  /* Edges 0->1 raw A, 1->2 raw A, in both tracks. */
  cr_assert_eq(rp_graph_num_edges(g), 2);
  cr_assert_eq(flows_s, 4);
  cr_assert_eq(flows_f, 4);
  cr_assert(strstr(buf, "\"name\": \"raw A\""), "%s", buf);
  cJSON_Delete(j);
  free(buf);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* The reference backend's timeline: its profile laid end to end; others
 * record theirs through the backend table's hook. */
Test(achieved, reference_timeline) {
  rp_graph *g = pipeline();
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("reference", &be), RP_OK);
  rp_exec *x = NULL;
  cr_assert_eq(rp_exec_create(&x, g, be, NULL), RP_OK);
  double s[4], e[4];
  cr_assert_eq(rp_exec_timeline(x, s, e), RP_OK);
  cr_assert_eq(s[0], 0);
  for (int i = 1; i < 4; i++)
    cr_assert_eq(s[i], e[i - 1]);
  for (int i = 0; i < 4; i++)
    cr_assert_geq(e[i], s[i]);
  rp_exec_destroy(x);
  /* openmp records its overlapped replay through the backend's hook: every
   * operation ends after it starts and starts after its predecessors end
   * (elided copies take the time their predecessors ended). */
  if (rp_backend_find("openmp", &be) == RP_OK) {
    cr_assert_eq(rp_exec_create(&x, g, be, NULL), RP_OK);
    cr_assert_eq(rp_exec_timeline(x, s, e), RP_OK, "%s", rp_exec_error(x));
    for (int i = 0; i < 4; i++)
      cr_assert_geq(e[i], s[i]);
    for (uint32_t i = 0; i < rp_graph_num_edges(g); i++) {
      rp_edge ed;
      cr_assert_eq(rp_graph_edge(g, i, &ed), RP_OK);
      cr_assert_geq(s[ed.to], e[ed.from] - 1e-6, "edge %u -> %u", ed.from,
                    ed.to);
    }
    rp_exec_destroy(x);
  }
  rp_graph_destroy(g);
}

/* The achieved speedup of timed pairs: the median of the ratios, its
 * spread, and the warnings against the prediction. */
Test(achieved, speedup_of_timed_pairs) {
  rp_graph *g = pipeline();
  rp_model m;
  rp_model_init(&m);
  m.calibrated = 1;
  snprintf(m.backend, sizeof m.backend, "test");
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = &m;
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_summary s;
  rp_analysis_summary(a, &s);
  cr_assert_eq(s.predicted_speedup, 50.0 / 40); /* serial 50, overlap 40 */
  double ser[5] = {100, 120, 90, 100, 110}, ovl[5] = {80, 80, 100, 50, 88};
  rp_achieved r;
  cr_assert_eq(rp_achieved_compute(a, ser, ovl, 5, &r), RP_OK);
  /* ratios 1.25 1.5 0.9 2 1.25 */
  cr_assert_eq(r.speedup, 1.25);
  cr_assert_eq(r.min, 0.9);
  cr_assert_eq(r.max, 2);
  cr_assert_eq(r.runs, 5);
  cr_assert_eq(r.below_one, 0);
  cr_assert_eq(r.outside, 0);
  cr_assert_float_eq(r.pred_lo, 1.25 * (1 - RP_PREDICT_TOLERANCE), 1e-12);
  cr_assert_float_eq(r.pred_hi, 1.25 * (1 + RP_PREDICT_TOLERANCE), 1e-12);
  char *text = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&text, &len);
  cr_assert_eq(rp_analysis_write_achieved(a, &r, fp), RP_OK);
  fclose(fp);
  cr_assert(strstr(text, "predicted speedup     1.250x  (calibrated model "
                         "of test"),
            "%s", text);
  cr_assert(strstr(text, "achieved speedup      1.250x  (median of 5 timed "
                         "pairs, serial / overlapped; 0.900x - 2.000x)"),
            "%s", text);
  cr_assert(strstr(text, "upper bound"), "%s", text);
  cr_assert_null(strstr(text, "warning"), "%s", text);
  free(text);
  /* Below 1, and outside the predicted range: two warnings. */
  double slow[4] = {200, 200, 200, 200};
  cr_assert_eq(rp_achieved_compute(a, ser, slow, 4, &r), RP_OK);
  cr_assert_eq(r.speedup, (0.5 + 0.5) / 2); /* 0.45 0.5 0.5 0.6 */
  cr_assert_eq(r.below_one, 1);
  cr_assert_eq(r.outside, 1);
  fp = open_memstream(&text, &len);
  cr_assert_eq(rp_analysis_write_achieved(a, &r, fp), RP_OK);
  fclose(fp);
  cr_assert(strstr(text, "warning: the achieved speedup is below 1"), "%s",
            text);
  cr_assert(strstr(text, "is outside the predicted range 1.062x - 1.438x"),
            "%s", text);
  free(text);
  double bad[1] = {0};
  cr_assert_eq(rp_achieved_compute(a, ser, bad, 1, &r), RP_EINVAL);
  cr_assert_eq(rp_achieved_compute(a, ser, ovl, 0, &r), RP_EINVAL);
  rp_analysis_destroy(a);
  /* Without a model: a bound only, said plainly, and no range. */
  cr_assert_eq(rp_analyze(g, NULL, &a), RP_OK);
  cr_assert_eq(rp_achieved_compute(a, ser, slow, 4, &r), RP_OK);
  cr_assert_eq(r.outside, 0);
  fp = open_memstream(&text, &len);
  cr_assert_eq(rp_analysis_write_achieved(a, &r, fp), RP_OK);
  fclose(fp);
  cr_assert(strstr(text, "without a machine model this analysis gives an "
                         "upper\n                   bound only"),
            "%s", text);
  free(text);
  fp = open_memstream(&text, &len);
  cr_assert_eq(rp_analysis_write_text(a, fp), RP_OK);
  fclose(fp);
  cr_assert(strstr(text, "upper bound "), "%s", text);
  cr_assert(strstr(text, "list schedule "), "%s", text);
  cr_assert(strstr(text, "bound only"), "%s", text);
  free(text);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}
