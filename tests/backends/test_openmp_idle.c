/* The OpenMP backend's idle threads when the team cannot have its cores
 * (issue 31): the policy as a function of counts (a table), the parse of
 * /proc/loadavg it is fed from, and two teams that cannot have their
 * cores, counted through rp_exec_stats(): four threads on one CPU, and
 * two threads beside as many CPU-burning processes as the process has
 * CPUs. There every replay's result is exact and no thread looks for
 * work more than RP_OMP_SHORT_LOOKS times in a row without sleeping; the
 * same team forced to today's policy (RP_OMP_IDLE=spin) does. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../../backends/openmp/omp_idle.h"
#include "util.h"

#define Y RP_OMP_IDLE_YIELD
#define S RP_OMP_IDLE_SPIN

Test(openmp_idle, the_policy_from_counts) {
  static const struct {
    int nth, ncpu, online, others, want;
  } rows[] = {
      {4, 2, 2, -1, Y},   /* more threads than CPUs: whatever the load */
      {4, 2, 2, 0, Y},    /* the VM, 4 threads */
      {2, 1, 16, 0, Y},   /* taskset -c 0, 2 threads */
      {17, 16, 16, 0, Y}, /* one thread too many */
      {2, 2, 2, -1, S},   /* load unknown: today's policy */
      {2, 2, 2, 0, S},    /* the team has its cores */
      {2, 2, 2, 1, Y},    /* one CPU of the two kept busy */
      {16, 16, 16, 0, S}, /* the host, idle */
      {16, 16, 16, 4, Y}, /* the host, 4 of 16 cores busy */
      {12, 16, 16, 4, S}, /* 12 threads and 4 busy: room for all */
      {13, 16, 16, 4, Y}, {8, 16, 16, 4, S},
      {4, 4, 16, 2, S}, /* taskset to 4 of 16: 2 others elsewhere, */
      {4, 4, 16, 8, Y}, /* a share of 8 others (2) lands here */
      {4, 4, 16, 3, S}, /* 3 * 4 / 16 rounds down to none */
      {1, 1, 1, 9, S},  /* a team of one has no idle threads */
      {4, 0, 16, 9, S}, /* usable CPUs unknown */
      {5, 8, 4, 4, Y},  /* online below the set (never): as many */
  };
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
    cr_expect_eq(rp__omp_idle_policy(rows[i].nth, rows[i].ncpu, rows[i].online,
                                     rows[i].others),
                 rows[i].want, "row %zu: %d threads, %d CPUs of %d, %d others",
                 i, rows[i].nth, rows[i].ncpu, rows[i].online, rows[i].others);
}

Test(openmp_idle, the_runnable_count_of_loadavg) {
  cr_expect_eq(rp__omp_loadavg_running("0.52 0.58 0.59 3/467 12345\n"), 3);
  cr_expect_eq(rp__omp_loadavg_running("5.15 3.79 6.55 17/1043 99"), 17);
  cr_expect_eq(rp__omp_loadavg_running("  1.00  2.00 3.00 0/1 1"), 0);
  cr_expect_eq(rp__omp_loadavg_running("0.52 0.58 0.59"), -1);
  cr_expect_eq(rp__omp_loadavg_running("0.52 0.58 0.59 x/467 1"), -1);
  cr_expect_eq(rp__omp_loadavg_running("0.52 0.58 0.59 3 1"), -1);
  cr_expect_eq(rp__omp_loadavg_running(""), -1);
}

#define CHAINS 8
#define LEN 16
#define LAUNCHES 20

static double cpu_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* each task: 10 µs of its thread's CPU time, then its chain's line + 1
 * (u: the chain; a host task's pointer is its buffer's base) */
static void h_step(void *u, void *const *ptr) {
  const double t0 = cpu_us();
  while (cpu_us() - t0 < 10)
    ;
  ((uint64_t *)ptr[0])[8 * (intptr_t)u]++;
}

/* CHAINS independent chains of LEN tasks, chain c on X's line c */
static rp_graph *chains(uint64_t *X) {
  rp_graph *g;
  rp_buf xb;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "X", X, CHAINS * 64, &xb));
  for (int k = 0; k < LEN; k++)
    for (int c = 0; c < CHAINS; c++) {
      rp_access a = {rp_bytes(xb, 64 * (uint64_t)c, 64), RP_INOUT};
      TU_OK(g,
            rp_record_host(g, h_step, (void *)(intptr_t)c, &a, 1, NULL, NULL));
    }
  TU_OK(g, rp_graph_end(g));
  return g;
}

static double stat(const rp_exec *x, const char *name) {
  double v = -1;
  cr_assert_eq(rp_exec_stat_get(x, name, &v), RP_OK, "%s", name);
  return v;
}

/* LAUNCHES launches of the chains on nth threads (cores: ncores of them,
 * or none); every line exact; the exec's figures out */
static void replay(int nth, const int *cores, unsigned ncores, double *yield,
                   double *spin_max, double *naps) {
  static uint64_t X[CHAINS * 8];
  memset(X, 0, sizeof X);
  rp_graph *g = chains(X);
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.nthreads = nth;
  o.cores = cores;
  o.ncores = ncores;
  const rp_backend *be = NULL;
  TU_OK(NULL, rp_backend_find("openmp", &be));
  rp_exec *x = NULL;
  TU_OK(NULL, rp_exec_create(&x, g, be, &o));
  for (int l = 1; l <= LAUNCHES; l++) {
    cr_assert_eq(rp_exec_run(x, 1), RP_OK, "%s", rp_exec_error(x));
    for (int c = 0; c < CHAINS; c++)
      cr_assert_eq(X[8 * c], (uint64_t)(LEN * l), "launch %d, chain %d: %llu",
                   l, c, (unsigned long long)X[8 * c]);
  }
  usleep(20000); /* the team's wait for a next launch, counted too */
  *yield = stat(x, "idle_yield");
  *spin_max = stat(x, "spin_max");
  *naps = stat(x, "naps");
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(openmp_idle, four_threads_on_one_cpu_look_briefly_then_sleep,
     .timeout = 60) {
  static const int one[] = {0};
  double y, sm, naps;
  unsetenv("RP_OMP_IDLE");
  replay(4, one, 1, &y, &sm, &naps);
  cr_expect_eq(y, Y);
  cr_expect_leq(sm, RP_OMP_SHORT_LOOKS, "a thread looked %.0f times in a row",
                sm);
  cr_expect_geq(naps, 1);
}

Test(openmp_idle, forced_to_spin_they_look_on, .timeout = 60) {
  static const int one[] = {0};
  double y, sm, naps;
  setenv("RP_OMP_IDLE", "spin", 1);
  replay(4, one, 1, &y, &sm, &naps);
  unsetenv("RP_OMP_IDLE");
  cr_expect_eq(y, S);
  cr_expect_gt(sm, RP_OMP_SHORT_LOOKS, "%.0f looks in a row at most", sm);
}

Test(openmp_idle, two_threads_beside_busy_cpus_look_briefly_then_sleep,
     .timeout = 60) {
  cpu_set_t s;
  cr_assert_eq(sched_getaffinity(0, sizeof s, &s), 0);
  /* one per CPU: the others' share then leaves the team none */
  const int nb = CPU_COUNT(&s);
  static pid_t pid[CPU_SETSIZE];
  for (int i = 0; i < nb; i++) {
    pid[i] = fork();
    cr_assert_geq(pid[i], 0);
    if (!pid[i]) { /* a burner: killed below, or with this test */
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() == 1)
        _exit(0);
      for (volatile unsigned long n = 0;; n++)
        ;
    }
  }
  double y, sm, naps;
  unsetenv("RP_OMP_IDLE");
  replay(2, NULL, 0, &y, &sm, &naps);
  for (int i = 0; i < nb; i++) {
    kill(pid[i], SIGKILL);
    waitpid(pid[i], NULL, 0);
  }
  cr_expect_eq(y, Y, "%d burners beside: policy %.0f", nb, y);
  cr_expect_leq(sm, RP_OMP_SHORT_LOOKS, "a thread looked %.0f times in a row",
                sm);
}
