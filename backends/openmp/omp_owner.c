/* OpenMP backend: the owner engine, for replays after the first launch.
 *
 * Mode "owner" only (the default is the stealing engine, omp_steal.c):
 * fastest for graphs of tiny tasks on an otherwise idle machine, fragile
 * on a loaded one (a descheduled owner holds its tasks; docs/openmp.md).
 * Every task gets an owner thread, chosen once by a list-schedule
 * simulation over the plan with the task durations measured in the first
 * launch (run by the stealing engine, timed): a task goes to the
 * allowed thread where it could start first, charging on every edge from a
 * task of another thread a core-to-core hand-off (RP_OMP_HANDOFF_US) of
 * latency and some busy time on both threads (RP_OMP_REMOTE_US), ties
 * going to the thread of its last predecessor. A chain of
 * dependent tiny tasks therefore stays on one core, and independent work
 * spreads. Each thread then runs its own tasks in program order (a
 * topological order, so the oldest unfinished task of the whole replay is
 * always runnable: no deadlock): an edge between two tasks of one thread
 * is kept by that order alone, and only edges between threads are counted,
 * on monotonic arrival counters (a task of replay e with r remote
 * predecessors runs once its counter reaches (e - base) r), so nothing is
 * reset between replays. Between replays: any two conflicting operations
 * are joined by a path of edges, so their owners are in one component of
 * the threads linked by edges between them; a thread starts replay e + 1
 * once the other threads of its component have finished replay e (the
 * hazards between replays). A thread without tasks, or alone in its
 * component, never waits: independent work runs with no barrier at all. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include "omp_internal.h"

#define ACQ memory_order_acquire
#define REL memory_order_release

/* Cost the simulation charges for an edge between two threads (µs): about
 * twice a one-way cache-line hand-off between cores of a 2-socket or
 * virtualised host (anchors: 230-280 ns). */
#define RP_OMP_HANDOFF_US 0.5
/* Time an edge between threads costs each side's thread (µs): the
 * producer's atomic add and the consumer's read of the counter, and of the
 * data, each a line another core last wrote. */
#define RP_OMP_REMOTE_US 0.25
/* What the engine adds to every task (µs): keeps tasks measured at ~0
 * from looking free, so independent ones still spread. */
#define RP_OMP_TASK_US 0.01

enum { SIM_GREEDY, SIM_FIXED, SIM_SERIAL };

/* One list-schedule simulation in program order. SIM_GREEDY: each task to
 * the allowed thread where it starts first, costs of edges between threads
 * times mult; SIM_FIXED: the owners in own, costs as they are;
 * SIM_SERIAL: each group's tasks on its first thread (a host task on the
 * thread of its last predecessor). Writes own (but for SIM_FIXED) and
 * fin; returns when the last thread is done. */
static double simulate(const ostate *st, const double *dur, int how,
                       double mult, int32_t *own, double *fin) {
  const rp_plan *p = st->p;
  const int nth = st->nth;
  double freet[RP_OMP_MAXT] = {0};
  const double lat = RP_OMP_HANDOFF_US * mult, busy = RP_OMP_REMOTE_US * mult;
  for (uint32_t v = 0; v < st->n; v++) {
    const rp_plan_node *nd = &p->node[v];
    const int g = st->task[v].group;
    double last = -1.0;
    int lastp = -1;
    for (uint32_t k = 0; k < nd->npred; k++) {
      uint32_t u = p->pred[nd->pred0 + k];
      if (fin[u] > last) {
        last = fin[u];
        lastp = own[u];
      }
    }
    int best = -1;
    double bstart = 0;
    for (int q = 0; q < nth; q++) {
      if (g >= 0 && st->tgroup[q] != g)
        continue;
      if (how == SIM_FIXED && q != own[v])
        continue;
      if (how == SIM_SERIAL && best >= 0)
        break;
      if (how == SIM_SERIAL && g < 0 && lastp >= 0)
        q = lastp;
      double r = freet[q], extra = 0;
      for (uint32_t k = 0; k < nd->npred; k++) {
        uint32_t u = p->pred[nd->pred0 + k];
        double f = fin[u];
        if (own[u] != q) {
          f += lat;
          extra += busy;
        }
        r = f > r ? f : r;
      }
      r += extra; /* the thread's own side of its remote edges */
      if (best < 0 || r < bstart - 1e-9 ||
          (fabs(r - bstart) <= 1e-9 && q == lastp)) {
        best = q;
        bstart = r;
      }
    }
    own[v] = best;
    /* the producers' side */
    for (uint32_t k = 0; k < nd->npred; k++) {
      uint32_t u = p->pred[nd->pred0 + k];
      if (own[u] != best)
        freet[own[u]] += busy;
    }
    fin[v] = bstart + (dur ? dur[v] : 1.0) + RP_OMP_TASK_US;
    freet[best] = fin[v];
  }
  double end = 0;
  for (int q = 0; q < nth; q++)
    end = freet[q] > end ? freet[q] : end;
  return end;
}

rp_status rp__omp_owner_plan(ostate *st, const double *dur) {
  const rp_plan *p = st->p;
  const uint32_t n = st->n;
  int nth = st->nth;
  int32_t *own = malloc((n ? n : 1) * sizeof *own);
  int32_t *alt = malloc((n ? n : 1) * sizeof *alt);
  double *fin = malloc((n ? n : 1) * sizeof *fin);
  uint32_t *rs0 = calloc((size_t)n + 1, sizeof *rs0);
  uint32_t *rind = calloc(n ? n : 1, sizeof *rind);
  uint32_t *list = malloc((n ? n : 1) * sizeof *list);
  _Atomic long *arr =
      aligned_alloc(64, ((n ? n : 1) * sizeof(long) + 63) / 64 * 64);
  uint32_t cnt[RP_OMP_MAXT + 1] = {0};
  uint32_t *rsucc = NULL;
  if (!own || !alt || !fin || !rs0 || !rind || !list || !arr)
    goto nomem;
  /* The best of: each group on one thread, and greedy placements with the
   * costs of edges between threads scaled up (the greedy choice is
   * myopic: tiny tasks spread by it can make the whole slower), each
   * judged by a simulation at the real costs. Spreading must gain 5%. */
  double best = simulate(st, dur, SIM_SERIAL, 1.0, own, fin);
  static const double mults[] = {1.0, 3.0, 10.0, 30.0};
  for (unsigned m = 0; m < sizeof mults / sizeof *mults; m++) {
    simulate(st, dur, SIM_GREEDY, mults[m], alt, fin);
    double t = simulate(st, dur, SIM_FIXED, 1.0, alt, fin);
    if (t < 0.95 * best) {
      best = t;
      int32_t *x = own;
      own = alt;
      alt = x;
    }
  }
  for (uint32_t v = 0; v < n; v++)
    cnt[own[v] + 1]++;
  /* Per-thread lists in program order; remote edges. */
  for (int q = 0; q < nth; q++)
    cnt[q + 1] += cnt[q];
  for (int q = 0; q <= nth; q++)
    st->olist0[q] = cnt[q];
  for (uint32_t v = 0; v < n; v++)
    list[cnt[own[v]]++] = v;
  size_t nr = 0;
  for (uint32_t v = 0; v < n; v++) {
    const rp_plan_node *nd = &p->node[v];
    for (uint32_t k = 0; k < nd->nsucc; k++) {
      uint32_t s = p->succ[nd->succ0 + k];
      if (own[s] != own[v]) {
        nr++;
        rind[s]++;
      }
    }
  }
  if (!(rsucc = malloc((nr ? nr : 1) * sizeof *rsucc)))
    goto nomem;
  nr = 0;
  for (uint32_t v = 0; v < n; v++) {
    const rp_plan_node *nd = &p->node[v];
    rs0[v] = (uint32_t)nr;
    for (uint32_t k = 0; k < nd->nsucc; k++) {
      uint32_t s = p->succ[nd->succ0 + k];
      if (own[s] != own[v])
        rsucc[nr++] = s;
    }
  }
  rs0[n] = (uint32_t)nr;
  /* Components of the threads linked by remote edges (union-find). */
  int comp[RP_OMP_MAXT];
  for (int q = 0; q < nth; q++)
    comp[q] = q;
  for (uint32_t v = 0; v < n; v++)
    for (uint32_t j = rs0[v]; j < rs0[v + 1]; j++) {
      int a = own[v], b = own[rsucc[j]];
      while (comp[a] != a)
        a = comp[a];
      while (comp[b] != b)
        b = comp[b];
      if (a != b)
        comp[a < b ? b : a] = a < b ? a : b;
    }
  for (int q = 0; q < nth; q++) {
    int r = q;
    while (comp[r] != r)
      r = comp[r];
    comp[q] = r;
  }
  for (int q = 0; q < nth; q++) {
    st->wait_for[q] = 0;
    for (int o = 0; o < nth; o++)
      if (o != q && comp[o] == comp[q] && st->olist0[o + 1] != st->olist0[o])
        st->wait_for[q] |= 1ull << o;
  }
  for (uint32_t v = 0; v < n; v++)
    atomic_init(&arr[v], 0);
  for (int q = 0; q < nth; q++)
    st->gsplit[q] = false;
  for (uint32_t v = 0; v < n; v++)
    if (st->task[v].split)
      st->gsplit[st->tgroup[own[v]]] = true;
  free(own);
  free(alt);
  free(fin);
  rp__omp_owner_free(st);
  st->olist = list;
  st->rs0 = rs0;
  st->rsucc = rsucc;
  st->rind = rind;
  st->arr = arr;
  st->abase = st->lepoch;
  st->owner = true;
  return RP_OK;
nomem:
  free(own);
  free(alt);
  free(fin);
  free(rs0);
  free(rind);
  free(list);
  free((void *)arr);
  free(rsucc);
  return RP_ENOMEM;
}

void rp__omp_owner_free(ostate *st) {
  free(st->olist);
  free(st->rs0);
  free(st->rsucc);
  free(st->rind);
  free((void *)st->arr);
  st->olist = st->rs0 = st->rsucc = st->rind = NULL;
  st->arr = NULL;
  st->owner = false;
}

static void owner_worker(ostate *st, long E0, long Elast, int me) {
  const int q = st->tgroup[me], nth = st->nth;
  const bool split_ok = st->gsize[q] > 1;
  const uint32_t *lp = st->olist + st->olist0[me],
                 *le = st->olist + st->olist0[me + 1];
  otask *const task = st->task;
  const uint32_t *const rind = st->rind, *const rs0 = st->rs0,
                        *const rsucc = st->rsucc;
  _Atomic long *const arr = st->arr;
  const uint64_t wf = st->wait_for[me];
  unsigned spins = 0;
  if (me)
    rp__omp_pin(st, me); /* thread 0: rp__omp_pin_caller */
  if (lp == le) {
    /* No task of its own: help the group's large kernels, if it has any,
     * until the group's other threads are done. */
    for (int i = 0; st->gsplit[q] && i < nth; i++)
      while (st->tgroup[i] == q &&
             atomic_load_explicit(&st->at[i].v, ACQ) < Elast &&
             st->olist0[i + 1] != st->olist0[i]) {
        long jp = atomic_load_explicit(&st->help[q].v, ACQ);
        /* NOLINTNEXTLINE(performance-no-int-to-ptr): a published job */
        if (!jp || !rp__omp_help_job(st, (ojob *)(intptr_t)jp))
          backoff(&spins);
      }
    return;
  }
  for (long e = E0 + 1; e <= Elast; e++) {
    for (int i = 0; i < nth; i++)
      while (((wf >> i) & 1) &&
             atomic_load_explicit(&st->at[i].v, ACQ) < e - 1) {
        long jp = atomic_load_explicit(&st->help[q].v, ACQ);
        /* NOLINTNEXTLINE(performance-no-int-to-ptr): a published job */
        if (!jp || !rp__omp_help_job(st, (ojob *)(intptr_t)jp))
          backoff(&spins);
      }
    const long k = e - st->abase;
    for (const uint32_t *it = lp; it < le; it++) {
      const uint32_t v = *it;
      otask *t = &task[v];
      if (rind[v]) {
        const long need = k * (long)rind[v];
        while (atomic_load_explicit(&arr[v], ACQ) < need) {
          long jp = atomic_load_explicit(&st->help[q].v, ACQ);
          /* NOLINTNEXTLINE(performance-no-int-to-ptr): a published job */
          if (!jp || !rp__omp_help_job(st, (ojob *)(intptr_t)jp))
            backoff(&spins);
        }
      }
      rp__omp_exec(st, t, v, e, me, q, split_ok);
      if (t->hw)
        rp__omp_done(st, t, e);
      for (uint32_t j = rs0[v]; j < rs0[v + 1]; j++)
        atomic_fetch_add_explicit(&arr[rsucc[j]], 1, REL);
    }
    atomic_store_explicit(&st->at[me].v, e, REL);
  }
}

void rp__omp_owner_run(ostate *st, unsigned iterations) {
  if (!st->n || !iterations)
    return;
  const long E0 = st->lepoch, Elast = E0 + (long)iterations;
  for (int i = 0; i < RP_OMP_MAXT; i++)
    atomic_store_explicit(&st->at[i].v, E0, REL);
  if (st->nth == 1 && !st->tset) {
    owner_worker(st, E0, Elast, 0);
  } else {
#pragma omp parallel num_threads(st->nth)
    {
      if (omp_get_num_threads() == st->nth)
        owner_worker(st, E0, Elast, omp_get_thread_num());
      else if (omp_get_thread_num() == 0)
        rp__omp_run_serial(st, iterations);
    }
  }
  st->lepoch = Elast;
}
