/* Guard zones (issue 32, item 2): a kernel writing past the end (or
 * before the start) of an image the library owns fails the run with
 * RP_EACCESS naming the buffer and its writers, on every CPU backend,
 * and never damages the heap (the ASan stage runs this too). */
#include <criterion/criterion.h>
#include <string.h>
#include "reprise.h"
#include "reprise/backend.h"
#include "util.h"

/* a[off + x] = 1 for x in the index space: off and the space chosen to
 * leave the image. */
RP_KERNEL(stray_k, {
  unsigned char *a = RP_PTR(unsigned char, 0);
  int64_t off = RP_VAL(int64_t, 1);
  a[off + (int64_t)RP_X] = 1;
})
static const rp_param stray_params[] = {{"a", RP_INOUT}, {"off", RP_SCALAR}};
static const rp_kernel stray = RP_KERNEL_DESC(stray_k, stray_params);

/* A kernel on device 0 over internal buffer "M" of 200 bytes (writing
 * [off, off + n)): its image is the library's on every backend. */
static rp_graph *stray_graph(int64_t off, uint64_t n) {
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  rp_buffer_desc d = {"M", NULL, 200, 1, 0, {0, 0, 0}};
  TU_OK(g, rp_buffer_add(g, &d, &b));
  rp_arg a[2] = {rp_arg_buf(rp_whole(b)), rp_arg_i64(off)};
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "stray", .cost_us = -1);
  TU_OK(g, rp_record_kernel(g, &stray, 0, rp_dims3(n, 1, 1), a, &o, NULL));
  TU_OK(g, rp_graph_end(g));
  return g;
}

/* expect_fail: 0 no failure, 1 each run fails (a write crossing either
 * end of the image, the words checked after each replay), 2 only destroy
 * says it (a write that jumps into the zone). */
static unsigned each_cpu_backend(int64_t off, uint64_t n, const char *where,
                                 int expect_fail) {
  unsigned ran = 0;
  static const char *const names[] = {"reference", "openmp", "starpu"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const char *nm = names[i];
    const rp_backend *b, *const *be = &b;
    if (rp_backend_find(nm, &b) != RP_OK || rp_backend_probe(b) != RP_OK)
      continue;
    rp_graph *g = stray_graph(off, n);
    rp_exec *x;
    TU_OK(NULL, rp_exec_create(&x, g, *be, NULL));
    for (int rep = 0; rep < 2; rep++) {
      rp_status s = rp_exec_run(x, 1);
      if (expect_fail != 1) {
        cr_assert_eq(s, RP_OK, "%s: %s", nm, rp_exec_error(x));
        continue;
      }
      cr_assert_eq(s, RP_EACCESS, "%s: %s", nm, rp_status_name(s));
      const char *e = rp_exec_error(x);
      cr_assert(strstr(e, "buffer \"M\": a write "), "%s: %s", nm, e);
      cr_assert(strstr(e, where), "%s: %s", nm, e);
      cr_assert(strstr(e, " image (byte "), "%s: %s", nm, e);
      cr_assert(strstr(e, "the operations writing it: \"stray\" (RP_CHECK=1"),
                "%s: %s", nm, e);
      cr_assert_str_eq(rp_last_error(), e);
    }
    /* Launched and destroyed without a wait: said at destroy. */
    TU_OK(NULL, rp_exec_launch(x, 1));
    rp_exec_destroy(x);
    if (expect_fail) {
      cr_assert(strstr(rp_last_error(), "damaged the guard zone"), "%s: %s", nm,
                rp_last_error());
      cr_assert(strstr(rp_last_error(), where), "%s: %s", nm, rp_last_error());
    } else {
      cr_assert_str_eq(rp_last_error(), "");
    }
    rp_graph_destroy(g);
    ran++;
  }
  return ran;
}

Test(guard, write_past_the_end_is_eaccess) {
  cr_assert_geq(each_cpu_backend(196, 8, "past the end of", 1), 2);
  cr_assert_geq(each_cpu_backend(200, 9, "(byte 200 of 200)", 1), 2);
  cr_assert_geq(each_cpu_backend(240, 1, "(byte 240 of 200)", 2), 2);
  cr_assert_geq(each_cpu_backend(-40, 1, "(byte -40 of 200)", 2), 2);
}

Test(guard, write_before_the_start_is_eaccess) {
  cr_assert_geq(each_cpu_backend(-8, 4, "before the start of", 1), 1);
}

Test(guard, writes_inside_pass) {
  cr_assert_geq(each_cpu_backend(0, 200, "", 0), 1);
}

Test(guard, alloc_zeroed_aligned_and_checked) {
  for (uint64_t n = 0; n < 130; n += 13) {
    unsigned char *p = rp_image_alloc(n);
    cr_assert_not_null(p);
    cr_assert_eq((uintptr_t)p % 64, 0);
    for (uint64_t i = 0; i < n; i++)
      cr_assert_eq(p[i], 0);
    memset(p, 0xff, n);
    cr_assert(rp_image_guard_ok(p));
    p[n] ^= 1;
    cr_assert_not(rp_image_guard_ok(p));
    p[n] ^= 1;
    p[-1] = 0;
    cr_assert_not(rp_image_guard_ok(p));
    rp_image_free(p);
  }
  cr_assert(rp_image_guard_ok(NULL));
  rp_image_free(NULL);
}
