/* CUDA backend for reprise replay: the plan as a CUDA graph built once and
 * replayed. Kernels of CPU-kind devices, host tasks and copies between two
 * host-memory images are host nodes; every other copy is a memcpy node. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rp_cuda.h"
#include "rp_cuda_geom.h"

double rp__cu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* Time spent in CUDA's calls, for RP_CUDA_TIMES: *acc += now - t0. */
static double t_start(const cu_state *s) { return s->times ? rp__cu_now() : 0; }
static void t_end(const cu_state *s, double t0, double *acc) {
  if (s->times)
    *acc += rp__cu_now() - t0;
}

static const char *op_name(const cu_state *s, uint32_t v) {
  const char *n = v < s->nn ? s->p->node[v].name : NULL;
  return n ? n : "?";
}

rp_status rp__cu_fail(cu_state *s, cudaError_t e, uint32_t v,
                      const char *what) {
  (void)cudaGetLastError(); /* clear a non-sticky error */
  if (v == RP_NONE)
    rp_exec_set_error(s->x, "cuda: %s: %s", what, cudaGetErrorString(e));
  else
    rp_exec_set_error(s->x, "cuda: %s of op %u \"%s\": %s", what,
                      s->p->node[v].op, op_name(s, v), cudaGetErrorString(e));
  return RP_EBACKEND;
}

static rp_status cu_probe(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();
    rp_backend_set_error("cuda: no GPU (cudaGetDeviceCount found none)");
    return RP_ENODEV;
  }
  return RP_OK;
}

/* The host side of a node: a host task, a CPU-kind device's kernel, or a
 * copy between two host-memory images. Once a host node of the batch
 * failed (rp_task_fail), the others do nothing. */
static void run_host(cu_state *s, cu_host *h) {
  const rp_plan *p = s->p;
  const rp_plan_node *nd = &p->node[h->v];
  const rp_plan_access *a = p->acc + nd->acc0;
  unsigned replay = h->calls++;
  if (__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE))
    return;
  if (nd->type == RP_OP_KERNEL) {
    rp_kargs ka = *rp_exec_args(s->x, nd->op);
    for (uint32_t k = 0; k < nd->nacc; k++)
      if (a[k].image != RP_NONE)
        ka.a[k].p = rp__cu_himg(s, a[k].image);
    uint64_t lo[3] = {0, 0, 0};
    nd->kernel->cpu(&ka, lo, ka.n);
  } else if (nd->type == RP_OP_HOST) {
    for (uint32_t k = 0; k < nd->nacc; k++)
      h->ptrs[k] = rp__cu_himg(s, a[k].image);
    nd->host_fn(nd->host_user, h->ptrs);
  } else {
    char *dst = rp__cu_himg(s, a[1].image);
    const char *src = rp__cu_himg(s, a[0].image);
    const uint64_t *iv = p->iv + 2 * (uint64_t)a[1].iv0;
    for (uint32_t i = 0; i < a[1].niv; i++)
      memmove(dst + iv[2 * i], src + iv[2 * i], iv[2 * i + 1]);
    return;
  }
  char msg[256];
  int code = rp_task_take_failure(msg, sizeof msg);
  if (!code)
    return;
  pthread_mutex_lock(&s->fmu);
  if (!s->failed) {
    s->fnode = h->v;
    s->freplay = replay;
    s->fcode = code;
    memcpy(s->fmsg, msg, sizeof msg);
    __atomic_store_n(&s->failed, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&s->fmu);
}

void CUDART_CB rp__cu_host_tramp(void *arg) {
  cu_host *h = arg;
  run_host(h->s, h);
}

/* Pins buffer b's current user array; memory already registered (by the
 * user or as part of another buffer) or not registrable stays as it is:
 * copies then still work, only less asynchronously. */
void rp__cu_pin(cu_state *s, rp_buf b) {
  void *h = rp_exec_host(s->x)[b];
  s->pinned[b] = NULL;
  if (!h || b >= s->p->nbuf)
    return;
  struct cudaPointerAttributes pa;
  if (cudaPointerGetAttributes(&pa, h) == cudaSuccess &&
      pa.type != cudaMemoryTypeUnregistered)
    return;
  (void)cudaGetLastError();
  /* Mapped too: run_until's loop kernel reads the predicate there. */
  if (cudaHostRegister(h, s->p->buf[b].desc.bytes,
                       cudaHostRegisterPortable | cudaHostRegisterMapped) ==
      cudaSuccess)
    s->pinned[b] = h;
  else
    (void)cudaGetLastError();
}

void rp__cu_unpin(cu_state *s, rp_buf b) {
  if (s->pinned[b])
    cudaHostUnregister(s->pinned[b]);
  s->pinned[b] = NULL;
}

/* Whether access a's byte runs cover its span [offset, offset + bytes)
 * without a gap: then one contiguous copy moves it. */
static bool contiguous(const rp_plan *p, const rp_plan_access *a) {
  const uint64_t *iv = p->iv + 2 * (uint64_t)a->iv0;
  uint64_t sum = 0;
  for (uint32_t i = 0; i < a->niv; i++)
    sum += iv[2 * i + 1];
  return sum == a->bytes;
}

/* Fills one copy piece for access a (a region of buffer d, as the plan
 * resolved it) from src to dst (both images laid out as the buffer).
 * Bytes without a gap are one contiguous range; other regions are boxes
 * (the only shape with gaps), copied as a 3-d pitched copy of the box
 * between the region's first and last byte. */
static void piece(cu_copy *c, unsigned i, const rp_plan *pl,
                  const rp_plan_access *a, const rp_buffer_desc *d, char *dst,
                  char *src) {
  cu_piece *p = &c->pc[i];
  memset(p, 0, sizeof *p);
  unsigned nd = d->ndims ? d->ndims : 1;
  if (nd < 2 || contiguous(pl, a)) {
    p->dst = dst + a->offset;
    p->src = src + a->offset;
    p->bytes = a->bytes;
    return;
  }
  uint64_t el = d->elem ? d->elem : 1, row = d->dims[nd - 1] * el;
  uint64_t plane = nd == 3 ? d->dims[1] * row : d->bytes;
  uint64_t first = a->offset, last = a->offset + a->bytes - 1;
  uint64_t lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
  /* the box's corners: its first and last byte's positions */
  if (nd == 3) {
    lo[0] = first / plane;
    hi[0] = last / plane + 1;
  }
  lo[nd - 2] = (first % plane) / row;
  hi[nd - 2] = (last % plane) / row + 1;
  lo[nd - 1] = (first % row) / el;
  hi[nd - 1] = (last % row) / el + 1;
  p->is3d = true;
  struct cudaMemcpy3DParms *q = &p->p3;
  size_t ysz = nd == 3 ? d->dims[1] : d->dims[0];
  q->srcPtr = make_cudaPitchedPtr(src, row, row, ysz);
  q->dstPtr = make_cudaPitchedPtr(dst, row, row, ysz);
  unsigned xd = nd - 1;
  /* The pointers at the box's first byte, the position 0: a device
   * image may hold only the bytes its accesses touch, so its base
   * need not point into its allocation (cudaMemcpyDefault looks the
   * pointer up). */
  q->srcPtr.ptr = src + first;
  q->dstPtr.ptr = dst + first;
  q->srcPos = make_cudaPos(0, 0, 0);
  q->dstPos = q->srcPos;
  q->extent = make_cudaExtent((hi[xd] - lo[xd]) * el, hi[xd - 1] - lo[xd - 1],
                              nd == 3 ? hi[0] - lo[0] : 1);
  q->kind = cudaMemcpyDefault;
}

/* A memcpy node's pieces from the plan's source and destination images
 * and the region the plan resolved. */
void rp__cu_copy_params(cu_state *s, uint32_t v) {
  cu_op *o = &s->op[v];
  const rp_plan_node *nd = &s->p->node[v];
  const rp_plan_access *a = s->p->acc + nd->acc0;
  const rp_buffer_desc *d = &s->p->buf[s->p->image[a[0].image].buf].desc;
  char *src = rp__cu_addr(s, a[0].image), *dst = rp__cu_addr(s, a[1].image);
  if (o->empty) {
    o->cp.npc = 0;
  } else if (o->cp.stage) {
    piece(&o->cp, 0, s->p, &a[0], d, o->cp.stage, src);
    piece(&o->cp, 1, s->p, &a[0], d, dst, o->cp.stage);
    o->cp.npc = 2;
  } else {
    piece(&o->cp, 0, s->p, &a[0], d, dst, src);
    o->cp.npc = 1;
  }
}

/* Logical devices map onto physical ones: the user's map, else the
 * identity; a GPU device past the machine's GPUs is an error unless the
 * user asked for folding (device_fold: logical d on GPU d mod count). */
static rp_status map_devices(cu_state *s, const rp_exec_opts *eo) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count <= 0)
    return e != cudaSuccess ? rp__cu_fail(s, e, RP_NONE, "device count")
                            : RP_ENODEV;
  unsigned nd = s->ndev ? s->ndev : 1, folded = 0, top = 0;
  s->phys = calloc(nd, sizeof *s->phys);
  if (!s->phys)
    return RP_ENOMEM;
  for (unsigned i = 0; i < nd; i++) {
    bool gpu = i >= s->p->ndev || s->p->dev[i].native;
    int p = (int)i < count ? (int)i : gpu ? (int)(i % (unsigned)count) : 0;
    if (eo->device_map) {
      if (i >= eo->ndevice_map) {
        rp_exec_set_error(s->x,
                          "cuda: device_map has %u entries, the "
                          "graph uses %u devices",
                          eo->ndevice_map, nd);
        return RP_EINVAL;
      }
      p = eo->device_map[i];
      if (p < 0 || p >= count) {
        rp_exec_set_error(s->x, "cuda: device_map[%u] = %d, but %d GPU(s)", i,
                          p, count);
        return RP_EINVAL;
      }
    } else if (gpu && (int)i >= count) {
      if (!eo->device_fold) {
        rp_exec_set_error(s->x,
                          "cuda: the graph runs on logical device %u "
                          "but this machine has %d GPU(s): map the devices "
                          "(rp_exec_opts.device_map) or allow folding them "
                          "onto the GPUs present (rp_exec_opts.device_fold)",
                          i, count);
        return RP_ENODEV;
      }
      folded++;
      top = i;
    }
    s->phys[i] = p;
    if (p != s->phys[0] && gpu)
      s->multi = true;
  }
  if (folded)
    rp_exec_set_notice(s->x,
                       "cuda: %u logical GPU device(s) folded "
                       "onto the %d GPU(s) present (device_fold): logical "
                       "device d runs on GPU d mod %d, up to device %u",
                       folded, count, count, top);
  s->phys0 = s->phys[0];
  return RP_OK;
}

/* Device images on their GPU, host-memory images we own pinned, both
 * zeroed; user arrays pinned where possible. A device image holds only
 * the bytes [lo, hi) the plan's accesses touch: s->img[i] is its base
 * moved back by lo (s->img_alloc[i] the allocation), so that a device
 * holding a block of rows and its halos does not hold the whole grid. */
/* The copies writing device image i, when only copies from one host
 * image write it, all before any other access of it, covering the bytes
 * [lo, hi) its accesses touch: their source image in *host, 1; else 0. */
static int copied_only(const cu_state *s, uint32_t i, uint32_t *host) {
  const rp_plan *p = s->p;
  const rp_plan_image *im = &p->image[i];
  uint64_t lo = im->lo, at = lo;
  int others = 0;
  *host = RP_NONE;
  if (im->lo >= im->hi || (im->flags & RP_IMAGE_HOST_MEMORY))
    return 0;
  for (uint32_t v = 0; v < p->nnode; v++) {
    const rp_plan_node *nd = &p->node[v];
    const rp_plan_access *a = p->acc + nd->acc0;
    for (uint32_t k = 0; k < nd->nacc; k++) {
      if (a[k].image != i)
        continue;
      bool copy_in = nd->type == RP_OP_COPY_H2D && k == 1 &&
                     (p->image[a[0].image].flags & RP_IMAGE_HOST_MEMORY);
      if (!copy_in) {
        if (a[k].mode & RP_OUT)
          return 0; /* written by something else */
        others = 1;
        continue;
      }
      if (others || (*host != RP_NONE && *host != a[0].image) ||
          a[0].offset != a[1].offset || a[0].bytes != a[1].bytes ||
          a[1].niv != 1)
        return 0;
      *host = a[0].image;
      /* Copies in program order; their ranges must cover [lo, hi) from
       * the start without a gap (a later one may repeat bytes). */
      if (a[1].offset > at)
        return 0;
      if (a[1].offset + a[1].bytes > at)
        at = a[1].offset + a[1].bytes;
    }
  }
  if (*host == RP_NONE || at < im->hi)
    return 0;
  /* Nothing writes the host image they read. */
  for (uint32_t k = 0; k < p->nacc; k++)
    if (p->acc[k].image == *host && (p->acc[k].mode & RP_OUT))
      return 0;
  return 1;
}

/* Logical devices folded onto one GPU: an image of a buffer that only
 * copies from a host image write (copied_only) holds, wherever it is
 * read, the bytes an earlier image of the same buffer on the same GPU
 * holds when that one is written the same way and its copies cover every
 * range the later one's do. The later image then aliases it (no memory of
 * its own), and its copies move nothing: each becomes an empty node after
 * the earlier image's copy that covers it (matmul_rows' B, copied to each
 * logical device, is copied once per GPU). Graph mode only: the streams
 * modes keep every copy. */
static rp_status fold_images(cu_state *s, uint32_t *alias) {
  const rp_plan *p = s->p;
  for (uint32_t i = 0; i < p->nimage; i++)
    alias[i] = RP_NONE;
  if (s->mode != CU_GRAPH || s->ndev < 2)
    return RP_OK;
  uint32_t *host = malloc(sizeof *host * (p->nimage + 1));
  if (!host)
    return RP_ENOMEM;
  for (uint32_t i = 0; i < p->nimage; i++)
    if (!copied_only(s, i, &host[i]))
      host[i] = RP_NONE;
  for (uint32_t j = 0; j < p->nimage; j++) {
    if (host[j] == RP_NONE)
      continue;
    for (uint32_t i = 0; i < j && alias[j] == RP_NONE; i++) {
      if (host[i] != host[j] || alias[i] != RP_NONE ||
          p->image[i].buf != p->image[j].buf ||
          s->phys[p->image[i].space] != s->phys[p->image[j].space] ||
          p->image[i].lo > p->image[j].lo || p->image[i].hi < p->image[j].hi)
        continue;
      alias[j] = i;
    }
  }
  free(host);
  return RP_OK;
}

/* Copy v into an aliased image: the earlier copy into its target that
 * covers its bytes (fold_images), whose node it then follows. */
static void fold_copy(cu_state *s, uint32_t v, const uint32_t *alias) {
  const rp_plan *p = s->p;
  const rp_plan_access *a = p->acc + p->node[v].acc0;
  uint32_t tgt = alias[a[1].image];
  if (p->node[v].type != RP_OP_COPY_H2D || tgt == RP_NONE)
    return;
  for (uint32_t u = 0; u < v; u++) {
    const rp_plan_access *b = p->acc + p->node[u].acc0;
    if (p->node[u].type == RP_OP_COPY_H2D && b[1].image == tgt &&
        b[0].image == a[0].image && b[1].offset <= a[1].offset &&
        b[1].offset + b[1].bytes >= a[1].offset + a[1].bytes) {
      s->op[v].empty = true;
      s->op[v].also = u;
      return;
    }
  }
}

static rp_status alloc_images(cu_state *s, const uint32_t *alias) {
  const rp_plan *p = s->p;
  s->img = calloc(p->nimage + 1, sizeof *s->img);
  s->img_host = calloc(p->nimage + 1, sizeof *s->img_host);
  s->img_alloc = calloc(p->nimage + 1, sizeof *s->img_alloc);
  s->pinned = calloc(s->nb + 1, sizeof *s->pinned);
  if (!s->img || !s->img_host || !s->img_alloc || !s->pinned)
    return RP_ENOMEM;
  double t0 = t_start(s);
  for (rp_buf b = 0; b < s->nb; b++)
    rp__cu_pin(s, b);
  for (uint32_t i = 0; i < p->nimage; i++) {
    const rp_plan_image *im = &p->image[i];
    if (im->flags & RP_IMAGE_USER)
      continue;
    if (alias[i] != RP_NONE) {
      s->img[i] = s->img[alias[i]];
      continue;
    }
    size_t bytes = im->bytes ? im->bytes : 1;
    cudaError_t e;
    if (im->flags & RP_IMAGE_HOST_MEMORY) {
      e = cudaMallocHost(&s->img[i], bytes);
      if (e == cudaSuccess) {
        s->img_host[i] = true;
        memset(s->img[i], 0, bytes);
      }
    } else {
      uint64_t lo = im->lo < im->hi ? im->lo : 0;
      bytes = im->lo < im->hi ? im->hi - im->lo : 1;
      e = cudaSetDevice(s->phys[im->space]);
      if (e == cudaSuccess)
        e = cudaMalloc(&s->img_alloc[i], bytes);
      if (e == cudaSuccess)
        e = cudaMemset(s->img_alloc[i], 0, bytes);
      if (s->img_alloc[i])
        s->img[i] = (void *)((uintptr_t)s->img_alloc[i] - lo);
    }
    if (e != cudaSuccess) {
      const rp_buffer_desc *d = &p->buf[im->buf].desc;
      if (s->img_alloc[i])
        cudaFree(s->img_alloc[i]);
      s->img_alloc[i] = NULL;
      s->img[i] = NULL;
      rp_exec_set_error(s->x,
                        "cuda: allocating %llu bytes of \"%s\" %s "
                        "%d: %s",
                        (unsigned long long)im->bytes, d->name,
                        im->flags & RP_IMAGE_HOST_MEMORY
                            ? "in host memory for space"
                            : "on device",
                        im->space, cudaGetErrorString(e));
      (void)cudaGetLastError();
      return RP_EBACKEND;
    }
  }
  t_end(s, t0, &s->t_mem);
  return RP_OK;
}

static dim3 mkdim(unsigned x, unsigned y, unsigned z) {
  dim3 d = {x, y, z};
  return d;
}

/* Threads per block for the kernel of @p o by occupancy (cached per
 * function and device); 0 when the occupancy API cannot say. */
static unsigned occ_threads(cu_state *s, cu_op *o, double *occ) {
  const void *fn = o->fn;
  if (!fn)
    return 0;
  if (s->geo_fn == fn && s->geo_dev == o->phys) {
    *occ = s->geo_occ;
    return s->geo_thr;
  }
  struct cudaFuncAttributes fa;
  int smt = 0, blocks[RP_CU_NCAND] = {0};
  unsigned nc = 0;
  double t0 = t_start(s);
  if (cudaSetDevice(o->phys) != cudaSuccess ||
      cudaFuncGetAttributes(&fa, fn) != cudaSuccess ||
      cudaDeviceGetAttribute(&smt, cudaDevAttrMaxThreadsPerMultiProcessor,
                             o->phys) != cudaSuccess) {
    (void)cudaGetLastError();
    t_end(s, t0, &s->t_attr);
    return 0;
  }
  while (nc < RP_CU_NCAND &&
         rp__cu_cand[nc] <= (unsigned)fa.maxThreadsPerBlock &&
         cudaOccupancyMaxActiveBlocksPerMultiprocessor(
             &blocks[nc], fn, (int)rp__cu_cand[nc], 0) == cudaSuccess)
    nc++;
  (void)cudaGetLastError();
  t_end(s, t0, &s->t_attr);
  unsigned t = rp__cu_pick_threads(blocks, nc, smt, o->k->hint, occ);
  s->geo_fn = fn;
  s->geo_dev = o->phys;
  s->geo_thr = t;
  s->geo_occ = *occ;
  return t;
}

/* The block shape: the kernel's own, else RP_CUDA_BLOCK="x[,y[,z]]" (for
 * sweeps: every kernel without its own shape), else threads per block by
 * occupancy and the kernel's hint, shaped by the index space's rank
 * (rp_cuda_geom.h); without the occupancy API, 256 threads so shaped. */
static void geometry(cu_state *s, cu_op *o, const rp_kargs *a,
                     const unsigned eb[3]) {
  const unsigned *bk = o->k->block;
  o->occ = -1;
  if (eb[0] && eb[1] && eb[2] && !(bk[0] || bk[1] || bk[2])) {
    o->block = mkdim(eb[0], eb[1], eb[2]);
    o->why = "RP_CUDA_BLOCK";
  } else if (bk[0] || bk[1] || bk[2]) {
    o->block = mkdim(bk[0] ? bk[0] : 1, bk[1] ? bk[1] : 1, bk[2] ? bk[2] : 1);
    o->why = "kernel's own";
  } else {
    double occ = -1;
    unsigned t = occ_threads(s, o, &occ), sh[3];
    rp__cu_shape(t ? t : 256, a->n, sh);
    o->block = mkdim(sh[0], sh[1], sh[2]);
    o->occ = t ? occ : -1;
    o->why = !t                                   ? "default"
             : o->k->hint & RP_HINT_MEMORY_BOUND  ? "occupancy, memory-bound"
             : o->k->hint & RP_HINT_COMPUTE_BOUND ? "occupancy, compute-bound"
                                                  : "occupancy";
  }
  uint64_t g[3], b[3] = {o->block.x, o->block.y, o->block.z};
  for (int i = 0; i < 3; i++) {
    g[i] = (a->n[i] + b[i] - 1) / b[i];
    if (g[i] > UINT32_MAX)
      g[i] = UINT32_MAX; /* the launch then fails and says so */
  }
  o->grid = mkdim((unsigned)g[0], (unsigned)g[1], (unsigned)g[2]);
}

/* Captures a host wrapper's work on a scratch stream into a graph. */
cudaError_t rp__cu_capture(cu_state *s, uint32_t n, cudaGraph_t *out) {
  cudaStream_t cs;
  *out = NULL;
  cudaError_t e = cudaSetDevice(s->op[n].phys);
  if (e == cudaSuccess)
    e = cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking);
  if (e != cudaSuccess)
    return e;
  e = cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal);
  int rc = e == cudaSuccess ? s->op[n].k->cuda_host(&s->kargs[n], cs) : 0;
  cudaError_t e2 =
      e == cudaSuccess ? cudaStreamEndCapture(cs, out) : cudaSuccess;
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
static rp_status check_launch(cu_state *s, uint32_t n) {
  cu_op *o = &s->op[n];
  cudaError_t e = cudaSuccess;
  /* Device limits and function attributes are looked up once, not per
   * node: cudaGetDeviceProperties alone costs more than a node (and only
   * the lookups are timed: RP_CUDA_TIMES reads no clock per node). */
  double t0 = s->lim_dev != o->phys || s->lim_fn != o->fn ? t_start(s) : 0;
  if (s->lim_dev != o->phys) {
    static const enum cudaDeviceAttr at[6] = {
        cudaDevAttrMaxBlockDimX, cudaDevAttrMaxBlockDimY,
        cudaDevAttrMaxBlockDimZ, cudaDevAttrMaxGridDimX,
        cudaDevAttrMaxGridDimY,  cudaDevAttrMaxGridDimZ};
    for (int i = 0; i < 6 && e == cudaSuccess; i++)
      e = cudaDeviceGetAttribute(&s->lim[i], at[i], o->phys);
    s->lim_dev = o->phys;
    s->lim_fn = NULL;
  }
  if (e == cudaSuccess && s->lim_fn != o->fn) {
    struct cudaFuncAttributes fa;
    e = cudaFuncGetAttributes(&fa, o->fn);
    s->lim_fn = o->fn;
    s->lim_thr = fa.maxThreadsPerBlock;
  }
  if (t0 > 0)
    t_end(s, t0, &s->t_attr);
  if (e != cudaSuccess) {
    s->lim_dev = -1;
    return rp__cu_fail(s, e, n, "checking the kernel");
  }
  unsigned long long t =
      (unsigned long long)o->block.x * o->block.y * o->block.z;
  bool ok =
      t <= (unsigned long long)s->lim_thr &&
      o->block.x <= (unsigned)s->lim[0] && o->block.y <= (unsigned)s->lim[1] &&
      o->block.z <= (unsigned)s->lim[2] && o->grid.x <= (unsigned)s->lim[3] &&
      o->grid.y <= (unsigned)s->lim[4] && o->grid.z <= (unsigned)s->lim[5];
  return ok ? RP_OK
            : rp__cu_fail(s, cudaErrorInvalidConfiguration, n,
                          "launch configuration");
}

/* Which engine runs a copy: host memory on both sides is the host's. */
static cu_kind copy_kind(const cu_state *s, const rp_plan_node *nd) {
  const rp_plan_access *a = s->p->acc + nd->acc0;
  unsigned f0 = s->p->image[a[0].image].flags;
  unsigned f1 = s->p->image[a[1].image].flags;
  return (f0 & f1 & RP_IMAGE_HOST_MEMORY) ? CU_HOSTCOPY : CU_MEMCPY;
}

/* The device whose stream a node goes to: a GPU node's own; host nodes
 * and host-side copies on the main device. */
static int node_phys(const cu_state *s, const rp_plan_node *nd, int dst) {
  int d = dst ? nd->dst_device : nd->device;
  if (d < 0 || (unsigned)d >= s->ndev || !s->p->dev[d].native)
    return s->phys0;
  return s->phys[d];
}

static rp_status setup_copy(cu_state *s, uint32_t v) {
  cu_op *o = &s->op[v];
  const rp_plan_node *nd = &s->p->node[v];
  const rp_plan_access *a = s->p->acc + nd->acc0;
  bool dev0 = !(s->p->image[a[0].image].flags & RP_IMAGE_HOST_MEMORY);
  bool dev1 = !(s->p->image[a[1].image].flags & RP_IMAGE_HOST_MEMORY);
  /* The stream of the GPU side; a peer copy runs on its source's. */
  int sp = dev0 ? s->p->image[a[0].image].space : s->p->image[a[1].image].space;
  o->phys = s->phys[sp];
  o->dst_phys = dev1 ? s->phys[s->p->image[a[1].image].space] : o->phys;
  if (dev0 && dev1 && o->phys != o->dst_phys) {
    int x = 0, y = 0;
    cudaDeviceCanAccessPeer(&x, o->dst_phys, o->phys);
    cudaDeviceCanAccessPeer(&y, o->phys, o->dst_phys);
    if (x && y) {
      cudaSetDevice(o->dst_phys);
      cudaDeviceEnablePeerAccess(o->phys, 0);
      cudaSetDevice(o->phys);
      cudaDeviceEnablePeerAccess(o->dst_phys, 0);
      (void)cudaGetLastError(); /* already enabled is fine */
    } else {
      cudaError_t e =
          cudaMallocHost(&o->cp.stage, s->p->image[a[0].image].bytes);
      if (e != cudaSuccess) {
        o->cp.stage = NULL;
        return rp__cu_fail(s, e, v, "staging buffer");
      }
    }
  }
  rp__cu_copy_params(s, v);
  return RP_OK;
}

/* Whether kernel op o may read its block from the argument table: graph
 * mode on one GPU and an entry by pointer that belongs to the kernel's
 * by-value entry (in every cuda_update mode: "node" and "graph" no
 * longer keep set_scalar on CUDA's setters). */
static bool table_capable(const cu_state *s, const cu_op *o) {
  const rp_cuda_args *ca = o->k->cuda_args;
  return s->mode == CU_GRAPH && !s->multi && ca && o->k->cuda &&
         ca->cuda == o->k->cuda && ca->cuda_args;
}

/* The argument table: one entry per kernel node that can read its block
 * from it, in device memory (such a node's only parameter is then the
 * entry's address) and in host memory (what set_scalar writes), each entry
 * holding its node's block as it is now. Pageable, not pinned: pinning
 * costs more than the table is worth (a copy from pageable memory is
 * staged before cudaMemcpyAsync returns, so set_scalar may write the host
 * copy again at once). cuda_update "table": allocated and copied over at
 * instantiate; auto: at the first set_scalar of such a node, and only the
 * entries of the nodes moved to it go over (rp__cu_flush). */
cudaError_t rp__cu_table_alloc(cu_state *s) {
  if (s->dargs || !s->nslot)
    return cudaSuccess;
  double t0 = t_start(s);
  size_t bytes = sizeof *s->hargs * s->nslot;
  s->hargs = malloc(bytes);
  cudaError_t e =
      s->hargs ? cudaSetDevice(s->phys0) : cudaErrorMemoryAllocation;
  if (e == cudaSuccess)
    e = cudaMalloc((void **)&s->dargs, bytes);
  if (e == cudaSuccess) {
    for (uint32_t v = 0; v < s->nn; v++)
      if (s->slot[v] != RP_NONE)
        s->hargs[s->slot[v]] = s->kargs[v];
    s->tlo = s->thi = 0;
    if (s->update == CU_UPD_TABLE)
      e = cudaMemcpy(s->dargs, s->hargs, bytes, cudaMemcpyHostToDevice);
  }
  if (e != cudaSuccess) {
    if (s->dargs)
      cudaFree(s->dargs);
    s->dargs = NULL;
    free(s->hargs);
    s->hargs = NULL;
  }
  t_end(s, t0, &s->t_mem);
  return e;
}

/* A slot per kernel node that can read its block from the table; the
 * table itself now only for cuda_update "table". */
static rp_status setup_table(cu_state *s) {
  s->slot = malloc(sizeof *s->slot * (s->nn + 1));
  if (!s->slot)
    return RP_ENOMEM;
  s->nslot = 0;
  for (uint32_t v = 0; v < s->nn; v++)
    s->slot[v] = s->op[v].can_ind ? s->nslot++ : RP_NONE;
  cudaError_t e =
      s->update == CU_UPD_TABLE ? rp__cu_table_alloc(s) : cudaSuccess;
  return e ? rp__cu_fail(s, e, RP_NONE, "allocating the argument table")
           : RP_OK;
}

static rp_status setup_ops(cu_state *s, const uint32_t *alias) {
  const rp_plan *p = s->p;
  s->op = calloc(s->nn + 1, sizeof *s->op);
  /* Not zeroed: only GPU kernels' rows are used, each set whole below
   * (zeroing 856 bytes per node was half the backend's own work in
   * rp_exec_create, callgrind on the 2 000-kernel chain). */
  s->kargs = malloc((s->nn + 1) * sizeof *s->kargs);
  if (!s->op || !s->kargs)
    return RP_ENOMEM;
  /* RP_CUDA_BLOCK="x[,y[,z]]", read once. */
  const char *env = getenv("RP_CUDA_BLOCK");
  unsigned eb[3] = {0, 1, 1};
  if (!env || sscanf(env, "%u,%u,%u", &eb[0], &eb[1], &eb[2]) < 1)
    eb[0] = 0;
  for (uint32_t v = 0; v < s->nn; v++) {
    cu_op *o = &s->op[v];
    const rp_plan_node *nd = &p->node[v];
    const void *imp;
    o->host.s = s;
    o->host.v = v;
    o->ldev = nd->device < 0 ? 0 : nd->device;
    o->phys = node_phys(s, nd, 0);
    o->dst_phys = o->phys;
    if (nd->type == RP_OP_KERNEL && (nd->flags & RP_PLAN_ON_HOST)) {
      o->kind = CU_CPU;
      o->phys = s->phys0;
    } else if (nd->type == RP_OP_KERNEL) {
      o->kind = CU_KERNEL;
      o->k = nd->kernel;
      if (!o->k || (!o->k->cuda && !o->k->cuda_host)) {
        rp_exec_set_error(s->x,
                          "cuda: kernel op %u \"%s\" has no CUDA "
                          "implementation",
                          nd->op, op_name(s, v));
        return RP_ENOKERNEL;
      }
      s->kargs[v] = *rp_exec_args(s->x, nd->op);
      for (uint32_t k = 0; k < nd->nacc; k++) {
        uint32_t im = p->acc[nd->acc0 + k].image;
        if (im != RP_NONE)
          s->kargs[v].a[k].p = s->img[im];
      }
      rp__cu_entry(s, o);
      geometry(s, o, &s->kargs[v], eb);
      o->can_ind = table_capable(s, o);
      o->ind = o->can_ind && s->update == CU_UPD_TABLE;
    } else if (nd->type == RP_OP_HOST) {
      o->kind = CU_HOSTTASK;
      o->phys = s->phys0;
      o->host.ptrs = calloc(nd->nacc + 1, sizeof(void *));
      if (!o->host.ptrs)
        return RP_ENOMEM;
      if (!nd->host_fn) {
        rp_exec_set_error(s->x,
                          "cuda: host task \"%s\" has no function "
                          "(graph loaded from a file)",
                          op_name(s, v));
        return RP_ENOKERNEL;
      }
    } else if ((imp = rp__cu_import_copy(p, v)) != NULL) {
      /* an imported CUDA copy: moves what its node moved */
      o->kind = CU_KERNEL;
      o->k = rp__cu_import_kernel();
      s->kargs[v].a[0].p = (void *)imp;
    } else if ((o->kind = copy_kind(s, nd)) == CU_HOSTCOPY) {
      o->phys = s->phys0;
    } else {
      fold_copy(s, v, alias);
      rp_status st = setup_copy(s, v);
      if (st != RP_OK)
        return st;
    }
  }
  return setup_table(s);
}

static bool host_node(const cu_op *o) {
  return o->kind == CU_CPU || o->kind == CU_HOSTTASK || o->kind == CU_HOSTCOPY;
}

/* Adds node v's graph node(s) after the last nodes of its preds. */
rp_status rp__cu_add_node(cu_state *s, cudaGraph_t gr, uint32_t v,
                          cudaGraphNode_t *deps) {
  cu_op *o = &s->op[v];
  const rp_plan_node *nd = &s->p->node[v];
  uint32_t np = 0;
  for (uint32_t i = 0; i < nd->npred; i++) {
    uint32_t u = s->p->pred[nd->pred0 + i];
    if (s->lskip && s->lskip[u])
      continue; /* in another section of a loop graph */
    cu_op *q = &s->op[u];
    deps[np++] = q->node[q->cp.npc == 2];
  }
  if (o->empty && !(s->lskip && s->lskip[o->also]))
    deps[np++] = s->op[o->also].node[s->op[o->also].cp.npc == 2];
  cudaError_t e = s->multi ? cudaSetDevice(o->phys) : cudaSuccess;
  if (e != cudaSuccess)
    return rp__cu_fail(s, e, v, "selecting the device");
  if (o->kind == CU_KERNEL && o->k->cuda) {
    /* The table's entry (its address is the one parameter), else the
     * block by value. */
    rp_kargs tmp;
    void *ent = o->ind ? (void *)&s->dargs[s->slot[v]] : NULL;
    void *args[1] = {o->ind ? (void *)&ent
                            : rp__cu_byval(o, &s->kargs[v], &tmp)};
    const void *fn = o->ind ? o->k->cuda_args->cuda_args : o->fn;
    struct cudaKernelNodeParams kp = {(void *)fn, o->grid, o->block,
                                      0,          args,    NULL};
    e = cudaGraphAddKernelNode(&o->node[0], gr, deps, np, &kp);
    return e ? rp__cu_fail(s, e, v, "adding kernel node") : RP_OK;
  }
  if (o->kind == CU_MEMCPY && o->cp.npc == 0) {
    e = cudaGraphAddEmptyNode(&o->node[0], gr, deps, np);
    return e ? rp__cu_fail(s, e, v, "adding an empty node") : RP_OK;
  }
  if (o->kind == CU_KERNEL && rp__cu_is_import(o->k)) {
    /* an imported CUDA node (rp_cuda_import.c): added as it was */
    e = rp__cu_import_add(&o->node[0], gr, deps, np, &s->kargs[v]);
    return e ? rp__cu_fail(s, e, v, "adding an imported node") : RP_OK;
  }
  if (o->kind == CU_KERNEL) {
    cudaGraph_t child;
    e = rp__cu_capture(s, v, &child);
    if (e == cudaSuccess) {
      e = cudaGraphAddChildGraphNode(&o->node[0], gr, deps, np, child);
      cudaGraphDestroy(child);
    }
    s->has_child = true;
    return e ? rp__cu_fail(s, e, v, "capturing the host wrapper") : RP_OK;
  }
  if (host_node(o)) {
    struct cudaHostNodeParams hp = {rp__cu_host_tramp, &o->host};
    e = cudaGraphAddHostNode(&o->node[0], gr, deps, np, &hp);
    return e ? rp__cu_fail(s, e, v, "adding host node") : RP_OK;
  }
  for (unsigned i = 0; i < o->cp.npc && e == cudaSuccess; i++) {
    cu_piece *pc = &o->cp.pc[i];
    const cudaGraphNode_t *d = i ? &o->node[0] : deps;
    size_t ndp = i ? 1 : np;
    if (pc->is3d)
      e = cudaGraphAddMemcpyNode(&o->node[i], gr, d, ndp, &pc->p3);
    else
      e = cudaGraphAddMemcpyNode1D(&o->node[i], gr, d, ndp, pc->dst, pc->src,
                                   pc->bytes, cudaMemcpyDefault);
  }
  return e ? rp__cu_fail(s, e, v, "adding memcpy node") : RP_OK;
}

/* Per user buffer with host writers, an event to wait on: created here,
 * recorded by the graph (or the streams) once its writers are done. */
static rp_status buffer_events(cu_state *s) {
  const rp_plan *p = s->p;
  s->bev = calloc(s->nb + 1, sizeof *s->bev);
  if (!s->bev)
    return RP_ENOMEM;
  cudaSetDevice(s->phys0);
  for (rp_buf b = 0; b < s->nb; b++) {
    if (p->hw_off[b] == p->hw_off[b + 1])
      continue;
    cudaError_t e =
        cudaEventCreateWithFlags(&s->bev[b], cudaEventDisableTiming);
    if (e != cudaSuccess) {
      s->bev[b] = NULL;
      return rp__cu_fail(s, e, RP_NONE, "creating a buffer's event");
    }
    for (uint32_t i = p->hw_off[b]; i < p->hw_off[b + 1]; i++)
      s->op[p->host_writers[i]].need_event = true;
  }
  return RP_OK;
}

static rp_status build_graph(cu_state *s) {
  const rp_plan *p = s->p;
  uint32_t maxd = 2; /* + an empty copy's earlier copy */
  for (uint32_t v = 0; v < s->nn; v++)
    if (p->node[v].npred + 1 > maxd)
      maxd = p->node[v].npred + 1;
  for (rp_buf b = 0; b < s->nb; b++)
    if (p->hw_off[b + 1] - p->hw_off[b] > maxd)
      maxd = p->hw_off[b + 1] - p->hw_off[b];
  cudaGraphNode_t *deps = malloc(sizeof *deps * maxd);
  if (!deps)
    return RP_ENOMEM;
  cudaError_t e = cudaGraphCreate(&s->graph, 0);
  rp_status st = e ? rp__cu_fail(s, e, RP_NONE, "creating the graph") : 0;
  double t0 = t_start(s), attr0 = s->t_attr;
  for (uint32_t v = 0; v < s->nn && st == RP_OK; v++) {
    if (s->op[v].kind == CU_KERNEL && s->op[v].k->cuda)
      st = check_launch(s, v);
    if (st == RP_OK)
      st = rp__cu_add_node(s, s->graph, v, deps);
  }
  t_end(s, t0, &s->t_add);
  s->t_add -= s->t_attr - attr0; /* the lookups check_launch made */
  if (s->multi)
    cudaSetDevice(s->phys0);
  for (rp_buf b = 0; b < s->nb && st == RP_OK; b++) {
    if (!s->bev[b])
      continue;
    uint32_t nd = 0;
    for (uint32_t i = p->hw_off[b]; i < p->hw_off[b + 1]; i++) {
      cu_op *q = &s->op[p->host_writers[i]];
      deps[nd++] = q->node[q->cp.npc == 2];
    }
    cudaGraphNode_t en;
    e = cudaGraphAddEventRecordNode(&en, s->graph, deps, nd, s->bev[b]);
    if (e != cudaSuccess)
      st = rp__cu_fail(s, e, RP_NONE, "adding a buffer's event node");
  }
  free(deps);
  if (st != RP_OK)
    return st;
  cudaSetDevice(s->phys0);
  t0 = t_start(s);
  e = cudaGraphInstantiate(&s->exec, s->graph, 0);
  t_end(s, t0, &s->t_inst);
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
  rp__cu_until_free(s);
  if (s->exec)
    cudaGraphExecDestroy(s->exec);
  if (s->graph)
    cudaGraphDestroy(s->graph);
  if (s->main)
    cudaStreamDestroy(s->main);
  for (uint32_t v = 0; s->op && v < s->nn; v++) {
    free(s->op[v].host.ptrs);
    if (s->op[v].cp.stage)
      cudaFreeHost(s->op[v].cp.stage);
  }
  for (rp_buf b = 0; s->bev && b < s->nb; b++)
    if (s->bev[b])
      cudaEventDestroy(s->bev[b]);
  for (uint32_t i = 0; s->img && i < s->p->nimage; i++) {
    if (s->img[i] && s->img_host[i])
      cudaFreeHost(s->img[i]);
    if (s->img_alloc && s->img_alloc[i])
      cudaFree(s->img_alloc[i]);
  }
  for (rp_buf b = 0; s->pinned && b < s->nb; b++)
    rp__cu_unpin(s, b);
  (void)cudaGetLastError();
  pthread_mutex_destroy(&s->fmu);
  free(s->hargs);
  if (s->dargs)
    cudaFree(s->dargs);
  free(s->slot);
  free(s->lwhere);
  free(s->op);
  free(s->kargs);
  free(s->img);
  free(s->img_host);
  free(s->img_alloc);
  free(s->pinned);
  free(s->bev);
  free(s->phys);
  free(s);
}

static rp_status check_options(cu_state *s, const rp_exec_opts *eo) {
  const char *m = eo->mode;
  if (!m || !strcmp(m, "graph"))
    s->mode = CU_GRAPH;
  else if (!strcmp(m, "streams"))
    s->mode = CU_STREAMS;
  else if (!strcmp(m, "serial"))
    s->mode = CU_SERIAL;
  else {
    rp_exec_set_error(s->x,
                      "cuda: unknown mode \"%s\" (graph, streams, "
                      "serial)",
                      m);
    return RP_EINVAL;
  }
  const char *u = eo->cuda_update ? eo->cuda_update : getenv("RP_CUDA_UPDATE");
  if (u && strcmp(u, "auto") && strcmp(u, "node") && strcmp(u, "whole") &&
      strcmp(u, "graph") && strcmp(u, "table") && eo->cuda_update) {
    rp_exec_set_error(s->x,
                      "cuda: unknown cuda_update \"%s\" (auto, "
                      "table, node, graph)",
                      u);
    return RP_EINVAL;
  }
  s->update = !u                                           ? CU_UPD_AUTO
              : !strcmp(u, "node")                         ? CU_UPD_NODE
              : !strcmp(u, "whole") || !strcmp(u, "graph") ? CU_UPD_WHOLE
              : !strcmp(u, "table")                        ? CU_UPD_TABLE
                                                           : CU_UPD_AUTO;
  const char *tm = getenv("RP_CUDA_TIMES");
  s->times = tm && *tm && strcmp(tm, "0");
  /* RP_CUDA_PACK=0: every by-value block whole (856 bytes), to compare */
  const char *pk = getenv("RP_CUDA_PACK");
  s->pack = !pk || strcmp(pk, "0");
  return RP_OK; /* the others: refused by the core (rp_backend.options) */
}

static rp_status cu_instantiate(rp_exec *x, const rp_plan *p, void **state) {
  *state = NULL;
  cu_state *s = calloc(1, sizeof *s);
  if (!s)
    return RP_ENOMEM;
  pthread_mutex_init(&s->fmu, NULL);
  s->x = x;
  s->p = p;
  s->lim_dev = -1;
  s->nn = p->nnode;
  s->nb = p->nbuf;
  s->ndev = p->ndev ? p->ndev : 1;
  double t_in = rp__cu_now();
  const rp_exec_opts *eo = rp_exec_opts_get(x);
  uint32_t *alias = calloc(p->nimage + 1, sizeof *alias);
  rp_status st = alias ? check_options(s, eo) : RP_ENOMEM;
  if (st == RP_OK)
    st = map_devices(s, eo);
  cudaError_t e = cudaSuccess;
  if (st == RP_OK && (e = cudaSetDevice(s->phys0)) == cudaSuccess)
    e = cudaStreamCreateWithFlags(&s->main, cudaStreamNonBlocking);
  if (st == RP_OK && e != cudaSuccess)
    st = rp__cu_fail(s, e, RP_NONE, "creating the stream");
  if (st == RP_OK)
    st = fold_images(s, alias);
  if (st == RP_OK)
    st = alloc_images(s, alias);
  double ts = t_start(s), attr0 = s->t_attr, mem0 = s->t_mem;
  if (st == RP_OK)
    st = setup_ops(s, alias);
  t_end(s, ts, &s->t_setup);
  s->t_setup -= (s->t_attr - attr0) + (s->t_mem - mem0);
  free(alias);
  if (st == RP_OK)
    st = buffer_events(s);
  if (st == RP_OK && s->nn > 0)
    st = s->mode == CU_GRAPH ? build_graph(s) : rp__cu_streams_init(s);
  double t0 = t_start(s);
  for (unsigned d = 0; st == RP_OK && d < s->ndev; d++) {
    e = cudaSetDevice(s->phys[d]);
    if (e == cudaSuccess)
      e = cudaDeviceSynchronize(); /* the images' memsets */
    if (e != cudaSuccess)
      st = rp__cu_fail(s, e, RP_NONE, "initialising device images");
  }
  t_end(s, t0, &s->t_mem);
  cudaSetDevice(s->phys ? s->phys0 : 0);
  if (st != RP_OK) {
    cu_destroy(s);
    return st;
  }
  if (s->times) {
    /* Where instantiate's time went, for bench_cuda (rp_cuda.h, "times"):
     * the nodes' setup, the loop adding them (CUDA's adds and reprise's
     * work per node), cudaGraphInstantiate, CUDA's memory calls, its
     * attribute queries, and the rest (options, devices, the stream,
     * events). */
    double tot = rp__cu_now() - t_in;
    rp_exec_set_error(
        x,
        "cuda: times: nodes %u total %.1f setup %.1f add "
        "%.1f inst %.1f mem %.1f attr %.1f other %.1f",
        s->nn, tot, s->t_setup, s->t_add, s->t_inst, s->t_mem, s->t_attr,
        tot - s->t_setup - s->t_add - s->t_inst - s->t_mem - s->t_attr);
  }
  *state = s;
  return RP_OK;
}

/* A new batch: host nodes count their runs from 0, no failure yet. */
static void batch_start(cu_state *s) {
  for (uint32_t v = 0; v < s->nn; v++)
    s->op[v].host.calls = 0;
  s->failed = 0;
}

static rp_status cu_launch(void *state, unsigned iterations) {
  cu_state *s = state;
  if (s->nn == 0 || iterations == 0)
    return RP_OK;
  batch_start(s);
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
  s->tpending = false;
  if (e != cudaSuccess)
    return rp__cu_fail(s, e, RP_NONE, "replay");
  if (s->failed)
    return rp_exec_fail_task(s->x, s->fnode, s->freplay, s->fcode, s->fmsg);
  return RP_OK;
}

/* The event recorded after buffer b's host writers in the last replay
 * launched: every launch records it again, so waiting on it waits for the
 * last one. */
static rp_status cu_wait_buffer(void *state, rp_buf b) {
  cu_state *s = state;
  if (b >= s->nb || !s->bev || !s->bev[b])
    return RP_OK;
  cudaError_t e = cudaEventSynchronize(s->bev[b]);
  return e ? rp__cu_fail(s, e, RP_NONE, "waiting for a buffer") : RP_OK;
}

static rp_status cu_kernel_block(void *state, uint32_t n,
                                 rp_kernel_block *out) {
  cu_state *s = state;
  if (n >= s->nn || s->op[n].kind != CU_KERNEL)
    return RP_EINVAL;
  const cu_op *o = &s->op[n];
  if (!o->k->cuda)
    return RP_ENOTSUP; /* a host wrapper launches its own work */
  out->block[0] = o->block.x;
  out->block[1] = o->block.y;
  out->block[2] = o->block.z;
  out->grid[0] = o->grid.x;
  out->grid[1] = o->grid.y;
  out->grid[2] = o->grid.z;
  out->occupancy = o->occ;
  out->reason = o->why;
  return RP_OK;
}

const rp_backend rp_backend_cuda = {
    .abi = RP_BACKEND_ABI,
    .name = "cuda",
    .priority = 20,
    .owns = RP_DEVICE_CUDA,
    .flags = RP_BACKEND_RESHAPE_COPIES,
    .probe = cu_probe,
    .instantiate = cu_instantiate,
    .launch = cu_launch,
    .wait = cu_wait,
    .wait_buffer = cu_wait_buffer,
    .rebind = rp__cu_rebind,
    .set_scalar = rp__cu_set_scalar,
    .profile = rp__cu_profile,
    .timeline = rp__cu_timeline,
    .destroy = cu_destroy,
    .run_until = rp__cu_run_until,
    .kernel_block = cu_kernel_block,
    .options = RP_EXEC_OPT_DEVICE_MAP | RP_EXEC_OPT_CUDA_UPDATE,
};
