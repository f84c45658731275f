/* CUDA backend: rebinding buffers and scalars in the executable graph. */
#include <string.h>
#include "rp_cuda.h"

static void mark(cu_state *s, uint32_t n) {
  if (!s->op[n].dirty)
    s->ndirty++;
  s->op[n].dirty = true;
}

/* A new user array for b: the memcpy nodes reading or writing it follow
 * (host nodes look their arrays up when they run). */
rp_status rp__cu_rebind(void *state, rp_buf b) {
  cu_state *s = state;
  const rp_plan *p = s->p;
  if (s->main)
    cudaStreamSynchronize(s->main);
  rp__cu_unpin(s, b);
  rp__cu_pin(s, b);
  s->gen++;
  for (uint32_t n = 0; n < s->nn; n++) {
    if (s->op[n].kind != CU_MEMCPY)
      continue;
    const rp_plan_access *a = p->acc + p->node[n].acc0;
    bool uses = false;
    for (int k = 0; k < 2; k++)
      uses = uses || ((p->image[a[k].image].flags & RP_IMAGE_USER) &&
                      p->image[a[k].image].buf == b);
    if (!uses)
      continue;
    rp__cu_copy_params(s, n);
    mark(s, n);
  }
  return RP_OK;
}

/* Table entry e goes over at the next flush: the dirty span grows to it.
 * The last copy of the table may still read hargs (a profile or a
 * timeline flushed it without anyone waiting for the main stream): wait
 * for it before the first write of a batch of changes. */
static void table_touch(cu_state *s, uint32_t e) {
  if (s->tpending) {
    cudaStreamSynchronize(s->main);
    s->tpending = false;
  }
  if (s->tlo == s->thi) {
    s->tlo = e;
    s->thi = e + 1;
  } else {
    s->tlo = e < s->tlo ? e : s->tlo;
    s->thi = e + 1 > s->thi ? e + 1 : s->thi;
  }
}

/* Kernel node n moves to the argument table (cuda_update auto, its first
 * set_scalar): its entry gets its whole block, and at the next flush its
 * node takes the by-pointer entry with the entry's address, one CUDA
 * setter once (dirty); every later set_scalar of it is a write of the
 * host table. The loop graph holds the node by value: it is built again
 * (gen). Without a table (its allocation failed), the node stays by value
 * and takes CUDA's setter per change. */
static void move_to_table(cu_state *s, uint32_t n) {
  cudaError_t err = rp__cu_table_alloc(s);
  if (err != cudaSuccess) {
    for (uint32_t v = 0; v < s->nn; v++)
      s->op[v].can_ind = false;
    (void)cudaGetLastError();
    rp_exec_set_notice(s->x,
                       "cuda: no argument table (%s): kernel nodes "
                       "take CUDA's setter per change",
                       cudaGetErrorString(err));
    return;
  }
  uint32_t e = s->slot[n];
  table_touch(s, e);
  s->hargs[e] = s->kargs[n];
  s->op[n].to_ind = true;
}

rp_status rp__cu_set_scalar(void *state, uint32_t n, unsigned param) {
  cu_state *s = state;
  if (n >= s->nn || param >= RP_MAX_PARAMS)
    return RP_EINVAL;
  cu_op *o = &s->op[n];
  if (o->kind != CU_KERNEL)
    return RP_OK; /* host kernels read the argument block when they run */
  const rp_kargs *t = rp_exec_args(s->x, s->p->node[n].op);
  if (!t)
    return RP_EINVAL;
  s->kargs[n].a[param] = t->a[param];
  if (o->ind || o->to_ind) {
    /* The table's entry: the graphs (the loop's too) read it from device
     * memory, so no node changes; the dirty entries go over in one copy
     * before the next launch (rp__cu_flush). */
    uint32_t e = s->slot[n];
    table_touch(s, e);
    s->hargs[e].a[param] = t->a[param];
    return RP_OK;
  }
  if (o->can_ind)
    move_to_table(s, n); /* else its node stays by value */
  s->gen++;              /* the loop graph holds the node as it was */
  mark(s, n);
  return RP_OK;
}

/* The table's dirty entries to the device, on the main stream: before any
 * graph launched after it (the host table is not written again before
 * they are done: set_scalar waits for launched runs). */
static rp_status flush_table(cu_state *s) {
  if (s->tlo == s->thi)
    return RP_OK;
  cudaError_t e = cudaMemcpyAsync(s->dargs + s->tlo, s->hargs + s->tlo,
                                  sizeof *s->hargs * (s->thi - s->tlo),
                                  cudaMemcpyHostToDevice, s->main);
  if (e != cudaSuccess)
    return rp__cu_fail(s, e, RP_NONE, "copying the argument table");
  s->tlo = s->thi = 0;
  s->tpending = true;
  return RP_OK;
}

/* Sets op n's parameters on the executable graph (tmpl false) or on the
 * template graph (tmpl true). */
static cudaError_t set_node(cu_state *s, uint32_t n, bool tmpl) {
  cu_op *o = &s->op[n];
  cudaError_t e = cudaSuccess;
  if (o->kind == CU_KERNEL && o->k->cuda) {
    /* By value, or the table's entry (its address the one parameter). */
    bool ind = o->ind || o->to_ind;
    rp_kargs tmp;
    void *ent = ind ? (void *)&s->dargs[s->slot[n]] : NULL;
    void *args[1] = {ind ? (void *)&ent : rp__cu_byval(o, &s->kargs[n], &tmp)};
    const void *fn = ind ? o->k->cuda_args->cuda_args : o->fn;
    struct cudaKernelNodeParams kp = {(void *)fn, o->grid, o->block,
                                      0,          args,    NULL};
    return tmpl ? cudaGraphKernelNodeSetParams(o->node[0], &kp)
                : cudaGraphExecKernelNodeSetParams(s->exec, o->node[0], &kp);
  }
  if (o->kind == CU_KERNEL) {
    cudaGraph_t child;
    if (tmpl)
      return cudaErrorNotSupported;
    e = rp__cu_capture(s, n, &child);
    if (e == cudaSuccess) {
      e = cudaGraphExecChildGraphNodeSetParams(s->exec, o->node[0], child);
      cudaGraphDestroy(child);
    }
    return e;
  }
  for (unsigned i = 0; i < o->cp.npc && e == cudaSuccess; i++) {
    cu_piece *p = &o->cp.pc[i];
    if (p->is3d)
      e = tmpl ? cudaGraphMemcpyNodeSetParams(o->node[i], &p->p3)
               : cudaGraphExecMemcpyNodeSetParams(s->exec, o->node[i], &p->p3);
    else if (tmpl)
      e = cudaGraphMemcpyNodeSetParams1D(o->node[i], p->dst, p->src, p->bytes,
                                         cudaMemcpyDefault);
    else
      e = cudaGraphExecMemcpyNodeSetParams1D(
          s->exec, o->node[i], p->dst, p->src, p->bytes, cudaMemcpyDefault);
  }
  return e;
}

/* Whole-graph update: bring the template up to date, then one
 * cudaGraphExecUpdate. Cheaper per node than the setters when many nodes
 * changed (measured on the H200: 0.27 against 0.88 us per node). */
static cudaError_t flush_whole(cu_state *s) {
  cudaError_t e = cudaSuccess;
  for (uint32_t n = 0; n < s->nn && e == cudaSuccess; n++)
    if (s->op[n].dirty || s->op[n].stale)
      e = set_node(s, n, true);
  if (e != cudaSuccess)
    return e;
  cudaGraphExecUpdateResultInfo info;
  e = cudaGraphExecUpdate(s->exec, s->graph, &info);
  if (e == cudaSuccess)
    for (uint32_t n = 0; n < s->nn; n++)
      s->op[n].stale = false;
  return e;
}

/* The executable graph again from the template, once every changed node
 * is in it: for what no in-place update takes (a 3-d memcpy's operands,
 * host memory of another kind than at instantiation), at the cost of an
 * instantiation. A captured host wrapper cannot be set in the template:
 * the new exec gets it set in place. */
static cudaError_t reinstantiate(cu_state *s) {
  (void)cudaGetLastError();
  cudaError_t e = cudaSuccess;
  for (uint32_t n = 0; n < s->nn && e == cudaSuccess; n++) {
    cu_op *o = &s->op[n];
    bool child = o->kind == CU_KERNEL && !o->k->cuda;
    if ((o->dirty || o->stale) && !child)
      e = set_node(s, n, true);
  }
  if (e != cudaSuccess)
    return e;
  cudaGraphExec_t nx;
  cudaSetDevice(s->phys0);
  e = cudaGraphInstantiate(&nx, s->graph, 0);
  if (e != cudaSuccess)
    return e;
  cudaGraphExecDestroy(s->exec);
  s->exec = nx;
  for (uint32_t n = 0; n < s->nn && e == cudaSuccess; n++) {
    cu_op *o = &s->op[n];
    bool child = o->kind == CU_KERNEL && !o->k->cuda;
    if (child && (o->dirty || o->stale))
      e = set_node(s, n, false);
    else
      o->stale = false;
  }
  return e;
}

/* Whether the changed nodes reach the exec through one whole-graph
 * update (template setters, then one cudaGraphExecUpdate) rather than
 * CUDA's setter per node on the exec. "node" and "graph" say which;
 * otherwise by count: cudaGraphExecUpdate's cost follows the whole graph,
 * the setters' the nodes that changed, so the whole-graph path when at
 * least RP_CU_WHOLE_MIN nodes and half of the graph's changed (a rebind
 * behind many copies as recorded). Not with captured child graphs, whose
 * template nodes cannot be set. */
static bool whole_chosen(const cu_state *s) {
  if (s->has_child || s->update == CU_UPD_NODE)
    return false;
  return s->update == CU_UPD_WHOLE ||
         (s->ndirty >= RP_CU_WHOLE_MIN && 2 * (uint64_t)s->ndirty >= s->nn);
}

rp_status rp__cu_flush(cu_state *s) {
  rp_status ts = flush_table(s);
  if (ts != RP_OK)
    return ts;
  if (s->ndirty == 0 || !s->exec)
    return RP_OK;
  bool whole = whole_chosen(s);
  cudaError_t e = cudaErrorUnknown;
  if (whole)
    e = flush_whole(s);
  uint32_t bad = RP_NONE;
  if (!whole || e != cudaSuccess) {
    (void)cudaGetLastError();
    e = cudaSuccess;
    for (uint32_t n = 0; n < s->nn && e == cudaSuccess; n++)
      if (s->op[n].dirty) {
        e = set_node(s, n, false);
        s->op[n].stale = true;
        bad = n;
      }
  }
  if (e != cudaSuccess) {
    cudaError_t refused = e;
    if ((e = reinstantiate(s)) == cudaSuccess) {
      bad = RP_NONE;
      s->reinstantiated++;
      rp_exec_set_notice(s->x,
                         "cuda: the update was refused (%s): "
                         "the graph was instantiated again",
                         cudaGetErrorString(refused));
    }
  }
  if (e != cudaSuccess)
    return rp__cu_fail(s, e, bad, "updating the graph node");
  for (uint32_t n = 0; n < s->nn; n++) {
    cu_op *o = &s->op[n];
    o->dirty = false;
    if (o->to_ind) {
      o->ind = true;
      o->to_ind = false;
    }
  }
  s->ndirty = 0;
  return RP_OK;
}
