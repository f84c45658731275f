/* The distributed two-grid stencil the mpi backend's test programs record
 * (mpi_split.c, mpi_predict.c): per step, each rank's rows copied from A
 * into B (copy_k: src, dst, r0), then each rank's rows of A computed from
 * its rows of B and one halo row on each side (sten_k: src, dst, n, r0);
 * step s appended as the last scalar of both, read by kernels that declare
 * it. Both grids distributed over the ranks, then the recording ended.
 * Header-only: each program includes it once. */
#ifndef RP_TEST_MPI_STENCIL_H
#define RP_TEST_MPI_STENCIL_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include "reprise.h"

/* The stencil's new value at row r of n, element i of grid b (cols
 * columns): the row's mean with its neighbours', the edges kept. */
static inline double mpi_stencil_at(const double *b, uint64_t n, uint64_t r,
                                    uint64_t i, uint64_t cols) {
  return r > 0 && r + 1 < n ? 0.5 * b[i] + 0.25 * (b[i - cols] + b[i + cols])
                            : b[i];
}

static int mpi_stencil_record(rp_graph *g, double *a, double *b, int nranks,
                              uint64_t rows, uint64_t cols, int steps,
                              const rp_kernel *copy_k,
                              const rp_kernel *sten_k) {
  uint64_t n = (uint64_t)nranks * rows;
  rp_buf A, B;
  if (rp_buffer_register_2d(g, "A", a, n, cols, 8, &A) ||
      rp_buffer_register_2d(g, "B", b, n, cols, 8, &B))
    return 1;
  for (int s = 0; s < steps; s++) {
    for (int d = 0; d < nranks; d++) {
      uint64_t r0 = (uint64_t)d * rows;
      rp_arg args[4] = {rp_arg_buf(rp_box2_elems(A, r0, r0 + rows, 0, cols)),
                        rp_arg_buf(rp_box2_elems(B, r0, r0 + rows, 0, cols)),
                        rp_arg_i64((int64_t)r0), rp_arg_i64(s)};
      if (rp_record_kernel(g, copy_k, d, rp_dims3(cols, rows, 1), args, NULL,
                           NULL))
        return 1;
    }
    for (int d = 0; d < nranks; d++) {
      uint64_t r0 = (uint64_t)d * rows, lo = r0 ? r0 - 1 : 0;
      uint64_t hi = r0 + rows < n ? r0 + rows + 1 : n;
      rp_arg args[5] = {rp_arg_buf(rp_box2_elems(B, lo, hi, 0, cols)),
                        rp_arg_buf(rp_box2_elems(A, r0, r0 + rows, 0, cols)),
                        rp_arg_i64((int64_t)n), rp_arg_i64((int64_t)r0),
                        rp_arg_i64(s)};
      if (rp_record_kernel(g, sten_k, d, rp_dims3(cols, rows, 1), args, NULL,
                           NULL))
        return 1;
    }
  }
  return rp_buffer_distribute(g, A, (unsigned)nranks, NULL) ||
         rp_buffer_distribute(g, B, (unsigned)nranks, NULL) || rp_graph_end(g);
}

/* The end of a test program: whether any rank failed (bad on this rank),
 * said once by rank 0 as "NAME: WHAT ok" or "NAME: WHAT FAILED"; MPI
 * finalized; the exit status. */
static int mpi_test_finish(const char *name, const char *what, int bad) {
  int any = 0, me = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (me == 0)
    printf("%s: %s%s\n", name, what, any ? "FAILED" : "ok");
  MPI_Finalize();
  return any;
}

#endif
