/* Benchmark: the starpu backend on one node, its two ways of ordering
 * tasks side by side in one run: "implicit" (StarPU's data dependencies
 * over one handle per image) and "explicit" (the plan's edges as task
 * dependencies), with the sequential reference replay as the baseline.
 * Workloads: Jacobi 2D with large row blocks (~ms tasks) and with tiny
 * ones (~us tasks). Median of >= 5 timed launches of `iters` replays;
 * every result checked byte for byte against the reference. Set
 * STARPU_NCPU (default: all cores). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "examples.h"
#include "reprise/backend.h"

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct shape {
  const char *name;
  uint64_t n;
  unsigned steps, blocks, iters;
} shape;

int main(int argc, char **argv) {
  unsigned runs = argc > 1 && atoi(argv[1]) >= 5 ? (unsigned)atoi(argv[1]) : 5;
  static const shape shapes[] = {{"jacobi 1024, 8 blocks", 1024, 4, 8, 5},
                                 {"jacobi 64, 16 blocks", 64, 8, 16, 50}};
  static const char *const modes[] = {NULL, "implicit", "explicit"};
  printf("bench_starpu: median of %u launches\n%-24s %10s %12s %12s %12s\n",
         runs, "shape", "tasks", "reference_us", "implicit_us", "explicit_us");
  int bad = 0;
  for (unsigned k = 0; k < sizeof shapes / sizeof *shapes; k++) {
    const shape *sh = &shapes[k];
    ex_jacobi2d p;
    memset(&p, 0, sizeof p);
    p.n = sh->n;
    p.steps = sh->steps;
    p.blocks = sh->blocks;
    uint64_t nn = p.n * p.n;
    double *a = malloc(nn * 8), *b = malloc(nn * 8), s[1];
    double *ra = malloc(nn * 8);
    rp_graph *g = NULL;
    if (rp_graph_create(&g, 0) || ex_jacobi2d_record(g, &p, a, b, s) ||
        rp_graph_end(g)) {
      fprintf(stderr, "bench_starpu: recording failed\n");
      return 2;
    }
    double med[3];
    for (unsigned m = 0; m < 3; m++) {
      const rp_backend *be;
      rp_exec_opts o;
      rp_exec *x = NULL;
      rp_exec_opts_init(&o);
      o.mode = modes[m];
      if (rp_backend_find(m ? "starpu" : "reference", &be) ||
          rp_exec_create(&x, g, be, &o)) {
        fprintf(stderr, "bench_starpu: %s\n", rp_last_error());
        return 2;
      }
      double t[64];
      ex_jacobi2d_init(&p, a, b, s);
      rp_exec_run(x, sh->iters); /* warm-up */
      for (unsigned r = 0; r < runs && r < 64; r++) {
        rp_exec_run(x, sh->iters);
        t[r] = rp_exec_last_us(x) / sh->iters;
      }
      qsort(t, runs, sizeof *t, cmp_d);
      med[m] = t[runs / 2];
      if (m == 0)
        memcpy(ra, a, nn * 8);
      else if (memcmp(ra, a, nn * 8)) {
        fprintf(stderr, "bench_starpu: %s: %s differs from the reference\n",
                sh->name, modes[m]);
        bad = 1;
      }
      rp_exec_destroy(x);
    }
    printf("%-24s %10u %12.1f %12.1f %12.1f\n", sh->name, rp_graph_num_nodes(g),
           med[0], med[1], med[2]);
    rp_graph_destroy(g);
    free(a);
    free(b);
    free(ra);
  }
  return bad;
}
