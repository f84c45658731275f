/* CUDA backend: rp_exec_run_until() on the device. The replay's nodes go
 * into the body of one conditional WHILE node, followed by a kernel that
 * counts the replay and tests the predicate (rp_cuda_cond.cu): one graph
 * launch runs every replay, with no host round trip between them. Needs
 * CUDA 12.4+ in the toolkit and the driver; a graph with nodes that a
 * conditional body cannot hold (host tasks, CPU-kind kernels, copies run
 * by the host) or on several GPUs is refused: the core then checks on the
 * host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rp_cuda.h"
#include "rp_cuda_cond.h"

void rp__cu_until_free(cu_state *s) {
  if (s->lexec)
    cudaGraphExecDestroy(s->lexec);
  if (s->lgraph)
    cudaGraphDestroy(s->lgraph);
  if (s->ldev)
    cudaFree(s->ldev);
  s->lexec = NULL;
  s->lgraph = NULL;
  s->ldev = NULL;
}

static rp_status refuse(cu_state *s, const char *why) {
  rp_exec_set_error(s->x, "cuda: run_until checks on the host: %s", why);
  return RP_ENOTSUP;
}

/* What keeps this exec's replay out of a conditional body, or NULL. */
static const char *unfit(const cu_state *s) {
  int drv = 0;
  if (!rp__cu_until_kernel())
    return "the CUDA toolkit it was built with has no conditional nodes "
           "(12.4+)";
  if (cudaDriverGetVersion(&drv) != cudaSuccess || drv < 12040)
    return "the driver has no conditional nodes (needs CUDA 12.4+)";
  if (s->mode != CU_GRAPH)
    return "not in graph mode";
  if (s->multi)
    return "the graph runs on several GPUs";
  for (uint32_t v = 0; v < s->nn; v++) {
    cu_kind k = s->op[v].kind;
    if (k == CU_CPU || k == CU_HOSTTASK || k == CU_HOSTCOPY)
      return "the replay has host nodes (host tasks, CPU-kind kernels or "
             "host-side copies), which a conditional body cannot hold";
  }
  return NULL;
}

/* A copy node v of the replay whose bytes move between host image h and
 * device image d: 1 in (h -> d), 2 out (d -> h), 0 not such a copy. */
static int copy_dir(const cu_state *s, uint32_t v, uint32_t *h, uint32_t *d) {
  const rp_plan *p = s->p;
  const rp_plan_node *nd = &p->node[v];
  const cu_op *o = &s->op[v];
  if (o->kind != CU_MEMCPY || o->cp.npc != 1 || nd->nacc != 2)
    return 0;
  const rp_plan_access *a = p->acc + nd->acc0;
  bool h0 = p->image[a[0].image].flags & RP_IMAGE_HOST_MEMORY;
  bool h1 = p->image[a[1].image].flags & RP_IMAGE_HOST_MEMORY;
  if (a[0].niv != 1 || a[1].niv != 1 || h0 == h1)
    return 0;
  *h = h0 ? a[0].image : a[1].image;
  *d = h0 ? a[1].image : a[0].image;
  return h0 ? 1 : 2;
}

/* Where each node goes in the loop graph (s->lwhere): the copies that
 * only carry a buffer between its host array and its device image at the
 * ends of the replay run once before the loop (1) or once after it (2)
 * instead of every pass (0, the body). For a host image h and a device
 * image d, with no other node touching h: every copy in (h -> d) has no
 * predecessor, every copy out (d -> h) no successor, and either the copies
 * out cover every byte copied in, or there is no copy out and only the
 * copies in write d. Then in every pass after the first a copy in rewrites
 * the bytes the last pass's copy out took from d, which nothing changed
 * since (a write after the copy out, or before the copy in, would be an
 * edge); and what the copies out leave in the host array is only read
 * after the loop (the predicate is then read in d: rp__cu_run_until). */
static rp_status classify(cu_state *s) {
  const rp_plan *p = s->p;
  free(s->lwhere);
  s->lwhere = calloc(s->nn + 1, 1);
  uint8_t *bad = calloc(p->nimage + 1, 1);
  if (!s->lwhere || !bad) {
    free(bad);
    return RP_ENOMEM;
  }
  /* A host image is out when a node other than a copy of the kinds above
   * touches it, or when its copies go to several device images. */
  uint32_t *dev = malloc(sizeof *dev * (p->nimage + 1));
  if (!dev) {
    free(bad);
    return RP_ENOMEM;
  }
  for (uint32_t i = 0; i < p->nimage; i++)
    dev[i] = RP_NONE;
  for (uint32_t v = 0; v < s->nn; v++) {
    const rp_plan_node *nd = &p->node[v];
    uint32_t h, d;
    int dir = copy_dir(s, v, &h, &d);
    bool ok = dir == 1 ? nd->npred == 0 : dir == 2 ? nd->nsucc == 0 : false;
    if (dir && ok && (dev[h] == RP_NONE || dev[h] == d)) {
      dev[h] = d;
      continue;
    }
    if (dir)
      bad[h] = 1;
    for (uint32_t k = 0; k < nd->nacc; k++) {
      uint32_t im = p->acc[nd->acc0 + k].image;
      if (im != RP_NONE && (p->image[im].flags & RP_IMAGE_HOST_MEMORY))
        bad[im] = 1;
    }
  }
  /* Per host image: the copies in covered by the union of the copies out,
   * or no copy out and nothing but the copies in writing d. */
  for (uint32_t h = 0; h < p->nimage; h++) {
    if (bad[h] || dev[h] == RP_NONE)
      continue;
    uint32_t d = dev[h];
    bool outs = false, others_write = false, covered = true;
    for (uint32_t v = 0; v < s->nn; v++) {
      uint32_t hh, dd;
      int dir = copy_dir(s, v, &hh, &dd);
      if (dir == 2 && hh == h)
        outs = true;
      if (dir == 1 && hh == h)
        continue;
      const rp_plan_node *nd = &p->node[v];
      for (uint32_t k = 0; k < nd->nacc; k++) {
        const rp_plan_access *a = &p->acc[nd->acc0 + k];
        if (a->image == d && (a->mode & RP_OUT))
          others_write = true;
      }
    }
    for (uint32_t v = 0; v < s->nn && covered; v++) {
      uint32_t hh, dd;
      if (copy_dir(s, v, &hh, &dd) != 1 || hh != h)
        continue;
      const rp_plan_access *a = p->acc + p->node[v].acc0;
      uint64_t lo = a[1].offset, hi = lo + a[1].bytes;
      if (!outs) {
        covered = !others_write;
        continue;
      }
      /* The copies out cover [lo, hi): extend from lo while one covers. */
      for (bool grew = true; grew && lo < hi;) {
        grew = false;
        for (uint32_t u = 0; u < s->nn; u++) {
          uint32_t h2, d2;
          if (copy_dir(s, u, &h2, &d2) != 2 || h2 != h)
            continue;
          const rp_plan_access *b = p->acc + p->node[u].acc0;
          if (b[0].offset <= lo && b[0].offset + b[0].bytes > lo) {
            lo = b[0].offset + b[0].bytes;
            grew = true;
          }
        }
      }
      covered = lo >= hi;
    }
    if (!covered)
      continue;
    for (uint32_t v = 0; v < s->nn; v++) {
      uint32_t hh, dd;
      int dir = copy_dir(s, v, &hh, &dd);
      if (dir && hh == h)
        s->lwhere[v] = (uint8_t)dir;
    }
  }
  free(bad);
  free(dev);
  return RP_OK;
}

/* Adds copy v (one piece) to graph gr after the nodes deps. */
static cudaError_t add_copy(cu_state *s, cudaGraph_t gr, uint32_t v,
                            const cudaGraphNode_t *deps, size_t nd) {
  cu_op *o = &s->op[v];
  cu_piece *pc = &o->cp.pc[0];
  if (pc->is3d)
    return cudaGraphAddMemcpyNode(&o->node[0], gr, deps, nd, &pc->p3);
  return cudaGraphAddMemcpyNode1D(&o->node[0], gr, deps, nd, pc->dst, pc->src,
                                  pc->bytes, cudaMemcpyDefault);
}

/* The loop graph: [copies in] -> WHILE(handle) { replay; test } -> [copies
 * out] (classify). The op's node handles are the main graph's again
 * afterwards. */
static cudaError_t build_loop(cu_state *s) {
  cudaError_t e;
  if (classify(s) != RP_OK)
    return cudaErrorMemoryAllocation;
  cudaGraphNode_t *saved = malloc(sizeof *saved * 2 * (s->nn + 1));
  uint32_t maxd = 2;
  for (uint32_t v = 0; v < s->nn; v++)
    if (s->p->node[v].npred + 1 > maxd)
      maxd = s->p->node[v].npred + 1;
  if (maxd < s->nn)
    maxd = s->nn;
  cudaGraphNode_t *deps = malloc(sizeof *deps * maxd);
  if (!saved || !deps) {
    free(saved);
    free(deps);
    return cudaErrorMemoryAllocation;
  }
  for (uint32_t v = 0; v < s->nn; v++)
    memcpy(&saved[2 * v], s->op[v].node, sizeof s->op[v].node);
  if (!s->ldev && (e = cudaMalloc((void **)&s->ldev, sizeof *s->ldev)))
    goto out;
  if ((e = cudaGraphCreate(&s->lgraph, 0)))
    goto out;
  uint32_t npro = 0;
  for (uint32_t v = 0; v < s->nn && e == cudaSuccess; v++)
    if (s->lwhere[v] == 1 &&
        (e = add_copy(s, s->lgraph, v, NULL, 0)) == cudaSuccess)
      deps[npro++] = s->op[v].node[0];
  if (e)
    goto out;
  cudaGraphConditionalHandle h;
  if ((e = cudaGraphConditionalHandleCreate(&h, s->lgraph, 1,
                                            cudaGraphCondAssignDefault)))
    goto out;
  struct cudaGraphNodeParams np;
  memset(&np, 0, sizeof np);
  np.type = cudaGraphNodeTypeConditional;
  np.conditional.handle = h;
  np.conditional.type = cudaGraphCondTypeWhile;
  np.conditional.size = 1;
  cudaGraphNode_t cn;
#if CUDART_VERSION >= 13000
  e = cudaGraphAddNode(&cn, s->lgraph, npro ? deps : NULL, NULL, npro, &np);
#else
  e = cudaGraphAddNode(&cn, s->lgraph, npro ? deps : NULL, npro, &np);
#endif
  if (e)
    goto out;
  cudaGraph_t body = np.conditional.phGraph_out[0];
  /* The body: the nodes left in it, each after its predecessors there. */
  s->lskip = s->lwhere;
  for (uint32_t v = 0; v < s->nn; v++)
    if (!s->lwhere[v] && rp__cu_add_node(s, body, v, deps) != RP_OK) {
      s->lskip = NULL;
      e = cudaErrorNotSupported;
      goto out;
    }
  s->lskip = NULL;
  uint32_t nd = 0;
  for (uint32_t v = 0; v < s->nn; v++) {
    if (s->lwhere[v])
      continue;
    const rp_plan_node *pn = &s->p->node[v];
    bool sink = true;
    for (uint32_t i = 0; i < pn->nsucc && sink; i++)
      sink = s->lwhere[s->p->succ[pn->succ0 + i]] != 0;
    if (sink)
      deps[nd++] = s->op[v].node[s->op[v].cp.npc == 2];
  }
  void *args[2] = {&h, &s->ldev};
  struct cudaKernelNodeParams kp = {
      (void *)rp__cu_until_kernel(), {1, 1, 1}, {1, 1, 1}, 0, args, NULL};
  cudaGraphNode_t kn;
  if ((e = cudaGraphAddKernelNode(&kn, body, deps, nd, &kp)))
    goto out;
  for (uint32_t v = 0; v < s->nn && e == cudaSuccess; v++)
    if (s->lwhere[v] == 2)
      e = add_copy(s, s->lgraph, v, &cn, 1);
  if (e)
    goto out;
  e = cudaGraphInstantiate(&s->lexec, s->lgraph, 0);
  if (e)
    s->lexec = NULL;
out:
  for (uint32_t v = 0; v < s->nn; v++)
    memcpy(s->op[v].node, &saved[2 * v], sizeof s->op[v].node);
  free(saved);
  free(deps);
  return e;
}

rp_status rp__cu_run_until(void *state, const rp_until *u, unsigned max_replays,
                           unsigned check_every, unsigned *done) {
  cu_state *s = state;
  *done = 0;
  const char *why = unfit(s);
  if (why)
    return refuse(s, why);
  cudaSetDevice(s->phys0);
  rp_status st = rp__cu_flush(s);
  if (st != RP_OK)
    return st;
  if (s->lexec && s->lgen != s->gen)
    rp__cu_until_free(s);
  if (!s->lexec) {
    cudaError_t e = build_loop(s);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      rp__cu_until_free(s);
      char m[160];
      snprintf(m, sizeof m, "building the conditional loop failed (%s)",
               cudaGetErrorString(e));
      return refuse(s, m);
    }
    s->lgen = s->gen;
  }
  /* The predicate: in the device image when its copy home runs after the
   * loop (the value that copy would bring), else in the user's array
   * (mapped pinned memory, after the copy in the body). */
  void *val = NULL;
  uint64_t vsz = u->type == RP_UNTIL_F32 || u->type == RP_UNTIL_I32 ? 4 : 8;
  for (uint32_t v = 0; v < s->nn && !val; v++) {
    uint32_t h, d;
    if (s->lwhere[v] != 2 || copy_dir(s, v, &h, &d) != 2 ||
        s->p->image[h].buf != u->buf || !(s->p->image[h].flags & RP_IMAGE_USER))
      continue;
    const rp_plan_access *a = s->p->acc + s->p->node[v].acc0;
    if (a[0].offset <= u->offset && a[0].offset + a[0].bytes >= u->offset + vsz)
      val = (char *)s->img[d] + u->offset;
  }
  if (!val) {
    void *host = (char *)rp_exec_host(s->x)[u->buf] + u->offset;
    if (cudaHostGetDevicePointer(&val, host, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      return refuse(s, "the predicate's host array is not mapped pinned "
                       "memory");
    }
  }
  rp_cu_until_dev d = {val,
                       (int)u->type,
                       (int)u->cmp,
                       u->threshold,
                       max_replays,
                       0,
                       check_every ? check_every : 1};
  cudaError_t e =
      cudaMemcpyAsync(s->ldev, &d, sizeof d, cudaMemcpyHostToDevice, s->main);
  if (e == cudaSuccess)
    e = cudaGraphLaunch(s->lexec, s->main);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(&d, s->ldev, sizeof d, cudaMemcpyDeviceToHost, s->main);
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(s->main);
  s->tpending = false;
  if (e != cudaSuccess)
    return rp__cu_fail(s, e, RP_NONE, "running the conditional loop");
  *done = d.count;
  return RP_OK;
}
