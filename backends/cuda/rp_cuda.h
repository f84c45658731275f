/* Internal state of the CUDA backend, shared by its files. It reads the
 * plan (reprise/backend.h) and nothing of the recorder's. */
#ifndef RP_CUDA_H
#define RP_CUDA_H

#include <pthread.h>
#include <stdbool.h>
#include <cuda_runtime.h>
#include "reprise/backend.h"

/* NVTX ranges around launches where the toolkit has NVTX 3 (a profiler
 * then shows them), else nothing: one shim for the backend's files. */
#if defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define CU_NVTX 1
#endif
#endif
#ifndef CU_NVTX
#define nvtxRangePushA(s) ((void)(s))
#define nvtxRangePop() ((void)0)
#endif

typedef enum { CU_GRAPH = 0, CU_STREAMS = 1, CU_SERIAL = 2 } cu_mode;

/* rp_exec_opts.cuda_update: auto (a kernel node takes its block by value
 * until its first set_scalar moves it to the argument table; nodes that
 * changed otherwise, copies after a rebind say, reach the exec by CUDA's
 * setter per node, or by one whole-graph update when many changed),
 * table (every kernel that can, in the table from instantiate), node and
 * whole ("graph"): as auto for set_scalar (their own setter paths for it
 * are retired: they lost to the table on the H200), the changed nodes
 * always by setter per node, or always by one whole-graph update. */
enum { CU_UPD_AUTO = 0, CU_UPD_NODE = 1, CU_UPD_WHOLE = 2, CU_UPD_TABLE = 3 };
/* auto: the whole-graph update from this many changed nodes (and half of
 * the graph's) */
enum { RP_CU_WHOLE_MIN = 32 };

/* What a plan node is to this backend. */
typedef enum {
  CU_KERNEL = 0,   /* a kernel on a GPU (a __global__ or a host wrapper) */
  CU_CPU = 1,      /* a kernel of a CPU-kind device: its CPU body, host */
  CU_HOSTTASK = 2, /* a host task */
  CU_MEMCPY = 3,   /* a copy the GPU's engines move (one side a GPU) */
  CU_HOSTCOPY = 4  /* a copy between two host-memory images: memmove */
} cu_kind;

/* How a copy moves its bytes: one 1-d or one 3-d piece; a peer copy
 * between GPUs without peer access goes through a pinned host staging
 * buffer (two pieces, the second from the staging buffer). */
typedef struct cu_piece {
  bool is3d;
  void *dst, *src; /* 1-d: absolute addresses */
  size_t bytes;
  struct cudaMemcpy3DParms p3; /* 3-d box */
} cu_piece;

typedef struct cu_copy {
  cu_piece pc[2];
  unsigned npc;
  void *stage; /* staged peer copy: pinned host buffer */
} cu_copy;

struct cu_state;

/* What a host node calls back with. */
typedef struct cu_host {
  struct cu_state *s;
  uint32_t v;     /* plan node */
  unsigned calls; /* runs in the current batch */
  void **ptrs;    /* host tasks: scratch */
} cu_host;

/* One plan node, as the backend runs it. */
typedef struct cu_op {
  cu_kind kind;
  int ldev, phys; /* logical and physical device */
  int dst_phys;   /* peer copies */
  const rp_kernel *k;
  const void *fn; /* kernel: its by-value entry (k->cuda, or the packed
                     one when pnp) */
  unsigned pnp;   /* kernel: parameters of its packed block, 0: the whole
                     rp_kargs by value (rp_cuda_pack.c) */
  dim3 grid, block;
  double occ;      /* occupancy of the block, -1: not known */
  const char *why; /* where the block shape comes from */
  cu_copy cp;
  cu_host host;
  cudaGraphNode_t node[2]; /* node[1]: second stage (staged copy) */
  bool can_ind;            /* kernel: may read its block from the
                                  argument table (has a slot) */
  bool ind;                /* kernel: its node reads its block from the
                                  table (s->dargs[s->slot[v]]) */
  bool to_ind;             /* kernel: moves to the table at the next
                                  flush (its first set_scalar, auto) */
  bool empty;              /* copy into an aliased image whose bytes
                                  copy `also` already brings: no piece, an
                                  empty node after `also` (fold_images) */
  uint32_t also;
  bool dirty;       /* changed since the exec was updated */
  bool stale;       /* template node differs from the exec */
  int stream;       /* streams/serial: index into streams */
  cudaEvent_t done; /* recorded after the op when needed */
  bool need_event;
} cu_op;

typedef struct cu_state {
  rp_exec *x;
  const rp_plan *p;
  cu_mode mode;
  uint32_t nn, nb;  /* plan nodes, buffers */
  unsigned ndev;    /* logical devices */
  int *phys;        /* logical -> physical */
  int phys0;        /* device of the main stream */
  bool multi;       /* more than one physical device */
  void **img;       /* per plan image: its base address (a
                                  device image's allocation moved back by
                                  its lo) */
  void **img_alloc; /* per device image: the allocation */
  bool *img_host;   /* per plan image: cudaMallocHost'ed */
  void **pinned;    /* per buffer: user array we registered */
  rp_kargs *kargs;  /* per node: GPU kernels' argument blocks */
  cu_op *op;
  cudaStream_t main;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  bool has_child; /* graph holds captured child graphs */
  int update;     /* CU_UPD_*: how set_scalar and rebind
                                  reach the executable graph */
  /* The argument table (graph mode, one GPU, update auto or table): a
   * kernel node with an entry taking its block by pointer (can_ind) has a
   * slot; once it reads its block from dargs (ind), a changed scalar is
   * written to hargs (host memory) and the dirty entries [tlo, thi) go
   * over in one copy before the next launch. Auto: allocated at the first
   * set_scalar of such a node, which then moves to the table (to_ind, one
   * CUDA setter, once); table: every such node from instantiate. */
  rp_kargs *hargs, *dargs;
  uint32_t *slot; /* per node: its entry, RP_NONE */
  uint32_t nslot, tlo, thi;
  bool tpending; /* a copy of the table may be in flight on
                                  the main stream (hargs not to be written
                                  before it is done) */
  /* RP_CUDA_TIMES=1: where rp_exec_create's time goes (microseconds),
   * noted in rp_exec_error() after instantiate. Timed by phase, not per
   * call, so that the clock's own cost (up to a microsecond a read where
   * the clock is not in the vDSO) stays out: t_setup the nodes' setup
   * (argument blocks, launch shapes, copies' pieces) with its attribute
   * queries t_attr, t_add the loop adding every node (CUDA's adds and
   * reprise's work per node), t_inst cudaGraphInstantiate, t_mem
   * allocations, pinning and the final device synchronisation. */
  bool times;
  double t_setup, t_add, t_inst, t_mem, t_attr;
  int lim_dev, lim[6], lim_thr; /* launch limits of lim_dev, lim_fn */
  const void *lim_fn;
  /* packed blocks (rp_cuda_pack.c): off with RP_CUDA_PACK=0; the last
   * packed entry checked and whether CUDA takes its block */
  bool pack;
  const void *pk_fn;
  bool pk_ok;
  /* the occupancy choice of geo_fn on geo_dev (rp_cuda_geom.h) */
  const void *geo_fn;
  int geo_dev;
  unsigned geo_thr;
  double geo_occ;
  unsigned ndirty;
  unsigned reinstantiated; /* updates refused, instantiated again */
  unsigned gen;            /* bumped by every rebind and set_scalar */
  /* run_until on the device (rp_cuda_until.c): the loop graph, built for
   * generation lgen, and its predicate block in device memory */
  cudaGraph_t lgraph;
  cudaGraphExec_t lexec;
  unsigned lgen;
  struct rp_cu_until_dev *ldev;
  uint8_t *lwhere;      /* per node: 0 in the loop body, 1 before
                                  the loop, 2 after it (rp_cuda_until.c) */
  const uint8_t *lskip; /* while building a loop section: per node,
                                  nonzero for nodes of other sections */
  /* per-buffer wait: an event recorded once the buffer's host writers
   * are done (NULL: no writer) */
  cudaEvent_t *bev;
  cudaStream_t aux; /* streams/serial: where bev are recorded */
  /* streams / serial mode (and the timeline) */
  cudaStream_t *streams;
  int *stream_dev;
  unsigned nstreams;
  cudaEvent_t fork;  /* on phys0 */
  cudaEvent_t *join; /* one per stream */
  /* a failure a host node reported (the first of the batch) */
  pthread_mutex_t fmu;
  int failed;
  uint32_t fnode;
  unsigned freplay;
  int fcode;
  char fmsg[256];
} cu_state;

/* Host address of host-memory image i. */
static inline void *rp__cu_himg(const cu_state *s, uint32_t i) {
  const rp_plan_image *im = &s->p->image[i];
  return im->flags & RP_IMAGE_USER ? rp_exec_host(s->x)[im->buf] : s->img[i];
}
/* Address of image i in its own memory (host or device). */
static inline void *rp__cu_addr(const cu_state *s, uint32_t i) {
  return s->p->image[i].flags & RP_IMAGE_HOST_MEMORY ? rp__cu_himg(s, i)
                                                     : s->img[i];
}

/* Microseconds on a monotonic clock (RP_CUDA_TIMES). */
double rp__cu_now(void);

/* rp_cuda.c */
rp_status rp__cu_fail(cu_state *s, cudaError_t e, uint32_t v, const char *what);
void rp__cu_copy_params(cu_state *s, uint32_t v);
void rp__cu_pin(cu_state *s, rp_buf b);
void rp__cu_unpin(cu_state *s, rp_buf b);
void CUDART_CB rp__cu_host_tramp(void *p);
cudaError_t rp__cu_capture(cu_state *s, uint32_t v, cudaGraph_t *out);
rp_status rp__cu_add_node(cu_state *s, cudaGraph_t gr, uint32_t v,
                          cudaGraphNode_t *deps);
/* The argument table allocated (if it is not yet), every entry its node's
 * block; cuda_update "table" also copies it over. */
cudaError_t rp__cu_table_alloc(cu_state *s);
/* rp_cuda_import.c: whether k is the descriptor of imported CUDA nodes;
 * such a node (its block a) added to graph gr after deps as it was in the
 * graph it came from. */
int rp__cu_is_import(const rp_kernel *k);
const rp_kernel *rp__cu_import_kernel(void);
/* The record of plan node v when it is an imported CUDA copy (a copy
 * over an import's one-byte buffer), else NULL. */
const void *rp__cu_import_copy(const rp_plan *p, uint32_t v);
cudaError_t rp__cu_import_add(cudaGraphNode_t *node, cudaGraph_t gr,
                              const cudaGraphNode_t *deps, size_t nd,
                              const rp_kargs *a);
/* rp_cuda_pack.c: kernel op o's by-value entry chosen (o->fn, o->pnp):
 * the descriptor's packed entry when it covers the kernel's parameters
 * and CUDA reports its one parameter of the packed size, else k->cuda. */
void rp__cu_entry(cu_state *s, cu_op *o);
/* Block a packed to its first np parameters into out
 * (RP_KARGS_PACKED_BYTES(np) bytes). */
void rp__cu_pack(const rp_kargs *a, unsigned np, void *out);
/* The parameter of op o's by-value launch with block a: a itself, or a
 * packed into *tmp (CUDA copies the bytes when the node is added or set,
 * or the kernel launched). */
static inline void *rp__cu_byval(const cu_op *o, const rp_kargs *a,
                                 rp_kargs *tmp) {
  if (!o->pnp)
    return (void *)a;
  rp__cu_pack(a, o->pnp, tmp);
  return tmp;
}
/* rp_cuda_until.c */
rp_status rp__cu_run_until(void *state, const rp_until *u, unsigned max_replays,
                           unsigned check_every, unsigned *done);
void rp__cu_until_free(cu_state *s);
/* rp_cuda_update.c */
rp_status rp__cu_rebind(void *state, rp_buf b);
rp_status rp__cu_set_scalar(void *state, uint32_t v, unsigned param);
rp_status rp__cu_flush(cu_state *s);
/* rp_cuda_streams.c */
rp_status rp__cu_streams_init(cu_state *s);
rp_status rp__cu_issue(cu_state *s, uint32_t v, cudaStream_t st);
rp_status rp__cu_streams_launch(cu_state *s, unsigned iterations);
rp_status rp__cu_profile(void *state, double *node_us);
rp_status rp__cu_timeline(void *state, double *start_us, double *end_us);
void rp__cu_streams_free(cu_state *s);

#endif
