/* rp_exec_stats(): the starpu backend's figures reach a program through
 * the public call, the same as the backend's own (rp__starpu_stats_get),
 * by name; a backend that keeps none says so. */
#include <criterion/criterion.h>
#include <string.h>
#include "reprise/kernel.h"
#include "rp_starpu.h"
#include "util.h"

TestSuite(starpu_stats, .timeout = 60);

static rp_graph *two_kernels(unsigned char *m) {
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "m", m, 64, &b));
  for (int d = 0; d < 2; d++) {
    rp_arg a[2] = {rp_arg_buf(rp_range_bytes(b, 32 * (uint64_t)d, 32)),
                   rp_arg_i64(32 * d)};
    TU_OK(g,
          rp_record_kernel(g, &tu_bump, d, rp_dims3(32, 1, 1), a, NULL, NULL));
  }
  TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
  TU_OK(g, rp_graph_end(g));
  return g;
}

static double stat_of(const rp_exec *x, const char *name) {
  double v = -1;
  rp_status s = rp_exec_stat_get(x, name, &v);
  cr_assert_eq(s, RP_OK, "%s: %s", name, rp_last_error());
  return v;
}

Test(starpu_stats, public_figures_equal_the_backends) {
  unsigned char m[64] = {0};
  rp_graph *g = two_kernels(m);
  const rp_backend *be;
  TU_OK(NULL, rp_backend_find("starpu", &be));
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.mode = "implicit";
  rp_exec *x;
  TU_OK(NULL, rp_exec_create(&x, g, be, &o));
  unsigned n = 0;
  TU_OK(NULL, rp_exec_stats(x, NULL, 0, &n));
  cr_assert_eq(n, 35); /* 19, and mode "implicit" traces: 16 trace_* */
  rp_exec_stat st[40], few[3];
  unsigned n2 = 0, n3 = 0;
  TU_OK(NULL, rp_exec_stats(x, st, 40, &n2));
  TU_OK(NULL, rp_exec_stats(x, few, 3, &n3));
  cr_assert_eq(n2, 35);
  cr_assert_eq(n3, 35, "count is all of them, whatever max");
  cr_assert_str_eq(few[2].name, st[2].name);
  cr_assert_str_eq(st[0].name, "rank");
  cr_assert_str_eq(st[17].name, "body_cpu_us");
  cr_assert_str_eq(st[18].name, "part_handles");
  rp__starpu_stats p;
  TU_OK(NULL, rp__starpu_stats_get(x, &p));
  cr_assert_eq(stat_of(x, "nodes"), p.nodes);
  cr_assert_eq(stat_of(x, "nodes"), rp_exec_plan(x)->nnode);
  cr_assert_eq(stat_of(x, "tasks"), p.tasks);
  cr_assert_eq(stat_of(x, "nranks"), 1);
  cr_assert_eq(stat_of(x, "images"), p.images);
  cr_assert_eq(stat_of(x, "handles"), p.handles);
  /* the devices' spaces share the user's array (host memory): one
   * handle, the array's, registered and needed */
  cr_assert_eq(stat_of(x, "part_handles"), 1);
  cr_assert_eq(stat_of(x, "handles"), 1);
  cr_assert_eq(stat_of(x, "image_bytes"), (double)p.image_bytes);
  cr_assert_eq(stat_of(x, "body_cpu_us"), 0);
  TU_OK(NULL, rp_exec_run(x, 3));
  cr_assert_gt(stat_of(x, "body_cpu_us"), 0, "task bodies not timed");
  double v = 7;
  cr_assert_eq(rp_exec_stat_get(x, "taskz", &v), RP_ENOTFOUND);
  cr_assert_eq(v, 7);
  cr_assert(strstr(rp_last_error(), "no figure named \"taskz\""), "%s",
            rp_last_error());
  cr_assert_eq(rp_exec_stats(x, NULL, 1, &n), RP_EINVAL);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(starpu_stats, a_backend_without_figures_says_so) {
  unsigned char m[64] = {0};
  rp_graph *g = two_kernels(m);
  const rp_backend *be;
  TU_OK(NULL, rp_backend_find("reference", &be));
  rp_exec *x;
  TU_OK(NULL, rp_exec_create(&x, g, be, NULL));
  unsigned n = 99;
  cr_assert_eq(rp_exec_stats(x, NULL, 0, &n), RP_ENOTSUP);
  cr_assert_eq(n, 99);
  cr_assert(strstr(rp_last_error(), "reference backend keeps no figures"), "%s",
            rp_last_error());
  double v;
  cr_assert_eq(rp_exec_stat_get(x, "tasks", &v), RP_ENOTSUP);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}
