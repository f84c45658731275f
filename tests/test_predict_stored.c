/* Issue 33, one answer: team times stored in the graph (per operation,
 * with the team's threads, backend and share) are written and read back
 * in the JSON graph format, and the prediction from them is the one the
 * library gives with the same times as options and the one `reprise
 * analyze --backend openmp --threads T` gives; a team of another size
 * gets serial costs and the report says so. The profile range comes
 * from the profiles' smallest and largest times. Exact figures from
 * fixed costs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* open_memstream, setenv, mkdtemp */
#endif
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "reprise.h"
#include "util.h"

static unsigned char mem[2][64];

#define EXACT(x, v)                                                            \
  cr_assert(fabs((x) - (v)) < 1e-12, #x " = %.17g, not %.17g", (double)(x),    \
            (double)(v))

/* Serial profile: 10 us each (8 - 12); team profile: 12 and 13 us
 * (11 - 14 and 12 - 16). */
static const double smed[2] = {10, 10}, smin[2] = {8, 8}, smax[2] = {12, 12};
static const double tmed[2] = {12, 13}, tmin[2] = {11, 12}, tmax[2] = {14, 16};

/* Two independent kernels of 16 points, each over its own buffer. */
static rp_graph *two_kernels(void) {
  static const rp_mode io[1] = {RP_INOUT};
  static rp_param ps[1];
  static rp_kernel k;
  if (!k.name)
    k = tu_nop_kernel("k", 1, io, ps);
  rp_graph *g = NULL;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  for (unsigned i = 0; i < 2; i++) {
    rp_buf b;
    TU_OK(g, rp_buffer_register(g, i ? "B1" : "B0", mem[i], 64, &b));
    rp_arg arg = rp_arg_buf(rp_whole(b));
    TU_OK(g, rp_record_kernel(g, &k, 0, rp_dims3(16, 1, 1), &arg, NULL, NULL));
  }
  TU_OK(g, rp_graph_end(g));
  return g;
}

/* A pool of 2 threads of backend "test", no overheads, half a core
 * each with both busy (the two kernels modelled: 20 us overlapped). */
static void pool_model(rp_model *m) {
  static const char *const modes[2] = {"parallel", "serial"};
  rp_model_init(m);
  snprintf(m->backend, sizeof m->backend, "test");
  for (unsigned i = 0; i < 2; i++)
    snprintf(m->mode[i].name, sizeof m->mode[i].name, "%s", modes[i]);
  m->nmode = 2;
  m->host_units = m->units[0] = 2;
  m->phys[0] = 0;
  m->split_min = 100;
  m->split_efficiency = 0.5;
}

/* The profiles' times as options, as the examples give them. */
static void with_times(rp_analysis_opts *o) {
  o->measured_us = smed;
  o->measured_min_us = smin;
  o->measured_max_us = smax;
  o->team_us = tmed;
  o->team_min_us = tmin;
  o->team_max_us = tmax;
  o->team_share = 0.97;
}

/* a's text report, or without a g's JSON (free it). */
static char *text_of(const rp_graph *g, const rp_analysis *a) {
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  cr_assert(fp && (a ? rp_analysis_write_text(a, fp)
                     : rp_graph_write_json(g, fp)) == RP_OK);
  cr_assert_eq(fclose(fp), 0);
  return buf;
}

static rp_summary summary_of(const rp_graph *g, const rp_analysis_opts *o,
                             char **text) {
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(g, o, &a), RP_OK, "%s", rp_last_error());
  rp_summary s;
  rp_analysis_summary(a, &s);
  if (text)
    *text = text_of(g, a);
  rp_analysis_destroy(a);
  return s;
}

/* b's headline and profile range are a's, exactly. */
static void same(const rp_summary *a, const rp_summary *b) {
  EXACT(b->predicted_speedup, a->predicted_speedup);
  EXACT(b->profile_lo, a->profile_lo);
  EXACT(b->profile_hi, a->profile_hi);
}

/* What s says of the graph's team times. */
static void stored_as(const rp_summary *s, int used, unsigned threads,
                      int costs) {
  cr_assert_eq(s->stored_team_used, used);
  cr_assert_eq(s->stored_team_threads, threads);
  cr_assert_eq(s->team_costs, costs);
}

/* g written as JSON and read back. */
static rp_graph *round_trip(const rp_graph *g, const char *path) {
  FILE *fp = fopen(path, "w");
  cr_assert_not_null(fp);
  cr_assert_eq(rp_graph_write_json(g, fp), RP_OK);
  cr_assert_eq(fclose(fp), 0);
  rp_graph *r = NULL;
  fp = fopen(path, "r");
  cr_assert_not_null(fp);
  char err[256] = "";
  cr_assert_eq(rp_graph_read_json(&r, fp, err, sizeof err), RP_OK, "%s", err);
  fclose(fp);
  return r;
}

static void store(rp_graph *g, unsigned threads, const char *backend) {
  TU_OK(g, rp_graph_set_measured_all(g, smed, smin, smax, 7, backend, "vm"));
  TU_OK(g, rp_graph_set_team_measured_all(g, tmed, tmin, tmax, 7, threads, 0.97,
                                          backend, "vm"));
}

Test(predict_stored, team_times_round_trip) {
  rp_graph *g = two_kernels();
  rp_team_measured t;
  cr_assert_eq(rp_graph_get_team_measured(g, 0, &t), RP_ENOTFOUND);
  store(g, 2, "openmp");
  char path[] = "/tmp/rp_stored_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  close(fd);
  rp_graph *r = round_trip(g, path);
  for (rp_node n = 0; n < 2; n++) {
    cr_assert_eq(rp_graph_get_team_measured(r, n, &t), RP_OK);
    EXACT(t.median_us, tmed[n]);
    EXACT(t.min_us, tmin[n]);
    EXACT(t.max_us, tmax[n]);
    EXACT(t.share, 0.97);
    cr_assert_eq(t.runs, 7);
    cr_assert_eq(t.threads, 2);
    cr_assert_str_eq(t.backend, "openmp");
    cr_assert_str_eq(t.machine, "vm");
    rp_measured m;
    cr_assert_eq(rp_graph_get_measured(r, n, &m), RP_OK);
    EXACT(m.min_us, smin[n]);
  }
  /* A graph without team times writes no "team" key (old readers). */
  rp_graph *plain = two_kernels();
  char *buf = text_of(plain, NULL);
  cr_assert_null(strstr(buf, "\"team\""));
  free(buf);
  /* Bad figures are refused, and bad files say why. */
  t.threads = 0;
  cr_assert_eq(rp_graph_set_team_measured(g, 0, &t), RP_EINVAL);
  t.threads = 2;
  t.share = 1.5;
  cr_assert_eq(rp_graph_set_team_measured(g, 0, &t), RP_EINVAL);
  cr_assert_eq(rp_graph_set_team_measured(g, 0, NULL), RP_OK);
  cr_assert_eq(rp_graph_get_team_measured(g, 0, &t), RP_ENOTFOUND);
  cr_assert_eq(rp_graph_get_measured(g, 0, &(rp_measured){0}), RP_OK);
  rp_graph_destroy(plain);
  rp_graph_destroy(r);
  rp_graph_destroy(g);
  unlink(path);
}

Test(predict_stored, bad_team_object_is_refused) {
  rp_graph *g = two_kernels();
  store(g, 2, "openmp");
  char *buf = text_of(g, NULL);
  char *p = strstr(buf, "\"threads\": 2");
  cr_assert_not_null(p);
  memcpy(p, "\"threads\": 0", 12);
  rp_graph *r = NULL;
  FILE *fp = fmemopen(buf, strlen(buf), "r");
  char err[256] = "";
  cr_assert_eq(rp_graph_read_json(&r, fp, err, sizeof err), RP_EPARSE);
  fclose(fp);
  cr_assert(strstr(err, "team: threads"), "%s", err);
  free(buf);
  rp_graph_destroy(g);
}

/* The prediction from stored team times is the one from the same times
 * given as options, range included; a team of another size or backend
 * gets serial costs, and the report says so. */
Test(predict_stored, stored_times_give_the_same_prediction) {
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  rp_model m;
  pool_model(&m);
  o.model = &m;
  rp_graph *g = two_kernels();
  with_times(&o);
  rp_summary given = summary_of(g, &o, NULL);
  /* The two kernels are identical: their team times the median ratio
   * to their serial cost of 10 (test_predict_pool): 12.5, 11.5 - 15.
   * Serial 20, overlapped 12.5; low: serial 16 against 15, high: 24
   * against 11.5. */
  EXACT(given.predicted_speedup, 20.0 / 12.5);
  EXACT(given.profile_lo, 16.0 / 15);
  EXACT(given.profile_hi, 24.0 / 11.5);
  cr_assert_eq(given.stored_team_used, 0);
  store(g, 2, "test");
  rp_analysis_opts_init(&o);
  o.model = &m;
  char *text = NULL;
  rp_summary st = summary_of(g, &o, &text);
  same(&given, &st);
  EXACT(st.team_share, 0.97);
  stored_as(&st, 1, 2, 2);
  cr_assert(strstr(text, "team costs      2 operations timed within the "
                         "team's overlapped replays (the graph's team "
                         "times)"),
            "%s", text);
  cr_assert(strstr(text, "profile range     1.067x - 2.087x"), "%s", text);
  free(text);
  /* Another backend's, or another team size's: serial costs (the
   * modelled overlap: both at half a core, 20 us). */
  store(g, 3, "test");
  st = summary_of(g, &o, &text);
  stored_as(&st, 0, 3, 0);
  EXACT(st.model_overlap_us, 20);
  cr_assert(strstr(text, "team costs      none: the graph's team times are "
                         "of 3 threads on test, this\n                "
                         "prediction of 2 on test: it uses serial costs"),
            "%s", text);
  free(text);
  store(g, 2, "openmp");
  st = summary_of(g, &o, NULL);
  stored_as(&st, 0, 2, 0);
  /* Without min and max (the medians alone): no range. */
  rp_graph *h = two_kernels();
  TU_OK(h, rp_graph_set_measured_all(h, smed, NULL, NULL, 1, "test", "vm"));
  TU_OK(h, rp_graph_set_team_measured_all(h, tmed, NULL, NULL, 1, 2, 0, "test",
                                          "vm"));
  st = summary_of(h, &o, NULL);
  EXACT(st.profile_lo, 20.0 / 12.5);
  EXACT(st.profile_hi, 20.0 / 12.5);
  rp_graph_destroy(h);
  rp_graph_destroy(g);
}

/* A number after key in s (JSON), or NAN. */
static double json_num(const char *s, const char *key) {
  const char *p = strstr(s, key);
  return p ? strtod(p + strlen(key), NULL) : NAN;
}

/* The standard output of `reprise analyze --backend openmp ARGS PATH`,
 * which must succeed (free it). */
static char *cli(const char *args, const char *path) {
  char cmd[9000];
  snprintf(cmd, sizeof cmd, "%s analyze --backend openmp %s %s 2>/dev/null",
           RP_TEST_TOOL, args, path);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  char *out = calloc(1, 1 << 16);
  size_t n = fread(out, 1, (1 << 16) - 1, p);
  out[n] = 0;
  cr_assert_eq(pclose(p), 0, "%s", cmd);
  return out;
}

/* The library and `reprise analyze --backend openmp --threads 2` of the
 * same saved graph: the same prediction and range, exactly (the
 * uncalibrated model of an empty cache on both sides). */
Test(predict_stored, library_and_cli_agree, .timeout = 60) {
  char dir[] = "/tmp/rp_stored_cli_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  cr_assert_eq(setenv("XDG_CACHE_HOME", dir, 1), 0);
  cr_assert_eq(setenv("RP_NO_AUTOCALIBRATE", "1", 1), 0);
  rp_graph *g0 = two_kernels();
  store(g0, 2, "openmp");
  char path[4200];
  snprintf(path, sizeof path, "%s/g.json", dir);
  rp_graph *g = round_trip(g0, path);
  /* The library: the model the CLI builds (uncalibrated, openmp, 2). */
  const rp_backend *be = NULL;
  cr_assert_eq(rp_backend_find("openmp", &be), RP_OK);
  rp_model m;
  rp_model_init(&m);
  snprintf(m.backend, sizeof m.backend, "openmp");
  rp_exec_opts xo = RP_EXEC_OPTS_INIT;
  xo.nthreads = 2;
  unsigned units[RP_MAX_DEVICES];
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  cr_assert_eq(rp_analysis_opts_for(&o, &m, units, g, be, &xo), RP_OK);
  rp_summary lib = summary_of(g, &o, NULL);
  stored_as(&lib, 1, 2, 2);
  /* As the examples analyse it: the times as options. */
  with_times(&o);
  rp_summary opt = summary_of(g, &o, NULL);
  same(&lib, &opt);
  /* As the examples do: rp_analyze_exec() of an openmp exec of 2
   * threads (of the recorded graph: it has the kernels' bodies), its
   * options from the exec. */
  rp_exec *x = NULL;
  cr_assert_eq(rp_exec_create(&x, g0, be, &xo), RP_OK, "%s", rp_last_error());
  rp_analysis_opts_init(&o);
  cr_assert_eq(rp_analysis_opts_from_exec(&o, &m, units, x), RP_OK);
  with_times(&o);
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze_exec(x, &o, &a), RP_OK, "%s", rp_last_error());
  rp_summary ex;
  rp_analysis_summary(a, &ex);
  rp_analysis_destroy(a);
  rp_exec_destroy(x);
  rp_graph_destroy(g0);
  same(&lib, &ex);
  /* No overheads uncalibrated: 20 / 12.5, 16 / 15 to 24 / 11.5. */
  EXACT(lib.predicted_speedup, 20.0 / 12.5);
  EXACT(lib.profile_lo, 16.0 / 15);
  EXACT(lib.profile_hi, 24.0 / 11.5);
  char *out = cli("--threads 2 --json", path);
  EXACT(json_num(out, "\"predicted_speedup\": "), lib.predicted_speedup);
  EXACT(json_num(out, "\"profile_range\": ["), lib.profile_lo);
  const char *r = strstr(out, "\"profile_range\": [");
  cr_assert_not_null(r);
  EXACT(json_num(r, ", "), lib.profile_hi);
  cr_assert(strstr(out, "\"stored_team\": {\"threads\": 2, \"backend\": "
                        "\"openmp\", \"used\": true}"),
            "%s", out);
  free(out);
  /* Another team: the CLI says it uses serial costs. */
  out = cli("--threads 3", path);
  cr_assert(strstr(out, "the graph's team times are of 2 threads on openmp"),
            "%s", out);
  cr_assert(strstr(out, "it uses serial costs"), "%s", out);
  free(out);
  rp_graph_destroy(g);
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_assert_eq(system(cmd), 0);
}
