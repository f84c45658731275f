/* FPGA backend for reprise replay over XRT's native C API: buffer objects,
 * syncs and one prepared run per kernel op and compute unit, submitted in
 * dependency order and completed by one polling loop. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rp_xrt_state.h"

#define HW_SHIM "libxrt_core.so.2"
#define NOOP_SHIM "libxrt_noop.so.2"

static int emulation_on(void) {
  const char *e = getenv("RP_XRT_EMULATE");
  return e && e[0] && strcmp(e, "0") != 0;
}

/* Load the shim XRT will use before any XRT call, so that XRT never looks
 * for XILINX_XRT (which aborts the process when unset). The handle is kept
 * for the life of the process: XRT cannot be unloaded safely. */
static rp_status load_shim(int emulate, char *err, size_t len) {
  static const char *const shims[] = {HW_SHIM, NOOP_SHIM,
                                      "libxrt_swemu.so.2",
                                      "libxrt_hwemu.so.2"};
  const char *loaded = NULL;
  for (size_t i = 0; i < sizeof shims / sizeof shims[0] && !loaded; i++) {
    void *h = dlopen(shims[i], RTLD_NOW | RTLD_NOLOAD);
    if (h) {
      loaded = shims[i];
      dlclose(h);
    }
  }
  if (loaded) {
    if (emulate && strcmp(loaded, NOOP_SHIM) != 0) {
      snprintf(err, len, "xrt: noop emulation requested (RP_XRT_EMULATE) "
               "but this process already loaded the XRT shim %s", loaded);
      return RP_ENODEV;
    }
    return RP_OK;
  }
  const char *want = emulate ? NOOP_SHIM : HW_SHIM;
  if (!dlopen(want, RTLD_NOW | RTLD_GLOBAL)) {
    const char *d = dlerror();
    snprintf(err, len, "xrt: cannot load the XRT shim %s: %s", want,
             d ? d : "unknown error");
    return RP_ENODEV;
  }
  return RP_OK;
}

static rp_status xrt_probe(void) {
  char err[256];
  int emu = emulation_on();
  rp_status s = load_shim(emu, err, sizeof err);
  if (s != RP_OK) {
    rp__set_last_error(err);
    return s;
  }
  xrtDeviceHandle d = xrtDeviceOpen(0);
  if (!d) {
    rp__set_last_error(emu ? "xrt: the noop shim opened no device"
                           : "xrt: no FPGA device 0 (XRT hardware shim "
                             HW_SHIM " loaded, no card or no xocl driver); "
                             "set RP_XRT_EMULATE=1 for the noop emulation");
    return RP_ENODEV;
  }
  xrtDeviceClose(d);
  return RP_OK;
}

static int phys_dev(const rp_exec_opts *o, int d) {
  return o->device_map && (unsigned)d < o->ndevice_map ? o->device_map[d]
                                                       : d;
}

/* ---- teardown: runs, kernels, buffer objects, devices, in this order */

static void xrt_destroy(void *state) {
  xstate *st = (xstate *)state;
  if (!st)
    return;
  for (uint32_t n = 0; n < st->nop; n++) {
    xop *o = &st->op[n];
    if (o->run)
      for (unsigned c = 0; c < st->xk[o->xk].ki->ncu; c++)
        if (o->run[c])
          xrtRunClose(o->run[c]);
    free(o->run);
    free(o->iv);
  }
  for (unsigned i = 0; i < st->nxk; i++)
    for (unsigned c = 0; c < st->xk[i].ki->ncu; c++)
      if (st->xk[i].h[c])
        xrtKernelClose(st->xk[i].h[c]);
  for (size_t i = 0; st->bo && i < (size_t)st->g->nbuf * st->nd; i++)
    if (st->bo[i].bo)
      xrtBOFree(st->bo[i].bo);
  for (unsigned d = 0; d < st->nd; d++)
    if (st->dev[d])
      xrtDeviceClose(st->dev[d]);
  free(st->op);
  free(st->xk);
  free(st->bo);
  free(st->ki);
  free(st->ready);
  free(st->fly);
  free(st);
}

/* ---- instantiate */

static const char *xrt_name(const xstate *st, const rp_kernel *k) {
  /* The emulation's generated xclbin names a kernel without an XRT name
   * after the kernel itself. */
  return k->xrt ? k->xrt : st->emulate ? k->name : NULL;
}

static unsigned xrt_nargs(const rp_kernel *k) {
  return k->xrt_argmap ? k->xrt_nargs : k->nparams;
}


/* An xclbin with every kernel the graph uses (emulation without one). */
static rp_status gen_xclbin(xstate *st, void **img, size_t *n) {
  const rp_graph *g = st->g;
  const char *e = getenv("RP_XRT_EMU_CUS");
  unsigned ncu = e && atoi(e) > 0 ? (unsigned)atoi(e) : 2;
  if (ncu > RP__XRT_MAX_CUS)
    ncu = RP__XRT_MAX_CUS;
  rp__xrt_kspec *ks = calloc(g->nop ? g->nop : 1, sizeof *ks);
  char *args = calloc(g->nop ? g->nop : 1, RP_MAX_PARAMS + 1);
  if (!ks || !args) {
    free(ks);
    free(args);
    return RP_ENOMEM;
  }
  unsigned nk = 0;
  for (uint32_t i = 0; i < g->nop; i++) {
    const rp_kernel *k = g->op[i].kernel;
    if (g->op[i].type != RP_OP_KERNEL || !k)
      continue;
    unsigned j = 0;
    while (j < nk && strcmp(ks[j].name, xrt_name(st, k)) != 0)
      j++;
    if (j < nk)
      continue;
    char *a = args + (size_t)nk * (RP_MAX_PARAMS + 1);
    for (unsigned q = 0; q < xrt_nargs(k) && q < RP_MAX_PARAMS; q++) {
      unsigned p = rp__xrt_param(k, q);
      a[q] = p < k->nparams && k->params[p].mode == RP_SCALAR ? 'l' : 'g';
    }
    ks[nk].name = xrt_name(st, k);
    ks[nk].args = a;
    ks[nk++].ncu = ncu;
  }
  rp_status s = nk ? rp__xrt_xclbin_build(ks, nk, img, n) : RP_OK;
  if (s != RP_OK)
    rp_exec_set_error(st->x, "xrt: cannot generate the emulation xclbin: "
                      "%s", rp_strerror(s));
  free(ks);
  free(args);
  return s;
}

static rp_status read_file(rp_exec *x, const char *path, void **img,
                           size_t *n) {
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    rp_exec_set_error(x, "xrt: cannot open xclbin \"%s\": %s", path,
                      strerror(errno));
    return RP_EIO;
  }
  long len = fseek(fp, 0, SEEK_END) == 0 ? ftell(fp) : -1;
  unsigned char *b = len > 0 ? malloc((size_t)len) : NULL;
  if (len <= 0 || !b || fseek(fp, 0, SEEK_SET) != 0 ||
      fread(b, 1, (size_t)len, fp) != (size_t)len) {
    free(b);
    fclose(fp);
    rp_exec_set_error(x, "xrt: cannot read xclbin \"%s\"%s", path,
                      len == 0 ? " (empty file)" : "");
    return len == 0 ? RP_EPARSE : RP_EIO;
  }
  fclose(fp);
  *img = b;
  *n = (size_t)len;
  return RP_OK;
}

/* Open devices, load the xclbin and open every kernel the graph uses,
 * one handle per compute unit ("kernel:{instance}"). */
static rp_status open_kernels(xstate *st, const void *img, const char *src) {
  const rp_graph *g = st->g;
  rp_exec *x = st->x;
  const rp_exec_opts *o = rp_exec_opts_get(x);
  for (unsigned d = 0; d < st->nd; d++) {
    st->dev[d] = xrtDeviceOpen((unsigned)phys_dev(o, (int)d));
    if (!st->dev[d]) {
      rp_exec_set_error(x, "xrt: cannot open FPGA device %d (logical %u): "
                        "no such device", phys_dev(o, (int)d), d);
      return RP_ENODEV;
    }
    if (img && xrtDeviceLoadXclbin(st->dev[d], (const struct axlf *)img)) {
      rp_exec_set_error(x, "xrt: device %u rejected xclbin \"%s\"", d, src);
      return RP_EPARSE;
    }
  }
  st->xk = calloc(st->nki * st->nd + 1, sizeof *st->xk);
  if (!st->xk)
    return RP_ENOMEM;
  for (uint32_t n = 0; n < g->nop; n++) {
    const rp__op *op = &g->op[n];
    if (op->type != RP_OP_KERNEL)
      continue;
    const rp_kernel *k = op->kernel;
    const char *name = k ? xrt_name(st, k) : NULL;
    if (!name) {
      rp_exec_set_error(x, "xrt: kernel op \"%s\": kernel \"%s\" has no "
                        "XRT kernel name (rp_kernel.xrt)", op->name,
                        k ? k->name : op->kernel_name);
      return RP_ENOKERNEL;
    }
    if (st->emulate && !k->cpu) {
      rp_exec_set_error(x, "xrt: kernel op \"%s\": the noop emulation needs "
                        "the kernel's CPU body", op->name);
      return RP_ENOKERNEL;
    }
    unsigned i = 0;
    while (i < st->nki && strcmp(st->ki[i].name, name) != 0)
      i++;
    if (i == st->nki) {
      rp_exec_set_error(x, "xrt: kernel op \"%s\": no kernel \"%s\" in "
                        "xclbin \"%s\"", op->name, name, src);
      return RP_ENOTFOUND;
    }
    const rp__xrt_kinfo *ki = &st->ki[i];
    if (ki->nargs != xrt_nargs(k)) {
      rp_exec_set_error(x, "xrt: kernel \"%s\" takes %u arguments in the "
                        "xclbin but its descriptor gives %u", name,
                        ki->nargs, xrt_nargs(k));
      return RP_EINVAL;
    }
    for (unsigned a = 0; a < ki->nargs; a++) {
      unsigned p = rp__xrt_param(k, a);
      if (p >= k->nparams ||
          (k->params[p].mode == RP_SCALAR) == ki->arg[a].global) {
        rp_exec_set_error(x, "xrt: kernel \"%s\": argument %u is a %s in "
                          "the xclbin but maps to parameter %u (%s)", name,
                          a, ki->arg[a].global ? "buffer" : "scalar", p,
                          p >= k->nparams ? "no such parameter"
                          : k->params[p].mode == RP_SCALAR ? "a scalar"
                                                            : "a buffer");
        return RP_EINVAL;
      }
    }
    if (ki->ncu == 0) {
      rp_exec_set_error(x, "xrt: kernel \"%s\" has no compute unit in the "
                        "xclbin's IP layout", name);
      return RP_ENOTFOUND;
    }
    unsigned j = 0;
    while (j < st->nxk && !(st->xk[j].ki == ki && st->xk[j].dev == op->device))
      j++;
    if (j == st->nxk) {
      xkern *xk = &st->xk[st->nxk++];
      xuid_t uuid;
      xk->ki = ki;
      xk->dev = op->device;
      xrtDeviceGetXclbinUUID(st->dev[op->device], uuid);
      for (unsigned c = 0; c < ki->ncu; c++) {
        char full[160];
        snprintf(full, sizeof full, "%s:{%s}", ki->name, ki->cu[c]);
        xk->busy[c] = RP_NONE;
        xk->h[c] = xrtPLKernelOpen(st->dev[op->device], uuid, full);
        if (!xk->h[c]) {
          rp_exec_set_error(x, "xrt: cannot open compute unit \"%s\" on "
                            "device %d", full, op->device);
          return RP_EBACKEND;
        }
      }
    }
    st->op[n].xk = j;
  }
  return RP_OK;
}

static rp_status alloc_bo(xstate *st, rp_buf b, int d) {
  xbo *xb = rp__xrt_bo(st, b, d);
  void *host = rp_exec_host(st->x)[b];
  uint64_t bytes = st->g->buf[b].bytes;
  long page = sysconf(_SC_PAGESIZE);
  xrtBufferHandle nb = NULL;
  /* Host-backed where XRT allows it, except in the emulation: the noop
   * shim's device memory is the BO's host memory, so a host-backed BO
   * would make the device image alias the host image. */
  int up = !st->emulate && host && page > 0 &&
           (uintptr_t)host % (uintptr_t)page == 0;
  if (up)
    nb = xrtBOAllocUserPtr(st->dev[d], host, bytes, 0,
                           (xrtMemoryGroup)xb->group);
  if (!nb) {
    /* Whole pages: the noop shim takes the BO's memory from
     * aligned_alloc(4096, size), which wants a multiple of the alignment. */
    uint64_t pg = page > 0 ? (uint64_t)page : 4096;
    up = 0;
    nb = xrtBOAlloc(st->dev[d], (bytes + pg - 1) / pg * pg, 0,
                    (xrtMemoryGroup)xb->group);
  }
  unsigned char *map = nb ? (unsigned char *)xrtBOMap(nb) : NULL;
  if (!nb || !map) {
    if (nb)
      xrtBOFree(nb);
    rp_exec_set_error(st->x, "xrt: cannot allocate a %llu-byte buffer "
                      "object for \"%s\" on device %d",
                      (unsigned long long)bytes, st->g->buf[b].name, d);
    return RP_ENOMEM;
  }
  if (!up) {
    /* Device images start zeroed, like the reference's. */
    memset(map, 0, bytes);
    xrtBOSync(nb, XCL_BO_SYNC_BO_TO_DEVICE, bytes, 0);
  }
  xb->bo = nb;
  xb->map = map;
  xb->userptr = up;
  return RP_OK;
}

/* Set XRT argument a of run r from node n's parameters. */
static rp_status set_arg(xstate *st, rp_node n, xrtRunHandle r, unsigned a) {
  const rp__op *op = &st->g->op[n];
  const rp_kernel *k = op->kernel;
  const rp__xrt_arg *ga = &st->xk[st->op[n].xk].ki->arg[a];
  unsigned p = rp__xrt_param(k, a);
  int rc;
  if (ga->global) {
    rp_buf b = st->g->args[op->arg0 + p].region.buf;
    rc = xrtRunSetArg(r, (int)a, rp__xrt_bo(st, b, op->device)->bo);
  } else {
    /* XRT reads a scalar from the va_list with the type its metadata
     * names (see xrt_kernel.cpp): pass exactly that type. */
    rp_slot v = rp_exec_args(st->x, n)->a[p];
    if (!strcmp(ga->type, "int"))
      rc = xrtRunSetArg(r, (int)a, v.i32);
    else if (!strcmp(ga->type, "uint"))
      rc = xrtRunSetArg(r, (int)a, v.u32);
    else if (!strcmp(ga->type, "float"))
      rc = xrtRunSetArg(r, (int)a, (double)v.f32);
    else if (!strcmp(ga->type, "double"))
      rc = xrtRunSetArg(r, (int)a, v.f64);
    else if (ga->size == 4)
      rc = xrtRunSetArg(r, (int)a, v.u32);
    else
      rc = xrtRunSetArg(r, (int)a, (size_t)v.u64);
  }
  if (rc) {
    rp_exec_set_error(st->x, "xrt: op \"%s\": XRT refused argument %u",
                      op->name, a);
    return RP_EBACKEND;
  }
  return RP_OK;
}

static rp_status prepare_ops(xstate *st) {
  const rp_graph *g = st->g;
  for (uint32_t n = 0; n < g->nop; n++) {
    const rp__op *op = &g->op[n];
    xop *o = &st->op[n];
    rp_graph_preds(g, n, &o->npred);
    o->type = op->type;
    if (op->type == RP_OP_KERNEL) {
      const xkern *xk = &st->xk[o->xk];
      o->run = calloc(xk->ki->ncu, sizeof *o->run);
      if (!o->run)
        return RP_ENOMEM;
      for (unsigned c = 0; c < xk->ki->ncu; c++) {
        if (!(o->run[c] = xrtRunOpen(xk->h[c]))) {
          rp_exec_set_error(st->x, "xrt: op \"%s\": cannot open a run",
                            op->name);
          return RP_EBACKEND;
        }
        for (unsigned a = 0; a < xk->ki->nargs; a++) {
          rp_status s = set_arg(st, n, o->run[c], a);
          if (s != RP_OK)
            return s;
        }
      }
    } else if (op->type != RP_OP_HOST) {
      const rp__access *acc = rp__op_acc(g, n);
      o->buf = acc[0].region.buf;
      o->src = acc[0].space;
      o->dst = acc[1].space;
      uint64_t cnt = rp_region_intervals(g, &acc[0].region, NULL, 0);
      o->iv = malloc((cnt ? cnt : 1) * 2 * sizeof *o->iv);
      if (!o->iv)
        return RP_ENOMEM;
      o->niv = rp_region_intervals(g, &acc[0].region, o->iv, cnt);
    }
  }
  return RP_OK;
}

static rp_status xrt_instantiate(rp_exec *x, void **state) {
  const rp_graph *g = rp_exec_graph(x);
  const rp_exec_opts *o = rp_exec_opts_get(x);
  xstate *st = calloc(1, sizeof *st);
  if (!st)
    return RP_ENOMEM;
  st->x = x;
  st->g = g;
  st->nop = g->nop;
  st->emulate = emulation_on();
  st->serial = o->mode && !strcmp(o->mode, "serial");
  st->nd = rp_graph_num_devices(g);
  if (o->mode && strcmp(o->mode, "serial") && strcmp(o->mode, "dag")) {
    rp_exec_set_error(x, "xrt: unknown mode \"%s\" (\"dag\" or \"serial\")",
                      o->mode);
    free(st);
    return RP_EINVAL;
  }
  char err[512];
  rp_status s = load_shim(st->emulate, err, sizeof err);
  if (s != RP_OK) {
    rp_exec_set_error(x, "%s", err);
    free(st);
    return s;
  }
  st->op = calloc(g->nop + 1, sizeof *st->op);
  st->bo = calloc((size_t)g->nbuf * st->nd + 1, sizeof *st->bo);
  st->ready = malloc((g->nop + 1) * sizeof *st->ready);
  st->fly = malloc((g->nop + 1) * sizeof *st->fly);
  if (!st->op || !st->bo || !st->ready || !st->fly) {
    xrt_destroy(st);
    return RP_ENOMEM;
  }
  void *img = NULL;
  size_t n = 0;
  int has_kernels = 0;
  for (uint32_t i = 0; i < g->nop; i++)
    has_kernels |= g->op[i].type == RP_OP_KERNEL;
  const char *src = o->xclbin ? o->xclbin : "(generated for the emulation)";
  if (o->xclbin)
    s = read_file(x, o->xclbin, &img, &n);
  else if (st->emulate)
    s = gen_xclbin(st, &img, &n);
  else if (has_kernels) {
    rp_exec_set_error(x, "xrt: no xclbin given (rp_exec_opts.xclbin)");
    s = RP_EINVAL;
  }
  if (s == RP_OK && img) {
    s = rp__xrt_xclbin_parse(img, n, &st->ki, &st->nki, err, sizeof err);
    if (s != RP_OK)
      rp_exec_set_error(x, "xrt: invalid xclbin \"%s\": %s", src, err);
  }
  if (s == RP_OK)
    s = open_kernels(st, img, src);
  free(img);
  /* Memory banks: the group of the first kernel argument using a buffer. */
  for (uint32_t i = 0; s == RP_OK && i < g->nop; i++) {
    const rp__op *op = &g->op[i];
    if (op->type != RP_OP_KERNEL)
      continue;
    const xkern *xk = &st->xk[st->op[i].xk];
    for (unsigned a = 0; a < xk->ki->nargs; a++) {
      if (!xk->ki->arg[a].global)
        continue;
      rp_buf b = g->args[op->arg0 + rp__xrt_param(op->kernel, a)].region.buf;
      xbo *xb = rp__xrt_bo(st, b, op->device);
      if (!xb->group) {
        int gid = xrtKernelArgGroupId(xk->h[0], (int)a);
        xb->group = gid > 0 ? gid : 0;
      }
    }
  }
  for (uint32_t i = 0; s == RP_OK && i < g->nop; i++)
    for (uint32_t a = 0; s == RP_OK && a < g->op[i].nacc; a++) {
      const rp__access *ac = &rp__op_acc(g, i)[a];
      if (ac->space != RP_SPACE_HOST &&
          !rp__xrt_bo(st, ac->region.buf, ac->space)->bo)
        s = alloc_bo(st, ac->region.buf, ac->space);
    }
  if (s == RP_OK)
    s = prepare_ops(st);
  if (s != RP_OK) {
    if (!x->err[0])
      rp_exec_set_error(x, "xrt: instantiate failed: %s", rp_strerror(s));
    xrt_destroy(st);
    return s;
  }
  *state = st;
  return RP_OK;
}

static rp_status xrt_launch(void *state, unsigned iterations) {
  xstate *st = (xstate *)state;
  st->last = RP_OK;
  for (unsigned i = 0; i < iterations && st->last == RP_OK; i++)
    st->last = st->serial ? rp__xrt_run_serial(st, NULL) : rp__xrt_run_dag(st);
  return RP_OK;
}

static rp_status xrt_wait(void *state) { return ((xstate *)state)->last; }

static rp_status xrt_profile(void *state, double *op_us) {
  return rp__xrt_run_serial((xstate *)state, op_us);
}

/* A new host image: host-backed buffer objects follow it (their device
 * content is carried over); the others copy from it at each sync. */
static rp_status xrt_rebind(void *state, rp_buf b) {
  xstate *st = (xstate *)state;
  for (unsigned d = 0; d < st->nd; d++) {
    xbo *xb = rp__xrt_bo(st, b, (int)d), old = *xb;
    if (!xb->bo || !xb->userptr)
      continue;
    rp_status s = alloc_bo(st, b, (int)d);
    if (s != RP_OK) {
      *xb = old;
      return s;
    }
    xrtBOCopy(xb->bo, old.bo, st->g->buf[b].bytes, 0, 0);
    for (uint32_t n = 0; n < st->nop; n++) {
      const rp__op *op = &st->g->op[n];
      if (op->type != RP_OP_KERNEL || op->device != (int)d)
        continue;
      const xkern *xk = &st->xk[st->op[n].xk];
      for (unsigned a = 0; a < xk->ki->nargs; a++)
        if (xk->ki->arg[a].global &&
            st->g->args[op->arg0 + rp__xrt_param(op->kernel, a)].region.buf == b)
          for (unsigned c = 0; c < xk->ki->ncu; c++)
            if ((s = set_arg(st, n, st->op[n].run[c], a)) != RP_OK)
              return s;
    }
    xrtBOFree(old.bo);
  }
  return RP_OK;
}

static rp_status xrt_set_scalar(void *state, rp_node n, unsigned param) {
  xstate *st = (xstate *)state;
  const xkern *xk = &st->xk[st->op[n].xk];
  for (unsigned a = 0; a < xk->ki->nargs; a++)
    if (rp__xrt_param(st->g->op[n].kernel, a) == param)
      for (unsigned c = 0; c < xk->ki->ncu; c++) {
        rp_status s = set_arg(st, n, st->op[n].run[c], a);
        if (s != RP_OK)
          return s;
      }
  return RP_OK;
}

static const xkern *find_xk(const xstate *st, const char *kernel, int dev) {
  for (unsigned i = 0; st && i < st->nxk; i++)
    if (st->xk[i].dev == dev && !strcmp(st->xk[i].ki->name, kernel))
      return &st->xk[i];
  return NULL;
}

unsigned long rp__xrt_cu_runs(const void *state, const char *kernel, int dev,
                              unsigned cu) {
  const xkern *xk = find_xk((const xstate *)state, kernel, dev);
  return xk && cu < xk->ki->ncu ? xk->runs[cu] : 0;
}

unsigned rp__xrt_num_cus(const void *state, const char *kernel, int dev) {
  const xkern *xk = find_xk((const xstate *)state, kernel, dev);
  return xk ? xk->ki->ncu : 0;
}

const rp_backend rp_backend_xrt = {
    .abi = RP_BACKEND_ABI,
    .name = "xrt",
    .priority = -10,
    .probe = xrt_probe,
    .instantiate = xrt_instantiate,
    .launch = xrt_launch,
    .wait = xrt_wait,
    .rebind = xrt_rebind,
    .set_scalar = xrt_set_scalar,
    .profile = xrt_profile,
    .destroy = xrt_destroy,
};
