/* OpenMP backend for reprise replay: instantiate, run, rebind, profile.
 *
 * Team: opts.nthreads threads (0: one per given core, else the OpenMP
 * default), pinned one per core of opts.cores when given (thread i on
 * cores[i % ncores]). Mode "serial" runs every operation whole, in program
 * order, on the calling thread (the baseline of achieved speedup).
 * Logical devices: with several devices in the graph the team is cut into
 * groups of consecutive threads (so of consecutive given cores), one per
 * device (opts.device_map[d] names device d's group; default d), the groups
 * wrapping when there are more devices than threads. A kernel or a copy of
 * device d runs only on its group's threads; host tasks and elided copies
 * run on any thread. */
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <omp.h>
#include "omp_internal.h"

static rp_status omp_probe(void) { return RP_OK; }

void rp__omp_bind(ostate *st) {
  const rp_graph *g = st->g;
  for (uint32_t n = 0; n < st->n; n++) {
    const rp__op *o = &g->op[n];
    if (o->type == RP_OP_KERNEL) {
      rp_kargs *ka = &st->kargs[n];
      const rp_kernel *k = o->kernel;
      unsigned sl = 1 + (unsigned)o->device;
      for (unsigned i = 0; i < k->nparams; i++)
        if (k->params[i].mode != RP_SCALAR)
          ka->a[i].p = st->img[g->args[o->arg0 + i].region.buf * st->ns + sl];
    } else if (o->type == RP_OP_HOST) {
      const rp__access *ac = rp__op_acc(g, n);
      for (uint32_t i = 0; i < o->nacc; i++)
        st->hptr[st->hptr0[n] + i] = st->img[ac[i].region.buf * st->ns];
    }
  }
}

static void omp_destroy(void *state) {
  ostate *st = (ostate *)state;
  if (!st)
    return;
  rp__omp_engine_free(st);
  for (uint32_t i = 0; i < st->nowned; i++)
    free(st->owned[i]);
  for (uint32_t i = 0; i < st->ncopy; i++)
    free(st->copy[i].iv);
  free(st->owned);
  free(st->img);
  free(st->shared);
  free(st->task);
  free(st->succ);
  free(st->kargs);
  free(st->hptr);
  free(st->hptr0);
  free(st->copy);
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
            : st->ncores ? st->ncores : omp_get_max_threads();
  if (o->nthreads < 0) {
    rp_exec_set_error(st->x, "openmp: nthreads %d < 0", o->nthreads);
    return RP_EINVAL;
  }
  st->serial = o->mode && !strcmp(o->mode, "serial");
  if (o->mode && !st->serial && strcmp(o->mode, "parallel")) {
    rp_exec_set_error(st->x, "openmp: unknown mode \"%s\" (parallel, serial)",
                      o->mode);
    return RP_EINVAL;
  }
  if (st->serial)
    nth = 1;
  st->nth = nth < 1 ? 1 : nth > RP_OMP_MAXT ? RP_OMP_MAXT : nth;
  unsigned ndev = rp_graph_num_devices(st->g);
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
  for (uint32_t t = 0; t < st->n; t++) {
    const rp__op *op = &st->g->op[t];
    otask *tk = &st->task[t];
    if (tk->kind == OT_KERNEL || tk->kind == OT_COPY) {
      int d = op->device;
      int m = o->device_map && (unsigned)d < o->ndevice_map
                  ? o->device_map[d] : d;
      tk->group = (int8_t)(m % st->ngroups);
    } else {
      tk->group = -1;
    }
  }
  return RP_OK;
}

/* The tasks: kinds, kernels' argument blocks, host pointers, copies. */
static rp_status build_tasks(ostate *st) {
  const rp_graph *g = st->g;
  uint32_t nhp = 0;
  for (uint32_t n = 0; n < st->n; n++) {
    st->hptr0[n] = nhp;
    if (g->op[n].type == RP_OP_HOST)
      nhp += g->op[n].nacc;
  }
  st->hptr = calloc(nhp ? nhp : 1, sizeof *st->hptr);
  st->copy = calloc(st->n, sizeof *st->copy);
  if (!st->hptr || !st->copy)
    return RP_ENOMEM;
  for (uint32_t n = 0; n < st->n; n++) {
    const rp__op *o = &g->op[n];
    otask *t = &st->task[n];
    t->node = n;
    if (o->type == RP_OP_KERNEL) {
      if (!o->kernel || !o->kernel->cpu) {
        rp_exec_set_error(st->x, "openmp: kernel \"%s\" (node %u) has no "
                          "CPU body", o->kernel ? o->kernel->name
                          : o->kernel_name ? o->kernel_name : o->name, n);
        return RP_ENOKERNEL;
      }
      const rp_kargs *tpl = rp_exec_args(st->x, n);
      if (tpl)
        st->kargs[n] = *tpl;
      t->kind = OT_KERNEL;
      t->fn.k = o->kernel->cpu;
      t->p = &st->kargs[n];
      const uint64_t *nn = st->kargs[n].n;
      uint64_t pts = nn[0] * nn[1] * nn[2];
      t->sdim = nn[2] > 1 ? 2 : nn[1] > 1 ? 1 : 0;
      t->split = !st->serial && pts >= RP_OMP_SPLIT_MIN && nn[t->sdim] > 1;
    } else if (o->type == RP_OP_HOST) {
      if (!o->fn) {
        rp_exec_set_error(st->x, "openmp: host task \"%s\" (node %u) has no "
                          "function", o->name, n);
        return RP_ENOKERNEL;
      }
      t->kind = OT_HOST;
      t->fn.h = o->fn;
      t->user = o->user;
      t->p = &st->hptr[st->hptr0[n]];
    } else {
      const rp__access *ac = rp__op_acc(g, n);
      rp_buf b = ac[0].region.buf;
      if (st->shared[b]) {
        t->kind = OT_NOP;
        continue;
      }
      ocopy *c = &st->copy[st->ncopy++];
      c->buf = b;
      for (uint32_t i = 0; i < o->nacc; i++) {
        int sl = ac[i].space < 0 ? 0 : 1 + ac[i].space;
        if (ac[i].mode & RP_OUT)
          c->dst = sl;
        else
          c->src = sl;
      }
      c->niv = rp_region_intervals(g, &ac[0].region, NULL, 0);
      c->iv = malloc((c->niv ? c->niv : 1) * 2 * sizeof(uint64_t));
      if (!c->iv)
        return RP_ENOMEM;
      rp_region_intervals(g, &ac[0].region, c->iv, c->niv);
      t->kind = OT_COPY;
      t->p = c;
    }
  }
  return RP_OK;
}

/* Successor lists: the graph's edges plus those that image sharing needs. */
static rp_status build_succ(ostate *st, const uint32_t *ex, size_t nex) {
  size_t tot = nex;
  for (uint32_t n = 0; n < st->n; n++) {
    uint32_t c;
    rp_graph_succs(st->g, n, &c);
    tot += c;
  }
  st->succ = malloc((tot ? tot : 1) * sizeof *st->succ);
  if (!st->succ)
    return RP_ENOMEM;
  size_t k = 0, e = 0;
  for (uint32_t n = 0; n < st->n; n++) {
    uint32_t c;
    const rp_node *s = rp_graph_succs(st->g, n, &c);
    st->task[n].s0 = (uint32_t)k;
    for (uint32_t i = 0; i < c; i++)
      st->succ[k++] = s[i];
    for (; e < nex && ex[2 * e] == n; e++)
      st->succ[k++] = ex[2 * e + 1];
    st->task[n].ns = (uint32_t)k - st->task[n].s0;
  }
  for (size_t i = 0; i < k; i++)
    st->task[st->succ[i]].indeg0++;
  for (uint32_t n = 0; n < st->n; n++)
    atomic_init(&st->task[n].cnt, st->task[n].indeg0);
  return RP_OK;
}

static rp_status omp_instantiate(rp_exec *x, void **state) {
  const rp_graph *g = rp_exec_graph(x);
  ostate *st = aligned_alloc(64, (sizeof(ostate) + 63) / 64 * 64);
  if (!st)
    return RP_ENOMEM;
  memset(st, 0, sizeof *st);
  st->x = x;
  st->g = g;
  st->n = g->nop;
  st->nbuf = g->nbuf;
  st->ns = 1 + rp_graph_num_devices(g);
  uint32_t *ex = NULL;
  size_t nex = 0;
  size_t nt = st->n ? st->n : 1, nb = st->nbuf ? st->nbuf : 1;
  st->task = aligned_alloc(64, nt * sizeof(otask));
  st->kargs = calloc(nt, sizeof *st->kargs);
  st->hptr0 = calloc(nt, sizeof *st->hptr0);
  st->img = calloc(nb * st->ns, sizeof *st->img);
  st->shared = calloc(nb, sizeof *st->shared);
  st->owned = calloc(nb * st->ns, sizeof *st->owned);
  rp_status rc = RP_ENOMEM;
  if (!st->task || !st->kargs || !st->hptr0 || !st->img || !st->shared ||
      !st->owned)
    goto fail;
  memset(st->task, 0, nt * sizeof(otask));
  if ((rc = rp__omp_images(st, &ex, &nex)) != RP_OK ||
      (rc = build_tasks(st)) != RP_OK ||
      (rc = setup_team(st, rp_exec_opts_get(x))) != RP_OK ||
      (rc = build_succ(st, ex, nex)) != RP_OK ||
      (rc = rp__omp_engine_init(st)) != RP_OK)
    goto fail;
  free(ex);
  rp__omp_bind(st);
  *state = st;
  return RP_OK;
fail:
  if (rc == RP_ENOMEM)
    rp_exec_set_error(x, "openmp: out of memory instantiating %u ops", st->n);
  free(ex);
  omp_destroy(st);
  return rc;
}

static rp_status omp_launch(void *state, unsigned iterations) {
  ostate *st = (ostate *)state;
  if (st->serial) {
    for (unsigned e = 0; e < iterations; e++)
      for (uint32_t t = 0; t < st->n; t++)
        rp__omp_run_task(st, &st->task[t]);
    return RP_OK;
  }
  rp__omp_engine_run(st, iterations);
  return RP_OK;
}

static rp_status omp_wait(void *state) { return RP_OK; }

static rp_status omp_rebind(void *state, rp_buf b) {
  ostate *st = (ostate *)state;
  void *h = rp_exec_host(st->x)[b];
  if (st->shared[b] && st->g->buf[b].host)
    for (unsigned sl = 0; sl < st->ns; sl++)
      st->img[b * st->ns + sl] = h;
  else
    st->img[b * st->ns] = h;
  rp__omp_bind(st);
  return RP_OK;
}

static rp_status omp_set_scalar(void *state, rp_node n, unsigned param) {
  ostate *st = (ostate *)state;
  const rp_kargs *tpl = rp_exec_args(st->x, n);
  if (!tpl || param >= RP_MAX_PARAMS)
    return RP_EINVAL;
  st->kargs[n].a[param] = tpl->a[param];
  return RP_OK;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static rp_status omp_profile(void *state, double *op_us) {
  ostate *st = (ostate *)state;
  for (uint32_t t = 0; t < st->n; t++) {
    double t0 = now_us();
    rp__omp_run_task(st, &st->task[t]);
    op_us[t] = now_us() - t0;
  }
  return RP_OK;
}

const rp_backend rp_backend_openmp = {
    RP_BACKEND_ABI, "openmp", 10, omp_probe, omp_instantiate, omp_launch,
    omp_wait, omp_rebind, omp_set_scalar, omp_profile, omp_destroy};
