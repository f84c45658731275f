/* Jacobi 2D over MPI ranks: the grid's row blocks split over devices
 * 0 .. D-1 (D = ranks; device d belongs to rank d), the graph recorded the
 * same on every rank and replayed by the starpu backend in mode "mpi":
 * each rank submits only its part; the halo rows the recorder's coherence
 * inserts travel as StarPU-MPI messages; the host tasks summing the grid
 * run on rank 0, which owns the host. Rank 0's arrays must equal the
 * sequential reference and a plain loop; the other ranks' arrays must stay
 * untouched. With --distributed the grids A and B are declared
 * distributed (rp_buffer_distribute, one part per rank): each rank holds
 * only its rows (the others are NaN here, so that reading one would show),
 * nothing goes through rank 0 in a replay, and the rows are gathered once
 * at the end to check them (no host sums then: they would read rows of
 * every rank). Run with mpirun -np N. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "examples.h"
#include "mpi_common.h"

int main(int argc, char **argv) {
  int rank, size;
  if (exm_start(&argc, &argv, &rank, &size))
    return 2;
  ex_jacobi2d p;
  ex_opts o;
  unsigned bpr = 2, dist = 0;
  memset(&p, 0, sizeof p);
  memset(&o, 0, sizeof o);
  p.n = 256;
  p.steps = 8;
  p.every = 4;
  o.iters = 3;
  const ex_flag flags[] = {
      {"--n", "N", "grid of N x N doubles (256)", &p.n, 1, 3, 1u << 16},
      {"--steps", "S", "Jacobi steps recorded in the graph (8)", &p.steps, 0, 0,
       1u << 20},
      {"--every", "K", "rank 0's host sums the grid every K steps (4)",
       &p.every, 0, 0, 1u << 20},
      {"--blocks-per-rank", "B", "row blocks per rank (2)", &bpr, 0, 1, 64},
      {"--distributed", NULL,
       "each rank holds its rows of A and B "
       "(implies --every 0)",
       &dist, 0, 0, 1}};
  int pr = ex_parse(argc, argv, "mpi_jacobi2d", flags,
                    sizeof flags / sizeof *flags, &o);
  if (pr)
    return exm_finish(pr == 1 ? 0 : 2);
  p.devices = (unsigned)size;
  p.blocks = bpr * (unsigned)size;
  if (dist)
    p.every = 0;
  unsigned iters = o.iters ? o.iters : 1;
  uint64_t nn = p.n * p.n, ns = ex_jacobi2d_nsums(&p);
  double *a = malloc(nn * 8), *b = malloc(nn * 8), *s = malloc(ns * 8);
  double *ca = malloc(nn * 8), *cb = malloc(nn * 8), *cs = malloc(ns * 8);
  rp_graph *g = NULL;
  rp_exec *x = NULL;
  rp_status rc;
  int ret = 2;
  if (!a || !b || !s || !ca || !cb || !cs || rp_graph_create(&g, 0))
    goto out;
  rp_buf A, B;
  if ((rc = ex_jacobi2d_record(g, &p, a, b, s)) ||
      (dist && ((rc = rp_graph_find_buffer(g, "A", &A)) ||
                (rc = rp_graph_find_buffer(g, "B", &B)) ||
                (rc = rp_buffer_distribute(g, A, (unsigned)size, NULL)) ||
                (rc = rp_buffer_distribute(g, B, (unsigned)size, NULL)))) ||
      (rc = rp_graph_end(g))) {
    fprintf(stderr, "mpi_jacobi2d: recording failed: %s: %s\n", rp_strerror(rc),
            rp_graph_error(g));
    goto out;
  }
  if (!(x = exm_exec(g, "mpi_jacobi2d")))
    goto out;
  if (rank == 0)
    printf("mpi_jacobi2d: %llux%llu grid, %u row blocks, %u steps per "
           "graph (host sums every %u), %u replays, %d ranks, %s; graph: "
           "%u ops\n",
           (unsigned long long)p.n, (unsigned long long)p.n, p.blocks, p.steps,
           p.every, iters, size, dist ? "distributed" : "grids on rank 0",
           rp_graph_num_nodes(g));
  ex_jacobi2d_init(&p, a, b, s);
  if (dist) {
    exm_poison_foreign(g, A, a);
    exm_poison_foreign(g, B, b);
  }
  double us;
  if (exm_run(x, iters, "mpi_jacobi2d", rank, &us))
    goto out;
  ret = 0;
  if (dist) { /* every rank's rows to rank 0, once */
    exm_gather_parts(g, A, a);
    exm_gather_parts(g, B, b);
  }
  if (rank == 0) {
    memcpy(ca, a, nn * 8);
    memcpy(cb, b, nn * 8);
    memcpy(cs, s, ns * 8);
    ex_jacobi2d_init(&p, a, b, s);
    if ((rc = rp_replay_reference(g, iters)) || memcmp(a, ca, nn * 8) ||
        memcmp(b, cb, nn * 8) || memcmp(s, cs, ns * 8)) {
      fprintf(stderr, "mpi_jacobi2d: result differs from the reference\n");
      ret = 1;
    }
    ex_jacobi2d_init(&p, ca, cb, cs);
    ex_jacobi2d_check(&p, iters, ca, cb, cs);
    if (memcmp(a, ca, nn * 8) || memcmp(b, cb, nn * 8) ||
        memcmp(s, cs, ns * 8)) {
      fprintf(stderr, "mpi_jacobi2d: result differs from the plain loop\n");
      ret = 1;
    }
    printf("replay: %.1f ms for %u replays; results %s\n", us * 1e-3, iters,
           ret ? "DIFFER" : "identical to the reference");
  } else if (!dist) {
    ex_jacobi2d_init(&p, ca, cb, cs);
    if (memcmp(a, ca, nn * 8) || memcmp(b, cb, nn * 8) ||
        memcmp(s, cs, ns * 8)) {
      fprintf(stderr,
              "mpi_jacobi2d: rank %d wrote host arrays it does not "
              "own\n",
              rank);
      ret = 1;
    }
  }
  if (exm_check_lowering(x, "mpi_jacobi2d"))
    ret = 1;
out:
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(a);
  free(b);
  free(s);
  free(ca);
  free(cb);
  free(cs);
  return exm_finish(ret);
}
