/* CUDA backend for reprise replay: a CUDA graph built once, replayed. */
#include <stdlib.h>
#include <string.h>
#include "rp_cuda.h"

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

rp_status rp__cu_fail(cu_state *s, cudaError_t e, rp_node n,
                      const char *what) {
  (void)cudaGetLastError(); /* clear a non-sticky error */
  if (n == RP_NONE) {
    rp_exec_set_error(s->x, "cuda: %s: %s", what, cudaGetErrorString(e));
  } else {
    rp_node_info ni;
    rp_node_info_get(s->g, n, &ni);
    rp_exec_set_error(s->x, "cuda: %s of op %u \"%s\": %s", what, n, ni.name,
                      cudaGetErrorString(e));
  }
  return RP_EBACKEND;
}

static rp_status cu_probe(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();
    return RP_ENODEV;
  }
  return RP_OK;
}

void CUDART_CB rp__cu_host_tramp(void *p) {
  cu_host *h = p;
  h->fn(h->user, h->ptrs);
}

/* Pins buffer b's current host image; memory already registered (by the
 * user or as part of another buffer) or not registrable stays as it is:
 * copies then still work, only less asynchronously. */
void rp__cu_pin(cu_state *s, rp_buf b) {
  rp_buffer_desc d;
  s->pinned[b] = false;
  if (!s->host[b] || rp_buffer_info(s->g, b, &d) != RP_OK)
    return;
  struct cudaPointerAttributes pa;
  if (cudaPointerGetAttributes(&pa, s->host[b]) == cudaSuccess &&
      pa.type != cudaMemoryTypeUnregistered)
    return;
  (void)cudaGetLastError();
  if (cudaHostRegister(s->host[b], d.bytes, cudaHostRegisterPortable) ==
      cudaSuccess)
    s->pinned[b] = true;
  else
    (void)cudaGetLastError();
}

void rp__cu_unpin(cu_state *s, rp_buf b) {
  if (s->pinned[b])
    cudaHostUnregister(s->host[b]);
  s->pinned[b] = false;
}

static void *dimg(cu_state *s, rp_buf b, int ldev) {
  return s->dimg[(size_t)b * s->ndev + (unsigned)ldev];
}

/* Fills one copy piece for region r of buffer d from src to dst (both
 * images laid out as the buffer). A box whose rows are whole is one
 * contiguous range; other boxes are a 3-d pitched copy. */
static void piece(cu_copy *c, unsigned i, const rp_region *r,
                  const rp_buffer_desc *d, char *dst, char *src) {
  cu_piece *p = &c->pc[i];
  memset(p, 0, sizeof *p);
  uint64_t off = r->offset, len = r->bytes;
  if (r->kind == RP_REGION_WHOLE) {
    off = 0;
    len = d->bytes;
  }
  if (r->kind == RP_REGION_BOX) {
    unsigned nd = d->ndims ? d->ndims : 1;
    uint64_t el = d->elem ? d->elem : 1, row = d->dims[nd - 1] * el;
    bool whole = true;
    for (unsigned k = 1; k < nd; k++)
      whole = whole && r->lo[k] == 0 && r->hi[k] == d->dims[k];
    if (nd == 1 || whole) {
      uint64_t stride = d->bytes / d->dims[0];
      off = r->lo[0] * stride;
      len = (r->hi[0] - r->lo[0]) * stride;
    } else {
      p->is3d = true;
      struct cudaMemcpy3DParms *q = &p->p3;
      size_t ysz = nd == 3 ? d->dims[1] : d->dims[0];
      q->srcPtr = make_cudaPitchedPtr(src, row, row, ysz);
      q->dstPtr = make_cudaPitchedPtr(dst, row, row, ysz);
      unsigned xd = nd - 1;
      q->srcPos = make_cudaPos(r->lo[xd] * el, r->lo[xd - 1],
                               nd == 3 ? r->lo[0] : 0);
      q->dstPos = q->srcPos;
      q->extent = make_cudaExtent((r->hi[xd] - r->lo[xd]) * el,
                                  r->hi[xd - 1] - r->lo[xd - 1],
                                  nd == 3 ? r->hi[0] - r->lo[0] : 1);
      q->kind = cudaMemcpyDefault;
      return;
    }
  }
  p->dst = dst + off;
  p->src = src + off;
  p->bytes = len;
}

void rp__cu_copy_params(cu_state *s, rp_node n) {
  cu_op *o = &s->op[n];
  rp_access_info ai;
  rp_buffer_desc d;
  rp_node_access(s->g, n, 0, &ai);
  rp_buffer_info(s->g, ai.region.buf, &d);
  rp_buf b = ai.region.buf;
  char *src, *dst;
  rp_node_info ni;
  rp_node_info_get(s->g, n, &ni);
  if (o->type == RP_OP_COPY_H2D) {
    src = s->host[b];
    dst = dimg(s, b, ni.device);
  } else if (o->type == RP_OP_COPY_D2H) {
    src = dimg(s, b, ni.device);
    dst = s->host[b];
  } else {
    src = dimg(s, b, ni.device);
    dst = dimg(s, b, ni.dst_device);
  }
  if (o->cp.stage) {
    piece(&o->cp, 0, &ai.region, &d, o->cp.stage, src);
    piece(&o->cp, 1, &ai.region, &d, dst, o->cp.stage);
    o->cp.npc = 2;
  } else {
    piece(&o->cp, 0, &ai.region, &d, dst, src);
    o->cp.npc = 1;
  }
}

void rp__cu_host_ptrs(cu_state *s, rp_node n) {
  cu_op *o = &s->op[n];
  for (unsigned i = 0; i < o->host.n; i++) {
    rp_access_info ai;
    rp_node_access(s->g, n, i, &ai);
    o->host.ptrs[i] = s->host[ai.region.buf];
  }
}

/* Logical devices map onto physical ones: the user's map, else the
 * identity when there are enough GPUs, else everything onto GPU 0. */
static rp_status map_devices(cu_state *s, const rp_exec_opts *eo) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count <= 0)
    return e != cudaSuccess ? rp__cu_fail(s, e, RP_NONE, "device count")
                            : RP_ENODEV;
  unsigned nd = s->ndev ? s->ndev : 1;
  s->phys = calloc(nd, sizeof *s->phys);
  if (!s->phys)
    return RP_ENOMEM;
  for (unsigned i = 0; i < nd; i++) {
    int p = (int)i < count ? (int)i : 0;
    if ((unsigned)count < nd)
      p = 0;
    if (eo->device_map) {
      if (i >= eo->ndevice_map) {
        rp_exec_set_error(s->x, "cuda: device_map has %u entries, the "
                          "graph uses %u devices", eo->ndevice_map, nd);
        return RP_EINVAL;
      }
      p = eo->device_map[i];
      if (p < 0 || p >= count) {
        rp_exec_set_error(s->x, "cuda: device_map[%u] = %d, but %d GPU(s)",
                          i, p, count);
        return RP_EINVAL;
      }
    }
    s->phys[i] = p;
    if (p != s->phys[0])
      s->multi = true;
  }
  s->phys0 = s->phys[0];
  return RP_OK;
}

static rp_status alloc_images(cu_state *s) {
  s->dimg = calloc((size_t)s->nb * (s->ndev ? s->ndev : 1), sizeof(void *));
  s->host = calloc(s->nb ? s->nb : 1, sizeof(void *));
  s->pinned = calloc(s->nb ? s->nb : 1, sizeof(bool));
  if (!s->dimg || !s->host || !s->pinned)
    return RP_ENOMEM;
  void *const *h = rp_exec_host(s->x);
  for (rp_buf b = 0; b < s->nb; b++) {
    s->host[b] = h[b];
    rp__cu_pin(s, b);
  }
  for (rp_node n = 0; n < s->nn; n++) {
    rp_node_info ni;
    rp_node_info_get(s->g, n, &ni);
    for (unsigned i = 0; i < ni.naccess; i++) {
      rp_access_info ai;
      rp_node_access(s->g, n, i, &ai);
      if (ai.space < 0)
        continue;
      void **img = &s->dimg[(size_t)ai.region.buf * s->ndev + ai.space];
      if (*img)
        continue;
      rp_buffer_desc d;
      rp_buffer_info(s->g, ai.region.buf, &d);
      cudaError_t e = cudaSetDevice(s->phys[ai.space]);
      if (e == cudaSuccess)
        e = cudaMalloc(img, d.bytes);
      if (e == cudaSuccess)
        e = cudaMemset(*img, 0, d.bytes);
      if (e != cudaSuccess) {
        *img = NULL;
        rp_exec_set_error(s->x, "cuda: allocating %llu bytes of \"%s\" on "
                          "device %d: %s", (unsigned long long)d.bytes,
                          d.name, ai.space, cudaGetErrorString(e));
        (void)cudaGetLastError();
        return RP_EBACKEND;
      }
    }
  }
  return RP_OK;
}

static dim3 mkdim(unsigned x, unsigned y, unsigned z) {
  dim3 d = {x, y, z};
  return d;
}

/* Block shape from the index space's rank unless the kernel gives one. */
static void geometry(cu_op *o, const rp_kargs *a) {
  const unsigned *bk = o->k->block;
  if (bk[0] || bk[1] || bk[2])
    o->block = mkdim(bk[0] ? bk[0] : 1, bk[1] ? bk[1] : 1, bk[2] ? bk[2] : 1);
  else if (a->n[2] > 1)
    o->block = mkdim(32, 4, 4);
  else if (a->n[1] > 1)
    o->block = mkdim(32, 8, 1);
  else
    o->block = mkdim(256, 1, 1);
  uint64_t g[3], b[3] = {o->block.x, o->block.y, o->block.z};
  for (int i = 0; i < 3; i++) {
    g[i] = (a->n[i] + b[i] - 1) / b[i];
    if (g[i] > UINT32_MAX)
      g[i] = UINT32_MAX; /* the launch then fails and says so */
  }
  o->grid = mkdim((unsigned)g[0], (unsigned)g[1], (unsigned)g[2]);
}

static rp_status setup_ops(cu_state *s) {
  s->op = calloc(s->nn ? s->nn : 1, sizeof *s->op);
  s->kargs = calloc(s->nn ? s->nn : 1, sizeof *s->kargs);
  if (!s->op || !s->kargs)
    return RP_ENOMEM;
  for (rp_node n = 0; n < s->nn; n++) {
    cu_op *o = &s->op[n];
    rp_node_info ni;
    rp_node_info_get(s->g, n, &ni);
    o->type = ni.type;
    o->ldev = ni.device < 0 ? 0 : ni.device;
    o->phys = ni.type == RP_OP_HOST ? s->phys0 : s->phys[o->ldev];
    o->dst_phys = ni.type == RP_OP_COPY_D2D ? s->phys[ni.dst_device] : o->phys;
    if (ni.type == RP_OP_KERNEL) {
      const rp__op *ro = &s->g->op[n];
      o->k = ni.kernel;
      if (!o->k || (!o->k->cuda && !o->k->cuda_host)) {
        rp_exec_set_error(s->x, "cuda: kernel op %u \"%s\" has no CUDA "
                          "implementation", n, ni.name);
        return RP_ENOKERNEL;
      }
      s->kargs[n] = *rp_exec_args(s->x, n);
      for (unsigned i = 0; i < o->k->nparams; i++)
        if (o->k->params[i].mode != RP_SCALAR)
          s->kargs[n].a[i].p = dimg(s, s->g->args[ro->arg0 + i].region.buf,
                                    o->ldev);
      geometry(o, &s->kargs[n]);
    } else if (ni.type == RP_OP_HOST) {
      o->host.n = ni.naccess;
      o->host.ptrs = calloc(ni.naccess ? ni.naccess : 1, sizeof(void *));
      if (!o->host.ptrs)
        return RP_ENOMEM;
      rp_node_host_fn(s->g, n, &o->host.fn, &o->host.user);
      rp__cu_host_ptrs(s, n);
    } else {
      if (ni.type == RP_OP_COPY_D2D && o->phys != o->dst_phys) {
        int a = 0, b = 0;
        cudaDeviceCanAccessPeer(&a, o->dst_phys, o->phys);
        cudaDeviceCanAccessPeer(&b, o->phys, o->dst_phys);
        if (a && b) {
          cudaSetDevice(o->dst_phys);
          cudaDeviceEnablePeerAccess(o->phys, 0);
          cudaSetDevice(o->phys);
          cudaDeviceEnablePeerAccess(o->dst_phys, 0);
          (void)cudaGetLastError(); /* already enabled is fine */
        } else {
          rp_access_info ai;
          rp_buffer_desc d;
          rp_node_access(s->g, n, 0, &ai);
          rp_buffer_info(s->g, ai.region.buf, &d);
          cudaError_t e = cudaMallocHost(&o->cp.stage, d.bytes);
          if (e != cudaSuccess) {
            o->cp.stage = NULL;
            return rp__cu_fail(s, e, n, "staging buffer");
          }
        }
      }
      rp__cu_copy_params(s, n);
    }
  }
  return RP_OK;
}

/* Adds op n's node(s) to the graph after the last nodes of its preds. */
static rp_status add_node(cu_state *s, cudaGraph_t gr, rp_node n,
                          cudaGraphNode_t *deps) {
  cu_op *o = &s->op[n];
  uint32_t np;
  const rp_node *pr = rp_graph_preds(s->g, n, &np);
  for (uint32_t i = 0; i < np; i++) {
    cu_op *p = &s->op[pr[i]];
    deps[i] = p->node[p->cp.npc == 2];
  }
  cudaError_t e = s->multi ? cudaSetDevice(o->phys) : cudaSuccess;
  if (e != cudaSuccess)
    return rp__cu_fail(s, e, n, "selecting the device");
  if (o->type == RP_OP_KERNEL && o->k->cuda) {
    void *args[1] = {&s->kargs[n]};
    struct cudaKernelNodeParams kp = {(void *)o->k->cuda, o->grid, o->block,
                                      0, args, NULL};
    e = cudaGraphAddKernelNode(&o->node[0], gr, deps, np, &kp);
    return e ? rp__cu_fail(s, e, n, "adding kernel node") : RP_OK;
  }
  if (o->type == RP_OP_KERNEL) {
    cudaGraph_t child;
    e = rp__cu_capture(s, n, &child);
    if (e == cudaSuccess) {
      e = cudaGraphAddChildGraphNode(&o->node[0], gr, deps, np, child);
      cudaGraphDestroy(child);
    }
    s->has_child = true;
    return e ? rp__cu_fail(s, e, n, "capturing the host wrapper") : RP_OK;
  }
  if (o->type == RP_OP_HOST) {
    struct cudaHostNodeParams hp = {rp__cu_host_tramp, &o->host};
    e = cudaGraphAddHostNode(&o->node[0], gr, deps, np, &hp);
    return e ? rp__cu_fail(s, e, n, "adding host node") : RP_OK;
  }
  for (unsigned i = 0; i < o->cp.npc && e == cudaSuccess; i++) {
    cu_piece *p = &o->cp.pc[i];
    const cudaGraphNode_t *d = i ? &o->node[0] : deps;
    size_t nd = i ? 1 : np;
    if (p->is3d)
      e = cudaGraphAddMemcpyNode(&o->node[i], gr, d, nd, &p->p3);
    else
      e = cudaGraphAddMemcpyNode1D(&o->node[i], gr, d, nd, p->dst, p->src,
                                   p->bytes, cudaMemcpyDefault);
  }
  return e ? rp__cu_fail(s, e, n, "adding memcpy node") : RP_OK;
}

/* Captures a host wrapper's work on a scratch stream into a graph. */
cudaError_t rp__cu_capture(cu_state *s, rp_node n, cudaGraph_t *out) {
  cudaStream_t cs;
  *out = NULL;
  cudaError_t e = cudaSetDevice(s->op[n].phys);
  if (e == cudaSuccess)
    e = cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking);
  if (e != cudaSuccess)
    return e;
  e = cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal);
  int rc = e == cudaSuccess ? s->op[n].k->cuda_host(&s->kargs[n], cs) : 0;
  cudaError_t e2 = e == cudaSuccess ? cudaStreamEndCapture(cs, out)
                                    : cudaSuccess;
  cudaStreamDestroy(cs);
  if (e == cudaSuccess)
    e = e2;
  if (e == cudaSuccess && rc != 0) {
    cudaGraphDestroy(*out);
    *out = NULL;
    e = cudaErrorLaunchFailure;
  }
  return e;
}

/* Checks a kernel's launch shape against the device before it goes into a
 * graph, where a bad shape would only fail at replay, anonymously. */
static rp_status check_launch(cu_state *s, rp_node n) {
  cu_op *o = &s->op[n];
  cudaError_t e = cudaSuccess;
  /* Device limits and function attributes are looked up once, not per
   * node: cudaGetDeviceProperties alone costs more than a node. */
  if (s->lim_dev != o->phys) {
    static const enum cudaDeviceAttr at[6] = {
        cudaDevAttrMaxBlockDimX, cudaDevAttrMaxBlockDimY,
        cudaDevAttrMaxBlockDimZ, cudaDevAttrMaxGridDimX,
        cudaDevAttrMaxGridDimY, cudaDevAttrMaxGridDimZ};
    for (int i = 0; i < 6 && e == cudaSuccess; i++)
      e = cudaDeviceGetAttribute(&s->lim[i], at[i], o->phys);
    s->lim_dev = o->phys;
    s->lim_fn = NULL;
  }
  if (e == cudaSuccess && s->lim_fn != o->k->cuda) {
    struct cudaFuncAttributes fa;
    e = cudaFuncGetAttributes(&fa, o->k->cuda);
    s->lim_fn = o->k->cuda;
    s->lim_thr = fa.maxThreadsPerBlock;
  }
  if (e != cudaSuccess) {
    s->lim_dev = -1;
    return rp__cu_fail(s, e, n, "checking the kernel");
  }
  unsigned long long t = (unsigned long long)o->block.x * o->block.y *
                         o->block.z;
  bool ok = t <= (unsigned long long)s->lim_thr &&
            o->block.x <= (unsigned)s->lim[0] &&
            o->block.y <= (unsigned)s->lim[1] &&
            o->block.z <= (unsigned)s->lim[2] &&
            o->grid.x <= (unsigned)s->lim[3] &&
            o->grid.y <= (unsigned)s->lim[4] &&
            o->grid.z <= (unsigned)s->lim[5];
  return ok ? RP_OK : rp__cu_fail(s, cudaErrorInvalidConfiguration, n,
                                  "launch configuration");
}

static rp_status build_graph(cu_state *s) {
  cudaGraphNode_t *deps = malloc(sizeof *deps * (s->nn ? s->nn : 1));
  if (!deps)
    return RP_ENOMEM;
  cudaError_t e = cudaGraphCreate(&s->graph, 0);
  rp_status st = e ? rp__cu_fail(s, e, RP_NONE, "creating the graph") : 0;
  for (rp_node n = 0; n < s->nn && st == RP_OK; n++) {
    if (s->op[n].type == RP_OP_KERNEL && s->op[n].k->cuda)
      st = check_launch(s, n);
    if (st == RP_OK)
      st = add_node(s, s->graph, n, deps);
  }
  free(deps);
  if (st != RP_OK)
    return st;
  cudaSetDevice(s->phys0);
  e = cudaGraphInstantiate(&s->exec, s->graph, 0);
  if (e != cudaSuccess) {
    s->exec = NULL;
    return rp__cu_fail(s, e, RP_NONE, "instantiating the graph");
  }
  return RP_OK;
}

static void cu_destroy(void *state) {
  cu_state *s = state;
  if (!s)
    return;
  if (s->main)
    cudaStreamSynchronize(s->main);
  rp__cu_streams_free(s);
  if (s->exec)
    cudaGraphExecDestroy(s->exec);
  if (s->graph)
    cudaGraphDestroy(s->graph);
  if (s->main)
    cudaStreamDestroy(s->main);
  for (rp_node n = 0; s->op && n < s->nn; n++) {
    free(s->op[n].host.ptrs);
    if (s->op[n].cp.stage)
      cudaFreeHost(s->op[n].cp.stage);
  }
  for (size_t i = 0; s->dimg && i < (size_t)s->nb * s->ndev; i++)
    if (s->dimg[i])
      cudaFree(s->dimg[i]);
  for (rp_buf b = 0; s->pinned && b < s->nb; b++)
    rp__cu_unpin(s, b);
  (void)cudaGetLastError();
  free(s->op);
  free(s->kargs);
  free(s->dimg);
  free(s->host);
  free(s->pinned);
  free(s->phys);
  free(s);
}

static rp_status cu_instantiate(rp_exec *x, void **state) {
  *state = NULL;
  cu_state *s = calloc(1, sizeof *s);
  if (!s)
    return RP_ENOMEM;
  s->x = x;
  s->lim_dev = -1;
  s->g = rp_exec_graph(x);
  s->nn = rp_graph_num_nodes(s->g);
  s->nb = rp_graph_num_buffers(s->g);
  s->ndev = rp_graph_num_devices(s->g);
  if (s->ndev == 0)
    s->ndev = 1;
  const rp_exec_opts *eo = rp_exec_opts_get(x);
  const char *m = eo->mode;
  if (!m || !strcmp(m, "graph"))
    s->mode = CU_GRAPH;
  else if (!strcmp(m, "streams"))
    s->mode = CU_STREAMS;
  else if (!strcmp(m, "serial"))
    s->mode = CU_SERIAL;
  else {
    rp_exec_set_error(x, "cuda: unknown mode \"%s\" (graph, streams, "
                      "serial)", m);
    free(s);
    return RP_EINVAL;
  }
  const char *u = getenv("RP_CUDA_UPDATE");
  s->update = u && !strcmp(u, "node") ? 1 : u && !strcmp(u, "whole") ? 2 : 0;
  rp_status st = map_devices(s, eo);
  cudaError_t e = cudaSuccess;
  if (st == RP_OK && (e = cudaSetDevice(s->phys0)) == cudaSuccess)
    e = cudaStreamCreateWithFlags(&s->main, cudaStreamNonBlocking);
  if (st == RP_OK && e != cudaSuccess)
    st = rp__cu_fail(s, e, RP_NONE, "creating the stream");
  if (st == RP_OK)
    st = alloc_images(s);
  if (st == RP_OK)
    st = setup_ops(s);
  if (st == RP_OK && s->nn > 0)
    st = s->mode == CU_GRAPH ? build_graph(s) : rp__cu_streams_init(s);
  for (unsigned d = 0; st == RP_OK && d < s->ndev; d++) {
    e = cudaSetDevice(s->phys[d]);
    if (e == cudaSuccess)
      e = cudaDeviceSynchronize(); /* the images' memsets */
    if (e != cudaSuccess)
      st = rp__cu_fail(s, e, RP_NONE, "initialising device images");
  }
  cudaSetDevice(s->phys ? s->phys0 : 0);
  if (st != RP_OK) {
    cu_destroy(s);
    return st;
  }
  *state = s;
  return RP_OK;
}

static rp_status cu_launch(void *state, unsigned iterations) {
  cu_state *s = state;
  if (s->nn == 0 || iterations == 0)
    return RP_OK;
  cudaSetDevice(s->phys0);
  if (s->mode != CU_GRAPH)
    return rp__cu_streams_launch(s, iterations);
  rp_status st = rp__cu_flush(s);
  if (st != RP_OK)
    return st;
  nvtxRangePushA("reprise cuda graph launch");
  for (unsigned i = 0; i < iterations; i++) {
    cudaError_t e = cudaGraphLaunch(s->exec, s->main);
    if (e != cudaSuccess) {
      nvtxRangePop();
      cudaStreamSynchronize(s->main);
      return rp__cu_fail(s, e, RP_NONE, "launching the graph");
    }
  }
  nvtxRangePop();
  return RP_OK;
}

static rp_status cu_wait(void *state) {
  cu_state *s = state;
  cudaError_t e = cudaStreamSynchronize(s->main);
  return e ? rp__cu_fail(s, e, RP_NONE, "replay") : RP_OK;
}

const rp_backend rp_backend_cuda = {
  .abi = RP_BACKEND_ABI,
  .name = "cuda",
  .priority = 20,
  .probe = cu_probe,
  .instantiate = cu_instantiate,
  .launch = cu_launch,
  .wait = cu_wait,
  .rebind = rp__cu_rebind,
  .set_scalar = rp__cu_set_scalar,
  .profile = rp__cu_profile,
  .destroy = cu_destroy,
};
