/* A process per method for the CPU benchmarks that compare runtimes
 * (bench_cholesky, bench_omp; issue 31), and where their workers ran.
 *
 * Run in one process, methods measure each other: an OpenMP runtime binds
 * the main thread to one place when it starts or runs a region under
 * OMP_PROC_BIND, and a pool created from that thread afterwards (oneTBB's,
 * say) inherits the one-core mask. So the benchmark re-executes itself
 * once per method (BENCH_ONE set, BENCH_METHODS naming only that method)
 * and reads back its RESULT lines. A method that is not OpenMP's (oneTBB,
 * StarPU: their names are passed as not_omp) runs without OMP_PROC_BIND
 * and OMP_PLACES, as a program of that runtime would. Every child starts
 * on the process's CPU set (the union of OpenMP's places, which the
 * runtime built from it; taskset and cgroups stay), not on the main
 * thread's mask, which the runtime may have bound at start.
 *
 * BENCH_VERBOSE=1: task bodies call bench_cpu_note(); each child then
 * prints, per method and thread count, which CPUs ran its tasks and which
 * of its threads ran there ("CPUS ..." lines). */
#ifndef RP_BENCH_ISOLATE_H
#define RP_BENCH_ISOLATE_H

#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "peer.h"

/* In a child: the method it runs; NULL in the parent. */
static inline const char *bench_one(void) {
  const char *m = getenv("BENCH_ONE");
  return m && *m ? m : NULL;
}

/* The process's CPU set: the union of OpenMP's places (which the
 * runtime built from it) or, without places, the calling thread's mask
 * (nothing bound it); false if unknown. */
static inline int bench_process_set(cpu_set_t *all) {
  CPU_ZERO(all);
  for (int p = 0; p < omp_get_num_places(); p++) {
    int ids[1024], k = omp_get_place_num_procs(p);
    if (k < 1 || k > 1024)
      continue;
    omp_get_place_proc_ids(p, ids);
    for (int i = 0; i < k; i++)
      if (ids[i] >= 0 && ids[i] < CPU_SETSIZE)
        CPU_SET(ids[i], all);
  }
  if (!CPU_COUNT(all) && sched_getaffinity(0, sizeof *all, all))
    return 0;
  return CPU_COUNT(all) > 0;
}

/* busy_start (peer.h) from a thread on the process's CPU set: the busy
 * processes must not inherit a main thread bound to one place. */
static inline void bench_busy_start(busy *b, int k, unsigned seconds) {
  cpu_set_t old, all;
  int wide = k > 0 && bench_process_set(&all) &&
             !sched_getaffinity(0, sizeof old, &old) &&
             !sched_setaffinity(0, sizeof all, &all);
  busy_start(b, k, seconds);
  if (wide)
    sched_setaffinity(0, sizeof old, &old);
}

/* Runs this program (argv) again for method m alone; returns its stdout
 * (malloc'ed, NUL-ended; NULL if it could not run or failed). Its stderr
 * is ours. not_omp: m is not an OpenMP program (no OMP_PROC_BIND,
 * OMP_PLACES). */
static inline char *bench_spawn(char **argv, const char *m, int not_omp) {
  int fd[2];
  if (pipe(fd))
    return NULL;
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0)
    return NULL;
  if (!pid) {
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    /* This process's OpenMP runtime may have bound the main thread (to
     * its first place, at start under OMP_PROC_BIND): the child starts
     * on the process's CPUs, as this process did. */
    cpu_set_t all;
    if (bench_process_set(&all))
      sched_setaffinity(0, sizeof all, &all);
    setenv("BENCH_ONE", m, 1);
    setenv("BENCH_METHODS", m, 1);
    if (not_omp) {
      unsetenv("OMP_PROC_BIND");
      unsetenv("OMP_PLACES");
    }
    execv("/proc/self/exe", argv);
    _exit(127);
  }
  close(fd[1]);
  size_t n = 0, cap = 1 << 16;
  char *out = malloc(cap);
  ssize_t r;
  while (out && (r = read(fd[0], out + n, cap - 1 - n)) > 0) {
    n += (size_t)r;
    if (cap - 1 - n < 4096) {
      char *o = realloc(out, cap *= 2);
      if (!o)
        free(out);
      out = o;
    }
  }
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (!out)
    return NULL;
  out[n] = 0;
  if (!WIFEXITED(st) || WEXITSTATUS(st)) {
    fprintf(stderr, "%s: its process failed (status %d)\n", m, st);
    free(out);
    return NULL;
  }
  return out;
}

/* Prints the lines of out that start with prefix. */
static inline void bench_echo(const char *out, const char *prefix) {
  size_t k = strlen(prefix);
  for (const char *l = out; l && *l;) {
    const char *e = strchr(l, '\n');
    size_t len = e ? (size_t)(e - l) : strlen(l);
    if (!strncmp(l, prefix, k))
      printf("%.*s\n", (int)len, l);
    l = e ? e + 1 : NULL;
  }
}

/* ---- where tasks ran (BENCH_VERBOSE=1) ---- */
#define BENCH_NCPU 1024
static int bench_verbose = -1; /* bench_verbose_on() reads it first */
static _Atomic unsigned bench_cpu_tasks[BENCH_NCPU];
static _Atomic uint64_t bench_cpu_thr[BENCH_NCPU]; /* thread slots, bits */
static _Atomic int bench_nslot;
static _Thread_local int bench_slot = -1;

static inline int bench_verbose_on(void) {
  if (bench_verbose < 0) {
    const char *v = getenv("BENCH_VERBOSE");
    bench_verbose = v && *v && strcmp(v, "0");
  }
  return bench_verbose;
}

/* A task body ran here (counted only in verbose mode). */
static inline void bench_cpu_note(void) {
  if (bench_verbose <= 0)
    return;
  int c = sched_getcpu();
  if (bench_slot < 0)
    bench_slot = atomic_fetch_add(&bench_nslot, 1);
  if (c < 0 || c >= BENCH_NCPU)
    return;
  atomic_fetch_add_explicit(&bench_cpu_tasks[c], 1, memory_order_relaxed);
  atomic_fetch_or_explicit(&bench_cpu_thr[c], 1ull << (bench_slot & 63),
                           memory_order_relaxed);
}

/* Forgets the tasks noted so far. */
static inline void bench_cpu_reset(void) {
  for (int c = 0; c < BENCH_NCPU; c++) {
    atomic_store(&bench_cpu_tasks[c], 0);
    atomic_store(&bench_cpu_thr[c], 0);
  }
}

/* Prints where the tasks noted since the last call ran: per CPU, tasks
 * and the threads (numbered in order of their first task) that ran them;
 * then forgets them. */
static inline void bench_cpu_print(const char *method, int thr,
                                   const char *what) {
  if (bench_verbose <= 0)
    return;
  int ncpu = 0;
  uint64_t all = 0;
  printf("CPUS %s thr=%d %s:", method, thr, what);
  for (int c = 0; c < BENCH_NCPU; c++) {
    unsigned n = atomic_exchange(&bench_cpu_tasks[c], 0);
    uint64_t t = atomic_exchange(&bench_cpu_thr[c], 0);
    if (!n)
      continue;
    ncpu++;
    all |= t;
    printf(" cpu%d=%u(t", c, n);
    for (int s = 0; s < 64; s++)
      if (t >> s & 1)
        printf(",%d", s);
    printf(")");
  }
  printf(" -> %d CPUs, %d threads\n", ncpu, __builtin_popcountll(all));
}

#endif
