/* API misuse refused with a status and a message, never a crash: NULL
 * graphs and out-pointers, rp_last_error per thread and cleared on
 * success, every failure of rp_analyze explained, a kernel's bad region
 * named by its parameter (also past the tenth). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>
#include "reprise.h"

Test(misuse, null_graph_counts_and_lookups) {
  cr_assert_eq(rp_graph_num_nodes(NULL), 0);
  cr_assert_eq(rp_graph_num_buffers(NULL), 0);
  cr_assert_eq(rp_graph_num_edges(NULL), 0);
  cr_assert_eq(rp_graph_num_devices(NULL), 0);
  cr_assert_null(rp_graph_get_data(NULL));
  rp_graph_set_data(NULL, NULL);
  rp_graph *g;
  rp_buf b;
  static char a[16];
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(rp_buffer_register(g, "A", a, sizeof a, &b), RP_OK);
  cr_assert_eq(rp_graph_find_buffer(g, "A", NULL), RP_EINVAL);
  cr_assert_eq(rp_graph_find_buffer(g, NULL, &b), RP_EINVAL);
  cr_assert_eq(rp_graph_find_buffer(NULL, "A", &b), RP_EINVAL);
  cr_assert_eq(rp_graph_find_buffer(g, "B", &b), RP_ENOTFOUND);
  cr_assert_eq(rp_graph_find_buffer(g, "A", &b), RP_OK);
  cr_assert_eq(b, 0);
  rp_graph_destroy(g);
}

Test(misuse, null_exec_accessors) {
  cr_assert_null(rp_exec_backend(NULL));
  cr_assert_eq(rp_exec_last_us(NULL), 0.0);
  cr_assert_str_eq(rp_exec_error(NULL), "");
}

static rp_graph *ended_graph(void) {
  static char a[64];
  rp_graph *g;
  rp_buf b;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(rp_buffer_register(g, "A", a, sizeof a, &b), RP_OK);
  cr_assert_eq(rp_record_copy_to_device(g, rp_whole(b), 0, NULL, NULL), RP_OK);
  cr_assert_eq(rp_graph_end(g), RP_OK);
  return g;
}

Test(misuse, analyze_failures_say_why_and_success_clears) {
  rp_graph *g = ended_graph(), *open;
  rp_analysis *a;
  rp_analysis_opts o;
  cr_assert_eq(rp_analyze(g, NULL, NULL), RP_EINVAL);
  cr_assert(strstr(rp_last_error(), "out is NULL"), "%s", rp_last_error());
  cr_assert_eq(rp_analyze(NULL, NULL, &a), RP_EINVAL);
  cr_assert(strstr(rp_last_error(), "no graph"), "%s", rp_last_error());
  cr_assert_eq(rp_graph_create(&open, 0), RP_OK);
  cr_assert_eq(rp_analyze(open, NULL, &a), RP_ESTATE);
  cr_assert(strstr(rp_last_error(), "rp_graph_end"), "%s", rp_last_error());
  rp_graph_destroy(open);
  rp_analysis_opts_init(&o);
  o.copy_engines = 3;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  cr_assert(strstr(rp_last_error(), "copy_engines"), "%s", rp_last_error());
  rp_analysis_opts_init(&o);
  o.h2d_gbps = 0;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  cr_assert(strstr(rp_last_error(), "bandwidths"), "%s", rp_last_error());
  rp_analysis_opts_init(&o);
  o.kernel_us = -1;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  cr_assert(strstr(rp_last_error(), "default costs"), "%s", rp_last_error());
  rp_analysis_opts_init(&o);
  o.ncompute_units = 1;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  cr_assert(strstr(rp_last_error(), "compute_units"), "%s", rp_last_error());
  /* a success clears the stale message */
  cr_assert_eq(rp_analyze(g, NULL, &a), RP_OK);
  cr_assert_str_eq(rp_last_error(), "");
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(misuse, backend_find_success_clears) {
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("nosuch", &be), RP_ENOTFOUND);
  cr_assert_neq(rp_last_error()[0], 0);
  cr_assert_eq(rp_backend_find("reference", &be), RP_OK);
  cr_assert_str_eq(rp_last_error(), "");
  cr_assert_eq(rp_backend_find("reference", NULL), RP_EINVAL);
  cr_assert(strstr(rp_last_error(), "out is NULL"));
}

static void *other_thread(void *arg) {
  (void)arg;
  /* a fresh thread sees no message of another thread's failure */
  int clean = rp_last_error()[0] == 0;
  const rp_backend *be;
  rp_backend_find("other-thread-nosuch", &be);
  return (void *)(intptr_t)clean;
}

Test(misuse, last_error_is_per_thread) {
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("main-thread-nosuch", &be), RP_ENOTFOUND);
  pthread_t t;
  void *clean;
  cr_assert_eq(pthread_create(&t, NULL, other_thread, NULL), 0);
  pthread_join(t, &clean);
  cr_assert(clean);
  cr_assert(strstr(rp_last_error(), "main-thread-nosuch"), "%s",
            rp_last_error());
}

RP_KERNEL(many, { (void)rp__a; })

/* 12 parameters: scalars between buffers; the 11th (index 10) has a region
 * past its buffer's end: the message names it, not its access index. */
Test(misuse, kernel_region_error_names_the_parameter) {
  static const rp_param ps[12] = {
      {"p0", RP_IN}, {"s1", RP_SCALAR}, {"p2", RP_IN},
      {"p3", RP_IN}, {"s4", RP_SCALAR}, {"p5", RP_IN},
      {"p6", RP_IN}, {"p7", RP_IN},     {"p8", RP_IN},
      {"p9", RP_IN}, {"p10", RP_OUT},   {"s11", RP_SCALAR}};
  static const rp_kernel k = RP_KERNEL_DESC(many, ps);
  static char mem[64];
  rp_graph *g;
  rp_buf b;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(rp_buffer_register(g, "A", mem, sizeof mem, &b), RP_OK);
  rp_arg args[12];
  for (int i = 0; i < 12; i++)
    args[i] =
        ps[i].mode == RP_SCALAR ? rp_arg_i64(i) : rp_arg_buf(rp_bytes(b, i, 4));
  args[10] = rp_arg_buf(rp_bytes(b, 60, 8)); /* 60 + 8 > 64 */
  cr_assert_eq(rp_record_kernel(g, &k, 0, rp_dims3(1, 1, 1), args, NULL, NULL),
               RP_ERANGE);
  cr_assert(strstr(rp_graph_error(g), "parameter 10 'p10' of kernel 'many': "
                                      "region ends past buffer \"A\""),
            "%s", rp_graph_error(g));
  /* a later failure of another kind names no parameter */
  cr_assert_eq(rp_graph_end(g), RP_OK);
  args[10] = rp_arg_buf(rp_bytes(b, 0, 8));
  cr_assert_eq(rp_record_kernel(g, &k, 0, rp_dims3(1, 1, 1), args, NULL, NULL),
               RP_ESTATE);
  cr_assert_null(strstr(rp_graph_error(g), "param"), "%s", rp_graph_error(g));
  rp_graph_destroy(g);
}

/* A scalar where a buffer belongs: the parameter, by index and name, and
 * what it expected (it once said "unknown buffer 4294967295"). */
Test(misuse, scalar_for_a_buffer_names_the_parameter) {
  static const rp_param ps[] = {
      {"src", RP_IN}, {"n", RP_SCALAR}, {"dst", RP_OUT}};
  static const rp_kernel k = RP_KERNEL_DESC(many, ps);
  static char mem[64];
  rp_graph *g;
  rp_buf b;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(rp_buffer_register(g, "A", mem, sizeof mem, &b), RP_OK);
  rp_arg args[3] = {rp_arg_buf(rp_whole(b)), rp_arg_i64(8), rp_arg_f64(1)};
  cr_assert_eq(rp_record_kernel(g, &k, 0, rp_dims3(1, 1, 1), args, NULL, NULL),
               RP_EINVAL);
  cr_assert_str_eq(rp_graph_error(g),
                   "parameter 2 'dst' of kernel 'many' "
                   "expects a buffer region (out), got a scalar");
  args[2] = rp_arg_buf(rp_whole(7));
  cr_assert_eq(rp_record_kernel(g, &k, 0, rp_dims3(1, 1, 1), args, NULL, NULL),
               RP_EINVAL);
  cr_assert_str_eq(rp_graph_error(g),
                   "parameter 2 'dst' of kernel 'many' "
                   "expects a buffer region, got one of buffer 7 (the graph "
                   "has 1 buffers)");
  cr_assert_eq(rp_graph_num_nodes(g), 0);
  rp_graph_destroy(g);
}
