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
  double lower_us;     /* time spent lowering at instantiate */
  double body_cpu_us;  /* CPU time the task bodies took on this rank's
                          workers, all launches so far (the useful work:
                          the rest of the workers' CPU time is StarPU's) */
} rp__starpu_stats;

/* The figures of starpu exec x. RP_EINVAL: x is not a live starpu exec. */
rp_status rp__starpu_stats_get(const rp_exec *x, rp__starpu_stats *out);

/* The same counts for rank `rank` of `nranks` in mode "mpi" on plan p,
 * computed without StarPU or MPI (lower_us is 0). */
void rp__starpu_count(const rp_plan *p, int rank, int nranks,
                      rp__starpu_stats *out);

#ifdef __cplusplus
}
#endif
#endif
