/* Internal state of the XRT backend, shared by rp_xrt.c (instantiate,
 * teardown) and rp_xrt_replay.c (the polling loop). It reads the plan
 * (reprise/backend.h) and nothing of the recorder's. */
#ifndef RP_XRT_STATE_H
#define RP_XRT_STATE_H

#include <pthread.h>
#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>
#include <xrt/xrt_kernel.h>

#include "reprise/backend.h"
#include "rp_xrt.h"

/* A device image: one buffer object on one FPGA. */
typedef struct xbo {
  xrtBufferHandle bo;
  unsigned char *map; /* host shadow of the BO */
  int group;          /* memory bank */
} xbo;

/* One kernel of the xclbin on one device: a handle per compute unit. */
typedef struct xkern {
  const rp__xrt_kinfo *ki;
  int dev;
  xrtKernelHandle h[RP__XRT_MAX_CUS];
  uint32_t busy[RP__XRT_MAX_CUS]; /* node running there, or RP_NONE */
  unsigned long runs[RP__XRT_MAX_CUS];
  unsigned next; /* where the search for a free unit starts */
} xkern;

/* One plan node as the backend runs it. */
typedef struct xop {
  uint32_t left;     /* predecessors not done in this replay */
  int fpga;          /* 1: a kernel run on an FPGA compute unit */
  unsigned xk;       /* FPGA kernels: index into xk */
  xrtRunHandle *run; /* FPGA kernels: one run per compute unit */
  unsigned cu;       /* FPGA kernels: unit of the run in flight */
  int host_writer;   /* writes some buffer's user array */
} xop;

typedef struct xstate {
  rp_exec *x;
  const rp_plan *p;
  int emulate, serial;
  unsigned nd;
  xrtDeviceHandle dev[RP_MAX_DEVICES];
  rp__xrt_kinfo *ki;
  unsigned nki;
  xkern *xk;
  unsigned nxk;
  xbo *bo;     /* per plan image: device images */
  void **himg; /* per plan image: host-memory images we allocate */
  xop *op;     /* per plan node */
  uint32_t *ready, *fly;
  void **ptrs;       /* scratch: host task pointers */
  unsigned replay;   /* replay of the batch being run (0 the first) */
  double *tl0, *tl1; /* timeline run: each node's start and end (us since
                        tl_base), NULL otherwise */
  double tl_base;
  /* Progress, for wait_buffer: the batch the engine runs, per node the
   * replays of it done, whether the engine still runs it. */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint64_t batch;
  unsigned *reps_done;
  int running;
} xstate;

/* XRT argument i of kernel k is parameter rp__xrt_param(k, i). */
static inline unsigned rp__xrt_param(const rp_kernel *k, unsigned i) {
  return k->xrt_argmap ? k->xrt_argmap[i] : i;
}

/* Host address of host-memory image i (the user's array, followed through
 * rebinding, or ours). */
static inline void *rp__xrt_host(const xstate *st, uint32_t i) {
  const rp_plan_image *im = &st->p->image[i];
  return im->flags & RP_IMAGE_USER ? rp_exec_host(st->x)[im->buf] : st->himg[i];
}

/* One replay as a DAG (polling loop), or in program order one node at a
 * time (node_us, if not NULL, receives each node's time). */
rp_status rp__xrt_run_dag(xstate *st);
rp_status rp__xrt_run_serial(xstate *st, double *node_us);

#endif
