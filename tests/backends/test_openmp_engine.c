/* Tests of the openmp backend's stealing engine: a held-up worker, the
 * corner cases of its queues (single task, chains, fan-out, repeated and
 * rebound runs, failures, run_until) at 2 to 4 threads, results against
 * the sequential reference replay. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "util.h"

static const rp_backend *omp_be(void) {
  const rp_backend *be = NULL;
  cr_assert_eq(rp_backend_find("openmp", &be), RP_OK);
  return be;
}

static rp_exec *mk(const rp_graph *g, int nth) {
  rp_exec_opts o;
  rp_exec *x = NULL;
  rp_exec_opts_init(&o);
  o.nthreads = nth;
  rp_status s = rp_exec_create(&x, g, omp_be(), &o);
  cr_assert_eq(s, RP_OK, "exec_create: %s: %s", rp_status_name(s),
               x ? rp_exec_error(x) : rp_last_error());
  return x;
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* ---- one worker held up: P, then S (sleeps until every T has run, at
 * most 10 s) and N tasks T that P readies at the same time ---- */
#define HN 48
typedef struct held {
  pthread_t p_thread, s_thread, t_thread[HN];
  double s_start, s_end, t_end[HN];
  atomic_int ran, timed_out;
  int s_calls;
} held;

static void h_p(void *u, void *const *ptr) {
  held *h = u;
  h->p_thread = pthread_self();
  ((uint64_t *)ptr[0])[0]++;
}

/* A host task's pointers are its buffers' bases (here all X). */
static void h_s(void *u, void *const *ptr) {
  held *h = u;
  h->s_thread = pthread_self();
  h->s_start = now_us();
  h->s_calls++; /* replays of this launch so far */
  while (atomic_load(&h->ran) < HN * h->s_calls) {
    if (now_us() - h->s_start > 10e6) {
      atomic_store(&h->timed_out, 1);
      break;
    }
    usleep(100);
  }
  ((uint64_t *)ptr[1])[8 * (HN + 1)] += ((const uint64_t *)ptr[0])[0];
  h->s_end = now_us();
}

typedef struct tslot {
  held *h;
  int i;
} tslot;

static void h_t(void *u, void *const *ptr) {
  tslot *t = u;
  t->h->t_thread[t->i] = pthread_self();
  ((uint64_t *)ptr[1])[8 * (t->i + 1)] +=
      ((const uint64_t *)ptr[0])[0] + (uint64_t)t->i;
  t->h->t_end[t->i] = now_us();
  atomic_fetch_add(&t->h->ran, 1);
}

Test(openmp_engine, held_up_worker_leaves_its_ready_work, .timeout = 60) {
  /* X: line 0 written by P, read by S and every T; line 1 + i written by
   * T_i; line HN + 1 by S. */
  static uint64_t X[(HN + 2) * 8];
  held h;
  tslot ts[HN];
  rp_graph *g;
  rp_buf xb;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "X", X, sizeof X, &xb));
  rp_access a0 = {rp_bytes(xb, 0, 64), RP_INOUT};
  TU_OK(g, rp_record_host(g, h_p, &h, &a0, 1, NULL, NULL));
  rp_access as[2] = {{rp_bytes(xb, 0, 64), RP_IN},
                     {rp_bytes(xb, 64 * (HN + 1), 64), RP_INOUT}};
  TU_OK(g, rp_record_host(g, h_s, &h, as, 2, NULL, NULL));
  for (int i = 0; i < HN; i++) {
    ts[i].h = &h;
    ts[i].i = i;
    rp_access at[2] = {{rp_bytes(xb, 0, 64), RP_IN},
                       {rp_bytes(xb, 64 * (uint64_t)(i + 1), 64), RP_INOUT}};
    TU_OK(g, rp_record_host(g, h_t, &ts[i], at, 2, NULL, NULL));
  }
  TU_OK(g, rp_graph_end(g));
  for (int nth = 2; nth <= 3; nth++) {
    rp_exec *x = mk(g, nth);
    for (int launch = 0; launch < 2; launch++) {
      /* one replay per launch, then two in one launch: the second starts
       * from the thread that completed the first */
      for (unsigned reps = 1; reps <= 2; reps++) {
        memset(&h, 0, sizeof h);
        memset(X, 0, sizeof X);
        cr_assert_eq(rp_exec_run(x, reps), RP_OK, "%s", rp_exec_error(x));
        cr_assert_eq(X[0], reps);
        /* a ready successor runs on the thread that made it ready */
        cr_assert(pthread_equal(h.p_thread, h.s_thread),
                  "%d threads: S did not continue P's thread", nth);
        /* the others ran P's pushed work while S held its thread */
        cr_assert(!atomic_load(&h.timed_out),
                  "%d threads: only %d of %d ready tasks ran while one "
                  "worker was held up",
                  nth, atomic_load(&h.ran), HN * h.s_calls);
        for (int i = 0; i < HN; i++) {
          cr_assert(!pthread_equal(h.t_thread[i], h.s_thread),
                    "%d threads: T%d waited for the held-up worker", nth, i);
          cr_assert(h.t_end[i] <= h.s_end);
        }
        cr_assert_eq(X[8 * (HN + 1)], reps == 1 ? 1 : 1 + 2);
      }
    }
    rp_exec_destroy(x);
  }
  rp_graph_destroy(g);
}

/* ---- corner cases against the reference ---- */

typedef void (*build_fn)(rp_graph *g, rp_buf b, unsigned n);
typedef struct lines {
  uint64_t *mem;
  unsigned n; /* lines */
} lines;

/* x = 3 x + 1 + j + salt on a line (a cache line of 8 uint64); user:
 * line << 16 | salt. */
static void h_line(void *u, void *const *ptr) {
  uint64_t k = (uint64_t)(uintptr_t)u & 0xffff;
  uint64_t *p = (uint64_t *)ptr[0] + 8 * ((uint64_t)(uintptr_t)u >> 16);
  for (int j = 0; j < 8; j++)
    p[j] = p[j] * 3u + 1u + (uint64_t)j + k;
}

/* Line d += the sum of lines [lo, hi). */
typedef struct span {
  unsigned lo, hi, d;
} span;
static void h_sum(void *u, void *const *ptr) {
  const span *s = u;
  const uint64_t *in = ptr[0];
  uint64_t *d = (uint64_t *)ptr[1] + 8 * s->d;
  for (unsigned l = s->lo; l < s->hi; l++)
    for (int j = 0; j < 8; j++)
      d[j] += in[8 * l + j];
}

static span *g_span;

static void record_line(rp_graph *g, rp_buf b, unsigned line, unsigned salt) {
  rp_access a = {rp_bytes(b, 64 * (uint64_t)line, 64), RP_INOUT};
  TU_OK(g, rp_record_host(g, h_line,
                          (void *)(uintptr_t)((uint64_t)line << 16 | salt), &a,
                          1, NULL, NULL));
}

static void build_single(rp_graph *g, rp_buf b, unsigned n) {
  (void)n;
  record_line(g, b, 0, 1);
}

static void build_chain(rp_graph *g, rp_buf b, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    record_line(g, b, 0, i);
}

/* One line, 3 000 tasks: one long chain. */
static void build_chain3000(rp_graph *g, rp_buf b, unsigned n) {
  (void)n;
  build_chain(g, b, 3000);
}

/* One root, n - 2 independent tasks it readies, one task reading them
 * all. */
static void build_fan(rp_graph *g, rp_buf b, unsigned n) {
  free(g_span);
  g_span = malloc(n * sizeof *g_span);
  record_line(g, b, 0, 5);
  for (unsigned i = 1; i + 1 < n; i++) {
    g_span[i] = (span){0, 1, i};
    rp_access a[2] = {{rp_bytes(b, 0, 64), RP_IN},
                      {rp_bytes(b, 64 * (uint64_t)i, 64), RP_INOUT}};
    TU_OK(g, rp_record_host(g, h_sum, &g_span[i], a, 2, NULL, NULL));
  }
  g_span[0] = (span){1, n - 1, n - 1};
  rp_access a[2] = {{rp_bytes(b, 64, 64 * (uint64_t)(n - 2)), RP_IN},
                    {rp_bytes(b, 64 * (uint64_t)(n - 1), 64), RP_INOUT}};
  TU_OK(g, rp_record_host(g, h_sum, &g_span[0], a, 2, NULL, NULL));
}

/* n independent tasks (n roots). */
static void build_indep(rp_graph *g, rp_buf b, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    record_line(g, b, i, i);
}

/* A w x w wavefront: line (i, j) after (i - 1, j) and (i, j - 1). */
static void build_wave(rp_graph *g, rp_buf b, unsigned n) {
  unsigned w = 1;
  while ((w + 1) * (w + 1) <= n)
    w++;
  for (unsigned i = 0; i < w; i++)
    for (unsigned j = 0; j < w; j++) {
      unsigned l = i * w + j;
      rp_access a[3];
      unsigned na = 0;
      a[na++] = (rp_access){rp_bytes(b, 64 * (uint64_t)l, 64), RP_INOUT};
      if (i)
        a[na++] = (rp_access){rp_bytes(b, 64 * (uint64_t)(l - w), 64), RP_IN};
      if (j)
        a[na++] = (rp_access){rp_bytes(b, 64 * (uint64_t)(l - 1), 64), RP_IN};
      TU_OK(g, rp_record_host(g, h_line,
                              (void *)(uintptr_t)((uint64_t)l << 16 | 3), a, na,
                              NULL, NULL));
    }
}

static void reset_lines(uint64_t *m, unsigned n) {
  for (unsigned i = 0; i < 8 * n; i++)
    m[i] = i * 2654435761u;
}

/* The shape built over n lines of m (buffer "L", *b), ended. */
static rp_graph *lines_graph(build_fn build, uint64_t *m, unsigned n,
                             rp_buf *b) {
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "L", m, 64 * (uint64_t)n, b));
  build(g, *b, n);
  TU_OK(g, rp_graph_end(g));
  return g;
}

/* The shape built over n lines, replayed as launches of reps[] replays by
 * the reference and by openmp at 2, 3 and 4 threads: same bytes. */
static void same_as_reference(build_fn build, unsigned n, const unsigned *reps,
                              unsigned nreps) {
  uint64_t *m = aligned_alloc(64, 64 * (size_t)n);
  uint64_t *ref = malloc(64 * (size_t)n);
  rp_buf b;
  rp_graph *g = lines_graph(build, m, n, &b);
  unsigned total = 0;
  for (unsigned i = 0; i < nreps; i++)
    total += reps[i];
  reset_lines(m, n);
  cr_assert_eq(rp_replay_reference(g, total), RP_OK);
  memcpy(ref, m, 64 * (size_t)n);
  for (int nth = 2; nth <= 4; nth++) {
    reset_lines(m, n);
    rp_exec *x = mk(g, nth);
    for (unsigned i = 0; i < nreps; i++)
      cr_assert_eq(rp_exec_run(x, reps[i]), RP_OK, "%s", rp_exec_error(x));
    cr_assert(memcmp(ref, m, 64 * (size_t)n) == 0,
              "%u lines, %d threads: differs from the reference", n, nth);
    rp_exec_destroy(x);
  }
  rp_graph_destroy(g);
  free(m);
  free(ref);
}

Test(openmp_engine, single_task_many_launches, .timeout = 60) {
  static const unsigned reps[] = {1, 1, 2, 5, 1, 3, 0, 7, 1, 1, 1, 1, 9};
  same_as_reference(build_single, 1, reps, 13);
}

Test(openmp_engine, chains, .timeout = 60) {
  static const unsigned reps[] = {1, 4};
  same_as_reference(build_chain, 1, reps, 2);
  uint64_t *m = aligned_alloc(64, 64);
  rp_buf b;
  rp_graph *g = lines_graph(build_chain3000, m, 1, &b);
  uint64_t want[8];
  reset_lines(m, 1);
  cr_assert_eq(rp_replay_reference(g, 3), RP_OK);
  memcpy(want, m, 64);
  for (int nth = 2; nth <= 4; nth++) {
    reset_lines(m, 1);
    rp_exec *x = mk(g, nth);
    cr_assert_eq(rp_exec_run(x, 2), RP_OK);
    cr_assert_eq(rp_exec_run(x, 1), RP_OK);
    cr_assert(memcmp(want, m, 64) == 0, "%d threads", nth);
    rp_exec_destroy(x);
  }
  rp_graph_destroy(g);
  free(m);
}

Test(openmp_engine, wide_fan_out_and_in, .timeout = 60) {
  static const unsigned reps[] = {1, 3, 2};
  same_as_reference(build_fan, 3, reps, 3);
  same_as_reference(build_fan, 2000, reps, 3);
}

Test(openmp_engine, many_roots_and_wavefront, .timeout = 60) {
  static const unsigned reps[] = {2, 1, 5};
  same_as_reference(build_indep, 5000, reps, 3);
  same_as_reference(build_wave, 40 * 40, reps, 3);
}

/* ---- random graphs, repeated launches of varied lengths ---- */
Test(openmp_engine, random_graphs_repeated_runs, .timeout = 120) {
  static const unsigned reps[] = {1, 2, 1, 4, 3};
  for (uint64_t seed = 1; seed <= 12; seed++) {
    tu_random r;
    cr_assert_eq(tu_random_graph(&r, seed, 3, 512, 60, 1 + seed % 3, 0, 0), 0);
    TU_OK(r.g, rp_graph_end(r.g));
    size_t n1, n2;
    tu_random_reset(&r, seed);
    cr_assert_eq(rp_replay_reference(r.g, 11), RP_OK);
    unsigned char *ref = tu_snapshot(r.g, &n1);
    for (int nth = 2; nth <= 4; nth++) {
      tu_random_reset(&r, seed);
      rp_exec *x = mk(r.g, nth);
      for (unsigned i = 0; i < 5; i++)
        cr_assert_eq(rp_exec_run(x, reps[i]), RP_OK, "%s", rp_exec_error(x));
      unsigned char *got = tu_snapshot(r.g, &n2);
      cr_assert(n1 == n2 && memcmp(ref, got, n1) == 0,
                "seed %llu, %d threads: differs from the reference",
                (unsigned long long)seed, nth);
      free(got);
      rp_exec_destroy(x);
    }
    free(ref);
    tu_random_free(&r);
  }
}

/* ---- rebind between runs: the next runs use the new arrays ---- */
Test(openmp_engine, rebind_between_runs, .timeout = 60) {
  uint64_t *a0 = aligned_alloc(64, 64 * 64), *a1 = aligned_alloc(64, 64 * 64);
  uint64_t *r0 = aligned_alloc(64, 64 * 64), *r1 = aligned_alloc(64, 64 * 64);
  rp_buf b, b1;
  rp_graph *g = lines_graph(build_wave, a0, 64, &b);
  /* the reference: 2 replays on a0, then 3 on a1 */
  reset_lines(a0, 64);
  reset_lines(a1, 64);
  for (unsigned i = 0; i < 64 * 8; i++)
    a1[i] ^= 0x5555;
  memcpy(r0, a0, 64 * 64);
  memcpy(r1, a1, 64 * 64);
  cr_assert_eq(rp_replay_reference(g, 2), RP_OK);
  uint64_t want0[64 * 8], want1[64 * 8];
  memcpy(want0, a0, sizeof want0);
  memcpy(a0, r0, 64 * 64);
  rp_graph *g1 = lines_graph(build_wave, a1, 64, &b1);
  cr_assert_eq(rp_replay_reference(g1, 3), RP_OK);
  memcpy(want1, a1, sizeof want1);
  rp_graph_destroy(g1);
  for (int nth = 2; nth <= 3; nth++) {
    memcpy(a0, r0, 64 * 64);
    memcpy(a1, r1, 64 * 64);
    rp_exec *x = mk(g, nth);
    cr_assert_eq(rp_exec_run(x, 1), RP_OK);
    cr_assert_eq(rp_exec_run(x, 1), RP_OK);
    cr_assert_eq(rp_exec_rebind(x, b, a1, 64 * 64), RP_OK, "%s",
                 rp_exec_error(x));
    cr_assert_eq(rp_exec_run(x, 3), RP_OK);
    cr_assert(memcmp(want0, a0, sizeof want0) == 0, "%d threads", nth);
    cr_assert(memcmp(want1, a1, sizeof want1) == 0, "%d threads", nth);
    cr_assert_eq(rp_exec_rebind(x, b, a0, 64 * 64), RP_OK);
    rp_exec_destroy(x);
  }
  rp_graph_destroy(g);
  free(a0);
  free(a1);
  free(r0);
  free(r1);
}

/* ---- a failure in replay 3 of 10: that replay stops, no later replay
 * runs, the exec runs again afterwards ---- */
typedef struct failer {
  atomic_int calls, after_calls;
  int fail_at;
} failer;

static void h_fail(void *u, void *const *ptr) {
  failer *f = u;
  int c = atomic_fetch_add(&f->calls, 1) + 1;
  if (c == f->fail_at) {
    rp_task_fail(9, "gave up at call %d", c);
    return;
  }
  ((uint64_t *)ptr[0])[0]++;
}

static void h_after(void *u, void *const *ptr) {
  failer *f = u;
  atomic_fetch_add(&f->after_calls, 1);
  ((uint64_t *)ptr[1])[8] += ((const uint64_t *)ptr[0])[0];
}

Test(openmp_engine, failure_stops_the_launch, .timeout = 60) {
  static uint64_t X[16 * 8];
  failer f;
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "X", X, sizeof X, &b));
  rp_access a = {rp_bytes(b, 0, 64), RP_INOUT};
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "step");
  TU_OK(g, rp_record_host(g, h_fail, &f, &a, 1, &o, NULL));
  /* independent work beside it, and work after it */
  for (unsigned i = 2; i < 14; i++)
    record_line(g, b, i, i);
  rp_access aa[2] = {{rp_bytes(b, 0, 64), RP_IN},
                     {rp_bytes(b, 64, 64), RP_INOUT}};
  TU_OK(g, rp_record_host(g, h_after, &f, aa, 2, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  for (int nth = 2; nth <= 4; nth++) {
    memset(X, 0, sizeof X);
    memset(&f, 0, sizeof f);
    f.fail_at = 3;
    rp_exec *x = mk(g, nth);
    cr_assert_eq(rp_exec_run(x, 10), RP_ETASK);
    const char *e = rp_exec_error(x);
    cr_assert(strstr(e, "\"step\"") && strstr(e, "replay 3") &&
                  strstr(e, "code 9"),
              "%d threads: %s", nth, e);
    /* replays 1 and 2 whole, none after the third */
    cr_assert_eq(X[0], 2);
    cr_assert_eq(atomic_load(&f.calls), 3, "%d threads", nth);
    cr_assert_eq(atomic_load(&f.after_calls), 2, "%d threads", nth);
    cr_assert_eq(X[8], 1 + 2);
    cr_assert_eq(rp_exec_run(x, 2), RP_OK, "%s", rp_exec_error(x));
    cr_assert_eq(X[0], 4);
    cr_assert_eq(atomic_load(&f.after_calls), 4);
    rp_exec_destroy(x);
  }
  rp_graph_destroy(g);
}

/* ---- run_until: stops at the replay where the value crosses ---- */
static void h_count(void *u, void *const *ptr) {
  (void)u;
  ((int64_t *)ptr[0])[0]++;
}

Test(openmp_engine, run_until_stops_where_the_value_crosses, .timeout = 60) {
  static int64_t V[8];
  static uint64_t L[8 * 8];
  rp_graph *g;
  rp_buf v, l;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "V", V, sizeof V, &v));
  TU_OK(g, rp_buffer_register(g, "L", L, sizeof L, &l));
  for (unsigned i = 0; i < 8; i++)
    record_line(g, l, i, i);
  rp_access a = {rp_whole(v), RP_INOUT};
  TU_OK(g, rp_record_host(g, h_count, NULL, &a, 1, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  rp_until u = {v, 0, RP_UNTIL_I64, RP_UNTIL_GE, 7.0};
  for (int nth = 2; nth <= 3; nth++) {
    for (unsigned every = 1; every <= 3; every++) {
      memset(V, 0, sizeof V);
      rp_exec *x = mk(g, nth);
      unsigned done = 0;
      cr_assert_eq(rp_exec_run_until(x, &u, 100, every, &done), RP_OK, "%s",
                   rp_exec_error(x));
      unsigned want = (7 + every - 1) / every * every;
      cr_assert_eq(done, want, "%d threads, every %u", nth, every);
      cr_assert_eq(V[0], (int64_t)want);
      /* not reached: every replay runs */
      rp_until far = u;
      far.threshold = 1e9;
      cr_assert_eq(rp_exec_run_until(x, &far, 5, every, &done), RP_OK);
      cr_assert_eq(done, 5);
      cr_assert_eq(V[0], (int64_t)want + 5);
      rp_exec_destroy(x);
    }
  }
  rp_graph_destroy(g);
}
