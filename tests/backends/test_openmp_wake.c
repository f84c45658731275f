/* The stealing engine's wake-ups (issue 31): a task that readies a burst
 * of coarse work while the other threads sleep makes at most one wake-up
 * system call before its continuation runs (each is a system call on the
 * thread that runs the critical path), and the sleepers still all get the
 * work: the woken thread wakes the next one.
 *
 * The test counts the futex wake-ups each thread makes by standing in for
 * libc's syscall() (the library is linked statically into this program,
 * so its calls come here) and handing every call on to libc's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "util.h"

/* futex wake-ups of one waiter made by this thread */
static _Thread_local long t_wakes;

long syscall(long nr, ...);
long syscall(long nr, ...) {
  static long (*real)(long, ...);
  va_list ap;
  long a[6];
  va_start(ap, nr);
  for (int i = 0; i < 6; i++)
    a[i] = va_arg(ap, long);
  va_end(ap);
  if (nr == SYS_futex && (a[1] & FUTEX_CMD_MASK) == FUTEX_WAKE && a[2] == 1)
    t_wakes++;
  if (!real)
    *(void **)&real = dlsym(RTLD_NEXT, "syscall");
  return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

#define NTH 4 /* threads */
#define NT 6  /* tasks P readies */

typedef struct burst {
  long p_wakes, c_wakes; /* P's thread's count: at P's end, at T0's start */
  pthread_t p_thread, t_thread[NT];
  atomic_int started, timed_out;
} burst;

typedef struct tslot {
  burst *b;
  int i;
} tslot;

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* P: long enough (20 ms) for every other thread to fall asleep. */
static void h_p(void *u, void *const *ptr) {
  burst *b = u;
  usleep(20000);
  ((uint64_t *)ptr[0])[0]++;
  b->p_thread = pthread_self();
  b->p_wakes = t_wakes;
}

/* T_i: the first NTH to start wait (at most 5 s) until NTH have started,
 * each on a thread of its own. */
static void h_t(void *u, void *const *ptr) {
  tslot *s = u;
  burst *b = s->b;
  if (s->i == 0)
    b->c_wakes = t_wakes;
  b->t_thread[s->i] = pthread_self();
  const int k = atomic_fetch_add(&b->started, 1);
  const double t0 = now_us();
  while (k < NTH && atomic_load(&b->started) < NTH) {
    if (now_us() - t0 > 5e6) {
      atomic_store(&b->timed_out, 1);
      break;
    }
    usleep(50);
  }
  /* a host task's pointers are its buffers' bases (here both X) */
  ((uint64_t *)ptr[1])[8 * (s->i + 1)] +=
      ((const uint64_t *)ptr[0])[0] + (uint64_t)s->i;
}

/* P, then NT tasks T_i that read P's line and write one line each. */
static rp_graph *burst_graph(uint64_t *X, size_t bytes, burst *b, tslot *ts) {
  rp_graph *g;
  rp_buf xb;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "X", X, bytes, &xb));
  for (int i = -1; i < NT; i++) {
    rp_access a[2] = {{rp_bytes(xb, 0, 64), i < 0 ? RP_INOUT : RP_IN},
                      {rp_bytes(xb, 64 * (uint64_t)(i + 1), 64), RP_INOUT}};
    void *u = b;
    if (i >= 0) {
      ts[i] = (tslot){b, i};
      u = &ts[i];
    }
    TU_OK(g, rp_record_host(g, i < 0 ? h_p : h_t, u, a, i < 0 ? 1 : 2, NULL,
                            NULL));
  }
  TU_OK(g, rp_graph_end(g));
  return g;
}

Test(openmp_wake, a_burst_of_coarse_work_costs_its_maker_one_wake_up,
     .timeout = 60) {
  static uint64_t X[(NT + 1) * 8];
  burst b;
  tslot ts[NT];
  rp_graph *g = burst_graph(X, sizeof X, &b, ts);
  const rp_backend *be = NULL;
  rp_exec *x = NULL;
  rp_exec_opts o;
  TU_OK(NULL, rp_backend_find("openmp", &be));
  rp_exec_opts_init(&o);
  o.nthreads = NTH;
  TU_OK(NULL, rp_exec_create(&x, g, be, &o));
  long woken = 0;
  for (int launch = 0; launch < 8; launch++) {
    memset(&b, 0, sizeof b);
    memset(X, 0, sizeof X);
    cr_assert_eq(rp_exec_run(x, 1), RP_OK, "%s", rp_exec_error(x));
    cr_assert_eq(X[0], 1, "X[0] = %llu", (unsigned long long)X[0]);
    for (int i = 0; i < NT; i++)
      cr_assert_eq(X[8 * (i + 1)], 1 + (uint64_t)i);
    /* T0 is P's continuation: between the two, one wake-up at most
     * (before: one per sleeper, up to NTH - 1) */
    cr_assert(pthread_equal(b.p_thread, b.t_thread[0]));
    cr_assert_leq(b.c_wakes - b.p_wakes, 1,
                  "launch %d: %ld wake-ups between P and its continuation",
                  launch, b.c_wakes - b.p_wakes);
    woken += b.c_wakes - b.p_wakes;
    /* and every sleeper got work: NTH tasks ran at once */
    cr_assert(!atomic_load(&b.timed_out),
              "launch %d: only %d of %d threads ran the burst", launch,
              atomic_load(&b.started), NTH);
  }
  /* the others were asleep: P's thread did wake one */
  cr_assert_geq(woken, 1);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}
