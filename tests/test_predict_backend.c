/* Issue 33: the prediction describes what the backend executes (the
 * reference backend is 1.00x, a CPU backend's copies cost nothing and hold
 * no lane), the library and `reprise analyze --backend` give one answer,
 * a busy machine withholds the figure, and a serial replay that the
 * profile does not describe is flagged. */
#include <criterion/criterion.h>
#include <sched.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"
#include "reprise/backend.h"
#include "util.h"

static void nop_cpu(const rp_kargs *a, const uint64_t lo[3],
                    const uint64_t hi[3]) {
  (void)a;
  (void)lo;
  (void)hi;
}
static const rp_param p_io[] = {{"a", RP_INOUT}};
static const rp_kernel k_io = RP_KERNEL_WITH(.name = "k_io", .nparams = 1,
                                             .params = p_io, .cpu = nop_cpu);

static double mem[4][4096];

/* Four independent chains, each: copy to device d, a kernel of 100 us
 * on d, copy back; `devices` logical devices. */
static rp_graph *chains(int devices) {
  rp_graph *g = NULL;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  for (int i = 0; i < 4; i++) {
    char name[8];
    snprintf(name, sizeof name, "B%d", i);
    rp_buf b;
    TU_OK(g, rp_buffer_register(g, name, mem[i], sizeof mem[i], &b));
    int d = i % devices;
    TU_OK(g, rp_record_copy_to_device(g, rp_whole(b), d, NULL, NULL));
    rp_arg arg = rp_arg_buf(rp_whole(b));
    rp_op_opts o = RP_OP_OPTS_WITH(.cost_us = 100);
    TU_OK(g, rp_record_kernel(g, &k_io, d, rp_dims3(16, 1, 1), &arg, &o, NULL));
    TU_OK(g, rp_record_copy_to_host(g, rp_whole(b), d, NULL, NULL));
  }
  TU_OK(g, rp_graph_end(g));
  return g;
}

/* Options with an uncalibrated model of backend `be_name` for g, as the
 * analysis of an exec on it would be given (no cache; the load not
 * looked at: the figure, not this machine's load now). */
static void opts_for(const rp_graph *g, const char *be_name, unsigned threads,
                     rp_model *m, rp_analysis_opts *o, unsigned *units) {
  const rp_backend *be = NULL;
  if (rp_backend_find(be_name, &be) != RP_OK)
    cr_skip_test("no %s backend", be_name);
  rp_model_init(m);
  snprintf(m->backend, sizeof m->backend, "%s", be_name);
  rp_exec_opts xo;
  rp_exec_opts_init(&xo);
  xo.nthreads = (int)threads;
  rp_analysis_opts_init(o);
  cr_assert_eq(rp_analysis_opts_for(o, m, units, g, be, &xo), RP_OK);
  m->load_measured = 0;
}

static rp_analysis *analyse_for(const rp_graph *g, const char *be_name,
                                unsigned threads, rp_model *m) {
  rp_analysis_opts o;
  unsigned units[RP_MAX_DEVICES];
  opts_for(g, be_name, threads, m, &o, units);
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  return a;
}

/* An exec of g on openmp with 2 threads. */
static rp_exec *openmp_exec(const rp_graph *g) {
  const rp_backend *be = NULL;
  if (rp_backend_find("openmp", &be) != RP_OK)
    cr_skip_test("no openmp backend");
  rp_exec_opts xo;
  rp_exec_opts_init(&xo);
  xo.nthreads = 2;
  rp_exec *x = NULL;
  cr_assert_eq(rp_exec_create(&x, g, be, &xo), RP_OK);
  return x;
}

/* The text report of a, or with ach its achieved lines. */
static char *text_of(const rp_analysis *a, const rp_achieved *ach) {
  char *t = NULL;
  size_t n = 0;
  FILE *fp = open_memstream(&t, &n);
  cr_assert_eq(ach ? rp_analysis_write_achieved(a, ach, fp)
                   : rp_analysis_write_text(a, fp),
               RP_OK);
  fclose(fp);
  return t;
}

Test(predict_backend, reference_is_exactly_one_at_any_device_count) {
  for (int devices = 1; devices <= 3; devices++) {
    rp_graph *g = chains(devices);
    rp_model m;
    rp_analysis *a = analyse_for(g, "reference", 0, &m);
    rp_summary s;
    rp_analysis_summary(a, &s);
    cr_assert_eq(m.in_order, 1);
    cr_assert_eq(s.predicted_speedup, 1.0, "%d devices: %.17g", devices,
                 s.predicted_speedup);
    cr_assert_eq(s.model_serial_us, s.model_overlap_us);
    /* 4 kernels of 100 us; the copies elided (host memory). */
    cr_assert(fabs(s.model_serial_us - 400) < 1e-9, "%g", s.model_serial_us);
    /* The model's timeline is program order, one at a time. */
    double st, en, prev = 0;
    for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
      cr_assert_eq(rp_analysis_op_model(a, n, &st, &en), RP_OK);
      cr_assert_eq(st, prev);
      prev = en;
    }
    rp_analysis_destroy(a);
    rp_graph_destroy(g);
  }
}

Test(predict_backend, cpu_copies_cost_nothing_and_hold_no_lane) {
  rp_graph *g = chains(1);
  rp_model m;
  rp_analysis *a = analyse_for(g, "openmp", 2, &m);
  rp_summary s;
  rp_analysis_summary(a, &s);
  /* Only the kernels cost: 400 us serial; two threads run two chains at
   * once: 200 us (an uncalibrated model has no overheads). */
  cr_assert(fabs(s.serial_us - 400) < 1e-9, "%g", s.serial_us);
  cr_assert(fabs(s.model_serial_us - 400) < 1e-9, "%g", s.model_serial_us);
  cr_assert(fabs(s.model_overlap_us - 200) < 1e-9, "%g", s.model_overlap_us);
  rp_op_sched os;
  cr_assert_eq(rp_analysis_op(a, 0, &os), RP_OK); /* the first copy */
  cr_assert_eq(os.cost_us, 0);
  char *t = text_of(a, NULL);
  cr_assert(strstr(t, "costs: 4 given, 0 measured, 0 modelled, 0 default, "
                      "8 elided\n"),
            "%s", t);
  cr_assert(strstr(t, "elided: 8 copies the openmp backend does not perform"),
            "%s", t);
  cr_assert_null(strstr(t, "h2d:0"), "%s", t);
  cr_assert_null(strstr(t, "d2h:0"), "%s", t);
  cr_assert_null(strstr(t, "modelled: "), "%s", t);
  cr_assert(strstr(t, "(every term above: docs/terms.md)"), "%s", t);
  free(t);
  size_t n = 0;
  FILE *fp = open_memstream(&t, &n);
  cr_assert_eq(rp_analysis_write_json(a, fp), RP_OK);
  fclose(fp);
  cr_assert_null(strstr(t, "{\"name\": \"h2d:0\""), "%s", t);
  cr_assert(strstr(t, "\"elided\": true"), "%s", t);
  free(t);
  fp = open_memstream(&t, &n);
  cr_assert_eq(rp_analysis_write_svg(a, fp), RP_OK);
  fclose(fp);
  cr_assert_null(strstr(t, ">h2d:0<"), "%s", t);
  cr_assert(strstr(t, ">compute:0.1<"), "%s", t);
  free(t);
  rp_analysis_destroy(a);
  /* The same graph for a GPU-like model keeps its copies on their lanes. */
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  rp_model_init(&m);
  o.model = &m;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  t = text_of(a, NULL);
  cr_assert(strstr(t, "h2d:0"), "%s", t);
  cr_assert_null(strstr(t, "elided:"), "%s", t);
  free(t);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(predict_backend, busy_machine_withholds_the_figure) {
  rp_graph *g = chains(1);
  rp_model m;
  rp_analysis *a = analyse_for(g, "openmp", 2, &m);
  rp_summary quiet;
  rp_analysis_summary(a, &quiet);
  cr_assert_eq(quiet.withheld, 0);
  rp_analysis_destroy(a);
  /* 5.7 other runnable tasks on 2 CPUs: the team of 2 gets 2 / 7.7. */
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = &m;
  unsigned units[RP_MAX_DEVICES] = {2};
  o.compute_units = units;
  o.ncompute_units = 1;
  m.load_measured = 1;
  m.runnable = 5.7;
  m.usable_cpus = 2;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_summary s;
  rp_analysis_summary(a, &s);
  cr_assert_eq(s.withheld, 1);
  cr_assert_eq(s.predicted_speedup, quiet.predicted_speedup);
  char *t = text_of(a, NULL);
  cr_assert(strstr(t, "withheld: machine busy: 5.7 runnable besides this "
                      "program on 2 CPUs"),
            "%s", t);
  cr_assert(strstr(t, "(a team of 2 would get about 26% of its cores"), "%s",
            t);
  free(t);
  /* No range is claimed: the achieved figure is never "outside" it. */
  double ser[3] = {1000, 1000, 1000}, par[3] = {900, 950, 1000};
  rp_achieved ach;
  cr_assert_eq(rp_achieved_compute(a, ser, par, 3, &ach), RP_OK);
  cr_assert_eq(ach.outside, 0);
  rp_analysis_destroy(a);
  /* One other task besides a team of 2 on 16 CPUs: not busy. */
  m.runnable = 1;
  m.usable_cpus = 16;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_analysis_summary(a, &s);
  cr_assert_eq(s.withheld, 0);
  /* A reference replay is 1.00x on any machine: never withheld. */
  rp_analysis_destroy(a);
  m.in_order = 1;
  m.runnable = 9;
  m.usable_cpus = 2;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_analysis_summary(a, &s);
  cr_assert_eq(s.withheld, 0);
  cr_assert_eq(s.predicted_speedup, 1.0);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(predict_backend, serial_replay_off_the_profile_is_flagged) {
  rp_graph *g = chains(1);
  rp_model m;
  rp_analysis *a = analyse_for(g, "openmp", 2, &m);
  double ser[1] = {1000}, par[1] = {500};
  rp_achieved ach;
  cr_assert_eq(rp_achieved_compute(a, ser, par, 1, &ach), RP_OK);
  /* 400 us predicted per serial replay. */
  cr_assert_eq(rp_achieved_compare_serial(&ach, a, 470), RP_OK);
  cr_assert(fabs(ach.serial_ratio - 470.0 / 400) < 1e-12);
  cr_assert_eq(ach.serial_off, 0);
  cr_assert_eq(rp_achieved_compare_serial(&ach, a, 490), RP_OK);
  cr_assert_eq(ach.serial_off, 1);
  char *t = text_of(a, &ach);
  cr_assert(strstr(t, "warning: the serial replay took 1.23x the predicted "
                      "one"),
            "%s", t);
  free(t);
  cr_assert_eq(rp_achieved_compare_serial(&ach, a, 0), RP_EINVAL);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* The library (rp_analysis_opts_from_exec() on an exec) and the tool's
 * path (rp_analysis_opts_for() on the graph and backend) give the same
 * prediction with the same model. */
Test(predict_backend, library_and_tool_give_one_answer) {
  rp_graph *g = chains(2);
  rp_exec *x = openmp_exec(g);
  const rp_backend *be = rp_exec_backend(x);
  rp_exec_opts xo;
  rp_exec_opts_init(&xo);
  xo.nthreads = 2;
  rp_model base;
  rp_model_init(&base);
  snprintf(base.backend, sizeof base.backend, "openmp");
  base.split_efficiency = 0.8;
  base.task_us = 3;
  base.edge_us = 1;
  rp_model m1 = base, m2 = base;
  unsigned u1[RP_MAX_DEVICES], u2[RP_MAX_DEVICES];
  rp_analysis_opts o1, o2;
  rp_analysis_opts_init(&o1);
  rp_analysis_opts_init(&o2);
  cr_assert_eq(rp_analysis_opts_from_exec(&o1, &m1, u1, x), RP_OK);
  cr_assert_eq(rp_analysis_opts_for(&o2, &m2, u2, g, be, &xo), RP_OK);
  m1.load_measured = m2.load_measured = 0;
  rp_analysis *a1 = NULL, *a2 = NULL;
  cr_assert_eq(rp_analyze_exec(x, &o1, &a1), RP_OK);
  cr_assert_eq(rp_analyze(g, &o2, &a2), RP_OK);
  rp_summary s1, s2;
  rp_analysis_summary(a1, &s1);
  rp_analysis_summary(a2, &s2);
  cr_assert_eq(s1.predicted_speedup, s2.predicted_speedup, "%.17g vs %.17g",
               s1.predicted_speedup, s2.predicted_speedup);
  cr_assert(s1.predicted_speedup > 1);
  rp_analysis_destroy(a1);
  rp_analysis_destroy(a2);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* An analysis for a backend measures the load now: the CPUs this process
 * may use (its affinity mask) and the other runnable tasks. */
Test(predict_backend, load_is_measured_against_the_usable_cpus) {
  const rp_backend *be = NULL;
  if (rp_backend_find("openmp", &be) != RP_OK)
    cr_skip_test("no openmp backend");
  rp_graph *g = chains(1);
  rp_model m;
  rp_model_init(&m);
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  unsigned units[RP_MAX_DEVICES];
  cr_assert_eq(rp_analysis_opts_for(&o, &m, units, g, be, NULL), RP_OK);
  cpu_set_t set;
  CPU_ZERO(&set);
  cr_assert_eq(sched_getaffinity(0, sizeof set, &set), 0);
  cr_assert_eq(m.load_measured, 1);
  cr_assert_eq(m.usable_cpus, (unsigned)CPU_COUNT(&set));
  cr_assert(m.runnable >= 0 && isfinite(m.runnable), "%g", m.runnable);
  cr_assert_eq(m.shared_memory, 1);
  cr_assert_eq(m.in_order, 0);
  cr_assert_eq(m.h2d.gbps, 0);
  rp_graph_destroy(g);
}

static const rp_param p_out[] = {{"a", RP_OUT}};
static const rp_kernel k_out = RP_KERNEL_WITH(.name = "k_out", .nparams = 1,
                                              .params = p_out, .cpu = nop_cpu);

/* A region only written is read for ownership first (write-allocate): it
 * draws twice its bytes from memory, as a read-write one does. Two 10 us
 * kernels writing 64 B each draw 12.8 B/us apiece against a team's 12.8:
 * they share it, 20 us (counted once, they would fit: 10 us). */
Test(predict_backend, written_region_draws_twice_its_bytes) {
  rp_graph *g = NULL;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  for (int i = 0; i < 2; i++) {
    char name[8];
    snprintf(name, sizeof name, "W%d", i);
    rp_buf b;
    TU_OK(g, rp_buffer_register(g, name, mem[i], 64, &b));
    rp_arg arg = rp_arg_buf(rp_whole(b));
    rp_op_opts o = RP_OP_OPTS_WITH(.cost_us = 10);
    TU_OK(g,
          rp_record_kernel(g, &k_out, 0, rp_dims3(16, 1, 1), &arg, &o, NULL));
  }
  TU_OK(g, rp_graph_end(g));
  rp_model m;
  rp_analysis_opts o;
  unsigned units[RP_MAX_DEVICES];
  opts_for(g, "openmp", 2, &m, &o, units);
  m.mem1_gbps = m.mem_gbps = 0.0128;
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_summary s;
  rp_analysis_summary(a, &s);
  cr_assert(fabs(s.model_overlap_us - 20) < 1e-9, "%.17g", s.model_overlap_us);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* A copy the exec's plan elides costs nothing, whatever its profile
 * says: the analysis of the exec holds it for what the backend runs. */
Test(predict_backend, plan_elided_copies_cost_nothing) {
  rp_graph *g = chains(1);
  rp_exec *x = openmp_exec(g);
  const rp_plan *p = rp_exec_plan(x);
  cr_assert_eq(p->nelided, 8, "%u", p->nelided);
  rp_model m;
  rp_model_init(&m);
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  unsigned units[RP_MAX_DEVICES];
  cr_assert_eq(rp_analysis_opts_from_exec(&o, &m, units, x), RP_OK);
  m.load_measured = 0;
  double us[12];
  for (int i = 0; i < 12; i++)
    us[i] = 7; /* a profile that timed the copies too */
  o.measured_us = us;
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze_exec(x, &o, &a), RP_OK);
  rp_summary s;
  rp_analysis_summary(a, &s);
  cr_assert(fabs(s.serial_us - 4 * 7) < 1e-9, "%g", s.serial_us);
  rp_op_sched os;
  cr_assert_eq(rp_analysis_op(a, 0, &os), RP_OK);
  cr_assert_eq(os.cost_us, 0);
  rp_analysis_destroy(a);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}
