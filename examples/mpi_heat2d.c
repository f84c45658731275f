/* Heat 2D over MPI ranks: the rows cut over devices 0 .. D-1 (D = ranks x
 * devices per rank; device d belongs to rank d % ranks), recorded the same
 * on every rank and replayed by the starpu backend in mode "mpi": each
 * rank submits only its part, the halo rows travel as StarPU-MPI
 * messages. Rank 0 owns the host: its arrays must equal the sequential
 * reference replayed the same number of times, and a plain loop; the other
 * ranks' arrays must stay untouched. With --distributed U and V are
 * declared distributed (rp_buffer_distribute): by default one part per
 * device (part p's rows on device p's rank: every copy from and to the
 * host stays on its rank), --parts N cuts them in N even parts instead
 * (part p on rank p % ranks; with N < ranks some ranks hold no rows), and
 * --empty-part K empties part K (its rows go to part K + 1): copies then
 * cross ranks. Each rank holds only its rows (the others are NaN here);
 * they are gathered once at the end to check them. Run with mpirun -np N. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpi_common.h"
#include "multidev.h"

int main(int argc, char **argv) {
  int rank, size;
  if (exm_start(&argc, &argv, &rank, &size))
    return 2;
  ex_heat2d p;
  ex_opts o;
  unsigned dpr = 1, ex = 0, dist = 0, nparts = 0, empty = RP_NONE;
  memset(&p, 0, sizeof p);
  memset(&o, 0, sizeof o);
  p.n = 256;
  p.steps = 10;
  o.iters = 3;
  const ex_flag flags[] = {
      {"--n", "N", "grid of N x N doubles (256)", &p.n, 1, 3, 1u << 16},
      {"--steps", "S", "steps recorded in the graph (10)", &p.steps, 0, 1,
       1u << 20},
      {"--devices-per-rank", "K", "devices per rank (1)", &dpr, 0, 1, 8},
      {"--explicit-halo", NULL, "record the halo copies by hand", &ex, 0, 0, 1},
      {"--distributed", NULL, "each rank holds its rows of U and V", &dist, 0,
       0, 1},
      {"--parts", "N",
       "with --distributed: N even parts (default: one per "
       "device)",
       &nparts, 0, 1, 4096},
      {"--empty-part", "K", "with --distributed: part K holds no rows", &empty,
       0, 0, 4095}};
  int pr = ex_parse(argc, argv, "mpi_heat2d", flags,
                    sizeof flags / sizeof *flags, &o);
  if (pr)
    return exm_finish(pr == 1 ? 0 : 2);
  p.devices = (unsigned)size * dpr;
  p.explicit_halo = (int)ex;
  unsigned iters = o.iters ? o.iters : 1;
  uint64_t nn = p.n * p.n;
  double *u = malloc(nn * 8), *v = malloc(nn * 8);
  double *cu = malloc(nn * 8), *cv = malloc(nn * 8);
  rp_graph *g = NULL;
  rp_exec *x = NULL;
  rp_status rc;
  int ret = 2;
  if (!u || !v || !cu || !cv ||
      rp_graph_create(&g, ex ? RP_GRAPH_NO_COHERENCE : 0))
    goto out;
  rp_buf U = 0, V = 1;
  unsigned np = nparts ? nparts : p.devices;
  uint64_t *bounds = malloc(((size_t)np + 1) * sizeof *bounds);
  if (!bounds)
    goto out;
  for (unsigned k = 0; k <= np; k++)
    bounds[k] = p.n * k / np;
  if (empty < np && empty + 1 < np) /* part K's rows go to part K + 1 */
    bounds[empty + 1] = bounds[empty];
  else if (empty < np) /* the last part's to the one before */
    bounds[empty] = bounds[np];
  rc = ex_heat2d_record(g, &p, u, v);
  if (!rc && dist &&
      (!(rc = rp_graph_find_buffer(g, "U", &U)) &&
       !(rc = rp_graph_find_buffer(g, "V", &V)) &&
       !(rc = rp_buffer_distribute(g, U, np, bounds))))
    rc = rp_buffer_distribute(g, V, np, bounds);
  free(bounds);
  if (rc || (rc = rp_graph_end(g))) {
    fprintf(stderr, "mpi_heat2d: recording failed: %s: %s\n", rp_strerror(rc),
            rp_graph_error(g));
    goto out;
  }
  if (!(x = exm_exec(g, "mpi_heat2d")))
    goto out;
  if (rank == 0)
    printf("mpi_heat2d: %llux%llu grid, %u steps per graph, %u replays, %d "
           "ranks, %u devices, %s; graph: %u ops\n",
           (unsigned long long)p.n, (unsigned long long)p.n, p.steps, iters,
           size, p.devices, dist ? "distributed" : "grids on rank 0",
           rp_graph_num_nodes(g));
  ex_heat2d_init(&p, u, v);
  if (dist) {
    exm_poison_foreign(g, U, u);
    exm_poison_foreign(g, V, v);
  }
  double us;
  if (exm_run(x, iters, "mpi_heat2d", rank, &us))
    goto out;
  ret = 0;
  if (dist) { /* every rank's rows to rank 0, once */
    exm_gather_parts(g, U, u);
    exm_gather_parts(g, V, v);
  }
  if (rank == 0) {
    /* the sequential reference, then a plain loop */
    memcpy(cu, u, nn * 8);
    memcpy(cv, v, nn * 8);
    ex_heat2d_init(&p, u, v);
    if ((rc = rp_replay_reference(g, iters)) || memcmp(u, cu, nn * 8) ||
        memcmp(v, cv, nn * 8)) {
      fprintf(stderr, "mpi_heat2d: result differs from the reference\n");
      ret = 1;
    }
    ex_heat2d_init(&p, cu, cv);
    ex_heat2d_check(&p, iters, cu, cv);
    if (memcmp(u, cu, nn * 8) || memcmp(v, cv, nn * 8)) {
      fprintf(stderr, "mpi_heat2d: result differs from the plain loop\n");
      ret = 1;
    }
    printf("replay: %.1f ms for %u replays; results %s\n", us * 1e-3, iters,
           ret ? "DIFFER" : "identical to the reference");
  } else if (!dist) {
    ex_heat2d_init(&p, cu, cv);
    if (memcmp(u, cu, nn * 8) || memcmp(v, cv, nn * 8)) {
      fprintf(stderr,
              "mpi_heat2d: rank %d wrote host arrays it does not "
              "own\n",
              rank);
      ret = 1;
    }
  }
  if (exm_check_lowering(x, "mpi_heat2d"))
    ret = 1;
out:
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(u);
  free(v);
  free(cu);
  free(cv);
  return exm_finish(ret);
}
