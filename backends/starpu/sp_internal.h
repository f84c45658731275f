/* Internal interface of the starpu backend: the state of one exec, the
 * placement of a plan over ranks, the lowering of the plan into a task
 * list, the time breakdown of a launch, StarPU's start-up. */
#ifndef RP_SP_INTERNAL_H
#define RP_SP_INTERNAL_H

#include <pthread.h>
#include <starpu.h>
#include "reprise/backend.h"
#include "rp_starpu.h"
#include "sp_place.h"

/* What one item of the task list does. */
enum {
  SP_RUN = 0,    /* run plan node v (kernel, host task, local copy; a
                    local piece of a copy when piece != RP_NONE) */
  SP_PACK = 1,   /* a piece: source runs -> staging buffer */
  SP_UNPACK = 2, /* a piece: staging buffer -> destination runs */
  SP_SEND = 3,   /* send a piece's staging buffer to rank peer */
  SP_RECV = 4    /* receive a piece's staging buffer from rank peer */
};

/* What a task's time counts as in the breakdown (rp__starpu_breakdown). */
enum {
  SP_CL_BODY = 0, /* kernels, host tasks, copies within the rank */
  SP_CL_HALO = 1, /* packing/unpacking a copy between devices' ranks */
  SP_CL_HOST = 2  /* packing/unpacking a copy from or to the host of
                     another rank: the scatter and gather */
};

typedef struct sp sp;

/* One item of the task list a replay submits, in program order. */
typedef struct sp_item {
  sp *s;
  uint32_t v;          /* plan node */
  uint32_t piece;      /* index in s->part.piece, or RP_NONE */
  uint8_t kind;        /* SP_* */
  uint8_t cls;         /* SP_CL_* */
  int peer;            /* send, recv: the other rank */
  uint32_t d0, nd;     /* data accesses at s->descr[d0 .. d0 + nd) */
  uint32_t dep0, ndep; /* mode "mpi": tasks it waits for, s->dep[dep0 ..
                          dep0 + ndep): item numbers, SP_DEP_PREV set for
                          the item of the previous replay (rp__sp_deps) */
} sp_item;

/* What one submitted task or request carries: its item and the replay of
 * the launch it belongs to (one per item and slot: a task structure is
 * submitted again two replays later). */
typedef struct sp_tctx {
  sp_item *it;
  unsigned rep;
  unsigned slot;
} sp_tctx;

/* Times of one item in one traced replay (us since the launch began). */
typedef struct sp_stamp {
  double ready, start, end, done;
} sp_stamp;

struct sp {
  rp_exec *x;
  const rp_plan *p;
  int mode, rank, nranks;
  sp_place place;           /* mpi */
  uint64_t tag0;            /* mpi: this exec's message tags */
  void **img;               /* per image: memory we allocated */
  starpu_data_handle_t *h;  /* per image on this rank (else NULL);
                                    the buffer's uh for a user or aliased
                                    image */
  starpu_data_handle_t *uh; /* per buffer: its user array's handle */
  const rp_kernel **kern;   /* per node */
  void **stage;             /* per piece: staging buffer of a message
                                    (NULL for a local piece) */
  starpu_data_handle_t *sh; /* per piece: staging handle */
  sp_item *item;
  uint32_t nitem;
  struct starpu_data_descr *descr;
  uint32_t ndescr;
  uint32_t *dep;               /* mpi: the items' dependencies */
  int dep_whole;               /* model StarPU's order on whole-image
                                    handles instead (rp__starpu_msg_depth,
                                    for the tests) */
  uint32_t ndep, maxdep;       /* their number; the most of one item */
  struct starpu_task **depbuf; /* maxdep: scratch for one submission */
  /* implicit, mpi: a task structure per item and slot, built once and
   * submitted again every other replay; their contexts */
  struct starpu_task *task; /* [slot * nitem + i] */
  sp_tctx *ctx;             /* [slot * nitem + i] */
  uint8_t *used;            /* [slot * nitem + i]: submitted, not yet
                                    waited for */
  rp__starpu_stats st;
  sp_part part;     /* what this rank lowers */
  uint64_t body_ns; /* CPU time in task bodies, all launches */
  /* explicit mode: the tasks of the replay in flight and the one before
   * (nnode + 1 each: the last is the join of the replays). */
  struct starpu_task **cur, **prev;
  struct starpu_task **deps; /* scratch */
  /* Progress. */
  uint32_t *ndone; /* per node: writer items done in this
                                    batch */
  uint32_t *mine;  /* per node: writer items here per replay
                                    (runs, unpacks) */
  int failed;      /* a task failed in this batch */
  int fail_code;
  uint32_t fail_v;
  unsigned fail_rep;
  char fail_msg[256];
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint64_t pending; /* tasks and requests not done */
  uint64_t batch;   /* batch being launched */
  int submitted;    /* its task list is all submitted */
  int running;
  /* The breakdown (rp__starpu_trace): stamps of the replays of the launch
   * in flight (the first SP_TRACE_REPS), and the totals. */
  int trace;
  double t0;         /* launch start, rp_clock_us() */
  double submit_end; /* all submitted (us since t0) */
  double submit_us;  /* in submission calls, this launch */
  unsigned trace_reps;
  sp_stamp *stamp; /* [rep * nitem + i] */
  rp__starpu_breakdown bd;
};

/* Replays of a launch the breakdown stamps (the later ones run
 * untraced). */
#define SP_TRACE_REPS 64

/* Start StarPU once per process (with StarPU-MPI when mpi is 1); later
 * calls return what the first one did. *rank, *nranks: this process in
 * MPI_COMM_WORLD (0 and 1 without MPI). */
rp_status rp__sp_start(int mpi, int *rank, int *nranks, char *err,
                       size_t errlen);

/* A launch begins (on 1) or ends (0): StarPU's workers run while at least
 * one launch is in flight and are paused otherwise. */
void rp__sp_busy(int on);

/* Mode "mpi": a task of ours became ready (on 1) or ended (0); the workers
 * run while one is ready or running, and are paused otherwise. */
void rp__sp_ready(int on);

/* Its figures (lower_us and body_cpu_us are left 0). */
void rp__sp_part_stats(const rp_plan *p, const sp_part *pt, int rank,
                       int nranks, rp__starpu_stats *out);

/* Build s->item and s->descr from s->part: the task list of rank s->rank
 * (the whole plan outside mpi mode). Handles and staging must exist. */
rp_status rp__sp_lower(sp *s);

/* Rank r's task list and dependencies as the backend lowers them in mode
 * "mpi" (whole: ordered as whole-image handles would), with no handle,
 * StarPU or MPI (a fake rank, sp_depth.c); free with rp__sp_destroy(). */
rp_status rp__sp_fake_rank(const rp_plan *p, int r, int nranks, int whole,
                           sp **out);

/* The send on rank s->rank of the piece that item it (a receive on rank
 * from->rank, of the same node) receives, or -1. */
long rp__sp_find_send(const sp *s, const sp *from, const sp_item *it);

/* Frees state s of an exec, or of a fake rank (rp__starpu_msg_depth: no
 * task, handle or image then), with what it holds; NULL: nothing. */
void rp__sp_destroy(void *s);

/* Mode "mpi": each task item's dependencies on the items before it, in
 * its replay and in the previous one (it->dep0, it->ndep into s->dep),
 * from the bytes of each memory of this rank that the items touch
 * (sp_deps.c). RP_ENOMEM. */
rp_status rp__sp_deps(sp *s);

/* Run item it's work on the calling thread (nothing once a task of the
 * batch failed); counts the node's runs and keeps the first failure. */
void rp__sp_run_item(const sp_item *it);

/* Item it is done: counts the node's runs here and keeps the first
 * failure (code != 0, with its message). */
void rp__sp_item_done(const sp_item *it, int code, const char *msg);

/* The breakdown of the launch that just ended, from s->stamp, added to
 * s->bd (sp_trace.c). */
void rp__sp_trace_account(sp *s, unsigned iterations, double wall_us);

/* rp_exec_predict() for exec state s: the model parameters by name into
 * an rp__starpu_net, then rp__starpu_predict on s's plan (sp_predict.c).
 * RP_EINVAL, with rp_exec_error() naming it, for a name it does not know
 * or a value out of range. */
rp_status rp__sp_predict_named(void *state, const rp_exec_stat *model,
                               unsigned nmodel, const double *op_us,
                               unsigned nranks, double *rank_us);

#ifdef STARPU_USE_CUDA
/* Where StarPU has CUDA (sp_cuda.c): a kernel item's CUDA body on the
 * handles' device copies, and which items a CUDA worker may take. */
void rp__sp_cuda_body(void *buffers[], void *arg);
int rp__sp_can_execute(unsigned worker, struct starpu_task *task,
                       unsigned nimpl);
#endif

#endif
