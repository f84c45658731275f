/* Per-task overhead of the openmp backend against a sequential loop, GCC
 * OpenMP tasks with depend clauses, oneTBB's flow graph, the anchors'
 * lean C engine and StarPU 1.3, measured in one run.
 * Shapes (from ../shared/anchors/cpu): chain of 10 000 dependent tiny
 * tasks, 10 000 independent ones, a 64 x 64 blocked wavefront (block (i,j)
 * after (i-1,j) and (i,j-1)), a binary reduction tree of 8 191 tasks
 * (a node after its two children), a tiny and a real Jacobi DAG of 16 row
 * blocks x (copy, stencil) x JAC_ITERS (1000) iterations; and the
 * wavefront and the tree with heavy tasks (wavefront_heavy, tree_heavy:
 * each task a dependent chain of multiply-adds on its line, calibrated to
 * BENCH_TASK_US, default 19 µs). Every task of the line shapes touches one
 * 64-byte line. reprise replays each shape recorded as host tasks
 * ("reprise") and as 1-point kernels on device 0 with automatic coherence
 * ("reprise-kernels"); the Jacobi DAGs also one iteration recorded and
 * replayed JAC_ITERS times ("reprise/1it"). The peers: "tbb-flow" (the
 * recorded graph as a oneTBB flow graph, when TBB was found) and "lean"
 * (the anchors' dag_replay_cont over the recorded graph, when built with
 * RP_ANCHORS_CPU). Usage:
 *   OMP_PROC_BIND=true bench_omp [chain] [indep] [wavefront] [tree]
 *       [jacobi_tiny] [jacobi_real] [wavefront_heavy] [tree_heavy] [launch]
 * (no shape: the first six; "launch": the cost of one launch + wait of a
 * one-task graph). BENCH_THREADS ("1,2"), BENCH_REPS (7),
 * BENCH_REPS_REAL (5, real Jacobi and heavy shapes), BENCH_METHODS (comma
 * list), BENCH_MODES (more openmp modes, run as reprise-<mode>),
 * BENCH_PIN (1: reprise threads on cores 0..T-1), BENCH_BUSY=K (K busy
 * processes during the timed runs; each ends itself after BENCH_BUSY_S,
 * default 600 s), BENCH_VERBOSE=1 (the CPUs each method's tasks ran on,
 * "CPUS" lines), BENCH_SLOW=F (heavy shapes: the main thread, which
 * runs tasks in every method of several threads, runs each of its tasks
 * F times as long, as a thread sharing its core with another process
 * would; a pinned thread cannot leave that core). Every method runs in a process of its own
 * (tools/bench/bench_isolate.h; tbb-flow and starpu without
 * OMP_PROC_BIND / OMP_PLACES), the heavy tasks calibrated once, in the
 * parent (BENCH_BURN passes it on). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_isolate.h"
#include "peer.h"
#include "reprise.h"
#ifdef RP_HAVE_STARPU
#include <starpu.h>
#endif

enum { CHAIN, INDEP, WAVE, TREE, JTINY, JREAL, WAVEH, TREEH, NSHAPE };
static const char *shape_name[NSHAPE] = {
    "chain",       "indep",       "wavefront",       "tree",
    "jacobi_tiny", "jacobi_real", "wavefront_heavy", "tree_heavy"};
/* shapes of tasks touching one line */
#define LINES(k) ((k) <= TREE || (k) >= WAVEH)
#define HEAVY(k) ((k) == JREAL || (k) >= WAVEH)
#define WSIDE 64
#define RP_BENCH_MAXT 64
#define TREE_N 8191

typedef struct shape {
  int kind, N, K, iters, n, R;
  long blk, nline;
  uint64_t *buf;
  int32_t (*dep)[3]; /* line shapes, per task: own line, inputs or -1 */
  double *A, *B;
} shape;

/* ---- task bodies (not inlinable, as in the anchors) ---- */
static int JN, JR;
static long g_burn; /* heavy shapes: multiply-adds per element */
/* BENCH_SLOW: the main thread's heavy tasks take this many times as long
 * while a method of several threads runs (g_slow_on) */
static long g_slow = 1;
static int g_slow_on;
static _Thread_local int g_is_main;
__attribute__((noinline)) static void touch_line(uint64_t *p) {
  bench_cpu_note();
  if (g_burn) {
    for (int j = 0; j < 8; j++) {
      uint64_t x = p[j];
      for (long k = 0; k < g_burn; k++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
      p[j] = x;
    }
    /* a slowed main thread: the same chains again, F - 1 times, kept
     * from the optimiser (the results stay those of every other thread) */
    if (g_slow_on && g_is_main) {
      for (long r = 1; r < g_slow; r++)
        for (int j = 0; j < 8; j++) {
          uint64_t x = p[j];
          for (long k = 0; k < g_burn; k++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
          __asm__ volatile("" : : "r"(x));
        }
    }
    return;
  }
  for (int j = 0; j < 8; j++)
    p[j] = p[j] * 3u + 1u + (uint64_t)j;
}
__attribute__((noinline)) static void copy_blk(double *d, const double *s,
                                               long len) {
  memcpy(d, s, sizeof(double) * (size_t)len);
}
__attribute__((noinline)) static void
sten_line(double *d, const double *p, const double *c, const double *n) {
  if (!p)
    p = c;
  if (!n)
    n = c;
  for (int j = 0; j < 8; j++)
    d[j] = (p[j] + c[j] + n[j]) * (1.0 / 3.0);
}
/* 5-point stencil on R rows of an n-column grid; prev/next: neighbouring
 * blocks or NULL at the grid edge (boundary rows and columns fixed). */
__attribute__((noinline)) static void
sten_block(double *d, const double *p, const double *c, const double *nx) {
  const int n = JN, R = JR;
  for (int r = 0; r < R; r++) {
    const double *up =
        r > 0 ? c + (long)(r - 1) * n : (p ? p + (long)(R - 1) * n : NULL);
    const double *dn = r < R - 1 ? c + (long)(r + 1) * n : nx;
    if (!up || !dn)
      continue;
    const double *cc = c + (long)r * n;
    double *dd = d + (long)r * n;
    for (int j = 1; j < n - 1; j++)
      dd[j] = 0.25 * (up[j] + dn[j] + cc[j - 1] + cc[j + 1]);
  }
}

static double *jA(const shape *s, int i) {
  return i < 0 || i >= s->K ? NULL : s->A + s->blk * i;
}
static double *jB(const shape *s, int i) {
  return i < 0 || i >= s->K ? NULL : s->B + s->blk * i;
}
static void do_copy(const shape *s, int i) {
  bench_cpu_note();
  copy_blk(jB(s, i), jA(s, i), s->blk);
}
static void do_sten(const shape *s, int i) {
  bench_cpu_note();
  if (s->kind == JREAL)
    sten_block(jA(s, i), jB(s, i - 1), jB(s, i), jB(s, i + 1));
  else
    sten_line(jA(s, i), jB(s, i - 1), jB(s, i), jB(s, i + 1));
}

#define env_int bench_env_int

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void shape_init(shape *s, int kind) {
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->N = 10000;
  s->K = 16;
  s->iters = kind >= JTINY ? env_int("JAC_ITERS", 1000) : 1000;
  if (LINES(kind)) {
    const int wave = kind == WAVE || kind == WAVEH;
    const int tree = kind == TREE || kind == TREEH;
    s->nline = kind == CHAIN   ? 1
               : kind == INDEP ? s->N
               : wave          ? WSIDE * WSIDE
                               : TREE_N;
    if (wave)
      s->N = WSIDE * WSIDE;
    if (tree)
      s->N = TREE_N;
    s->dep = malloc(sizeof *s->dep * (size_t)s->N);
    for (int t = 0; t < s->N; t++) {
      int32_t *d = s->dep[t];
      d[0] = kind == CHAIN ? 0 : t;
      d[1] = d[2] = -1;
      if (wave) {
        d[1] = t >= WSIDE ? t - WSIDE : -1;
        d[2] = t % WSIDE ? t - 1 : -1;
      } else if (tree) {
        int v = TREE_N - 1 - t; /* children before parents */
        d[0] = v;
        d[1] = 2 * v + 1 < TREE_N ? 2 * v + 1 : -1;
        d[2] = 2 * v + 2 < TREE_N ? 2 * v + 2 : -1;
      }
    }
  }
  size_t bytes = 64 * (size_t)(s->nline ? s->nline : 1);
  if (kind == JTINY)
    s->blk = 8;
  if (kind == JREAL) {
    s->R = env_int("JAC_N", 1216) / s->K;
    s->n = s->R * s->K;
    JN = s->n;
    JR = s->R;
    s->blk = (long)s->R * s->n;
  }
  if (LINES(kind)) {
    s->buf = aligned_alloc(64, bytes);
  } else {
    s->A = aligned_alloc(64, sizeof(double) * (size_t)(s->blk * s->K));
    s->B = aligned_alloc(64, sizeof(double) * (size_t)(s->blk * s->K));
  }
}

static void shape_reset(shape *s) {
  if (LINES(s->kind)) {
    long len = 8L * s->nline;
    for (long j = 0; j < len; j++)
      s->buf[j] = (uint64_t)j;
    return;
  }
  long tot = s->blk * s->K;
  for (long j = 0; j < tot; j++)
    s->A[j] = (double)((j * 7919) % 1000) / 1000.0;
  if (s->kind == JREAL)
    for (int j = 0; j < s->n; j++)
      s->A[j] = 1.0;
  memcpy(s->B, s->A, sizeof(double) * (size_t)tot);
}

static uint64_t checksum(const shape *s) {
  uint64_t h = 1469598103934665603ull, v;
  long len = LINES(s->kind) ? 8L * s->nline : s->blk * s->K;
  for (long j = 0; j < len; j++) {
    if (LINES(s->kind))
      v = s->buf[j];
    else
      memcpy(&v, &s->A[j], 8);
    h = (h ^ v) * 1099511628211ull;
  }
  return h;
}

static long tasks_per_pass(const shape *s) {
  return LINES(s->kind) ? s->N : 2L * s->K * s->iters;
}

/* ---- method 1: plain sequential loop ---- */
static void seq_pass(shape *s, int passes) {
  for (int p = 0; p < passes; p++) {
    if (LINES(s->kind))
      for (int i = 0; i < s->N; i++)
        touch_line(s->buf + 8L * s->dep[i][0]);
    else
      for (int it = 0; it < s->iters; it++) {
        for (int i = 0; i < s->K; i++)
          do_copy(s, i);
        for (int i = 0; i < s->K; i++)
          do_sten(s, i);
      }
  }
}

/* ---- method 2: GCC OpenMP tasks with depend, created every pass ---- */
static int g_threads, g_tw;
static void omp_pass(shape *s, int passes) {
#pragma omp parallel num_threads(g_threads)
#pragma omp single
  for (int p = 0; p < passes; p++) {
    if (LINES(s->kind)) {
      for (int i = 0; i < s->N; i++) {
        const int32_t *d = s->dep[i];
        uint64_t *b = s->buf + 8L * d[0];
        uint64_t *x = d[1] >= 0 ? s->buf + 8L * d[1] : NULL;
        uint64_t *y = d[2] >= 0 ? s->buf + 8L * d[2] : NULL;
        (void)x, (void)y;
        if (!x && !y) {
#pragma omp task depend(inout : b[0]) firstprivate(b)
          touch_line(b);
        } else if (!y) {
#pragma omp task depend(inout : b[0]) depend(in : x[0]) firstprivate(b)
          touch_line(b);
        } else if (!x) {
#pragma omp task depend(inout : b[0]) depend(in : y[0]) firstprivate(b)
          touch_line(b);
        } else {
#pragma omp task depend(inout : b[0]) depend(in : x[0], y[0]) firstprivate(b)
          touch_line(b);
        }
      }
    } else {
      for (int it = 0; it < s->iters; it++) {
        for (int i = 0; i < s->K; i++) {
          double *a = jA(s, i), *b = jB(s, i);
          (void)a, (void)b; /* GCC 12 does not count depend() as a use */
#pragma omp task depend(in : a[0]) depend(out : b[0]) firstprivate(i)
          do_copy(s, i);
        }
        for (int i = 0; i < s->K; i++) {
          double *a = jA(s, i), *b0 = jB(s, i);
          double *bm = i > 0 ? jB(s, i - 1) : b0;
          double *bp = i + 1 < s->K ? jB(s, i + 1) : b0;
          (void)a, (void)bm, (void)bp;
#pragma omp task depend(in                                                     \
                        : bm[0], b0[0], bp[0]) depend(out                      \
                                                      : a[0]) firstprivate(i)
          do_sten(s, i);
        }
        if (g_tw) {
#pragma omp taskwait
        }
      }
    }
#pragma omp taskwait
  }
}

/* ---- method 3: reprise, graph recorded once, replayed ---- */
static void h_touch(void *u, void *const *p) {
  touch_line((uint64_t *)p[0] + 8 * (uintptr_t)u);
}
static shape *g_shape;
static void h_copy(void *u, void *const *p) {
  (void)p;
  do_copy(g_shape, (int)(uintptr_t)u);
}
static void h_sten(void *u, void *const *p) {
  (void)p;
  do_sten(g_shape, (int)(uintptr_t)u);
}
RP_KERNEL(k_copy, {
  (void)RP_PTR(double, 0);
  do_copy(g_shape, (int)RP_VAL(int64_t, 2));
})
RP_KERNEL(k_sten, {
  (void)RP_PTR(double, 0);
  do_sten(g_shape, (int)RP_VAL(int64_t, 2));
})
static const rp_param kc_p[] = {{"a", RP_IN}, {"b", RP_OUT}, {"i", RP_SCALAR}};
static const rp_param ks_p[] = {{"b", RP_IN}, {"a", RP_OUT}, {"i", RP_SCALAR}};
static const rp_kernel kc_k = RP_KERNEL_DESC(k_copy, kc_p);
static const rp_kernel ks_k = RP_KERNEL_DESC(k_sten, ks_p);
/* touch_line on line o of x; 0, 1 or 2 more lines read (their regions
 * give the edges). */
RP_KERNEL(k_touch0, { touch_line(RP_PTR(uint64_t, 0) + RP_VAL(int64_t, 1)); })
RP_KERNEL(k_touch1, { touch_line(RP_PTR(uint64_t, 0) + RP_VAL(int64_t, 2)); })
RP_KERNEL(k_touch2, { touch_line(RP_PTR(uint64_t, 0) + RP_VAL(int64_t, 3)); })
static const rp_param kt0_p[] = {{"x", RP_INOUT}, {"o", RP_SCALAR}};
static const rp_param kt1_p[] = {
    {"x", RP_INOUT}, {"a", RP_IN}, {"o", RP_SCALAR}};
static const rp_param kt2_p[] = {
    {"x", RP_INOUT}, {"a", RP_IN}, {"b", RP_IN}, {"o", RP_SCALAR}};
static const rp_kernel kt_k[3] = {RP_KERNEL_DESC(k_touch0, kt0_p),
                                  RP_KERNEL_DESC(k_touch1, kt1_p),
                                  RP_KERNEL_DESC(k_touch2, kt2_p)};

/* Host tasks (as in the anchors: a task is a function over its buffers),
 * or, with kernels set, 1-point kernels on device 0 with the automatic
 * coherence copies (the buffers synced home at the end). */
static rp_graph *record(shape *s, int iters, int kernels) {
  rp_graph *g;
  rp_buf A = 0, B = 0, X = 0;
  g_shape = s;
  if (rp_graph_create(&g, 0))
    return NULL;
  if (LINES(s->kind)) {
    rp_buffer_register(g, "X", s->buf, 64 * (uint64_t)s->nline, &X);
    for (int i = 0; i < s->N; i++) {
      const int32_t *d = s->dep[i];
      rp_access a[3];
      rp_arg k[4];
      unsigned na = 0;
      for (int j = 0; j < 3; j++)
        if (d[j] >= 0) {
          a[na].region = rp_range_bytes(X, 64 * (uint64_t)d[j], 64);
          a[na].mode = j ? RP_IN : RP_INOUT;
          k[na] = rp_arg_buf(a[na].region);
          na++;
        }
      k[na] = rp_arg_i64(8 * (int64_t)d[0]);
      if (kernels)
        rp_record_kernel(g, &kt_k[na - 1], 0, rp_dims3(1, 1, 1), k, NULL, NULL);
      else
        rp_record_host(g, h_touch, (void *)(uintptr_t)d[0], a, na, NULL, NULL);
    }
    if (kernels)
      rp_record_sync_host(g, rp_whole(X), NULL);
  } else {
    uint64_t bb = 8 * (uint64_t)s->blk;
    rp_buffer_register(g, "A", s->A, bb * (uint64_t)s->K, &A);
    rp_buffer_register(g, "B", s->B, bb * (uint64_t)s->K, &B);
    for (int it = 0; it < iters; it++) {
      for (int i = 0; i < s->K; i++) {
        rp_access a[2] = {{rp_range_bytes(A, bb * i, bb), RP_IN},
                          {rp_range_bytes(B, bb * i, bb), RP_OUT}};
        rp_arg k[3] = {rp_arg_buf(a[0].region), rp_arg_buf(a[1].region),
                       rp_arg_i64(i)};
        if (kernels)
          rp_record_kernel(g, &kc_k, 0, rp_dims3(1, 1, 1), k, NULL, NULL);
        else
          rp_record_host(g, h_copy, (void *)(uintptr_t)i, a, 2, NULL, NULL);
      }
      for (int i = 0; i < s->K; i++) {
        uint64_t lo = i ? i - 1 : 0, hi = i + 2 < s->K ? i + 2 : s->K;
        rp_access a[2] = {{rp_range_bytes(B, bb * lo, bb * (hi - lo)), RP_IN},
                          {rp_range_bytes(A, bb * i, bb), RP_OUT}};
        rp_arg k[3] = {rp_arg_buf(a[0].region), rp_arg_buf(a[1].region),
                       rp_arg_i64(i)};
        if (kernels)
          rp_record_kernel(g, &ks_k, 0, rp_dims3(1, 1, 1), k, NULL, NULL);
        else
          rp_record_host(g, h_sten, (void *)(uintptr_t)i, a, 2, NULL, NULL);
      }
    }
    if (kernels) {
      rp_record_sync_host(g, rp_whole(A), NULL);
      rp_record_sync_host(g, rp_whole(B), NULL);
    }
  }
  if (rp_graph_end(g)) {
    fprintf(stderr, "record: %s\n", rp_graph_error(g));
    rp_graph_destroy(g);
    return NULL;
  }
  return g;
}

static rp_exec *g_exec;
static unsigned g_replays;
static void rp_pass(shape *s, int passes) {
  (void)s;
  rp_exec_run(g_exec, g_replays * (unsigned)passes);
}

#ifdef RP_HAVE_STARPU
/* ---- method 4: StarPU, implicit data dependencies ---- */
#define SV(i) ((void *)STARPU_VECTOR_GET_PTR(d[i]))
static void sp_touch(void *d[], void *a) {
  (void)a;
  touch_line(SV(0));
}
static void sp_copy(void *d[], void *a) {
  int i;
  starpu_codelet_unpack_args(a, &i);
  do_copy(g_shape, i);
  (void)d;
}
static void sp_sten(void *d[], void *a) {
  int i;
  starpu_codelet_unpack_args(a, &i);
  do_sten(g_shape, i);
  (void)d;
}
static struct starpu_codelet cl_touch = {
    .cpu_funcs = {sp_touch}, .nbuffers = 1, .modes = {STARPU_RW}};
static struct starpu_codelet cl_copy = {
    .cpu_funcs = {sp_copy}, .nbuffers = 2, .modes = {STARPU_R, STARPU_W}};
static struct starpu_codelet cl_sten = {
    .cpu_funcs = {sp_sten},
    .nbuffers = 4,
    .modes = {STARPU_R, STARPU_R, STARPU_R, STARPU_W}};
static struct starpu_codelet cl_sten_edge = {
    .cpu_funcs = {sp_sten},
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W}};
static starpu_data_handle_t *g_h;
static void sp_pass(shape *s, int passes) {
  for (int p = 0; p < passes; p++) {
    if (s->kind <= INDEP)
      for (int i = 0; i < s->N; i++)
        starpu_task_insert(&cl_touch, STARPU_RW, g_h[s->kind == CHAIN ? 0 : i],
                           0);
    else
      for (int it = 0; it < s->iters; it++) {
        for (int i = 0; i < s->K; i++)
          starpu_task_insert(&cl_copy, STARPU_R, g_h[i], STARPU_W,
                             g_h[s->K + i], STARPU_VALUE, &i, sizeof i, 0);
        for (int i = 0; i < s->K; i++) {
          starpu_data_handle_t *b = g_h + s->K;
          if (i > 0 && i + 1 < s->K)
            starpu_task_insert(&cl_sten, STARPU_R, b[i - 1], STARPU_R, b[i],
                               STARPU_R, b[i + 1], STARPU_W, g_h[i],
                               STARPU_VALUE, &i, sizeof i, 0);
          else
            starpu_task_insert(&cl_sten_edge, STARPU_R, b[i ? i - 1 : 0],
                               STARPU_R, b[i ? i : 1], STARPU_W, g_h[i],
                               STARPU_VALUE, &i, sizeof i, 0);
        }
      }
    starpu_task_wait_for_all();
  }
}
#endif

/* ---- methods 5, 6: the peers over the recorded graph ---- */
/* Task v of the host-task recording (program order, no sync nodes). */
static void peer_body(void *ctx, uint32_t v) {
  shape *s = ctx;
  if (LINES(s->kind)) {
    touch_line(s->buf + 8L * s->dep[v][0]);
  } else {
    uint32_t r = v % (2u * (uint32_t)s->K);
    if (r < (uint32_t)s->K)
      do_copy(s, (int)r);
    else
      do_sten(s, (int)r - s->K);
  }
}
static pdag g_pd;
static int g_peer_reps = 1; /* passes per rep (1it graphs: iterations) */
#ifdef RP_HAVE_TBB
static peer_tbb *g_tbb;
static void tbb_pass(shape *s, int passes) {
  (void)s;
  peer_tbb_run(g_tbb, passes * g_peer_reps);
}
#endif
#ifdef RP_HAVE_LEAN
static peer_lean *g_lean;
static void lean_pass(shape *s, int passes) {
  (void)s;
  peer_lean_run(g_lean, g_threads, passes * g_peer_reps);
}
#endif

/* ---- harness ---- */
typedef struct result {
  char method[40];
  int threads, shape;
  double ns_task, ms_rep;
  int ok;
} result;
static result res[512];
static int nres;

#define wanted bench_wanted

/* Nanoseconds this process's threads have spent runnable on a run queue
 * while their CPU ran another thread (per thread: the second field of
 * /proc/self/task/<tid>/schedstat); -1 where unknown. */
static double runq_wait_ns(void) {
  DIR *dir = opendir("/proc/self/task");
  if (!dir)
    return -1;
  double sum = -1;
  for (struct dirent *t; (t = readdir(dir));) {
    char f[300];
    snprintf(f, sizeof f, "/proc/self/task/%s/schedstat", t->d_name);
    FILE *in = t->d_name[0] != '.' ? fopen(f, "r") : NULL;
    unsigned long long on_cpu, waiting;
    if (in && fscanf(in, "%llu %llu", &on_cpu, &waiting) == 2)
      sum = (sum < 0 ? 0 : sum) + (double)waiting;
    if (in)
      fclose(in);
  }
  closedir(dir);
  return sum;
}

static void measure(const char *m, int thr, shape *s, uint64_t ref,
                    void (*fn)(shape *, int), long tasks) {
  if (!wanted(m))
    return;
  int inner = LINES(s->kind) && !HEAVY(s->kind) ? 10 : 1;
  int reps =
      HEAVY(s->kind) ? env_int("BENCH_REPS_REAL", 5) : env_int("BENCH_REPS", 7);
  int warm = HEAVY(s->kind) ? 1 : 2;
  bench_cpu_reset();
  shape_reset(s);
  fn(s, 1);
  int ok = checksum(s) == ref;
  for (int w = 0; w < warm; w++)
    fn(s, inner);
  double t[64];
  reps = reps > 64 ? 64 : reps < 1 ? 1 : reps;
  busy bz;
  bench_busy_start(&bz, env_int("BENCH_BUSY", 0),
                   (unsigned)env_int("BENCH_BUSY_S", 600));
  const double q0 = bench_verbose_on() ? runq_wait_ns() : -1, t00 = now_ns();
  for (int r = 0; r < reps; r++) {
    double t0 = now_ns();
    fn(s, inner);
    t[r] = now_ns() - t0;
  }
  const double q1 = q0 >= 0 ? runq_wait_ns() : -1, tall = now_ns() - t00;
  busy_stop(&bz);
  /* verbose: how long its threads waited for a CPU another thread held */
  if (q0 >= 0 && q1 >= 0)
    printf("CPUS %s thr=%d %s: run-queue wait %.3f ms over %.3f ms of timed "
           "reps\n",
           m, thr, shape_name[s->kind], (q1 - q0) / 1e6, tall / 1e6);
  for (int i = 1; i < reps; i++) /* insertion sort, then the median */
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      double x = t[j];
      t[j] = t[j - 1];
      t[j - 1] = x;
    }
  double med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
  result *r = &res[nres++ % 512];
  snprintf(r->method, sizeof r->method, "%s", m);
  r->threads = thr;
  r->shape = s->kind;
  r->ns_task = med / (double)(tasks * inner);
  r->ms_rep = med / 1e6;
  r->ok = ok;
  printf("RESULT %-16s thr=%d %-15s ns/task=%10.1f  ms/rep=%9.3f  "
         "min=%.1f max=%.1f reps=%d check=%s\n",
         m, thr, shape_name[s->kind], r->ns_task, r->ms_rep,
         t[0] / (double)(tasks * inner), t[reps - 1] / (double)(tasks * inner),
         reps, ok ? "ok" : "FAIL");
  bench_cpu_print(m, thr, shape_name[s->kind]);
  fflush(stdout);
}

static void run_reprise(shape *s, int thr, uint64_t ref, int iters,
                        unsigned replays, int kernels, const char *mode,
                        const char *name) {
  if (!wanted(name))
    return;
  rp_graph *g = record(s, iters, kernels);
  int cores[RP_BENCH_MAXT];
  for (int i = 0; i < RP_BENCH_MAXT; i++)
    cores[i] = i;
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.nthreads = thr;
  o.mode = mode;
  if (env_int("BENCH_PIN", 1)) {
    o.cores = cores;
    o.ncores = (unsigned)thr;
  }
  const rp_backend *be = NULL;
  if (!g || rp_backend_find("openmp", &be) ||
      rp_exec_create(&g_exec, g, be, &o)) {
    fprintf(stderr, "%s: cannot instantiate\n", name);
    rp_graph_destroy(g);
    return;
  }
  g_replays = replays;
  measure(name, thr, s, ref, rp_pass, tasks_per_pass(s));
  rp_exec_destroy(g_exec);
  rp_graph_destroy(g);
}

/* The peers over the host-task recording of iters iterations, passes
 * times per pass of the shape. */
static void run_peers(shape *s, int thr, uint64_t ref, int iters, int passes,
                      const char *sfx) {
  char nt[40], nl[40];
  snprintf(nt, sizeof nt, "tbb-flow%s", sfx);
  snprintf(nl, sizeof nl, "lean%s", sfx);
  if (!wanted(nt) && !wanted(nl))
    return;
  rp_graph *g = record(s, iters, 0);
  if (!g || pdag_from_graph(&g_pd, g, peer_body, s)) {
    rp_graph_destroy(g);
    return;
  }
  g_peer_reps = passes;
  g_threads = thr;
#ifdef RP_HAVE_TBB
  if (wanted(nt) && (g_tbb = peer_tbb_create(&g_pd, thr))) {
    measure(nt, thr, s, ref, tbb_pass, tasks_per_pass(s));
    peer_tbb_destroy(g_tbb);
  }
#endif
#ifdef RP_HAVE_LEAN
  if (wanted(nl) && (g_lean = peer_lean_create(&g_pd))) {
    measure(nl, thr, s, ref, lean_pass, tasks_per_pass(s));
    peer_lean_destroy(g_lean);
  }
#endif
  pdag_free(&g_pd);
  rp_graph_destroy(g);
}

static int g_thr[16], g_nthr;

static void run_shape(int kind) {
  shape s;
  shape_init(&s, kind);
  shape_reset(&s);
  seq_pass(&s, 1);
  uint64_t ref = checksum(&s);
  long tpp = tasks_per_pass(&s);
  int jac = kind == JTINY || kind == JREAL;
  measure("seq", 1, &s, ref, seq_pass, tpp);
  for (int ti = 0; ti < g_nthr; ti++) {
    const int thr = g_thr[ti];
    g_slow_on = thr > 1;
    g_threads = thr;
    run_reprise(&s, thr, ref, s.iters, 1, 0, NULL, "reprise");
    run_reprise(&s, thr, ref, s.iters, 1, 1, NULL, "reprise-kernels");
    if (jac)
      run_reprise(&s, thr, ref, 1, (unsigned)s.iters, 0, NULL, "reprise/1it");
    char modes[256];
    snprintf(modes, sizeof modes, "%s",
             getenv("BENCH_MODES") ? getenv("BENCH_MODES") : "");
    for (char *m = strtok(modes, ","); m; m = strtok(NULL, ",")) {
      char name[64];
      snprintf(name, sizeof name, "reprise-%s", m);
      run_reprise(&s, thr, ref, s.iters, 1, 0, m, name);
      if (jac) {
        snprintf(name, sizeof name, "reprise-%s/1it", m);
        run_reprise(&s, thr, ref, 1, (unsigned)s.iters, 0, m, name);
      }
    }
    g_threads = thr;
    run_peers(&s, thr, ref, s.iters, 1, "");
    if (jac)
      run_peers(&s, thr, ref, 1, s.iters, "/1it");
    g_threads = thr;
    g_tw = 0;
    /* libgomp's depend tracking is super-linear on 1000 Jacobi iterations
     * without a taskwait (minutes): only the per-iteration variant there */
    if (!jac)
      measure("omp-task", thr, &s, ref, omp_pass, tpp);
    if (jac) {
      g_tw = 1;
      measure("omp-task/tw", thr, &s, ref, omp_pass, tpp);
    }
#ifdef RP_HAVE_STARPU
    struct starpu_conf c;
    starpu_conf_init(&c);
    c.ncpus = thr;
    c.ncuda = 0;
    c.nopencl = 0;
    if (kind <= INDEP || jac) {
      if (wanted("starpu") && starpu_init(&c) == 0) {
        int nh = kind == CHAIN ? 1 : kind == INDEP ? s.N : 2 * s.K;
        g_h = calloc((size_t)nh, sizeof *g_h);
        g_shape = &s;
        for (int i = 0; i < nh; i++) {
          void *p = kind == CHAIN   ? (void *)s.buf
                    : kind == INDEP ? (void *)(s.buf + 8L * i)
                    : i < s.K       ? (void *)jA(&s, i)
                                    : (void *)jB(&s, i - s.K);
          long len = kind <= INDEP ? 8 : s.blk;
          starpu_vector_data_register(&g_h[i], STARPU_MAIN_RAM, (uintptr_t)p,
                                      (uint32_t)len, 8);
        }
        measure("starpu", thr, &s, ref, sp_pass, tpp);
        for (int i = 0; i < nh; i++)
          starpu_data_unregister(g_h[i]);
        free(g_h);
        starpu_shutdown();
      }
    }
#endif
  }
  free(s.buf);
  free(s.dep);
  free(s.A);
  free(s.B);
}

static const result *find(const char *m, int thr, int shape) {
  for (int i = 0; i < nres && i < 512; i++)
    if (!strcmp(res[i].method, m) && res[i].threads == thr &&
        res[i].shape == shape)
      return &res[i];
  return NULL;
}

/* Cost of one rp_exec_run of one replay of a one-task graph: the launch
 * and the wait; median of 5 x 2000 runs. */
static void nop_task(void *u, void *const *p) {
  (void)u;
  (void)p;
}
static void launch_cost(void) {
  static uint64_t line[8];
  for (int ti = 0; ti < g_nthr; ti++) {
    const int thr = g_thr[ti];
    rp_graph *g;
    rp_buf X;
    rp_graph_create(&g, 0);
    rp_buffer_register(g, "X", line, sizeof line, &X);
    rp_access a = {rp_whole(X), RP_INOUT};
    rp_record_host(g, nop_task, NULL, &a, 1, NULL, NULL);
    rp_graph_end(g);
    int cores[RP_BENCH_MAXT];
    for (int i = 0; i < RP_BENCH_MAXT; i++)
      cores[i] = i;
    rp_exec_opts o;
    rp_exec_opts_init(&o);
    o.nthreads = thr;
    if (env_int("BENCH_PIN", 1)) {
      o.cores = cores;
      o.ncores = (unsigned)thr;
    }
    const rp_backend *be = NULL;
    rp_exec *x;
    if (rp_backend_find("openmp", &be) || rp_exec_create(&x, g, be, &o)) {
      rp_graph_destroy(g);
      return;
    }
    double t[5];
    for (int r = 0; r < 5; r++) {
      double t0 = now_ns();
      for (int i = 0; i < 2000; i++)
        rp_exec_run(x, 1);
      t[r] = (now_ns() - t0) / 2000 / 1e3;
    }
    for (int i = 1; i < 5; i++)
      for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
        double v = t[j];
        t[j] = t[j - 1];
        t[j - 1] = v;
      }
    printf("RESULT launch+wait     thr=%d us/run=%.2f (1-task graph, "
           "median of 5 x 2000)\n",
           thr, t[2]);
    rp_exec_destroy(x);
    rp_graph_destroy(g);
  }
}

/* Multiply-adds per element for heavy tasks of about us microseconds. */
static long calibrate(double us) {
  uint64_t line[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  g_burn = 4096;
  double best = 1e30;
  for (int r = 0; r < 20; r++) {
    double t0 = now_ns();
    touch_line(line);
    double t = now_ns() - t0;
    best = t < best ? t : best;
  }
  long k = (long)(4096.0 * us * 1e3 / best);
  g_burn = 0;
  return k < 1 ? 1 : k;
}

/* ---- the parent: a process per method ---- */
/* Reads a child's RESULT lines into res[]. */
static void read_results(const char *out) {
  for (const char *l = strstr(out, "RESULT "); l;
       l = strstr(l + 1, "\nRESULT ")) {
    if (*l == '\n')
      l++;
    result r;
    char sh[32], ck[16];
    double lo, hi;
    int reps;
    if (sscanf(l,
               "RESULT %39s thr=%d %31s ns/task=%lf ms/rep=%lf min=%lf "
               "max=%lf reps=%d check=%15s",
               r.method, &r.threads, sh, &r.ns_task, &r.ms_rep, &lo, &hi, &reps,
               ck) != 9)
      continue;
    r.shape = -1;
    for (int k = 0; k < NSHAPE; k++)
      if (!strcmp(sh, shape_name[k]))
        r.shape = k;
    r.ok = !strcmp(ck, "ok");
    if (r.shape >= 0)
      res[nres++ % 512] = r;
  }
}

/* Runs every method wanted, each in a child; want: the shapes. */
static void parent(char **argv, const int *want) {
  int jac = want[JTINY] || want[JREAL], other = 0;
  for (int k = 0; k < NSHAPE; k++)
    other |= want[k] && k != JTINY && k != JREAL;
  const char *base[] = {"seq",         "reprise",  "reprise-kernels",
                        "reprise/1it", "tbb-flow", "tbb-flow/1it",
                        "lean",        "lean/1it", "omp-task",
                        "omp-task/tw", "starpu"};
  char names[32][64];
  int nn = 0;
  for (unsigned i = 0; i < sizeof base / sizeof *base; i++)
    snprintf(names[nn++], 64, "%s", base[i]);
  char modes[256];
  snprintf(modes, sizeof modes, "%s",
           getenv("BENCH_MODES") ? getenv("BENCH_MODES") : "");
  for (char *m = strtok(modes, ","); m && nn < 30; m = strtok(NULL, ",")) {
    snprintf(names[nn++], 64, "reprise-%s", m);
    snprintf(names[nn++], 64, "reprise-%s/1it", m);
  }
  for (int i = 0; i < nn; i++) {
    const char *m = names[i];
    int one_it = strstr(m, "/1it") != NULL;
    if (!wanted(m) || (one_it && !jac) || (!strcmp(m, "omp-task") && !other) ||
        (!strcmp(m, "omp-task/tw") && !jac))
      continue;
#ifndef RP_HAVE_TBB
    if (!strncmp(m, "tbb-flow", 8))
      continue;
#endif
#ifndef RP_HAVE_LEAN
    if (!strncmp(m, "lean", 4))
      continue;
#endif
#ifndef RP_HAVE_STARPU
    if (!strcmp(m, "starpu"))
      continue;
#endif
    char *out = bench_spawn(argv, m,
                            !strncmp(m, "tbb-flow", 8) || !strcmp(m, "starpu"));
    if (!out)
      continue;
    bench_echo(out, "RESULT ");
    bench_echo(out, "CPUS ");
    read_results(out);
    free(out);
  }
}

int main(int argc, char **argv) {
  int want[NSHAPE] = {0}, any = 0;
  for (int i = 1; i < argc; i++)
    for (int k = 0; k < NSHAPE; k++)
      if (!strcmp(argv[i], shape_name[k]))
        want[k] = any = 1;
  const char *th = getenv("BENCH_THREADS");
  for (const char *p = th && *th ? th : "1,2"; p && g_nthr < 16;
       p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
    int t = atoi(p);
    g_thr[g_nthr++] = t < 1 ? 1 : t > RP_BENCH_MAXT ? RP_BENCH_MAXT : t;
  }
  setenv("STARPU_SILENT", "1", 0);
  bench_verbose_on();
  g_is_main = 1;
  g_slow = env_int("BENCH_SLOW", 1);
  g_slow = g_slow < 1 ? 1 : g_slow;
  const char *one = bench_one();
  int launch = 0;
  for (int i = 1; i < argc; i++)
    launch |= !strcmp(argv[i], "launch");
  if (one && !strcmp(one, "launch")) {
    launch_cost();
    return 0;
  }
  if (!one && launch) { /* reprise alone, in a process of its own too */
    char *out = bench_spawn(argv, "launch", 0);
    if (out)
      bench_echo(out, "RESULT ");
    free(out);
  }
  if (argc == 2 && launch)
    return 0;
  long burn = env_int("BENCH_BURN", 0);
  for (int k = 0; k < NSHAPE; k++) {
    if (any ? !want[k] : k >= WAVEH)
      continue;
    if (k >= WAVEH && !burn) {
      const char *u = getenv("BENCH_TASK_US");
      burn = calibrate(u && *u ? atof(u) : 19.0);
      printf("heavy tasks: %ld multiply-adds per element (BENCH_TASK_US)"
             "%s\n",
             burn,
             g_slow > 1 ? "; the main thread's take "
                          "BENCH_SLOW times as long"
                        : "");
    }
    if (!one)
      continue;
    g_burn = k >= WAVEH ? burn : 0;
    run_shape(k);
  }
  if (one)
    return 0;
  if (burn) {
    char b[32];
    snprintf(b, sizeof b, "%ld", burn);
    setenv("BENCH_BURN", b, 1);
  }
  int shapes[NSHAPE];
  for (int k = 0; k < NSHAPE; k++)
    shapes[k] = any ? want[k] : k < WAVEH;
  parent(argv, shapes);
  /* Summary: ns/task (ms per pass for the real Jacobi and heavy shapes). */
  const char *ms[] = {
      "seq",      "reprise",      "reprise/1it", "reprise-kernels",
      "tbb-flow", "tbb-flow/1it", "lean",        "lean/1it",
      "omp-task", "omp-task/tw",  "starpu"};
  printf("\n| method | threads |");
  for (int k = 0; k < NSHAPE; k++)
    if (any ? want[k] : k < WAVEH)
      printf(" %s%s |", shape_name[k], HEAVY(k) ? " (ms)" : "");
  printf("\n|---|---|");
  for (int k = 0; k < NSHAPE; k++)
    if (any ? want[k] : k < WAVEH)
      printf("---|");
  printf("\n");
  for (unsigned m = 0; m < sizeof ms / sizeof *ms + 16; m++) {
    char mode[80];
    const char *name = NULL;
    if (m < sizeof ms / sizeof *ms) {
      name = ms[m];
    } else { /* BENCH_MODES, in order */
      const char *bm = getenv("BENCH_MODES");
      unsigned idx = m - (unsigned)(sizeof ms / sizeof *ms), i = 0;
      for (const char *p = bm; p && *p && !name;
           p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL, i++)
        if (i == idx / 2) {
          snprintf(mode, sizeof mode, "reprise-%.*s%s", (int)strcspn(p, ","), p,
                   idx % 2 ? "/1it" : "");
          name = mode;
        }
      if (!name)
        continue;
    }
    for (int ti = 0; ti < g_nthr + 1; ti++) {
      int thr = ti ? g_thr[ti - 1] : 1;
      if (ti && thr == 1)
        continue;
      int have = 0;
      char line[512];
      int len = snprintf(line, sizeof line, "| %s | %d |", name, thr);
      for (int k = 0; k < NSHAPE; k++) {
        if (any ? !want[k] : k >= WAVEH)
          continue;
        const result *r = find(name, thr, k);
        have |= r != NULL;
        if (!r)
          len += snprintf(line + len, sizeof line - (size_t)len, " - |");
        else if (HEAVY(k))
          len += snprintf(line + len, sizeof line - (size_t)len, " %.1f%s |",
                          r->ms_rep, r->ok ? "" : " FAIL");
        else
          len += snprintf(line + len, sizeof line - (size_t)len, " %.1f%s |",
                          r->ns_task, r->ok ? "" : " FAIL");
      }
      if (have)
        printf("%s\n", line);
    }
  }
  printf("\nratios (other / reprise, same threads; the issue's targets: "
         "tbb-flow / reprise >= 1 on tiny shapes, lean / reprise >= 0.91 on "
         "heavy ones, omp-task/tw / reprise >= 1 on the real Jacobi, "
         "reprise / reprise/1it <= 2 on the tiny Jacobi):\n");
  for (int ti = 0; ti < g_nthr; ti++)
    for (int k = 0; k < NSHAPE; k++) {
      const int thr = g_thr[ti];
      const result *r = find("reprise", thr, k);
      if (!r)
        continue;
      printf("  thr=%d %-15s", thr, shape_name[k]);
      for (unsigned m = 0; m < sizeof ms / sizeof *ms; m++) {
        const result *o = find(ms[m], thr, k);
        if (o && strcmp(ms[m], "reprise") && strcmp(ms[m], "seq"))
          printf("  %s %.2fx", ms[m], o->ns_task / r->ns_task);
      }
      const result *sq = find("seq", 1, k);
      if (sq)
        printf("  speedup over seq %.2fx", sq->ns_task / r->ns_task);
      printf("\n");
    }
  return 0;
}
