/* The units trap (issue 32, item 1): a buffer registered in bytes
 * (rp_buffer_register) has no element size, so an element range over it
 * is refused at record time, naming both calls, the kernel, its parameter
 * and the buffer; the same program with rp_buffer_register_elems() is
 * right on every backend built here. */
#include <criterion/criterion.h>
#include <string.h>
#include "reprise.h"
#include "util.h"

enum { N = 1024 };

RP_KERNEL(dbl_k, {
  double *x = RP_PTR(double, 0);
  x[RP_X] *= 2.0;
})
static const rp_param dbl_params[] = {{"x", RP_INOUT}};
static const rp_kernel dbl = RP_KERNEL_DESC(dbl_k, dbl_params);

Test(units_register, byte_buffer_refuses_element_ranges) {
  static double x[N];
  rp_graph *g;
  rp_buf X;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "x", x, N * sizeof(double), &X));
  rp_arg a = rp_arg_buf(rp_range_elems(X, 0, N));
  cr_assert_eq(rp_record_kernel(g, &dbl, 0, rp_dims3(N, 1, 1), &a, NULL, NULL),
               RP_EINVAL);
  const char *e = rp_graph_error(g);
  cr_assert(strstr(e, "parameter 0 'x' of kernel 'dbl_k'"), "%s", e);
  cr_assert(strstr(e, "rp_range_elems() on buffer \"x\""), "%s", e);
  cr_assert(strstr(e, "rp_buffer_register()"), "%s", e);
  cr_assert(strstr(e, "rp_buffer_register_elems(g, \"x\""), "%s", e);
  cr_assert_str_eq(rp_last_error(), e);
  /* Nothing recorded; bytes and the whole buffer stay accepted. */
  cr_assert_eq(rp_graph_num_nodes(g), 0);
  uint64_t iv[2];
  rp_region r = rp_range_elems(X, 0, N);
  cr_assert_eq(rp_region_intervals(g, &r, iv, 1), 0);
  a = rp_arg_buf(rp_range_bytes(X, 0, N * sizeof(double)));
  TU_OK(g, rp_record_kernel(g, &dbl, 0, rp_dims3(N, 1, 1), &a, NULL, NULL));
  a = rp_arg_buf(rp_whole(X));
  TU_OK(g, rp_record_kernel(g, &dbl, 0, rp_dims3(N, 1, 1), &a, NULL, NULL));
  /* A copy or a host task: the same refusal. */
  cr_assert_eq(
      rp_record_copy_to_device(g, rp_range_elems(X, 0, 8), 0, NULL, NULL),
      RP_EINVAL);
  cr_assert(strstr(rp_graph_error(g), "rp_range_elems() on buffer \"x\""), "%s",
            rp_graph_error(g));
  /* A desc of elem 0 and no dims says no element size either; with dims
   * it means 1-byte elements. */
  rp_buffer_desc d = {"y", x, 64, 0, 0, {0, 0, 0}};
  rp_buf Y, Z;
  TU_OK(g, rp_buffer_add(g, &d, &Y));
  rp_access acc = {rp_range_elems(Y, 0, 8), RP_IN};
  cr_assert_eq(rp_record_host(g, tu_host_bump, NULL, &acc, 1, NULL, NULL),
               RP_EINVAL);
  rp_buffer_desc d2 = {"z", x, 64, 0, 1, {64, 0, 0}};
  TU_OK(g, rp_buffer_add(g, &d2, &Z));
  acc.region = rp_range_elems(Z, 0, 8);
  TU_OK(g, rp_record_host(g, tu_host_bump, NULL, &acc, 1, NULL, NULL));
  rp_access_info ai;
  TU_OK(g, rp_node_access(g, (rp_node)(rp_graph_num_nodes(g) - 1), 0, &ai));
  cr_assert_eq(ai.region.bytes, 8);
  rp_graph_destroy(g);
}

Test(units_register, bad_shapes_refused) {
  static double x[4];
  rp_graph *g;
  rp_buf X;
  TU_OK(NULL, rp_graph_create(&g, 0));
  cr_assert_eq(rp_buffer_register_elems(g, "x", x, 0, 8, &X), RP_EINVAL);
  cr_assert_eq(rp_buffer_register_elems(g, "x", x, 4, 0, &X), RP_EINVAL);
  cr_assert_eq(rp_buffer_register_elems(g, "x", x, UINT64_MAX, 8, &X),
               RP_EINVAL);
  cr_assert(strstr(rp_graph_error(g), "bad shape"), "%s", rp_graph_error(g));
  cr_assert_eq(rp_buffer_register_elems(g, "x", NULL, 4, 8, &X), RP_EINVAL);
  cr_assert_eq(rp_buffer_register_elems(NULL, "x", x, 4, 8, &X), RP_EINVAL);
  TU_OK(g, rp_buffer_register_elems(g, "x", x, 4, sizeof *x, &X));
  rp_buffer_desc d;
  TU_OK(g, rp_buffer_info(g, X, &d));
  cr_assert_eq(d.bytes, 32);
  cr_assert_eq(d.elem, 8);
  rp_graph_destroy(g);
}

/* The hidden case, registered with its element size: every element
 * doubled on every backend that runs here. */
Test(units_register, element_buffer_right_on_every_backend) {
  static double x[N];
  unsigned ran = 0;
  for (const rp_backend *const *be = rp_backend_list(); *be; be++) {
    if (rp_backend_probe(*be) != RP_OK)
      continue;
    for (int i = 0; i < N; i++)
      x[i] = i + 0.5;
    rp_graph *g;
    rp_buf X;
    TU_OK(NULL, rp_graph_create(&g, 0));
    TU_OK(g, rp_buffer_register_elems(g, "x", x, N, sizeof *x, &X));
    rp_arg a = rp_arg_buf(rp_range_elems(X, 0, N));
    TU_OK(g, rp_record_kernel(g, &dbl, 0, rp_dims3(N, 1, 1), &a, NULL, NULL));
    TU_OK(g, rp_record_sync_host(g, rp_whole(X), NULL));
    TU_OK(g, rp_graph_end(g));
    rp_exec *e;
    rp_status s = rp_exec_create(&e, g, *be, NULL);
    if (s == RP_ENODEV || s == RP_ENOKERNEL) {
      rp_graph_destroy(g);
      continue;
    }
    cr_assert_eq(s, RP_OK, "%s: %s", rp_backend_name(*be), rp_last_error());
    cr_assert_eq(rp_exec_run(e, 1), RP_OK, "%s: %s", rp_backend_name(*be),
                 rp_exec_error(e));
    unsigned wrong = 0;
    for (int i = 0; i < N; i++)
      wrong += x[i] != 2 * (i + 0.5);
    cr_assert_eq(wrong, 0, "%s: %u of %d elements wrong", rp_backend_name(*be),
                 wrong, N);
    rp_exec_destroy(e);
    rp_graph_destroy(g);
    ran++;
  }
  cr_assert_geq(ran, 1);
}
