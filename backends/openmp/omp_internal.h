/* State shared by the files of the OpenMP backend (never installed). It
 * reads only the plan and the public headers. */
#ifndef RP_OMP_INTERNAL_H
#define RP_OMP_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include "reprise/backend.h"
#include "reprise/kernel.h"

#define RP_OMP_MAXT 64   /* most threads in a team */
#define RP_OMP_BATCH 256 /* most tasks one claim takes */
/* Kernels with at least this many index points are split over the idle
 * threads of their group; smaller ones run whole. */
#define RP_OMP_SPLIT_MIN 8192

/* OT_CALL: fn.c(p), a task another lowering gives the engine (the mpi
 * backend's sends and receives, backends/mpi). */
enum { OT_KERNEL = 1, OT_HOST = 2, OT_COPY = 3, OT_CALL = 4 };

/* A copy between two images (never the same one: the plan has no node for
 * a copy within one image). */
typedef struct ocopy {
  uint32_t src, dst; /* plan images */
  uint32_t niv;
  const uint64_t *iv; /* (offset, length) pairs, in the plan */
} ocopy;

/* A task's predecessors left in this replay and its in-degree, apart from
 * its record (eight to a cache line): readying a successor touches only
 * this (and, with several groups, the successor's group). */
typedef struct ocnt {
  _Atomic int c;
  int indeg0;
} ocnt;

/* Everything a worker touches to run one task: one cache line. */
typedef struct otask {
  _Alignas(64) int indeg0;
  uint32_t s0, ns; /* successors: st->succ[s0 .. s0 + ns) (the plan's) */
  uint8_t kind, split, sdim, hw; /* hw: writes some buffer's user array */
  int8_t group;                  /* -1: any group may run it */
  union {
    rp_cpu_fn k;
    rp_host_fn h;
    void (*c)(void *);
  } fn;
  void *p;    /* kernel: rp_kargs*; host: ptrs; copy: ocopy*; call: its arg */
  void *user; /* host tasks */
  _Atomic long done; /* hw tasks: last replay (epoch) they finished */
} otask;

/* A kernel's argument block on cache lines of its own: the index space
 * and the first slots, all a small kernel reads, share its first line. */
typedef struct okargs {
  _Alignas(64) rp_kargs k;
} okargs;

typedef struct padl {
  _Alignas(64) _Atomic long v;
} padl;

typedef struct padi {
  _Alignas(64) _Atomic int v;
} padi;

/* A thread's deque of ready tasks (omp_steal.c), after Cilk's THE
 * protocol: its owner pushes and pops the newest at bot without a lock;
 * thieves take the oldest half at top under lock. A group's inbox has the
 * same layout, every access under lock. Entries are atomics accessed
 * relaxed (plain moves) so that ThreadSanitizer sees no race on a slot
 * reused after a steal. */
typedef struct odeque {
  _Alignas(64) _Atomic long bot;
  _Atomic unsigned long prog; /* tasks the owner finished */
  _Atomic float pace;         /* µs per task over its last 64, waits in */
  _Atomic uint32_t *buf;
  long mask;
  _Alignas(64) _Atomic long top;
  _Atomic int lock;
} odeque;

/* One published data-parallel kernel: idle threads claim its chunks. The
 * claim counter and the chunk count carry the use's generation, so a claim
 * made through a stale pointer to a reused job is recognised and dropped. */
typedef struct ojob {
  _Alignas(64) _Atomic uint64_t ctr; /* gen << 32 | next chunk */
  _Alignas(64) _Atomic uint32_t done;
  _Atomic uint64_t info; /* gen << 32 | chunks */
  const otask *t;
  uint32_t gen, node; /* node: the plan node, for failures */
  long epoch;
} ojob;

typedef struct ostate ostate;
struct ostate {
  rp_exec *x;
  const rp_plan *p;
  uint32_t n; /* plan nodes */
  bool serial;

  void **img;   /* per plan image (user images: the live array) */
  void **owned; /* per plan image: the allocation, or NULL */

  otask *task; /* per plan node */
  ocnt *cnt;   /* per plan node (the stealing engine's) */
  const uint32_t *succ;
  okargs *kargs;   /* per kernel node, in program order */
  void **hptr;     /* host tasks' pointer arrays */
  uint32_t *hptr0; /* per node: first entry in hptr */
  ocopy *copy;     /* per node (only copies' are used) */

  /* team */
  int nth, ngroups;
  int cores[RP_OMP_MAXT], ncores; /* the options' */
  cpu_set_t *tset; /* per thread, where it is pinned (omp_bind.c);
                          NULL: the team is not pinned */
  int tgroup[RP_OMP_MAXT], gsize[RP_OMP_MAXT];
  unsigned long pinned[RP_OMP_MAXT];
  unsigned long caller_in; /* a caller found within tset[0] (pthread_t) */
  cpu_set_t pset; /* unpinned: the process's CPU set, read at binding by
                     the caller (team threads call no omp_* function) */
  bool pset_ok;

  /* progress, for wait_buffer: the batch the engine runs and the epoch
   * its last replay ends at; waiters sleep on cv when a hw task is late */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint64_t batch;
  long target;
  _Atomic int waiters;

  /* owner engine (omp_owner.c, mode "owner"): per-thread task lists in
   * program order (olist[olist0[t] .. olist0[t + 1])), remote successors
   * (CSR rs0, rsucc), remote in-degrees, arrival counters counted from
   * replay abase; owner: planned (after the first launch) */
  bool owner_mode, owner;
  uint32_t *olist, olist0[RP_OMP_MAXT + 1];
  uint32_t *rs0, *rsucc, *rind;
  _Atomic long *arr;
  long abase;
  uint64_t wait_for[RP_OMP_MAXT]; /* threads to wait for between replays */
  bool gsplit[RP_OMP_MAXT];       /* group has kernels split over it */
  double *mstart, *mend; /* the first launch's timings, for the owners */

  /* failures (rp_task_fail in a body): the first of the batch, under mu;
   * once failed is set no body runs until the batch ends */
  _Atomic int failed;
  int fcode;
  uint32_t fnode;
  long fepoch, be0; /* be0: the epoch before the batch's first */
  char fmsg[256];

  /* timeline: when non-NULL, workers record each node's start and end */
  double *tl_start, *tl_end, tl_t0;

  /* each group's roots (omp_engine.c); replays this exec ran; split
   * kernels published per group, one job per thread; the owner engine's
   * per-thread replay reached */
  uint32_t **roots, *nroots;
  long lepoch;
  padl help[RP_OMP_MAXT]; /* per group: an ojob* or 0 */
  ojob job[RP_OMP_MAXT];  /* per thread */
  padl at[RP_OMP_MAXT];

  /* stealing engine (omp_steal.c): per-thread deques, per-group inboxes
   * (roots and tasks readied by another group), sleep words (1: asleep
   * in the futex), the replay the team runs (phase; past the launch's
   * last: over), tasks finished in the launch as flushed by threads going
   * idle, threads asleep and threads looking for work */
  bool steal;
  odeque dq[RP_OMP_MAXT], inbox[RP_OMP_MAXT];
  padi slp[RP_OMP_MAXT];
  padl phase, flushed, nsleep, nspin, e0, elast;
  /* solo: the thread running alone while every other one sleeps (-1:
   * none), without locked instructions; want: another asks it to stop */
  struct {
    _Alignas(64) _Atomic int solo;
    _Atomic int want;
  } so;
  /* the team: threads 1 .. nth - 1 of our own (the caller of a launch is
   * thread 0), started at the first launch; a launch bumps gen (a futex
   * word workers sleep on between launches, nidle of them) */
  pthread_t th[RP_OMP_MAXT];
  struct oteam_arg {
    struct ostate *st;
    int me;
  } targ[RP_OMP_MAXT];
  int nstarted;
  padi gen, quit;
  padl nidle;
  /* idle policy (omp_idle.c): the team's usable CPUs (0: unknown), the
   * machine's online ones, RP_OMP_IDLE's choice (-1: none, decide), the
   * other runnable threads in the last two samples and the count the
   * last decision used (-1: unknown), when last sampled; yield: the
   * launch's policy (RP_OMP_IDLE_*); spin_max: the most looks for work
   * any thread made in a row without sleeping, naps: its futex waits */
  int ncpu, online, idle_force;
  int others_cur, others_prev, others_seen;
  double sampled_at;
  padi yield;
  padl spin_max, naps;
};

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h> /* _mm_pause; immintrin.h costs 2.5 s of compile per file */
#define rp__omp_relax() _mm_pause()
#else
#define rp__omp_relax() ((void)0)
#endif

/* Spin politely: after a while without progress give the core away, so an
 * oversubscribed machine (another process on "our" core) does not leave a
 * thread spinning for a descheduled one for a whole time slice. */
static inline void backoff(unsigned *spins) {
  if (++*spins & 2047u)
    rp__omp_relax();
  else
    sched_yield();
}

/* The idle policy (omp_idle.c): st's CPU counts and RP_OMP_IDLE, read
 * once (ncpu: the team's usable CPUs, 0 if unknown); the launch's policy
 * into st->yield; a thread made looks for work in a row without sleeping
 * (kept as st->spin_max when the most so far). */
void rp__omp_idle_init(ostate *st, int ncpu);
void rp__omp_idle_decide(ostate *st);
void rp__omp_spun(ostate *st, unsigned looks);
/* Run one task whole on the calling thread. omp_engine.c. */
void rp__omp_run_task(const ostate *st, const otask *t);
/* Task t finished replay (epoch) e: publish it for wait_buffer. */
void rp__omp_done(ostate *st, otask *t, long e);
/* Each group's roots (a root any group may run goes to the group of its
 * first successor that has one, else to groups in turn); free them. */
rp_status rp__omp_roots_init(ostate *st);
void rp__omp_roots_free(ostate *st);
/* The stealing engine (omp_steal.c): build its deques once; run
 * iterations replays on the team; free. */
rp_status rp__omp_steal_init(ostate *st);
void rp__omp_steal_run(ostate *st, unsigned iterations);
void rp__omp_steal_free(ostate *st);
/* Wake up to k sleeping threads of group q (all groups: q < 0). */
void rp__omp_wake(ostate *st, int q, int k);
/* Choose every task's owner thread from durations dur (µs per node; NULL:
 * all equal) and build the owner engine's lists. omp_owner.c. */
rp_status rp__omp_owner_plan(ostate *st, const double *dur);
void rp__omp_owner_run(ostate *st, unsigned iterations);
void rp__omp_owner_free(ostate *st);
/* Where the team runs (omp_bind.c): each thread's CPUs (st->tset) from
 * the options' cores, else from OpenMP's places when binding is asked,
 * else none (not pinned); a notice when threads outnumber the CPUs. */
rp_status rp__omp_bind_team(ostate *st);
/* The process's CPU set, read before main, joined with OpenMP's places;
 * false if unknown. */
bool rp__omp_process_set(cpu_set_t *s);
/* Pin the calling team thread me > 0 to its CPUs; unpinned, give it the
 * process's CPU set if it inherited another mask (once per OS thread). */
void rp__omp_pin(ostate *st, int me);
/* Thread 0 is the caller of a launch, the user's thread: pinned to thread
 * 0's CPUs for the launch only, when the team is pinned and its mask is
 * not within them (true: *old holds its exact mask, for
 * rp__omp_unpin_caller to restore). A thread once found within them is
 * not asked again (st->caller_in). */
bool rp__omp_pin_caller(ostate *st, cpu_set_t *old);
void rp__omp_unpin_caller(const cpu_set_t *old);
/* Set a's affinity for team thread me (created by the caller): its CPUs
 * when pinned; unpinned, the process's CPU set when the caller's mask
 * differs from it (a thread must not inherit a one-place mask). False:
 * a left unchanged. */
bool rp__omp_thread_attr(const ostate *st, int me, pthread_attr_t *a);
/* Claim and run chunks of a published job; returns how many ran. */
uint32_t rp__omp_help_job(ostate *st, ojob *j);
/* Run plan node v (task t) of replay e on team thread me of group q: whole,
 * or split over the group's idle threads when split_ok; timed when a
 * timeline is asked for; a failure it reports is recorded (rp__omp_fail)
 * and, once one is, no body runs until the batch ends. */
void rp__omp_exec(ostate *st, const otask *t, uint32_t v, long e, int me, int q,
                  bool split_ok);
/* Record the failure a body reported (the batch's first wins). */
void rp__omp_fail(ostate *st, uint32_t v, long e, int code, const char *msg);
/* Run iterations replays in program order on the calling thread (epochs
 * from st->lepoch + 1; the caller advances st->lepoch). */
void rp__omp_run_serial(ostate *st, unsigned iterations);
/* A zeroed engine state for exec x and plan p (its mutex and condition
 * initialised), on its own cache lines; NULL: no memory. Free with free()
 * after destroying the two. */
ostate *rp__omp_state_new(rp_exec *x, const rp_plan *p);
/* Run iterations replays on the calling thread alone, pinned to thread 0's
 * CPUs for the while (rp__omp_pin_caller): the owner engine once planned
 * (st->owner), else in program order; advances st->lepoch. */
void rp__omp_run_caller(ostate *st, unsigned iterations);

#endif
