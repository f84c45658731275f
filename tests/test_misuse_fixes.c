/* Edges found by issue 32, each with the test that would have caught it:
 * rp_check_deps on a graph whose `after` orders meet no conflicting
 * access (qsort of a NULL array: an abort under UBSan), a negative
 * nthreads taken by the reference backend, and a kernel library given by
 * a bare file name in the current folder. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "reprise.h"
#include "util.h"

static void nop_host(void *user, void *const *ptrs) { (void)user, (void)ptrs; }

Test(misuse_fixes, check_deps_with_an_after_and_no_conflict) {
  static unsigned char a[8], b[8], c[8];
  rp_graph *g;
  rp_buf A, B, C;
  rp_node n0;
  TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  TU_OK(g, rp_buffer_register(g, "A", a, 8, &A));
  TU_OK(g, rp_buffer_register(g, "B", b, 8, &B));
  TU_OK(g, rp_buffer_register(g, "C", c, 8, &C));
  rp_access x = {rp_whole(A), RP_INOUT}, y = {rp_whole(B), RP_INOUT},
            z = {rp_whole(C), RP_IN};
  TU_OK(g, rp_record_host(g, nop_host, NULL, &x, 1, NULL, &n0));
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "second", .cost_us = 5, .after = &n0,
                                 .nafter = 1);
  TU_OK(g, rp_record_host(g, nop_host, NULL, &y, 1, &o, NULL));
  TU_OK(g, rp_record_host(g, nop_host, NULL, &z, 1, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  rp_check *c0;
  TU_OK(g, rp_check_deps(g, NULL, &c0));
  cr_assert_eq(rp_check_num_orders(c0), 1);
  cr_assert_eq(rp_check_num_races(c0), 0);
  cr_assert_eq(rp_check_num_superfluous(c0), 1);
  rp_check_item it;
  TU_OK(g, rp_check_superfluous(c0, 0, &it));
  cr_assert_eq(it.from, n0);
  cr_assert_eq(it.to, n0 + 1);
  rp_check_destroy(c0);
  rp_graph_destroy(g);
}

Test(misuse_fixes, negative_nthreads_refused_everywhere) {
  static unsigned char m[8];
  static tu_host_arg arg = {0, 8};
  rp_graph *g = tu_one_host_task(m, sizeof m, 8, tu_host_bump, &arg, NULL);
  unsigned tried = 0;
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  o.nthreads = -3;
  static const char *const names[] = {"reference", "openmp", "starpu"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const rp_backend *be;
    if (rp_backend_find(names[i], &be) || rp_backend_probe(be))
      continue;
    rp_exec *x = (rp_exec *)1;
    cr_assert_eq(rp_exec_create(&x, g, be, &o), RP_EINVAL, "%s", names[i]);
    cr_assert_null(x);
    char want[64];
    snprintf(want, sizeof want, "%s: nthreads -3 < 0", names[i]);
    cr_assert(strstr(rp_last_error(), want), "%s", rp_last_error());
    tried++;
  }
  cr_assert_geq(tried, 2);
  rp_graph_destroy(g);
}

#ifdef RP_TEST_KLIB_MATPOW
Test(misuse_fixes, kernel_library_by_bare_name_in_this_folder) {
  char dir[] = "/tmp/rp_klibXXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cp '%s' %s/libk.so", RP_TEST_KLIB_MATPOW, dir);
  cr_assert_eq(system(cmd), 0);
  cr_assert_eq(chdir(dir), 0);
  rp_kernels *set = NULL;
  cr_assert_eq(rp_kernels_load(&set, "libk.so"), RP_OK, "%s", rp_last_error());
  cr_assert_not_null(set);
  rp_kernels_destroy(set);
  set = NULL;
  cr_assert_eq(rp_kernels_load(&set, "nosuch.so"), RP_EIO);
  cr_assert(strstr(rp_last_error(), "nosuch.so"), "%s", rp_last_error());
  unlink("libk.so");
  cr_assert_eq(chdir("/"), 0);
  rmdir(dir);
}
#endif
