/* Internal figures of the mpi backend, for the examples, benchmarks and
 * tests (not installed). */
#ifndef RP_MPI_H
#define RP_MPI_H

#include <stdint.h>
#include "reprise/backend.h"

/* What one rank of an mpi exec lowered. */
typedef struct rp__mpi_stats {
  int rank, nranks;
  int nthreads;  /* the engine's threads on this rank */
  int bound;     /* 1: pinned to cores[0 .. ncores) */
  int cores[64]; /* the rank's cores when bound */
  int ncores;
  uint32_t tasks;       /* in one replay: nodes run, pieces, the post
                           (a kernel cut into slices counts once) */
  uint32_t sends;       /* messages sent per replay */
  uint32_t recvs;       /* messages received per replay */
  uint32_t edges;       /* dependencies between the tasks */
  uint64_t image_bytes; /* memory of its own for images */
  /* the overlap of halos with computation (mpi_cut.c): kernels cut into
   * slices; interior slices (no received byte read) and boundary ones;
   * those of each that a receive precedes directly (interior: 0) */
  uint32_t cut, interior, boundary, interior_waits, boundary_waits;
  uint32_t engine_tasks; /* the engine's tasks per replay, slices apart */
} rp__mpi_stats;

/* The figures of exec x (a live exec of the mpi backend). RP_EINVAL for
 * another exec. */
rp_status rp__mpi_stats_get(const rp_exec *x, rp__mpi_stats *out);

#endif
