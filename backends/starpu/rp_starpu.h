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
  int rank, nranks; /* this process among the ranks (0 of 1: no MPI) */
  uint32_t nodes;   /* plan nodes (the whole graph) */
  uint32_t tasks;   /* StarPU tasks per replay on this rank (nodes it
                          runs, packs and unpacks of copies between ranks) */
  uint32_t sends;   /* messages it sends per replay */
  uint32_t recvs;   /* messages it receives per replay */
  /* The work of lowering: one pass over the nodes' owners (scanned: a
   * test of each node, nothing more), then only this rank's part: */
  uint32_t scanned;      /* nodes whose owner was tested (the whole plan) */
  uint32_t visited;      /* nodes lowered here (run here, or a copy between
                          ranks with one end here) */
  uint32_t accesses;     /* their data accesses */
  uint32_t images;       /* images allocated or registered here */
  uint32_t handles;      /* StarPU data handles registered (images in modes
                          with data dependencies, staging buffers; one
                          per user array, whatever images it holds) */
  uint32_t aliased;      /* images kept in the user's array (mode "mpi":
                          the spaces of a buffer on one rank sharing one
                          memory) */
  uint32_t user_arrays;  /* user arrays this rank uses */
  uint64_t image_bytes;  /* bytes of the images allocated here (an image
                          holds only the bytes its accesses touch) */
  uint32_t pieces;       /* transfers between ranks this rank takes part
                          in, and local parts of copies of distributed
                          buffers */
  double lower_us;       /* time spent lowering at instantiate */
  double register_us;    /* of which registering StarPU data handles (once
                          per exec: a replay registers nothing) */
  double body_cpu_us;    /* CPU time the task bodies took on this rank's
                          workers, all launches so far (the useful work:
                          the rest of the workers' CPU time is StarPU's) */
  uint32_t part_handles; /* the handles mode "mpi" registers for this
                          rank's part: one per image in memory of its
                          own, per user array, per staging buffer */
} rp__starpu_stats;

/* Where one rank's time went over the traced launches of an exec
 * (rp__starpu_trace), in microseconds. The wall time of the launches is
 * cut into the classes body_us .. other_us, which add up to wall_us: at
 * each instant, a task body running (by what it does), else a task ready
 * and none running (StarPU's scheduling and wake-up), else a receive
 * pending (by what it carries), else submission unfinished, else other. */
typedef struct rp__starpu_breakdown {
  unsigned launches;     /* traced launches */
  unsigned replays;      /* replays whose items were stamped */
  uint64_t tasks;        /* task instances stamped */
  uint64_t recvs;        /* receives stamped */
  double wall_us;        /* launches, from the call to its return */
  double body_us;        /* kernels, host tasks, copies within the rank */
  double halo_us;        /* packing and unpacking messages between devices
                          (halo rows) */
  double host_us;        /* packing and unpacking copies between the host of
                          one rank and a device of another: the scatter and
                          gather through the host's rank */
  double sched_us;       /* a task ready, none running: StarPU's overhead */
  double recv_us;        /* nothing to run, waiting on a receive between
                          devices (a halo) */
  double host_recv_us;   /* nothing to run, waiting on a receive of a host
                          copy (scatter or gather) */
  double submit_wait_us; /* nothing to run or receive, submission going
                          on */
  double other_us;       /* the rest: nothing pending here (the end of the
                          launch: sends, callbacks, the main thread) */
  double submit_us;      /* the main thread inside submission calls (it
                          overlaps the classes above) */
  double ready_lat_us;   /* sum over tasks of start - ready */
  double done_lat_us;    /* sum over tasks of callback - end of body */
} rp__starpu_breakdown;

/* Start (on 1: zeroes the totals) or stop tracing exec x's launches.
 * RP_EINVAL: x is not a live starpu exec of mode "mpi" or "implicit". */
rp_status rp__starpu_trace(const rp_exec *x, int on);

/* The totals of exec x's traced launches. RP_EINVAL as above. */
rp_status rp__starpu_breakdown_get(const rp_exec *x, rp__starpu_breakdown *out);

/* The figures of starpu exec x. RP_EINVAL: x is not a live starpu exec. */
rp_status rp__starpu_stats_get(const rp_exec *x, rp__starpu_stats *out);

/* The same figures for rank `rank` of `nranks` in mode "mpi" on plan p
 * (its graph's distributed buffers placed as mode "mpi" places them), from
 * the same code the backend lowers with, without StarPU or MPI (a fake
 * rank): lower_us is the time that finding the part took here, handles
 * counts the handles mode "mpi" would register. RP_ENOMEM; RP_ENOTSUP for
 * a host task whose host rows lie on several ranks. */
rp_status rp__starpu_count(const rp_plan *p, int rank, int nranks,
                           rp__starpu_stats *out);

/* The longest chain of messages in one replay of plan p in mode "mpi" on
 * nranks ranks (fake ranks: each rank's task list and dependencies as the
 * backend lowers them, without StarPU or MPI; a receive counts one
 * message more than its send): depth[r] (nranks entries) is the most
 * messages on a path of dependencies ending at a task of rank r. A
 * stencil of S steps whose step waits for its neighbours' rows only has
 * about S on every rank, whatever the ranks; a chain through the ranks
 * makes it grow with r. whole = 1 orders the tasks as StarPU's data
 * dependencies on one handle per image would (the lowering before issue
 * 35), 0 as the backend does. RP_ENOMEM, RP_ENOTSUP (as
 * rp__starpu_count), RP_EINVAL (nranks < 1). */
rp_status rp__starpu_msg_depth(const rp_plan *p, int nranks, int whole,
                               uint32_t *depth);

/* The network and runtime model of a replay in mode "mpi"
 * (rp__starpu_predict): a message of b bytes arrives latency_us +
 * b / (gbps * 1e3) us after its send was posted (bench_mpi_pingpong's
 * fit); every task (a node run, a pack, an unpack) costs its body plus
 * task_us on one of the rank's `workers` (StarPU's cost per task:
 * submission, scheduling, callbacks); every send and receive takes msg_us
 * more (StarPU-MPI's progress thread acting on it: a delay, requests
 * pending together being handled together); a launch costs launch_us
 * before its first task; every body takes body_scale times its
 * profiled cost. bench_mpi_jacobi calibrates task_us, msg_us, launch_us
 * and body_scale with a probe on the ranks (docs/mpi.md). */
typedef struct rp__starpu_net {
  double latency_us, gbps;
  double task_us, msg_us, launch_us;
  unsigned workers;  /* 0: 1 */
  double body_scale; /* the bodies' slowdown with every rank of the node
                        running at once (their memory bandwidth shared)
                        against the profile's one process alone; 0: 1 */
} rp__starpu_net;

/* The predicted time of one replay of plan p in mode "mpi" on nranks
 * ranks, per rank (rank_us, nranks entries: from the launch to the end of
 * the rank's last task or request), from the task lists and dependencies
 * every rank lowers (fake ranks, as rp__starpu_msg_depth; whole as
 * there) simulated with net model n: each rank's ready tasks run on its
 * workers in the order they became ready (then program order), a send
 * once its pack ran, a receive once its message arrived, its unpack
 * after it. op_us: the cost of every operation of p's graph (indexed by
 * node, as rp_exec_profile() fills it), a pack or an unpack costing its
 * copy's in proportion to its bytes, a copy within one memory nothing.
 * The overall prediction is the largest. RP_EINVAL (nranks < 1, a
 * negative or non-finite figure), RP_ENOMEM, RP_ENOTSUP (as
 * rp__starpu_count). */
rp_status rp__starpu_predict(const rp_plan *p, int nranks, int whole,
                             const rp__starpu_net *n, const double *op_us,
                             double *rank_us);

/* Where mode "mpi" placed this rank's threads (StarPU-MPI started once
 * per process): the ranks on its node (OMPI_COMM_WORLD_LOCAL_SIZE or
 * MPI_Comm_split_type SHARED) and its place among them, the node's cores,
 * its CPU workers; bound 1 when its workers run on cores first_cpu ..
 * (one each) and StarPU-MPI's progress thread on mpi_cpu, cores no other
 * rank of the node uses; 0 when nothing was bound (fewer than 2 cores per
 * rank, or a placement by the user or the launcher), first_cpu and
 * mpi_cpu then -1. */
typedef struct rp__starpu_layout {
  int local_ranks, local_rank, cores;
  int bound;
  int workers;
  int first_cpu, mpi_cpu;
} rp__starpu_layout;

/* This process's layout. RP_EINVAL: StarPU-MPI was not started here (no
 * exec of mode "mpi" created yet). */
rp_status rp__starpu_layout_get(rp__starpu_layout *out);

#ifdef __cplusplus
}
#endif
#endif
