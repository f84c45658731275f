/* The XRT backend's replay: one polling loop submits ops in dependency
 * order, spreads kernel runs over compute units, and (in the noop
 * emulation only) runs kernels' CPU bodies when their runs complete. */
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

static rp_status bo_sync(xstate *st, xbo *xb, int to_dev, uint64_t off,
                      uint64_t len, const char *what) {
  if (xrtBOSync(xb->bo, to_dev ? XCL_BO_SYNC_BO_TO_DEVICE
                               : XCL_BO_SYNC_BO_FROM_DEVICE, len, off)) {
    rp_exec_set_error(st->x, "xrt: op \"%s\": buffer object sync failed",
                      what);
    return RP_EBACKEND;
  }
  return RP_OK;
}

/* Copies and host tasks run on the host, in the polling thread. */
static rp_status run_host_side(xstate *st, rp_node n) {
  const rp__op *op = &st->g->op[n];
  xop *o = &st->op[n];
  void *const *host = rp_exec_host(st->x);
  rp_status s = RP_OK;
  if (op->type == RP_OP_HOST) {
    void *ptrs[64], **p = op->nacc <= 64 ? ptrs : malloc(op->nacc * sizeof *p);
    if (!p)
      return RP_ENOMEM;
    for (uint32_t a = 0; a < op->nacc; a++)
      p[a] = host[rp__op_acc(st->g, n)[a].region.buf];
    op->fn(op->user, p);
    if (p != ptrs)
      free(p);
    return RP_OK;
  }
  unsigned char *h = (unsigned char *)host[o->buf];
  for (uint64_t i = 0; s == RP_OK && i < o->niv; i++) {
    uint64_t off = o->iv[2 * i], len = o->iv[2 * i + 1];
    if (op->type == RP_OP_COPY_H2D) {
      xbo *d = rp__xrt_bo(st, o->buf, o->dst);
      if (!d->userptr)
        memcpy(d->map + off, h + off, len);
      s = bo_sync(st, d, 1, off, len, op->name);
    } else if (op->type == RP_OP_COPY_D2H) {
      xbo *d = rp__xrt_bo(st, o->buf, o->src);
      s = bo_sync(st, d, 0, off, len, op->name);
      if (s == RP_OK && !d->userptr)
        memcpy(h + off, d->map + off, len);
    } else {
      xbo *a = rp__xrt_bo(st, o->buf, o->src), *b = rp__xrt_bo(st, o->buf, o->dst);
      if (st->emulate) {
        memcpy(b->map + off, a->map + off, len);
      } else if (xrtBOCopy(b->bo, a->bo, len, off, off)) {
        rp_exec_set_error(st->x, "xrt: peer copy \"%s\" failed", op->name);
        s = RP_EBACKEND;
      }
    }
  }
  return s;
}

/* The noop shim executes nothing: run the kernel's CPU body on the
 * buffer objects' memory when its run completes. */
static void emulate_kernel(xstate *st, rp_node n) {
  const rp__op *op = &st->g->op[n];
  const rp_kernel *k = op->kernel;
  rp_kargs a = *rp_exec_args(st->x, n);
  for (unsigned p = 0; p < k->nparams; p++)
    if (k->params[p].mode != RP_SCALAR)
      a.a[p].p = rp__xrt_bo(st, st->g->args[op->arg0 + p].region.buf,
                       op->device)->map;
  uint64_t lo[3] = {0, 0, 0};
  k->cpu(&a, lo, a.n);
}

static rp_status start_kernel(xstate *st, rp_node n, int *started) {
  xop *o = &st->op[n];
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
      rp_exec_set_error(st->x, "xrt: op \"%s\": cannot start its run on "
                        "compute unit %s", st->g->op[n].name, xk->ki->cu[c]);
      return RP_EBACKEND;
    }
    xk->busy[c] = n;
    xk->runs[c]++;
    o->cu = c;
    *started = 1;
    return RP_OK;
  }
  return RP_OK;
}

/* 1 when node n's run finished (s says how). */
static int poll_kernel(xstate *st, rp_node n, rp_status *s) {
  xop *o = &st->op[n];
  xkern *xk = &st->xk[o->xk];
  enum ert_cmd_state e = xrtRunState(o->run[o->cu]);
  if (e < ERT_CMD_STATE_COMPLETED)
    return 0;
  xk->busy[o->cu] = RP_NONE;
  *s = RP_OK;
  if (e != ERT_CMD_STATE_COMPLETED) {
    rp_exec_set_error(st->x, "xrt: op \"%s\" ended in state %d on compute "
                      "unit %s", st->g->op[n].name, (int)e,
                      xk->ki->cu[o->cu]);
    *s = RP_EBACKEND;
  } else if (st->emulate) {
    emulate_kernel(st, n);
  }
  return 1;
}

static void complete(xstate *st, rp_node n, uint32_t *nready) {
  uint32_t ns;
  const rp_node *succ = rp_graph_succs(st->g, n, &ns);
  for (uint32_t i = 0; i < ns; i++)
    if (--st->op[succ[i]].left == 0)
      st->ready[(*nready)++] = succ[i];
}

/* One iteration as a DAG: every op starts as soon as its predecessors are
 * done; kernels go to a free compute unit of their kernel; one loop polls
 * the runs in flight. */
rp_status rp__xrt_run_dag(xstate *st) {
  uint32_t nready = 0, nfly = 0, done = 0;
  unsigned spins = 0;
  rp_status s = RP_OK;
  for (uint32_t n = 0; n < st->nop; n++)
    if ((st->op[n].left = st->op[n].npred) == 0)
      st->ready[nready++] = n;
  while (done < st->nop && (s == RP_OK || nfly)) {
    int progress = 0;
    /* Kernels first, so the device works while the host copies. */
    uint32_t keep = 0, host_op = RP_NONE;
    for (uint32_t i = 0; i < nready; i++) {
      rp_node n = st->ready[i];
      int started = 0;
      if (s == RP_OK && st->op[n].type == RP_OP_KERNEL) {
        s = start_kernel(st, n, &started);
        if (started)
          st->fly[nfly++] = n;
      } else if (s == RP_OK && host_op == RP_NONE) {
        host_op = n;
        started = 1;
      }
      if (!started)
        st->ready[keep++] = n;
    }
    nready = keep;
    if (host_op != RP_NONE) {
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
      rp_node n = st->fly[i];
      if (!poll_kernel(st, n, &ks)) {
        i++;
        continue;
      }
      st->fly[i] = st->fly[--nfly];
      done++;
      progress = 1;
      if (ks != RP_OK && s == RP_OK)
        s = ks;
      if (ks == RP_OK)
        complete(st, n, &nready);
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

/* Program order, one op at a time (the baseline and the profile). */
rp_status rp__xrt_run_serial(xstate *st, double *op_us) {
  for (rp_node n = 0; n < st->nop; n++) {
    double t0 = rp__now_us();
    rp_status s;
    if (st->op[n].type == RP_OP_KERNEL) {
      int started;
      unsigned spins = 0;
      s = start_kernel(st, n, &started);
      while (s == RP_OK && !poll_kernel(st, n, &s))
        idle(&spins);
    } else {
      s = run_host_side(st, n);
    }
    if (op_us)
      op_us[n] = rp__now_us() - t0;
    if (s != RP_OK)
      return s;
  }
  return RP_OK;
}
