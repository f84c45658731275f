/* CUDA backend: the streams and serial modes, and the profiled run. */
#include <stdlib.h>
#include "rp_cuda.h"

/* Most streams per device in streams mode. */
#define CU_MAX_STREAMS 16

/* The nodes a node must wait for: its plan predecessors, or in serial
 * mode the node before it in program order. */
static const uint32_t *waits(cu_state *s, uint32_t n, uint32_t *count,
                             uint32_t *prev) {
  if (s->mode == CU_SERIAL) {
    *prev = n - 1;
    *count = n > 0;
    return prev;
  }
  *count = s->p->node[n].npred;
  return s->p->pred + s->p->node[n].pred0;
}

/* Streams follow chains of dependent ops: an op goes on the stream whose
 * last op is one of its predecessors, so a chain needs no event; an op
 * starting a new chain takes a fresh stream, or the least recently used one
 * once a device has CU_MAX_STREAMS. Measured on the H200, this beats one
 * stream per engine by a quarter on a copy/compute pipeline. */
rp_status rp__cu_streams_init(cu_state *s) {
  unsigned cap = s->mode == CU_SERIAL ? s->ndev : s->ndev * CU_MAX_STREAMS;
  s->streams = calloc(cap, sizeof *s->streams);
  s->stream_dev = calloc(cap, sizeof *s->stream_dev);
  s->join = calloc(cap, sizeof *s->join);
  uint32_t *tail = calloc(cap, sizeof *tail);
  if (!s->streams || !s->stream_dev || !s->join || !tail) {
    free(tail);
    return RP_ENOMEM;
  }
  for (uint32_t n = 0; n < s->nn; n++) {
    cu_op *o = &s->op[n];
    uint32_t np;
    uint32_t prev;
    const uint32_t *pr = waits(s, n, &np, &prev);
    int pick = -1, lru = -1;
    unsigned ondev = 0;
    for (uint32_t i = 0; i < np && pick < 0; i++) {
      int t = s->op[pr[i]].stream;
      if (s->stream_dev[t] == o->phys && tail[t] == pr[i])
        pick = t;
    }
    for (unsigned t = 0; t < s->nstreams && pick < 0; t++) {
      if (s->stream_dev[t] != o->phys)
        continue;
      ondev++;
      if (lru < 0 || tail[t] < tail[lru])
        lru = (int)t;
    }
    if (pick < 0 && lru >= 0 &&
        (s->mode == CU_SERIAL || ondev >= CU_MAX_STREAMS))
      pick = lru;
    if (pick < 0) {
      pick = (int)s->nstreams++;
      s->stream_dev[pick] = o->phys;
    }
    o->stream = pick;
    tail[pick] = n;
    for (uint32_t i = 0; i < np; i++)
      if (s->op[pr[i]].stream != pick)
        s->op[pr[i]].need_event = true;
  }
  free(tail);
  cudaSetDevice(s->phys0);
  cudaError_t e = cudaEventCreateWithFlags(&s->fork, cudaEventDisableTiming);
  if (e == cudaSuccess && !s->aux)
    e = cudaStreamCreateWithFlags(&s->aux, cudaStreamNonBlocking);
  for (unsigned t = 0; t < s->nstreams && e == cudaSuccess; t++) {
    e = cudaSetDevice(s->stream_dev[t]);
    if (e == cudaSuccess)
      e = cudaStreamCreateWithFlags(&s->streams[t], cudaStreamNonBlocking);
    if (e == cudaSuccess)
      e = cudaEventCreateWithFlags(&s->join[t], cudaEventDisableTiming);
  }
  for (uint32_t n = 0; n < s->nn && e == cudaSuccess; n++) {
    if (!s->op[n].need_event)
      continue;
    e = cudaSetDevice(s->stream_dev[s->op[n].stream]);
    if (e == cudaSuccess)
      e = cudaEventCreateWithFlags(&s->op[n].done, cudaEventDisableTiming);
  }
  cudaSetDevice(s->phys0);
  return e ? rp__cu_fail(s, e, RP_NONE, "creating streams") : RP_OK;
}

void rp__cu_streams_free(cu_state *s) {
  for (unsigned t = 0; t < s->nstreams; t++) {
    if (s->streams[t]) {
      cudaStreamSynchronize(s->streams[t]);
      cudaStreamDestroy(s->streams[t]);
    }
    if (s->join[t])
      cudaEventDestroy(s->join[t]);
  }
  for (uint32_t n = 0; s->op && n < s->nn; n++)
    if (s->op[n].done)
      cudaEventDestroy(s->op[n].done);
  if (s->fork)
    cudaEventDestroy(s->fork);
  if (s->aux) {
    cudaStreamSynchronize(s->aux);
    cudaStreamDestroy(s->aux);
  }
  free(s->streams);
  free(s->stream_dev);
  free(s->join);
}

/* Enqueues op n on stream st. */
rp_status rp__cu_issue(cu_state *s, uint32_t n, cudaStream_t st) {
  cu_op *o = &s->op[n];
  cudaError_t e = cudaSuccess;
  if (s->multi)
    e = cudaSetDevice(o->phys);
  if (e != cudaSuccess)
    return rp__cu_fail(s, e, n, "selecting the device");
  if (o->kind == CU_KERNEL && o->k->cuda) {
    rp_kargs tmp;
    void *args[1] = {rp__cu_byval(o, &s->kargs[n], &tmp)};
    e = cudaLaunchKernel(o->fn, o->grid, o->block, args, 0, st);
    return e ? rp__cu_fail(s, e, n, "launch") : RP_OK;
  }
  if (o->kind == CU_KERNEL) {
    int rc = o->k->cuda_host(&s->kargs[n], st);
    e = cudaGetLastError();
    if (rc != 0 || e != cudaSuccess)
      return rp__cu_fail(s, e ? e : cudaErrorLaunchFailure, n, "launch");
    return RP_OK;
  }
  if (o->kind != CU_MEMCPY) {
    e = cudaLaunchHostFunc(st, rp__cu_host_tramp, &o->host);
    return e ? rp__cu_fail(s, e, n, "host task") : RP_OK;
  }
  for (unsigned i = 0; i < o->cp.npc && e == cudaSuccess; i++) {
    cu_piece *p = &o->cp.pc[i];
    e = p->is3d
            ? cudaMemcpy3DAsync(&p->p3, st)
            : cudaMemcpyAsync(p->dst, p->src, p->bytes, cudaMemcpyDefault, st);
  }
  return e ? rp__cu_fail(s, e, n, "copy") : RP_OK;
}

/* One iteration: fork from the main stream, ops in program order with an
 * event wait for each edge crossing streams, join back. */
static rp_status issue_once(cu_state *s) {
  rp_status st = RP_OK;
  cudaError_t e = cudaEventRecord(s->fork, s->main);
  for (unsigned t = 0; t < s->nstreams && e == cudaSuccess; t++)
    e = cudaStreamWaitEvent(s->streams[t], s->fork, 0);
  if (e != cudaSuccess)
    return rp__cu_fail(s, e, RP_NONE, "forking streams");
  for (uint32_t n = 0; n < s->nn && st == RP_OK; n++) {
    cu_op *o = &s->op[n];
    cudaStream_t sn = s->streams[o->stream];
    uint32_t np;
    uint32_t prev;
    const uint32_t *pr = waits(s, n, &np, &prev);
    for (uint32_t i = 0; i < np && e == cudaSuccess; i++)
      if (s->op[pr[i]].stream != o->stream)
        e = cudaStreamWaitEvent(sn, s->op[pr[i]].done, 0);
    if (e != cudaSuccess)
      st = rp__cu_fail(s, e, n, "waiting for the predecessors");
    if (st == RP_OK)
      st = rp__cu_issue(s, n, sn);
    if (st == RP_OK && o->need_event &&
        (e = cudaEventRecord(o->done, sn)) != cudaSuccess)
      st = rp__cu_fail(s, e, n, "recording the completion");
  }
  /* Each user buffer's event once its host writers are done, on a stream
   * of its own so that no work waits for it. */
  const rp_plan *p = s->p;
  if (s->multi)
    cudaSetDevice(s->phys0);
  for (rp_buf b = 0; b < s->nb && st == RP_OK && e == cudaSuccess; b++) {
    if (!s->bev[b])
      continue;
    for (uint32_t i = p->hw_off[b]; i < p->hw_off[b + 1] && !e; i++)
      e = cudaStreamWaitEvent(s->aux, s->op[p->host_writers[i]].done, 0);
    if (e == cudaSuccess)
      e = cudaEventRecord(s->bev[b], s->aux);
    if (e != cudaSuccess)
      st = rp__cu_fail(s, e, RP_NONE, "recording a buffer's event");
  }
  /* Join even after a failure, so that waiting covers what was issued. */
  if (s->multi)
    cudaSetDevice(s->phys0);
  for (unsigned t = 0; t < s->nstreams; t++) {
    cudaEventRecord(s->join[t], s->streams[t]);
    cudaStreamWaitEvent(s->main, s->join[t], 0);
  }
  if (s->multi)
    cudaSetDevice(s->phys0);
  return st;
}

rp_status rp__cu_streams_launch(cu_state *s, unsigned iterations) {
  rp_status st = RP_OK;
  nvtxRangePushA(s->mode == CU_SERIAL ? "reprise cuda serial"
                                      : "reprise cuda streams");
  for (unsigned i = 0; i < iterations && st == RP_OK; i++)
    st = issue_once(s);
  nvtxRangePop();
  if (st != RP_OK) /* stop cleanly: nothing left in flight */
    cudaStreamSynchronize(s->main);
  return st;
}

/* One run in program order on one stream per device, events around each
 * op: each op's cost alone, as the analysis models it. */
rp_status rp__cu_profile(void *state, double *op_us) {
  cu_state *s = state;
  rp_status st = RP_OK;
  if (s->nn == 0)
    return RP_OK;
  s->failed = 0;
  if (s->main)
    cudaStreamSynchronize(s->main);
  rp__cu_flush(s);
  int ndevs = 0;
  cudaGetDeviceCount(&ndevs);
  cudaStream_t *ps = calloc((size_t)ndevs, sizeof *ps);
  cudaEvent_t *ev = calloc(2 * (size_t)s->nn, sizeof *ev);
  cudaError_t e = ps && ev ? cudaSuccess : cudaErrorMemoryAllocation;
  for (uint32_t n = 0; n < s->nn && e == cudaSuccess && st == RP_OK; n++) {
    int d = s->op[n].phys;
    e = cudaSetDevice(d);
    if (e == cudaSuccess && !ps[d])
      e = cudaStreamCreateWithFlags(&ps[d], cudaStreamNonBlocking);
    if (e == cudaSuccess)
      e = cudaEventCreate(&ev[2 * n]);
    if (e == cudaSuccess)
      e = cudaEventCreate(&ev[2 * n + 1]);
    if (e == cudaSuccess && n > 0 && s->op[n - 1].phys != d)
      e = cudaStreamWaitEvent(ps[d], ev[2 * n - 1], 0);
    if (e == cudaSuccess)
      e = cudaEventRecord(ev[2 * n], ps[d]);
    if (e == cudaSuccess)
      st = rp__cu_issue(s, n, ps[d]);
    if (e == cudaSuccess && st == RP_OK)
      e = cudaEventRecord(ev[2 * n + 1], ps[d]);
  }
  for (int d = 0; ps && d < ndevs; d++)
    if (ps[d]) {
      cudaError_t e2 = cudaStreamSynchronize(ps[d]);
      if (e == cudaSuccess)
        e = e2;
      cudaStreamDestroy(ps[d]);
    }
  for (uint32_t n = 0; n < s->nn && e == cudaSuccess && st == RP_OK; n++) {
    float ms = 0;
    e = cudaEventElapsedTime(&ms, ev[2 * n], ev[2 * n + 1]);
    op_us[n] = ms * 1e3;
  }
  for (size_t i = 0; ev && i < 2 * (size_t)s->nn; i++)
    if (ev[i])
      cudaEventDestroy(ev[i]);
  free(ps);
  free(ev);
  cudaSetDevice(s->phys0);
  if (st == RP_OK && e != cudaSuccess)
    st = rp__cu_fail(s, e, RP_NONE, "profiled run");
  return st;
}

/* One replay issued as in streams mode (the streams following chains of
 * dependent nodes, an event per crossing edge), with a timing event
 * before and after each node: when each started and ended, from an event
 * recorded on the main stream before the fork. */
rp_status rp__cu_timeline(void *state, double *start_us, double *end_us) {
  cu_state *s = state;
  if (s->nn == 0)
    return RP_OK;
  cudaSetDevice(s->phys0);
  cudaStreamSynchronize(s->main);
  rp_status st = s->streams ? rp__cu_flush(s) : rp__cu_streams_init(s);
  if (st != RP_OK)
    return st;
  s->failed = 0;
  cudaEvent_t *ev = calloc(2 * (size_t)s->nn + 1, sizeof *ev);
  if (!ev)
    return RP_ENOMEM;
  cudaError_t e = cudaSuccess;
  for (size_t i = 0; i <= 2 * (size_t)s->nn && e == cudaSuccess; i++) {
    int d =
        i < 2 * (size_t)s->nn ? s->stream_dev[s->op[i / 2].stream] : s->phys0;
    e = cudaSetDevice(d);
    if (e == cudaSuccess)
      e = cudaEventCreate(&ev[i]);
  }
  cudaEvent_t t0 = ev[2 * (size_t)s->nn];
  cudaSetDevice(s->phys0);
  if (e == cudaSuccess)
    e = cudaEventRecord(t0, s->main);
  if (e == cudaSuccess)
    e = cudaEventRecord(s->fork, s->main);
  for (unsigned t = 0; t < s->nstreams && e == cudaSuccess; t++)
    e = cudaStreamWaitEvent(s->streams[t], s->fork, 0);
  for (uint32_t n = 0; n < s->nn && e == cudaSuccess && st == RP_OK; n++) {
    cu_op *o = &s->op[n];
    cudaStream_t sn = s->streams[o->stream];
    const rp_plan_node *nd = &s->p->node[n];
    for (uint32_t i = 0; i < nd->npred && e == cudaSuccess; i++) {
      uint32_t q = s->p->pred[nd->pred0 + i];
      if (s->op[q].stream != o->stream)
        e = cudaStreamWaitEvent(sn, ev[2 * (size_t)q + 1], 0);
    }
    /* A copy into an aliased image waits for the copy that brings its
     * bytes (rp_cuda.c, fold_images). */
    if (e == cudaSuccess && o->empty && s->op[o->also].stream != o->stream)
      e = cudaStreamWaitEvent(sn, ev[2 * (size_t)o->also + 1], 0);
    if (e == cudaSuccess)
      e = cudaEventRecord(ev[2 * (size_t)n], sn);
    if (e == cudaSuccess)
      st = rp__cu_issue(s, n, sn);
    if (e == cudaSuccess && st == RP_OK)
      e = cudaEventRecord(ev[2 * (size_t)n + 1], sn);
  }
  cudaSetDevice(s->phys0);
  for (unsigned t = 0; t < s->nstreams; t++) {
    cudaEventRecord(s->join[t], s->streams[t]);
    cudaStreamWaitEvent(s->main, s->join[t], 0);
  }
  cudaError_t e2 = cudaStreamSynchronize(s->main);
  if (e == cudaSuccess)
    e = e2;
  for (uint32_t n = 0; n < s->nn && e == cudaSuccess && st == RP_OK; n++) {
    float a = 0, b = 0;
    e = cudaEventElapsedTime(&a, t0, ev[2 * (size_t)n]);
    if (e == cudaSuccess)
      e = cudaEventElapsedTime(&b, t0, ev[2 * (size_t)n + 1]);
    start_us[n] = a * 1e3;
    end_us[n] = b * 1e3;
  }
  for (size_t i = 0; i <= 2 * (size_t)s->nn; i++)
    if (ev[i])
      cudaEventDestroy(ev[i]);
  free(ev);
  if (st == RP_OK && e != cudaSuccess)
    st = rp__cu_fail(s, e, RP_NONE, "timeline run");
  if (st == RP_OK && s->failed)
    st = rp_exec_fail_task(s->x, s->fnode, s->freplay, s->fcode, s->fmsg);
  return st;
}
