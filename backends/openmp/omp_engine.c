/* OpenMP backend: what every engine shares: running one task (whole, or
 * a large kernel split into chunks that the idle threads of its group
 * help with), recording a body's failure, publishing a host writer's
 * progress for wait_buffer, pinning, the program-order replay (mode
 * "serial", a team of one), and each group's roots (where a replay's
 * tasks without predecessors start). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "omp_internal.h"

#define RLX memory_order_relaxed
#define ACQ memory_order_acquire
#define REL memory_order_release
#define AR memory_order_acq_rel

static void run_chunk(const otask *t, uint32_t k, uint32_t nchunks) {
  const rp_kargs *a = (const rp_kargs *)t->p;
  uint64_t lo[3] = {0, 0, 0}, hi[3] = {a->n[0], a->n[1], a->n[2]};
  uint64_t len = a->n[t->sdim];
  lo[t->sdim] = len * k / nchunks;
  hi[t->sdim] = len * (k + 1) / nchunks;
  t->fn.k(a, lo, hi);
}

void rp__omp_run_task(const ostate *st, const otask *t) {
  switch (t->kind) {
  case OT_KERNEL: {
    const rp_kargs *a = (const rp_kargs *)t->p;
    uint64_t lo[3] = {0, 0, 0};
    t->fn.k(a, lo, a->n);
    break;
  }
  case OT_HOST:
    t->fn.h(t->user, (void *const *)t->p);
    break;
  case OT_COPY: {
    const ocopy *c = (const ocopy *)t->p;
    const char *src = (const char *)st->img[c->src];
    char *dst = (char *)st->img[c->dst];
    for (uint32_t i = 0; i < c->niv; i++)
      memcpy(dst + c->iv[2 * i], src + c->iv[2 * i], c->iv[2 * i + 1]);
    break;
  }
  case OT_CALL:
    t->fn.c(t->p);
    break;
  default:
    break;
  }
}

/* A release store and a relaxed look at the waiters, no fence between: a
 * waiter that misses the store while the worker misses the waiter wakes
 * from its timed wait (omp_wait_buffer) and looks again. */
void rp__omp_done(ostate *st, otask *t, long e) {
  atomic_store_explicit(&t->done, e, memory_order_release);
  if (atomic_load_explicit(&st->waiters, memory_order_relaxed)) {
    pthread_mutex_lock(&st->mu);
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
  }
}

/* Claim and run chunks of a published job; returns how many ran. */
void rp__omp_fail(ostate *st, uint32_t v, long e, int code, const char *msg) {
  pthread_mutex_lock(&st->mu);
  if (!st->fcode) {
    st->fcode = code;
    st->fnode = v;
    st->fepoch = e;
    snprintf(st->fmsg, sizeof st->fmsg, "%s", msg);
  }
  atomic_store(&st->failed, 1);
  pthread_mutex_unlock(&st->mu);
}

static inline void take_failure(ostate *st, uint32_t v, long e) {
  char msg[256];
  int c = rp_task_take_failure(msg, sizeof msg);
  if (c)
    rp__omp_fail(st, v, e, c, msg);
}

uint32_t rp__omp_help_job(ostate *st, ojob *j) {
  uint32_t ran = 0;
  for (;;) {
    uint64_t v = atomic_fetch_add_explicit(&j->ctr, 1, AR);
    uint64_t info = atomic_load_explicit(&j->info, ACQ);
    if ((info >> 32) != (v >> 32) || (uint32_t)v >= (uint32_t)info)
      return ran;
    run_chunk(j->t, (uint32_t)v, (uint32_t)info);
    take_failure(st, j->node, j->epoch);
    atomic_fetch_add_explicit(&j->done, 1, REL);
    ran++;
  }
}

static void run_split(ostate *st, const otask *t, int me, int q, uint32_t v,
                      long e) {
  ojob *j = &st->job[me];
  uint32_t nch = 4u * (uint32_t)st->gsize[q];
  const rp_kargs *a = (const rp_kargs *)t->p;
  if (nch > a->n[t->sdim])
    nch = (uint32_t)a->n[t->sdim];
  uint64_t gen = ++j->gen;
  j->t = t;
  j->node = v;
  j->epoch = e;
  atomic_store_explicit(&j->done, 0, RLX);
  atomic_store_explicit(&j->info, gen << 32 | nch, REL);
  atomic_store_explicit(&j->ctr, gen << 32, REL);
  long none = 0;
  bool pub = atomic_compare_exchange_strong_explicit(
      &st->help[q].v, &none, (long)(intptr_t)j, AR, RLX);
  if (pub && st->steal)
    rp__omp_wake(st, q, st->gsize[q] - 1);
  rp__omp_help_job(st, j);
  if (pub)
    atomic_store_explicit(&st->help[q].v, 0, REL);
  /* the chunks' threads may wait for a CPU (policy YIELD): give ours */
  unsigned spins = 0;
  const bool yield = atomic_load_explicit(&st->yield.v, RLX);
  while (atomic_load_explicit(&j->done, ACQ) < nch) {
    if (!yield)
      backoff(&spins);
    else if (++spins & 63u)
      rp__omp_relax();
    else
      sched_yield();
  }
}

void rp__omp_exec(ostate *st, const otask *t, uint32_t v, long e, int me, int q,
                  bool split_ok) {
  /* a call (another lowering's message) runs even then: the other ranks
   * wait for it */
  if (atomic_load_explicit(&st->failed, RLX) && t->kind != OT_CALL)
    return;
  double *const tls = st->tl_start;
  if (tls)
    tls[v] = rp_clock_us() - st->tl_t0;
  if (t->split && split_ok)
    run_split(st, t, me, q, v, e);
  else
    rp__omp_run_task(st, t);
  if (tls)
    st->tl_end[v] = rp_clock_us() - st->tl_t0;
  if (t->kind != OT_COPY)
    take_failure(st, v, e);
}

rp_status rp__omp_roots_init(ostate *st) {
  int G = st->ngroups;
  uint32_t *cap = calloc((size_t)G, sizeof *cap);
  st->roots = calloc((size_t)G, sizeof *st->roots);
  st->nroots = calloc((size_t)G, sizeof *st->nroots);
  if (!cap || !st->roots || !st->nroots) {
    free(cap);
    return RP_ENOMEM;
  }
  uint32_t nany = 0;
  for (uint32_t t = 0; t < st->n; t++) {
    if (st->task[t].group < 0)
      nany++;
    else
      cap[st->task[t].group]++;
  }
  rp_status rc = RP_OK;
  for (int q = 0; q < G && rc == RP_OK; q++) {
    size_t c = (size_t)cap[q] + nany + 1;
    st->roots[q] = malloc(c * sizeof(uint32_t));
    if (!st->roots[q])
      rc = RP_ENOMEM;
  }
  /* A root any group may run (an elided copy, a host task) starts in the
   * group of its first successor that has one, else in turn: putting them
   * all in group 0 would serialise the devices' chains behind it. */
  int turn = 0;
  for (uint32_t t = 0; t < st->n && rc == RP_OK; t++) {
    const otask *tk = &st->task[t];
    if (tk->indeg0)
      continue;
    int q = tk->group;
    for (uint32_t k = 0; q < 0 && k < tk->ns; k++)
      q = st->task[st->succ[tk->s0 + k]].group;
    if (q < 0)
      q = turn++ % G;
    st->roots[q][st->nroots[q]++] = t;
  }
  free(cap);
  return rc;
}

void rp__omp_run_serial(ostate *st, unsigned iterations) {
  for (unsigned i = 1; i <= iterations; i++)
    for (uint32_t v = 0; v < st->n; v++) {
      otask *t = &st->task[v];
      rp__omp_exec(st, t, v, st->lepoch + (long)i, 0, 0, false);
      if (t->hw)
        rp__omp_done(st, t, st->lepoch + (long)i);
    }
}

ostate *rp__omp_state_new(rp_exec *x, const rp_plan *p) {
  ostate *st = aligned_alloc(64, (sizeof(ostate) + 63) / 64 * 64);
  if (!st)
    return NULL;
  memset(st, 0, sizeof *st);
  pthread_mutex_init(&st->mu, NULL);
  pthread_cond_init(&st->cv, NULL);
  st->x = x;
  st->p = p;
  return st;
}

void rp__omp_run_caller(ostate *st, unsigned iterations) {
  cpu_set_t old;
  bool pinned = rp__omp_pin_caller(st, &old);
  if (st->owner) {
    rp__omp_owner_run(st, iterations);
  } else {
    rp__omp_run_serial(st, iterations);
    st->lepoch += (long)iterations;
  }
  if (pinned)
    rp__omp_unpin_caller(&old);
}

void rp__omp_roots_free(ostate *st) {
  for (int q = 0; st->roots && q < st->ngroups; q++)
    free(st->roots[q]);
  free(st->roots);
  free(st->nroots);
}
