/* A fake CUDA runtime on the host for tests/backends/cuda_logic.c (see
 * fake_cudart.h): only the calls backends/cuda makes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fake_cudart.h"
#include "rp_cuda_cond.h"

fk_counts fk;

void fk_reset(void) { memset(&fk, 0, sizeof fk); }

/* ---- kernels ---- */

typedef struct fk_entry {
  const void *fn;
  rp_cpu_fn cpu;
  int by_pointer;
  unsigned packed; /* fk_kernel_packed: parameters of its packed block */
  fk_raw_fn raw;   /* fk_kernel_raw: its parameters */
  unsigned nparam;
  size_t off[FK_MAX_PARAMS], size[FK_MAX_PARAMS];
  const char *name;
} fk_entry;

enum { FK_MAX_ENTRIES = 64 };
static fk_entry entries[FK_MAX_ENTRIES];
static unsigned nentries;

void fk_kernel(const void *fn, rp_cpu_fn cpu, int by_pointer) {
  for (unsigned i = 0; i < nentries; i++)
    if (entries[i].fn == fn) {
      entries[i].cpu = cpu;
      entries[i].by_pointer = by_pointer;
      entries[i].packed = 0;
      return;
    }
  if (nentries < FK_MAX_ENTRIES)
    entries[nentries++] = (fk_entry){fn, cpu, by_pointer};
}

void fk_kernel_packed(const void *fn, rp_cpu_fn cpu, unsigned np) {
  fk_kernel(fn, cpu, 0);
  for (unsigned i = 0; i < nentries; i++)
    if (entries[i].fn == fn)
      entries[i].packed = np;
}

/* Bytes of the one parameter of an rp_kargs entry. */
static size_t block_bytes(const fk_entry *en) {
  /* n[3], np slots, np regions, origin[3], whole[3] */
  return en->by_pointer ? sizeof(void *)
         : en->packed   ? 9 * sizeof(uint64_t) +
                            en->packed * (sizeof(rp_slot) + sizeof(rp_pregion))
                      : sizeof(rp_kargs);
}

void fk_kernel_pair(rp_kernel *k, const rp_kernel *base,
                    const rp_cuda_args *pair) {
  rp_kernel t = *base;
  t.cuda = pair->cuda;
  t.cuda_args = pair;
  fk_kernel(pair->cuda, base->cpu, 0);
  if (pair->cuda_args)
    fk_kernel(pair->cuda_args, base->cpu, 1);
  if (pair->cuda_packed)
    fk_kernel_packed(pair->cuda_packed, base->cpu, pair->packed_params);
  *k = t;
}

void fk_kernel_raw(const void *fn, const char *name, fk_raw_fn body,
                   unsigned nparam, const size_t *sizes) {
  if (nentries == FK_MAX_ENTRIES || nparam > FK_MAX_PARAMS)
    return;
  fk_entry *e = &entries[nentries++];
  memset(e, 0, sizeof *e);
  e->fn = fn;
  e->name = name;
  e->raw = body;
  e->nparam = nparam;
  size_t o = 0;
  for (unsigned i = 0; i < nparam; i++) {
    o = (o + sizes[i] - 1) / sizes[i] * sizes[i]; /* natural alignment */
    e->off[i] = o;
    e->size[i] = sizes[i];
    o += sizes[i];
  }
}

static const fk_entry *entry(const void *fn) {
  for (unsigned i = 0; i < nentries; i++)
    if (entries[i].fn == fn)
      return &entries[i];
  return NULL;
}

/* No conditional nodes here: run_until checks on the host. */
const void *rp__cu_until_kernel(void) { return NULL; }

/* ---- errors, devices ---- */

static cudaError_t last;
static int ndev = 1, cur;
static long live;

void fk_devices(int n) { ndev = n; }
long fk_live(void) { return live; }

static cudaError_t fail(cudaError_t e) {
  last = e;
  return e;
}

cudaError_t cudaGetLastError(void) {
  cudaError_t e = last;
  last = cudaSuccess;
  return e;
}

const char *cudaGetErrorString(cudaError_t error) {
  return error == cudaSuccess ? "no error" : "fake CUDA error";
}

cudaError_t cudaGetDeviceCount(int *count) {
  *count = ndev;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= ndev)
    return fail(cudaErrorInvalidDevice);
  cur = device;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

cudaError_t cudaDriverGetVersion(int *driverVersion) {
  *driverVersion = 12000;
  return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device,
                                    int peerDevice) {
  *canAccessPeer = device != peerDevice;
  return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
  (void)peerDevice, (void)flags;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr,
                                   int device) {
  (void)device;
  switch (attr) {
  case cudaDevAttrMaxThreadsPerMultiProcessor:
    *value = 2048;
    break;
  case cudaDevAttrMaxBlockDimX:
    *value = 1024;
    break;
  case cudaDevAttrMaxBlockDimY:
    *value = 1024;
    break;
  case cudaDevAttrMaxBlockDimZ:
    *value = 64;
    break;
  case cudaDevAttrMaxGridDimX:
    *value = 2147483647;
    break;
  case cudaDevAttrMaxGridDimY:
    *value = 65535;
    break;
  case cudaDevAttrMaxGridDimZ:
    *value = 65535;
    break;
  default:
    *value = 0;
    break;
  }
  return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr,
                                  const void *func) {
  if (!entry(func))
    return fail(cudaErrorInvalidDeviceFunction);
  memset(attr, 0, sizeof *attr);
  attr->maxThreadsPerBlock = 1024;
  attr->numRegs = 32;
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize) {
  (void)dynamicSMemSize;
  if (!entry(func) || blockSize <= 0)
    return fail(cudaErrorInvalidDeviceFunction);
  *numBlocks = 2048 / blockSize > 32 ? 32 : 2048 / blockSize;
  return cudaSuccess;
}

/* ---- memory ---- */

typedef struct fk_range {
  char *p;
  size_t n;
  int kind; /* 0 device, 1 pinned by cudaMallocHost, 2 registered */
} fk_range;

static fk_range *ranges;
static unsigned nranges, capranges;

static int add_range(void *p, size_t n, int kind) {
  if (nranges == capranges) {
    unsigned c = capranges ? 2 * capranges : 64;
    fk_range *r = realloc(ranges, c * sizeof *r);
    if (!r)
      return -1;
    ranges = r;
    capranges = c;
  }
  ranges[nranges++] = (fk_range){p, n, kind};
  live++;
  return 0;
}

static const fk_range *find_range(const void *p) {
  for (unsigned i = 0; i < nranges; i++)
    if ((const char *)p >= ranges[i].p &&
        (const char *)p < ranges[i].p + (ranges[i].n ? ranges[i].n : 1))
      return &ranges[i];
  return NULL;
}

/* Removes the range starting at p of kind k; 0 if there is none. */
static int drop_range(const void *p, int k) {
  for (unsigned i = 0; i < nranges; i++)
    if (ranges[i].p == p && ranges[i].kind == k) {
      ranges[i] = ranges[--nranges];
      live--;
      if (!nranges) {
        free(ranges);
        ranges = NULL;
        capranges = 0;
      }
      return 1;
    }
  return 0;
}

static size_t malloc_limit;

void fk_fail_malloc_from(size_t bytes) { malloc_limit = bytes; }

cudaError_t cudaMalloc(void **devPtr, size_t size) {
  if (malloc_limit && size >= malloc_limit)
    return fail(cudaErrorMemoryAllocation);
  void *p = malloc(size ? size : 1);
  if (!p || add_range(p, size, 0)) {
    free(p);
    return fail(cudaErrorMemoryAllocation);
  }
  memset(p, 0xa5, size); /* not zeroed, as on a GPU */
  fk.dev_malloc++;
  fk.dev_malloc_bytes += size;
  *devPtr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void *devPtr) {
  if (!devPtr)
    return cudaSuccess;
  if (!drop_range(devPtr, 0))
    return fail(cudaErrorInvalidValue);
  free(devPtr);
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void **ptr, size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p || add_range(p, size, 1)) {
    free(p);
    return fail(cudaErrorMemoryAllocation);
  }
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void *ptr) {
  if (!drop_range(ptr, 1))
    return fail(cudaErrorInvalidValue);
  free(ptr);
  return cudaSuccess;
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags) {
  (void)flags;
  if (find_range(ptr))
    return fail(cudaErrorHostMemoryAlreadyRegistered);
  return add_range(ptr, size, 2) ? fail(cudaErrorMemoryAllocation)
                                 : cudaSuccess;
}

cudaError_t cudaHostUnregister(void *ptr) {
  return drop_range(ptr, 2) ? cudaSuccess
                            : fail(cudaErrorHostMemoryNotRegistered);
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost,
                                     unsigned int flags) {
  (void)flags;
  const fk_range *r = find_range(pHost);
  if (!r || r->kind == 0)
    return fail(cudaErrorInvalidValue);
  *pDevice = pHost;
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
                                     const void *ptr) {
  const fk_range *r = find_range(ptr);
  memset(attributes, 0, sizeof *attributes);
  attributes->type = !r             ? cudaMemoryTypeUnregistered
                     : r->kind == 0 ? cudaMemoryTypeDevice
                                    : cudaMemoryTypeHost;
  attributes->device = cur;
  return cudaSuccess;
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count) {
  memset(devPtr, value, count);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                       enum cudaMemcpyKind kind) {
  (void)kind;
  memmove(dst, src, count);
  fk.memcpy_sync++;
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                            enum cudaMemcpyKind kind, cudaStream_t stream) {
  (void)kind, (void)stream;
  memmove(dst, src, count);
  fk.memcpy_async++;
  fk.memcpy_async_bytes += count;
  return cudaSuccess;
}

/* A pitched 3-d copy: extent.width bytes per row. */
static void copy3d(const struct cudaMemcpy3DParms *p) {
  for (size_t z = 0; z < p->extent.depth; z++)
    for (size_t y = 0; y < p->extent.height; y++) {
      const char *s = (const char *)p->srcPtr.ptr +
                      ((p->srcPos.z + z) * p->srcPtr.ysize + p->srcPos.y + y) *
                          p->srcPtr.pitch +
                      p->srcPos.x;
      char *d = (char *)p->dstPtr.ptr +
                ((p->dstPos.z + z) * p->dstPtr.ysize + p->dstPos.y + y) *
                    p->dstPtr.pitch +
                p->dstPos.x;
      memmove(d, s, p->extent.width);
    }
}

cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p,
                              cudaStream_t stream) {
  (void)stream;
  copy3d(p);
  return cudaSuccess;
}

/* ---- kernels run on the host ---- */

static void run_kernel(const void *fn, dim3 grid, dim3 block,
                       const void *param) {
  const fk_entry *en = entry(fn);
  if (en->raw) { /* param: the packed block */
    void *args[FK_MAX_PARAMS];
    for (unsigned i = 0; i < en->nparam; i++)
      args[i] = (char *)param + en->off[i];
    en->raw(args, grid, block);
    return;
  }
  rp_kargs a;
  if (en->by_pointer) {
    memcpy(&a, *(const rp_kargs *const *)param, sizeof a);
  } else if (en->packed) { /* the layout of rp_cuda_args.cuda_packed */
    const char *p = param;
    size_t np = en->packed;
    memset(&a, 0, sizeof a);
    memcpy(a.n, p, 24);
    memcpy(a.a, p + 24, np * sizeof(rp_slot));
    memcpy(a.r, p + 24 + np * sizeof(rp_slot), np * sizeof(rp_pregion));
    memcpy(a.origin, p + 24 + np * 56, 24);
    memcpy(a.whole, p + 48 + np * 56, 24);
  } else {
    memcpy(&a, param, sizeof a);
  }
  if ((uint64_t)grid.x * block.x < a.n[0] ||
      (uint64_t)grid.y * block.y < a.n[1] ||
      (uint64_t)grid.z * block.z < a.n[2])
    fk.bad_shape++;
  uint64_t lo[3] = {0, 0, 0};
  en->cpu(&a, lo, a.n);
}

/* ---- streams and events: work runs when it is issued ---- */

struct CUstream_st {
  int dev;
};
struct CUevent_st {
  int dev;
};

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream,
                                      unsigned int flags) {
  (void)flags;
  *pStream = malloc(sizeof **pStream);
  if (!*pStream)
    return fail(cudaErrorMemoryAllocation);
  (*pStream)->dev = cur;
  live++;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  free(stream);
  live--;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  (void)stream;
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                unsigned int flags) {
  (void)stream, (void)event, (void)flags;
  return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream,
                                   enum cudaStreamCaptureMode mode) {
  (void)stream, (void)mode;
  return fail(cudaErrorStreamCaptureUnsupported);
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph) {
  (void)stream;
  *pGraph = NULL;
  return fail(cudaErrorStreamCaptureUnsupported);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags) {
  (void)flags;
  *event = malloc(sizeof **event);
  if (!*event)
    return fail(cudaErrorMemoryAllocation);
  (*event)->dev = cur;
  live++;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event) {
  return cudaEventCreateWithFlags(event, 0);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  free(event);
  live--;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  (void)event, (void)stream;
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  (void)event;
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start,
                                 cudaEvent_t end) {
  (void)start, (void)end;
  *ms = 0.001f;
  return cudaSuccess;
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
                             void **args, size_t sharedMem,
                             cudaStream_t stream) {
  (void)sharedMem, (void)stream;
  if (!entry(func))
    return fail(cudaErrorInvalidDeviceFunction);
  fk.launch_kernel++;
  const fk_entry *en = entry(func);
  if (en->raw) {
    en->raw(args, gridDim, blockDim);
    return cudaSuccess;
  }
  run_kernel(func, gridDim, blockDim, args[0]);
  return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn,
                               void *userData) {
  (void)stream;
  fn(userData);
  return cudaSuccess;
}

/* ---- graphs ---- */

enum {
  FK_KERNEL,
  FK_COPY1,
  FK_COPY3,
  FK_HOST,
  FK_EMPTY,
  FK_EVENT,
  FK_MEMSET,
  FK_CHILD,
  FK_OTHER
};

struct CUgraphNode_st {
  int type;
  unsigned idx; /* its place in its graph */
  struct CUgraph_st *g;
  const void *fn; /* kernels */
  dim3 grid, block;
  unsigned char par[sizeof(rp_kargs)];
  size_t pbytes; /* kernels: bytes of their parameters */
  void *dst;     /* 1-d copies */
  const void *src;
  size_t bytes;
  struct cudaMemcpy3DParms p3; /* 3-d copies */
  cudaHostFn_t hfn;            /* host nodes */
  void *user;
  struct cudaMemsetParams ms;   /* memset nodes */
  struct CUgraph_st *child;     /* child graph nodes (the caller's graph,
                                  not a clone: it must outlive this) */
  enum cudaGraphNodeType other; /* fk_add_node: its type */
  void *kp[FK_MAX_PARAMS];      /* kernel GetParams: into par */
  unsigned *dep, ndep;          /* indices of its predecessors */
};

struct CUgraph_st {
  struct CUgraphNode_st **n;
  unsigned nn, cap;
};

struct CUgraphExec_st {
  struct CUgraph_st *from;
  struct CUgraphNode_st *n; /* value copies, template order */
  unsigned nn;
};

static struct CUgraphExec_st *last_exec;

cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags) {
  (void)flags;
  *pGraph = calloc(1, sizeof **pGraph);
  if (!*pGraph)
    return fail(cudaErrorMemoryAllocation);
  live++;
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  if (!graph)
    return cudaSuccess;
  for (unsigned i = 0; i < graph->nn; i++) {
    free(graph->n[i]->dep);
    free(graph->n[i]);
  }
  free(graph->n);
  free(graph);
  live--;
  return cudaSuccess;
}

/* A new node of graph g after deps; NULL when out of memory or a
 * dependency is not g's. */
static struct CUgraphNode_st *add(cudaGraph_t g, int type,
                                  const cudaGraphNode_t *deps, size_t nd) {
  for (size_t i = 0; i < nd; i++)
    if (!deps[i] || deps[i]->g != g)
      return NULL;
  if (g->nn == g->cap) {
    unsigned c = g->cap ? 2 * g->cap : 16;
    struct CUgraphNode_st **n = realloc(g->n, c * sizeof *n);
    if (!n)
      return NULL;
    g->n = n;
    g->cap = c;
  }
  struct CUgraphNode_st *x = calloc(1, sizeof *x);
  unsigned *dep = calloc(nd + 1, sizeof *dep);
  if (!x || !dep) {
    free(x);
    free(dep);
    return NULL;
  }
  x->type = type;
  x->idx = g->nn;
  x->g = g;
  x->dep = dep;
  x->ndep = (unsigned)nd;
  for (size_t i = 0; i < nd; i++)
    dep[i] = deps[i]->idx;
  g->n[g->nn++] = x;
  return x;
}

/* The end of every cudaGraphAdd*Node: x in *out and counted, or the
 * failure of its add. */
static cudaError_t added(struct CUgraphNode_st *x, unsigned *count,
                         cudaGraphNode_t *out) {
  if (!x)
    return fail(cudaErrorInvalidValue);
  ++*count;
  *out = x;
  return cudaSuccess;
}

/* A kernel node's parameters from p; 0 when its entry is unknown. */
static int set_kernel(struct CUgraphNode_st *x,
                      const struct cudaKernelNodeParams *p) {
  const fk_entry *en = entry(p->func);
  if (!en || !p->kernelParams)
    return 0;
  x->fn = p->func;
  x->grid = p->gridDim;
  x->block = p->blockDim;
  if (en->raw) {
    x->pbytes = 0;
    for (unsigned i = 0; i < en->nparam; i++) {
      memcpy(x->par + en->off[i], p->kernelParams[i], en->size[i]);
      x->pbytes = en->off[i] + en->size[i];
    }
    return 1;
  }
  /* as CUDA: the bytes the entry declares, read when the node is set */
  x->pbytes = block_bytes(en);
  memcpy(x->par, p->kernelParams[0], x->pbytes);
  return 1;
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode,
                                   cudaGraph_t graph,
                                   const cudaGraphNode_t *pDependencies,
                                   size_t numDependencies,
                                   const struct cudaKernelNodeParams *p) {
  if (!entry(p->func))
    return fail(cudaErrorInvalidDeviceFunction);
  struct CUgraphNode_st *x =
      add(graph, FK_KERNEL, pDependencies, numDependencies);
  if (x)
    set_kernel(x, p);
  return added(x, &fk.add_kernel, pGraphNode);
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode,
                                     cudaGraph_t graph,
                                     const cudaGraphNode_t *pDependencies,
                                     size_t numDependencies, void *dst,
                                     const void *src, size_t count,
                                     enum cudaMemcpyKind kind) {
  (void)kind;
  if (!count)
    return fail(cudaErrorInvalidValue);
  struct CUgraphNode_st *x =
      add(graph, FK_COPY1, pDependencies, numDependencies);
  if (x) {
    x->dst = dst;
    x->src = src;
    x->bytes = count;
  }
  return added(x, &fk.add_copy, pGraphNode);
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode,
                                   cudaGraph_t graph,
                                   const cudaGraphNode_t *pDependencies,
                                   size_t numDependencies,
                                   const struct cudaMemcpy3DParms *p) {
  struct CUgraphNode_st *x =
      add(graph, FK_COPY3, pDependencies, numDependencies);
  if (x) {
    x->p3 = *p;
    x->bytes = p->extent.width * p->extent.height * p->extent.depth;
    fk.add_copy3d++;
  }
  return added(x, &fk.add_copy, pGraphNode);
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode,
                                  cudaGraph_t graph,
                                  const cudaGraphNode_t *pDependencies,
                                  size_t numDependencies) {
  return added(add(graph, FK_EMPTY, pDependencies, numDependencies),
               &fk.add_empty, pGraphNode);
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                 const cudaGraphNode_t *pDependencies,
                                 size_t numDependencies,
                                 const struct cudaHostNodeParams *p) {
  struct CUgraphNode_st *x =
      add(graph, FK_HOST, pDependencies, numDependencies);
  if (x) {
    x->hfn = p->fn;
    x->user = p->userData;
  }
  return added(x, &fk.add_host, pGraphNode);
}

cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode,
                                        cudaGraph_t graph,
                                        const cudaGraphNode_t *pDependencies,
                                        size_t numDependencies,
                                        cudaEvent_t event) {
  (void)event;
  return added(add(graph, FK_EVENT, pDependencies, numDependencies),
               &fk.add_event, pGraphNode);
}

/* Child graphs: only those made by a test (fk_child_ok), never the
 * backend's own captures (the fake has no capture). */
static int child_ok;

void fk_child_ok(int ok) { child_ok = ok; }

cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *pGraphNode,
                                       cudaGraph_t graph,
                                       const cudaGraphNode_t *pDependencies,
                                       size_t numDependencies,
                                       cudaGraph_t childGraph) {
  if (!child_ok)
    return fail(cudaErrorNotSupported);
  struct CUgraphNode_st *x =
      add(graph, FK_CHILD, pDependencies, numDependencies);
  if (x)
    x->child = childGraph;
  return added(x, &fk.add_empty, pGraphNode);
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode,
                                   cudaGraph_t graph,
                                   const cudaGraphNode_t *pDependencies,
                                   size_t numDependencies,
                                   const struct cudaMemsetParams *p) {
  struct CUgraphNode_st *x =
      add(graph, FK_MEMSET, pDependencies, numDependencies);
  if (x)
    x->ms = *p;
  return added(x, &fk.add_copy, pGraphNode);
}

cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *pGraphNode,
                                      cudaGraph_t graph,
                                      const cudaGraphNode_t *pDependencies,
                                      size_t numDependencies,
                                      cudaEvent_t event) {
  (void)event;
  struct CUgraphNode_st *x =
      add(graph, FK_EVENT, pDependencies, numDependencies);
  if (x)
    x->other = cudaGraphNodeTypeWaitEvent;
  return added(x, &fk.add_event, pGraphNode);
}

cudaError_t fk_add_node(cudaGraphNode_t *out, cudaGraph_t graph,
                        const cudaGraphNode_t *deps, size_t nd,
                        enum cudaGraphNodeType type) {
  struct CUgraphNode_st *x = add(graph, FK_OTHER, deps, nd);
  if (x)
    x->other = type;
  return added(x, &fk.add_empty, out);
}

/* ---- reading a graph back ---- */

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes,
                              size_t *numNodes) {
  if (nodes)
    for (size_t i = 0; i < *numNodes && i < graph->nn; i++)
      nodes[i] = graph->n[i];
  *numNodes = graph->nn;
  return cudaSuccess;
}

cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node,
                                         cudaGraphNode_t *pDependencies,
                                         cudaGraphEdgeData *edgeData,
                                         size_t *pNumDependencies) {
  (void)edgeData;
  if (pDependencies)
    for (size_t i = 0; i < *pNumDependencies && i < node->ndep; i++)
      pDependencies[i] = node->g->n[node->dep[i]];
  *pNumDependencies = node->ndep;
  return cudaSuccess;
}

cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node,
                                 enum cudaGraphNodeType *pType) {
  static const enum cudaGraphNodeType of[] = {
      cudaGraphNodeTypeKernel, cudaGraphNodeTypeMemcpy,
      cudaGraphNodeTypeMemcpy, cudaGraphNodeTypeHost,
      cudaGraphNodeTypeEmpty,  cudaGraphNodeTypeEventRecord,
      cudaGraphNodeTypeMemset, cudaGraphNodeTypeGraph};
  *pType = node->type == FK_OTHER || (node->type == FK_EVENT && node->other)
               ? node->other
               : of[node->type];
  return cudaSuccess;
}

cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node,
                                         struct cudaKernelNodeParams *p) {
  if (node->type != FK_KERNEL)
    return fail(cudaErrorInvalidValue);
  const fk_entry *en = entry(node->fn);
  unsigned np = en->raw ? en->nparam : 1;
  for (unsigned i = 0; i < np; i++)
    node->kp[i] = node->par + (en->raw ? en->off[i] : 0);
  memset(p, 0, sizeof *p);
  p->func = (void *)node->fn;
  p->gridDim = node->grid;
  p->blockDim = node->block;
  p->kernelParams = node->kp;
  return cudaSuccess;
}

cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node,
                                         struct cudaMemcpy3DParms *p) {
  if (node->type == FK_COPY3) {
    *p = node->p3;
    return cudaSuccess;
  }
  if (node->type != FK_COPY1)
    return fail(cudaErrorInvalidValue);
  memset(p, 0, sizeof *p); /* a 1-d copy as CUDA reports it */
  p->srcPtr =
      (struct cudaPitchedPtr){(void *)node->src, node->bytes, node->bytes, 1};
  p->dstPtr = (struct cudaPitchedPtr){node->dst, node->bytes, node->bytes, 1};
  p->extent = (struct cudaExtent){node->bytes, 1, 1};
  p->kind = cudaMemcpyDefault;
  return cudaSuccess;
}

cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node,
                                         struct cudaMemsetParams *p) {
  if (node->type != FK_MEMSET)
    return fail(cudaErrorInvalidValue);
  *p = node->ms;
  return cudaSuccess;
}

cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node,
                                       struct cudaHostNodeParams *p) {
  if (node->type != FK_HOST)
    return fail(cudaErrorInvalidValue);
  p->fn = node->hfn;
  p->userData = node->user;
  return cudaSuccess;
}

cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node,
                                            cudaGraph_t *pGraph) {
  if (node->type != FK_CHILD)
    return fail(cudaErrorInvalidValue);
  *pGraph = node->child;
  return cudaSuccess;
}

cudaError_t cudaFuncGetName(const char **name, const void *func) {
  const fk_entry *en = entry(func);
  if (!en || !en->name)
    return fail(cudaErrorInvalidDeviceFunction);
  *name = en->name;
  return cudaSuccess;
}

cudaError_t cudaFuncGetParamInfo(const void *func, size_t paramIndex,
                                 size_t *paramOffset, size_t *paramSize) {
  const fk_entry *en = entry(func);
  if (!en)
    return fail(cudaErrorInvalidDeviceFunction);
  unsigned np = en->raw ? en->nparam : 1;
  if (paramIndex >= np)
    return fail(cudaErrorInvalidValue);
  *paramOffset = en->raw ? en->off[paramIndex] : 0;
  *paramSize = en->raw ? en->size[paramIndex] : block_bytes(en);
  return cudaSuccess;
}

/* A memset of elementSize-byte elements, height rows of width. */
static void memset2d(const struct cudaMemsetParams *m) {
  for (size_t y = 0; y < (m->height ? m->height : 1); y++)
    for (size_t i = 0; i < m->width; i++)
      memcpy((char *)m->dst + y * m->pitch + i * m->elementSize, &m->value,
             m->elementSize);
}

cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value,
                              size_t width, size_t height,
                              cudaStream_t stream) {
  (void)stream;
  for (size_t y = 0; y < height; y++)
    memset((char *)devPtr + y * pitch, value, width);
  return cudaSuccess;
}

cudaError_t cudaGraphAddNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                             const cudaGraphNode_t *pDependencies,
                             const cudaGraphEdgeData *dependencyData,
                             size_t numDependencies,
                             struct cudaGraphNodeParams *nodeParams) {
  (void)pGraphNode, (void)graph, (void)pDependencies, (void)dependencyData;
  (void)numDependencies, (void)nodeParams;
  return fail(cudaErrorNotSupported);
}

cudaError_t cudaGraphConditionalHandleCreate(
    cudaGraphConditionalHandle *pHandle_out, cudaGraph_t graph,
    unsigned int defaultLaunchValue, unsigned int flags) {
  (void)pHandle_out, (void)graph, (void)defaultLaunchValue, (void)flags;
  return fail(cudaErrorNotSupported);
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                 unsigned long long flags) {
  (void)flags;
  struct CUgraphExec_st *x = calloc(1, sizeof *x);
  if (!x)
    return fail(cudaErrorMemoryAllocation);
  x->n = calloc(graph->nn + 1, sizeof *x->n);
  if (!x->n) {
    free(x);
    return fail(cudaErrorMemoryAllocation);
  }
  x->from = graph;
  x->nn = graph->nn;
  for (unsigned i = 0; i < graph->nn; i++) {
    x->n[i] = *graph->n[i];
    x->n[i].dep = NULL; /* edges are read from the template */
  }
  fk.instantiate++;
  live++;
  last_exec = x;
  *pGraphExec = x;
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  if (!graphExec)
    return cudaSuccess;
  if (last_exec == graphExec)
    last_exec = NULL;
  free(graphExec->n);
  free(graphExec);
  live--;
  return cudaSuccess;
}

/* Exec x's copy of template node n; NULL when n is not of its graph. */
static struct CUgraphNode_st *exec_node(cudaGraphExec_t x, cudaGraphNode_t n) {
  return n && n->g == x->from && n->idx < x->nn ? &x->n[n->idx] : NULL;
}

cudaError_t cudaGraphExecKernelNodeSetParams(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
    const struct cudaKernelNodeParams *pNodeParams) {
  struct CUgraphNode_st *x = exec_node(hGraphExec, node);
  if (!x || x->type != FK_KERNEL || !set_kernel(x, pNodeParams))
    return fail(cudaErrorInvalidValue);
  fk.exec_kernel_set++;
  return cudaSuccess;
}

cudaError_t
cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
                             const struct cudaKernelNodeParams *pNodeParams) {
  if (node->type != FK_KERNEL || !set_kernel(node, pNodeParams))
    return fail(cudaErrorInvalidValue);
  fk.tmpl_kernel_set++;
  return cudaSuccess;
}

cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t hGraphExec,
                                               cudaGraphNode_t node, void *dst,
                                               const void *src, size_t count,
                                               enum cudaMemcpyKind kind) {
  (void)kind;
  struct CUgraphNode_st *x = exec_node(hGraphExec, node);
  if (!x || x->type != FK_COPY1)
    return fail(cudaErrorInvalidValue);
  x->dst = dst;
  x->src = src;
  x->bytes = count;
  fk.exec_copy_set++;
  return cudaSuccess;
}

cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void *dst,
                                           const void *src, size_t count,
                                           enum cudaMemcpyKind kind) {
  (void)kind;
  if (node->type != FK_COPY1)
    return fail(cudaErrorInvalidValue);
  node->dst = dst;
  node->src = src;
  node->bytes = count;
  fk.tmpl_copy_set++;
  return cudaSuccess;
}

/* As CUDA does: a 3-d memcpy node's operands are not updated in place. */
cudaError_t
cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t hGraphExec,
                                 cudaGraphNode_t node,
                                 const struct cudaMemcpy3DParms *pNodeParams) {
  (void)hGraphExec, (void)node, (void)pNodeParams;
  return fail(cudaErrorInvalidValue);
}

cudaError_t
cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node,
                             const struct cudaMemcpy3DParms *pNodeParams) {
  if (node->type != FK_COPY3)
    return fail(cudaErrorInvalidValue);
  node->p3 = *pNodeParams;
  fk.tmpl_copy_set++;
  return cudaSuccess;
}

cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t hGraphExec,
                                                 cudaGraphNode_t node,
                                                 cudaGraph_t childGraph) {
  (void)hGraphExec, (void)node, (void)childGraph;
  return fail(cudaErrorNotSupported);
}

cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                cudaGraphExecUpdateResultInfo *resultInfo) {
  memset(resultInfo, 0, sizeof *resultInfo);
  if (hGraph != hGraphExec->from || hGraph->nn != hGraphExec->nn)
    return fail(cudaErrorGraphExecUpdateFailure);
  for (unsigned i = 0; i < hGraph->nn; i++) {
    hGraphExec->n[i] = *hGraph->n[i];
    hGraphExec->n[i].dep = NULL;
  }
  fk.exec_update++;
  return cudaSuccess;
}

/* A launch runs the nodes on the host, each once its predecessors ran,
 * picking among the ready ones at random (a fixed sequence): an edge the
 * backend forgot shows as a result that differs. */
static uint64_t rnd = 0x9e3779b97f4a7c15ull;

static void run_graph(const struct CUgraph_st *g,
                      const struct CUgraphNode_st *n, unsigned nn);

static void run_node(const struct CUgraphNode_st *x) {
  switch (x->type) {
  case FK_MEMSET:
    memset2d(&x->ms);
    break;
  case FK_CHILD:
    run_graph(x->child, NULL, x->child->nn);
    break;
  case FK_KERNEL:
    run_kernel(x->fn, x->grid, x->block, x->par);
    break;
  case FK_COPY1:
    memmove(x->dst, x->src, x->bytes);
    break;
  case FK_COPY3:
    copy3d(&x->p3);
    break;
  case FK_HOST:
    x->hfn(x->user);
    break;
  default:
    break;
  }
}

/* Runs graph g's nodes (their values n, or g's own when NULL). */
static void run_graph(const struct CUgraph_st *g,
                      const struct CUgraphNode_st *n, unsigned nn) {
  unsigned nready = 0;
  unsigned *left = calloc(nn + 1, sizeof *left);
  unsigned *ready = calloc(nn + 1, sizeof *ready);
  if (!left || !ready) {
    free(left);
    free(ready);
    return;
  }
  for (unsigned i = 0; i < nn; i++)
    if (!(left[i] = g->n[i]->ndep))
      ready[nready++] = i;
  while (nready) {
    rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
    unsigned k = (unsigned)((rnd >> 33) % nready), v = ready[k];
    ready[k] = ready[--nready];
    run_node(n ? &n[v] : g->n[v]);
    /* Its successors: the nodes naming it as a predecessor. */
    for (unsigned j = v + 1; j < nn; j++)
      for (unsigned d = 0; d < g->n[j]->ndep; d++)
        if (g->n[j]->dep[d] == v && --left[j] == 0)
          ready[nready++] = j;
  }
  free(left);
  free(ready);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  (void)stream;
  run_graph(graphExec->from, graphExec->n, graphExec->nn);
  fk.graph_launch++;
  return cudaSuccess;
}

unsigned fk_exec_kernels(const void *fn) {
  unsigned c = 0;
  for (unsigned i = 0; last_exec && i < last_exec->nn; i++)
    c += last_exec->n[i].type == FK_KERNEL && last_exec->n[i].fn == fn;
  return c;
}

size_t fk_exec_param_bytes(const void *fn, unsigned *nodes) {
  size_t b = 0;
  unsigned c = 0;
  for (unsigned i = 0; last_exec && i < last_exec->nn; i++)
    if (last_exec->n[i].type == FK_KERNEL && last_exec->n[i].fn == fn) {
      b += last_exec->n[i].pbytes;
      c++;
    }
  if (nodes)
    *nodes = c;
  return b;
}

unsigned fk_exec_copies(size_t *bytes, unsigned *empty) {
  unsigned c = 0, e = 0;
  size_t b = 0;
  for (unsigned i = 0; last_exec && i < last_exec->nn; i++) {
    const struct CUgraphNode_st *x = &last_exec->n[i];
    if (x->type == FK_COPY1 || x->type == FK_COPY3) {
      c++;
      b += x->bytes;
    }
    e += x->type == FK_EMPTY;
  }
  if (bytes)
    *bytes = b;
  if (empty)
    *empty = e;
  return c;
}
