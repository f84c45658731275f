/* The XRT backend's replay: one polling loop submits the plan's nodes in
 * dependency order, spreads kernel runs over compute units, runs copies,
 * host tasks and the kernels of CPU-kind devices on the host when their
 * turn comes, and (in the noop emulation only) runs FPGA kernels' CPU
 * bodies when their runs complete. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rp_xrt_state.h"

/* Nothing finished: yield, and after a while sleep a little, so that the
 * loop leaves the cores to the host's other threads (XRT's among them)
 * during long kernels. */
static void idle(unsigned *spins) {
  if (++*spins < 64) {
    sched_yield();
    return;
  }
  struct timespec ts = {0, 10000};
  nanosleep(&ts, NULL);
}

static const char *op_name(const xstate *st, uint32_t v) {
  const char *n = st->p->node[v].name;
  return n ? n : "?";
}

static rp_status bo_sync(xstate *st, const xbo *xb, int to_dev, uint64_t off,
                         uint64_t len, uint32_t v) {
  if (xrtBOSync(xb->bo,
                to_dev ? XCL_BO_SYNC_BO_TO_DEVICE : XCL_BO_SYNC_BO_FROM_DEVICE,
                len, off)) {
    rp_exec_set_error(st->x, "xrt: op \"%s\": buffer object sync failed",
                      op_name(st, v));
    return RP_EBACKEND;
  }
  return RP_OK;
}

/* A copy between two images, run by run: host memory to host memory, to
 * or from a buffer object (through its map and a sync), or between two
 * buffer objects. */
static rp_status run_copy(xstate *st, uint32_t v) {
  const rp_plan *p = st->p;
  const rp_plan_access *a = p->acc + p->node[v].acc0;
  uint32_t si = a[0].image, di = a[1].image;
  int sh = (p->image[si].flags & RP_IMAGE_HOST_MEMORY) != 0;
  int dh = (p->image[di].flags & RP_IMAGE_HOST_MEMORY) != 0;
  unsigned char *src = sh ? (unsigned char *)rp__xrt_host(st, si) : NULL;
  unsigned char *dst = dh ? (unsigned char *)rp__xrt_host(st, di) : NULL;
  const xbo *sb = &st->bo[si], *db = &st->bo[di];
  const uint64_t *iv = p->iv + 2 * (uint64_t)a[1].iv0;
  rp_status s = RP_OK;
  for (uint32_t i = 0; s == RP_OK && i < a[1].niv; i++) {
    uint64_t off = iv[2 * i], len = iv[2 * i + 1];
    if (sh && dh) {
      memmove(dst + off, src + off, len);
    } else if (sh) {
      memcpy(db->map + off, src + off, len);
      s = bo_sync(st, db, 1, off, len, v);
    } else if (dh) {
      s = bo_sync(st, sb, 0, off, len, v);
      if (s == RP_OK)
        memcpy(dst + off, sb->map + off, len);
    } else if (st->emulate) {
      memcpy(db->map + off, sb->map + off, len);
    } else if (xrtBOCopy(db->bo, sb->bo, len, off, off)) {
      rp_exec_set_error(st->x, "xrt: peer copy \"%s\" failed", op_name(st, v));
      s = RP_EBACKEND;
    }
  }
  return s;
}

/* Where a CPU body or host task sees image i: host memory for a
 * host-memory image, the buffer object's map for an emulated FPGA run (the
 * noop shim executes nothing). */
static void *cpu_addr(void *ctx, uint32_t i) {
  xstate *st = ctx;
  return st->p->image[i].flags & RP_IMAGE_HOST_MEMORY ? rp__xrt_host(st, i)
                                                      : (void *)st->bo[i].map;
}

static void run_cpu_body(xstate *st, uint32_t v) {
  rp_plan_run_on_host(st->x, v, cpu_addr, st, st->ptrs);
}

/* A failure a CPU body or host task reported, as the replay's status. */
static rp_status task_status(xstate *st, uint32_t v) {
  char msg[256];
  int code = rp_task_take_failure(msg, sizeof msg);
  return code ? rp_exec_fail_task(st->x, v, st->replay, code, msg) : RP_OK;
}

/* Copies, host tasks and host kernels run on the host, in the polling
 * thread. */
static rp_status run_host_side(xstate *st, uint32_t v) {
  const rp_plan *p = st->p;
  const rp_plan_node *nd = &p->node[v];
  if (nd->type == RP_OP_KERNEL) {
    run_cpu_body(st, v);
    return task_status(st, v);
  }
  if (nd->type == RP_OP_HOST) {
    run_cpu_body(st, v);
    return task_status(st, v);
  }
  return run_copy(st, v);
}

static rp_status start_kernel(xstate *st, uint32_t v, int *started) {
  xop *o = &st->op[v];
  xkern *xk = &st->xk[o->xk];
  *started = 0;
  /* Round robin over the free units, so that runs spread over all of them
   * even when each completes before the next is ready. */
  for (unsigned i = 0; i < xk->ki->ncu; i++) {
    unsigned c = (xk->next + i) % xk->ki->ncu;
    if (xk->busy[c] != RP_NONE)
      continue;
    xk->next = (c + 1) % xk->ki->ncu;
    if (xrtRunStart(o->run[c])) {
      rp_exec_set_error(st->x,
                        "xrt: op \"%s\": cannot start its run on "
                        "compute unit %s",
                        op_name(st, v), xk->ki->cu[c]);
      return RP_EBACKEND;
    }
    xk->busy[c] = v;
    xk->runs[c]++;
    o->cu = c;
    *started = 1;
    return RP_OK;
  }
  return RP_OK;
}

/* 1 when node v's run finished (s says how). */
static int poll_kernel(xstate *st, uint32_t v, rp_status *s) {
  xop *o = &st->op[v];
  xkern *xk = &st->xk[o->xk];
  enum ert_cmd_state e = xrtRunState(o->run[o->cu]);
  if (e < ERT_CMD_STATE_COMPLETED)
    return 0;
  xk->busy[o->cu] = RP_NONE;
  *s = RP_OK;
  if (e != ERT_CMD_STATE_COMPLETED) {
    rp_exec_set_error(st->x,
                      "xrt: op \"%s\" ended in state %d on compute "
                      "unit %s",
                      op_name(st, v), (int)e, xk->ki->cu[o->cu]);
    *s = RP_EBACKEND;
  } else if (st->emulate) {
    run_cpu_body(st, v);
  }
  return 1;
}

/* Node v is done in this replay: wake per-buffer waiters if it writes a
 * user array. */
static void node_done(xstate *st, uint32_t v) {
  if (!st->op[v].host_writer)
    return;
  pthread_mutex_lock(&st->mu);
  st->reps_done[v] = st->replay + 1;
  pthread_cond_broadcast(&st->cv);
  pthread_mutex_unlock(&st->mu);
}

/* Timeline run: node v starts (end 0) or ends (end 1) now. */
static void stamp(xstate *st, uint32_t v, int end) {
  if (st->tl0)
    (end ? st->tl1 : st->tl0)[v] = rp_clock_us() - st->tl_base;
}

static void complete(xstate *st, uint32_t v, uint32_t *nready) {
  const rp_plan_node *nd = &st->p->node[v];
  stamp(st, v, 1);
  node_done(st, v);
  for (uint32_t i = 0; i < nd->nsucc; i++) {
    uint32_t w = st->p->succ[nd->succ0 + i];
    if (--st->op[w].left == 0)
      st->ready[(*nready)++] = w;
  }
}

/* One replay as a DAG: every node starts as soon as its predecessors are
 * done; FPGA kernels go to a free compute unit of their kernel; one loop
 * polls the runs in flight and runs the host side between polls. */
rp_status rp__xrt_run_dag(xstate *st) {
  const rp_plan *p = st->p;
  uint32_t nready = 0, nfly = 0, done = 0;
  unsigned spins = 0;
  rp_status s = RP_OK;
  for (uint32_t v = 0; v < p->nnode; v++)
    if ((st->op[v].left = p->node[v].npred) == 0)
      st->ready[nready++] = v;
  while (done < p->nnode && (s == RP_OK || nfly)) {
    int progress = 0;
    /* FPGA kernels first, so the device works while the host copies. */
    uint32_t keep = 0, host_op = RP_NONE;
    for (uint32_t i = 0; i < nready; i++) {
      uint32_t v = st->ready[i];
      int started = 0;
      if (s == RP_OK && st->op[v].fpga) {
        stamp(st, v, 0);
        s = start_kernel(st, v, &started);
        if (started)
          st->fly[nfly++] = v;
      } else if (s == RP_OK && host_op == RP_NONE) {
        host_op = v;
        started = 1;
      }
      if (!started)
        st->ready[keep++] = v;
    }
    nready = keep;
    if (host_op != RP_NONE) {
      stamp(st, host_op, 0);
      rp_status hs = run_host_side(st, host_op);
      if (hs != RP_OK && s == RP_OK)
        s = hs;
      done++;
      progress = 1;
      if (hs == RP_OK)
        complete(st, host_op, &nready);
    }
    for (uint32_t i = 0; i < nfly;) {
      rp_status ks;
      uint32_t v = st->fly[i];
      if (!poll_kernel(st, v, &ks)) {
        i++;
        continue;
      }
      st->fly[i] = st->fly[--nfly];
      done++;
      progress = 1;
      if (ks != RP_OK && s == RP_OK)
        s = ks;
      if (ks == RP_OK)
        complete(st, v, &nready);
    }
    if (s != RP_OK && !nfly)
      break;
    if (progress)
      spins = 0;
    else
      idle(&spins);
  }
  return s;
}

/* Program order, one node at a time (the baseline and the profile). */
rp_status rp__xrt_run_serial(xstate *st, double *node_us) {
  for (uint32_t v = 0; v < st->p->nnode; v++) {
    double t0 = rp_clock_us();
    rp_status s;
    if (st->op[v].fpga) {
      int started;
      unsigned spins = 0;
      s = start_kernel(st, v, &started);
      while (s == RP_OK && !poll_kernel(st, v, &s))
        idle(&spins);
    } else {
      s = run_host_side(st, v);
    }
    if (node_us)
      node_us[v] = rp_clock_us() - t0;
    if (s != RP_OK)
      return s;
    node_done(st, v);
  }
  return RP_OK;
}
