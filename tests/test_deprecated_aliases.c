/* The names renamed for 0.1.0 (docs/STYLE.md, "Renamed") stay for one
 * release as deprecated aliases that do what the new names do: the same
 * output, the same figures, the same refusals. Compiled without
 * RP_WARN_DEPRECATED, as an older program is. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

TestSuite(deprecated_aliases, .timeout = 60);

/* Two kernels on two devices, given costs, ended; with coherence, the
 * copies in and the copy back of m too. */
static rp_graph *two(unsigned char *m, unsigned flags) {
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, flags));
  TU_OK(g, rp_buffer_register(g, "m", m, 64, &b));
  for (int d = 0; d < 2; d++) {
    rp_arg a[2] = {rp_arg_buf(rp_range_bytes(b, 32 * (uint64_t)d, 32)),
                   rp_arg_i64(32 * d)};
    TU_OK(g, rp_record_kernel(
                 g, &tu_bump, d, rp_dims3(32, 1, 1), a,
                 &(rp_op_opts)RP_OP_OPTS_WITH(.cost_us = 10 + 5 * d), NULL));
  }
  if (!(flags & RP_GRAPH_NO_COHERENCE))
    TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
  TU_OK(g, rp_graph_end(g));
  return g;
}

typedef rp_status (*trace_fn)(const rp_analysis *, const double *,
                              const double *, FILE *);

static char *trace_of(trace_fn fn, const rp_analysis *a, const double *s,
                      const double *e) {
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  cr_assert_eq(fn(a, s, e, fp), RP_OK);
  fclose(fp);
  return buf;
}

Test(deprecated_aliases, trace2_and_check_serial) {
  unsigned char m[64] = {0};
  rp_graph *g = two(m, RP_GRAPH_NO_COHERENCE);
  rp_analysis *a = NULL;
  TU_OK(NULL, rp_analyze(g, NULL, &a));
  double s[2] = {0, 1}, e[2] = {12, 16};
  char *t_new = trace_of(rp_analysis_write_trace_achieved, a, s, e);
  char *t_old = trace_of(rp_analysis_write_trace2, a, s, e);
  cr_assert_gt(strlen(t_new), 100);
  cr_assert_str_eq(t_old, t_new);
  free(t_new);
  free(t_old);
  double ser[1] = {30}, par[1] = {16};
  rp_achieved n1, n2;
  TU_OK(NULL, rp_achieved_compute(a, ser, par, 1, &n1));
  n2 = n1;
  TU_OK(NULL, rp_achieved_compare_serial(&n1, a, 27));
  TU_OK(NULL, rp_achieved_check_serial(&n2, a, 27));
  cr_assert_gt(n1.serial_ratio, 0);
  cr_assert_eq(n1.serial_ratio, n2.serial_ratio);
  cr_assert_eq(n1.serial_off, n2.serial_off);
  cr_assert_eq(rp_achieved_check_serial(&n2, a, 0), RP_EINVAL);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(deprecated_aliases, profile_n_and_ex) {
  unsigned char m[64] = {0};
  rp_graph *g = two(m, 0);
  uint32_t nn = rp_graph_num_nodes(g);
  cr_assert_leq(nn, 8);
  const rp_backend *be;
  TU_OK(NULL, rp_backend_find("reference", &be));
  rp_exec *x;
  TU_OK(NULL, rp_exec_create(&x, g, be, NULL));
  double med[8], lo[8], hi[8];
  TU_OK(NULL, rp_exec_profile_n(x, 3, med, lo, hi));
  for (uint32_t i = 0; i < nn; i++)
    cr_assert(lo[i] >= 0 && lo[i] <= med[i] && med[i] <= hi[i]);
  /* Out of place: the user's data stayed as it was. */
  for (int i = 0; i < 64; i++)
    cr_assert_eq(m[i], 0);
  TU_OK(NULL, rp_exec_profile_ex(x, 1, RP_PROFILE_IN_PLACE, med, NULL, NULL));
  cr_assert_eq(m[0], 7, "in place: one replay ran on the user's data");
  cr_assert_eq(m[40], 7);
  cr_assert_eq(rp_exec_profile_ex(x, 2, 8, med, NULL, NULL), RP_EINVAL);
  cr_assert(strstr(rp_last_error(), "rp_exec_profile_opts: unknown flags"),
            "%s", rp_last_error());
  cr_assert_eq(rp_exec_profile_n(x, 1001, med, NULL, NULL), RP_EINVAL);
  /* The new name: options of an unknown size are refused. */
  rp_profile_opts o = RP_PROFILE_OPTS_INIT;
  o.size = 0;
  cr_assert_eq(rp_exec_profile_opts(x, &o, med, NULL, NULL), RP_EINVAL);
  cr_assert(strstr(rp_last_error(), "size is 0"), "%s", rp_last_error());
  rp_profile_opts_init(&o);
  o.runs = 2;
  TU_OK(NULL, rp_exec_profile_opts(x, &o, med, NULL, NULL));
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}
