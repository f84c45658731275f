/* Cost of the guard zones (issue 32): the check the core makes after
 * every replay, against the replay itself, measured in one run. The graph
 * is the worst case for it: K tiny kernels on device 0, each over its own
 * internal buffer of 64 bytes, so every operation has a guarded image of
 * its own (K images checked per replay, K tasks run). Printed: the median
 * replay (rp_exec_run of 1 replay), the median check of K images of
 * rp_image_alloc() (what the core does per replay), their ratio.
 *   bench_guard [K ...]          (default 1 16 256 4096)
 * BENCH_BACKEND (openmp), BENCH_THREADS (1), BENCH_REPS (201). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"
#include "reprise/backend.h"

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
  int reps = getenv("BENCH_REPS") ? atoi(getenv("BENCH_REPS")) : 201;
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
  printf("%-6s %12s %12s %8s\n", "K", "replay_us", "check_us", "ratio");
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
      rp_arg a;
      if (rp_buffer_add(g, &d, &b))
        return 1;
      a = rp_arg_buf(rp_whole(b));
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
    void **img = malloc(sizeof *img * k);
    for (unsigned j = 0; j < k; j++)
      img[j] = rp_image_alloc(64);
    rp_exec_run(x, 3); /* warm */
    unsigned bad = 0;
    for (int r = 0; r < reps; r++) {
      double t0 = rp_clock_us();
      if (rp_exec_run(x, 1) != RP_OK)
        return 1;
      double t1 = rp_clock_us();
      for (unsigned j = 0; j < k; j++)
        bad += !rp_image_guard_ok(img[j]);
      double t2 = rp_clock_us();
      tr[r] = t1 - t0;
      tc[r] = t2 - t1;
    }
    double mr = median(tr, reps), mc = median(tc, reps);
    printf("%-6u %12.3f %12.3f %7.2f%%%s\n", k, mr, mc, 100 * mc / mr,
           bad ? " (damaged!)" : "");
    for (unsigned j = 0; j < k; j++)
      rp_image_free(img[j]);
    free(img);
    rp_exec_destroy(x);
    rp_graph_destroy(g);
  }
  free(tr);
  free(tc);
  return 0;
}
