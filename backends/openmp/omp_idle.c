/* The idle policy of the OpenMP backend's team (omp_idle.h): decided at
 * every launch from the team's CPU set (omp_bind.c) and, when the team
 * has a CPU per thread, from how many other threads the machine runs,
 * sampled from /proc/loadavg at most every SAMPLE_US. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "omp_idle.h"
#include "omp_internal.h"

#define SAMPLE_US 10000.0

int rp__omp_idle_policy(int nth, int ncpu, int online, int others) {
  if (ncpu <= 0 || nth <= 1)
    return RP_OMP_IDLE_SPIN;
  if (nth > ncpu)
    return RP_OMP_IDLE_YIELD;
  if (others <= 0)
    return RP_OMP_IDLE_SPIN;
  if (online < ncpu)
    online = ncpu;
  const long here = (long)others * ncpu / online;
  return nth + here > ncpu ? RP_OMP_IDLE_YIELD : RP_OMP_IDLE_SPIN;
}

int rp__omp_loadavg_running(const char *text) {
  const char *p = text;
  for (int f = 0; f < 3; f++) { /* past the three averages */
    while (*p == ' ')
      p++;
    if (!*p)
      return -1;
    while (*p && *p != ' ')
      p++;
  }
  while (*p == ' ')
    p++;
  char *end;
  long r = strtol(p, &end, 10);
  if (end == p || *end != '/' || r < 0 || r > 1000000)
    return -1;
  return (int)r;
}

/* Runnable threads on the machine now; -1 if unknown. */
static int running_now(void) {
#ifdef __linux__
  char buf[128];
  int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return -1;
  buf[n] = 0;
  return rp__omp_loadavg_running(buf);
#else
  return -1;
#endif
}

void rp__omp_idle_decide(ostate *st) {
  int pol = st->idle_force;
  if (pol < 0) {
    int others = -1;
    if (st->nth > 1 && st->nth <= st->ncpu) {
      const double now = rp_clock_us();
      if (st->sampled_at == 0 || now - st->sampled_at >= SAMPLE_US) {
        st->sampled_at = now;
        const int run = running_now();
        /* ours among them: the caller and the team threads awake */
        long own = 1 + st->nstarted -
                   atomic_load_explicit(&st->nidle.v, memory_order_relaxed) -
                   atomic_load_explicit(&st->nsleep.v, memory_order_relaxed);
        own = own < 1 ? 1 : own;
        const int cur = run < 0 ? -1 : run - own < 0 ? 0 : run - (int)own;
        st->others_prev = st->others_cur;
        st->others_cur = cur;
      }
      others = st->others_cur;
      if (st->others_prev >= 0 && st->others_prev < others)
        others = st->others_prev;
    }
    st->others_seen = others;
    pol = rp__omp_idle_policy(st->nth, st->ncpu, st->online, others);
  }
  atomic_store_explicit(&st->yield.v, pol, memory_order_relaxed);
}

void rp__omp_spun(ostate *st, unsigned looks) {
  long m = atomic_load_explicit(&st->spin_max.v, memory_order_relaxed);
  while ((long)looks > m && !atomic_compare_exchange_weak_explicit(
                                &st->spin_max.v, &m, (long)looks,
                                memory_order_relaxed, memory_order_relaxed))
    ;
}

void rp__omp_idle_init(ostate *st, int ncpu) {
  st->ncpu = ncpu;
  long on = sysconf(_SC_NPROCESSORS_ONLN);
  st->online = on > 0 && on < 1 << 20 ? (int)on : ncpu;
  st->others_cur = st->others_prev = st->others_seen = -1;
  const char *e = getenv("RP_OMP_IDLE");
  st->idle_force = e && !strcmp(e, "spin")    ? RP_OMP_IDLE_SPIN
                   : e && !strcmp(e, "yield") ? RP_OMP_IDLE_YIELD
                                              : -1;
}
