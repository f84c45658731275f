/* Where the openmp backend's team runs (issue 31): under OpenMP binding
 * after a bound OpenMP region, the team follows OpenMP's places (two
 * independent CPU-consuming host tasks on a 2-thread exec run at once on
 * two distinct CPUs), never the calling thread's one-place mask; the
 * caller's mask is the same before and after; unbound, nothing is pinned
 * and the team's threads get the process's CPU set; with fewer CPUs than
 * threads (taskset -c 0) the replay works and the notice says so once.
 *
 * OpenMP reads OMP_PROC_BIND / OMP_PLACES when the process starts, so
 * every case runs in a child: this executable re-executed with the
 * environment (and CPU affinity, for taskset) of the case and
 * RP_BIND_CASE set; main() then runs the scenario instead of Criterion
 * and prints what it saw, which the test case checks. One Criterion
 * worker (main sets it) and RUN_SERIAL (tests/backends/openmp.cmake):
 * placement needs the machine to itself. */
#include <criterion/criterion.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "util.h"

/* ---- the child: a scenario ---- */

typedef struct probe {
  _Atomic int started;
  int want;             /* started count that means both have */
  int cpu0[2], cpu1[2]; /* CPU at the start and the end of each task */
  int ncpu[2];          /* CPUs in its thread's mask */
  int alone[2];         /* waited 3 s for the other task: not concurrent */
} probe;

typedef struct targ {
  probe *p;
  int i;
} targ;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Consumes CPU until the other task has started too (at most 3 s), then
 * a little more, recording where it ran. */
static void burn(void *u, void *const *ptr) {
  targ *a = u;
  probe *p = a->p;
  cpu_set_t m;
  p->cpu0[a->i] = sched_getcpu();
  p->ncpu[a->i] =
      pthread_getaffinity_np(pthread_self(), sizeof m, &m) ? -1 : CPU_COUNT(&m);
  atomic_fetch_add(&p->started, 1);
  double t0 = now_s();
  volatile uint64_t acc = 0;
  while (atomic_load(&p->started) < p->want)
    if (now_s() - t0 > 3) {
      p->alone[a->i] = 1;
      break;
    }
  for (double t1 = now_s(); now_s() - t1 < 0.01;)
    for (int k = 0; k < 1000; k++)
      acc += (uint64_t)k;
  p->cpu1[a->i] = sched_getcpu();
  ((uint64_t *)ptr[0])[a->i * 8] += 1 + (acc & 0);
}

/* Prints "key value" lines; returns the exit status. */
static int scenario(const char *how) {
  static uint64_t X[16];
  probe p;
  targ ta[2] = {{&p, 0}, {&p, 1}};
  cpu_set_t before, now;
  if (strstr(how, "pin0")) {
    CPU_ZERO(&before);
    CPU_SET(0, &before);
    if (pthread_setaffinity_np(pthread_self(), sizeof before, &before))
      return 3;
  }
  if (strstr(how, "region")) { /* binds this thread under OMP_PROC_BIND */
    volatile int sum = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp atomic
      sum += omp_get_thread_num();
    }
    (void)sum;
  }
  if (strstr(how, "widen")) { /* the user frees it again: every CPU */
    CPU_ZERO(&before);
    for (int c = 0; c < 2; c++)
      CPU_SET(c, &before);
    if (pthread_setaffinity_np(pthread_self(), sizeof before, &before))
      return 3;
  }
  pthread_getaffinity_np(pthread_self(), sizeof before, &before);
  printf("env OMP_PROC_BIND=%s OMP_PLACES=%s\n",
         getenv("OMP_PROC_BIND") ? getenv("OMP_PROC_BIND") : "(unset)",
         getenv("OMP_PLACES") ? getenv("OMP_PLACES") : "(unset)");
  rp_graph *g;
  rp_buf xb;
  if (rp_graph_create(&g, 0) || rp_buffer_register(g, "X", X, sizeof X, &xb))
    return 4;
  for (int i = 0; i < 2; i++) {
    rp_access a = {rp_bytes(xb, 64 * (uint64_t)i, 64), RP_INOUT};
    if (rp_record_host(g, burn, &ta[i], &a, 1, NULL, NULL))
      return 4;
  }
  if (rp_graph_end(g))
    return 4;
  const rp_backend *be = NULL;
  rp_backend_find("openmp", &be);
  int cores[2] = {1, 0};
  const char *modes[2] = {"parallel", "owner"};
  int mask_changed = 0;
  for (int m = 0; m < 2; m++) {
    rp_exec_opts o;
    rp_exec_opts_init(&o);
    o.nthreads = 2;
    o.mode = modes[m];
    if (strstr(how, "cores")) {
      o.cores = cores;
      o.ncores = 2;
    }
    rp_exec *x = NULL;
    if (rp_exec_create(&x, g, be, &o)) {
      printf("error %s\n", rp_last_error());
      return 5;
    }
    printf("notice_create %s\n", rp_exec_notice(x)[0] ? "yes" : "no");
    printf("notice_text %s\n", rp_exec_notice(x));
    /* owner mode: the first launch is the stealing engine's, the next
     * the owner engine's */
    for (int launch = 0; launch < 3; launch++) {
      memset(&p, 0, sizeof p);
      p.want = 2;
      if (rp_exec_run(x, 1)) {
        printf("error %s\n", rp_exec_error(x));
        return 6;
      }
      printf("run %s %d cpus %d %d %d %d ncpu %d %d alone %d %d\n", modes[m],
             launch, p.cpu0[0], p.cpu0[1], p.cpu1[0], p.cpu1[1], p.ncpu[0],
             p.ncpu[1], p.alone[0], p.alone[1]);
      printf("notice_run %s\n", rp_exec_notice(x)[0] ? "yes" : "no");
      pthread_getaffinity_np(pthread_self(), sizeof now, &now);
      mask_changed |= !CPU_EQUAL(&before, &now);
    }
    rp_exec_destroy(x);
    pthread_getaffinity_np(pthread_self(), sizeof now, &now);
    mask_changed |= !CPU_EQUAL(&before, &now);
  }
  printf("caller_mask %s %d\n", mask_changed ? "changed" : "same",
         CPU_COUNT(&before));
  printf("X %llu %llu\n", (unsigned long long)X[0], (unsigned long long)X[8]);
  rp_graph_destroy(g);
  return 0;
}

/* ---- the parent: run a case and check what it printed ---- */

typedef struct seen {
  char out[16384];
  int status;
} seen;

/* Runs this executable as case how, with env (NAME=VALUE, NULL-ended)
 * and, when cpu0 only, on CPU 0 only (taskset -c 0). */
static void run_case(seen *s, const char *how, const char *const *env,
                     int cpu0_only) {
  int fd[2];
  cr_assert_eq(pipe(fd), 0);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (!pid) {
    dup2(fd[1], 1);
    dup2(fd[1], 2);
    close(fd[0]);
    unsetenv("BXFI_MAP"); /* else the child takes itself for Criterion's
                             sandboxed worker */
    unsetenv("OMP_PROC_BIND");
    unsetenv("OMP_PLACES");
    unsetenv("OMP_NUM_THREADS");
    for (int i = 0; env[i]; i++)
      putenv((char *)env[i]);
    setenv("RP_BIND_CASE", how, 1);
    if (cpu0_only) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(0, &one);
      sched_setaffinity(0, sizeof one, &one);
    }
    execl("/proc/self/exe", "test_openmp_binding", (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  size_t n = 0;
  ssize_t r;
  while (n + 1 < sizeof s->out &&
         (r = read(fd[0], s->out + n, sizeof s->out - 1 - n)) > 0)
    n += (size_t)r;
  s->out[n] = 0;
  close(fd[0]);
  cr_assert_eq(waitpid(pid, &s->status, 0), pid);
  cr_assert(WIFEXITED(s->status) && WEXITSTATUS(s->status) == 0,
            "case %s failed (status %d):\n%s", how, s->status, s->out);
}

static int count_lines(const seen *s, const char *prefix) {
  int k = 0;
  for (const char *l = s->out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
    k += !strncmp(l, prefix, strlen(prefix));
  return k;
}

/* Every run: both tasks at once; distinct: on two distinct CPUs, each
 * staying on its CPU (pinned), else each thread's mask of ncpu CPUs. */
static void check_runs(const seen *s, int distinct, int ncpu) {
  cr_assert_eq(count_lines(s, "run "), 6, "%s", s->out);
  for (const char *l = strstr(s->out, "run "); l; l = strstr(l + 1, "\nrun ")) {
    if (*l == '\n')
      l++;
    char mode[16];
    int launch, c0, c1, e0, e1, n0, n1, a0, a1;
    cr_assert_eq(sscanf(l,
                        "run %15s %d cpus %d %d %d %d ncpu %d %d alone "
                        "%d %d",
                        mode, &launch, &c0, &c1, &e0, &e1, &n0, &n1, &a0, &a1),
                 10, "%s", l);
    cr_assert(!a0 && !a1,
              "%s launch %d: the two tasks did not run at "
              "once:\n%s",
              mode, launch, s->out);
    if (distinct) {
      cr_assert_neq(c0, c1, "%s launch %d: both tasks on CPU %d:\n%s", mode,
                    launch, c0, s->out);
      cr_assert(c0 == e0 && c1 == e1,
                "%s launch %d: a pinned task moved:"
                "\n%s",
                mode, launch, s->out);
    }
    if (ncpu) {
      cr_assert(n0 == ncpu && n1 == ncpu,
                "%s launch %d: masks of %d and "
                "%d CPUs, not %d:\n%s",
                mode, launch, n0, n1, ncpu, s->out);
    }
  }
  cr_assert(strstr(s->out, "X 6 6"), "%s", s->out);
}

static int process_cpus(void) {
  cpu_set_t m;
  return sched_getaffinity(0, sizeof m, &m) ? 0 : CPU_COUNT(&m);
}

#define NEED_TWO_CPUS()                                                        \
  do {                                                                         \
    if (process_cpus() < 2)                                                    \
      cr_skip_test("needs 2 CPUs, the process has %d", process_cpus());        \
  } while (0)

/* Runs case how under env (not on CPU 0 only) and checks its runs (see
 * check_runs) and that the caller's mask was the same throughout: the
 * line "caller_mask same <CPUs>" starts with mask. */
static const seen *expect(const char *how, const char *const *env,
                          const char *mask, int distinct, int ncpu) {
  static seen s;
  run_case(&s, how, env, 0);
  cr_assert(strstr(s.out, mask), "case %s: no \"%s\":\n%s", how, mask, s.out);
  check_runs(&s, distinct, ncpu);
  return &s;
}

Test(openmp_binding, proc_bind_true_after_a_bound_region, .timeout = 60) {
  NEED_TWO_CPUS();
  const char *env[] = {"OMP_PROC_BIND=true", NULL};
  /* the region bound the caller to one CPU: the old source */
  const seen *s = expect("region", env, "caller_mask same 1", 1, 1);
  cr_assert(strstr(s->out, "notice_create no"), "%s", s->out);
  /* a caller free to use both CPUs is pinned for each launch only */
  expect("region widen", env, "caller_mask same 2", 1, 1);
}

/* The other policies, after a bound region: close over cores; spread;
 * primary (every thread in the caller's place, which has one CPU: the
 * team goes close rather than pile onto it); one place of every CPU
 * (OMP_PLACES={0:N}: both threads in it, each on a CPU of its own). */
Test(openmp_binding, every_policy_after_a_bound_region, .timeout = 60) {
  NEED_TWO_CPUS();
  static char one_place[64];
  snprintf(one_place, sizeof one_place, "OMP_PLACES={0:%d}", process_cpus());
  const char *envs[][3] = {
      {"OMP_PROC_BIND=close", "OMP_PLACES=cores", NULL},
      {"OMP_PROC_BIND=spread", NULL, NULL},
      {"OMP_PROC_BIND=primary", "OMP_PLACES=threads", NULL},
      {"OMP_PROC_BIND=close", one_place, NULL}};
  for (unsigned i = 0; i < sizeof envs / sizeof *envs; i++)
    expect("region", envs[i], "caller_mask same", 1, i == 0 ? 0 : 1);
}

Test(openmp_binding, caller_pinned_to_cpu0_by_the_user, .timeout = 60) {
  NEED_TWO_CPUS();
  const char *env[] = {"OMP_PROC_BIND=true", NULL};
  expect("pin0", env, "caller_mask same 1", 1, 1);
}

/* Unbound: nothing pinned, and the team's thread does not inherit the
 * caller's one-CPU mask: every task's thread may use both CPUs but the
 * caller's, which keeps the user's. */
Test(openmp_binding, unbound_team_is_not_pinned, .timeout = 60) {
  NEED_TWO_CPUS();
  const char *env[] = {"OMP_PROC_BIND=false", NULL};
  expect("region", env, "caller_mask same", 0, process_cpus());
  const char *none[] = {NULL};
  const seen *u = expect("pin0", none, "caller_mask same 1", 0, 0);
  for (const char *l = strstr(u->out, "run "); l; l = strstr(l + 1, "\nrun ")) {
    int n0, n1;
    cr_assert_eq(sscanf(strstr(l, "ncpu"), "ncpu %d %d", &n0, &n1), 2);
    /* one task ran on the caller (1 CPU), the other on the team's thread
     * (the process's CPUs) */
    cr_assert((n0 == 1 && n1 == process_cpus()) ||
                  (n1 == 1 && n0 == process_cpus()),
              "%s", u->out);
  }
  cr_assert(strstr(u->out, "notice_create no"), "%s", u->out);
}

/* The options' cores (1, 0): the caller, thread 0, is pinned to core 1
 * for each launch only, whether it could use both CPUs (unbound) or only
 * CPU 0 (OpenMP's runtime bound the main thread to its first place when
 * it started). */
Test(openmp_binding, given_cores_leave_the_caller_as_it_was, .timeout = 60) {
  NEED_TWO_CPUS();
  const char *none[] = {NULL};
  expect("cores", none, "caller_mask same 2", 1, 1);
  const char *env[] = {"OMP_PROC_BIND=true", NULL};
  expect("cores", env, "caller_mask same 1", 1, 1);
}

/* taskset -c 0: two threads on one CPU work, and the notice says so once,
 * at rp_exec_create (never again at run), bound or not. */
Test(openmp_binding, one_cpu_for_two_threads_works_and_says_so, .timeout = 60) {
  static seen s;
  const char *env[] = {"OMP_PROC_BIND=true", NULL};
  const char *none[] = {NULL};
  for (int bound = 0; bound < 2; bound++) {
    run_case(&s, bound ? "region" : "", bound ? env : none, 1);
    check_runs(&s, 0, 1);
    cr_assert(strstr(s.out, "caller_mask same 1"), "%s", s.out);
    cr_assert_eq(count_lines(&s, "notice_create yes"), 2, "%s", s.out);
    cr_assert_eq(count_lines(&s, "notice_run no"), 6, "%s", s.out);
    cr_assert(strstr(s.out, "notice_text openmp: 2 threads on 1 CPU ("), "%s",
              s.out);
  }
}

int main(int argc, char *argv[]) {
  const char *how = getenv("RP_BIND_CASE");
  if (how)
    return scenario(how);
  struct criterion_test_set *tests = criterion_initialize();
  int result = 0;
  if (criterion_handle_args(argc, argv, true)) {
    criterion_options.jobs = 1; /* placement: one case at a time */
    result = !criterion_run_all_tests(tests);
  }
  criterion_finalize(tests);
  return result;
}
