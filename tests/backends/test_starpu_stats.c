/* rp_exec_stats(): the starpu backend's figures reach a program through
 * the public call, the same as the backend's own (rp__starpu_stats_get),
 * by name; a backend that keeps none says so. */
#include <criterion/criterion.h>
#include <string.h>
#include "reprise/kernel.h"
#include "rp_starpu.h"
#include "util.h"

TestSuite(starpu_stats, .timeout = 60);

Test(starpu_stats, public_figures_equal_the_backends) {
  unsigned char m[64] = {0};
  rp_graph *g = tu_two_bumps(m);
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
  cr_assert_eq(tu_stat(x, "nodes"), p.nodes);
  cr_assert_eq(tu_stat(x, "nodes"), rp_exec_plan(x)->nnode);
  cr_assert_eq(tu_stat(x, "tasks"), p.tasks);
  cr_assert_eq(tu_stat(x, "nranks"), 1);
  cr_assert_eq(tu_stat(x, "images"), p.images);
  cr_assert_eq(tu_stat(x, "handles"), p.handles);
  /* the devices' spaces share the user's array (host memory): one
   * handle, the array's, registered and needed */
  cr_assert_eq(tu_stat(x, "part_handles"), 1);
  cr_assert_eq(tu_stat(x, "handles"), 1);
  cr_assert_eq(tu_stat(x, "image_bytes"), (double)p.image_bytes);
  cr_assert_eq(tu_stat(x, "body_cpu_us"), 0);
  TU_OK(NULL, rp_exec_run(x, 3));
  cr_assert_gt(tu_stat(x, "body_cpu_us"), 0, "task bodies not timed");
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
  rp_graph *g = tu_two_bumps(m);
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
