/* FPGA backend for reprise replay over XRT's native C API: buffer objects,
 * syncs and one prepared run per kernel op and compute unit, submitted in
 * dependency order and completed by one polling loop. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "rp_xrt_state.h"

#define HW_SHIM "libxrt_core.so.2"
#define NOOP_SHIM "libxrt_noop.so.2"

static int emulation_on(void) {
  const char *e = getenv("RP_XRT_EMULATE");
  return e && e[0] && strcmp(e, "0") != 0;
}

/* XRT prints a banner (build version, PID, host, ...) and its errors on
 * standard error, e.g. when a probe finds no card: a library must not.
 * Unless the user configures XRT (XRT_INI_PATH, an xrt.ini in the current
 * folder or the program's) or asks for its messages (RP_XRT_VERBOSE=1),
 * point XRT_INI_PATH, before XRT's first call, at an in-memory xrt.ini
 * (a memfd, no file written) with [Runtime] runtime_log=null. Once per
 * process: XRT reads its configuration once. */
static void quiet_xrt(void) {
  static int done;
  if (done)
    return;
  done = 1;
  const char *v = getenv("RP_XRT_VERBOSE");
  if ((v && v[0] && strcmp(v, "0") != 0) || getenv("XRT_INI_PATH") ||
      access("xrt.ini", R_OK) == 0)
    return;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 16);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) {
      strcpy(slash + 1, "xrt.ini");
      if (access(exe, R_OK) == 0)
        return;
    }
  }
  int fd = memfd_create("xrt.ini", 0); /* kept open: XRT may read late */
  if (fd < 0)
    return;
  static const char ini[] = "[Runtime]\nruntime_log=null\n";
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  if (write(fd, ini, sizeof ini - 1) != (ssize_t)(sizeof ini - 1)) {
    close(fd);
    return;
  }
  setenv("XRT_INI_PATH", path, 0);
}

/* Load the shim XRT will use before any XRT call, so that XRT never looks
 * for XILINX_XRT (which aborts the process when unset). The handle is kept
 * for the life of the process: XRT cannot be unloaded safely. */
static rp_status load_shim(int emulate, char *err, size_t len) {
  static const char *const shims[] = {HW_SHIM, NOOP_SHIM, "libxrt_swemu.so.2",
                                      "libxrt_hwemu.so.2"};
  const char *loaded = NULL;
  quiet_xrt();
  for (size_t i = 0; i < sizeof shims / sizeof shims[0] && !loaded; i++) {
    void *h = dlopen(shims[i], RTLD_NOW | RTLD_NOLOAD);
    if (h) {
      loaded = shims[i];
      dlclose(h);
    }
  }
  if (loaded) {
    if (emulate && strcmp(loaded, NOOP_SHIM) != 0) {
      snprintf(err, len,
               "xrt: noop emulation requested (RP_XRT_EMULATE) "
               "but this process already loaded the XRT shim %s",
               loaded);
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

/* 1 when this process already runs on the noop shim (an exec asked for
 * the emulation through its options). */
static int noop_loaded(void) {
  void *h = dlopen(NOOP_SHIM, RTLD_NOW | RTLD_NOLOAD);
  if (h)
    dlclose(h);
  return h != NULL;
}

static rp_status xrt_probe(void) {
  char err[256];
  int emu = emulation_on() || noop_loaded();
  rp_status s = load_shim(emu, err, sizeof err);
  if (s != RP_OK) {
    rp_backend_set_error("%s", err);
    return s;
  }
  xrtDeviceHandle d = xrtDeviceOpen(0);
  if (!d) {
    rp_backend_set_error(
        "%s", emu ? "xrt: the noop shim opened no device"
                  : "xrt: no FPGA device 0 (XRT hardware shim " HW_SHIM
                    " loaded, no card or no xocl driver); "
                    "set RP_XRT_EMULATE=1 for the noop emulation");
    return RP_ENODEV;
  }
  xrtDeviceClose(d);
  return RP_OK;
}

static int phys_dev(const rp_exec_opts *o, int d) {
  return o->device_map && (unsigned)d < o->ndevice_map ? o->device_map[d] : d;
}

/* ---- teardown: runs, kernels, buffer objects, devices, in this order */

static void xrt_destroy(void *state) {
  xstate *st = (xstate *)state;
  if (!st)
    return;
  const rp_plan *p = st->p;
  for (uint32_t n = 0; st->op && n < p->nnode; n++) {
    xop *o = &st->op[n];
    if (o->run)
      for (unsigned c = 0; c < st->xk[o->xk].ki->ncu; c++)
        if (o->run[c])
          xrtRunClose(o->run[c]);
    free(o->run);
  }
  for (unsigned i = 0; i < st->nxk; i++)
    for (unsigned c = 0; c < st->xk[i].ki->ncu; c++)
      if (st->xk[i].h[c])
        xrtKernelClose(st->xk[i].h[c]);
  for (uint32_t i = 0; i < p->nimage; i++) {
    if (st->bo && st->bo[i].bo)
      xrtBOFree(st->bo[i].bo);
    if (st->himg)
      rp_image_free(st->himg[i]);
  }
  for (unsigned d = 0; d < st->nd; d++)
    if (st->dev[d])
      xrtDeviceClose(st->dev[d]);
  pthread_mutex_destroy(&st->mu);
  pthread_cond_destroy(&st->cv);
  free(st->op);
  free(st->xk);
  free(st->bo);
  free(st->himg);
  free(st->ki);
  free(st->ready);
  free(st->fly);
  free(st->ptrs);
  free(st->reps_done);
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

/* Whether plan node v is a kernel this backend runs on an FPGA. */
static int fpga_kernel(const xstate *st, uint32_t v) {
  const rp_plan_node *nd = &st->p->node[v];
  return nd->type == RP_OP_KERNEL && !(nd->flags & RP_PLAN_ON_HOST);
}

static const rp_kernel *kernel_of(const xstate *st, uint32_t v,
                                  const char **name) {
  const rp_plan_node *nd = &st->p->node[v];
  if (name)
    *name = nd->name;
  return nd->kernel;
}

/* An xclbin with every FPGA kernel the plan runs (emulation without
 * one). */
static rp_status gen_xclbin(xstate *st, void **img, size_t *n) {
  const rp_plan *p = st->p;
  const rp_exec_opts *o = rp_exec_opts_get(st->x);
  const char *e = getenv("RP_XRT_EMU_CUS");
  unsigned ncu = o->xrt_emu_cus     ? o->xrt_emu_cus
                 : e && atoi(e) > 0 ? (unsigned)atoi(e)
                                    : 2;
  if (ncu > RP__XRT_MAX_CUS)
    ncu = RP__XRT_MAX_CUS;
  rp__xrt_kspec *ks = calloc(p->nnode ? p->nnode : 1, sizeof *ks);
  char *args = calloc(p->nnode ? p->nnode : 1, RP_MAX_PARAMS + 1);
  if (!ks || !args) {
    free(ks);
    free(args);
    return RP_ENOMEM;
  }
  unsigned nk = 0;
  for (uint32_t v = 0; v < p->nnode; v++) {
    const rp_kernel *k = fpga_kernel(st, v) ? kernel_of(st, v, NULL) : NULL;
    if (!k)
      continue;
    unsigned j = 0;
    while (j < nk && strcmp(ks[j].name, xrt_name(st, k)) != 0)
      j++;
    if (j < nk)
      continue;
    char *a = args + (size_t)nk * (RP_MAX_PARAMS + 1);
    for (unsigned q = 0; q < xrt_nargs(k) && q < RP_MAX_PARAMS; q++) {
      unsigned pp = rp__xrt_param(k, q);
      a[q] = pp < k->nparams && k->params[pp].mode == RP_SCALAR ? 'l' : 'g';
    }
    ks[nk].name = xrt_name(st, k);
    ks[nk].args = a;
    ks[nk++].ncu = ncu;
  }
  rp_status s = nk ? rp__xrt_xclbin_build(ks, nk, img, n) : RP_OK;
  if (s != RP_OK)
    rp_exec_set_error(st->x,
                      "xrt: cannot generate the emulation xclbin: "
                      "%s",
                      rp_strerror(s));
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

/* Checks kernel k (named name in the xclbin) against the xclbin's
 * description ki. */
static rp_status check_args(xstate *st, const rp_kernel *k, const char *name,
                            const rp__xrt_kinfo *ki) {
  rp_exec *x = st->x;
  if (ki->nargs != xrt_nargs(k)) {
    rp_exec_set_error(x,
                      "xrt: kernel \"%s\" takes %u arguments in the "
                      "xclbin but its descriptor gives %u",
                      name, ki->nargs, xrt_nargs(k));
    return RP_EINVAL;
  }
  for (unsigned a = 0; a < ki->nargs; a++) {
    unsigned p = rp__xrt_param(k, a);
    if (p >= k->nparams ||
        (k->params[p].mode == RP_SCALAR) == ki->arg[a].global) {
      rp_exec_set_error(x,
                        "xrt: kernel \"%s\": argument %u is a %s in the "
                        "xclbin but maps to parameter %u (%s)",
                        name, a, ki->arg[a].global ? "buffer" : "scalar", p,
                        p >= k->nparams                  ? "no such parameter"
                        : k->params[p].mode == RP_SCALAR ? "a scalar"
                                                         : "a buffer");
      return RP_EINVAL;
    }
  }
  if (ki->ncu == 0) {
    rp_exec_set_error(x,
                      "xrt: kernel \"%s\" has no compute unit in the "
                      "xclbin's IP layout",
                      name);
    return RP_ENOTFOUND;
  }
  return RP_OK;
}

/* Open the FPGA devices, load the xclbin and open every kernel the plan
 * runs there, one handle per compute unit ("kernel:{instance}"). */
static rp_status open_kernels(xstate *st, const void *img, const char *src) {
  const rp_plan *p = st->p;
  rp_exec *x = st->x;
  const rp_exec_opts *o = rp_exec_opts_get(x);
  for (unsigned d = 0; d < st->nd; d++) {
    if (!p->dev[d].native)
      continue;
    st->dev[d] = xrtDeviceOpen((unsigned)phys_dev(o, (int)d));
    if (!st->dev[d]) {
      rp_exec_set_error(x,
                        "xrt: cannot open FPGA device %d (logical %u): "
                        "no such device",
                        phys_dev(o, (int)d), d);
      return RP_ENODEV;
    }
    if (img && xrtDeviceLoadXclbin(st->dev[d], (const struct axlf *)img)) {
      rp_exec_set_error(x, "xrt: device %u rejected xclbin \"%s\"", d, src);
      return RP_EPARSE;
    }
  }
  st->xk = calloc(st->nki * (st->nd ? st->nd : 1) + 1, sizeof *st->xk);
  if (!st->xk)
    return RP_ENOMEM;
  for (uint32_t v = 0; v < p->nnode; v++) {
    if (!fpga_kernel(st, v))
      continue;
    const char *opname;
    const rp_kernel *k = kernel_of(st, v, &opname);
    int dev = p->node[v].device;
    const char *name = k ? xrt_name(st, k) : NULL;
    if (!name) {
      rp_exec_set_error(x,
                        "xrt: kernel op \"%s\": kernel \"%s\" has no "
                        "XRT kernel name (rp_kernel.xrt)",
                        opname, k ? k->name : "(loaded from a file)");
      return RP_ENOKERNEL;
    }
    if (st->emulate && !k->cpu) {
      rp_exec_set_error(x,
                        "xrt: kernel op \"%s\": the noop emulation needs "
                        "the kernel's CPU body",
                        opname);
      return RP_ENOKERNEL;
    }
    unsigned i = 0;
    while (i < st->nki && strcmp(st->ki[i].name, name) != 0)
      i++;
    if (i == st->nki) {
      rp_exec_set_error(x,
                        "xrt: kernel op \"%s\": no kernel \"%s\" in "
                        "xclbin \"%s\"",
                        opname, name, src);
      return RP_ENOTFOUND;
    }
    const rp__xrt_kinfo *ki = &st->ki[i];
    rp_status s = check_args(st, k, name, ki);
    if (s != RP_OK)
      return s;
    unsigned j = 0;
    while (j < st->nxk && !(st->xk[j].ki == ki && st->xk[j].dev == dev))
      j++;
    if (j == st->nxk) {
      xkern *xk = &st->xk[st->nxk++];
      xuid_t uuid;
      xk->ki = ki;
      xk->dev = dev;
      xrtDeviceGetXclbinUUID(st->dev[dev], uuid);
      for (unsigned c = 0; c < ki->ncu; c++) {
        char full[160];
        snprintf(full, sizeof full, "%s:{%s}", ki->name, ki->cu[c]);
        xk->busy[c] = RP_NONE;
        xk->h[c] = xrtPLKernelOpen(st->dev[dev], uuid, full);
        if (!xk->h[c]) {
          rp_exec_set_error(x,
                            "xrt: cannot open compute unit \"%s\" on "
                            "device %d",
                            full, dev);
          return RP_EBACKEND;
        }
      }
    }
    st->op[v].xk = j;
    st->op[v].fpga = 1;
  }
  return RP_OK;
}

/* Image i's memory: a zeroed buffer object on its FPGA for a device
 * image, zeroed host memory for a host-memory image that is not the
 * user's array (the user's array needs nothing). */
static rp_status alloc_image(xstate *st, uint32_t i) {
  const rp_plan_image *im = &st->p->image[i];
  if (im->flags & RP_IMAGE_USER)
    return RP_OK;
  const rp_buffer_desc d = st->p->buf[im->buf].desc;
  if (im->flags & RP_IMAGE_HOST_MEMORY) {
    if (!(st->himg[i] = rp_image_alloc(im->bytes)) ||
        rp_exec_guard_image(st->x, i, st->himg[i]) != RP_OK) {
      rp_exec_set_error(st->x,
                        "xrt: cannot allocate %llu bytes of host "
                        "memory for \"%s\"",
                        (unsigned long long)im->bytes, d.name);
      return RP_ENOMEM;
    }
    return RP_OK;
  }
  xbo *xb = &st->bo[i];
  long page = sysconf(_SC_PAGESIZE);
  /* Whole pages: the noop shim takes the BO's memory from
   * aligned_alloc(4096, size), which wants a multiple of the alignment. */
  uint64_t pg = page > 0 ? (uint64_t)page : 4096;
  xrtBufferHandle nb =
      xrtBOAlloc(st->dev[im->space], (im->bytes + pg - 1) / pg * pg, 0,
                 (xrtMemoryGroup)xb->group);
  unsigned char *map = nb ? (unsigned char *)xrtBOMap(nb) : NULL;
  if (!nb || !map) {
    if (nb)
      xrtBOFree(nb);
    rp_exec_set_error(st->x,
                      "xrt: cannot allocate a %llu-byte buffer "
                      "object for \"%s\" on device %d",
                      (unsigned long long)im->bytes, d.name, im->space);
    return RP_ENOMEM;
  }
  /* Device images start zeroed, like the reference's. */
  memset(map, 0, im->bytes);
  if (xrtBOSync(nb, XCL_BO_SYNC_BO_TO_DEVICE, im->bytes, 0)) {
    xrtBOFree(nb);
    rp_exec_set_error(st->x,
                      "xrt: cannot zero the buffer object of \"%s\" "
                      "on device %d",
                      d.name, im->space);
    return RP_EBACKEND;
  }
  xb->bo = nb;
  xb->map = map;
  return RP_OK;
}

/* Set XRT argument a of run r from plan node v's parameters. */
static rp_status set_arg(xstate *st, uint32_t v, xrtRunHandle r, unsigned a) {
  const rp_plan_node *nd = &st->p->node[v];
  const char *opname;
  const rp_kernel *k = kernel_of(st, v, &opname);
  const rp__xrt_arg *ga = &st->xk[st->op[v].xk].ki->arg[a];
  unsigned p = rp__xrt_param(k, a);
  int rc;
  if (ga->global) {
    rc = xrtRunSetArg(r, (int)a, st->bo[st->p->acc[nd->acc0 + p].image].bo);
  } else {
    /* XRT reads a scalar from the va_list with the type its metadata
     * names (see xrt_kernel.cpp): pass exactly that type. */
    rp_slot val = rp_exec_args(st->x, nd->op)->a[p];
    if (!strcmp(ga->type, "int"))
      rc = xrtRunSetArg(r, (int)a, val.i32);
    else if (!strcmp(ga->type, "uint"))
      /* The named type first: the same call as the size-4 fallback. */
      // NOLINTNEXTLINE(bugprone-branch-clone)
      rc = xrtRunSetArg(r, (int)a, val.u32);
    else if (!strcmp(ga->type, "float"))
      rc = xrtRunSetArg(r, (int)a, (double)val.f32);
    else if (!strcmp(ga->type, "double"))
      rc = xrtRunSetArg(r, (int)a, val.f64);
    else if (ga->size == 4)
      rc = xrtRunSetArg(r, (int)a, val.u32);
    else
      rc = xrtRunSetArg(r, (int)a, (size_t)val.u64);
  }
  if (rc) {
    rp_exec_set_error(st->x, "xrt: op \"%s\": XRT refused argument %u", opname,
                      a);
    return RP_EBACKEND;
  }
  return RP_OK;
}

/* Runs prepared once per FPGA kernel node and compute unit; host tasks
 * and host kernels checked for a body. */
static rp_status prepare_ops(xstate *st) {
  const rp_plan *p = st->p;
  for (uint32_t v = 0; v < p->nnode; v++) {
    const rp_plan_node *nd = &p->node[v];
    xop *o = &st->op[v];
    for (uint32_t k = 0; k < nd->nacc && nd->type != RP_OP_COPY_D2H; k++) {
      const rp_plan_access *a = &p->acc[nd->acc0 + k];
      if (a->image != RP_NONE && (a->mode & RP_OUT) &&
          (p->image[a->image].flags & RP_IMAGE_USER))
        o->host_writer = 1;
    }
    if (nd->type == RP_OP_COPY_D2H) {
      const rp_plan_access *a = &p->acc[nd->acc0 + 1];
      o->host_writer = (p->image[a->image].flags & RP_IMAGE_USER) != 0;
    }
    if (nd->type == RP_OP_HOST) {
      if (!nd->host_fn) {
        rp_exec_set_error(st->x,
                          "xrt: host task op %u has no function "
                          "(graph loaded from a file)",
                          nd->op);
        return RP_ENOKERNEL;
      }
    }
    if (!o->fpga)
      continue;
    const xkern *xk = &st->xk[o->xk];
    o->run = calloc(xk->ki->ncu, sizeof *o->run);
    if (!o->run)
      return RP_ENOMEM;
    for (unsigned c = 0; c < xk->ki->ncu; c++) {
      if (!(o->run[c] = xrtRunOpen(xk->h[c]))) {
        rp_exec_set_error(st->x, "xrt: op %u: cannot open a run", nd->op);
        return RP_EBACKEND;
      }
      for (unsigned a = 0; a < xk->ki->nargs; a++) {
        rp_status s = set_arg(st, v, o->run[c], a);
        if (s != RP_OK)
          return s;
      }
    }
  }
  return RP_OK;
}

/* Memory banks: a device image goes to the bank of the first FPGA kernel
 * argument using it. */
static void banks(xstate *st) {
  const rp_plan *p = st->p;
  for (uint32_t v = 0; v < p->nnode; v++) {
    if (!st->op[v].fpga)
      continue;
    const rp_kernel *k = kernel_of(st, v, NULL);
    const xkern *xk = &st->xk[st->op[v].xk];
    for (unsigned a = 0; a < xk->ki->nargs; a++) {
      if (!xk->ki->arg[a].global)
        continue;
      uint32_t im = p->acc[p->node[v].acc0 + rp__xrt_param(k, a)].image;
      if (im != RP_NONE && !st->bo[im].group) {
        int gid = xrtKernelArgGroupId(xk->h[0], (int)a);
        st->bo[im].group = gid > 0 ? gid : 0;
      }
    }
  }
}

static rp_status check_options(rp_exec *x, const rp_exec_opts *o) {
  if (o->mode && strcmp(o->mode, "serial") && strcmp(o->mode, "dag")) {
    rp_exec_set_error(x, "xrt: unknown mode \"%s\" (\"dag\" or \"serial\")",
                      o->mode);
    return RP_EINVAL;
  }
  /* The options of other backends: refused by the core
   * (rp_backend.options). */
  return RP_OK;
}

static rp_status xrt_instantiate(rp_exec *x, const rp_plan *p, void **state) {
  const rp_exec_opts *o = rp_exec_opts_get(x);
  rp_status s = check_options(x, o);
  if (s != RP_OK)
    return s;
  xstate *st = calloc(1, sizeof *st);
  if (!st)
    return RP_ENOMEM;
  st->x = x;
  st->p = p;
  pthread_mutex_init(&st->mu, NULL);
  pthread_cond_init(&st->cv, NULL);
  st->emulate = o->xrt_emulate ? o->xrt_emulate > 0 : emulation_on();
  st->serial = o->mode && !strcmp(o->mode, "serial");
  st->nd = p->ndev;
  int has_fpga = 0;
  uint32_t maxacc = 0;
  for (uint32_t v = 0; v < p->nnode; v++) {
    has_fpga |= fpga_kernel(st, v);
    if (p->node[v].nacc > maxacc)
      maxacc = p->node[v].nacc;
  }
  for (uint32_t i = 0; i < p->nimage; i++)
    has_fpga |= !(p->image[i].flags & RP_IMAGE_HOST_MEMORY);
  char err[512];
  if (has_fpga && (s = load_shim(st->emulate, err, sizeof err)) != RP_OK) {
    rp_exec_set_error(x, "%s", err);
    xrt_destroy(st);
    return s;
  }
  size_t nn = p->nnode + 1, ni = p->nimage + 1;
  st->op = calloc(nn, sizeof *st->op);
  st->bo = calloc(ni, sizeof *st->bo);
  st->himg = calloc(ni, sizeof *st->himg);
  st->ready = malloc(nn * sizeof *st->ready);
  st->fly = malloc(nn * sizeof *st->fly);
  st->reps_done = calloc(nn, sizeof *st->reps_done);
  st->ptrs = calloc(maxacc + 1, sizeof *st->ptrs);
  if (!st->op || !st->bo || !st->himg || !st->ready || !st->fly ||
      !st->reps_done || !st->ptrs) {
    xrt_destroy(st);
    return RP_ENOMEM;
  }
  void *img = NULL;
  size_t n = 0;
  int has_kernels = 0;
  for (uint32_t v = 0; v < p->nnode; v++)
    has_kernels |= fpga_kernel(st, v);
  const char *src = o->xclbin ? o->xclbin : "(generated for the emulation)";
  if (o->xclbin && has_fpga)
    s = read_file(x, o->xclbin, &img, &n);
  else if (st->emulate && has_kernels)
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
  if (s == RP_OK && has_fpga)
    s = open_kernels(st, img, src);
  free(img);
  if (s == RP_OK)
    banks(st);
  for (uint32_t i = 0; s == RP_OK && i < p->nimage; i++)
    s = alloc_image(st, i);
  if (s == RP_OK)
    s = prepare_ops(st);
  if (s != RP_OK) {
    if (!rp_exec_error(x)[0])
      rp_exec_set_error(x, "xrt: instantiate failed: %s", rp_strerror(s));
    xrt_destroy(st);
    return s;
  }
  *state = st;
  return RP_OK;
}

static void progress_start(xstate *st) {
  pthread_mutex_lock(&st->mu);
  st->batch = rp_exec_batch(st->x, NULL);
  memset(st->reps_done, 0, st->p->nnode * sizeof *st->reps_done);
  st->running = 1;
  pthread_cond_broadcast(&st->cv);
  pthread_mutex_unlock(&st->mu);
}

static rp_status xrt_launch(void *state, unsigned iterations) {
  xstate *st = (xstate *)state;
  rp_status s = RP_OK;
  progress_start(st);
  for (unsigned i = 0; i < iterations && s == RP_OK; i++) {
    st->replay = i;
    s = st->serial ? rp__xrt_run_serial(st, NULL) : rp__xrt_run_dag(st);
  }
  pthread_mutex_lock(&st->mu);
  st->running = 0;
  pthread_cond_broadcast(&st->cv);
  pthread_mutex_unlock(&st->mu);
  return s;
}

/* The core runs launch on its thread and joins it: nothing is left. */
static rp_status xrt_wait(void *state) { return RP_OK; }

/* Done once every host writer of b has run in the batch's last replay,
 * or the engine stopped. */
typedef struct xrt_wait_ctx {
  const xstate *st;
  rp_buf b;
  uint64_t batch;
  unsigned iters;
} xrt_wait_ctx;

static int xrt_buffer_ready(void *ctx) {
  const xrt_wait_ctx *w = ctx;
  const xstate *st = w->st;
  const rp_plan *p = st->p;
  int done = st->batch == w->batch;
  for (uint32_t i = p->hw_off[w->b];
       done && st->running && i < p->hw_off[w->b + 1]; i++)
    done = st->reps_done[p->host_writers[i]] >= w->iters;
  return done;
}

static rp_status xrt_wait_buffer(void *state, rp_buf b) {
  xstate *st = (xstate *)state;
  xrt_wait_ctx w = {.st = st, .b = b};
  w.batch = rp_exec_batch(st->x, &w.iters);
  rp_backend_wait_progress(&st->mu, &st->cv, xrt_buffer_ready, &w, 0);
  return RP_OK;
}

static rp_status xrt_profile(void *state, double *node_us) {
  xstate *st = (xstate *)state;
  progress_start(st);
  st->replay = 0;
  rp_status s = rp__xrt_run_serial(st, node_us);
  pthread_mutex_lock(&st->mu);
  st->running = 0;
  pthread_mutex_unlock(&st->mu);
  return s;
}

/* One replay as a DAG, each node's start and end stamped when the
 * polling loop starts it and sees it complete. */
static rp_status xrt_timeline(void *state, double *start_us, double *end_us) {
  xstate *st = (xstate *)state;
  progress_start(st);
  st->replay = 0;
  st->tl0 = start_us;
  st->tl1 = end_us;
  st->tl_base = rp_clock_us();
  rp_status s = rp__xrt_run_dag(st);
  st->tl0 = st->tl1 = NULL;
  pthread_mutex_lock(&st->mu);
  st->running = 0;
  pthread_mutex_unlock(&st->mu);
  return s;
}

/* Buffer objects never alias the user's array (it is looked up at each
 * copy and host node): nothing to do. */
static rp_status xrt_rebind(void *state, rp_buf b) { return RP_OK; }

static rp_status xrt_set_scalar(void *state, uint32_t v, unsigned param) {
  xstate *st = (xstate *)state;
  if (v >= st->p->nnode || !st->op[v].fpga)
    return RP_OK; /* host kernels read the argument block when they run */
  const rp_kernel *k = kernel_of(st, v, NULL);
  const xkern *xk = &st->xk[st->op[v].xk];
  for (unsigned a = 0; a < xk->ki->nargs; a++)
    if (rp__xrt_param(k, a) == param)
      for (unsigned c = 0; c < xk->ki->ncu; c++) {
        rp_status s = set_arg(st, v, st->op[v].run[c], a);
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
    .owns = RP_DEVICE_FPGA,
    .flags = RP_BACKEND_BLOCKING_LAUNCH,
    .probe = xrt_probe,
    .instantiate = xrt_instantiate,
    .launch = xrt_launch,
    .wait = xrt_wait,
    .wait_buffer = xrt_wait_buffer,
    .rebind = xrt_rebind,
    .set_scalar = xrt_set_scalar,
    .profile = xrt_profile,
    .timeline = xrt_timeline,
    .destroy = xrt_destroy,
    .options =
        RP_EXEC_OPT_DEVICE_MAP | RP_EXEC_OPT_XCLBIN | RP_EXEC_OPT_XRT_EMULATE,
};
