/* Cost of the guard zones (issue 32): the check the core makes after
 * every replay (rp__exec_guards: a few words per image the backend owns),
 * against the replay it follows, in one run. The graph is the worst case
 * for it: K tiny kernels on device 0, each over its own internal buffer of
 * 64 bytes, so that every task has a guarded image of its own. Printed:
 * the median replay (rp_exec_run of 1 replay, its check included), the
 * median check (timed over 64 calls, divided), their ratio. Graphs over
 * the user's arrays, as the bench_omp shapes, have no image to check.
 *   bench_guard [K ...]          (default 1 16 256 4096)
 * BENCH_BACKEND (openmp), BENCH_THREADS (1), BENCH_REPS (301). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "replay/exec.h"
#include "reprise.h"

RP_KERNEL(bg_touch, {
  unsigned char *a = RP_PTR(unsigned char, 0);
  a[RP_X] = (unsigned char)(a[RP_X] + 1);
})
static const rp_param bg_params[] = {{"a", RP_INOUT}};
static const rp_kernel bg_k = RP_KERNEL_DESC(bg_touch, bg_params);

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[n / 2];
}

int main(int argc, char **argv) {
  const char *ben = getenv("BENCH_BACKEND");
  int threads = getenv("BENCH_THREADS") ? atoi(getenv("BENCH_THREADS")) : 1;
  int reps = getenv("BENCH_REPS") ? atoi(getenv("BENCH_REPS")) : 301;
  if (reps < 3)
    reps = 3;
  static const unsigned dflt[] = {1, 16, 256, 4096};
  unsigned nk = argc > 1 ? (unsigned)(argc - 1) : 4;
  const rp_backend *be;
  if (rp_backend_find(ben ? ben : "openmp", &be) != RP_OK) {
    fprintf(stderr, "bench_guard: %s\n", rp_last_error());
    return 1;
  }
  double *tr = malloc(sizeof *tr * (size_t)reps);
  double *tc = malloc(sizeof *tc * (size_t)reps);
  printf("%-6s %8s %12s %12s %8s\n", "K", "guarded", "replay_us", "check_us",
         "ratio");
  for (unsigned i = 0; i < nk; i++) {
    unsigned k = argc > 1 ? (unsigned)atoi(argv[i + 1]) : dflt[i];
    if (!k)
      continue;
    rp_graph *g;
    if (rp_graph_create(&g, 0))
      return 1;
    for (unsigned j = 0; j < k; j++) {
      char nm[32];
      snprintf(nm, sizeof nm, "b%u", j);
      rp_buffer_desc d = {nm, NULL, 64, 1, 0, {0, 0, 0}};
      rp_buf b;
      if (rp_buffer_add(g, &d, &b))
        return 1;
      rp_arg a = rp_arg_buf(rp_whole(b));
      if (rp_record_kernel(g, &bg_k, 0, rp_dims3(1, 1, 1), &a, NULL, NULL))
        return 1;
    }
    rp_exec_opts o;
    rp_exec_opts_init(&o);
    o.nthreads = threads;
    rp_exec *x;
    if (rp_graph_end(g) || rp_exec_create(&x, g, be, &o)) {
      fprintf(stderr, "bench_guard: %s\n", rp_last_error());
      return 1;
    }
    unsigned guarded = 0;
    for (uint32_t j = 0; j < x->nguard; j++)
      guarded += x->guard[j] != NULL;
    rp_exec_run(x, 3); /* warm */
    for (int r = 0; r < reps; r++) {
      double t0 = rp_clock_us();
      if (rp_exec_run(x, 1) != RP_OK)
        return 1;
      double t1 = rp_clock_us();
      for (int c = 0; c < 64; c++)
        if (rp__exec_guards(x, 0) != RP_OK)
          return 1;
      double t2 = rp_clock_us();
      tr[r] = t1 - t0;
      tc[r] = (t2 - t1) / 64;
    }
    double mr = median(tr, reps), mc = median(tc, reps);
    printf("%-6u %8u %12.3f %12.4f %7.2f%%\n", k, guarded, mr, mc,
           100 * mc / mr);
    rp_exec_destroy(x);
    rp_graph_destroy(g);
  }
  free(tr);
  free(tc);
  return 0;
}
