/* Internal state of the CUDA backend, shared by its files. */
#ifndef RP_CUDA_H
#define RP_CUDA_H

#include <stdbool.h>
#include <cuda_runtime.h>
#include "reprise/backend.h"
#include "record/graph.h"

typedef enum { CU_GRAPH = 0, CU_STREAMS = 1, CU_SERIAL = 2 } cu_mode;

/* How a copy op moves its bytes: one 1-d or one 3-d piece; a peer copy
 * between GPUs without peer access goes through a pinned host staging
 * buffer (two pieces, the second from the staging buffer). */
typedef struct cu_piece {
  bool is3d;
  void *dst, *src;             /* 1-d: absolute addresses */
  size_t bytes;
  struct cudaMemcpy3DParms p3; /* 3-d box */
} cu_piece;

typedef struct cu_copy {
  cu_piece pc[2];
  unsigned npc;
  void *stage;                 /* staged peer copy: pinned host buffer */
} cu_copy;

/* What a host node calls: the op's host function and access pointers. */
typedef struct cu_host {
  rp_host_fn fn;
  void *user;
  void **ptrs;
  unsigned n;
} cu_host;

/* One operation of the graph, as the backend runs it. */
typedef struct cu_op {
  rp_op_type type;
  int ldev, phys;              /* logical and physical device */
  int dst_phys;                /* peer copies */
  const rp_kernel *k;
  dim3 grid, block;
  cu_copy cp;
  cu_host host;
  cudaGraphNode_t node[2];     /* node[1]: second stage (staged copy) */
  bool dirty;                  /* changed since the exec was updated */
  bool stale;                  /* template node differs from the exec */
  int stream;                  /* streams/serial: index into streams */
  cudaEvent_t done;            /* recorded after the op when needed */
  bool need_event;
} cu_op;

typedef struct cu_state {
  rp_exec *x;
  const rp_graph *g;
  cu_mode mode;
  uint32_t nn, nb;
  unsigned ndev;               /* logical devices */
  int *phys;                   /* logical -> physical */
  int phys0;                   /* device of the main stream */
  bool multi;                  /* more than one physical device */
  void **dimg;                 /* nb * ndev device images */
  void **host;                 /* current host image of each buffer */
  bool *pinned;                /* host image registered by us */
  rp_kargs *kargs;             /* per node, device pointers filled */
  cu_op *op;
  cudaStream_t main;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  bool has_child;              /* graph holds captured child graphs */
  int update;                  /* 0, 1: per node, 2: whole graph */
  int lim_dev, lim[6], lim_thr; /* launch limits of lim_dev, lim_fn */
  const void *lim_fn;
  unsigned ndirty;
  /* streams / serial mode */
  cudaStream_t *streams;
  int *stream_dev;
  unsigned nstreams;
  cudaEvent_t fork;            /* on phys0 */
  cudaEvent_t *join;           /* one per stream */
} cu_state;

/* rp_cuda.c */
rp_status rp__cu_fail(cu_state *s, cudaError_t e, rp_node n,
                      const char *what);
void rp__cu_copy_params(cu_state *s, rp_node n);
void rp__cu_pin(cu_state *s, rp_buf b);
void rp__cu_unpin(cu_state *s, rp_buf b);
void rp__cu_host_ptrs(cu_state *s, rp_node n);
void CUDART_CB rp__cu_host_tramp(void *p);
cudaError_t rp__cu_capture(cu_state *s, rp_node n, cudaGraph_t *out);
/* rp_cuda_update.c */
rp_status rp__cu_rebind(void *state, rp_buf b);
rp_status rp__cu_set_scalar(void *state, rp_node n, unsigned param);
rp_status rp__cu_flush(cu_state *s);
/* rp_cuda_streams.c */
rp_status rp__cu_streams_init(cu_state *s);
rp_status rp__cu_issue(cu_state *s, rp_node n, cudaStream_t st);
rp_status rp__cu_streams_launch(cu_state *s, unsigned iterations);
rp_status rp__cu_profile(void *state, double *op_us);
void rp__cu_streams_free(cu_state *s);

#endif
