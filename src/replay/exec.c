/* The backend-neutral executor: instantiate, run, rebind. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "replay/check_run.h"
#include "replay/exec.h"
#include "replay/registry.h"

extern const rp_backend rp_backend_reference;

/* The registry (rp_backend_find, rp_backend_list, ...) is in
 * replay/registry.c, the plugin loader in replay/plugin.c. */

void rp_exec_set_error(rp_exec *x, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(x->err, sizeof x->err, fmt, ap);
  va_end(ap);
  rp__set_last_error(x->err);
}

void rp_exec_set_notice(rp_exec *x, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(x->note, sizeof x->note, fmt, ap);
  va_end(ap);
}

void rp__exec_begin(rp_exec *x) {
  x->err[0] = 0;
  x->note[0] = 0;
  rp__set_last_error("");
}

void rp_backend_set_error(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  rp__set_last_error(msg);
}

const rp_graph *rp_exec_graph(const rp_exec *x) { return x ? x->g : NULL; }
const rp_exec_opts *rp_exec_opts_get(const rp_exec *x) {
  static const rp_exec_opts none = RP_EXEC_OPTS_INIT;
  return x ? &x->opts : &none;
}
uint64_t rp_exec_batch(const rp_exec *x, unsigned *iterations) {
  if (iterations)
    *iterations = x ? x->launched_iters : 0;
  return x ? x->batch : 0;
}
const rp_plan *rp_exec_plan(const rp_exec *x) {
  return x && x->plan ? rp__plan_view(x->plan) : NULL;
}
void *const *rp_exec_host(const rp_exec *x) { return x ? x->host : NULL; }
const rp_backend *rp_exec_backend(const rp_exec *x) {
  return x ? (x->asked ? x->asked : x->be) : NULL;
}
const char *rp_exec_error(const rp_exec *x) { return x ? x->err : ""; }
const char *rp_exec_notice(const rp_exec *x) { return x ? x->note : ""; }
double rp_exec_last_us(const rp_exec *x) { return x ? x->last_us : 0.0; }

const rp_kargs *rp_exec_args(const rp_exec *x, rp_node n) {
  if (!x || n >= x->g->nop || x->kidx[n] == RP_NONE)
    return NULL;
  return &x->kargs[x->kidx[n]];
}

static void exec_free(rp_exec *x) {
  if (x->th_on) {
    pthread_mutex_lock(&x->mu);
    x->th_quit = 1;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    pthread_join(x->th, NULL);
    pthread_mutex_destroy(&x->mu);
    pthread_cond_destroy(&x->cv);
  }
  rp__plan_free(x->plan);
  rp__rewrite_free(&x->rw);
  free(x->guard);
  free(x->host);
  free(x->kargs);
  free(x->kidx);
  free(x->cores);
  free(x->device_map);
  free(x);
}

/* Where a checked region lies, for the kernel's accessors. */
static void param_region(const rp_graph *g, const rp_region *r,
                         rp_pregion *out) {
  rp_buffer_desc d;
  rp_buffer_info(g, r->buf, &d);
  uint64_t el = d.elem ? d.elem : 1;
  unsigned nd = d.ndims;
  memset(out, 0, sizeof *out);
  out->ld = nd ? d.dims[nd - 1] : d.bytes / el;
  for (int k = 0; k < 3; k++)
    out->n[k] = 1;
  if (r->kind != RP_REGION_BOX) {
    out->offset = r->offset;
    out->bytes = r->bytes;
    out->lo[0] = (uint32_t)(r->offset / el);
    out->n[0] = (uint32_t)(r->bytes / el);
    return;
  }
  uint64_t stride[3], first = 0, last = 0;
  stride[nd - 1] = el;
  for (int k = (int)nd - 2; k >= 0; k--)
    stride[k] = stride[k + 1] * d.dims[k + 1];
  int empty = 0;
  for (unsigned k = 0; k < nd; k++) {
    out->lo[k] = (uint32_t)r->lo[k];
    out->n[k] = (uint32_t)(r->hi[k] - r->lo[k]);
    empty |= r->hi[k] == r->lo[k];
    first += r->lo[k] * stride[k];
    last += (r->hi[k] ? r->hi[k] - 1 : 0) * stride[k];
  }
  out->offset = first;
  out->bytes = empty ? 0 : last + el - first;
}

/* A kernel chunk of a split graph: its origin on the axis, the whole
 * index space and the regions as the user recorded them, so that the body
 * sees the arguments of the whole kernel. */
static void split_args(rp_exec *x, rp_node i, rp_kargs *a) {
  rp_node o = x->rw.orig[i];
  unsigned ax = (unsigned)x->rw.axis[i];
  rp_node_info ni;
  rp_node_info_get(x->ug, o, &ni);
  a->origin[ax] = x->rw.origin[i];
  a->whole[0] = ni.space.x;
  a->whole[1] = ni.space.y;
  a->whole[2] = ni.space.z;
  for (unsigned p = 0, acc = 0; p < ni.kernel->nparams; p++) {
    if (ni.kernel->params[p].mode == RP_SCALAR)
      continue;
    rp_access_info ai;
    rp_node_access(x->ug, o, acc++, &ai);
    param_region(x->ug, &ai.region, &a->r[p]);
  }
}

int rp_exec_copies_reshaped(const rp_exec *x, uint32_t *merged,
                            uint32_t *split) {
  int on = x && x->rw.g && x->rw.nmerged + x->rw.nsplit > 0;
  if (merged)
    *merged = on ? x->rw.nmerged : 0;
  if (split)
    *split = on ? x->rw.nsplit : 0;
  return on;
}

rp_node rp_exec_op_origin(const rp_exec *x, rp_node m) {
  if (!x || m >= x->g->nop)
    return RP_NONE;
  return x->rw.g ? x->rw.orig[m] : m;
}

unsigned rp_exec_split_chunks(const rp_exec *x, uint32_t *nkernels,
                              uint32_t *ncopies) {
  if (nkernels)
    *nkernels = x && x->rw.g ? x->rw.nkernels : 0;
  if (ncopies)
    *ncopies = x && x->rw.g ? x->rw.ncopies : 0;
  return x ? x->chunks : 0;
}

unsigned rp_backend_options(const rp_backend *be) {
  return be ? be->options : 0;
}

/* The backend-specific options that are set, refused in this one place
 * unless backend `be` declares them (rp_backend.options). */
static const struct {
  unsigned bit;
  const char *name;
} exec_opt[] = {{RP_EXEC_OPT_NTHREADS, "nthreads"},
                {RP_EXEC_OPT_CORES, "cores"},
                {RP_EXEC_OPT_DEVICE_MAP, "device_map"},
                {RP_EXEC_OPT_XCLBIN, "xclbin"},
                {RP_EXEC_OPT_XRT_EMULATE, "xrt_emulate"},
                {RP_EXEC_OPT_CUDA_UPDATE, "cuda_update"}};
#define NOPT (sizeof exec_opt / sizeof exec_opt[0])

const char *rp_exec_option_name(unsigned bit) {
  for (size_t i = 0; i < NOPT; i++)
    if (exec_opt[i].bit == bit)
      return exec_opt[i].name;
  return NULL;
}

static rp_status options_supported(const rp_exec_opts *o,
                                   const rp_backend *be) {
  /* A negative count means nothing on any backend (the reference took
   * -3 silently, openmp refused it). */
  if (o->nthreads < 0) {
    rp__set_last_errorf("%s: nthreads %d < 0 (0: the backend's default)",
                        be->name, o->nthreads);
    return RP_EINVAL;
  }
  unsigned set =
      (o->nthreads > 1 ? RP_EXEC_OPT_NTHREADS : 0) |
      (o->cores || o->ncores ? RP_EXEC_OPT_CORES : 0) |
      (o->device_map || o->ndevice_map ? RP_EXEC_OPT_DEVICE_MAP : 0) |
      (o->xclbin ? RP_EXEC_OPT_XCLBIN : 0) |
      (o->xrt_emulate || o->xrt_emu_cus ? RP_EXEC_OPT_XRT_EMULATE : 0) |
      (o->cuda_update ? RP_EXEC_OPT_CUDA_UPDATE : 0);
  unsigned bad = set & ~be->options;
  if (!bad)
    return RP_OK;
  char takes[128] = "";
  size_t n = 0;
  const char *first = NULL;
  for (size_t i = 0; i < NOPT; i++) {
    if ((bad & exec_opt[i].bit) && !first)
      first = exec_opt[i].name;
    if ((be->options & exec_opt[i].bit) && n < sizeof takes)
      n += (size_t)snprintf(takes + n, sizeof takes - n, "%s%s", n ? ", " : "",
                            exec_opt[i].name);
  }
  rp__set_last_errorf("%s: option \"%s\" is not supported (%s takes %s)",
                      be->name, first, be->name, n ? takes : "none of them");
  return RP_EINVAL;
}

/* Checking mode (rp_exec_opts.check, RP_CHECK=1): a CPU backend's exec
 * runs the checked reference replay instead (replay/check_run.c), and
 * says so in rp_exec_error(); *be becomes that backend. */
static rp_status checking_mode(rp_exec *x, const rp_backend **be) {
  const char *env = getenv("RP_CHECK");
  int asked = x->opts.check > 0;
  if (x->opts.check < 0 || (!asked && !(env && !strcmp(env, "1"))))
    return RP_OK;
  const char *m = x->opts.mode;
  if ((*be)->owns != RP_DEVICE_CPU || (m && !strcmp(m, "mpi"))) {
    if (!asked)
      return RP_OK; /* RP_CHECK=1 leaves device backends alone */
    rp_exec_set_error(x,
                      "checking mode runs on the CPU backends (openmp, "
                      "starpu, reference), not on \"%s\"%s",
                      (*be)->name,
                      (*be)->owns == RP_DEVICE_CUDA
                          ? ": run the program under compute-sanitizer"
                          : "");
    return RP_ENOTSUP;
  }
  x->asked = *be;
  *be = x->be = &rp__backend_checked;
  return RP_OK;
}

void rp_exec_opts_init(rp_exec_opts *o) {
  if (o)
    *o = (rp_exec_opts)RP_EXEC_OPTS_INIT;
}

rp_status rp__exec_opts_in(rp_exec_opts *dst, const rp_exec_opts *src,
                           const char *what) {
  rp_exec_opts_init(dst);
  if (!src)
    return RP_OK;
  return rp__versioned_load(dst, sizeof *dst, src,
                            offsetof(rp_exec_opts, nthreads), what);
}

/* rp__exec_create's steps. */

/* The caller's options (the versioning rule), and the backend they choose
 * when none is named; the backend's interface version and its probe. */
static rp_status create_backend(const rp_graph *g, const rp_exec_opts *o,
                                rp_exec_opts *opts, const rp_backend **be) {
  if (!g->ended) {
    rp__set_last_error("rp_exec_create: the graph is still recording "
                       "(call rp_graph_end first)");
    return RP_ESTATE;
  }
  /* The caller's options first (the versioning rule): they choose the
   * backend when none is named. */
  rp_status s = rp__exec_opts_in(opts, o, "rp_exec_create: rp_exec_opts");
  if (s != RP_OK)
    return s;
  /* Checking mode asked and no backend named: the best CPU backend, the
   * only kind that can check (checking_mode()). */
  if (!*be && (s = rp__backend_find_for(g, opts->check > 0 ? "cpu" : NULL,
                                        be)) != RP_OK)
    return s;
  if ((*be)->abi != RP_BACKEND_ABI) {
    rp__set_last_error("backend built for another interface version");
    return RP_ENOTSUP;
  }
  rp__set_last_error("");
  if ((s = rp_backend_probe(*be)) != RP_OK) {
    /* The probe's own message if it gave one, never an earlier one. */
    if (!rp_last_error()[0]) {
      char msg[160];
      snprintf(msg, sizeof msg, "backend \"%s\": %s", (*be)->name,
               s == RP_ENODEV ? "found no usable device" : rp_strerror(s));
      rp__set_last_error(msg);
    }
    return s;
  }
  return RP_OK;
}

/* A new exec of g on *be: its options refused or accepted, checking mode
 * (which may change *be), the passes; *out NULL on failure. */
static rp_status create_exec(rp_exec **out, const rp_graph *g,
                             const rp_backend **be, const rp_exec_opts *opts,
                             rp__split_choose_fn choose) {
  rp_exec *x = calloc(1, sizeof *x);
  *out = NULL;
  if (!x)
    return RP_ENOMEM;
  x->g = x->ug = g;
  x->be = *be;
  x->chunks = 1;
  x->choose_split = choose;
  x->opts = *opts;
  rp_status s;
  if ((s = options_supported(&x->opts, *be)) != RP_OK) {
    free(x);
    return s;
  }
  if ((s = checking_mode(x, be)) != RP_OK ||
      (s = rp__exec_passes(x, g, *be)) != RP_OK) {
    rp__set_last_error(x->err);
    free(x);
    return s;
  }
  *out = x;
  return RP_OK;
}

/* The exec's own arrays: host pointers, kernel arguments, copies of the
 * options' arrays. */
static rp_status create_arrays(rp_exec *x) {
  const rp_graph *g = x->g;
  uint32_t nk = 0;
  for (uint32_t i = 0; i < g->nop; i++)
    nk += g->op[i].type == RP_OP_KERNEL;
  x->host = calloc(g->nbuf ? g->nbuf : 1, sizeof *x->host);
  x->kargs = calloc(nk ? nk : 1, sizeof *x->kargs);
  x->kidx = malloc((g->nop ? g->nop : 1) * sizeof *x->kidx);
  const rp_exec_opts *xo = &x->opts;
  if (xo->cores && xo->ncores &&
      (x->cores = malloc(xo->ncores * sizeof *x->cores)))
    memcpy(x->cores, xo->cores, xo->ncores * sizeof *x->cores);
  if (xo->device_map && xo->ndevice_map &&
      (x->device_map = malloc(xo->ndevice_map * sizeof *x->device_map)))
    memcpy(x->device_map, xo->device_map,
           xo->ndevice_map * sizeof *x->device_map);
  if (!x->host || !x->kargs || !x->kidx ||
      (xo->cores && xo->ncores && !x->cores) ||
      (xo->device_map && xo->ndevice_map && !x->device_map))
    return RP_ENOMEM;
  x->opts.cores = x->cores;
  x->opts.device_map = x->device_map;
  return RP_OK;
}

/* The host pointers and every kernel's arguments as recorded: index
 * space, scalars, regions (a split kernel's: its chunk's). */
static void create_args(rp_exec *x) {
  const rp_graph *g = x->g;
  for (uint32_t b = 0; b < g->nbuf; b++)
    x->host[b] = g->buf[b].host;
  for (uint32_t i = 0, k = 0; i < g->nop; i++) {
    const rp__op *op = &g->op[i];
    x->kidx[i] = RP_NONE;
    if (op->type != RP_OP_KERNEL)
      continue;
    x->kidx[i] = k;
    rp_kargs *a = &x->kargs[k++];
    rp_dims d = rp__op_space(g, i);
    a->n[0] = d.x;
    a->n[1] = d.y;
    a->n[2] = d.z;
    unsigned np = op->kernel ? op->kernel->nparams : 0;
    for (unsigned p = 0, acc = 0, sc = 0; p < np; p++) {
      if (op->kernel->params[p].mode == RP_SCALAR) {
        a->a[p] = g->slot[op->arg0 + sc++];
        continue;
      }
      rp_access_info ai;
      rp_node_access(g, i, acc++, &ai);
      param_region(g, &ai.region, &a->r[p]);
    }
    a->whole[0] = a->n[0];
    a->whole[1] = a->n[1];
    a->whole[2] = a->n[2];
    if (x->rw.g && x->rw.axis[i] >= 0)
      split_args(x, i, a);
  }
}

/* The plan (with the flags of this exec: the table's and its options')
 * and the backend's instance of it. */
static rp_status create_instance(rp_exec *x, const rp_backend *be) {
  rp__set_last_error("");
  rp_backend eff = *be;
  if (be->exec_flags)
    eff.flags |= be->exec_flags(&x->opts);
  rp_status s = rp__plan_build(x->g, &eff, &x->plan, x->err, sizeof x->err);
  if (s != RP_OK) {
    rp__set_last_error(x->err);
    return s;
  }
  s = be->instantiate(x, rp__plan_view(x->plan), &x->state);
  if (s != RP_OK) {
    if (!x->err[0])
      rp_exec_set_error(x, "backend \"%s\": instantiate failed: %s", be->name,
                        rp_strerror(s));
    rp__set_last_error(x->err);
  }
  return s;
}

rp_status rp__exec_create(rp_exec **out, const rp_graph *g,
                          const rp_backend *be, const rp_exec_opts *o,
                          rp__split_choose_fn choose) {
  if (!out || !g)
    return RP_EINVAL;
  *out = NULL;
  rp_exec_opts opts;
  rp_exec *x;
  rp_status s = create_backend(g, o, &opts, &be);
  if (s != RP_OK || (s = create_exec(&x, g, &be, &opts, choose)) != RP_OK)
    return s;
  if ((s = create_arrays(x)) != RP_OK) {
    exec_free(x);
    return s;
  }
  create_args(x);
  if ((s = create_instance(x, be)) != RP_OK) {
    exec_free(x);
    return s;
  }
  if (x->asked)
    rp_exec_set_error(x,
                      "checking mode (%s): one operation at a time, "
                      "kernels and host tasks on shadow memory",
                      x->opts.check > 0 ? "rp_exec_opts.check" : "RP_CHECK=1");
  *out = x;
  return RP_OK;
}

/* The launch thread of backends whose launch blocks. */
static void *launcher(void *arg) {
  rp_exec *x = arg;
  pthread_mutex_lock(&x->mu);
  for (;;) {
    while (!x->th_busy && !x->th_quit)
      pthread_cond_wait(&x->cv, &x->mu);
    if (x->th_quit)
      break;
    unsigned n = x->th_iters;
    pthread_mutex_unlock(&x->mu);
    rp_status s = x->be->launch(x->state, n);
    pthread_mutex_lock(&x->mu);
    x->th_status = s;
    x->th_busy = 0;
    pthread_cond_broadcast(&x->cv);
  }
  pthread_mutex_unlock(&x->mu);
  return NULL;
}

static rp_status launch_async(rp_exec *x, unsigned iterations) {
  if (!x->th_on) {
    if (pthread_mutex_init(&x->mu, NULL))
      return RP_ENOMEM;
    if (pthread_cond_init(&x->cv, NULL)) {
      pthread_mutex_destroy(&x->mu);
      return RP_ENOMEM;
    }
    if (pthread_create(&x->th, NULL, launcher, x)) {
      pthread_cond_destroy(&x->cv);
      pthread_mutex_destroy(&x->mu);
      rp_exec_set_error(x, "cannot start the launch thread");
      return RP_ENOMEM;
    }
    x->th_on = 1;
  }
  pthread_mutex_lock(&x->mu);
  x->th_iters = iterations;
  x->th_status = RP_OK;
  x->th_busy = 1;
  pthread_cond_broadcast(&x->cv);
  pthread_mutex_unlock(&x->mu);
  return RP_OK;
}

/* Wait for the launch thread; its launch's status. */
static rp_status join_async(rp_exec *x) {
  if (!x->th_on)
    return RP_OK;
  pthread_mutex_lock(&x->mu);
  while (x->th_busy)
    pthread_cond_wait(&x->cv, &x->mu);
  rp_status s = x->th_status;
  pthread_mutex_unlock(&x->mu);
  return s;
}

static rp_status wait_(rp_exec *x);

static rp_status launch_(rp_exec *x, unsigned iterations) {
  if (x->launched) {
    rp_status s = wait_(x);
    if (s != RP_OK)
      return s;
  }
  x->t0 = rp__now_us();
  if (!iterations)
    return RP_OK;
  x->batch++;
  x->launched_iters = iterations;
  rp_status s = x->be->flags & RP_BACKEND_BLOCKING_LAUNCH
                    ? launch_async(x, iterations)
                    : x->be->launch(x->state, iterations);
  x->launched = s == RP_OK;
  if (s != RP_OK && !x->err[0])
    rp_exec_set_error(x, "backend \"%s\": run failed: %s", x->be->name,
                      rp_strerror(s));
  return s;
}

rp_status rp_exec_launch(rp_exec *x, unsigned iterations) {
  RP_ENTER();
  if (!x)
    return RP_NULL_ARG();
  rp__exec_begin(x);
  return launch_(x, iterations);
}

static rp_status wait_(rp_exec *x) {
  if (!x->launched)
    return RP_OK;
  rp_status s = join_async(x);
  rp_status s2 = x->be->wait(x->state);
  if (s == RP_OK)
    s = s2;
  x->last_us = rp__now_us() - x->t0;
  x->launched = 0;
  if (s == RP_OK && x->nguard)
    s = rp__exec_guards(x, 0);
  if (s != RP_OK && !x->err[0])
    rp_exec_set_error(x, "backend \"%s\": run failed: %s", x->be->name,
                      rp_strerror(s));
  if (s == RP_OK && x->opts.progress)
    x->opts.progress(x->opts.progress_user, x->launched_iters);
  return s;
}

rp_status rp_exec_wait(rp_exec *x) {
  RP_ENTER();
  if (!x)
    return RP_NULL_ARG();
  rp__exec_begin(x);
  return wait_(x);
}

rp_status rp_exec_wait_buffer(rp_exec *x, rp_buf b) {
  RP_ENTER();
  if (!x)
    return RP_NULL_ARG();
  rp__exec_begin(x);
  if (b >= rp_graph_num_buffers(x->g) || !x->host[b]) {
    rp_exec_set_error(x, "wait_buffer: %s %u",
                      b < rp_graph_num_buffers(x->g)
                          ? "internal buffer (no host array)"
                          : "no buffer",
                      b);
    return RP_EINVAL;
  }
  if (!x->launched)
    return RP_OK;
  if (!x->be->wait_buffer)
    return wait_(x);
  rp_status s = x->be->wait_buffer(x->state, b);
  if (s != RP_OK)
    return wait_(x);
  return RP_OK;
}

rp_status rp__exec_run(rp_exec *x, unsigned iterations) {
  /* A launch that blocks runs on the caller's thread here: the caller
   * would only wait for it, and the hand-off to the launch thread and
   * back costs two wake-ups (microseconds, milliseconds on a loaded
   * machine). */
  if (iterations && (x->be->flags & RP_BACKEND_BLOCKING_LAUNCH)) {
    rp_status s = wait_(x);
    if (s != RP_OK)
      return s;
    x->t0 = rp__now_us();
    x->batch++;
    x->launched_iters = iterations;
    s = x->be->launch(x->state, iterations);
    rp_status s2 = x->be->wait(x->state);
    if (s == RP_OK)
      s = s2;
    x->last_us = rp__now_us() - x->t0;
    if (s == RP_OK && x->nguard)
      s = rp__exec_guards(x, 0);
    if (s != RP_OK && !x->err[0])
      rp_exec_set_error(x, "backend \"%s\": run failed: %s", x->be->name,
                        rp_strerror(s));
    return s;
  }
  rp_status s = launch_(x, iterations);
  if (s != RP_OK)
    return s;
  return wait_(x);
}

rp_status rp__exec_wait(rp_exec *x) { return wait_(x); }

rp_status rp_exec_run(rp_exec *x, unsigned iterations) {
  RP_ENTER();
  if (!x)
    return RP_NULL_ARG();
  rp__exec_begin(x);
  return rp__exec_run(x, iterations);
}

rp_status rp_exec_rebind(rp_exec *x, rp_buf b, void *host, uint64_t bytes) {
  RP_ENTER();
  if (!x)
    return RP_NULL_ARG();
  rp__exec_begin(x);
  if (b >= x->g->nbuf) {
    rp_exec_set_error(x, "rebind: no buffer %u", b);
    return RP_EINVAL;
  }
  if (!host || !x->g->buf[b].host) {
    rp_exec_set_error(x, "rebind: buffer \"%s\" %s", x->g->buf[b].name,
                      host ? "is internal (it has no host image)"
                           : "needs a host pointer");
    return RP_EINVAL;
  }
  if (bytes < x->g->buf[b].bytes) {
    rp_exec_set_error(x,
                      "rebind: %llu bytes given for buffer \"%s\" of "
                      "%llu bytes",
                      (unsigned long long)bytes, x->g->buf[b].name,
                      (unsigned long long)x->g->buf[b].bytes);
    return RP_EINVAL;
  }
  rp_status s = wait_(x);
  if (s != RP_OK)
    return s;
  void *old = x->host[b];
  x->host[b] = host;
  s = x->be->rebind ? x->be->rebind(x->state, b) : RP_ENOTSUP;
  if (s != RP_OK) {
    x->host[b] = old;
    if (!x->err[0])
      rp_exec_set_error(x, "rebind of \"%s\" failed: %s", x->g->buf[b].name,
                        rp_strerror(s));
  }
  return s;
}

static rp_status set_scalar1(rp_exec *x, rp_node n, unsigned param,
                             rp_slot value);

rp_status rp_exec_set_scalar(rp_exec *x, rp_node n, unsigned param,
                             rp_slot value) {
  RP_ENTER();
  if (!x)
    return RP_NULL_ARG();
  rp__exec_begin(x);
  if (!x->rw.g)
    return set_scalar1(x, n, param, value);
  if (n >= x->rw.nop) {
    rp_exec_set_error(x, "set_scalar: node %u has no scalar parameter %u", n,
                      param);
    return RP_EINVAL;
  }
  rp_status s = RP_OK;
  for (rp_node m = x->rw.first[n]; m < x->rw.first[n + 1] && s == RP_OK; m++)
    s = set_scalar1(x, m, param, value);
  return s;
}

static rp_status set_scalar1(rp_exec *x, rp_node n, unsigned param,
                             rp_slot value) {
  const rp__op *op = n < x->g->nop ? &x->g->op[n] : NULL;
  if (!op || op->type != RP_OP_KERNEL || !op->kernel ||
      param >= op->kernel->nparams ||
      op->kernel->params[param].mode != RP_SCALAR) {
    rp_exec_set_error(x, "set_scalar: node %u has no scalar parameter %u", n,
                      param);
    return RP_EINVAL;
  }
  rp_status s = wait_(x);
  if (s != RP_OK)
    return s;
  rp_slot old = x->kargs[x->kidx[n]].a[param];
  x->kargs[x->kidx[n]].a[param] = value;
  s = x->be->set_scalar
          ? x->be->set_scalar(x->state, rp__plan_view(x->plan)->node_of[n],
                              param)
          : RP_ENOTSUP;
  if (s != RP_OK) {
    x->kargs[x->kidx[n]].a[param] = old;
    if (!x->err[0])
      rp_exec_set_error(x, "set_scalar on \"%s\" failed: %s", op->name,
                        rp_strerror(s));
  }
  return s;
}

rp_status rp_exec_kernel_block(rp_exec *x, rp_node n, rp_kernel_block *out) {
  RP_ENTER();
  /* n is an operation of the recorded graph: with a rewrite (copies
   * reshaped, the cuda default; a split), its first operation there. */
  if (x && x->rw.g)
    n = n < x->rw.nop ? x->rw.first[n] : RP_NONE;
  const rp__op *op = x && n < x->g->nop ? &x->g->op[n] : NULL;
  if (!op || op->type != RP_OP_KERNEL || !out)
    return RP_BAD_ARG();
  uint32_t v = rp__plan_view(x->plan)->node_of[n];
  if (!x->be->kernel_block || v == RP_NONE)
    return RP_ENOTSUP;
  return x->be->kernel_block(x->state, v, out);
}

rp_status rp_exec_stats(const rp_exec *x, rp_exec_stat *out, unsigned max,
                        unsigned *count) {
  RP_ENTER();
  if (!x || (max && !out))
    return RP_BAD_ARG();
  if (!x->be->stats) {
    rp__set_last_errorf("rp_exec_stats: the %s backend keeps no figures",
                        x->be->name);
    return RP_ENOTSUP;
  }
  unsigned n = 0;
  rp_status s = x->be->stats(x->state, out, max, &n);
  if (s == RP_OK && count)
    *count = n;
  return s;
}

rp_status rp_exec_stat_get(const rp_exec *x, const char *name, double *value) {
  RP_ENTER();
  if (!x || !name || !value)
    return RP_NULL_ARG();
  rp_exec_stat st[64];
  unsigned n = 0;
  rp_status s = rp_exec_stats(x, st, 64, &n);
  if (s != RP_OK)
    return s;
  for (unsigned i = 0; i < n && i < 64; i++)
    if (!strcmp(st[i].name, name)) {
      *value = st[i].value;
      return RP_OK;
    }
  rp__set_last_errorf("rp_exec_stat_get: the %s backend keeps no figure "
                      "named \"%s\"",
                      x->be->name, name);
  return RP_ENOTFOUND;
}

rp_status rp_exec_trace(rp_exec *x, int on) {
  RP_ENTER();
  if (!x)
    return RP_NULL_ARG();
  if (!x->be->trace) {
    rp__set_last_errorf("rp_exec_trace: the %s backend does not trace",
                        x->be->name);
    return RP_ENOTSUP;
  }
  rp_status s = x->be->trace(x->state, on);
  if (s != RP_OK)
    rp__set_last_errorf("rp_exec_trace: %s", rp_exec_error(x));
  return s;
}

rp_status rp_exec_predict(const rp_exec *x, const rp_exec_stat *model,
                          unsigned nmodel, const double *op_us, unsigned nranks,
                          double *rank_us) {
  RP_ENTER();
  if (!x || (nmodel && !model) || !rank_us || !nranks)
    return RP_BAD_ARG();
  if (!x->be->predict) {
    rp__set_last_errorf("rp_exec_predict: the %s backend does not predict",
                        x->be->name);
    return RP_ENOTSUP;
  }
  rp_status s = x->be->predict(x->state, model, nmodel, op_us, nranks, rank_us);
  if (s != RP_OK)
    rp__set_last_errorf("rp_exec_predict: %s", rp_exec_error(x));
  return s;
}

rp_status rp__exec_timeline(rp_exec *x, double *start_us, double *end_us) {
  return x->be->timeline(x->state, start_us, end_us);
}

rp_status rp_exec_profile(rp_exec *x, double *op_us) {
  RP_ENTER();
  if (!x)
    return RP_NULL_ARG();
  rp__exec_begin(x);
  return rp__exec_profile(x, op_us, 1);
}

rp_status rp__exec_profile(rp_exec *x, double *op_us, int user) {
  if (!x || !op_us)
    return RP_EINVAL;
  rp_status s = wait_(x);
  if (s != RP_OK)
    return s;
  if (!x->be->profile) {
    rp_exec_set_error(x, "backend \"%s\" cannot profile", x->be->name);
    return RP_ENOTSUP;
  }
  x->err[0] = 0;
  const rp_plan *p = rp__plan_view(x->plan);
  double *nus = malloc((p->nnode ? p->nnode : 1) * sizeof *nus);
  if (!nus)
    return RP_ENOMEM;
  double t0 = rp__now_us();
  s = x->be->profile(x->state, nus);
  x->last_us = rp__now_us() - t0;
  user = user && x->rw.g;
  if (user)
    for (uint32_t n = 0; n < x->rw.nop; n++)
      op_us[n] = 0.0;
  for (uint32_t n = 0; n < x->g->nop; n++) {
    double t = p->node_of[n] == RP_NONE ? 0.0 : nus[p->node_of[n]];
    if (user)
      op_us[x->rw.orig[n]] += t;
    else
      op_us[n] = t;
  }
  free(nus);
  return s;
}

void rp_exec_destroy(rp_exec *x) {
  if (!x)
    return;
  rp_status s = rp_exec_wait(x);
  /* The whole zones; a damaged one is said through rp_last_error(). */
  if (s == RP_OK && x->nguard)
    rp__exec_guards(x, 1);
  x->be->destroy(x->state);
  exec_free(x);
}

rp_status rp_replay_reference(const rp_graph *g, unsigned iterations) {
  RP_ENTER();
  if (!g)
    return RP_NULL_ARG();
  rp_exec *x;
  rp_status s = rp__exec_create(&x, g, &rp_backend_reference, NULL, NULL);
  if (s != RP_OK)
    return s;
  s = rp_exec_run(x, iterations);
  rp_exec_destroy(x);
  return s;
}
