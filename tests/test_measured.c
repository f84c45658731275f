/* Tests of measured costs: profiling over several replays, saving them in
 * graph files, reading them back, applying them by name. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "reprise.h"
#include "util.h"

/* rp_exec_profile_opts()'s options: @p r runs, flags @p f. */
#define PROF(r, f)                                                             \
  (&(rp_profile_opts){                                                         \
      .size = sizeof(rp_profile_opts), .runs = (r), .flags = (f)})

static void nop_cpu(const rp_kargs *a, const uint64_t lo[3],
                    const uint64_t hi[3]) {}
static const rp_param p_io[] = {{"a", RP_INOUT}};
static const rp_kernel k_io = RP_KERNEL_WITH(.name = "k_io", .nparams = 1,
                                             .params = p_io, .cpu = nop_cpu);
static unsigned char mem[3][256];

/* k ops named names[i % nn] on buffer i % 3. */
static rp_graph *chain(unsigned k, const char *const *names, unsigned nn) {
  rp_graph *g;
  rp_buf b[3];
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  for (int i = 0; i < 3; i++) {
    char nm[4] = {'B', (char)('0' + i), 0, 0};
    TU_OK(g, rp_buffer_register(g, nm, mem[i], sizeof mem[i], &b[i]));
  }
  for (unsigned i = 0; i < k; i++) {
    rp_arg arg = rp_arg_buf(rp_whole(b[i % 3]));
    rp_op_opts o = RP_OP_OPTS_WITH(.name = names[i % nn]);
    TU_OK(g, rp_record_kernel(g, &k_io, 0, rp_dims3(16, 1, 1), &arg, &o, NULL));
  }
  TU_OK(g, rp_graph_end(g));
  return g;
}

static rp_graph *reread(const rp_graph *g) {
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  cr_assert_eq(rp_graph_write_json(g, fp), RP_OK);
  fclose(fp);
  fp = fmemopen(buf, len, "r");
  rp_graph *r = NULL;
  char err[256] = "";
  cr_assert_eq(rp_graph_read_json(&r, fp, err, sizeof err), RP_OK, "%s", err);
  fclose(fp);
  free(buf);
  return r;
}

Test(measured, profile_median_of_runs) {
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("reference", &be), RP_OK);
  static const char *const nm[] = {"a"};
  rp_graph *g = chain(4, nm, 1);
  rp_exec *x = NULL;
  cr_assert_eq(rp_exec_create(&x, g, be, NULL), RP_OK);
  double med[4], lo[4], hi[4];
  cr_assert_eq(rp_exec_profile_opts(x, PROF(0, 0), med, lo, hi), RP_OK);
  for (int i = 0; i < 4; i++) {
    cr_assert(lo[i] >= 0 && lo[i] <= med[i] && med[i] <= hi[i]);
  }
  cr_assert_eq(rp_exec_profile_opts(x, PROF(3, 0), med, NULL, NULL), RP_OK);
  cr_assert_eq(rp_exec_profile_opts(x, PROF(1001, 0), med, NULL, NULL),
               RP_EINVAL);
  cr_assert_eq(
      rp_graph_set_measured_all(g, med, NULL, NULL, 3, "reference", NULL),
      RP_OK);
  rp_measured m;
  cr_assert_eq(rp_graph_get_measured(g, 2, &m), RP_OK);
  cr_assert_eq(m.median_us, med[2]);
  cr_assert_eq(m.runs, 3);
  cr_assert_str_eq(m.backend, "reference");
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(measured, saved_read_back_and_used) {
  static const char *const nm[] = {"a", "b"};
  rp_graph *g = chain(3, nm, 2);
  rp_measured m = {12.5, 11.25, 30.0625, 5, "openmp", "box \"1\""};
  cr_assert_eq(rp_graph_set_measured(g, 1, &m), RP_OK);
  rp_measured bad = {1, 2, 3, 1, "", ""};
  cr_assert_eq(rp_graph_set_measured(g, 0, &bad), RP_EINVAL);
  cr_assert_eq(rp_graph_get_measured(g, 0, &bad), RP_ENOTFOUND);
  rp_graph *r = reread(g);
  rp_measured back;
  cr_assert_eq(rp_graph_get_measured(r, 1, &back), RP_OK);
  cr_assert_eq(back.median_us, 12.5);
  cr_assert_eq(back.min_us, 11.25);
  cr_assert_eq(back.max_us, 30.0625);
  cr_assert_eq(back.runs, 5);
  cr_assert_str_eq(back.backend, "openmp");
  cr_assert_str_eq(back.machine, "box \"1\"");
  cr_assert_eq(rp_graph_get_measured(r, 0, &back), RP_ENOTFOUND);
  /* The analysis takes it as the cost of op 1. */
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(r, NULL, &a), RP_OK);
  rp_op_sched s;
  cr_assert_eq(rp_analysis_op(a, 1, &s), RP_OK);
  cr_assert_eq(s.cost_us, 12.5);
  cr_assert_eq(s.source, RP_COST_MEASURED);
  cr_assert_eq(rp_analysis_op(a, 0, &s), RP_OK);
  cr_assert_eq(s.source, RP_COST_DEFAULT); /* no cost given */
  rp_analysis_destroy(a);
  rp_graph_destroy(r);
  rp_graph_destroy(g);
}

Test(measured, malformed_is_refused) {
  const char *doc =
      "{\"format\": \"reprise-graph\", \"version\": 1, \"buffers\": "
      "[{\"id\": 0, \"name\": \"A\", \"bytes\": 8}], \"ops\": [{\"id\": 0, "
      "\"name\": \"h\", \"type\": \"host\", \"measured\": {\"median_us\": 2, "
      "\"min_us\": 3}, \"access\": [{\"buffer\": 0, \"space\": \"host\", "
      "\"mode\": \"inout\"}]}]}";
  FILE *fp = fmemopen((void *)doc, strlen(doc), "r");
  rp_graph *g = NULL;
  char err[256] = "";
  cr_assert_eq(rp_graph_read_json(&g, fp, err, sizeof err), RP_EPARSE);
  fclose(fp);
  cr_assert(strstr(err, "ops[0].measured"), "%s", err);
}

/* Applied by name: the k-th op named X gets the k-th X's costs; when the
 * source has fewer, its last one's. */
Test(measured, applied_by_name) {
  static const char *const s_nm[] = {"x", "y"};
  static const char *const d_nm[] = {"y", "x", "z"};
  rp_graph *src = chain(4, s_nm, 2); /* x y x y */
  rp_graph *dst = chain(6, d_nm, 3); /* y x z y x z */
  for (uint32_t n = 0; n < 4; n++) {
    rp_measured m = {
        10.0 * (n + 1), 10.0 * (n + 1), 10.0 * (n + 1), 5, "b", "m"};
    cr_assert_eq(rp_graph_set_measured(src, n, &m), RP_OK);
  }
  uint32_t k = 0;
  cr_assert_eq(rp_graph_apply_costs(dst, src, &k), RP_OK);
  cr_assert_eq(k, 4);
  rp_measured m;
  cr_assert_eq(rp_graph_get_measured(dst, 0, &m), RP_OK); /* 1st y */
  cr_assert_eq(m.median_us, 20);
  cr_assert_eq(rp_graph_get_measured(dst, 1, &m), RP_OK); /* 1st x */
  cr_assert_eq(m.median_us, 10);
  cr_assert_eq(rp_graph_get_measured(dst, 3, &m), RP_OK); /* 2nd y */
  cr_assert_eq(m.median_us, 40);
  cr_assert_eq(rp_graph_get_measured(dst, 4, &m), RP_OK); /* 2nd x */
  cr_assert_eq(m.median_us, 30);
  cr_assert_eq(rp_graph_get_measured(dst, 2, &m), RP_ENOTFOUND);
  rp_graph_destroy(src);
  rp_graph_destroy(dst);
}

Test(measured, analyze_costs_option) {
  static const char *const nm[] = {"x", "y"};
  rp_graph *src = chain(2, nm, 2), *dst = chain(2, nm, 2);
  rp_measured m = {123.5, 100, 150, 5, "openmp", "vm"};
  cr_assert_eq(rp_graph_set_measured(src, 1, &m), RP_OK);
  char ps[] = "/tmp/rp_costs_XXXXXX", pd[] = "/tmp/rp_costd_XXXXXX";
  int fs = mkstemp(ps), fd = mkstemp(pd);
  FILE *fp = fdopen(fs, "w");
  cr_assert_eq(rp_graph_write_json(src, fp), RP_OK);
  fclose(fp);
  fp = fdopen(fd, "w");
  cr_assert_eq(rp_graph_write_json(dst, fp), RP_OK);
  fclose(fp);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s analyze %s --costs %s --json 2>/dev/null",
           RP_TEST_TOOL, pd, ps);
  FILE *p = popen(cmd, "r");
  char out[8192] = "";
  size_t k = fread(out, 1, sizeof out - 1, p);
  out[k] = 0;
  cr_assert_eq(pclose(p), 0);
  cr_assert(strstr(out, "\"name\": \"y\", \"type\": \"kernel\", \"lane\": "
                        "\"compute:0\", \"cost_us\": 123.5"),
            "%s", out);
  cr_assert(strstr(out, "\"serial_us\": 133.5"), "%s", out); /* + 10 */
  unlink(ps);
  unlink(pd);
  rp_graph_destroy(src);
  rp_graph_destroy(dst);
}

/* Profiling leaves the user's data alone: the host arrays, the exec's
 * internal images and its scalars are as before; RP_PROFILE_IN_PLACE
 * advances them as a replay would. */
static void acc_cpu(const rp_kargs *a, const uint64_t lo[3],
                    const uint64_t hi[3]) {
  /* t[i] += 1 + s (internal), then h[i] = t[i] * 2 (user array). */
  double *t = (double *)a->a[0].p, *h = (double *)a->a[1].p;
  double s = a->a[2].f64;
  for (uint64_t i = lo[0]; i < hi[0]; i++) {
    t[i] += 1 + s;
    h[i] = t[i] * 2;
  }
}
static const rp_param p_acc[] = {
    {"t", RP_INOUT}, {"h", RP_INOUT}, {"s", RP_SCALAR}};
static const rp_kernel k_acc = RP_KERNEL_WITH(.name = "acc", .nparams = 3,
                                              .params = p_acc, .cpu = acc_cpu);

static void profile_keeps_data(const char *backend) {
  const rp_backend *be;
  if (rp_backend_find(backend, &be) != RP_OK)
    cr_skip_test("no %s backend", backend);
  enum { N = 64 };
  static double h[N], other[N];
  for (int i = 0; i < N; i++)
    h[i] = other[i] = i;
  rp_graph *g;
  rp_buf bt, bh;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  rp_buffer_desc d;
  memset(&d, 0, sizeof d);
  d.name = "t";
  d.bytes = sizeof h;
  d.host = NULL; /* internal: lives in the exec only */
  TU_OK(g, rp_buffer_add(g, &d, &bt));
  TU_OK(g, rp_buffer_register(g, "h", h, sizeof h, &bh));
  rp_arg args[3] = {rp_arg_buf(rp_whole(bt)), rp_arg_buf(rp_whole(bh)),
                    rp_arg_f64(0)};
  rp_node k;
  TU_OK(g, rp_record_kernel(g, &k_acc, 0, rp_dims3(N, 1, 1), args, NULL, &k));
  TU_OK(g, rp_record_sync_host(g, rp_whole(bh), NULL));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x;
  cr_assert_eq(rp_exec_create(&x, g, be, NULL), RP_OK);
  cr_assert_eq(rp_exec_run(x, 1), RP_OK); /* t = 1, h = 2 */
  cr_assert_eq(h[5], 2);
  rp_slot sv;
  sv.f64 = 10;
  cr_assert_eq(rp_exec_set_scalar(x, k, 2, sv), RP_OK);
  double before[N];
  memcpy(before, h, sizeof h);
  uint32_t nn = rp_graph_num_nodes(g);
  double *med = calloc(nn, sizeof *med);
  cr_assert_eq(rp_exec_profile_opts(x, PROF(3, 0), med, NULL, NULL), RP_OK);
  cr_assert_eq(memcmp(before, h, sizeof h), 0, "h changed: %g", h[5]);
  /* The exec did not advance either: the next replay is the second. */
  cr_assert_eq(rp_exec_run(x, 1), RP_OK); /* t = 1 + 11, h = 24 */
  cr_assert_eq(h[5], 24, "h[5] = %g", h[5]);
  /* A rebound array is the user's too. */
  cr_assert_eq(rp_exec_rebind(x, bh, other, sizeof other), RP_OK);
  memcpy(before, other, sizeof other);
  cr_assert_eq(rp_exec_profile_opts(x, PROF(2, 0), med, NULL, NULL), RP_OK);
  cr_assert_eq(memcmp(before, other, sizeof other), 0);
  /* In place: the data advances by the runs. */
  cr_assert_eq(
      rp_exec_profile_opts(x, PROF(2, RP_PROFILE_IN_PLACE), med, NULL, NULL),
      RP_OK);
  cr_assert_eq(other[5], 2 * (12 + 11 + 11), "other[5] = %g", other[5]);
  cr_assert_eq(rp_exec_profile_opts(x, PROF(2, 8), med, NULL, NULL), RP_EINVAL);
  free(med);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(measured, profile_keeps_user_data_reference) {
  profile_keeps_data("reference");
}
Test(measured, profile_keeps_user_data_openmp) { profile_keeps_data("openmp"); }
