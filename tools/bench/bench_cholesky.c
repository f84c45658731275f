/* Tiled Cholesky factorisation (lower, right-looking) of a T x T matrix of
 * nb x nb tiles: dpotrf / dtrsm / dsyrk / dgemm on tiles, by OpenBLAS
 * (CBLAS and LAPACK's dpotrf, one thread per call) when it was found, else
 * by plain loops. Methods, each in a process of its own (the program
 * re-executes itself per method, tools/bench/bench_isolate.h: in one
 * process an OpenMP region under OMP_PROC_BIND would bind the main thread,
 * and a pool made after it inherit one core):
 *   seq          the tasks in program order on one thread;
 *   reprise      recorded once as host tasks over the tiles, replayed by
 *                the openmp backend (BENCH_MODES adds other modes of it,
 *                e.g. "serial", as reprise-<mode>);
 *   omp-depend   OpenMP tasks with depend clauses, created every run;
 *   tbb-flow     oneTBB's flow graph of the recorded graph (built when
 *                TBB is found).
 * Every method's first run is checked bit for bit against the sequential
 * factor (the same calls on the same data in an order the dependences fix),
 * and the sequential factor against the matrix (L L^T at sampled entries).
 * Usage:
 *   OMP_PROC_BIND=true bench_cholesky [T] [nb]     (default 16 64)
 * BENCH_THREADS (default "1,2"), BENCH_REPS (7), BENCH_METHODS (comma
 * list), BENCH_BUSY=K: K busy processes run during the timed runs
 * (contention; each ends itself after BENCH_BUSY_S, default 600 s),
 * BENCH_VERBOSE=1: the CPUs each method's tasks ran on ("CPUS" lines);
 * an "IDLE" line gives how reprise's idle threads waited (rp_exec_stats).
 * tbb-flow runs without OMP_PROC_BIND / OMP_PLACES (it is no OpenMP
 * program). Prints ms per factorisation (median, min-max) and the ratio
 * of reprise to the best of omp-depend and tbb-flow at each thread
 * count. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_isolate.h"
#include "peer.h"
#include "reprise.h"
#ifdef RP_HAVE_CBLAS
#include <cblas.h>
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda,
             int *info);
void openblas_set_num_threads(int n) __attribute__((weak));
#endif

enum { POTRF, TRSM, SYRK, GEMM };
typedef struct ctask {
  int kind, i, j, k;
} ctask;

static int T = 16, NB = 64;
static double *M; /* the matrix being factored: tiles, column-major */
static ctask *task;
static int ntask;

static double *tile(double *a, int i, int j) {
  return a + ((size_t)i * (size_t)T + (size_t)j) * (size_t)NB * (size_t)NB;
}

/* ---- tile kernels ---- */
static void k_potrf(double *a) {
#ifdef RP_HAVE_CBLAS
  int n = NB, info;
  dpotrf_("L", &n, a, &n, &info);
#else
  for (int j = 0; j < NB; j++) {
    double d = a[j * NB + j];
    for (int k = 0; k < j; k++)
      d -= a[k * NB + j] * a[k * NB + j];
    d = sqrt(d);
    a[j * NB + j] = d;
    for (int i = j + 1; i < NB; i++) {
      double s = a[j * NB + i];
      for (int k = 0; k < j; k++)
        s -= a[k * NB + i] * a[k * NB + j];
      a[j * NB + i] = s / d;
    }
  }
#endif
}

/* b = b l^-T (l lower) */
static void k_trsm(const double *l, double *b) {
#ifdef RP_HAVE_CBLAS
  cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,
              NB, NB, 1.0, l, NB, b, NB);
#else
  for (int j = 0; j < NB; j++)
    for (int i = 0; i < NB; i++) {
      double s = b[j * NB + i];
      for (int k = 0; k < j; k++)
        s -= b[k * NB + i] * l[k * NB + j];
      b[j * NB + i] = s / l[j * NB + j];
    }
#endif
}

/* c -= a a^T (lower part) */
static void k_syrk(const double *a, double *c) {
#ifdef RP_HAVE_CBLAS
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, NB, NB, -1.0, a, NB, 1.0,
              c, NB);
#else
  for (int j = 0; j < NB; j++)
    for (int k = 0; k < NB; k++) {
      double x = a[k * NB + j];
      for (int i = j; i < NB; i++)
        c[j * NB + i] -= a[k * NB + i] * x;
    }
#endif
}

/* c -= a b^T */
static void k_gemm(const double *a, const double *b, double *c) {
#ifdef RP_HAVE_CBLAS
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, NB, NB, NB, -1.0, a, NB,
              b, NB, 1.0, c, NB);
#else
  for (int j = 0; j < NB; j++)
    for (int k = 0; k < NB; k++) {
      double x = b[k * NB + j];
      for (int i = 0; i < NB; i++)
        c[j * NB + i] -= a[k * NB + i] * x;
    }
#endif
}

static void run_on(double *a, const ctask *t) {
  bench_cpu_note();
  switch (t->kind) {
  case POTRF:
    k_potrf(tile(a, t->k, t->k));
    break;
  case TRSM:
    k_trsm(tile(a, t->k, t->k), tile(a, t->i, t->k));
    break;
  case SYRK:
    k_syrk(tile(a, t->i, t->k), tile(a, t->i, t->i));
    break;
  default:
    k_gemm(tile(a, t->i, t->k), tile(a, t->j, t->k), tile(a, t->i, t->j));
  }
}

static void build_tasks(void) {
  ntask = 0;
  task = malloc(sizeof *task * (size_t)(T * (T + 1) * (T + 2) / 6 + T * T));
  for (int k = 0; k < T; k++) {
    task[ntask++] = (ctask){POTRF, k, k, k};
    for (int i = k + 1; i < T; i++)
      task[ntask++] = (ctask){TRSM, i, k, k};
    for (int j = k + 1; j < T; j++) {
      task[ntask++] = (ctask){SYRK, j, j, k};
      for (int i = j + 1; i < T; i++)
        task[ntask++] = (ctask){GEMM, i, j, k};
    }
  }
}

/* ---- methods ---- */
static void seq_run(void *ctx) {
  (void)ctx;
  for (int v = 0; v < ntask; v++)
    run_on(M, &task[v]);
}

static void omp_run(void *ctx) {
  const int thr = (int)(intptr_t)ctx;
#pragma omp parallel num_threads(thr)
#pragma omp single
  for (int v = 0; v < ntask; v++) {
    const ctask *t = &task[v];
    double *akk = tile(M, t->k, t->k), *aik = tile(M, t->i, t->k);
    double *ajk = tile(M, t->j, t->k), *aij = tile(M, t->i, t->j);
    (void)akk, (void)aik, (void)ajk, (void)aij; /* gcc: depend is no use */
    switch (t->kind) {
    case POTRF:
#pragma omp task depend(inout : akk[0]) firstprivate(t)
      run_on(M, t);
      break;
    case TRSM:
#pragma omp task depend(in : akk[0]) depend(inout : aik[0]) firstprivate(t)
      run_on(M, t);
      break;
    case SYRK:
#pragma omp task depend(in : aik[0]) depend(inout : aij[0]) firstprivate(t)
      run_on(M, t);
      break;
    default:
#pragma omp task depend(in                                                     \
                        : aik[0], ajk[0]) depend(inout                         \
                                                 : aij[0]) firstprivate(t)
      run_on(M, t);
    }
  }
}

static void h_task(void *u, void *const *p) {
  run_on((double *)p[0], (const ctask *)u);
}

static void peer_body(void *ctx, uint32_t v) {
  (void)ctx;
  run_on(M, &task[v]);
}

static rp_graph *record(void) {
  rp_graph *g;
  rp_buf A;
  const uint64_t tb = 8 * (uint64_t)NB * (uint64_t)NB;
  if (rp_graph_create(&g, 0) ||
      rp_buffer_register(g, "A", M, tb * (uint64_t)T * (uint64_t)T, &A))
    return NULL;
#define TR(i, j) rp_range_bytes(A, tb *((uint64_t)(i) * (uint64_t)T + (j)), tb)
  for (int v = 0; v < ntask; v++) {
    const ctask *t = &task[v];
    rp_access a[3];
    unsigned na = 0;
    switch (t->kind) {
    case POTRF:
      a[na++] = (rp_access){TR(t->k, t->k), RP_INOUT};
      break;
    case TRSM:
      a[na++] = (rp_access){TR(t->k, t->k), RP_IN};
      a[na++] = (rp_access){TR(t->i, t->k), RP_INOUT};
      break;
    case SYRK:
      a[na++] = (rp_access){TR(t->i, t->k), RP_IN};
      a[na++] = (rp_access){TR(t->i, t->i), RP_INOUT};
      break;
    default:
      a[na++] = (rp_access){TR(t->i, t->k), RP_IN};
      a[na++] = (rp_access){TR(t->j, t->k), RP_IN};
      a[na++] = (rp_access){TR(t->i, t->j), RP_INOUT};
    }
    if (rp_record_host(g, h_task, (void *)t, a, na, NULL, NULL)) {
      fprintf(stderr, "record: %s\n", rp_graph_error(g));
      return NULL;
    }
  }
#undef TR
  if (rp_graph_end(g)) {
    fprintf(stderr, "record: %s\n", rp_graph_error(g));
    return NULL;
  }
  return g;
}

static void rp_run(void *ctx) {
  rp_status s = rp_exec_run((rp_exec *)ctx, 1);
  if (s)
    fprintf(stderr, "reprise: %s\n", rp_exec_error((rp_exec *)ctx));
}

#ifdef RP_HAVE_TBB
static void tbb_run(void *ctx) { peer_tbb_run((peer_tbb *)ctx, 1); }
#endif

/* ---- harness ---- */
#define env_int bench_env_int

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

#define wanted bench_wanted

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct method {
  char name[64];
  void (*run)(void *);
  void *ctx;
  double t[64], med, lo, hi;
  int ok;
} method;

static size_t mbytes;
static double *M0, *Mref;

/* The lower tiles of M equal those of the sequential factor. */
static int same_as_ref(void) {
  for (int i = 0; i < T; i++)
    for (int j = 0; j <= i; j++)
      if (memcmp(tile(M, i, j), tile(Mref, i, j), 8 * (size_t)NB * (size_t)NB))
        return 0;
  return 1;
}

/* max |L L^T - A| / max |A| at 256 sampled lower entries */
static double residual(void) {
  const int N = T * NB;
  double amax = 0, err = 0;
  uint64_t s = 12345;
  for (int q = 0; q < 256; q++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    int r = (int)((s >> 33) % (uint64_t)N);
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    int c = (int)((s >> 33) % (uint64_t)(r + 1));
#define EL(a, x, y) tile(a, (x) / NB, (y) / NB)[((y) % NB) * NB + (x) % NB]
    double sum = 0;
    for (int k = 0; k <= c; k++)
      sum += EL(Mref, r, k) * EL(Mref, c, k);
    double a = EL(M0, r, c);
#undef EL
    amax = fabs(a) > amax ? fabs(a) : amax;
    err = fabs(sum - a) > err ? fabs(sum - a) : err;
  }
  return err / amax;
}

static void make_matrix(void) {
  const int N = T * NB;
  uint64_t s = 42;
  for (int i = 0; i < T; i++)
    for (int j = 0; j <= i; j++) {
      double *t = tile(M0, i, j);
      for (int c = 0; c < NB; c++)
        for (int r = 0; r < NB; r++) {
          s = s * 6364136223846793005ull + 1442695040888963407ull;
          double x = (double)(s >> 11) / 9007199254740992.0 - 0.5;
          int gr = i * NB + r, gc = j * NB + c;
          if (gr == gc)
            x = fabs(x) + N;
          t[c * NB + r] = gr >= gc ? x : 0.0;
        }
    }
}

/* ---- the parent: a process per method, one table ---- */
typedef struct row {
  char name[64];
  int thr, ok;
  double med, lo, hi, sp; /* sp: over the child's own sequential run */
} row;

/* Reads the RESULT lines of a child's output into r (at most max). */
static int read_rows(const char *out, row *r, int max) {
  int n = 0;
  for (const char *l = strstr(out, "RESULT "); l && n < max;
       l = strstr(l + 1, "\nRESULT ")) {
    char ck[16];
    int tt, nb, bz;
    if (*l == '\n')
      l++;
    if (sscanf(l,
               "RESULT %63s thr=%d T=%d nb=%d busy=%d ms=%lf min=%lf "
               "max=%lf speedup=%lf check=%15s",
               r[n].name, &r[n].thr, &tt, &nb, &bz, &r[n].med, &r[n].lo,
               &r[n].hi, &r[n].sp, ck) == 10) {
      r[n].ok = !strcmp(ck, "ok");
      n++;
    }
  }
  return n;
}

static int parent(char **argv, const int *threads, int nthr, int nbusy,
                  const char *kern) {
  const char *names[12];
  int nn = 0;
  static char modes[256];
  snprintf(modes, sizeof modes, "%s",
           getenv("BENCH_MODES") ? getenv("BENCH_MODES") : "");
  names[nn++] = "seq";
  names[nn++] = "reprise";
  static char mnames[8][64];
  int nmn = 0;
  for (char *tok = strtok(modes, ","); tok && nmn < 8;
       tok = strtok(NULL, ",")) {
    snprintf(mnames[nmn], sizeof mnames[nmn], "reprise-%s", tok);
    names[nn++] = mnames[nmn++];
  }
  names[nn++] = "omp-depend";
#ifdef RP_HAVE_TBB
  names[nn++] = "tbb-flow";
#endif
  printf("tiled Cholesky: %d x %d tiles of %d^2 (n = %d), %s, %d busy "
         "processes, a process per method, OMP_PROC_BIND=%s OMP_PLACES=%s\n",
         T, T, NB, T * NB, kern, nbusy,
         getenv("OMP_PROC_BIND") ? getenv("OMP_PROC_BIND") : "(unset)",
         getenv("OMP_PLACES") ? getenv("OMP_PLACES") : "(unset)");
  static row r[256];
  int nr = 0, one = 0, echoed = 0;
  for (int ti = 0; ti < nthr; ti++)
    one |= threads[ti] == 1;
  for (int i = 0; i < nn; i++) {
    if (!wanted(names[i]) || (!one && !strcmp(names[i], "seq")))
      continue;
    char *out = bench_spawn(argv, names[i], !strcmp(names[i], "tbb-flow"));
    if (!out)
      continue;
    if (!echoed++)
      bench_echo(out, "residual");
    bench_echo(out, "CPUS ");
    bench_echo(out, "IDLE ");
    nr += read_rows(out, r + nr, 256 - nr);
    free(out);
  }
  double seq_ms = 0;
  for (int i = 0; i < nr; i++)
    if (!strcmp(r[i].name, "seq"))
      seq_ms = r[i].med;
  printf("\n| threads | method | ms (median) | min-max | GFLOP/s | "
         "/ best of omp-depend, tbb-flow |\n|---|---|---|---|---|---|\n");
  const double gflop = (double)T * NB * T * NB * T * NB / 3.0 * 1e-9;
  for (int ti = 0; ti < nthr; ti++) {
    double best = 0;
    for (int i = 0; i < nr; i++)
      if (r[i].thr == threads[ti] &&
          (!strcmp(r[i].name, "omp-depend") ||
           !strcmp(r[i].name, "tbb-flow")) &&
          (!best || r[i].med < best))
        best = r[i].med;
    for (int i = 0; i < nr; i++) {
      if (r[i].thr != threads[ti])
        continue;
      printf("| %d | %s | %.3f%s | %.3f-%.3f | %.2f |", r[i].thr, r[i].name,
             r[i].med, r[i].ok ? "" : " FAIL", r[i].lo, r[i].hi,
             gflop / (r[i].med * 1e-3));
      if (best && strcmp(r[i].name, "seq"))
        printf(" %.3f |\n", r[i].med / best);
      else
        printf(" - |\n");
    }
  }
  for (int i = 0; i < nr; i++)
    printf("RESULT %-14s thr=%d T=%d nb=%d busy=%d ms=%.3f min=%.3f "
           "max=%.3f speedup=%.2f check=%s\n",
           r[i].name, r[i].thr, T, NB, nbusy, r[i].med, r[i].lo, r[i].hi,
           seq_ms ? seq_ms / r[i].med : r[i].sp, r[i].ok ? "ok" : "FAIL");
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1)
    T = atoi(argv[1]);
  if (argc > 2)
    NB = atoi(argv[2]);
  if (T < 1 || NB < 1 || T > 256 || NB > 1024) {
    fprintf(stderr, "usage: bench_cholesky [tiles per side] [tile size]\n");
    return 2;
  }
#ifdef RP_HAVE_CBLAS
  if (openblas_set_num_threads)
    openblas_set_num_threads(1);
  const char *kern = "OpenBLAS";
#else
  const char *kern = "plain loops";
#endif
  const char *th = getenv("BENCH_THREADS");
  int threads[16], nthr = 0;
  for (const char *p = th && *th ? th : "1,2"; p && nthr < 16;
       p = strchr(p, ',') ? strchr(p, ',') + 1 : 0)
    threads[nthr++] = atoi(p) > 0 ? atoi(p) : 1;
  int reps = env_int("BENCH_REPS", 7), nbusy = env_int("BENCH_BUSY", 0);
  reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
  bench_verbose_on();
  if (!bench_one())
    return parent(argv, threads, nthr, nbusy, kern);
  mbytes = 8 * (size_t)T * (size_t)T * (size_t)NB * (size_t)NB;
  M = aligned_alloc(64, mbytes);
  M0 = aligned_alloc(64, mbytes);
  Mref = aligned_alloc(64, mbytes);
  if (!M || !M0 || !Mref)
    return 1;
  memset(M0, 0, mbytes);
  make_matrix();
  build_tasks();
  memcpy(M, M0, mbytes);
  double t0 = now_ms();
  seq_run(NULL);
  double tseq1 = now_ms() - t0;
  memcpy(Mref, M, mbytes);
  double res = residual();
  printf("tiled Cholesky: %d x %d tiles of %d^2 (n = %d), %s, %d busy "
         "processes\nresidual of the sequential factor (%d tasks) %.1e%s\n",
         T, T, NB, T * NB, kern, nbusy, ntask, res,
         res < 1e-10 ? "" : " (BAD)");
  bench_cpu_print("seq", 1, "reference run");
  fflush(stdout);
  rp_graph *g = record();
  const rp_backend *be = NULL;
  if (!g || rp_backend_find("openmp", &be))
    return 1;
#ifdef RP_HAVE_TBB
  pdag pd;
  if (pdag_from_graph(&pd, g, peer_body, NULL))
    return 1;
#else
  (void)peer_body;
#endif
  char modes_buf[256];
  snprintf(modes_buf, sizeof modes_buf, "%s",
           getenv("BENCH_MODES") ? getenv("BENCH_MODES") : "");
  double seq_ms = tseq1;
  for (int ti = 0; ti < nthr; ti++) {
    const int thr = threads[ti];
    method m[12];
    int nm = 0;
    rp_exec *x[8] = {0};
    int nx = 0;
    if (thr == 1 && wanted("seq"))
      m[nm++] = (method){"seq", seq_run, NULL};
    /* the default mode, then BENCH_MODES' */
    char mlist[300];
    const char *modes[9] = {""};
    int nmodes = 1;
    snprintf(mlist, sizeof mlist, "%s", modes_buf);
    for (char *tok = strtok(mlist, ","); tok && nmodes < 9;
         tok = strtok(NULL, ","))
      modes[nmodes++] = tok;
    for (int mi = 0; mi < nmodes && nx < 8; mi++) {
      const char *mode = modes[mi];
      char name[64];
      snprintf(name, sizeof name, "%s%s%s", "reprise", *mode ? "-" : "", mode);
      if (!wanted(name))
        continue;
      rp_exec_opts o;
      rp_exec_opts_init(&o);
      o.nthreads = thr;
      o.mode = *mode ? mode : NULL;
      if (rp_exec_create(&x[nx], g, be, &o)) {
        fprintf(stderr, "%s: %s\n", name, rp_last_error());
        continue;
      }
      method *mm = &m[nm++];
      memset(mm, 0, sizeof *mm);
      snprintf(mm->name, sizeof mm->name, "%s", name);
      mm->run = rp_run;
      mm->ctx = x[nx++];
    }
    if (wanted("omp-depend"))
      m[nm++] = (method){"omp-depend", omp_run, (void *)(intptr_t)thr};
#ifdef RP_HAVE_TBB
    peer_tbb *tb = NULL;
    if (wanted("tbb-flow") && (tb = peer_tbb_create(&pd, thr)))
      m[nm++] = (method){"tbb-flow", tbb_run, tb};
#endif
    /* checked first run, one warm-up, then reps interleaved */
    for (int i = 0; i < nm; i++) {
      memcpy(M, M0, mbytes);
      m[i].run(m[i].ctx);
      m[i].ok = same_as_ref();
      memcpy(M, M0, mbytes);
      m[i].run(m[i].ctx);
    }
    busy bz;
    bench_busy_start(&bz, nbusy, (unsigned)env_int("BENCH_BUSY_S", 600));
    for (int r = 0; r < reps; r++)
      for (int i = 0; i < nm; i++) {
        memcpy(M, M0, mbytes);
        double a = now_ms();
        m[i].run(m[i].ctx);
        m[i].t[r] = now_ms() - a;
      }
    busy_stop(&bz);
    for (int i = 0; i < nm; i++)
      bench_cpu_print(m[i].name, thr, "every run");
    /* the parent prints the table from these lines */
    for (int i = 0; i < nm; i++) {
      qsort(m[i].t, (size_t)reps, sizeof(double), cmp_dbl);
      m[i].med = reps % 2 ? m[i].t[reps / 2]
                          : 0.5 * (m[i].t[reps / 2 - 1] + m[i].t[reps / 2]);
      m[i].lo = m[i].t[0];
      m[i].hi = m[i].t[reps - 1];
      if (!strcmp(m[i].name, "seq"))
        seq_ms = m[i].med;
    }
    for (int i = 0; i < nm; i++) {
      printf("RESULT %-14s thr=%d T=%d nb=%d busy=%d ms=%.3f min=%.3f "
             "max=%.3f speedup=%.2f check=%s\n",
             m[i].name, thr, T, NB, nbusy, m[i].med, m[i].lo, m[i].hi,
             seq_ms / m[i].med, m[i].ok ? "ok" : "FAIL");
      fflush(stdout);
    }
    /* how reprise's idle threads waited (docs/openmp.md, "Idle threads
     * on a busy machine") */
    for (int i = 0; i < nx; i++) {
      static const char *const fig[] = {"idle_yield", "usable_cpus",
                                        "others_runnable", "spin_max", "naps"};
      printf("IDLE reprise thr=%d", thr);
      for (size_t k = 0; k < sizeof fig / sizeof *fig; k++) {
        double v = -1;
        rp_exec_stat_get(x[i], fig[k], &v);
        printf(" %s=%g", fig[k], v);
      }
      printf("\n");
    }
    for (int i = 0; i < nx; i++)
      rp_exec_destroy(x[i]);
#ifdef RP_HAVE_TBB
    peer_tbb_destroy(tb);
#endif
  }
#ifdef RP_HAVE_TBB
  pdag_free(&pd);
#endif
  rp_graph_destroy(g);
  free(task);
  free(M);
  free(M0);
  free(Mref);
  return 0;
}
