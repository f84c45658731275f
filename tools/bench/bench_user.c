/* What issue 27's user-facing features cost, as ratios against a baseline
 * measured in the same run (medians of 5, process CPU time):
 *  1. the checking mode (rp_exec_opts.check) against the reference
 *     replay it runs, and against openmp, on the Jacobi example;
 *  2. drawing the demo's graph (141 ops) and a 2 000-op one, grouped,
 *     against the old one-node-per-operation drawing's size (the text);
 *  3. replaying in batches (what `reprise run --progress` does) against
 *     one launch.
 * Usage: bench_user [N] (grid side, default 256). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_check.h"
#include "examples.h"

static double cpu_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

enum { RUNS = 5 };

/* Median CPU time of one replay of g on backend name, checking or not. */
static double replay_us(const rp_graph *g, const char *name, int check,
                        const ex_jacobi2d *p, double *a, double *b, double *s) {
  const rp_backend *be;
  RK(rp_backend_find(name, &be));
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  o.check = check ? 1 : -1;
  rp_exec *x;
  RK(rp_exec_create(&x, g, be, &o));
  double t[RUNS];
  for (int r = 0; r < RUNS; r++) {
    ex_jacobi2d_init(p, a, b, s);
    double t0 = cpu_us();
    RK(rp_exec_run(x, 1));
    t[r] = cpu_us() - t0;
  }
  rp_exec_destroy(x);
  return median(t, RUNS);
}

static double draw_us(const rp_graph *g, size_t *bytes) {
  double t[RUNS];
  for (int r = 0; r < RUNS; r++) {
    char *s = NULL;
    size_t n = 0;
    FILE *fp = open_memstream(&s, &n);
    double t0 = cpu_us();
    RK(rp_graph_write_dot(g, fp));
    fclose(fp);
    t[r] = cpu_us() - t0;
    *bytes = n;
    free(s);
  }
  return median(t, RUNS);
}

int main(int argc, char **argv) {
  uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 256;
  ex_jacobi2d p = {n, 8, 4, 8, 0, 0};
  uint64_t nn = n * n;
  double *a = malloc(nn * 8), *b = malloc(nn * 8), *s = malloc(64 * 8);
  rp_graph *g;
  RK(rp_graph_create(&g, 0));
  RK(ex_jacobi2d_record(g, &p, a, b, s));
  RK(rp_graph_end(g));
  printf("bench_user: Jacobi %llux%llu, %u ops; CPU time, median of %d\n",
         (unsigned long long)n, (unsigned long long)n, rp_graph_num_nodes(g),
         RUNS);
  /* openmp last: its team's threads spin a while after it (and count in
   * the process' CPU time). */
  double chk = replay_us(g, "openmp", 1, &p, a, b, s);
  double ref = replay_us(g, "reference", 0, &p, a, b, s);
  double omp = replay_us(g, "openmp", 0, &p, a, b, s);
  printf("replay: reference %.0f us, openmp %.0f us, checking mode %.0f us"
         "\n  checking / reference %.2fx, checking / openmp %.2fx\n",
         ref, omp, chk, chk / ref, chk / omp);
  size_t by;
  double d1 = draw_us(g, &by);
  printf("dot of %u ops (grouped): %.0f us, %zu bytes\n", rp_graph_num_nodes(g),
         d1, by);
  rp_graph *big;
  ex_jacobi2d q = {64, 120, 10, 8, 0, 0};
  static double qa[64 * 64], qb[64 * 64], qs[64];
  RK(rp_graph_create(&big, 0));
  RK(ex_jacobi2d_record(big, &q, qa, qb, qs));
  RK(rp_graph_end(big));
  double d2 = draw_us(big, &by);
  printf("dot of %u ops (grouped): %.0f us, %zu bytes\n",
         rp_graph_num_nodes(big), d2, by);
  /* Batches: 40 replays in one launch against 40 launches of one (the
   * tool's progress replays in batches of about 0.25 s: fewer). */
  const rp_backend *be;
  RK(rp_backend_find("openmp", &be));
  rp_exec *x;
  RK(rp_exec_create(&x, g, be, NULL));
  double one[RUNS], many[RUNS];
  for (int r = 0; r < RUNS; r++) {
    double t0 = now_us();
    RK(rp_exec_run(x, 40));
    one[r] = now_us() - t0;
    t0 = now_us();
    for (int k = 0; k < 40; k++)
      RK(rp_exec_run(x, 1));
    many[r] = now_us() - t0;
  }
  double m1 = median(one, RUNS), m2 = median(many, RUNS);
  printf("40 replays: one launch %.0f us, 40 launches %.0f us (wall): "
         "%.3fx\n",
         m1, m2, m2 / m1);
  rp_exec_destroy(x);
  rp_graph_destroy(big);
  rp_graph_destroy(g);
  free(a), free(b), free(s);
  return 0;
}
