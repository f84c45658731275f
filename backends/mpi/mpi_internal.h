/* Internal interface of the mpi backend: one rank's part of the plan
 * (found as the starpu backend's mode "mpi" finds it, sp_place.h) lowered
 * onto the OpenMP backend's engine (omp_internal.h), its transfers between
 * ranks as tasks that post nonblocking MPI sends and receives. */
#ifndef RP_MPI_INTERNAL_H
#define RP_MPI_INTERNAL_H

#include <mpi.h>
#include "omp_internal.h"
#include "sp_place.h"

/* What one task of a rank's list does. */
enum {
  MI_RUN = 0,   /* plan node v: a kernel, a host task, a copy in the rank */
  MI_LOCAL = 1, /* the local piece of a copy whose host end is distributed */
  MI_SEND = 2,  /* pack a piece into its staging buffer, MPI_Isend it */
  MI_RECV = 3,  /* wait for a piece's receive, unpack it */
  MI_POST = 4,  /* post the replay's receives (MPI_Irecv), before any wait */
  MI_PART = 5   /* a slice of a kernel cut for overlap (mpi_cut.c) */
};

/* A slice of a stencil kernel cut for overlap (mpi_cut.c): points
 * [y0, y1) of axis ax of plan node v's index space. */
typedef struct mchunk {
  uint32_t v;
  int ax;
  uint64_t y0, y1;
  int boundary;   /* 1: some of its points read received bytes */
  uint64_t *span; /* per access of v: the bytes [lo, hi) it touches */
} mchunk;

typedef struct mstate mstate;

/* One piece of a copy on this rank: a message (send or receive) or the
 * local piece; the task's argument. */
typedef struct mmsg {
  mstate *m;
  uint32_t src, dst;    /* plan images of the copy's two ends */
  const uint64_t *runs; /* byte runs (offset, length), nr of them */
  uint32_t nr;
  char *stage; /* messages: the packed bytes */
  int bytes, peer, tag;
  MPI_Request req; /* the send or receive in flight, or MPI_REQUEST_NULL */
} mmsg;

struct mstate {
  ostate *st; /* the engine: st->task, st->succ, st->img are ours */
  rp_exec *x;
  const rp_plan *p;
  int rank, nranks;
  MPI_Comm comm; /* this exec's own communicator (MPI_Comm_dup) */
  int comm_ok;
  sp_place place;
  sp_part part;
  void **owned; /* per plan image: our allocation (rp_image_alloc) */
  /* the task list, in program order */
  uint32_t nitem;
  uint8_t *kind;  /* MI_* per task */
  uint32_t *node; /* per task: its plan node (RP_NONE: the post) */
  mmsg *msg;      /* per piece of the part */
  uint32_t *recv; /* pieces this rank receives (the post's list) */
  uint32_t nrecv;
  uint32_t *send; /* pieces it sends (their requests end a launch) */
  uint32_t nsend;
  uint32_t *succ; /* the tasks' successors, CSR as the plan's */
  uint32_t nedge;
  okargs *kargs;     /* kernel tasks' argument blocks */
  void **hptr;       /* host tasks' pointers */
  ocopy *copy;       /* per task (copies in the rank) */
  MPI_Request *sreq; /* scratch: the sends to complete */
  /* kernels cut for overlap (mpi_cut.c) */
  int nocut;             /* mode "whole": none */
  mchunk *chunk;         /* every slice */
  uint32_t nchunk;       /* slices */
  size_t capchunk;       /* allocated */
  uint32_t *cut0, *cutn; /* per node of the part: its slices, 0: whole */
  uint32_t ncut;         /* kernels cut */
  uint32_t nint, nbnd;   /* interior and boundary slices */
  uint32_t int_waits;    /* interior slices a receive precedes (0) */
  uint32_t bnd_waits;    /* boundary slices a receive precedes */
  double *prof;          /* per task: its median time over the last MI_PROFILES
                    profiles (then those profiles' times), or NULL */
  unsigned nprof;        /* profiles taken */
  /* the network measured by rp_exec_predict()'s ping-pong (mpi_named.c) */
  double net_latency_us, net_gbps;
  int net_measured;
};

/* Build m's task list, successors and the engine's tasks from m->part
 * (images allocated; st->nth decides whether receives wait for every task
 * before them: with several threads a thread blocked in a receive must
 * not hold back work of an earlier step, mpi_lower.c). RP_ENOMEM,
 * RP_ENOKERNEL, RP_ENOTSUP (a piece over INT_MAX bytes, tags run out). */
rp_status rp__mpi_lower(mstate *m);

/* Cut the stencil kernels of m's part whose reads need received rows
 * into interior and boundary slices (mpi_cut.c; none in mode "whole"):
 * m->chunk, m->cut0, m->cutn, m->ncut. The messages are built. RP_ENOMEM. */
rp_status rp__mpi_cuts(mstate *m);

/* A slice's argument block from its kernel's: its points only, as a chunk
 * of the split pass (origin, n, whole; docs/split.md). */
void rp__mpi_chunk_args(const mchunk *c, rp_kargs *ka);

/* Free what rp__mpi_cuts built. */
void rp__mpi_cuts_free(mstate *m);

/* Point kernels' argument slots and host tasks' pointers at the images. */
void rp__mpi_bind(mstate *m);

/* Free what rp__mpi_lower built. */
void rp__mpi_lower_free(mstate *m);

/* Profiles kept per task (their median is the task's body in
 * rp__mpi_predict). */
enum { MI_PROFILES = 5 };

/* One replay on the calling thread in list order, timing each task (a
 * receive's unpack only: its wait is left out); m->prof per task,
 * node_us per plan node (the sum of its tasks on this rank, 0 for nodes
 * of other ranks). Collective (the messages flow). RP_ENOMEM. */
rp_status rp__mpi_profile(mstate *m, double *node_us);

/* The execs alive in this process (mpi_predict.c), for the functions of
 * rp_mpi.h that take a caller's rp_exec: m added once instantiated
 * (RP_ENOMEM), removed before it is freed. */
rp_status rp__mpi_live_add(mstate *m);

/* rp_exec_predict() for exec state m (the table's predict entry,
 * mpi_named.c): the parameters by name ("latency_us", "gbps", "task_us",
 * "launch_us"; default 0; "measure_reps" > 0: the network measured first,
 * with "measure_bytes"), then rp__mpi_predict. RP_EINVAL, with
 * rp_exec_error() naming it, for a name it does not know, a value out of
 * range, nranks not the exec's. Collective over the exec's ranks. */
rp_status rp__mpi_predict_named(void *state, const rp_exec_stat *model,
                                unsigned nmodel, const double *op_us,
                                unsigned nranks, double *rank_us);
void rp__mpi_live_remove(const mstate *m);

#endif
