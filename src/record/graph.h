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
  bool name_shared;     /* name is the kernel descriptor's: not freed */
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
  uint32_t *names;        /* buffer ids by name, hashed (record/names.c) */
  uint32_t nnames, capnames;
  rp__op *op;
  uint32_t nop, capop;
  rp__access *acc;
  uint32_t nacc, capacc;
  rp_arg *args;           /* kernel arguments as recorded */
  uint32_t nargs, capargs;
  rp_node *after;
  uint32_t nafter, capafter;

  /* Edges, appended in order of their target while recording (so the
   * predecessors of node j are contiguous: pred_off[j] .. pred_off[j+1]).
   * rp_graph_end() turns them into two CSRs in one pass and frees them:
   * successors by (from, to) with each edge's kind and buffer packed
   * beside (edge i of rp_graph_edge() is succ[i]), predecessors by target
   * with sources increasing: 12 bytes per edge. */
  rp_edge *edge;          /* while recording only */
  uint32_t nedge, capedge;
  uint32_t *pred_off;     /* nop + 1 while recording */
  uint32_t cappred;
  uint32_t *succ_off, *pred_off_end; /* CSR, nop + 1 each, after end */
  rp_node *succ, *pred;
  uint32_t *ekind;        /* per edge, by (from, to): kind << 30 | buf + 1 */

  int max_device;         /* -1 if none */
  uint8_t dev_kind[RP_MAX_DEVICES]; /* rp_device_kind per device */
  char **warn;            /* coherence warnings found by rp_graph_end */
  unsigned nwarn;
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
/* Coherence warnings at the end of recording (record/devices.c): fills
 * g->warn; RP_ECOHERENCE when there are some and the graph is strict. */
rp_status rp__graph_check(rp_graph *g);
void rp__warnings_free(rp_graph *g);
/* The buffer named name, or RP_NONE (record/names.c). */
rp_buf rp__names_find(const rp_graph *g, const char *name);
/* Indexes buffer b by its name (not indexed yet); -1 when out of memory. */
int rp__names_add(rp_graph *g, rp_buf b);
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

/* Most buffers a graph may hold (the packed edge kinds keep 30 bits). */
#define RP__MAX_BUFFERS ((1u << 30) - 2)

static inline const rp__access *rp__op_acc(const rp_graph *g, rp_node n) {
  return g->acc + g->op[n].acc0;
}

#endif
