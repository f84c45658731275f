/* A CUDA graph imported as a reprise graph (rp_cuda_import.h): its nodes
 * walked in an order their edges allow, each kernel, memcpy, memset and
 * host node recorded as an operation after what it depends on, empty and
 * event nodes passed through as edges, child graphs imported in place. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rp_cuda.h"
#include "rp_cuda_import.h"

extern const rp_backend rp_backend_cuda;

/* What one imported operation relaunches (rp_kargs.a[0] of its kernel
 * op points to it). */
typedef struct rp__cu_imp_node {
  rp_cuda_import_kind kind;
  const void *fn; /* kernels */
  dim3 grid, block;
  unsigned smem;
  void **args; /* into block */
  unsigned char *block_bytes;
  struct cudaMemcpy3DParms p3; /* copies */
  struct cudaMemsetParams ms;  /* memsets */
  cudaHostFn_t hfn;            /* host nodes */
  void *huser;
  cudaGraphNode_t src; /* the node it came from */
} imp_node;

struct rp_cuda_import {
  rp_graph *g;
  imp_node **rec; /* per reprise node */
  uint32_t nrec, caprec;
  rp_cuda_import *next; /* the live imports */
};

/* Imports alive, for the backend to find a copy's record by its buffer's
 * name (rp__cu_import_copy): a name read from a file names nothing. */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static rp_cuda_import *live;

/* The name of the one-byte buffer an imported copy moves: the analysis
 * sees a copy (its lane, its direction), the backend moves what the CUDA
 * node moved instead. */
#define IMP_BUF "cuda import %p"

const void *rp__cu_import_copy(const rp_plan *p, uint32_t v) {
  if (!__atomic_load_n(&live, __ATOMIC_ACQUIRE))
    return NULL; /* no import alive: nothing to look up (every copy) */
  const rp_plan_node *nd = &p->node[v];
  uint32_t im = nd->nacc ? p->acc[nd->acc0].image : RP_NONE;
  if (im == RP_NONE)
    return NULL;
  const rp_buffer_desc *d = &p->buf[p->image[im].buf].desc;
  void *rec = NULL;
  if (!d->name || strncmp(d->name, "cuda import ", 12) || d->bytes != 1 ||
      sscanf(d->name, IMP_BUF, &rec) != 1)
    return NULL;
  const void *found = NULL;
  pthread_mutex_lock(&live_mu);
  for (const rp_cuda_import *im = live; im && !found; im = im->next)
    for (uint32_t i = 0; i < im->nrec && !found; i++)
      if (im->rec[i] == rec)
        found = rec;
  pthread_mutex_unlock(&live_mu);
  return found;
}

/* A set of reprise nodes (what a CUDA node's successors wait for). */
typedef struct nset {
  rp_node *v;
  unsigned n, cap;
} nset;

typedef struct imp {
  rp_cuda_import *im;
  char *err;
  size_t errlen;
} imp;

static rp_status failf(imp *w, rp_status s, const char *fmt, ...) {
  if (w->err && w->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, w->errlen, fmt, ap);
    va_end(ap);
  }
  return s;
}

static rp_status cu_failed(imp *w, cudaError_t e, const char *what) {
  return failf(w, RP_EBACKEND, "rp_cuda_graph_import: %s: %s", what,
               cudaGetErrorString(e));
}

static int nset_add(nset *s, rp_node v) {
  for (unsigned i = 0; i < s->n; i++)
    if (s->v[i] == v)
      return 0;
  if (s->n == s->cap) {
    unsigned c = s->cap ? 2 * s->cap : 4;
    rp_node *p = realloc(s->v, c * sizeof *p);
    if (!p)
      return -1;
    s->v = p;
    s->cap = c;
  }
  s->v[s->n++] = v;
  return 0;
}

static int nset_union(nset *s, const nset *t) {
  for (unsigned i = 0; i < t->n; i++)
    if (nset_add(s, t->v[i]))
      return -1;
  return 0;
}

/* The operations' one descriptor: a scalar naming its imp_node. */
static const rp_param imp_params[] = {{"node", RP_SCALAR}};

int rp__cu_import_issue(const rp_kargs *a, void *stream);

static const rp_kernel imp_kernel =
    RP_KERNEL_WITH(.name = "cuda_import", .nparams = 1, .params = imp_params,
                   .cuda_host = rp__cu_import_issue);

/* A memset's value as one byte repeated over its element: -1 if it is
 * not. */
static int memset_byte(const struct cudaMemsetParams *m) {
  unsigned v = m->value, b = v & 0xff;
  for (unsigned i = 1; i < m->elementSize; i++)
    if ((v >> (8 * i) & 0xff) != b)
      return -1;
  return (int)b;
}

int rp__cu_import_issue(const rp_kargs *a, void *stream) {
  const imp_node *r = a->a[0].p;
  cudaStream_t st = stream;
  cudaError_t e = cudaErrorInvalidValue;
  switch (r->kind) {
  case RP_CUDA_IMPORT_KERNEL:
    e = cudaLaunchKernel(r->fn, r->grid, r->block, r->args, r->smem, st);
    break;
  case RP_CUDA_IMPORT_MEMCPY:
    e = cudaMemcpy3DAsync(&r->p3, st);
    break;
  case RP_CUDA_IMPORT_MEMSET: {
    size_t w = r->ms.width * r->ms.elementSize;
    e = cudaMemset2DAsync(r->ms.dst, r->ms.height > 1 ? r->ms.pitch : w,
                          memset_byte(&r->ms), w, r->ms.height, st);
    break;
  }
  default:
    break;
  }
  return e != cudaSuccess;
}

int rp__cu_is_import(const rp_kernel *k) { return k == &imp_kernel; }

const rp_kernel *rp__cu_import_kernel(void) { return &imp_kernel; }

cudaError_t rp__cu_import_add(cudaGraphNode_t *node, cudaGraph_t gr,
                              const cudaGraphNode_t *deps, size_t nd,
                              const rp_kargs *a) {
  const imp_node *r = a->a[0].p;
  switch (r->kind) {
  case RP_CUDA_IMPORT_KERNEL: {
    struct cudaKernelNodeParams kp = {(void *)r->fn, r->grid, r->block,
                                      r->smem,       r->args, NULL};
    return cudaGraphAddKernelNode(node, gr, deps, nd, &kp);
  }
  case RP_CUDA_IMPORT_MEMCPY:
    return cudaGraphAddMemcpyNode(node, gr, deps, nd, &r->p3);
  case RP_CUDA_IMPORT_MEMSET:
    return cudaGraphAddMemsetNode(node, gr, deps, nd, &r->ms);
  default:
    return cudaErrorInvalidValue;
  }
}

static void imp_host(void *user, void *const *ptrs) {
  (void)ptrs;
  const imp_node *r = user;
  r->hfn(r->huser);
}

static void node_free(imp_node *r) {
  if (r) {
    free(r->args);
    free(r->block_bytes);
    free(r);
  }
}

/* Kernel node x's function, shape and a copy of its parameter block. */
static rp_status get_kernel(imp *w, cudaGraphNode_t x, imp_node *r, char *name,
                            size_t nlen) {
#if CUDART_VERSION < 12040
  (void)r, (void)x;
  snprintf(name, nlen, "kernel");
  return failf(w, RP_ENOTSUP,
               "rp_cuda_graph_import: kernel nodes need "
               "CUDA 12.4 or later (cudaFuncGetParamInfo)");
#else
  struct cudaKernelNodeParams kp;
  cudaError_t e = cudaGraphKernelNodeGetParams(x, &kp);
  if (e != cudaSuccess)
    return cu_failed(w, e, "cudaGraphKernelNodeGetParams");
  const char *fname = NULL;
  if (cudaFuncGetName(&fname, kp.func) != cudaSuccess || !fname)
    fname = "kernel";
  cudaGetLastError();
  snprintf(name, nlen, "%s", fname);
  if (kp.extra)
    return failf(w, RP_ENOTSUP,
                 "rp_cuda_graph_import: kernel node %s "
                 "passes its parameters through `extra`: not importable",
                 name);
  r->fn = kp.func;
  r->grid = kp.gridDim;
  r->block = kp.blockDim;
  r->smem = kp.sharedMemBytes;
  size_t np = 0, total = 0, off, sz;
  while ((e = cudaFuncGetParamInfo(kp.func, np, &off, &sz)) == cudaSuccess) {
    if (off + sz > total)
      total = off + sz;
    np++;
  }
  cudaGetLastError(); /* the index past the last parameter */
  if (np == 0 && e != cudaErrorInvalidValue && kp.kernelParams)
    return failf(w, RP_ENOTSUP,
                 "rp_cuda_graph_import: kernel node %s: "
                 "its parameters' layout is not known (%s): not "
                 "importable",
                 name, cudaGetErrorString(e));
  r->args = calloc(np + 1, sizeof *r->args);
  r->block_bytes = calloc(total + 1, 1);
  if (!r->args || !r->block_bytes)
    return RP_ENOMEM;
  for (size_t i = 0; i < np; i++) {
    if (cudaFuncGetParamInfo(kp.func, i, &off, &sz) != cudaSuccess)
      return cu_failed(w, cudaGetLastError(), "cudaFuncGetParamInfo");
    memcpy(r->block_bytes + off, kp.kernelParams[i], sz);
    r->args[i] = r->block_bytes + off;
  }
  return RP_OK;
#endif
}

static const char *copy_dir(enum cudaMemcpyKind k) {
  switch (k) {
  case cudaMemcpyHostToDevice:
    return "HtoD";
  case cudaMemcpyDeviceToHost:
    return "DtoH";
  case cudaMemcpyDeviceToDevice:
    return "DtoD";
  case cudaMemcpyHostToHost:
    return "HtoH";
  default:
    return "";
  }
}

/* Whether p is device memory (else host memory) for a cudaMemcpyDefault
 * copy. */
static int on_device(const void *p) {
  struct cudaPointerAttributes at;
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return at.type == cudaMemoryTypeDevice || at.type == cudaMemoryTypeManaged;
}

/* A copy's direction, cudaMemcpyDefault resolved from its pointers. */
static enum cudaMemcpyKind copy_kind_of(const struct cudaMemcpy3DParms *p) {
  if (p->kind != cudaMemcpyDefault)
    return p->kind;
  int sd = p->srcArray || on_device(p->srcPtr.ptr);
  int dd = p->dstArray || on_device(p->dstPtr.ptr);
  return sd ? (dd ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
            : (dd ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
}

/* Records CUDA node x (of a kind that is an operation) after `after`. */
static rp_status record(imp *w, cudaGraphNode_t x, enum cudaGraphNodeType t,
                        const nset *after, rp_node *out) {
  rp_cuda_import *im = w->im;
  imp_node *r = calloc(1, sizeof *r);
  if (!r)
    return RP_ENOMEM;
  r->src = x;
  char name[160];
  rp_status s = RP_OK;
  cudaError_t e = cudaSuccess;
  enum cudaMemcpyKind dir = cudaMemcpyDefault;
  size_t bytes = 0;
  if (t == cudaGraphNodeTypeKernel) {
    r->kind = RP_CUDA_IMPORT_KERNEL;
    s = get_kernel(w, x, r, name, sizeof name);
  } else if (t == cudaGraphNodeTypeMemcpy) {
    r->kind = RP_CUDA_IMPORT_MEMCPY;
    if ((e = cudaGraphMemcpyNodeGetParams(x, &r->p3)) != cudaSuccess)
      s = cu_failed(w, e, "cudaGraphMemcpyNodeGetParams");
    const struct cudaExtent *x3 = &r->p3.extent;
    dir = copy_kind_of(&r->p3);
    bytes =
        x3->width * (x3->height ? x3->height : 1) * (x3->depth ? x3->depth : 1);
    snprintf(name, sizeof name, "memcpy %s %zu B", copy_dir(dir), bytes);
  } else if (t == cudaGraphNodeTypeMemset) {
    r->kind = RP_CUDA_IMPORT_MEMSET;
    if ((e = cudaGraphMemsetNodeGetParams(x, &r->ms)) != cudaSuccess)
      s = cu_failed(w, e, "cudaGraphMemsetNodeGetParams");
    bytes = r->ms.width * r->ms.elementSize * (r->ms.height ? r->ms.height : 1);
    snprintf(name, sizeof name, "memset %zu B", bytes);
    if (!s && memset_byte(&r->ms) < 0)
      s = failf(w, RP_ENOTSUP,
                "rp_cuda_graph_import: %s node sets "
                "%u-byte elements to 0x%x, not one byte repeated: not "
                "importable",
                name, r->ms.elementSize, r->ms.value);
  } else {
    r->kind = RP_CUDA_IMPORT_HOST;
    struct cudaHostNodeParams hp;
    if ((e = cudaGraphHostNodeGetParams(x, &hp)) != cudaSuccess)
      s = cu_failed(w, e, "cudaGraphHostNodeGetParams");
    r->hfn = hp.fn;
    r->huser = hp.userData;
    snprintf(name, sizeof name, "host");
  }
  if (s == RP_OK && im->nrec == im->caprec) {
    uint32_t c = im->caprec ? 2 * im->caprec : 64;
    imp_node **p = realloc(im->rec, c * sizeof *p);
    if (!p)
      s = RP_ENOMEM;
    else
      im->rec = p, im->caprec = c;
  }
  if (s != RP_OK) {
    node_free(r);
    return s;
  }
  im->rec[im->nrec++] = r;
  rp_op_opts oo =
      RP_OP_OPTS_WITH(.name = name, .after = after->v, .nafter = after->n);
  if (dir == cudaMemcpyHostToDevice || dir == cudaMemcpyDeviceToHost) {
    /* a copy op over a one-byte buffer of its own (no hazard with any
     * other); its given cost the default model's, 25 GB/s, until
     * profiled */
    char bn[64];
    snprintf(bn, sizeof bn, IMP_BUF, (void *)r);
    rp_buffer_desc d = {.name = bn, .bytes = 1};
    rp_buf b;
    oo.cost_us = bytes / 25e3;
    s = rp_buffer_add(im->g, &d, &b);
    if (s == RP_OK && dir == cudaMemcpyHostToDevice)
      s = rp_record_copy_to_device(im->g, rp_whole(b), 0, &oo, out);
    else if (s == RP_OK)
      s = rp_record_copy_to_host(im->g, rp_whole(b), 0, &oo, out);
  } else if (r->kind == RP_CUDA_IMPORT_HOST) {
    s = rp_record_host(im->g, imp_host, r, NULL, 0, &oo, out);
  } else {
    /* a scalar (the node): no region (a zero-filled one names buffer 0) */
    rp_arg a[1] = {{.region = rp_whole(RP_NONE), .value = {.p = r}}};
    s = rp_record_kernel(im->g, &imp_kernel, 0, rp_dims3(1, 1, 1), a, &oo, out);
  }
  if (s != RP_OK)
    return failf(w, s, "rp_cuda_graph_import: recording %s: %s", name,
                 rp_graph_error(im->g));
  return RP_OK;
}

/* Node x's predecessors (CUDA 13 added the edges' data to the call). */
static cudaError_t node_deps(cudaGraphNode_t x, cudaGraphNode_t *d,
                             size_t *nd) {
#if CUDART_VERSION >= 13000
  return cudaGraphNodeGetDependencies(x, d, NULL, nd);
#else
  return cudaGraphNodeGetDependencies(x, d, nd);
#endif
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (const cudaGraphNode_t *)a;
  uintptr_t y = (uintptr_t) * (const cudaGraphNode_t *)b;
  return x < y ? -1 : x > y;
}

/* Index of x in sorted nodes (by address) -> its place in `nodes`. */
static long find(cudaGraphNode_t *sorted, const unsigned *where, size_t n,
                 cudaGraphNode_t x) {
  cudaGraphNode_t *p = bsearch(&x, sorted, n, sizeof *sorted, cmp_ptr);
  return p ? (long)where[p - sorted] : -1;
}

static const char *type_name(enum cudaGraphNodeType t) {
  switch (t) {
  case cudaGraphNodeTypeExtSemaphoreSignal:
    return "external semaphore signal";
  case cudaGraphNodeTypeExtSemaphoreWait:
    return "external semaphore wait";
  case cudaGraphNodeTypeMemAlloc:
    return "memory allocation";
  case cudaGraphNodeTypeMemFree:
    return "memory free";
  case cudaGraphNodeTypeConditional:
    return "conditional";
  default:
    return "unknown";
  }
}

typedef struct level {
  size_t n;
  cudaGraphNode_t *nodes, *sorted;
  unsigned *where, *order, *left, **pred, *npred;
  char *has_succ;
  nset *tails;
} level;

static void level_free(level *l) {
  for (size_t i = 0; l->pred && i < l->n; i++)
    free(l->pred[i]);
  for (size_t i = 0; l->tails && i < l->n; i++)
    free(l->tails[i].v);
  free(l->nodes), free(l->sorted), free(l->where), free(l->order);
  free(l->left), free(l->pred), free(l->npred), free(l->has_succ);
  free(l->tails);
}

/* The nodes of cg, each one's predecessors (indices) and an order the
 * edges allow. */
static rp_status level_read(imp *w, cudaGraph_t cg, level *l) {
  cudaError_t e = cudaGraphGetNodes(cg, NULL, &l->n);
  if (e != cudaSuccess)
    return cu_failed(w, e, "cudaGraphGetNodes");
  size_t n = l->n;
  l->nodes = calloc(n + 1, sizeof *l->nodes);
  l->sorted = calloc(n + 1, sizeof *l->sorted);
  l->where = calloc(n + 1, sizeof *l->where);
  l->order = calloc(n + 1, sizeof *l->order);
  l->left = calloc(n + 1, sizeof *l->left);
  l->pred = calloc(n + 1, sizeof *l->pred);
  l->npred = calloc(n + 1, sizeof *l->npred);
  l->has_succ = calloc(n + 1, 1);
  l->tails = calloc(n + 1, sizeof *l->tails);
  if (!l->nodes || !l->sorted || !l->where || !l->order || !l->left ||
      !l->pred || !l->npred || !l->has_succ || !l->tails)
    return RP_ENOMEM;
  if (n && (e = cudaGraphGetNodes(cg, l->nodes, &l->n)) != cudaSuccess)
    return cu_failed(w, e, "cudaGraphGetNodes");
  memcpy(l->sorted, l->nodes, n * sizeof *l->nodes);
  qsort(l->sorted, n, sizeof *l->sorted, cmp_ptr);
  for (size_t i = 0; i < n; i++) {
    cudaGraphNode_t *p =
        bsearch(&l->nodes[i], l->sorted, n, sizeof *l->sorted, cmp_ptr);
    l->where[p - l->sorted] = (unsigned)i;
  }
  for (size_t i = 0; i < n; i++) {
    size_t nd = 0;
    if ((e = node_deps(l->nodes[i], NULL, &nd)) != cudaSuccess)
      return cu_failed(w, e, "cudaGraphNodeGetDependencies");
    cudaGraphNode_t *d = calloc(nd + 1, sizeof *d);
    l->pred[i] = calloc(nd + 1, sizeof **l->pred);
    if (!d || !l->pred[i]) {
      free(d);
      return RP_ENOMEM;
    }
    if (nd && (e = node_deps(l->nodes[i], d, &nd)) != cudaSuccess) {
      free(d);
      return cu_failed(w, e, "cudaGraphNodeGetDependencies");
    }
    for (size_t k = 0; k < nd; k++) {
      long j = find(l->sorted, l->where, n, d[k]);
      if (j < 0) {
        free(d);
        return failf(w, RP_EINVAL,
                     "rp_cuda_graph_import: a node depends "
                     "on a node of another graph");
      }
      l->pred[i][l->npred[i]++] = (unsigned)j;
      l->has_succ[j] = 1;
    }
    free(d);
  }
  /* Kahn's order: a node once every predecessor is placed (successors
   * as lists: linear in the edges). */
  size_t ne = 0;
  for (size_t i = 0; i < n; i++)
    ne += l->npred[i];
  unsigned *s0 = calloc(n + 2, sizeof *s0), *sx = calloc(ne + 1, sizeof *sx);
  if (!s0 || !sx) {
    free(s0);
    free(sx);
    return RP_ENOMEM;
  }
  for (size_t i = 0; i < n; i++)
    for (unsigned k = 0; k < l->npred[i]; k++)
      s0[l->pred[i][k] + 2]++;
  for (size_t i = 0; i < n; i++)
    s0[i + 2] += s0[i + 1];
  for (size_t i = 0; i < n; i++)
    for (unsigned k = 0; k < l->npred[i]; k++)
      sx[s0[l->pred[i][k] + 1]++] = (unsigned)i;
  size_t placed = 0, head = 0;
  for (size_t i = 0; i < n; i++)
    if (!(l->left[i] = l->npred[i]))
      l->order[placed++] = (unsigned)i;
  while (head < placed) {
    unsigned u = l->order[head++];
    for (unsigned k = s0[u]; k < s0[u + 1]; k++)
      if (--l->left[sx[k]] == 0)
        l->order[placed++] = sx[k];
  }
  free(s0);
  free(sx);
  if (placed != n)
    return failf(w, RP_ECYCLE,
                 "rp_cuda_graph_import: the graph has a "
                 "cycle");
  return RP_OK;
}

/* Imports graph cg, its roots after `in`; `out` receives what its
 * successors must wait for (its leaves' operations, `in` if it has
 * none). */
static rp_status walk(imp *w, cudaGraph_t cg, const nset *in, nset *out,
                      unsigned depth) {
  if (depth > 32)
    return failf(w, RP_ENOTSUP,
                 "rp_cuda_graph_import: child graphs "
                 "nested deeper than 32");
  level l = {0};
  rp_status s = level_read(w, cg, &l);
  for (size_t k = 0; s == RP_OK && k < l.n; k++) {
    unsigned i = l.order[k];
    nset deps = {0};
    if (!l.npred[i] && nset_union(&deps, in))
      s = RP_ENOMEM;
    for (unsigned q = 0; s == RP_OK && q < l.npred[i]; q++)
      if (nset_union(&deps, &l.tails[l.pred[i][q]]))
        s = RP_ENOMEM;
    enum cudaGraphNodeType t;
    cudaError_t e = cudaGraphNodeGetType(l.nodes[i], &t);
    if (s == RP_OK && e != cudaSuccess)
      s = cu_failed(w, e, "cudaGraphNodeGetType");
    if (s != RP_OK) {
      free(deps.v);
      break;
    }
    rp_node op;
    switch (t) {
    case cudaGraphNodeTypeKernel:
    case cudaGraphNodeTypeMemcpy:
    case cudaGraphNodeTypeMemset:
    case cudaGraphNodeTypeHost:
      s = record(w, l.nodes[i], t, &deps, &op);
      if (s == RP_OK && nset_add(&l.tails[i], op))
        s = RP_ENOMEM;
      free(deps.v);
      break;
    case cudaGraphNodeTypeEmpty:
    case cudaGraphNodeTypeWaitEvent:
    case cudaGraphNodeTypeEventRecord:
      l.tails[i] = deps; /* an edge only */
      break;
    case cudaGraphNodeTypeGraph: {
      cudaGraph_t child;
      if ((e = cudaGraphChildGraphNodeGetGraph(l.nodes[i], &child)) !=
          cudaSuccess)
        s = cu_failed(w, e, "cudaGraphChildGraphNodeGetGraph");
      else
        s = walk(w, child, &deps, &l.tails[i], depth + 1);
      free(deps.v);
      break;
    }
    default:
      free(deps.v);
      s = failf(w, RP_ENOTSUP,
                "rp_cuda_graph_import: node %zu is a %s "
                "node (type %d): not importable (docs/cuda_import.md)",
                k, type_name(t), (int)t);
      break;
    }
  }
  for (size_t i = 0; s == RP_OK && i < l.n; i++)
    if (!l.has_succ[i] && nset_union(out, &l.tails[i]))
      s = RP_ENOMEM;
  if (s == RP_OK && !l.n && nset_union(out, in))
    s = RP_ENOMEM;
  level_free(&l);
  return s;
}

/* Measures every operation on the GPU and attaches the figures. */
static rp_status profile(imp *w, unsigned runs) {
  rp_graph *g = w->im->g;
  uint32_t n = rp_graph_num_nodes(g);
  double *med = calloc(3 * (size_t)n + 1, sizeof *med);
  if (!med)
    return RP_ENOMEM;
  rp_exec *x = NULL;
  rp_status s = rp_exec_create(&x, g, &rp_backend_cuda, NULL);
  rp_profile_opts po = RP_PROFILE_OPTS_INIT;
  po.runs = runs;
  if (s == RP_OK)
    s = rp_exec_profile_opts(x, &po, med, med + n, med + 2 * (size_t)n);
  if (s == RP_OK)
    s = rp_graph_set_measured_all(g, med, med + n, med + 2 * (size_t)n, runs,
                                  "cuda", NULL);
  if (s != RP_OK)
    failf(w, s, "rp_cuda_graph_import: profiling: %s",
          x ? rp_exec_error(x) : rp_last_error());
  rp_exec_destroy(x);
  free(med);
  return s;
}

rp_status rp_cuda_graph_import(cudaGraph_t cg, unsigned profile_runs,
                               rp_cuda_import **out, char *err, size_t errlen) {
  imp w = {NULL, err, errlen};
  if (err && errlen)
    err[0] = 0;
  if (!out || !cg)
    return failf(&w, RP_EINVAL, "rp_cuda_graph_import: %s is NULL",
                 out ? "the graph" : "out");
  *out = NULL;
  w.im = calloc(1, sizeof *w.im);
  if (!w.im)
    return RP_ENOMEM;
  pthread_mutex_lock(&live_mu);
  w.im->next = live;
  __atomic_store_n(&live, w.im, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&live_mu);
  rp_status s = rp_graph_create(&w.im->g, RP_GRAPH_NO_COHERENCE);
  nset in = {0}, tails = {0};
  if (s == RP_OK)
    s = rp_graph_set_device_kind(w.im->g, 0, RP_DEVICE_CUDA);
  if (s == RP_OK)
    s = walk(&w, cg, &in, &tails, 0);
  free(tails.v);
  if (s == RP_OK && (s = rp_graph_end(w.im->g)) != RP_OK)
    failf(&w, s, "rp_cuda_graph_import: %s", rp_graph_error(w.im->g));
  if (s == RP_OK && profile_runs)
    s = profile(&w, profile_runs);
  if (s != RP_OK) {
    if (s == RP_ENOMEM)
      failf(&w, s, "rp_cuda_graph_import: out of memory");
    rp_cuda_import_free(w.im);
    return s;
  }
  *out = w.im;
  return RP_OK;
}

rp_graph *rp_cuda_import_graph(const rp_cuda_import *im) {
  return im ? im->g : NULL;
}

rp_status rp_cuda_import_node(const rp_cuda_import *im, rp_node n,
                              rp_cuda_import_kind *kind, const void **fn) {
  if (!im || n >= im->nrec)
    return RP_EINVAL;
  if (kind)
    *kind = im->rec[n]->kind;
  if (fn)
    *fn = im->rec[n]->fn;
  return RP_OK;
}

cudaGraphNode_t rp_cuda_import_source(const rp_cuda_import *im, rp_node n) {
  return im && n < im->nrec ? im->rec[n]->src : NULL;
}

void rp_cuda_import_free(rp_cuda_import *im) {
  if (!im)
    return;
  pthread_mutex_lock(&live_mu);
  for (rp_cuda_import **p = &live; *p; p = &(*p)->next)
    if (*p == im) {
      __atomic_store_n(p, im->next, __ATOMIC_RELEASE);
      break;
    }
  pthread_mutex_unlock(&live_mu);
  rp_graph_destroy(im->g);
  for (uint32_t i = 0; i < im->nrec; i++)
    node_free(im->rec[i]);
  free(im->rec);
  free(im);
}
