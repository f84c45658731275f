/* Benchmark: hazard derivation on the shapes of issue 12, each figure the
 * median of 5 runs, ratios against a baseline measured in the same run:
 *  - solver: 64 buffers of 1 MiB, each op reads one whole buffer and
 *    updates a 4 KiB piece of another; record + end, then save as JSON,
 *    read back and analyse (what `reprise analyze FILE` does);
 *  - tiled Cholesky over one matrix buffer with 2-d boxes, against the same
 *    program with one buffer per tile (goal: within 2x);
 *  - an op of 32 accesses against 32 ops of 1 access (goal: per access
 *    within 1.5x). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "reprise.h"
#include "bench_check.h"
#include "solver_shape.h"

enum { REPS = 5 };

static double now(void) {
  struct timespec ts;
  /* CPU time, not wall time: the machine is shared. */
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void nop_host(void *user, void *const *ptrs) { (void)user, (void)ptrs; }

/* ---- solver ------------------------------------------------------------- */

static rp_graph *solver(uint32_t ops) {
  rp_graph *g;
  RK(solver_graph(ops, &g));
  return g;
}

static void bench_solver(uint32_t ops, int analyze) {
  double rec[REPS], rd[REPS], an[REPS];
  uint32_t edges = 0;
  int reps = ops > 500000 ? 1 : REPS;
  for (int k = 0; k < reps; k++) {
    double t0 = now();
    rp_graph *g = solver(ops);
    rec[k] = now() - t0;
    edges = rp_graph_num_edges(g);
    rd[k] = an[k] = 0;
    if (analyze) {
      char path[] = "/tmp/rp_bench_hazardsXXXXXX";
      FILE *fp = fdopen(mkstemp(path), "w+");
      RK(rp_graph_write_json(g, fp));
      fclose(fp);
      rp_graph_destroy(g);
      t0 = now();
      fp = fopen(path, "rb");
      RK(rp_graph_read_json(&g, fp, NULL, 0));
      fclose(fp);
      rd[k] = now() - t0;
      t0 = now();
      rp_analysis *a;
      RK(rp_analyze(g, NULL, &a));
      an[k] = now() - t0;
      rp_analysis_destroy(a);
      remove(path);
    }
    rp_graph_destroy(g);
  }
  double r = median(rec, reps);
  printf("  solver %8u ops: %8u edges (%.2f per op), record+end %.3f s "
         "(%.2f M ops/s)",
         ops, edges, (double)edges / ops, r, ops / r / 1e6);
  if (analyze)
    printf(", read %.3f s + analyze %.3f s = %.3f s", median(rd, reps),
           median(an, reps), median(rd, reps) + median(an, reps));
  printf("%s\n", reps < REPS ? " (1 run)" : "");
  fflush(stdout);
}

/* ---- tiled Cholesky ------------------------------------------------------ */

/* One matrix of t x t tiles of e x e doubles (boxes), or t * t buffers. */
static double cholesky(unsigned t, unsigned e, int boxes, uint32_t *nodes,
                       uint32_t *edges) {
  static double host[1];
  rp_graph *g;
  RK(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  rp_buf A = 0, *tile = malloc((size_t)t * t * sizeof *tile);
  double t0 = now();
  if (boxes) {
    RK(rp_buffer_register_2d(g, "A", host, (uint64_t)t * e, (uint64_t)t * e, 8,
                             &A));
  } else {
    for (unsigned i = 0; i < t * t; i++) {
      char name[32];
      snprintf(name, sizeof name, "A%u_%u", i / t, i % t);
      RK(rp_buffer_register_2d(g, name, host, e, e, 8, &tile[i]));
    }
  }
#define T(i, j)                                                                \
  (boxes ? rp_box2_elems(A, (i)*e, (i)*e + e, (j)*e, (j)*e + e)                \
         : rp_whole(tile[(i)*t + (j)]))
  for (unsigned k = 0; k < t; k++) {
    rp_access a1[1] = {{T(k, k), RP_INOUT}};
    RK(rp_record_host(g, nop_host, NULL, a1, 1, NULL, NULL));
    for (unsigned i = k + 1; i < t; i++) {
      rp_access a2[2] = {{T(k, k), RP_IN}, {T(i, k), RP_INOUT}};
      RK(rp_record_host(g, nop_host, NULL, a2, 2, NULL, NULL));
    }
    for (unsigned i = k + 1; i < t; i++) {
      rp_access a3[2] = {{T(i, k), RP_IN}, {T(i, i), RP_INOUT}};
      RK(rp_record_host(g, nop_host, NULL, a3, 2, NULL, NULL));
      for (unsigned j = k + 1; j < i; j++) {
        rp_access a4[3] = {
            {T(i, k), RP_IN}, {T(j, k), RP_IN}, {T(i, j), RP_INOUT}};
        RK(rp_record_host(g, nop_host, NULL, a4, 3, NULL, NULL));
      }
    }
  }
#undef T
  RK(rp_graph_end(g));
  double dt = now() - t0;
  *nodes = rp_graph_num_nodes(g);
  *edges = rp_graph_num_edges(g);
  rp_graph_destroy(g);
  free(tile);
  return dt;
}

static void bench_cholesky(unsigned t, unsigned e) {
  double tb[REPS], tt[REPS];
  uint32_t nb, eb, nt, et;
  for (int k = 0; k < REPS; k++) {
    tt[k] = cholesky(t, e, 0, &nt, &et);
    tb[k] = cholesky(t, e, 1, &nb, &eb);
  }
  double b = median(tb, REPS), p = median(tt, REPS);
  printf("  cholesky %ux%u tiles of %ux%u: %u tasks; one buffer per tile "
         "%.4f s (%u edges); 2-d boxes %.4f s (%u edges); boxes/tiles "
         "%.2fx (goal <= 2)\n",
         t, t, e, e, nt, p, et, b, eb, b / p);
}

/* ---- accesses per op ----------------------------------------------------- */

/* n ops of `per` accesses each, over per * 64 buffers (each op touches a
 * fresh set in turn); returns seconds per access. */
static double accesses(unsigned per, uint32_t total) {
  static char host[1];
  rp_graph *g;
  RK(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  unsigned nbuf = per * 64;
  for (unsigned b = 0; b < nbuf; b++) {
    char name[16];
    snprintf(name, sizeof name, "b%u", b);
    rp_buffer_desc d = {name, host, 4096, 1, 0, {0, 0, 0}};
    RK(rp_buffer_add(g, &d, NULL));
  }
  rp_access *acc = malloc(per * sizeof *acc);
  uint32_t ops = total / per;
  double t0 = now();
  for (uint32_t i = 0; i < ops; i++) {
    unsigned set = i % 64;
    for (unsigned k = 0; k < per; k++) {
      rp_buf b = set * per + k;
      acc[k].region = rp_whole(b);
      acc[k].mode = k + 1 == per || (i + k) % 2 ? RP_INOUT : RP_IN;
    }
    RK(rp_record_host(g, nop_host, NULL, acc, per, NULL, NULL));
  }
  RK(rp_graph_end(g));
  double dt = now() - t0;
  rp_graph_destroy(g);
  free(acc);
  return dt / ((double)ops * per);
}

static void bench_accesses(void) {
  double a1[REPS], a32[REPS];
  for (int k = 0; k < REPS; k++) {
    a1[k] = accesses(1, 320000);
    a32[k] = accesses(32, 320000);
  }
  double x = median(a1, REPS), y = median(a32, REPS);
  printf("  per access: 1 access/op %.1f ns, 32 accesses/op %.1f ns: "
         "%.2fx (goal <= 1.5)\n",
         x * 1e9, y * 1e9, y / x);
}

/* ---- buffer registration ------------------------------------------------ */

/* Seconds per registration while registering n buffers. */
static double registration(uint32_t n) {
  static char host[1];
  rp_graph *g;
  RK(rp_graph_create(&g, 0));
  double t0 = now();
  for (uint32_t i = 0; i < n; i++) {
    char name[24];
    snprintf(name, sizeof name, "buffer%u", i);
    RK(rp_buffer_register(g, name, host, 64, NULL));
  }
  double dt = now() - t0;
  rp_graph_destroy(g);
  return dt / n;
}

static void bench_registration(void) {
  double a[REPS], b[REPS];
  for (int k = 0; k < REPS; k++) {
    a[k] = registration(1000);
    b[k] = registration(100000);
  }
  double x = median(a, REPS), y = median(b, REPS);
  printf("  per registration: 1 000 buffers %.0f ns, 100 000 buffers %.0f ns"
         ": %.2fx (O(1): about 1)\n",
         x * 1e9, y * 1e9, y / x);
}

int main(int argc, char **argv) {
  int big = argc > 1 && !strcmp(argv[1], "--big");
  if (argc > 1 && !big) {
    printf("usage: bench_hazards [--big]\n  --big: also 2 M ops of the "
           "solver shape (one run)\n");
    return strcmp(argv[1], "--help") ? 2 : 0;
  }
  printf("solver shape (64 x 1 MiB, whole read + 4 KiB update), median of "
         "%d:\n",
         REPS);
  bench_solver(20000, 1);
  bench_solver(200000, 1);
  if (big)
    bench_solver(2000000, 1);
  printf("tiled Cholesky, median of %d:\n", REPS);
  bench_cholesky(32, 64);
  printf("accesses per op, median of %d:\n", REPS);
  bench_accesses();
  printf("buffer registration, median of %d:\n", REPS);
  bench_registration();
  return 0;
}
