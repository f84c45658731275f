/* Argument kinds checked at record time both ways (issue 32, item 3): a
 * region where the kernel declares a scalar is refused like a scalar where
 * it declares a region, each message naming the kernel, the parameter and
 * the buffer; nothing is recorded. */
#include <criterion/criterion.h>
#include <string.h>
#include "reprise.h"
#include "util.h"

Test(misuse_args, region_where_scalar_declared) {
  static unsigned char m[64];
  rp_graph *g;
  rp_buf A, B;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "A", m, 32, &A));
  TU_OK(g, rp_buffer_register(g, "B", m + 32, 32, &B));
  /* tu_bump: (inout a, scalar off). */
  rp_arg args[2] = {rp_arg_buf(rp_range_bytes(A, 0, 8)),
                    rp_arg_buf(rp_range_bytes(B, 0, 8))};
  cr_assert_eq(
      rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), args, NULL, NULL),
      RP_EINVAL);
  const char *e = rp_graph_error(g);
  cr_assert(strstr(e, "parameter 1 'off' of kernel 'tu_bump_k' expects a "
                      "scalar, got a region of buffer \"B\""),
            "%s", e);
  cr_assert_str_eq(rp_last_error(), e);
  /* Buffer 0 too (a zero-initialised rp_arg names buffer 0). */
  rp_arg z[2];
  memset(z, 0, sizeof z);
  z[0] = rp_arg_buf(rp_range_bytes(A, 0, 8));
  cr_assert_eq(
      rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), z, NULL, NULL),
      RP_EINVAL);
  cr_assert(strstr(rp_graph_error(g), "got a region of buffer \"A\""), "%s",
            rp_graph_error(g));
  /* An unknown buffer index. */
  args[1].region.buf = 77;
  cr_assert_eq(
      rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), args, NULL, NULL),
      RP_EINVAL);
  cr_assert(strstr(rp_graph_error(g), "got a region of buffer ?"), "%s",
            rp_graph_error(g));
  cr_assert_eq(rp_graph_num_nodes(g), 0);
  /* The reverse: a scalar where a region is declared. */
  rp_arg r[2] = {rp_arg_i64(3), rp_arg_i64(0)};
  cr_assert_eq(
      rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), r, NULL, NULL),
      RP_EINVAL);
  cr_assert(strstr(rp_graph_error(g), "parameter 0 'a' of kernel 'tu_bump_k' "
                                      "expects a buffer region (inout), got "
                                      "a scalar"),
            "%s", rp_graph_error(g));
  /* Right kinds: recorded, and the scalar is the value given. */
  rp_arg ok[2] = {rp_arg_buf(rp_range_bytes(A, 0, 8)), rp_arg_i64(4)};
  TU_OK(g, rp_record_kernel(g, &tu_bump, 0, rp_dims3(4, 1, 1), ok, NULL, NULL));
  cr_assert_gt(rp_graph_num_nodes(g), 0);
  TU_OK(g, rp_record_sync_host(g, rp_whole(A), NULL));
  TU_OK(g, rp_graph_end(g));
  TU_OK(NULL, rp_replay_reference(g, 1));
  for (int i = 0; i < 8; i++)
    cr_assert_eq(m[i], i >= 4 ? 7 : 0, "byte %d: %u", i, m[i]);
  rp_graph_destroy(g);
}
