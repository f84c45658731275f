/* Internal state of the XRT backend, shared by rp_xrt.c (instantiate,
 * teardown) and rp_xrt_replay.c (the polling loop). */
#ifndef RP_XRT_STATE_H
#define RP_XRT_STATE_H

#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>
#include <xrt/xrt_kernel.h>

#include "record/graph.h"
#include "replay/exec.h"
#include "rp_xrt.h"

/* One buffer's image on one device. */
typedef struct xbo {
  xrtBufferHandle bo;
  unsigned char *map; /* host shadow of the BO (the user's memory when
                         host-backed) */
  int userptr;        /* created with xrtBOAllocUserPtr */
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

typedef struct xop {
  rp_op_type type;
  uint32_t npred, left;
  unsigned xk;            /* kernels: index into xk */
  xrtRunHandle *run;      /* kernels: one run per compute unit */
  unsigned cu;            /* kernels: unit of the run in flight */
  rp_buf buf;             /* copies */
  int src, dst;           /* copies: spaces */
  uint64_t *iv, niv;      /* copies: (offset, length) pairs */
  double t0;              /* profile: start time */
} xop;

typedef struct xstate {
  rp_exec *x;
  const rp_graph *g;
  int emulate, serial;
  unsigned nd;
  xrtDeviceHandle dev[RP_MAX_DEVICES];
  rp__xrt_kinfo *ki;
  unsigned nki;
  xkern *xk;
  unsigned nxk;
  xbo *bo; /* nbuf * nd */
  xop *op;
  uint32_t nop;
  uint32_t *ready, *fly;
  rp_status last;
} xstate;

static inline xbo *rp__xrt_bo(xstate *st, rp_buf b, int dev) {
  return &st->bo[(size_t)b * st->nd + (size_t)dev];
}

/* XRT argument i of kernel k is parameter rp__xrt_param(k, i). */
static inline unsigned rp__xrt_param(const rp_kernel *k, unsigned i) {
  return k->xrt_argmap ? k->xrt_argmap[i] : i;
}

/* One iteration as a DAG (polling loop), or in program order one op at a
 * time (op_us, if not NULL, receives each op's time). */
rp_status rp__xrt_run_dag(xstate *st);
rp_status rp__xrt_run_serial(xstate *st, double *op_us);

#endif
