/* Placing a plan over MPI ranks and finding the part one rank lowers
 * (sp_part.c): what the distributed lowerings share, the starpu backend's
 * mode "mpi" and the mpi backend (backends/mpi). Needs neither StarPU nor
 * MPI. */
#ifndef RP_SP_PLACE_H
#define RP_SP_PLACE_H

#include <stdint.h>
#include "reprise/backend.h"

/* Modes of an exec (rp_exec_opts.mode). */
enum {
  SP_IMPLICIT = 0, /* "implicit": StarPU orders tasks from their data
                      accesses (one handle per image, R/W/RW) */
  SP_EXPLICIT = 1, /* "explicit" (default): the plan's edges as task
                      dependencies */
  SP_MPI = 2       /* "mpi": ranks, each running its pruned part */
};

/* Mode "mpi": where the spaces live. Device d on rank d % nranks; the host
 * array of a buffer on rank 0, or for a distributed buffer
 * (rp_buffer_distribute) part p's rows on rank p % nranks. */
typedef struct sp_dist {
  unsigned nparts;  /* 0: not distributed */
  uint64_t *bounds; /* nparts + 1 row bounds */
  uint64_t rowbytes;
} sp_dist;

typedef struct sp_place {
  int nranks;
  uint32_t nbuf;
  sp_dist *dist; /* per buffer; NULL when none is distributed */
} sp_place;

/* One transfer of a copy node between two ranks, or the local part of a
 * copy whose host end is distributed: its byte runs and ranks. */
typedef struct sp_piece {
  uint32_t v;      /* plan node (a copy) */
  int src, dst;    /* ranks of its source and destination */
  uint32_t id;     /* its place among the node's pieces (the tag) */
  uint32_t r0, nr; /* byte runs (offset, length) at runs[2 * r0 ..] */
  uint64_t bytes;
} sp_piece;

/* The part of the plan one rank lowers, found in one pass over the nodes'
 * owners (mode "mpi"; the whole plan otherwise). Everything after that
 * pass (bodies checked, images allocated and registered, staging buffers,
 * the task list) walks these lists only: O(own part), not O(graph). */
typedef struct sp_part {
  uint32_t *node; /* nodes this rank runs, or copies between ranks with
                        one end here; program order */
  uint32_t nnode;
  uint32_t *image; /* images those nodes access on this rank, each once */
  uint32_t nimage;
  sp_piece *piece; /* pieces with an end here, in node order */
  uint32_t npiece, cappiece;
  uint64_t *runs; /* their byte runs, pairs */
  uint64_t nruns, capruns;
  uint32_t nstage; /* pieces that are messages: a staging buffer each */
  uint8_t *alias;  /* per plan image: 1 when this rank keeps it in the
                        user's array (mode "mpi": the spaces of a buffer
                        on this rank share one memory, rp__sp_alias) */
  uint32_t nuser;  /* buffers whose user array this rank uses: one
                        StarPU handle each */
  uint32_t tasks, sends, recvs, naccess;
} sp_part;

/* The rank that owns space sp (RP_SPACE_HOST or a device) among nranks
 * (the host: rank 0, unless a buffer is distributed: sp_place). */
int rp__sp_space_rank(int space, int nranks);

/* The placement of graph g's buffers over nranks (reads each buffer's
 * distribution). RP_ENOMEM. Free with rp__sp_place_free(). */
rp_status rp__sp_place(const rp_plan *p, int nranks, sp_place *out);
void rp__sp_place_free(sp_place *pl);

/* Find the part rank `rank` lowers from plan p (mode SP_*; pl: the
 * placement in mode "mpi"), without StarPU. RP_ENOMEM; RP_ENOTSUP (with
 * err) for a host task whose host rows lie on several ranks. Free with
 * rp__sp_part_free(). */
rp_status rp__sp_part(const rp_plan *p, int mode, int rank, const sp_place *pl,
                      sp_part *out, char *err, size_t errlen);
void rp__sp_part_free(sp_part *pt);

/* Which images of part pt this rank keeps in the user's array (pt->alias)
 * and how many user arrays it uses (pt->nuser). In mode "mpi", the spaces
 * of a buffer that live on rank `rank` (its devices; the host's rows it
 * holds: all of them on rank 0 for a buffer that is not distributed) are
 * one memory, the user's array, when rp_plan_may_share() says nothing can
 * tell: their copies then move nothing. RP_ENOMEM. */
rp_status rp__sp_alias(const rp_plan *p, int mode, int rank, const sp_place *pl,
                       sp_part *pt);

/* Whether image i is the user's array on this rank (a user image, or one
 * rp__sp_alias kept there). */
int rp__sp_in_user(const rp_plan *p, const sp_part *pt, uint32_t i);

/* Room for one more element in the array whose pointer is at ap (n used
 * of *cap, elem bytes each; doubling from 64). -1: no memory. */
int rp__sp_room(void *ap, size_t n, size_t *cap, size_t elem);

/* An event of a simulated replay (sp_events.c): what happens at time t,
 * ties in the order they were made (seq); item, rank and kind are the
 * simulation's. */
typedef struct sp_ev {
  double t;
  uint64_t seq;
  uint32_t item;
  int rank;
  int kind;
} sp_ev;

/* Events by time: a binary heap. */
typedef struct sp_evq {
  sp_ev *e;
  size_t n, cap;
} sp_evq;

/* Add x to h. -1: no memory. */
int rp__sp_ev_push(sp_evq *h, sp_ev x);

/* The earliest event of h (h->n > 0), taken out. */
sp_ev rp__sp_ev_pop(sp_evq *h);

/* The bytes copy node v of plan p moves (its destination's runs). */
uint64_t rp__sp_copy_bytes(const rp_plan *p, uint32_t v);

/* In a task's dependencies (rp__sp_order): the task of the replay
 * before. */
#define SP_DEP_PREV (1u << 31)

/* What one task of a rank's list touches, for rp__sp_order: nothing (a
 * message's request: its staging buffer orders it), plan node v's
 * accesses, or piece `piece`'s runs in its source (read), its destination
 * (written) or both (a local piece). */
enum { SP_T_NONE = 0, SP_T_NODE, SP_T_READ, SP_T_WRITE, SP_T_BOTH };
typedef struct sp_task_ref {
  uint32_t v, piece;
  uint8_t touch; /* SP_T_* */
  /* SP_T_NODE: NULL, or per access of node v the span [lo, hi) it
   * touches instead of the access's (a slice of a kernel cut by the mpi
   * backend, mpi_cut.c) */
  const uint64_t *span;
} sp_task_ref;

/* The order between the n tasks t of part pt's list (program order), from
 * the bytes each touches in each memory of this rank (an image, or the
 * user's array that the images rp__sp_alias kept there share): task i
 * depends on the earlier ones whose spans overlap its own with a write
 * among them, each once; with `two` also on the tasks of the replay
 * before (flagged SP_DEP_PREV), two replays being simulated. whole:
 * every access spans its whole memory (as one handle per image orders
 * them). Out: *dep (malloc'ed; free it), and per task dep0[i], ndep[i]
 * (n entries each, given), the most of one task in *maxdep. RP_ENOMEM. */
rp_status rp__sp_order(const rp_plan *p, const sp_part *pt,
                       const sp_task_ref *t, uint32_t n, int whole, int two,
                       uint32_t **dep, uint32_t *dep0, uint32_t *ndep,
                       uint32_t *maxdep);

#endif
