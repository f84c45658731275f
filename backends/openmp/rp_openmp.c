/* OpenMP backend for reprise replay: instantiate, run, rebind, profile.
 * It reads only the plan (include/reprise/backend.h): one task per plan
 * node, the plan's successor lists, its images (user images are the live
 * user arrays, the others zeroed allocations) and its copies' byte runs.
 *
 * Team: opts.nthreads threads (0: one per given core, else the OpenMP
 * default), pinned one per core of opts.cores when given (thread i on
 * cores[i % ncores]); without cores, on OpenMP's places when binding is
 * asked, else not pinned (omp_bind.c; the caller's own mask is restored
 * after every launch). A team of
 * several runs the stealing engine (omp_steal.c; modes "parallel", the
 * default, and "dynamic"), or in mode "owner" the owner engine after a
 * first, timed launch (omp_owner.c). Mode "serial" and a team of one run
 * every operation whole, in program order, on the calling thread (the
 * baseline of achieved speedup).
 * Logical devices: with several devices in the graph the team is cut into
 * groups of consecutive threads (so of consecutive given cores), one per
 * device (opts.device_map[d] names device d's group; default d), the groups
 * wrapping when there are more devices than threads. A kernel or a copy of
 * device d runs only on its group's threads; host tasks run on any thread.
 * Launch blocks (RP_BACKEND_BLOCKING_LAUNCH): rp_exec_launch() hands it to
 * the core's launch thread and returns at once; rp_exec_run() runs it on
 * the caller's thread, which is thread 0 of the team for the launch. */
#include <sched.h>
#include <time.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <omp.h>
#include "omp_internal.h"

static rp_status omp_probe(void) { return RP_OK; }

/* Zeroed, 64-byte aligned memory for the arrays every replay walks (tasks,
 * kernels' argument blocks); from 1 MiB on, on 2 MiB boundaries and
 * offered transparent huge pages: a replay of tens of thousands of tasks
 * then misses the TLB far less. Freed with free(). */
static void *walk_alloc(size_t bytes) {
  const size_t huge = (size_t)2 << 20;
  void *p;
  if (bytes < huge / 2) {
    bytes = (bytes + 63) / 64 * 64;
    p = aligned_alloc(64, bytes ? bytes : 64);
  } else {
    bytes = (bytes + huge - 1) / huge * huge;
    p = aligned_alloc(huge, bytes);
#ifdef MADV_HUGEPAGE
    if (p)
      madvise(p, bytes, MADV_HUGEPAGE);
#endif
  }
  if (p)
    memset(p, 0, bytes ? bytes : 64);
  return p;
}

/* Point kernels' argument slots and host tasks' pointers at the images. */
static void bind(ostate *st) {
  const rp_plan *p = st->p;
  for (uint32_t v = 0; v < st->n; v++) {
    const rp_plan_node *nd = &p->node[v];
    const rp_plan_access *a = p->acc + nd->acc0;
    if (nd->type == RP_OP_KERNEL) {
      for (uint32_t k = 0; k < nd->nacc; k++)
        if (a[k].image != RP_NONE)
          ((rp_kargs *)st->task[v].p)->a[k].p = st->img[a[k].image];
    } else if (nd->type == RP_OP_HOST) {
      for (uint32_t k = 0; k < nd->nacc; k++)
        st->hptr[st->hptr0[v] + k] = st->img[a[k].image];
    }
  }
}

static void omp_destroy(void *state) {
  ostate *st = (ostate *)state;
  if (!st)
    return;
  rp__omp_steal_free(st); /* joins the team first: a thread may still
                             read the state after a launch returned */
  rp__omp_roots_free(st);
  rp__omp_owner_free(st);
  free(st->mstart);
  free(st->mend);
  free(st->tset);
  for (uint32_t i = 0; st->owned && i < st->p->nimage; i++)
    rp_image_free(st->owned[i]);
  free(st->owned);
  free(st->img);
  free(st->task);
  free(st->kargs);
  free(st->hptr);
  free(st->hptr0);
  free(st->copy);
  pthread_mutex_destroy(&st->mu);
  pthread_cond_destroy(&st->cv);
  free(st);
}

/* Team size, pinning and the thread groups of logical devices. */
static rp_status setup_team(ostate *st, const rp_exec_opts *o) {
  st->ncores = o->cores ? (int)o->ncores : 0;
  if (st->ncores > RP_OMP_MAXT)
    st->ncores = RP_OMP_MAXT;
  for (int i = 0; i < st->ncores; i++) {
    if (o->cores[i] < 0 || o->cores[i] >= CPU_SETSIZE) {
      rp_exec_set_error(st->x, "openmp: core %d out of range", o->cores[i]);
      return RP_EINVAL;
    }
    st->cores[i] = o->cores[i];
  }
  int nth = o->nthreads > 0 ? o->nthreads
            : st->ncores    ? st->ncores
                            : omp_get_max_threads();
  if (o->nthreads < 0) {
    rp_exec_set_error(st->x, "openmp: nthreads %d < 0", o->nthreads);
    return RP_EINVAL;
  }
  /* "parallel" (default) and "dynamic" (once another engine): both the
   * stealing engine */
  st->serial = o->mode && !strcmp(o->mode, "serial");
  st->owner_mode = o->mode && !strcmp(o->mode, "owner");
  if (o->mode && !st->serial && !st->owner_mode &&
      strcmp(o->mode, "parallel") && strcmp(o->mode, "dynamic")) {
    rp_exec_set_error(st->x,
                      "openmp: unknown mode \"%s\" (parallel, "
                      "dynamic, owner, serial)",
                      o->mode);
    return RP_EINVAL;
  }
  if (st->serial)
    nth = 1;
  st->nth = nth < 1 ? 1 : nth > RP_OMP_MAXT ? RP_OMP_MAXT : nth;
  rp_status rc = rp__omp_bind_team(st);
  if (rc != RP_OK)
    return rc;
  unsigned ndev = st->p->ndev;
  int want = 1;
  for (unsigned d = 0; d < ndev; d++) {
    int m = o->device_map && d < o->ndevice_map ? o->device_map[d] : (int)d;
    if (m < 0) {
      rp_exec_set_error(st->x, "openmp: device_map[%u] = %d < 0", d, m);
      return RP_EINVAL;
    }
    want = m + 1 > want ? m + 1 : want;
  }
  st->ngroups = want < st->nth ? want : st->nth;
  for (int i = 0; i < st->nth; i++) {
    st->tgroup[i] = i * st->ngroups / st->nth;
    st->gsize[st->tgroup[i]]++;
  }
  for (uint32_t v = 0; v < st->n; v++) {
    const rp_plan_node *nd = &st->p->node[v];
    otask *tk = &st->task[v];
    if (tk->kind == OT_KERNEL || tk->kind == OT_COPY) {
      int d = nd->device;
      int m =
          o->device_map && (unsigned)d < o->ndevice_map ? o->device_map[d] : d;
      tk->group = (int8_t)(m % st->ngroups);
    } else {
      tk->group = -1;
    }
  }
  return RP_OK;
}

/* The images: user arrays, or zeroed allocations. */
static rp_status build_images(ostate *st) {
  const rp_plan *p = st->p;
  void *const *host = rp_exec_host(st->x);
  for (uint32_t i = 0; i < p->nimage; i++) {
    const rp_plan_image *im = &p->image[i];
    if (im->flags & RP_IMAGE_USER) {
      st->img[i] = host[im->buf];
    } else {
      /* Guarded: the core checks the zones after each replay. */
      if (!(st->owned[i] = rp_image_alloc(im->bytes)) ||
          rp_exec_guard_image(st->x, i, st->owned[i]) != RP_OK)
        return RP_ENOMEM;
      st->img[i] = st->owned[i];
    }
  }
  return RP_OK;
}

/* The tasks: kinds, kernels' argument blocks, host pointers, copies,
 * successors and in-degrees (the plan's), host writers. */
static rp_status build_tasks(ostate *st) {
  const rp_plan *p = st->p;
  uint32_t nhp = 0, nk = 0;
  for (uint32_t v = 0; v < st->n; v++) {
    st->hptr0[v] = nhp;
    if (p->node[v].type == RP_OP_HOST)
      nhp += p->node[v].nacc;
  }
  st->hptr = calloc(nhp ? nhp : 1, sizeof *st->hptr);
  if (!st->hptr)
    return RP_ENOMEM;
  for (uint32_t v = 0; v < st->n; v++) {
    const rp_plan_node *nd = &p->node[v];
    const rp_plan_access *a = p->acc + nd->acc0;
    otask *t = &st->task[v];
    t->s0 = nd->succ0;
    t->ns = nd->nsucc;
    t->indeg0 = (int)nd->npred;
    atomic_init(&t->done, 0);
    if (nd->type == RP_OP_KERNEL) {
      if (!nd->kernel || !nd->kernel->cpu) {
        rp_exec_set_error(st->x,
                          "openmp: kernel \"%s\" (node %u) has no "
                          "CPU body%s",
                          nd->name, nd->op,
                          nd->kernel ? "" : " (graph loaded from a file)");
        return RP_ENOKERNEL;
      }
      const rp_kargs *tpl = rp_exec_args(st->x, nd->op);
      rp_kargs *ka = &st->kargs[nk++].k;
      if (tpl)
        *ka = *tpl;
      t->kind = OT_KERNEL;
      t->fn.k = nd->kernel->cpu;
      t->p = ka;
      const uint64_t *nn = ka->n;
      uint64_t pts = nn[0] * nn[1] * nn[2];
      t->sdim = nn[2] > 1 ? 2 : nn[1] > 1 ? 1 : 0;
      t->split = !st->serial && pts >= RP_OMP_SPLIT_MIN && nn[t->sdim] > 1;
    } else if (nd->type == RP_OP_HOST) {
      if (!nd->host_fn) {
        rp_exec_set_error(st->x,
                          "openmp: host task \"%s\" (node %u) has no "
                          "function (graph loaded from a file)",
                          nd->name, nd->op);
        return RP_ENOKERNEL;
      }
      t->kind = OT_HOST;
      t->fn.h = nd->host_fn;
      t->user = nd->host_user;
      t->p = &st->hptr[st->hptr0[v]];
    } else {
      ocopy *c = &st->copy[v];
      c->src = a[0].image;
      c->dst = a[1].image;
      c->niv = a[1].niv;
      c->iv = p->iv + 2 * (uint64_t)a[1].iv0;
      t->kind = OT_COPY;
      t->p = c;
    }
  }
  for (uint32_t i = 0; i < p->hw_off[p->nbuf]; i++)
    st->task[p->host_writers[i]].hw = 1;
  return RP_OK;
}

static rp_status omp_instantiate(rp_exec *x, const rp_plan *p, void **state) {
  ostate *st = rp__omp_state_new(x, p);
  if (!st)
    return RP_ENOMEM;
  st->n = p->nnode;
  st->succ = p->succ;
  size_t nt = st->n ? st->n : 1, ni = p->nimage ? p->nimage : 1;
  st->task = walk_alloc(nt * sizeof(otask));
  size_t nk = 0;
  for (uint32_t v = 0; v < st->n; v++)
    nk += p->node[v].type == RP_OP_KERNEL;
  st->kargs = walk_alloc((nk ? nk : 1) * sizeof *st->kargs);
  st->hptr0 = calloc(nt, sizeof *st->hptr0);
  st->copy = calloc(nt, sizeof *st->copy);
  st->img = calloc(ni, sizeof *st->img);
  st->owned = calloc(ni, sizeof *st->owned);
  rp_status rc = RP_ENOMEM;
  if (!st->task || !st->kargs || !st->hptr0 || !st->copy || !st->img ||
      !st->owned)
    goto fail;
  if ((rc = build_images(st)) != RP_OK || (rc = build_tasks(st)) != RP_OK ||
      (rc = setup_team(st, rp_exec_opts_get(x))) != RP_OK ||
      (rc = rp__omp_roots_init(st)) != RP_OK)
    goto fail;
  /* A team of several: the stealing engine; mode "owner" times every
   * task in its first launch to choose the owners of the later ones. */
  if (st->nth > 1 && (rc = rp__omp_steal_init(st)) != RP_OK)
    goto fail;
  if (st->nth > 1 && st->owner_mode) {
    rc = RP_ENOMEM;
    if (!(st->mstart = malloc(nt * sizeof(double))) ||
        !(st->mend = malloc(nt * sizeof(double))))
      goto fail;
  }
  bind(st);
  *state = st;
  return RP_OK;
fail:
  if (rc == RP_ENOMEM)
    rp_exec_set_error(x, "openmp: out of memory instantiating %u nodes", st->n);
  omp_destroy(st);
  return rc;
}

/* Cost of one rp_clock_us() call (µs), taken out of measured durations. */
static double clock_cost(void) {
  double t0 = rp_clock_us(), t1 = t0;
  for (int i = 0; i < 64; i++)
    t1 = rp_clock_us();
  return (t1 - t0) / 64;
}

/* Run replays; lepoch counts every replay this exec ran. A team of one
 * replays in program order on the caller; of several, on the stealing
 * engine, but in mode "owner": there the first launch (timed) is the
 * stealing engine's and its durations choose the owners of the owner
 * engine that runs every later one (when that fails for memory, the
 * stealing engine stays). */
static void run_engine(ostate *st, unsigned iterations) {
  if (st->nth == 1 || st->owner) {
    rp__omp_run_caller(st, iterations);
    return;
  }
  if (!st->mstart) {
    rp__omp_steal_run(st, iterations);
    return;
  }
  const bool mine = !st->tl_start;
  if (mine) {
    st->tl_start = st->mstart;
    st->tl_end = st->mend;
    st->tl_t0 = rp_clock_us();
  }
  rp__omp_steal_run(st, iterations);
  const double c = clock_cost();
  for (uint32_t v = 0; v < st->n; v++) {
    double d = st->tl_end[v] - st->tl_start[v] - c;
    st->mstart[v] = d > 0 ? d : 0;
  }
  if (mine)
    st->tl_start = st->tl_end = NULL;
  rp__omp_owner_plan(st, st->mstart);
  free(st->mstart);
  free(st->mend);
  st->mstart = st->mend = NULL;
}

/* Run a batch; its first failure, if a body reported one. */
static rp_status run(ostate *st, unsigned iterations) {
  st->be0 = st->lepoch;
  st->fcode = 0;
  atomic_store(&st->failed, 0);
  run_engine(st, iterations);
  const int code = st->fcode;
  if (!code)
    return RP_OK;
  st->fcode = 0;
  return rp_exec_fail_task(
      st->x, st->fnode, (unsigned)(st->fepoch - st->be0 - 1), code, st->fmsg);
}

static rp_status omp_launch(void *state, unsigned iterations) {
  ostate *st = (ostate *)state;
  pthread_mutex_lock(&st->mu);
  st->batch = rp_exec_batch(st->x, NULL);
  st->target = st->lepoch + (long)iterations;
  pthread_cond_broadcast(&st->cv);
  pthread_mutex_unlock(&st->mu);
  return run(st, iterations);
}

static rp_status omp_wait(void *state) {
  (void)state;
  return RP_OK;
}

/* Done when every host writer of b has finished the batch's last replay;
 * the batch may not have reached the engine yet (the core's launch
 * thread), so first wait until it has. */
typedef struct omp_wait_ctx {
  ostate *st;
  rp_buf b;
  uint64_t batch;
  int have_target; /* the batch reached the engine: target read */
  long target;
} omp_wait_ctx;

/* Unlike the other engines, the tasks publish their epochs with atomics,
 * not under the mutex (rp__omp_done does not fence): the wait polls. */
static int omp_buffer_ready(void *ctx) {
  omp_wait_ctx *w = ctx;
  ostate *st = w->st;
  const rp_plan *p = st->p;
  if (!w->have_target) {
    if (st->batch != w->batch)
      return 0;
    w->have_target = 1;
    w->target = st->target;
  }
  for (uint32_t i = p->hw_off[w->b]; i < p->hw_off[w->b + 1]; i++)
    if (atomic_load(&st->task[p->host_writers[i]].done) < w->target)
      return 0;
  return 1;
}

static rp_status omp_wait_buffer(void *state, rp_buf b) {
  ostate *st = (ostate *)state;
  const rp_plan *p = st->p;
  omp_wait_ctx w = {.st = st, .b = b};
  w.batch = rp_exec_batch(st->x, NULL);
  if (p->hw_off[b] == p->hw_off[b + 1])
    return RP_OK;
  atomic_fetch_add(&st->waiters, 1);
  rp_backend_wait_progress(&st->mu, &st->cv, omp_buffer_ready, &w, 200);
  atomic_fetch_sub(&st->waiters, 1);
  return RP_OK;
}

static rp_status omp_rebind(void *state, rp_buf b) {
  ostate *st = (ostate *)state;
  void *h = rp_exec_host(st->x)[b];
  for (uint32_t i = 0; i < st->p->nimage; i++)
    if ((st->p->image[i].flags & RP_IMAGE_USER) && st->p->image[i].buf == b)
      st->img[i] = h;
  bind(st);
  return RP_OK;
}

static rp_status omp_set_scalar(void *state, uint32_t n, unsigned param) {
  ostate *st = (ostate *)state;
  if (n >= st->n)
    return RP_EINVAL;
  const rp_kargs *tpl = rp_exec_args(st->x, st->p->node[n].op);
  if (!tpl || param >= RP_MAX_PARAMS)
    return RP_EINVAL;
  if (st->task[n].kind != OT_KERNEL)
    return RP_EINVAL;
  ((rp_kargs *)st->task[n].p)->a[param] = tpl->a[param];
  return RP_OK;
}

static rp_status omp_profile(void *state, double *node_us) {
  ostate *st = (ostate *)state;
  for (uint32_t v = 0; v < st->n; v++) {
    double t0 = rp_clock_us();
    rp__omp_run_task(st, &st->task[v]);
    node_us[v] = rp_clock_us() - t0;
    char msg[256];
    int c = rp_task_take_failure(msg, sizeof msg);
    if (c)
      return rp_exec_fail_task(st->x, v, 0, c, msg);
  }
  return RP_OK;
}

static rp_status omp_timeline(void *state, double *start_us, double *end_us) {
  ostate *st = (ostate *)state;
  st->tl_start = start_us;
  st->tl_end = end_us;
  st->tl_t0 = rp_clock_us();
  rp_status s = run(st, 1);
  st->tl_start = st->tl_end = NULL;
  return s;
}

/* The idle policy's figures (omp_idle.h; docs/openmp.md, "Idle threads
 * on a busy machine"). */
static rp_status omp_stats(void *state, rp_exec_stat *out, unsigned max,
                           unsigned *count) {
  const ostate *st = (const ostate *)state;
  const rp_exec_stat all[] = {
      {"idle_yield", atomic_load(&st->yield.v)},
      {"usable_cpus", st->ncpu},
      {"others_runnable", st->others_seen},
      {"spin_max", (double)atomic_load(&st->spin_max.v)},
      {"naps", (double)atomic_load(&st->naps.v)},
  };
  const unsigned n = sizeof all / sizeof *all;
  for (unsigned i = 0; i < n && i < max; i++)
    out[i] = all[i];
  if (count)
    *count = n;
  return RP_OK;
}

const rp_backend rp_backend_openmp = {
    .abi = RP_BACKEND_ABI,
    .name = "openmp",
    .priority = 10,
    .owns = RP_DEVICE_CPU,
    .flags = RP_BACKEND_BLOCKING_LAUNCH,
    .probe = omp_probe,
    .instantiate = omp_instantiate,
    .launch = omp_launch,
    .wait = omp_wait,
    .wait_buffer = omp_wait_buffer,
    .rebind = omp_rebind,
    .set_scalar = omp_set_scalar,
    .profile = omp_profile,
    .timeline = omp_timeline,
    .destroy = omp_destroy,
    .stats = omp_stats,
    .options =
        RP_EXEC_OPT_NTHREADS | RP_EXEC_OPT_CORES | RP_EXEC_OPT_DEVICE_MAP,
};
