/* Buffers distributed by rows (rp_buffer_distribute): the declaration and
 * its checks, and that a replay in one process ignores it (the whole
 * array is local): the reference and every single-process backend give
 * the results of the same graph without the declaration. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "reprise/backend.h"
#include "util.h"

Test(distribute, parts_declared_checked_and_read) {
  rp_graph *g;
  double a[10 * 4], c[8];
  rp_buf A, C, I;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register_2d(g, "A", a, 10, 4, 8, &A));
  TU_OK(g, rp_buffer_register(g, "C", c, sizeof c, &C));
  rp_buffer_desc d = {"I", NULL, 64, 8, 0, {0, 0, 0}};
  TU_OK(g, rp_buffer_add(g, &d, &I));
  uint64_t r0, r1;
  /* not distributed: one part, every row */
  cr_assert_eq(rp_buffer_num_parts(g, A), 0);
  TU_OK(g, rp_buffer_part_rows(g, A, 0, &r0, &r1));
  cr_assert(r0 == 0 && r1 == 10);
  cr_assert_eq(rp_buffer_part_rows(g, A, 1, &r0, &r1), RP_EINVAL);
  /* even parts: rows * p / nparts */
  TU_OK(g, rp_buffer_distribute(g, A, 3, NULL));
  cr_assert_eq(rp_buffer_num_parts(g, A), 3);
  uint64_t want[4] = {0, 3, 6, 10};
  for (unsigned p = 0; p < 3; p++) {
    TU_OK(g, rp_buffer_part_rows(g, A, p, &r0, &r1));
    cr_assert(r0 == want[p] && r1 == want[p + 1], "part %u: [%llu, %llu)", p,
              (unsigned long long)r0, (unsigned long long)r1);
  }
  cr_assert_eq(rp_buffer_part_rows(g, A, 3, &r0, &r1), RP_EINVAL);
  /* given bounds, an empty part; declaring again replaces */
  uint64_t b[4] = {0, 4, 4, 10};
  TU_OK(g, rp_buffer_distribute(g, A, 3, b));
  TU_OK(g, rp_buffer_part_rows(g, A, 1, &r0, &r1));
  cr_assert(r0 == 4 && r1 == 4);
  /* a buffer without dims: its elements (bytes here) are its rows */
  TU_OK(g, rp_buffer_distribute(g, C, 2, NULL));
  TU_OK(g, rp_buffer_part_rows(g, C, 1, &r0, &r1));
  cr_assert(r0 == 32 && r1 == 64, "[%llu, %llu)", (unsigned long long)r0,
            (unsigned long long)r1);
  /* refused, and nothing changed */
  uint64_t bad1[3] = {0, 5, 9};  /* does not end at the last row */
  uint64_t bad2[3] = {1, 5, 10}; /* does not start at 0 */
  uint64_t bad3[3] = {0, 6, 5};  /* decreasing */
  cr_assert_eq(rp_buffer_distribute(g, A, 2, bad1), RP_EINVAL);
  cr_assert(strstr(rp_graph_error(g), "row 10"), "%s", rp_graph_error(g));
  cr_assert_eq(rp_buffer_distribute(g, A, 2, bad2), RP_EINVAL);
  cr_assert_eq(rp_buffer_distribute(g, A, 2, bad3), RP_EINVAL);
  cr_assert_eq(rp_buffer_distribute(g, A, 0, NULL), RP_EINVAL);
  cr_assert_eq(rp_buffer_distribute(g, A, 65537, NULL), RP_EINVAL);
  cr_assert_eq(rp_buffer_distribute(g, I, 2, NULL), RP_EINVAL);
  cr_assert(strstr(rp_graph_error(g), "internal"), "%s", rp_graph_error(g));
  cr_assert_eq(rp_buffer_distribute(g, 7, 2, NULL), RP_EINVAL);
  cr_assert_eq(rp_buffer_distribute(NULL, A, 2, NULL), RP_EINVAL);
  cr_assert_eq(rp_buffer_num_parts(g, A), 3);
  TU_OK(g, rp_buffer_part_rows(g, A, 2, &r0, &r1));
  cr_assert(r0 == 4 && r1 == 10);
  cr_assert_eq(rp_buffer_num_parts(g, 7), 0);
  cr_assert_eq(rp_buffer_num_parts(NULL, A), 0);
  cr_assert_eq(rp_buffer_part_rows(g, A, 0, NULL, &r1), RP_EINVAL);
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp_buffer_distribute(g, A, 2, NULL), RP_ESTATE);
  rp_graph_destroy(g);
}

/* Rows of a 16 x 32 byte array bumped on devices 0 and 1 (8 rows each),
 * then a host task over the whole array, then a sync. */
static rp_graph *two_devices(uint8_t *a, uint8_t *h, unsigned parts) {
  rp_graph *g;
  rp_buf A, H;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register_2d(g, "A", a, 16, 32, 1, &A));
  TU_OK(g, rp_buffer_register(g, "H", h, 64, &H));
  for (int s = 0; s < 3; s++)
    for (int d = 0; d < 2; d++) {
      rp_arg args[2] = {
          rp_arg_buf(rp_box2(A, 8 * (uint64_t)d, 8 * (uint64_t)d + 8, 0, 32)),
          rp_arg_i64(256 * d)};
      TU_OK(g, rp_record_kernel(g, &tu_bump, d, rp_dims3(256, 1, 1), args, NULL,
                                NULL));
    }
  static tu_host_arg ha = {0, 64};
  rp_access acc = {rp_whole(H), RP_INOUT};
  TU_OK(g, rp_record_host(g, tu_host_bump, &ha, &acc, 1, NULL, NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(A), NULL));
  if (parts)
    TU_OK(g, rp_buffer_distribute(g, A, parts, NULL));
  TU_OK(g, rp_graph_end(g));
  return g;
}

Test(distribute, one_process_ignores_it) {
  const char *backends[] = {"reference", "openmp", "starpu"};
  uint8_t a[512], h[64], ra[512], rh[64];
  for (unsigned k = 0; k < 3; k++) {
    const rp_backend *be;
    if (rp_backend_find(backends[k], &be) != RP_OK)
      continue; /* not built here */
    for (unsigned parts = 0; parts <= 3; parts++) {
      rp_graph *g = two_devices(a, h, parts);
      for (int i = 0; i < 512; i++)
        a[i] = (uint8_t)i;
      memset(h, 1, 64);
      TU_OK(g, rp_replay_reference(g, 2));
      memcpy(ra, a, sizeof a);
      memcpy(rh, h, sizeof h);
      for (int i = 0; i < 512; i++)
        a[i] = (uint8_t)i;
      memset(h, 1, 64);
      rp_exec *x = NULL;
      rp_exec_opts o = RP_EXEC_OPTS_INIT;
      o.split = 2; /* a rewritten graph keeps the parts */
      rp_status s = rp_exec_create(&x, g, be, &o);
      cr_assert_eq(s, RP_OK, "%s: %s", backends[k], rp_last_error());
      cr_assert_eq(rp_buffer_num_parts(rp_exec_graph(x), 0), parts);
      cr_assert_eq(rp_exec_run(x, 2), RP_OK, "%s", rp_exec_error(x));
      cr_assert(!memcmp(a, ra, sizeof a) && !memcmp(h, rh, sizeof h),
                "%s, %u parts: differs from the reference", backends[k], parts);
      rp_exec_destroy(x);
      rp_graph_destroy(g);
    }
  }
}
