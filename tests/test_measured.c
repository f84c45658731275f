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

static void nop_cpu(const rp_kargs *a, const uint64_t lo[3],
                    const uint64_t hi[3]) {}
static const rp_param p_io[] = {{"a", RP_INOUT}};
static const rp_kernel k_io = {"k_io", 1, p_io, nop_cpu, NULL, NULL,
                               {0, 0, 0}, NULL, NULL, 0};
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
    rp_op_opts o = {names[i % nn], 0, NULL, 0};
    TU_OK(g, rp_record_kernel(g, &k_io, 0, rp_dims3(16, 1, 1), &arg, &o,
                              NULL));
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
  cr_assert_eq(rp_exec_profile_n(x, 0, med, lo, hi), RP_OK);
  for (int i = 0; i < 4; i++) {
    cr_assert(lo[i] >= 0 && lo[i] <= med[i] && med[i] <= hi[i]);
  }
  cr_assert_eq(rp_exec_profile_n(x, 3, med, NULL, NULL), RP_OK);
  cr_assert_eq(rp_exec_profile_n(x, 1001, med, NULL, NULL), RP_EINVAL);
  cr_assert_eq(rp_graph_set_measured_all(g, med, NULL, NULL, 3, "reference",
                                         NULL), RP_OK);
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
    rp_measured m = {10.0 * (n + 1), 10.0 * (n + 1), 10.0 * (n + 1), 5, "b",
                     "m"};
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
                        "\"compute:0\", \"cost_us\": 123.5"), "%s", out);
  cr_assert(strstr(out, "\"serial_us\": 133.5"), "%s", out); /* + 10 */
  unlink(ps);
  unlink(pd);
  rp_graph_destroy(src);
  rp_graph_destroy(dst);
}
