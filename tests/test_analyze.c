/* Tests of the analyzer on hand-made graphs: exact figures and writers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "reprise.h"
#include "util.h"

static void nop_cpu(const rp_kargs *a, const uint64_t lo[3],
                    const uint64_t hi[3]) {}
static void nop_host(void *user, void *const *ptrs) {}

static const rp_param p_io[] = {{"a", RP_INOUT}};
static const rp_param p_in_io[] = {{"a", RP_IN}, {"b", RP_INOUT}};
static const rp_kernel k_io = RP_KERNEL_WITH(.name = "k_io", .nparams = 1,
                                             .params = p_io, .cpu = nop_cpu);
static const rp_kernel k_in_io =
    RP_KERNEL_WITH(.name = "k_in_io", .nparams = 2, .params = p_in_io,
                   .cpu = nop_cpu);

static unsigned char mem_a[1000000], mem_b[4096], mem_c[100 * 200 * 4];

/* Options with a cost (> 0: given) and an optional name. */
static rp_op_opts cost(double us, const char *name) {
  rp_op_opts o = RP_OP_OPTS_WITH(.name = name, .cost_us = us);
  return o;
}

static rp_graph *new_graph(rp_buf *a, rp_buf *b) {
  rp_graph *g = NULL;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  cr_assert_eq(rp_buffer_register(g, "A", mem_a, 1024, a), RP_OK);
  cr_assert_eq(rp_buffer_register(g, "B", mem_b, 4096, b), RP_OK);
  return g;
}

static rp_node kernel1(rp_graph *g, int dev, rp_buf x, double us) {
  rp_arg arg = rp_arg_buf(rp_whole(x));
  rp_op_opts o = cost(us, NULL);
  rp_node n;
  cr_assert_eq(
      rp_record_kernel(g, &k_io, dev, rp_dims3(16, 1, 1), &arg, &o, &n), RP_OK,
      "%s", rp_graph_error(g));
  return n;
}

static rp_node kernel2(rp_graph *g, int dev, rp_buf x, rp_buf y, double us) {
  rp_arg args[2] = {rp_arg_buf(rp_whole(x)), rp_arg_buf(rp_whole(y))};
  rp_op_opts o = cost(us, NULL);
  rp_node n;
  cr_assert_eq(
      rp_record_kernel(g, &k_in_io, dev, rp_dims3(16, 1, 1), args, &o, &n),
      RP_OK, "%s", rp_graph_error(g));
  return n;
}

static rp_node h2d(rp_graph *g, rp_region r, int dev, double us) {
  rp_op_opts o = cost(us, NULL);
  rp_node n;
  cr_assert_eq(rp_record_copy_to_device(g, r, dev, &o, &n), RP_OK, "%s",
               rp_graph_error(g));
  return n;
}

static rp_node d2h(rp_graph *g, rp_region r, int dev, double us) {
  rp_op_opts o = cost(us, NULL);
  rp_node n;
  cr_assert_eq(rp_record_copy_to_host(g, r, dev, &o, &n), RP_OK, "%s",
               rp_graph_error(g));
  return n;
}

static rp_analysis *analyze(rp_graph *g, const rp_analysis_opts *o) {
  if (!rp_graph_ended(g))
    cr_assert_eq(rp_graph_end(g), RP_OK);
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(g, o, &a), RP_OK);
  cr_assert_not_null(a);
  return a;
}

static rp_op_sched op(const rp_analysis *a, rp_node n) {
  rp_op_sched s;
  cr_assert_eq(rp_analysis_op(a, n, &s), RP_OK);
  return s;
}

static const char *lane_name(const rp_analysis *a, rp_node n) {
  const char *name;
  cr_assert_eq(rp_analysis_lane(a, op(a, n).lane, &name, NULL), RP_OK);
  return name;
}

/* attach(A) 10 us, kernel(A) 10 us, attach(B) 10 us, kernel(A, B) 10 us. */
static rp_graph *attach_example(void) {
  rp_buf A, B;
  rp_graph *g = new_graph(&A, &B);
  h2d(g, rp_whole(A), 0, 10);
  kernel1(g, 0, A, 10);
  h2d(g, rp_whole(B), 0, 10);
  kernel2(g, 0, A, B, 10);
  cr_assert_eq(rp_graph_end(g), RP_OK);
  return g;
}

Test(analyze, attach_example_overlaps_second_attach) {
  rp_graph *g = attach_example();
  rp_analysis *a = analyze(g, NULL);
  rp_summary s;
  rp_analysis_summary(a, &s);
  cr_assert_eq(s.serial_us, 40);
  cr_assert_eq(s.critical_path_us, 30);
  cr_assert_eq(s.max_lane_us, 20);
  cr_assert_eq(s.makespan_us, 30);
  cr_assert_float_eq(s.bound, 40.0 / 30, 1e-15);
  cr_assert_str_eq(s.limited_by, "critical_path");
  cr_assert_eq(s.amdahl_compute_us, 20);
  cr_assert_eq(s.amdahl_copy_us, 20);
  cr_assert_eq(s.amdahl_speedup, 2);
  cr_assert_float_eq(s.predicted_speedup, 40.0 / 30, 1e-15);
  /* attach(B) runs beside kernel(A). */
  double start[4] = {0, 10, 10, 20};
  int crit[4] = {1, 1, 0, 1};
  const char *lane[4] = {"h2d:0", "compute:0", "h2d:0", "compute:0"};
  for (rp_node n = 0; n < 4; n++) {
    rp_op_sched o = op(a, n);
    cr_assert_eq(o.start_us, start[n], "op %u", n);
    cr_assert_eq(o.end_us, start[n] + 10, "op %u", n);
    cr_assert_eq(o.cost_us, 10);
    cr_assert_eq(o.source, RP_COST_GIVEN);
    cr_assert_eq(o.critical, crit[n], "op %u", n);
    cr_assert_eq(o.slack_us, 0, "op %u", n);
    cr_assert_str_eq(lane_name(a, n), lane[n]);
  }
  cr_assert_eq(rp_analysis_num_lanes(a), 2);
  const char *name;
  double busy;
  cr_assert_eq(rp_analysis_lane(a, 0, &name, &busy), RP_OK);
  cr_assert_str_eq(name, "h2d:0");
  cr_assert_eq(busy, 20);
  cr_assert_eq(rp_analysis_lane(a, 2, &name, &busy), RP_EINVAL);
  rp_op_sched o;
  cr_assert_eq(rp_analysis_op(a, 4, &o), RP_EINVAL);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(analyze, refuses_unended_graph_and_bad_options) {
  rp_buf A, B;
  rp_graph *g = new_graph(&A, &B);
  kernel1(g, 0, A, 10);
  rp_analysis *a = (rp_analysis *)1;
  cr_assert_eq(rp_analyze(g, NULL, &a), RP_ESTATE);
  cr_assert_null(a);
  cr_assert_eq(rp_graph_end(g), RP_OK);
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.copy_engines = 3;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  rp_analysis_opts_init(&o);
  o.h2d_gbps = 0;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  rp_analysis_opts_init(&o);
  o.kernel_us = -1;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  rp_analysis_opts_init(&o);
  o.d2h_gbps = INFINITY;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  cr_assert_eq(rp_analyze(NULL, NULL, &a), RP_EINVAL);
  cr_assert_eq(rp_analyze(g, NULL, NULL), RP_EINVAL);
  rp_analysis_destroy(NULL);
  rp_graph_destroy(g);
}

Test(analyze, refuses_costs_that_overflow) {
  rp_buf A, B;
  rp_graph *g = new_graph(&A, &B);
  kernel1(g, 0, A, 1e308);
  kernel1(g, 1, B, 1e308);
  cr_assert_eq(rp_graph_end(g), RP_OK);
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(g, NULL, &a), RP_EINVAL);
  cr_assert_null(a);
  rp_graph_destroy(g);
}

Test(analyze, empty_graph) {
  rp_graph *g = NULL;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  rp_analysis *a = analyze(g, NULL);
  rp_summary s;
  rp_analysis_summary(a, &s);
  cr_assert_eq(s.serial_us, 0);
  cr_assert_eq(s.makespan_us, 0);
  cr_assert_eq(s.bound, 1);
  cr_assert_eq(s.amdahl_speedup, 1);
  cr_assert_eq(s.predicted_speedup, 1);
  cr_assert_str_eq(s.limited_by, "critical_path");
  cr_assert_eq(rp_analysis_num_lanes(a), 0);
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  cr_assert_eq(rp_analysis_write_json(a, fp), RP_OK);
  fclose(fp);
  cJSON *j = cJSON_Parse(buf);
  cr_assert_not_null(j, "%s", buf);
  cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "ops")), 0);
  cJSON_Delete(j);
  free(buf);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(analyze, two_devices_run_side_by_side) {
  rp_buf A, B;
  rp_graph *g = new_graph(&A, &B);
  kernel1(g, 0, A, 10);
  kernel1(g, 1, B, 10);
  rp_op_opts o = cost(8, NULL);
  cr_assert_eq(rp_record_copy_peer(g, rp_bytes(A, 0, 512), 0, 1, &o, NULL),
               RP_OK);
  kernel1(g, 1, A, 4);
  rp_analysis *a = analyze(g, NULL);
  rp_summary s;
  rp_analysis_summary(a, &s);
  cr_assert_str_eq(lane_name(a, 0), "compute:0");
  cr_assert_str_eq(lane_name(a, 1), "compute:1");
  cr_assert_str_eq(lane_name(a, 2), "p2p:0");
  cr_assert_str_eq(lane_name(a, 3), "compute:1");
  /* k0(A) 0..10, k1(B) 0..10, peer A 10..18, k1(A) on device 1 18..22. */
  cr_assert_eq(op(a, 1).start_us, 0);
  cr_assert_eq(op(a, 2).start_us, 10);
  cr_assert_eq(op(a, 3).start_us, 18);
  cr_assert_eq(s.serial_us, 32);
  cr_assert_eq(s.critical_path_us, 22);
  cr_assert_eq(s.makespan_us, 22);
  cr_assert_eq(s.max_lane_us, 14);
  cr_assert_eq(s.amdahl_compute_us, 24);
  cr_assert_eq(s.amdahl_copy_us, 8);
  cr_assert_float_eq(s.amdahl_speedup, 32.0 / 24, 1e-15);
  /* k1(B) may start 8 us late without delaying the makespan: the next op
   * on compute:1 starts at 18. */
  cr_assert_eq(op(a, 1).slack_us, 8);
  cr_assert_eq(op(a, 1).critical, 0);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(analyze, after_edges_serialise_and_are_written) {
  rp_buf A, B;
  rp_graph *g = new_graph(&A, &B);
  rp_node k0 = kernel1(g, 0, A, 10);
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "later", .cost_us = 10, .after = &k0,
                                 .nafter = 1);
  rp_arg arg = rp_arg_buf(rp_whole(B));
  rp_node k1;
  cr_assert_eq(rp_record_kernel(g, &k_io, 1, rp_dims3(1, 1, 1), &arg, &o, &k1),
               RP_OK);
  rp_analysis *a = analyze(g, NULL);
  rp_summary s;
  rp_analysis_summary(a, &s);
  cr_assert_eq(op(a, k1).start_us, 10);
  cr_assert_eq(s.makespan_us, 20);
  cr_assert_eq(s.critical_path_us, 20);
  cr_assert_eq(s.bound, 1);
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  cr_assert_eq(rp_analysis_write_json(a, fp), RP_OK);
  fclose(fp);
  cr_assert(strstr(buf, "{\"from\": 0, \"to\": 1, \"kind\": \"after\"}"), "%s",
            buf);
  free(buf);
  fp = open_memstream(&buf, &len);
  cr_assert_eq(rp_analysis_write_dot(a, fp), RP_OK);
  fclose(fp);
  cr_assert(strstr(buf, "n0 -> n1 [label=\"AFTER\", penwidth=3"), "%s", buf);
  free(buf);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

static rp_graph *two_copies(void) {
  rp_buf A, B;
  rp_graph *g = new_graph(&A, &B);
  h2d(g, rp_whole(A), 0, 10);
  d2h(g, rp_whole(B), 0, 10);
  kernel1(g, 0, A, 5);
  cr_assert_eq(rp_graph_end(g), RP_OK);
  return g;
}

Test(analyze, copy_engines_two_lanes_or_one) {
  rp_graph *g = two_copies();
  rp_analysis *a = analyze(g, NULL);
  rp_summary s;
  rp_analysis_summary(a, &s);
  cr_assert_eq(rp_analysis_num_lanes(a), 3);
  cr_assert_str_eq(lane_name(a, 0), "h2d:0");
  cr_assert_str_eq(lane_name(a, 1), "d2h:0");
  cr_assert_eq(op(a, 1).start_us, 0);
  cr_assert_eq(s.makespan_us, 15);
  cr_assert_eq(s.max_lane_us, 10);
  cr_assert_str_eq(s.limited_by, "critical_path");
  rp_analysis_destroy(a);

  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.copy_engines = 1;
  a = analyze(g, &o);
  rp_analysis_summary(a, &s);
  cr_assert_eq(rp_analysis_num_lanes(a), 2);
  cr_assert_str_eq(lane_name(a, 0), "copy:0");
  cr_assert_str_eq(lane_name(a, 1), "copy:0");
  /* h2d(A) has the longer remaining path (15 against 10): it goes first. */
  cr_assert_eq(op(a, 0).start_us, 0);
  cr_assert_eq(op(a, 1).start_us, 10);
  cr_assert_eq(op(a, 2).start_us, 10);
  cr_assert_eq(s.makespan_us, 20);
  cr_assert_eq(s.max_lane_us, 20);
  cr_assert_eq(s.critical_path_us, 15);
  cr_assert_str_eq(s.limited_by, "copy:0");
  cr_assert_eq(s.bound, 25.0 / 20);
  cr_assert_eq(s.predicted_speedup, 25.0 / 20);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(analyze, priority_is_longest_remaining_path) {
  rp_buf A, B;
  rp_graph *g = new_graph(&A, &B);
  /* In program order the short copy comes first; the scheduler must
   * start the copy that feeds the long kernel first. */
  h2d(g, rp_whole(B), 0, 10);
  h2d(g, rp_whole(A), 0, 10);
  kernel1(g, 0, A, 50);
  rp_analysis *a = analyze(g, NULL);
  rp_summary s;
  rp_analysis_summary(a, &s);
  cr_assert_eq(op(a, 1).start_us, 0);
  cr_assert_eq(op(a, 0).start_us, 10);
  cr_assert_eq(op(a, 2).start_us, 10);
  cr_assert_eq(s.makespan_us, 60);
  cr_assert_eq(s.critical_path_us, 60);
  cr_assert_eq(op(a, 0).slack_us, 40);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(analyze, amdahl_counts_kernels_and_copies_not_host_tasks) {
  rp_buf A, B;
  rp_graph *g = new_graph(&A, &B);
  h2d(g, rp_whole(A), 0, 10);
  kernel1(g, 0, B, 30);
  rp_access acc = {rp_whole(A), RP_INOUT};
  rp_op_opts o = cost(7, "host step");
  rp_node hn;
  cr_assert_eq(rp_record_host(g, nop_host, NULL, &acc, 1, &o, &hn), RP_OK);
  rp_analysis *a = analyze(g, NULL);
  rp_summary s;
  rp_analysis_summary(a, &s);
  cr_assert_str_eq(lane_name(a, hn), "host");
  cr_assert_eq(s.amdahl_compute_us, 30);
  cr_assert_eq(s.amdahl_copy_us, 10);
  cr_assert_float_eq(s.amdahl_speedup, 40.0 / 30, 1e-15);
  cr_assert_eq(s.serial_us, 47);
  /* host task after the copy of A: 0..10, 10..17; kernel 0..30. */
  cr_assert_eq(op(a, hn).start_us, 10);
  cr_assert_eq(s.makespan_us, 30);
  cr_assert_eq(s.critical_path_us, 30);
  cr_assert_eq(s.max_lane_us, 30);
  /* equal: the critical path wins the tie. */
  cr_assert_str_eq(s.limited_by, "critical_path");
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(analyze, given_measured_modelled_and_default_costs) {
  rp_graph *g = NULL;
  rp_buf A, C;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  cr_assert_eq(rp_buffer_register(g, "A", mem_a, 1000000, &A), RP_OK);
  cr_assert_eq(rp_buffer_register_2d(g, "C", mem_c, 100, 200, 4, &C), RP_OK);
  rp_node n0 = h2d(g, rp_whole(A), 0, 0);               /* 1e6 bytes */
  rp_node n1 = h2d(g, rp_box2(C, 10, 30, 0, 50), 0, 0); /* 4000 bytes */
  rp_node n2 = d2h(g, rp_bytes(A, 0, 5000), 0, 0);
  rp_node n3 = kernel1(g, 0, C, 0);   /* default */
  rp_node n4 = kernel1(g, 1, A, 3.5); /* given */
  rp_op_opts po = cost(0, NULL);
  rp_node n5;
  cr_assert_eq(rp_record_copy_peer(g, rp_bytes(A, 0, 8000), 1, 0, &po, &n5),
               RP_OK);
  rp_node n6 = kernel1(g, 0, C, 0);
  rp_access acc = {rp_whole(A), RP_IN};
  rp_node n7;
  cr_assert_eq(rp_record_host(g, nop_host, NULL, &acc, 1, NULL, &n7), RP_OK);

  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.d2h_gbps = 10;
  o.p2p_gbps = 40;
  o.host_us = 2;
  double measured[8] = {-1, -1, -1, -1, -1, -1, 6.25, -1};
  o.measured_us = measured;
  rp_analysis *a = analyze(g, &o);
  cr_assert_eq(op(a, n0).cost_us, 40); /* 1e6 / 25e3 */
  cr_assert_eq(op(a, n0).source, RP_COST_MODELLED);
  cr_assert_float_eq(op(a, n1).cost_us, 0.16, 1e-15);
  cr_assert_eq(op(a, n2).cost_us, 0.5); /* 5000 / 10e3 */
  cr_assert_eq(op(a, n3).cost_us, 10);
  cr_assert_eq(op(a, n3).source, RP_COST_DEFAULT);
  cr_assert_eq(op(a, n4).cost_us, 3.5);
  cr_assert_eq(op(a, n4).source, RP_COST_GIVEN);
  cr_assert_eq(op(a, n5).cost_us, 0.2); /* 8000 / 40e3 */
  cr_assert_str_eq(lane_name(a, n5), "p2p:1");
  cr_assert_eq(op(a, n6).cost_us, 6.25);
  cr_assert_eq(op(a, n6).source, RP_COST_MEASURED);
  cr_assert_eq(op(a, n7).cost_us, 2);
  cr_assert_eq(op(a, n7).source, RP_COST_DEFAULT);

  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  cr_assert_eq(rp_analysis_write_text(a, fp), RP_OK);
  fclose(fp);
  cr_assert(strstr(buf, "costs: 1 given, 1 measured, 4 modelled, 2 default"),
            "%s", buf);
  cr_assert(strstr(buf, "1 kernels without a cost at 10 us"), "%s", buf);
  cr_assert(strstr(buf, "1 host tasks without a cost at 2 us"), "%s", buf);
  free(buf);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

static char *write_mem(rp_analysis *a,
                       rp_status (*w)(const rp_analysis *, FILE *)) {
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  cr_assert_not_null(fp);
  cr_assert_eq(w(a, fp), RP_OK);
  fclose(fp);
  return buf;
}

static double num(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  cr_assert(cJSON_IsNumber(v), "no number \"%s\"", key);
  return v->valuedouble;
}

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  cr_assert(cJSON_IsString(v), "no string \"%s\"", key);
  return v->valuestring;
}

Test(analyze, json_has_the_design_form_and_values) {
  rp_graph *g = attach_example();
  rp_analysis *a = analyze(g, NULL);
  char *buf = write_mem(a, rp_analysis_write_json);
  cJSON *j = cJSON_Parse(buf);
  cr_assert_not_null(j, "%s", buf);
  cr_assert_str_eq(str(j, "format"), "reprise-analysis");
  cr_assert_eq(num(j, "version"), 1);
  cr_assert_eq(num(j, "serial_us"), 40);
  cr_assert_eq(num(j, "critical_path_us"), 30);
  cr_assert_eq(num(j, "max_lane_us"), 20);
  cr_assert_eq(num(j, "makespan_us"), 30);
  cr_assert_eq(num(j, "predicted_speedup"), 40.0 / 30);
  const cJSON *b = cJSON_GetObjectItem(j, "bound");
  cr_assert_eq(num(b, "speedup"), 40.0 / 30);
  cr_assert_str_eq(str(b, "limited_by"), "critical_path");
  const cJSON *am = cJSON_GetObjectItem(j, "amdahl");
  cr_assert_eq(num(am, "compute_us"), 20);
  cr_assert_eq(num(am, "copy_us"), 20);
  cr_assert_eq(num(am, "speedup"), 2);

  const cJSON *edges = cJSON_GetObjectItem(j, "edges");
  cr_assert_eq(cJSON_GetArraySize(edges), (int)rp_graph_num_edges(g));
  for (uint32_t i = 0; i < rp_graph_num_edges(g); i++) {
    rp_edge e;
    cr_assert_eq(rp_graph_edge(g, i, &e), RP_OK);
    const cJSON *je = cJSON_GetArrayItem(edges, (int)i);
    cr_assert_eq(num(je, "from"), e.from);
    cr_assert_eq(num(je, "to"), e.to);
    cr_assert_str_eq(str(je, "kind"), rp_edge_kind_name(e.kind));
    cr_assert_eq(num(je, "buffer"), e.buf);
  }
  const cJSON *ops = cJSON_GetObjectItem(j, "ops");
  cr_assert_eq(cJSON_GetArraySize(ops), 4);
  for (int n = 0; n < 4; n++) {
    const cJSON *jo = cJSON_GetArrayItem(ops, n);
    rp_op_sched o = op(a, (rp_node)n);
    cr_assert_eq(num(jo, "id"), n);
    cr_assert_str_eq(str(jo, "lane"), lane_name(a, (rp_node)n));
    cr_assert_eq(num(jo, "cost_us"), o.cost_us);
    cr_assert_eq(num(jo, "start_us"), o.start_us);
    cr_assert_eq(num(jo, "end_us"), o.end_us);
    cr_assert_eq(num(jo, "slack_us"), o.slack_us);
    cr_assert_eq(cJSON_IsTrue(cJSON_GetObjectItem(jo, "critical")), o.critical);
    cr_assert_str_eq(str(jo, "source"), "given");
  }
  const cJSON *lanes = cJSON_GetObjectItem(j, "lanes");
  cr_assert_eq(cJSON_GetArraySize(lanes), 2);
  cr_assert_str_eq(str(cJSON_GetArrayItem(lanes, 1), "name"), "compute:0");
  cr_assert_eq(num(cJSON_GetArrayItem(lanes, 1), "busy_us"), 20);
  cJSON_Delete(j);
  free(buf);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(analyze, json_numbers_read_back_exactly_and_names_are_escaped) {
  rp_buf A, B;
  rp_graph *g = new_graph(&A, &B);
  rp_op_opts o = cost(0.1, "say \"hi\"\\\n\ttab");
  cr_assert_eq(rp_record_copy_to_device(g, rp_whole(A), 0, &o, NULL), RP_OK);
  kernel1(g, 0, A, 1.0 / 3);
  rp_analysis *a = analyze(g, NULL);
  char *buf = write_mem(a, rp_analysis_write_json);
  cJSON *j = cJSON_Parse(buf);
  cr_assert_not_null(j, "%s", buf);
  const cJSON *ops = cJSON_GetObjectItem(j, "ops");
  cr_assert_str_eq(str(cJSON_GetArrayItem(ops, 0), "name"),
                   "say \"hi\"\\\n\ttab");
  cr_assert_eq(num(cJSON_GetArrayItem(ops, 1), "cost_us"), 1.0 / 3);
  cr_assert_eq(num(cJSON_GetArrayItem(ops, 1), "end_us"), 0.1 + 1.0 / 3);
  cr_assert(strstr(buf, "\"cost_us\": 0.1,"), "%s", buf);
  cJSON_Delete(j);
  free(buf);
  buf = write_mem(a, rp_analysis_write_trace);
  j = cJSON_Parse(buf);
  cr_assert_not_null(j, "%s", buf);
  cJSON_Delete(j);
  free(buf);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* The JSON of a named attach example, byte for byte (deterministic). */
Test(analyze, json_matches_golden_file) {
  rp_buf A, B;
  rp_graph *g = new_graph(&A, &B);
  const char *names[4] = {"attach A", "kernel A", "attach B", "kernel AB"};
  rp_op_opts o = cost(10, names[0]);
  cr_assert_eq(rp_record_copy_to_device(g, rp_whole(A), 0, &o, NULL), RP_OK);
  rp_arg a1 = rp_arg_buf(rp_whole(A));
  o.name = names[1];
  cr_assert_eq(rp_record_kernel(g, &k_io, 0, rp_dims3(1, 1, 1), &a1, &o, NULL),
               RP_OK);
  o = cost(0, names[2]); /* modelled: 4096 bytes at 25 GB/s */
  cr_assert_eq(rp_record_copy_to_device(g, rp_whole(B), 0, &o, NULL), RP_OK);
  rp_arg a2[2] = {rp_arg_buf(rp_whole(A)), rp_arg_buf(rp_whole(B))};
  o = cost(10, names[3]);
  cr_assert_eq(
      rp_record_kernel(g, &k_in_io, 0, rp_dims3(1, 1, 1), a2, &o, NULL), RP_OK);
  rp_analysis *a = analyze(g, NULL);
  char *buf = write_mem(a, rp_analysis_write_json);
  FILE *fp = fopen(RP_TEST_DATA "/analysis_attach.json", "rb");
  cr_assert_not_null(fp, "missing " RP_TEST_DATA "/analysis_attach.json");
  char want[8192];
  size_t n = fread(want, 1, sizeof want - 1, fp);
  want[n] = 0;
  fclose(fp);
  cr_assert_str_eq(buf, want);
  free(buf);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(analyze, trace_has_a_track_per_lane_and_an_event_per_op) {
  rp_graph *g = attach_example();
  rp_analysis *a = analyze(g, NULL);
  char *buf = write_mem(a, rp_analysis_write_trace);
  cJSON *j = cJSON_Parse(buf);
  cr_assert_not_null(j, "%s", buf);
  const cJSON *ev = cJSON_GetObjectItem(j, "traceEvents");
  cr_assert(cJSON_IsArray(ev));
  int names = 0, x = 0;
  const char *tid_name[8] = {0};
  const cJSON *e;
  cJSON_ArrayForEach(e, ev) {
    const char *ph = str(e, "ph");
    if (!strcmp(ph, "M") && !strcmp(str(e, "name"), "thread_name")) {
      int tid = (int)num(e, "tid");
      cr_assert(tid > 0 && tid < 8);
      tid_name[tid] = str(cJSON_GetObjectItem(e, "args"), "name");
      names++;
    }
  }
  cJSON_ArrayForEach(e, ev) {
    if (strcmp(str(e, "ph"), "X"))
      continue;
    const cJSON *args = cJSON_GetObjectItem(e, "args");
    rp_node n = (rp_node)num(args, "id");
    rp_op_sched o = op(a, n);
    cr_assert_eq(num(e, "ts"), o.start_us);
    cr_assert_eq(num(e, "dur"), o.cost_us);
    cr_assert_str_eq(tid_name[(int)num(e, "tid")], lane_name(a, n));
    x++;
  }
  cr_assert_eq(names, 2);
  cr_assert_eq(x, 4);
  cJSON_Delete(j);
  free(buf);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

static int count(const char *s, const char *pat) {
  int c = 0;
  for (const char *p = s; (p = strstr(p, pat)); p += strlen(pat))
    c++;
  return c;
}

Test(analyze, dot_has_clusters_bold_path_and_labelled_edges) {
  rp_graph *g = attach_example();
  rp_analysis *a = analyze(g, NULL);
  char *buf = write_mem(a, rp_analysis_write_dot);
  cr_assert_eq(count(buf, "subgraph cluster_"), 2, "%s", buf);
  cr_assert(strstr(buf, "label=\"h2d:0\""), "%s", buf);
  cr_assert(strstr(buf, "n0 -> n1 [label=\"RAW A\", penwidth=3"), "%s", buf);
  cr_assert(strstr(buf, "n1 -> n3 [label=\"RAW A\", penwidth=3"), "%s", buf);
  cr_assert(strstr(buf, "n2 -> n3 [label=\"RAW B\"]"), "%s", buf);
  /* three critical nodes, three bold node styles */
  cr_assert_eq(count(buf, "rounded,filled,bold"), 3, "%s", buf);
  if (access("/usr/bin/dot", X_OK) == 0) {
    char path[] = "/tmp/rp_analyze_dotXXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    fputs(buf, fp);
    fclose(fp);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "/usr/bin/dot -Tsvg %s -o /dev/null", path);
    int rc = system(cmd);
    unlink(path);
    cr_assert_eq(rc, 0, "dot rejected:\n%s", buf);
  }
  free(buf);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(analyze, svg_has_a_bar_per_op) {
  rp_graph *g = attach_example();
  rp_analysis *a = analyze(g, NULL);
  char *buf = write_mem(a, rp_analysis_write_svg);
  cr_assert(!strncmp(buf, "<?xml", 5));
  cr_assert(strstr(buf, "</svg>\n"));
  cr_assert_eq(count(buf, "<title>"), 4, "%s", buf);
  cr_assert_eq(count(buf, "stroke-width=\"2\""), 3, "%s", buf);
  cr_assert(strstr(buf, ">h2d:0</text>"));
  free(buf);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(analyze, text_report_names_lanes_path_and_limit) {
  rp_graph *g = two_copies();
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.copy_engines = 1;
  rp_analysis *a = analyze(g, &o);
  char *buf = write_mem(a, rp_analysis_write_text);
  cr_assert(strstr(buf, "3 operations"), "%s", buf);
  cr_assert(strstr(buf, "(1 copy engine per device)"), "%s", buf);
  cr_assert(strstr(buf, "copy:0               20.000 us  100.0%"), "%s", buf);
  cr_assert(strstr(buf, "critical path: 15.000 us over 2 operations"), "%s",
            buf);
  cr_assert(strstr(buf, "limited by copy:0"), "%s", buf);
  cr_assert(strstr(buf, "makespan                20.000 us"), "%s", buf);
  free(buf);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* The command-line tool, on a graph file written by the library. */
static int run_tool(const char *args, char **out) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s analyze %s 2>/dev/null", RP_TEST_TOOL, args);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  size_t r;
  while ((r = fread(buf + len, 1, cap - 1 - len, p)) > 0)
    len += r;
  buf[len] = 0;
  int st = pclose(p);
  *out = buf;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(analyze, cli_text_json_and_errors) {
  rp_graph *g = attach_example();
  char path[] = "/tmp/rp_analyze_cliXXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  FILE *fp = fdopen(fd, "w");
  cr_assert_eq(rp_graph_write_json(g, fp), RP_OK);
  fclose(fp);
  char args[512], *out;
  snprintf(args, sizeof args, "%s --json", path);
  cr_assert_eq(run_tool(args, &out), 0);
  cJSON *j = cJSON_Parse(out);
  cr_assert_not_null(j, "%s", out);
  cr_assert_eq(num(j, "makespan_us"), 30);
  cr_assert_eq(num(j, "serial_us"), 40);
  cJSON_Delete(j);
  free(out);
  snprintf(args, sizeof args, "%s --copy-engines 1", path);
  cr_assert_eq(run_tool(args, &out), 0);
  cr_assert(strstr(out, "copy:0"), "%s", out);
  free(out);
  snprintf(args, sizeof args, "%s --copy-engines 3", path);
  cr_assert_eq(run_tool(args, &out), 2);
  free(out);
  snprintf(args, sizeof args, "%s --h2d-gbps -1", path);
  cr_assert_eq(run_tool(args, &out), 2);
  free(out);
  snprintf(args, sizeof args, "%s --bogus", path);
  cr_assert_eq(run_tool(args, &out), 2);
  free(out);
  cr_assert_eq(run_tool("/nonexistent/graph.json", &out), 1);
  free(out);
  /* a truncated file */
  fp = fopen(path, "w");
  fputs("{\"format\": \"reprise-graph\", \"version\": 1, \"ops\": [", fp);
  fclose(fp);
  cr_assert_eq(run_tool(path, &out), 1);
  free(out);
  unlink(path);
  rp_graph_destroy(g);
}

/* Compute units: kernels of a device with k units take k lanes in turn,
 * so four independent 10 us kernels on 2 units need 20 us, not 40. */
Test(analyze, compute_units_are_lanes_taken_in_turn) {
  static char A[4][8];
  rp_graph *g;
  rp_mode m[] = {RP_INOUT};
  rp_param ps[1];
  rp_kernel k = tu_nop_kernel("k", 1, m, ps);
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  for (int i = 0; i < 4; i++) {
    char name[8];
    rp_buf b;
    snprintf(name, sizeof name, "A%d", i);
    cr_assert_eq(rp_buffer_register(g, name, A[i], 8, &b), RP_OK);
    rp_arg arg = rp_arg_buf(rp_whole(b));
    rp_op_opts o = RP_OP_OPTS_WITH(.cost_us = 10);
    cr_assert_eq(rp_record_kernel(g, &k, 0, rp_dims3(1, 1, 1), &arg, &o, NULL),
                 RP_OK);
  }
  cr_assert_eq(rp_graph_end(g), RP_OK);
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  unsigned cu[1] = {2};
  o.compute_units = cu;
  o.ncompute_units = 1;
  rp_analysis *an;
  cr_assert_eq(rp_analyze(g, &o, &an), RP_OK);
  rp_summary s;
  rp_analysis_summary(an, &s);
  cr_assert_float_eq(s.serial_us, 40, 1e-9);
  cr_assert_float_eq(s.makespan_us, 20, 1e-9);
  cr_assert_float_eq(s.max_lane_us, 20, 1e-9);
  cr_assert_float_eq(s.bound, 2, 1e-9);
  cr_assert_eq(rp_analysis_num_lanes(an), 2);
  const char *name;
  double busy;
  cr_assert_eq(rp_analysis_lane(an, 1, &name, &busy), RP_OK);
  cr_assert_str_eq(name, "compute:0.1");
  rp_op_sched os;
  cr_assert_eq(rp_analysis_op(an, 2, &os), RP_OK);
  cr_assert_eq(os.lane, 0); /* ops 0 and 2 on unit 0 */
  rp_analysis_destroy(an);
  unsigned bad[1] = {5000};
  o.compute_units = bad;
  cr_assert_eq(rp_analyze(g, &o, &an), RP_EINVAL);
  rp_graph_destroy(g);
}

/* A trace in parts: each part a trace of its own with every lane's track,
 * the parts' events together the whole trace's, in the same order, every
 * operation once. */
Test(analyze, trace_parts_cover_the_whole_trace) {
  rp_graph *g = NULL;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  rp_buffer_desc d = {"A", NULL, 1 << 16, 4, 0, {0, 0, 0}};
  rp_buf b;
  cr_assert_eq(rp_buffer_add(g, &d, &b), RP_OK);
  for (unsigned i = 0; i < 2500; i++) {
    rp_arg arg = rp_arg_buf(rp_bytes(b, (i % 16) * 4096, 4096));
    cr_assert_eq(rp_record_kernel(g, &k_io, (int)(i % 3), rp_dims3(1, 1, 1),
                                  &arg, NULL, NULL),
                 RP_OK);
  }
  cr_assert_eq(rp_graph_end(g), RP_OK);
  rp_analysis *a = analyze(g, NULL);
  cr_assert_eq(rp_analysis_trace_parts(a, 1000), 3);
  cr_assert_eq(rp_analysis_trace_parts(a, 2500), 1);
  cr_assert_eq(rp_analysis_trace_parts(a, 0), 1);
  char *whole = write_mem(a, rp_analysis_write_trace);
  cJSON *w = cJSON_Parse(whole);
  cr_assert_not_null(w);
  const cJSON *wev = cJSON_GetObjectItem(w, "traceEvents"), *we;
  /* The whole trace's events, in order. */
  const cJSON *first_x = NULL;
  cJSON_ArrayForEach(we, wev) if (!strcmp(str(we, "ph"), "X")) {
    first_x = we;
    break;
  }
  cr_assert_not_null(first_x);
  static unsigned char seen[2500];
  memset(seen, 0, sizeof seen);
  unsigned total = 0;
  const cJSON *next = first_x;
  for (uint32_t k = 0; k < 3; k++) {
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    cr_assert_eq(rp_analysis_write_trace_part(a, fp, k * 1000, 1000), RP_OK);
    fclose(fp);
    cJSON *j = cJSON_Parse(buf);
    cr_assert_not_null(j, "part %u is not JSON", k);
    const cJSON *e;
    unsigned x = 0, lanes = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "traceEvents")) {
      if (!strcmp(str(e, "ph"), "M")) {
        lanes += !strcmp(str(e, "name"), "thread_name");
        continue;
      }
      rp_node n = (rp_node)num(cJSON_GetObjectItem(e, "args"), "id");
      cr_assert(n < 2500 && !seen[n], "op %u twice", n);
      seen[n] = 1;
      /* The same event as the whole trace's next one. */
      cr_assert_not_null(next);
      char *p1 = cJSON_PrintUnformatted(e), *p2 = cJSON_PrintUnformatted(next);
      cr_assert_str_eq(p1, p2);
      free(p1);
      free(p2);
      next = next->next;
      x++;
    }
    cr_assert_eq(lanes, 3, "part %u: %u lane tracks", k, lanes);
    cr_assert_eq(x, k < 2 ? 1000u : 500u);
    total += x;
    cJSON_Delete(j);
    free(buf);
  }
  cr_assert_eq(total, 2500);
  cr_assert_null(next);
  FILE *fp = fopen("/dev/null", "w");
  cr_assert_eq(rp_analysis_write_trace_part(a, fp, 2501, 1), RP_EINVAL);
  fclose(fp);
  cJSON_Delete(w);
  free(whole);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}
