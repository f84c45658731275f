/* Internal layout of a recorded graph, shared by record, analyze, replay
 * and the in-tree backends (read-only outside src/record). */
#ifndef RP_GRAPH_INTERNAL_H
#define RP_GRAPH_INTERNAL_H

#include <stdbool.h>
#include <string.h>
#include "reprise/kernel.h"
#include "reprise/record.h"
#include "core/core.h"

/* One access as given to the recorder: a region (WHOLE resolved to BYTES
 * over the buffer by the checks, so the stored form never holds
 * RP_REGION_WHOLE) in one memory space. */
typedef struct rp__access {
  rp_region region;
  rp_mode mode;
  int space; /* RP_SPACE_HOST or device */
} rp__access;

/* One stored access, 24 bytes: a byte range in place, a box as an index
 * into g->box (boxes cost their 56 bytes only where they are used). Read
 * it whole with rp__acc_get(). */
typedef struct rp__sacc {
  uint32_t buf;
  uint8_t kind;  /* RP_REGION_BYTES or RP_REGION_BOX */
  uint8_t mode;  /* rp_mode */
  int16_t space; /* RP_SPACE_HOST or device */
  uint64_t off;  /* bytes: offset; box: index in g->box */
  uint64_t len;  /* bytes: length; box: 0 */
} rp__sacc;

typedef struct rp__box {
  uint64_t lo[3], hi[3];
  uint32_t ndims;
} rp__box;

typedef struct rp__buffer {
  char *name;
  void *host;
  uint64_t bytes, elem;
  unsigned ndims;
  uint64_t dims[3];
  /* 1: registered in bytes only (rp_buffer_register(), or elem 0 without
   * dims): element-unit regions are refused rather than read as bytes */
  uint8_t no_elem;
  /* rp_buffer_distribute(): nparts + 1 row bounds (NULL: not
   * distributed) */
  uint64_t *bounds;
  unsigned nparts;
} rp__buffer;

/* An operation as given to the recorder (rp__record_op). */
typedef struct rp__proto {
  rp_op_type type;
  int device;     /* kernel/copy device; src for d2d */
  int dst_device; /* d2d; else == device */
  char *name;
  double cost_us;          /* < 0: not given */
  uint32_t nacc;           /* set by the recorder */
  const rp_kernel *kernel; /* kernels; NULL when loaded from a file */
  char *kernel_name;       /* kernels loaded from a file keep the name here */
  const rp_slot *scalars;  /* kernels loaded from a file: the values of their
                             scalar parameters, in order (nscalars) */
  uint32_t nscalars;
  rp_dims space; /* kernels: index space (0s replaced by 1) */
  rp_host_fn fn; /* host tasks */
  void *user;
  bool inserted; /* added by automatic coherence */
} rp__proto;

/* A stored operation: 64 bytes. A kernel's index space is in g->dims
 * (only when it is not 1 x 1 x 1: read it with rp__op_space()), a host
 * task's function in g->hostfn. */
typedef struct rp__op {
  char *name;
  double cost_us;          /* < 0: not given */
  const rp_kernel *kernel; /* kernels; NULL when loaded from a file */
  char *kernel_name;       /* kernels loaded from a file keep the name here */
  uint32_t acc0, nacc;     /* into g->sacc */
  uint32_t after0, nafter; /* into g->after */
  uint32_t arg0;           /* kernels: scalar values at g->slot[arg0]
                           (loaded from a file, without a descriptor:
                           their count at g->slot[arg0].u64, the values
                           after it); host tasks: g->hostfn[arg0] */
  uint32_t dims0;          /* kernels: index space at g->dims[dims0], RP_NONE
                           for 1 x 1 x 1 */
  int16_t device;          /* kernel/copy device; src for d2d */
  int16_t dst_device;      /* d2d; else == device */
  uint8_t type;            /* rp_op_type */
  bool inserted;           /* added by automatic coherence */
  bool name_shared;        /* name is the kernel descriptor's: not freed */
} rp__op;

_Static_assert(sizeof(rp__op) <= 64, "an operation in at most 64 bytes");
_Static_assert(sizeof(rp__sacc) <= 24, "a byte-range access in 24 bytes");

typedef struct rp__hostfn {
  rp_host_fn fn;
  void *user;
} rp__hostfn;

/* Per (buffer, space) hazard and validity state lives in record/hazard.c. */
typedef struct rp__track rp__track;

struct rp_graph {
  unsigned flags;
  bool ended;
  bool broken; /* an allocation failed mid-update */
  void *data;
  char err[512];

  rp__buffer *buf;
  uint32_t nbuf, capbuf;
  uint32_t *names; /* buffer ids by name, hashed (record/names.c) */
  uint32_t nnames, capnames;
  rp__op *op;
  uint32_t nop, capop;
  rp__sacc *sacc; /* accesses, op n's from op[n].acc0 */
  uint32_t nsacc, capsacc;
  rp__box *box; /* the boxes of box accesses */
  uint32_t nbox, capbox;
  rp_dims *dims; /* kernels' index spaces other than 1 x 1 x 1 */
  uint32_t ndims, capdims;
  rp__hostfn *hostfn; /* host tasks' functions */
  uint32_t nhostfn, caphostfn;
  rp_slot *slot; /* kernels: the values of the scalar parameters,
                             in order, from op[n].arg0 (buffer parameters
                             are the op's accesses, in order) */
  uint32_t nslot, capslot;
  rp_node *after;
  uint32_t nafter, capafter;

  /* Edges, appended in order of their target while recording (so the
   * predecessors of node j are contiguous: pred_off[j] .. pred_off[j+1]).
   * rp_graph_end() turns them into two CSRs in one pass and frees them:
   * successors by (from, to) with each edge's kind and buffer packed
   * beside (edge i of rp_graph_edge() is succ[i]), predecessors by target
   * with sources increasing: 12 bytes per edge. */
  rp_edge *edge; /* while recording only */
  uint32_t nedge, capedge;
  uint32_t *pred_off; /* nop + 1 while recording */
  uint32_t cappred;
  uint32_t *succ_off, *pred_off_end; /* CSR, nop + 1 each, after end */
  rp_node *succ, *pred;
  uint32_t *ekind; /* per edge, by (from, to): kind << 30 | buf + 1 */

  int max_device;                   /* -1 if none */
  uint8_t dev_kind[RP_MAX_DEVICES]; /* rp_device_kind per device */
  char **warn; /* coherence warnings found by rp_graph_end */
  unsigned nwarn;
  rp__track *track;              /* hazard + coherence state while recording */
  struct rp__measured *measured; /* measured costs, per op (record/
                                    measured.c); NULL if none */
  void *bound_sites;             /* rp_graph_bind(): the host tasks' user data
                             (record/bind.c); NULL if none */
  struct rp__kcopy *kcopy;       /* kernel descriptors of an older size, copied
                              whole (record/kernel_in.c) */
  uint32_t nkcopy, capkcopy;
};

/* Versioned recording structs (record/kernel_in.c). rp_kernel: the
 * descriptor the graph keeps for caller's @p k: k itself when of this
 * library's size, else the graph's own copy of it with the defaults of
 * the members an older size lacks (one per descriptor); RP_EINVAL with
 * the graph's error naming the kernel for a size 0 or unknown. */
rp_status rp__kernel_in(rp_graph *g, const rp_kernel *k, const rp_kernel **out);
/* rp_op_opts: *dst the defaults, then the caller's @p src (NULL: none). */
rp_status rp__op_opts_in(rp_graph *g, rp_op_opts *dst, const rp_op_opts *src);
/* The descriptor the caller gave for @p k, one of g's nodes' kernels:
 * another graph recorded from g's nodes (rp_graph_bind()) keeps its own
 * copy of an older-size descriptor, not g's. */
const rp_kernel *rp__kernel_given(const rp_graph *g, const rp_kernel *k);
void rp__kcopy_free(rp_graph *g);

/* Recording core (record/op.c): validates, inserts coherence copies,
 * derives hazards, appends. `acc` has nacc entries in their spaces. */
rp_status rp__record_op(rp_graph *g, const rp__proto *proto,
                        const rp__access *acc, uint32_t nacc,
                        const rp_arg *args, const rp_op_opts *o, rp_node *out);
/* Appends op *p with its checked accesses, scalar values, q's index space
 * or host function and explicit dependencies, without deriving anything
 * (record/op.c): RP_OK or RP_ENOMEM (graph unchanged). */
rp_status rp__store_op(rp_graph *g, rp__op *p, const rp__proto *q,
                       const rp__access *chk, uint32_t nacc, const rp_arg *args,
                       const rp_node *after, uint32_t nafter, rp_node *out);
/* An op's name (record/op.c): the given one (copied), else its kernel
 * descriptor's (shared: *owned false), else derived from its type and
 * first access (p->nacc accesses in acc). */
char *rp__derive_name(const rp_graph *g, const rp__proto *p,
                      const rp__access *acc, const char *given, bool *owned);
/* Formats g->err; returns s. */
/* Buffer sb's distribution (rp_buffer_distribute) given to buffer db of
 * graph dst, still recording; nothing when sb is not distributed. */
rp_status rp__buffer_copy_parts(rp_graph *dst, rp_buf db, const rp_graph *src,
                                rp_buf sb);

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
/* Measured costs (record/measured.c): free them; write op n's
 * `, "measured": {...}` with writer w (nothing if none); read
 * an op's "measured" object (a cJSON *, NULL if absent) into node n,
 * returning RP_OK or RP_EPARSE with the reason in why. */
void rp__measured_free(rp_graph *g);
struct rp__out;
void rp__measured_write(struct rp__out *w, const rp_graph *g, rp_node n);
rp_status rp__measured_load(rp_graph *g, rp_node n, const void *json, char *why,
                            size_t size);
/* The same for an op's team time (rp_team_measured): `, "team": {...}`
 * and its "team" object. */
void rp__team_write(struct rp__out *w, const rp_graph *g, rp_node n);
rp_status rp__team_load(rp_graph *g, rp_node n, const void *json, char *why,
                        size_t size);
/* Free the recording-time tracking state. */
void rp__track_free(rp_graph *g);
/* Calls fn for each contiguous byte run of a checked region (never WHOLE),
 * in increasing offset order. */
void rp__region_each(const rp__buffer *b, const rp_region *r,
                     void (*fn)(void *ctx, uint64_t off, uint64_t len),
                     void *ctx);

/* A set of memory spaces as bits, the encoding rp_plan_image.spaces
 * documents: bit 63 the host, bit d device d (RP_MAX_DEVICES < 63). */
#define RP__HOST_BIT (1ull << 63)
static inline uint64_t rp__space_bit(int space) {
  return space < 0 ? RP__HOST_BIT : 1ull << (unsigned)space;
}

/* Most buffers a graph may hold (the packed edge kinds keep 30 bits). */
#define RP__MAX_BUFFERS ((1u << 30) - 2)

/* The index space of kernel n (1 x 1 x 1 for other ops). */
static inline rp_dims rp__op_space(const rp_graph *g, rp_node n) {
  uint32_t d = g->op[n].dims0;
  rp_dims one = {1, 1, 1};
  return g->op[n].type == RP_OP_KERNEL && d != RP_NONE ? g->dims[d] : one;
}

/* Access i of op n, whole. */
static inline rp__access rp__acc_get(const rp_graph *g, rp_node n, uint32_t i) {
  const rp__sacc *a = g->sacc + g->op[n].acc0 + i;
  rp__access x;
  memset(&x, 0, sizeof x);
  x.region.buf = a->buf;
  x.region.kind = (rp_region_kind)a->kind;
  if (a->kind == RP_REGION_BOX) {
    const rp__box *b = g->box + a->off;
    x.region.ndims = b->ndims;
    for (unsigned d = 0; d < 3; d++) {
      x.region.lo[d] = b->lo[d];
      x.region.hi[d] = b->hi[d];
    }
  } else {
    x.region.offset = a->off;
    x.region.bytes = a->len;
  }
  x.mode = (rp_mode)a->mode;
  x.space = a->space;
  return x;
}

#endif
