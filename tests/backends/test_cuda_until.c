/* rp_exec_run_until() on the cuda backend: the replays loop on the GPU
 * (one conditional WHILE node) and give what a plain C run gives for the
 * same number of replays; where the loop cannot run there, the host checks
 * and says why. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

#ifdef RP_HAVE_EXAMPLES
#include "examples.h"

static const rp_backend *need_gpu(void) {
  const rp_backend *be = NULL;
  rp_status s = rp_backend_find("cuda", &be);
  if (s != RP_OK)
    cr_skip_test("no CUDA backend: %s", rp_strerror(s));
  if ((s = rp_backend_probe(be)) != RP_OK)
    cr_skip_test("no CUDA device: %s", rp_strerror(s));
  return be;
}

enum { N = 32 };
/* The arrays the exec pins get pages of their own (pinning registers
 * whole pages, and a page registered for one array cannot be registered
 * again for another). */
static double *u, *u2, *res_p, cu[N * N], cv[N * N], cres;
#define res (*res_p)

static void *page_alloc(size_t bytes) {
  void *p = NULL;
  cr_assert_eq(posix_memalign(&p, 4096, (bytes + 4095) / 4096 * 4096), 0);
  return p;
}

static void arrays(void) {
  if (!u) {
    u = page_alloc(N * N * 8);
    u2 = page_alloc(N * N * 8);
    res_p = page_alloc(8);
  }
}

/* run_until with tolerance tol and at most max replays against the plain
 * C run; returns the exec's message (empty: the loop ran on the GPU). */
static void check(rp_exec *x, rp_buf rb, const ex_converge *p, double tol,
                  unsigned max, unsigned every, double *arr) {
  rp_until un = {rb, 0, RP_UNTIL_F64, RP_UNTIL_LT, tol};
  unsigned done = 0;
  ex_converge_init(p, arr, &res);
  rp_status s = rp_exec_run_until(x, &un, max, every, &done);
  cr_assert_eq(s, RP_OK, "%s: %s", rp_status_name(s), rp_exec_error(x));
  ex_converge_init(p, cu, &cres);
  unsigned want = ex_converge_check(p, tol, max, cu, cv, &cres);
  if (every > 1 && want < max) /* the host checks every `every` replays */
    want = (want + every - 1) / every * every < max
               ? (want + every - 1) / every * every
               : max;
  if (every > 1) {
    ex_converge_init(p, cu, &cres);
    ex_converge_check(p, -1.0, want, cu, cv, &cres);
  }
  cr_assert_eq(done, want, "replays: %u, plain C %u", done, want);
  cr_assert_eq(res, cres, "residual %.17g, plain C %.17g", res, cres);
  cr_assert(!memcmp(arr, cu, N * N * 8), "grid differs from plain C");
}

static rp_exec *mk(rp_graph *g, const rp_backend *be, const char *mode) {
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  o.mode = mode;
  rp_exec *x = NULL;
  rp_status s = rp_exec_create(&x, g, be, &o);
  cr_assert_eq(s, RP_OK, "%s: %s", rp_status_name(s), rp_last_error());
  return x;
}

Test(backend_cuda_until, jacobi_converges_on_the_gpu, .timeout = 120) {
  const rp_backend *be = need_gpu();
  arrays();
  ex_converge p = {N, 4, 0};
  rp_graph *g;
  rp_buf rb;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_converge_record(g, &p, u, &res, &rb));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = mk(g, be, NULL);
  check(x, rb, &p, 1e-5, 100000, 1, u);
  cr_assert_str_empty(rp_exec_notice(x), "the loop left the GPU: %s",
                      rp_exec_notice(x));
  /* Tested every 10 replays, as the host would; stopped by the count. */
  check(x, rb, &p, 1e-5, 100000, 10, u);
  check(x, rb, &p, 1e-5, 7, 3, u);
  check(x, rb, &p, 1e-5, 7, 1, u);
  cr_assert_str_empty(rp_exec_error(x));
  /* A new user array: the loop follows it. */
  TU_OK(g, rp_exec_rebind(x, 0, u2, N * N * 8));
  check(x, rb, &p, 1e-4, 100000, 1, u2);
  cr_assert_str_empty(rp_exec_error(x));
  /* Other comparisons and a threshold met at once. */
  rp_until ge = {rb, 0, RP_UNTIL_F64, RP_UNTIL_GE, 0.0};
  unsigned done = 0;
  cr_assert_eq(rp_exec_run_until(x, &ge, 50, 1, &done), RP_OK);
  cr_assert_eq(done, 1);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(backend_cuda_until, streams_mode_checks_on_the_host, .timeout = 120) {
  const rp_backend *be = need_gpu();
  arrays();
  ex_converge p = {N, 2, 0};
  rp_graph *g;
  rp_buf rb;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_converge_record(g, &p, u, &res, &rb));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = mk(g, be, "streams");
  check(x, rb, &p, 1e-4, 100000, 1, u);
  cr_assert(strstr(rp_exec_notice(x), "run_until checks on the host") &&
                strstr(rp_exec_notice(x), "graph mode"),
            "%s", rp_exec_notice(x));
  cr_assert_str_empty(rp_exec_error(x));
  cr_assert_str_empty(rp_last_error());
  check(x, rb, &p, 1e-4, 100000, 5, u);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}
#else
Test(backend_cuda_until, needs_examples) { cr_skip_test("no examples"); }
#endif
