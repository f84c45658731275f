/* Internal layout of a recorded graph, shared by record, analyze, replay
 * and the in-tree backends (read-only outside src/record). */
#ifndef RP_GRAPH_INTERNAL_H
#define RP_GRAPH_INTERNAL_H

#include <stdbool.h>
#include "reprise/backend.h"
#include "reprise/kernel.h"

/* One stored access: a region (WHOLE resolved to BYTES over the buffer at
 * record time, so readers never see RP_REGION_WHOLE) in one memory space. */
typedef struct rp__access {
  rp_region region;
  rp_mode mode;
  int space; /* RP_SPACE_HOST or device */
} rp__access;

typedef struct rp__buffer {
  char *name;
  void *host;
  uint64_t bytes, elem;
  unsigned ndims;
  uint64_t dims[3];
} rp__buffer;

typedef struct rp__op {
  rp_op_type type;
  int device;           /* kernel/copy device; src for d2d */
  int dst_device;       /* d2d; else == device */
  char *name;
  double cost_us;       /* < 0: not given */
  uint32_t acc0, nacc;  /* into g->acc */
  uint32_t after0, nafter; /* into g->after */
  const rp_kernel *kernel; /* kernels; NULL when loaded from a file */
  char *kernel_name;    /* kernels loaded from a file keep the name here */
  uint32_t arg0;        /* kernels: nparams args at g->args[arg0] */
  rp_dims space;        /* kernels: index space (0s replaced by 1) */
  rp_host_fn fn;        /* host tasks */
  void *user;
  bool inserted;        /* added by automatic coherence */
} rp__op;

/* Per (buffer, space) hazard and validity state lives in record/hazard.c. */
typedef struct rp__track rp__track;

struct rp_graph {
  unsigned flags;
  bool ended;
  bool broken;            /* an allocation failed mid-update */
  void *data;
  char err[512];

  rp__buffer *buf;
  uint32_t nbuf, capbuf;
  rp__op *op;
  uint32_t nop, capop;
  rp__access *acc;
  uint32_t nacc, capacc;
  rp_arg *args;           /* kernel arguments as recorded */
  uint32_t nargs, capargs;
  rp_node *after;
  uint32_t nafter, capafter;

  /* Edges, appended in order of their target while recording (so the
   * predecessors of node j are contiguous: pred_off[j] .. pred_off[j+1]);
   * rp_graph_end() sorts a copy by (from, to) and builds the CSR. */
  rp_edge *edge;
  uint32_t nedge, capedge;
  uint32_t *pred_off;     /* nop + 1 while recording */
  uint32_t cappred;
  rp_edge *sorted;        /* by (from, to), after end */
  uint32_t *succ_off, *pred_off_end; /* CSR, nop + 1 each */
  rp_node *succ, *pred;

  int max_device;         /* -1 if none */
  rp__track *track;       /* hazard + coherence state while recording */
  struct rp__measured *measured; /* measured costs, per op (analyze/
                                    measured.c); NULL if none */
};

/* Recording core (record/op.c): validates, inserts coherence copies,
 * derives hazards, appends. `acc` has nacc entries in their spaces. */
rp_status rp__record_op(rp_graph *g, rp__op *proto, const rp__access *acc,
                        uint32_t nacc, const rp_arg *args,
                        const rp_op_opts *o, rp_node *out);
/* Formats g->err; returns s. */
rp_status rp__fail(rp_graph *g, rp_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Checks a region against its buffer and resolves WHOLE to BYTES. */
rp_status rp__region_check(rp_graph *g, rp_region *r, const char *what);
/* Measured costs (analyze/measured.c): free them; write op n's
 * `, "measured": {...}` into buf (returns 0 and writes "" if none); read
 * an op's "measured" object (a cJSON *, NULL if absent) into node n,
 * returning RP_OK or RP_EPARSE with the reason in why. */
void rp__measured_free(rp_graph *g);
int rp__measured_json(const rp_graph *g, rp_node n, char *buf, size_t size);
rp_status rp__measured_load(rp_graph *g, rp_node n, const void *json,
                            char *why, size_t size);
/* Free the recording-time tracking state. */
void rp__track_free(rp_graph *g);
char *rp__strdup(const char *s);
/* Sets the thread's rp_last_error() message. */
void rp__set_last_error(const char *msg);
/* Grows *p (elements of size sz) to hold at least n; returns 0 or -1. */
int rp__grow(void **p, uint32_t *cap, uint32_t n, size_t sz);
/* Calls fn for each contiguous byte run of a checked region (never WHOLE),
 * in increasing offset order. */
void rp__region_each(const rp__buffer *b, const rp_region *r,
                     void (*fn)(void *ctx, uint64_t off, uint64_t len),
                     void *ctx);

static inline const rp__access *rp__op_acc(const rp_graph *g, rp_node n) {
  return g->acc + g->op[n].acc0;
}

#endif
