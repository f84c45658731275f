/* OpenMP backend: the stealing replay engine, used for every team of
 * several threads.
 *
 * Built once at instantiate: successor lists and in-degrees (the plan's),
 * one deque per thread and one inbox per group of threads (a logical
 * device's), each as long as the graph. A task's counter is reset by the
 * task itself when it runs, so a replay needs no reset pass; a task with
 * one predecessor has no counter at all (its predecessor readies it).
 *
 * Running: a thread runs a successor it made ready next (continuation),
 * pushes the others it made ready onto its own deque, and pops its newest
 * task when it has none (depth first, warm caches). A task of another
 * group goes to that group's inbox: the plan's placement is where work
 * starts, not where it must run. A thread without work takes from its
 * group's inbox, then steals the oldest half of another thread's deque,
 * own group first, but only when that is worth a hand-off between cores:
 * the deque holds at least STEAL_BIG tasks, or its owner has finished no
 * task for STALL_US (it runs a long task, or it is descheduled). Tiny
 * tasks therefore stay on the thread that made them ready, and a slow or
 * preempted thread never keeps ready work from the others for long.
 *
 * Waiting: an idle thread looks again after a pause that doubles up to
 * GAP_MAX_US, for SPIN_US; then it sleeps in a futex, for NAP_MIN_US at
 * first and up to NAP_MAX_US, waking to look again. That is the policy
 * SPIN, for a team that has its cores; when it cannot (more threads than
 * usable CPUs, or a busy machine: omp_idle.c decides at each launch), the
 * policy YIELD cuts the looks before the first nap, and a team thread's
 * wait for the next launch, to RP_OMP_SHORT_LOOKS: a thread spinning
 * there would hold a CPU that a working one needs. A thread whose deque
 * grows long, or gets coarse tasks, wakes one sleeper after the task that
 * pushed them (at most one system call between a task and its
 * continuation, which is often the critical path); a thief that leaves
 * such work behind wakes the next one, so a burst of ready work reaches
 * the sleepers without holding up the thread that made it ready. One that
 * readies work for another group wakes a sleeper of that group.
 *
 * Replays: a thread going idle adds the tasks it ran to the launch's
 * count; the one whose addition completes replay e starts e + 1 (its
 * group's roots onto its own deque, the other groups' into their inboxes)
 * or ends the launch and wakes everyone. The roots of the launch's first
 * replay start in the inboxes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <sched.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include "omp_idle.h"
#include "omp_internal.h"

#define RLX memory_order_relaxed
#define ACQ memory_order_acquire
#define REL memory_order_release
#define AR memory_order_acq_rel
#define SC memory_order_seq_cst
#define NONE UINT32_MAX

/* A deque at least this long is split even while its owner keeps up. */
#define STEAL_BIG 64
/* An owner running tasks of COARSE_US or more (as it measures its pace,
 * or as a thief sees its progress count move) has its deque split at
 * once: its queued tasks would wait a task's length. One running smaller
 * tasks (or not seen finishing any yet) only once it finished none for
 * STALL_FINE_US (it is descheduled): only then is spreading tiny tasks
 * over two cores worth it, since every edge between them costs a
 * hand-off. */
#define COARSE_US 1.0
#define STALL_FINE_US 50.0
/* The same for a thread or an inbox of another group: the plan's placement
 * holds unless that group stalls for this long (µs). */
#define STALL_FAR_US 100.0
/* An idle thread looks for work for this long (µs), pausing between two
 * looks up to GAP_MAX_US, then sleeps from NAP_MIN_US to NAP_MAX_US. */
#define SPIN_US 100.0
#define GAP_MAX_US 16.0
/* A team thread waits this long (µs) for the next launch before it
 * sleeps. */
#define TEAM_SPIN_US 1000.0
#define NAP_MIN_US 50.0
#define NAP_MAX_US 1000.0
/* A thread whose last PACE_TASKS tasks took less than TINY_US (µs) each,
 * waits included, takes HOLD tasks at a time from its deque. */
#define PACE_TASKS 64
#define TINY_US 0.25
#define HOLD 8
/* Most tasks one steal takes. */
#define STEAL_MOST 256

/* ---- sleeping ---- */

static void fx_wait(_Atomic int *w, int val, double us) {
#ifdef __linux__
  struct timespec ts;
  ts.tv_sec = (time_t)(us / 1e6);
  ts.tv_nsec = (long)fmod(us * 1e3, 1e9);
  syscall(SYS_futex, (int *)w, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
#else
  (void)w;
  (void)val;
  struct timespec ts = {0, (long)(us * 1e3)};
  nanosleep(&ts, NULL);
#endif
}

static void fx_wake(_Atomic int *w) {
#ifdef __linux__
  syscall(SYS_futex, (int *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
#else
  (void)w;
#endif
}

void rp__omp_wake(ostate *st, int q, int k) {
  if (!atomic_load_explicit(&st->nsleep.v, SC))
    return;
  for (int i = 0; i < st->nth && k > 0; i++) {
    if (q >= 0 && st->tgroup[i] != q)
      continue;
    int one = 1;
    if (atomic_load_explicit(&st->slp[i].v, RLX) == 1 &&
        atomic_compare_exchange_strong_explicit(&st->slp[i].v, &one, 0, AR,
                                                RLX)) {
      fx_wake(&st->slp[i].v);
      k--;
    }
  }
}

/* Sleep up to us unless the replay moved on from e, the launch ended or
 * another began (gen moved on: a team thread; the first replay of a
 * launch has the number its predecessor ended with); a waker clears the
 * word first, so a wake-up is never lost. */
static void nap(ostate *st, int me, int gen, long e, double us) {
  atomic_store_explicit(&st->slp[me].v, 1, SC);
  atomic_fetch_add_explicit(&st->nsleep.v, 1, SC);
  const odeque *ib = &st->inbox[st->tgroup[me]];
  if (atomic_load_explicit(&st->phase.v, SC) == e &&
      (!me || atomic_load_explicit(&st->gen.v, SC) == gen) &&
      atomic_load_explicit(&ib->bot, SC) == atomic_load_explicit(&ib->top, SC))
    fx_wait(&st->slp[me].v, 1, us);
  int one = 1;
  atomic_compare_exchange_strong_explicit(&st->slp[me].v, &one, 0, AR, RLX);
  atomic_fetch_sub_explicit(&st->nsleep.v, 1, SC);
}

/* ---- deques ---- */

static inline void lock(_Atomic int *l) {
  unsigned spins = 0;
  while (atomic_exchange_explicit(l, 1, ACQ))
    while (atomic_load_explicit(l, RLX))
      backoff(&spins);
}

static inline bool trylock(_Atomic int *l) {
  return !atomic_load_explicit(l, RLX) && !atomic_exchange_explicit(l, 1, ACQ);
}

static inline void unlock(_Atomic int *l) { atomic_store_explicit(l, 0, REL); }

static inline long dq_size(const odeque *d) {
  return atomic_load_explicit(&d->bot, RLX) -
         atomic_load_explicit(&d->top, RLX);
}

static inline void dq_push(odeque *d, uint32_t v) {
  long b = atomic_load_explicit(&d->bot, RLX);
  atomic_store_explicit(&d->buf[b & d->mask], v, RLX);
  atomic_store_explicit(&d->bot, b + 1, REL);
}

/* The owner takes its newest task. Only a pop that meets a thief over the
 * last tasks takes the lock. */
static inline uint32_t dq_pop(odeque *d) {
  long b = atomic_load_explicit(&d->bot, RLX) - 1;
  if (b < atomic_load_explicit(&d->top, RLX))
    return NONE;
  atomic_exchange_explicit(&d->bot, b, SC);
  long t = atomic_load_explicit(&d->top, SC);
  if (t <= b)
    return atomic_load_explicit(&d->buf[b & d->mask], RLX);
  atomic_store_explicit(&d->bot, b + 1, RLX);
  lock(&d->lock);
  b = atomic_load_explicit(&d->bot, RLX) - 1;
  t = atomic_load_explicit(&d->top, RLX);
  uint32_t v = NONE;
  if (t <= b) {
    atomic_store_explicit(&d->bot, b, RLX);
    v = atomic_load_explicit(&d->buf[b & d->mask], RLX);
  }
  unlock(&d->lock);
  return v;
}

/* The owner takes its k newest tasks at once (one fence for them all;
 * none solo: no thief takes from it then), the newest last in out;
 * returns how many. */
static long dq_popn(odeque *d, uint32_t *out, long k, bool solo) {
  long b = atomic_load_explicit(&d->bot, RLX);
  long n = b - atomic_load_explicit(&d->top, RLX);
  if (n <= 0)
    return 0;
  k = k < n ? k : n;
  if (solo) {
    b -= k;
    atomic_store_explicit(&d->bot, b, RLX);
    for (long i = 0; i < k; i++)
      out[i] = atomic_load_explicit(&d->buf[(b + i) & d->mask], RLX);
    return k;
  }
  if (k == 1) {
    uint32_t v = dq_pop(d);
    out[0] = v;
    return v != NONE;
  }
  b -= k;
  atomic_exchange_explicit(&d->bot, b, SC);
  long t = atomic_load_explicit(&d->top, SC);
  if (t > b) { /* thieves near: settle under the lock */
    atomic_store_explicit(&d->bot, b + k, RLX);
    lock(&d->lock);
    b = atomic_load_explicit(&d->bot, RLX);
    t = atomic_load_explicit(&d->top, RLX);
    k = b - t < k ? b - t : k;
    k = k < 0 ? 0 : k;
    b -= k;
    atomic_store_explicit(&d->bot, b, RLX);
    for (long i = 0; i < k; i++)
      out[i] = atomic_load_explicit(&d->buf[(b + i) & d->mask], RLX);
    unlock(&d->lock);
    return k;
  }
  for (long i = 0; i < k; i++)
    out[i] = atomic_load_explicit(&d->buf[(b + i) & d->mask], RLX);
  return k;
}

/* ---- solo: one thread alone ----
 * While every other thread sleeps, the one left running needs no locked
 * instruction: it counts its successors' predecessors and pops its deque
 * with plain moves. It enters solo mode when it sees all the others asleep
 * (announcing itself, then checking again: a thread waking does the
 * opposite, so one of them sees the other), and leaves it as soon as
 * another asks (want), before it wakes anyone, publishes a kernel's
 * chunks or runs out of work. A thread must not take any task while
 * another is solo: it asks and waits for it to leave (at its next task
 * boundary). */
static bool solo_enter(ostate *st, int me) {
  int none = -1;
  if (!atomic_compare_exchange_strong_explicit(&st->so.solo, &none, me, SC,
                                               RLX))
    return false;
  if (atomic_load_explicit(&st->nsleep.v, SC) == st->nth - 1 &&
      !atomic_load_explicit(&st->so.want, SC))
    return true;
  atomic_store_explicit(&st->so.solo, -1, REL);
  return false;
}

static void solo_leave(ostate *st, bool *alone) {
  atomic_store_explicit(&st->so.want, 0, RLX);
  atomic_store_explicit(&st->so.solo, -1, REL);
  *alone = false;
}

/* A thief takes the oldest half (at least one, at most STEAL_MOST) of d's
 * tasks into out; returns how many. It announces the take at top, then
 * checks bot: the owner, popping, does the opposite, so at least one of
 * them sees the other and a conflict over the last tasks goes to the lock
 * (the owner retries under it). */
static long dq_steal(odeque *d, uint32_t *out) {
  if (!trylock(&d->lock))
    return 0;
  long k = 0;
  for (int tries = 0; tries < 3 && !k; tries++) {
    long t = atomic_load_explicit(&d->top, RLX);
    long n = atomic_load_explicit(&d->bot, ACQ) - t;
    if (n <= 0)
      break;
    k = (n + 1) / 2;
    k = k > STEAL_MOST ? STEAL_MOST : k;
    atomic_exchange_explicit(&d->top, t + k, SC);
    if (t + k > atomic_load_explicit(&d->bot, SC)) {
      atomic_store_explicit(&d->top, t, SC); /* the owner is popping */
      k = 0;
      continue;
    }
    for (long i = 0; i < k; i++)
      out[i] = atomic_load_explicit(&d->buf[(t + i) & d->mask], RLX);
  }
  unlock(&d->lock);
  return k;
}

static void ib_push(odeque *d, uint32_t v) {
  lock(&d->lock);
  long b = atomic_load_explicit(&d->bot, RLX);
  atomic_store_explicit(&d->buf[b & d->mask], v, RLX);
  atomic_store_explicit(&d->bot, b + 1, REL);
  unlock(&d->lock);
}

/* From an inbox: all of it when shorter than STEAL_BIG, else the oldest
 * half; at most STEAL_MOST. */
static long ib_take(odeque *d, uint32_t *out) {
  if (dq_size(d) <= 0 || !trylock(&d->lock))
    return 0;
  long t = atomic_load_explicit(&d->top, RLX);
  long n = atomic_load_explicit(&d->bot, RLX) - t;
  long k = n <= 0 ? 0 : n < STEAL_BIG ? n : (n + 1) / 2;
  k = k > STEAL_MOST ? STEAL_MOST : k;
  for (long i = 0; i < k; i++)
    out[i] = atomic_load_explicit(&d->buf[(t + i) & d->mask], RLX);
  atomic_store_explicit(&d->top, t + k, REL);
  unlock(&d->lock);
  return k;
}

/* ---- the team ---- */

static void pause_us(double us) {
  const double end = rp_clock_us() + us;
  do {
    for (int i = 0; i < 8; i++)
      rp__omp_relax();
  } while (rp_clock_us() < end);
}

/* What a thread knew of the others when it last looked for work: each
 * deque owner's progress count and since when it has had that count, and
 * each inbox's top and since when. */
typedef struct look {
  unsigned long prog[RP_OMP_MAXT];
  double since[RP_OMP_MAXT], seen[RP_OMP_MAXT];
  bool coarse[RP_OMP_MAXT];
  long ibtop[RP_OMP_MAXT];
  double ibsince[RP_OMP_MAXT];
  uint32_t buf[STEAL_MOST];
} look;

/* Queue replay e's roots: group q's onto thread me's deque (last first, so
 * that they pop in program order), the others' into their inboxes. */
static void queue_roots(ostate *st, int me, int q) {
  for (int g = 0; g < st->ngroups; g++) {
    const uint32_t *r = st->roots[g];
    const uint32_t nr = st->nroots[g];
    if (!nr)
      continue;
    if (g == q) {
      for (uint32_t i = nr; i-- > 0;)
        dq_push(&st->dq[me], r[i]);
      if (nr >= STEAL_BIG && !atomic_load_explicit(&st->nspin.v, RLX))
        rp__omp_wake(st, q, 1);
    } else {
      odeque *ib = &st->inbox[g];
      lock(&ib->lock);
      long b = atomic_load_explicit(&ib->bot, RLX);
      for (uint32_t i = 0; i < nr; i++)
        atomic_store_explicit(&ib->buf[(b + i) & ib->mask], r[i], RLX);
      atomic_store_explicit(&ib->bot, b + (long)nr, REL);
      unlock(&ib->lock);
      rp__omp_wake(st, g, 1);
    }
  }
}

/* Replay *e is complete: start the next one (true) or end the launch. */
static bool next_replay(ostate *st, int me, long *e) {
  const long last = atomic_load_explicit(&st->elast.v, RLX);
  if (*e >= last || atomic_load_explicit(&st->failed, RLX)) {
    atomic_store_explicit(&st->phase.v, last + 1, SC);
    rp__omp_wake(st, -1, INT_MAX);
    return false;
  }
  *e += 1;
  atomic_store_explicit(&st->phase.v, *e, SC);
  queue_roots(st, me, st->tgroup[me]);
  return true;
}

/* Whether thread v's deque is worth taking from, by what w saw of it
 * before (its size, and how long its owner has kept one progress count);
 * far: v is of another group. */
static bool worth(ostate *st, look *w, int v, double now, bool far) {
  const odeque *d = &st->dq[v];
  unsigned long p = atomic_load_explicit(&d->prog, RLX);
  if (p != w->prog[v]) {
    /* at most this long per task since the last look */
    double per = (now - w->seen[v]) / (double)(p - w->prog[v]);
    w->coarse[v] = per >= COARSE_US;
    w->prog[v] = p;
    w->since[v] = now;
  }
  w->seen[v] = now;
  long n = dq_size(d);
  if (n <= 0)
    return false;
  if (far)
    return now - w->since[v] >= STALL_FAR_US;
  return n >= STEAL_BIG || w->coarse[v] ||
         atomic_load_explicit(&d->pace, RLX) >= COARSE_US ||
         now - w->since[v] >= STALL_FINE_US;
}

/* Thread so runs solo: if thread me has work to take (its own deque or
 * inbox, or so's deque by the rules), ask so to leave and wait; true
 * once it has (false: nothing to take, or the launch ended). */
static bool ask_solo(ostate *st, int me, int so, look *w) {
  const odeque *ib = &st->inbox[st->tgroup[me]];
  if (dq_size(&st->dq[me]) <= 0 && dq_size(ib) <= 0 &&
      !worth(st, w, so, rp_clock_us(), st->tgroup[so] != st->tgroup[me]))
    return false;
  atomic_store_explicit(&st->so.want, 1, SC);
  double gap = 0.25;
  const bool yield = atomic_load_explicit(&st->yield.v, RLX);
  for (unsigned looks = 1; atomic_load_explicit(&st->so.solo, ACQ) == so;
       looks++) {
    if (atomic_load_explicit(&st->phase.v, ACQ) >
        atomic_load_explicit(&st->elast.v, RLX))
      return false;
    if (yield && looks >= RP_OMP_SHORT_LOOKS) {
      sched_yield(); /* so may wait for this CPU */
      continue;
    }
    pause_us(gap);
    gap = gap * 2 > GAP_MAX_US ? GAP_MAX_US : gap * 2;
  }
  return true;
}

/* Take work for thread me from its inbox, another deque or another inbox
 * (the first task; the rest onto its deque), or help a split kernel;
 * NONE when there was none (*helped: a kernel was helped). */
static uint32_t find(ostate *st, int me, look *w, long *e, bool *helped) {
  const int q = st->tgroup[me], nth = st->nth;
  const int so = atomic_load_explicit(&st->so.solo, ACQ);
  if (so >= 0 && so != me && !ask_solo(st, me, so, w))
    return NONE;
  /* its own first: a pop that met a thief's announce that the thief then
   * withdrew found the deque empty */
  uint32_t mine = dq_pop(&st->dq[me]);
  if (mine != NONE)
    return mine;
  long k = ib_take(&st->inbox[q], w->buf);
  bool relay = false;
  if (!k) {
    long jp = atomic_load_explicit(&st->help[q].v, ACQ);
    /* NOLINTNEXTLINE(performance-no-int-to-ptr): a published job */
    if (jp && rp__omp_help_job(st, (ojob *)(intptr_t)jp)) {
      *helped = true;
      return NONE;
    }
    const double now = rp_clock_us();
    /* own group's deques, then other groups' inboxes and deques */
    for (int pass = 0; pass < 2 && !k; pass++) {
      for (int i = 1; i < nth && !k; i++) {
        const int v = (me + i) % nth;
        if ((st->tgroup[v] == q) != (pass == 0))
          continue;
        if (worth(st, w, v, now, pass) && (k = dq_steal(&st->dq[v], w->buf)) &&
            !pass) {
          /* work left here or there, worth another thread */
          const long left = k - 1 + dq_size(&st->dq[v]);
          relay = left > 0 &&
                  (left >= STEAL_BIG || w->coarse[v] ||
                   atomic_load_explicit(&st->dq[v].pace, RLX) >= COARSE_US);
        }
      }
      for (int g = 0; pass == 1 && g < st->ngroups && !k; g++) {
        odeque *ib = &st->inbox[g];
        long t = atomic_load_explicit(&ib->top, RLX);
        if (g == q || dq_size(ib) <= 0)
          continue;
        if (t != w->ibtop[g]) {
          w->ibtop[g] = t;
          w->ibsince[g] = now;
        } else if (now - w->ibsince[g] >= STALL_FAR_US) {
          k = ib_take(ib, w->buf);
        }
      }
    }
    if (!k)
      return NONE;
  }
  *e = atomic_load_explicit(&st->phase.v, ACQ);
  for (long i = k - 1; i >= 1; i--)
    dq_push(&st->dq[me], w->buf[i]);
  /* the wake-up a pusher makes once per task goes on from thief to thief
   * while coarse work is left and nobody else is looking (this thread
   * counts among the spinning ones until it returns) */
  if (relay && atomic_load_explicit(&st->nsleep.v, RLX) &&
      atomic_load_explicit(&st->nspin.v, RLX) <= 1)
    rp__omp_wake(st, q, 1);
  return w->buf[0];
}

/* Thread me has no task: count its finished ones in (maybe completing the
 * replay), then look for work, pausing, then sleeping between looks.
 * NONE: the launch is over. */
static uint32_t idle(ostate *st, int me, int gen, look *w, unsigned long *done,
                     long *e, bool *alone) {
  if (*done) {
    long tot = atomic_fetch_add_explicit(&st->flushed.v, (long)*done, AR) +
               (long)*done;
    *done = 0;
    if (tot == (long)st->n * (*e - atomic_load_explicit(&st->e0.v, RLX))) {
      /* solo goes on into the next replay unless that wakes others */
      if (*alone &&
          (*e >= atomic_load_explicit(&st->elast.v, RLX) ||
           atomic_load_explicit(&st->failed, RLX) || st->ngroups > 1 ||
           st->nroots[st->tgroup[me]] >= STEAL_BIG))
        solo_leave(st, alone);
      if (!next_replay(st, me, e))
        return NONE;
      uint32_t v;
      if (dq_popn(&st->dq[me], &v, 1, *alone) == 1)
        return v;
    }
  }
  if (*alone)
    solo_leave(st, alone); /* the rest of the replay is elsewhere */
  atomic_fetch_add_explicit(&st->nspin.v, 1, RLX);
  double t0 = rp_clock_us(), gap = 0.25, nap_us = NAP_MIN_US;
  uint32_t v = NONE;
  /* looks: failed looks in a row since the last nap (or work); SPIN
   * looks for SPIN_US, YIELD RP_OMP_SHORT_LOOKS times, then one look
   * after each nap */
  const bool yield = atomic_load_explicit(&st->yield.v, RLX);
  unsigned looks = 0;
  bool napped = false;
  for (;;) {
    long ph = atomic_load_explicit(&st->phase.v, ACQ);
    if (ph > atomic_load_explicit(&st->elast.v, RLX))
      break;
    /* a team thread still here from an earlier launch: start afresh */
    if (me && atomic_load_explicit(&st->gen.v, ACQ) != gen)
      break;
    bool helped = false;
    if ((v = find(st, me, w, e, &helped)) != NONE)
      break;
    if (helped) {
      t0 = rp_clock_us();
      gap = 0.25;
      looks = 0;
      napped = false;
      continue;
    }
    ++looks;
    if (!napped &&
        (yield ? looks < RP_OMP_SHORT_LOOKS : rp_clock_us() - t0 < SPIN_US)) {
      pause_us(gap);
      gap = gap * 2 > GAP_MAX_US ? GAP_MAX_US : gap * 2;
    } else {
      rp__omp_spun(st, looks);
      looks = 0;
      napped = true;
      atomic_fetch_add_explicit(&st->naps.v, 1, RLX);
      atomic_fetch_sub_explicit(&st->nspin.v, 1, RLX);
      nap(st, me, gen, ph, nap_us);
      atomic_fetch_add_explicit(&st->nspin.v, 1, RLX);
      nap_us = nap_us * 2 > NAP_MAX_US ? NAP_MAX_US : nap_us * 2;
    }
  }
  atomic_fetch_sub_explicit(&st->nspin.v, 1, RLX);
  rp__omp_spun(st, looks);
  return v;
}

/* rp__omp_exec, its common case (a host task or a kernel run whole, no
 * timeline, no failure yet) inlined; copies, calls and empty tasks go
 * through it. */
static inline void exec(ostate *st, const otask *t, uint32_t v, long e, int me,
                        int q, bool split_ok) {
  if ((t->split && split_ok) || (t->kind != OT_KERNEL && t->kind != OT_HOST) ||
      st->tl_start || atomic_load_explicit(&st->failed, RLX)) {
    rp__omp_exec(st, t, v, e, me, q, split_ok);
    return;
  }
  if (t->kind == OT_HOST) {
    t->fn.h(t->user, (void *const *)t->p);
  } else {
    const rp_kargs *a = (const rp_kargs *)t->p;
    uint64_t lo[3] = {0, 0, 0};
    t->fn.k(a, lo, a->n);
  }
  char msg[256];
  int c = rp_task_take_failure(msg, sizeof msg);
  if (c)
    rp__omp_fail(st, v, e, c, msg);
}

static void worker(ostate *st, int me, int gen) {
  const int q = st->tgroup[me];
  const bool split_ok = st->gsize[q] > 1;
  odeque *const dq = &st->dq[me];
  otask *const task = st->task;
  ocnt *const cnt = st->cnt;
  const bool multi = st->ngroups > 1;
  const uint32_t *const succ = st->succ;
  look wl, *w = &wl;
  memset(w, 0, sizeof *w);
  const double t0 = rp_clock_us();
  for (int i = 0; i < RP_OMP_MAXT; i++)
    w->since[i] = w->ibsince[i] = w->seen[i] = t0;
  unsigned long done = 0, prog = atomic_load_explicit(&dq->prog, RLX);
  long e = atomic_load_explicit(&st->phase.v, ACQ);
  uint32_t cont = NONE;
  /* Tasks taken from the deque HOLD at a time while this thread's recent
   * tasks were tiny (its pace, timed every PACE_TASKS tasks): they wait
   * beside it invisible to thieves, a few tiny tasks at most. */
  uint32_t hold[HOLD];
  long nhold = 0, take = 1;
  double tick = t0;
  bool alone = false; /* solo */
  /* its pace as last measured (coarse until known) */
  bool coarse = atomic_load_explicit(&dq->pace, RLX) >= COARSE_US ||
                atomic_load_explicit(&dq->prog, RLX) < PACE_TASKS;
  for (;;) {
    uint32_t v = cont;
    cont = NONE;
    if (v == NONE) {
      if (nhold || (nhold = dq_popn(dq, hold, take, alone)))
        v = hold[--nhold];
      else if ((v = idle(st, me, gen, w, &done, &e, &alone)) == NONE)
        break;
    }
    otask *t = &task[v];
    if (alone && (t->split || atomic_load_explicit(&st->so.want, RLX)))
      solo_leave(st, &alone);
    exec(st, t, v, e, me, q, split_ok);
    if (t->indeg0 > 1)
      atomic_store_explicit(&cnt[v].c, t->indeg0, RLX);
    if (t->hw)
      rp__omp_done(st, t, e);
    done++;
    atomic_store_explicit(&dq->prog, ++prog, RLX);
    if (!(prog % PACE_TASKS)) {
      const double now = rp_clock_us(), pace = (now - tick) / PACE_TASKS;
      take = pace < TINY_US ? HOLD : 1;
      coarse = pace >= COARSE_US;
      atomic_store_explicit(&dq->pace, (float)pace, RLX);
      tick = now;
      if (!alone && st->nth > 1 &&
          atomic_load_explicit(&st->nsleep.v, RLX) == st->nth - 1)
        alone = solo_enter(st, me);
    }
    const uint32_t *sp = succ + t->s0, *se = sp + t->ns;
    bool pushed = false;
    for (; sp < se; sp++) {
      const uint32_t s = *sp;
      ocnt *cs = &cnt[s];
      if (cs->indeg0 > 1) {
        if (alone) {
          int c = atomic_load_explicit(&cs->c, RLX) - 1;
          atomic_store_explicit(&cs->c, c, RLX);
          if (c)
            continue;
        } else if (atomic_fetch_sub_explicit(&cs->c, 1, AR) != 1) {
          continue;
        }
      }
      const int g = multi ? task[s].group : -1;
      if (g >= 0 && g != q) {
        if (alone)
          solo_leave(st, &alone);
        ib_push(&st->inbox[g], s);
        rp__omp_wake(st, g, 1);
      } else if (cont == NONE) {
        cont = s;
      } else {
        dq_push(dq, s);
        pushed = true;
      }
    }
    /* Work to share (a long deque, or any while tasks are coarse) wakes
     * one sleeper, once per task: each wake is a system call on this
     * thread, before its continuation; the woken thread wakes the next
     * one if work is left (find). */
    if (pushed && (coarse || dq_size(dq) >= STEAL_BIG) &&
        atomic_load_explicit(&st->nsleep.v, RLX) &&
        !atomic_load_explicit(&st->nspin.v, RLX)) {
      if (alone)
        solo_leave(st, &alone);
      rp__omp_wake(st, q, 1);
    }
  }
}

rp_status rp__omp_steal_init(ostate *st) {
  st->cnt =
      aligned_alloc(64, ((st->n ? st->n : 1) * sizeof *st->cnt + 63) / 64 * 64);
  if (!st->cnt)
    return RP_ENOMEM;
  for (uint32_t v = 0; v < st->n; v++) {
    atomic_init(&st->cnt[v].c, st->task[v].indeg0);
    st->cnt[v].indeg0 = st->task[v].indeg0;
  }
  long cap = 64;
  while (cap < (long)st->n + 1)
    cap *= 2;
  for (int i = 0; i < st->nth + st->ngroups; i++) {
    odeque *d = i < st->nth ? &st->dq[i] : &st->inbox[i - st->nth];
    d->buf = malloc((size_t)cap * sizeof *d->buf);
    if (!d->buf)
      return RP_ENOMEM;
    d->mask = cap - 1;
    atomic_init(&d->bot, 0);
    atomic_init(&d->top, 0);
    atomic_init(&d->lock, 0);
    atomic_init(&d->prog, 0);
    atomic_init(&d->pace, 0.0f);
  }
  atomic_init(&st->so.solo, -1);
  atomic_init(&st->so.want, 0);
  st->steal = true;
  return RP_OK;
}

/* A team thread: pinned once, it waits for a launch (pausing for
 * TEAM_SPIN_US after the last one, then asleep on gen), runs its part,
 * and waits again. A thread that sees a launch late joins whichever one
 * runs then: everything it reads is the team's shared state. */
static void *team_main(void *arg) {
  const struct oteam_arg *a = arg;
  ostate *st = a->st;
  const int me = a->me;
  int g = 0;
  rp__omp_pin(st, me);
  for (;;) {
    int cur;
    double t0 = rp_clock_us(), gap = 0.25;
    /* the last launch's policy: with YIELD, a short spin; then, unless
     * the team's own threads outnumber its CPUs, looks each after giving
     * the CPU to whoever wants it (sched_yield: not spinning; a thread
     * asleep would make every launch on a busy machine wait for its
     * wake-up), up to TEAM_SPIN_US as well */
    const bool yield = atomic_load_explicit(&st->yield.v, RLX);
    const bool crowded = st->ncpu > 0 && st->nth > st->ncpu;
    unsigned looks = 0;
    bool slept = false, yielding = false;
    while ((cur = atomic_load_explicit(&st->gen.v, ACQ)) == g &&
           !atomic_load_explicit(&st->quit.v, ACQ)) {
      const bool early = !slept && rp_clock_us() - t0 < TEAM_SPIN_US;
      if (!yielding) {
        ++looks;
        if (!slept && (yield ? looks < RP_OMP_SHORT_LOOKS : early)) {
          pause_us(gap);
          gap = gap * 2 > GAP_MAX_US ? GAP_MAX_US : gap * 2;
          continue;
        }
        rp__omp_spun(st, looks);
        looks = 0;
      }
      if (yield && !crowded && early) {
        yielding = true;
        sched_yield();
        continue;
      }
      yielding = false;
      slept = true;
      atomic_fetch_add_explicit(&st->nidle.v, 1, SC);
      if (atomic_load_explicit(&st->gen.v, SC) == g &&
          !atomic_load_explicit(&st->quit.v, SC))
        fx_wait(&st->gen.v, g, 1e6);
      atomic_fetch_sub_explicit(&st->nidle.v, 1, SC);
    }
    rp__omp_spun(st, looks);
    if (atomic_load_explicit(&st->quit.v, ACQ))
      break;
    g = cur;
    worker(st, me, g);
  }
  return NULL;
}

/* Start threads 1 .. nth - 1, each on its CPUs from the start (never on
 * the caller's mask); false if the system refused one (those started keep
 * waiting, unused). */
static bool team_start(ostate *st) {
  while (st->nstarted < st->nth - 1) {
    int me = st->nstarted + 1;
    st->targ[me].st = st;
    st->targ[me].me = me;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr))
      return false;
    rp__omp_thread_attr(st, me, &attr);
    int rc = pthread_create(&st->th[me], &attr, team_main, &st->targ[me]);
    pthread_attr_destroy(&attr);
    if (rc)
      return false;
    st->nstarted++;
  }
  return true;
}

void rp__omp_steal_free(ostate *st) {
  if (st->nstarted) {
    atomic_store_explicit(&st->quit.v, 1, SC);
    atomic_fetch_add_explicit(&st->gen.v, 1, SC);
#ifdef __linux__
    syscall(SYS_futex, (int *)&st->gen.v, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
            NULL, 0);
#endif
    for (int i = 1; i <= st->nstarted; i++)
      pthread_join(st->th[i], NULL);
    st->nstarted = 0;
  }
  for (int i = 0; i < RP_OMP_MAXT; i++) {
    free((void *)st->dq[i].buf);
    free((void *)st->inbox[i].buf);
    st->dq[i].buf = st->inbox[i].buf = NULL;
  }
  free(st->cnt);
  st->cnt = NULL;
  st->steal = false;
}

void rp__omp_steal_run(ostate *st, unsigned iterations) {
  if (!st->n || !iterations)
    return;
  const long E0 = st->lepoch, Elast = E0 + (long)iterations;
  /* before the team starts: a new thread reads the policy at once */
  rp__omp_idle_decide(st);
  if (!team_start(st)) {
    rp__omp_run_serial(st, iterations);
    st->lepoch = Elast;
    return;
  }
  /* A thread of the last launch may still be looking for work: it reads
   * only what is set here before phase and gen move on. */
  atomic_store_explicit(&st->e0.v, E0, RLX);
  atomic_store_explicit(&st->elast.v, Elast, RLX);
  atomic_store_explicit(&st->flushed.v, 0, RLX);
  /* the first replay's roots wait in their groups' inboxes */
  for (int g = 0; g < st->ngroups; g++) {
    odeque *ib = &st->inbox[g];
    lock(&ib->lock);
    long b = atomic_load_explicit(&ib->bot, RLX);
    for (uint32_t i = 0; i < st->nroots[g]; i++)
      atomic_store_explicit(&ib->buf[(b + i) & ib->mask], st->roots[g][i], RLX);
    atomic_store_explicit(&ib->bot, b + (long)st->nroots[g], REL);
    unlock(&ib->lock);
  }
  atomic_store_explicit(&st->phase.v, E0 + 1, SC);
  atomic_fetch_add_explicit(&st->gen.v, 1, SC);
#ifdef __linux__
  if (atomic_load_explicit(&st->nidle.v, SC))
    syscall(SYS_futex, (int *)&st->gen.v, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
            NULL, 0);
#endif
  /* A thread still asleep from the last launch stays so: a push of coarse
   * work, or 64 queued tasks, wakes it; tiny work runs solo meanwhile. */
  cpu_set_t old; /* the caller is thread 0 */
  bool pinned = rp__omp_pin_caller(st, &old);
  worker(st, 0, 0);
  if (pinned)
    rp__omp_unpin_caller(&old);
  /* A failure ends the launch early: the replays not run count as done
   * for wait_buffer (otherwise every host writer is there already: no
   * pass over every task's line at the end of each launch). */
  if (atomic_load(&st->failed))
    for (uint32_t v = 0; v < st->n; v++)
      if (st->task[v].hw && atomic_load(&st->task[v].done) < Elast)
        rp__omp_done(st, &st->task[v], Elast);
  st->lepoch = Elast;
}
