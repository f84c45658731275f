/* Internal interface of the starpu backend: the state of one exec, the
 * lowering of the plan into a task list, StarPU's start-up. */
#ifndef RP_SP_INTERNAL_H
#define RP_SP_INTERNAL_H

#include <pthread.h>
#include <starpu.h>
#include "reprise/backend.h"
#include "rp_starpu.h"

/* Modes of an exec (rp_exec_opts.mode). */
enum {
  SP_IMPLICIT = 0, /* "implicit": StarPU orders tasks from their data
                      accesses (one handle per image, R/W/RW) */
  SP_EXPLICIT = 1, /* "explicit" (default): the plan's edges as task
                      dependencies */
  SP_MPI = 2       /* "mpi": ranks, each running its pruned part */
};

/* What one item of the task list does. */
enum {
  SP_RUN = 0,    /* run plan node v (kernel, host task, local copy) */
  SP_PACK = 1,   /* copy node v: source region -> staging buffer */
  SP_UNPACK = 2, /* copy node v: staging buffer -> destination region */
  SP_SEND = 3,   /* send node v's staging buffer to rank peer */
  SP_RECV = 4    /* receive node v's staging buffer from rank peer */
};

typedef struct sp sp;

/* The part of the plan one rank lowers, found in one pass over the nodes'
 * owners (mode "mpi"; the whole plan otherwise). Everything after that
 * pass (bodies checked, images allocated and registered, staging buffers,
 * the task list) walks these lists only: O(own part), not O(graph). */
typedef struct sp_part {
  uint32_t *node;    /* nodes this rank runs, or copies between ranks with
                        one end here; program order */
  uint32_t nnode;
  uint32_t *image;   /* images those nodes access on this rank, each once */
  uint32_t nimage;
  uint32_t nstage;   /* copies between ranks: one staging buffer each */
  uint32_t tasks, sends, recvs, naccess;
} sp_part;

/* One item of the task list a replay submits, in program order. */
typedef struct sp_item {
  sp *s;
  uint32_t v;      /* plan node */
  uint8_t kind;    /* SP_* */
  int peer;        /* send, recv: the other rank */
  uint32_t d0, nd; /* data accesses at s->descr[d0 .. d0 + nd) */
} sp_item;

struct sp {
  rp_exec *x;
  const rp_plan *p;
  int mode, rank, nranks;
  uint64_t tag0;                 /* mpi: this exec's message tags */
  void **img;                    /* per image: memory we allocated */
  starpu_data_handle_t *h;       /* per image on this rank (else NULL) */
  const rp_kernel **kern;        /* per node */
  void **stage;                  /* per node: staging buffer of a copy
                                    between ranks (NULL otherwise) */
  uint64_t *stage_bytes;
  starpu_data_handle_t *sh;      /* per node: staging handle */
  sp_item *item;
  uint32_t nitem;
  struct starpu_data_descr *descr;
  uint32_t ndescr;
  rp__starpu_stats st;
  sp_part part;                  /* what this rank lowers */
  uint64_t body_ns;              /* CPU time in task bodies, all launches */
  /* explicit mode: the tasks of the replay in flight and the one before
   * (nnode + 1 each: the last is the join of the replays). */
  struct starpu_task **cur, **prev;
  struct starpu_task **deps;     /* scratch */
  /* Progress. */
  uint32_t *ndone;               /* per node: runs done in this batch */
  uint8_t *mine;                 /* per node: run or unpacked here */
  int failed;                    /* a task failed in this batch */
  int fail_code;
  uint32_t fail_v;
  unsigned fail_rep;
  char fail_msg[256];
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint64_t pending;              /* tasks and requests not done */
  uint64_t batch;                /* batch being launched */
  int submitted;                 /* its task list is all submitted */
  int running;
};

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

/* The rank that owns space sp (RP_SPACE_HOST or a device) among nranks. */
int rp__sp_space_rank(int space, int nranks);

/* Find the part rank `rank` of nranks lowers from plan p (mode SP_*),
 * without StarPU. RP_ENOMEM. Free with rp__sp_part_free(). */
rp_status rp__sp_part(const rp_plan *p, int mode, int rank, int nranks,
                      sp_part *out);
void rp__sp_part_free(sp_part *pt);

/* Its figures (lower_us and body_cpu_us are left 0). */
void rp__sp_part_stats(const rp_plan *p, const sp_part *pt, int rank,
                       int nranks, rp__starpu_stats *out);

/* Build s->item and s->descr from s->part: the task list of rank s->rank
 * (the whole plan outside mpi mode). Handles and staging must exist. */
rp_status rp__sp_lower(sp *s);

/* Run item it's work on the calling thread (nothing once a task of the
 * batch failed); counts the node's runs and keeps the first failure. */
void rp__sp_run_item(const sp_item *it);

/* Item it is done: counts the node's runs here and keeps the first
 * failure (code != 0, with its message). */
void rp__sp_item_done(const sp_item *it, int code, const char *msg);

#ifdef STARPU_USE_CUDA
/* Where StarPU has CUDA (sp_cuda.c): a kernel item's CUDA body on the
 * handles' device copies, and which items a CUDA worker may take. */
void rp__sp_cuda_body(void *buffers[], void *arg);
int rp__sp_can_execute(unsigned worker, struct starpu_task *task,
                       unsigned nimpl);
#endif

#endif
