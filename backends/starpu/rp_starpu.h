/* The starpu backend's figures, for the tests and benchmarks (internal:
 * linked from the static library). */
#ifndef RP_STARPU_H
#define RP_STARPU_H

#include "reprise/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one rank lowered at instantiate: the task list one replay
 * submits. */
typedef struct rp__starpu_stats {
  int rank, nranks;    /* this process among the ranks (0 of 1: no MPI) */
  uint32_t nodes;      /* plan nodes (the whole graph) */
  uint32_t tasks;      /* StarPU tasks per replay on this rank (nodes it
                          runs, packs and unpacks of copies between ranks) */
  uint32_t sends;      /* messages it sends per replay */
  uint32_t recvs;      /* messages it receives per replay */
  /* The work of lowering: one pass over the nodes' owners (scanned: a
   * test of each node, nothing more), then only this rank's part: */
  uint32_t scanned;    /* nodes whose owner was tested (the whole plan) */
  uint32_t visited;    /* nodes lowered here (run here, or a copy between
                          ranks with one end here) */
  uint32_t accesses;   /* their data accesses */
  uint32_t images;     /* images allocated or registered here */
  uint32_t handles;    /* StarPU data handles registered (images in modes
                          with data dependencies, staging buffers) */
  uint64_t image_bytes; /* bytes of the images allocated here (an image
                          holds only the bytes its accesses touch) */
  double lower_us;     /* time spent lowering at instantiate */
  double body_cpu_us;  /* CPU time the task bodies took on this rank's
                          workers, all launches so far (the useful work:
                          the rest of the workers' CPU time is StarPU's) */
} rp__starpu_stats;

/* The figures of starpu exec x. RP_EINVAL: x is not a live starpu exec. */
rp_status rp__starpu_stats_get(const rp_exec *x, rp__starpu_stats *out);

/* The same figures for rank `rank` of `nranks` in mode "mpi" on plan p,
 * from the same code the backend lowers with, without StarPU or MPI (a
 * fake rank): lower_us is the time that finding the part took here,
 * handles counts the handles mode "mpi" would register. RP_ENOMEM. */
rp_status rp__starpu_count(const rp_plan *p, int rank, int nranks,
                           rp__starpu_stats *out);

#ifdef __cplusplus
}
#endif
#endif
