/* One error channel (issue 22): rp_last_error() describes the calling
 * thread's last call ("" after a success), rp_graph_error() and
 * rp_exec_error() show the same text for their object's last call, and
 * notices (rp_exec_notice()) never share it. */
#include <criterion/criterion.h>
#include <string.h>
#include "reprise.h"
#include "util.h"

static uint8_t a[256], b[256];

static rp_status bump(rp_graph *g, rp_buf buf, uint64_t off, uint64_t len) {
  rp_arg args[2] = {rp_arg_buf(rp_bytes(buf, off, len)),
                    rp_arg_i64((int64_t)off)};
  return rp_record_kernel(g, &tu_bump, 0, rp_dims3(len, 1, 1), args, NULL,
                          NULL);
}

Test(errors, a_successful_record_call_clears_the_last_error) {
  rp_graph *g;
  rp_buf A;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(rp_buffer_register(g, "A", a, sizeof a, &A), RP_OK);
  cr_assert_eq(bump(g, A, 200, 100), RP_ERANGE); /* past the end */
  cr_assert(strstr(rp_last_error(), "past buffer \"A\""), "%s",
            rp_last_error());
  cr_assert_str_eq(rp_graph_error(g), rp_last_error());
  cr_assert_eq(bump(g, A, 0, 16), RP_OK);
  cr_assert_str_empty(rp_last_error());
  cr_assert_eq(bump(g, A, 300, 1), RP_ERANGE);
  cr_assert_eq(rp_record_copy_to_host(g, rp_whole(A), 0, NULL, NULL), RP_OK);
  cr_assert_str_empty(rp_last_error());
  cr_assert_eq(bump(g, A, 300, 1), RP_ERANGE);
  cr_assert_eq(rp_graph_end(g), RP_OK);
  cr_assert_str_empty(rp_last_error());
  cr_assert_eq(rp_graph_end(g), RP_ESTATE); /* ended twice */
  cr_assert_str_not_empty(rp_last_error());
  rp_graph_destroy(g);
}

Test(errors, a_successful_exec_call_clears_the_last_error) {
  rp_graph *g;
  rp_buf A;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(rp_buffer_register(g, "A", a, sizeof a, &A), RP_OK);
  cr_assert_eq(bump(g, A, 0, 64), RP_OK);
  cr_assert_eq(rp_graph_end(g), RP_OK);
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("reference", &be), RP_OK);
  rp_exec *x;
  cr_assert_eq(rp_exec_create(&x, g, be, NULL), RP_OK);
  cr_assert_str_empty(rp_last_error());
  cr_assert_str_empty(rp_exec_notice(x));
  static const char *const calls[] = {"run", "launch", "rebind"};
  for (unsigned i = 0; i < 3; i++) {
    /* A failure first: a rebind with too few bytes. */
    cr_assert_eq(rp_exec_rebind(x, A, b, 8), RP_EINVAL);
    cr_assert(strstr(rp_exec_error(x), "rebind"), "%s", rp_exec_error(x));
    cr_assert_str_eq(rp_last_error(), rp_exec_error(x));
    rp_status s = i == 0   ? rp_exec_run(x, 2)
                  : i == 1 ? rp_exec_launch(x, 1)
                           : rp_exec_rebind(x, A, b, sizeof b);
    cr_assert_eq(s, RP_OK, "%s", calls[i]);
    cr_assert_str_empty(rp_last_error(), "after %s: %s", calls[i],
                        rp_last_error());
    cr_assert_str_empty(rp_exec_error(x), "after %s", calls[i]);
    if (i == 1) {
      cr_assert_eq(rp_exec_rebind(x, A, b, 8), RP_EINVAL);
      cr_assert_eq(rp_exec_wait(x), RP_OK);
      cr_assert_str_empty(rp_last_error());
      cr_assert_str_empty(rp_exec_error(x));
    }
  }
  /* A failed call on one exec then a success elsewhere: the thread's text
   * follows its last call, the exec's keeps its own. */
  cr_assert_eq(rp_exec_rebind(x, A, b, 8), RP_EINVAL);
  cr_assert_eq(bump(g, A, 0, 1), RP_ESTATE); /* ended graph */
  cr_assert(strstr(rp_last_error(), "ended") ||
                strstr(rp_last_error(), "recording"),
            "%s", rp_last_error());
  cr_assert(strstr(rp_exec_error(x), "rebind"));
  cr_assert_str_empty(rp_exec_notice(x));
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}
