/* The mpi backend's model of a replay (issue 35): what each rank's task
 * list costs, simulated over all ranks at once with a measured network
 * model. Internal functions (rp__) of the mpi backend's archive
 * libreprise-mpi.a (reprise::static_mpi; the build tree's static library
 * brings it), for the backend and its tests: not of the core library nor
 * exported by the shared plugin (which exports its entry point only).
 * Programs predict through rp_exec_predict() (mpi_named.c). This header
 * needs no MPI header. docs/mpi.md, "Predicting the mpi backend's
 * replay". */
#ifndef RP_MPI_H
#define RP_MPI_H

#include <stdint.h>
#include "reprise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The network and engine model: a message of b bytes arrives latency_us +
 * b / (gbps * 1e3) us after its send task posted it; every task of a
 * rank's list costs its body plus task_us (the engine's cost per task);
 * a launch costs launch_us before the first task. */
typedef struct rp_mpi_net {
  double latency_us, gbps;
  double task_us, launch_us;
} rp_mpi_net;

/* What a task of a rank's list does in the model. */
enum {
  RP_MPI_WORK = 0, /* runs its body: a kernel, a slice, a copy, a post */
  RP_MPI_SEND = 1, /* packs (its body), then posts a message to peer */
  RP_MPI_RECV = 2  /* waits for peer's message, then unpacks (its body) */
};

/* One task of a rank's list. A send and a receive match when the send's
 * peer is the receiving rank, the receive's peer the sending rank, and
 * their tags are equal (one message per (source, destination, tag)). */
typedef struct rp_mpi_task {
  int kind;       /* RP_MPI_* */
  double us;      /* its body, in us */
  int peer, tag;  /* messages: the other rank, the match */
  uint64_t bytes; /* messages: the bytes sent */
  uint32_t s0;    /* its successors: succ[s0 .. s0 + ns) of its list */
  uint32_t ns;
} rp_mpi_task;

/* One rank's list, in list order (a topological order of its successor
 * edges: the order in which one thread runs it), run by `threads` threads
 * (0: 1) that take, of the tasks whose predecessors have ended, the first
 * in list order. */
typedef struct rp_mpi_list {
  const rp_mpi_task *task;
  uint32_t n;
  const uint32_t *succ;
  unsigned threads;
} rp_mpi_list;

/* The predicted time of one replay on nranks ranks, per rank: rank_us[r]
 * (nranks entries), from the launch to the end of rank r's last task or
 * the arrival of its last message (the launch returns when its sends are
 * complete). A discrete-event simulation: every rank starts at launch_us;
 * a free thread takes the first ready task in list order and is busy for
 * task_us plus its body; a send's message leaves when its pack ends and
 * arrives latency + bytes / bandwidth later; a receive holds its thread
 * until both task_us has passed and its message arrived, then unpacks.
 * RP_EINVAL: NULL arguments, nranks < 1, a negative or non-finite
 * figure, a successor out of range or a cycle, a send or a receive
 * without its match (a peer out of range included). RP_ENOMEM. */
rp_status rp__mpi_simulate(const rp_mpi_list *ranks, int nranks,
                           const rp_mpi_net *n, double *rank_us);

/* rp__mpi_simulate over what exec x (an exec of the mpi backend) lowered
 * on each of its ranks: its task list after the cut into interior and
 * boundary slices, in its order, with its successors and its threads.
 * Bodies, with op_us NULL: each task's own time in the exec's
 * rp_exec_profile() (the mpi backend profiles one replay per rank on the
 * calling thread, task by task in list order, a receive's unpack without
 * its wait; a task's body is its median over the last 5 profiles;
 * RP_EINVAL when x was never profiled). With op_us (the graph's
 * operations' costs, as rp_exec_profile() fills them for one replay,
 * say by the reference backend): a kernel or a host task its operation's
 * cost op_us[op], a slice its kernel's in proportion to its points, a
 * pack, an unpack or a local piece of a copy its copy's in proportion to
 * its bytes, a copy within one memory of the rank and the post of the
 * receives nothing. Collective over x's ranks (every rank calls it; op_us
 * and n are read on rank 0 only and may be NULL elsewhere; op_us must be
 * NULL on every rank or on none); rank_us (x's ranks entries) is filled
 * on every rank. RP_EINVAL (x not of the mpi backend, n NULL on rank 0,
 * as rp__mpi_simulate), RP_ENOMEM, RP_ENODEV (an MPI call failed). */
rp_status rp__mpi_predict(const rp_exec *x, const rp_mpi_net *n,
                          const double *op_us, double *rank_us);

/* The network model between the ranks of exec x (an exec of the mpi
 * backend), measured: rank 0 exchanges `reps` round trips (0: 50) of 8
 * bytes and of `bytes` bytes (0: 1 MiB) with every other rank in turn;
 * latency_us is the least half round trip of 8 bytes, gbps the bytes over
 * the least half round trip of the large message less the latency (the
 * least: the network's own figure where ranks share cores and a round
 * trip may wait for one; the worst over the peers). task_us and
 * launch_us are left as they are. Collective over x's ranks; the figures
 * on every rank. On one rank: latency 0, gbps left. RP_EINVAL, RP_ENOMEM,
 * RP_ENODEV. */
rp_status rp__mpi_net_measure(const rp_exec *x, unsigned reps, uint64_t bytes,
                              rp_mpi_net *out);

#ifdef __cplusplus
}
#endif
#endif
