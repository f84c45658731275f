/* Benchmark: distributed Jacobi 2D, a hand-written MPI code against
 * reprise's two lowerings over MPI, in one run on the same ranks: on
 * StarPU-MPI (the starpu backend, mode "mpi") and on reprise's own engine
 * (the mpi backend: the openmp engine, nonblocking MPI messages as tasks;
 * the columns own_ms, own_ratio, own_res, and own_p/a its prediction
 * against achieved; mpi_p/a its own model's, rp_exec_predict() on the
 * mpi exec, and
 * own_1st/rep its create + first run over a replay; --own 0 leaves it
 * out), in two
 * forms (and the mpi backend with its stencils left whole, mode "whole":
 * whole_ms, and whole/own, what cutting them into interior and boundary
 * rows gains, issue 35; --own-whole 0 leaves it out):
 * - "replicated": rank 0 holds the grids; each run scatters the rows to
 *   the ranks, does S steps (B = A over each rank's rows; the halo rows of
 *   B exchanged with non-blocking sends and receives; A = the 5-point
 *   average of B inside), and gathers A and B back to rank 0 — the
 *   hand-written code with MPI_Scatterv / Isend / Irecv / MPI_Gatherv,
 *   reprise with the graph ex_jacobi2d_record records (row blocks on
 *   devices 0 .. ranks-1, device d on rank d; the recorder inserts the
 *   halo copies and the copies home);
 * - "distributed": every rank keeps its rows between runs; a run is the S
 *   steps with their halo exchanges only — the hand-written code on its
 *   local window, reprise with the same graph and A and B declared
 *   distributed (rp_buffer_distribute: rank r's rows in rank r's array),
 *   so that its copies from and to the host stay on each rank.
 * For each grid size and form: the median of >= 5 timed runs of each
 * (alternating), the ratio reprise / MPI, whether the grids are identical
 * after the same number of runs (rank 0's grids; in the distributed form
 * every rank's own rows), the analysis' prediction of one run (kernel and
 * local copy costs profiled on rank 0 by the reference replay, transfers
 * between ranks on the net lanes: --net-latency-us and --net-gbps, from
 * bench_mpi_pingpong) and its ratio to the achieved time; the set-up
 * (rp_exec_create on the slowest rank: lowering and registering, StarPU
 * started before; and the first run, with its first scatter and first
 * touch of the memory); and per rank
 * where reprise's time went per run (rp_exec_trace(), the figures
 * trace_* of rp_exec_stats(): task bodies,
 * halo packing, the scatter and gather, waiting on receives, StarPU's
 * scheduling, submitting, registering) and each thread's CPU time per
 * timed run. Run with mpirun -np N (STARPU_NCPU=1: one worker per rank,
 * as the MPI code has one thread). A run's time is the slowest rank's,
 * from a barrier to its end. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include "examples.h"
#include "multidev.h"
#include "mpi_common.h"
#include "reprise/analyze.h"

/* The model of a replay in mode "mpi" that rp_exec_predict() simulates
 * on the starpu exec (its parameters by name: docs/mpi.md, "Predicting a
 * replay per rank"): a message of b bytes arrives latency_us +
 * b / (gbps * 1e3) us after its send; a task costs task_us besides its
 * body, a send or receive msg_us, a launch launch_us; workers per rank;
 * the bodies body_scale times their profiled cost. */
typedef struct net_model {
  double latency_us, gbps;
  double task_us, msg_us, launch_us;
  unsigned workers;
  double body_scale;
} net_model;

/* rp_exec_predict() of starpu exec x with model n over size ranks into
 * rank_us (size entries); the largest (the prediction of one run), or -1
 * when it fails. */
static double predict(const rp_exec *x, int size, const net_model *n,
                      const double *op_us, double *rank_us) {
  const rp_exec_stat m[] = {
      {"latency_us", n->latency_us}, {"gbps", n->gbps},
      {"task_us", n->task_us},       {"msg_us", n->msg_us},
      {"launch_us", n->launch_us},   {"workers", n->workers},
      {"body_scale", n->body_scale}};
  double out = -1;
  if (rp_exec_predict(x, m, sizeof m / sizeof *m, op_us, (unsigned)size,
                      rank_us) == RP_OK)
    for (int r = 0; r < size; r++)
      out = rank_us[r] > out ? rank_us[r] : out;
  return out;
}

/* Figure `name` of exec x (rp_exec_stat_get), 0 when it has none. */
static double stat0(const rp_exec *x, const char *name) {
  double v = 0;
  return x && rp_exec_stat_get(x, name, &v) == RP_OK ? v : 0;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Rows [r0, r1) of the copy kernels of rank r: the blocks ex_jacobi2d
 * gives device r (one block per rank here). */
static void rows(uint64_t n, int r, int size, uint64_t *r0, uint64_t *r1) {
  *r0 = n * (uint64_t)r / (uint64_t)size;
  *r1 = n * (uint64_t)(r + 1) / (uint64_t)size;
}

/* The halo exchange of the hand-written codes: the first and last of the
 * `rows` rows at w go to the neighbouring ranks, whose last and first rows
 * arrive in the rows before and after. */
static void halo(double *w, uint64_t n, uint64_t rows, int rank, int size) {
  MPI_Request rq[4];
  int nr = 0;
  if (rank > 0) {
    MPI_Irecv(w - n, (int)n, MPI_DOUBLE, rank - 1, 1, MPI_COMM_WORLD,
              &rq[nr++]);
    MPI_Isend(w, (int)n, MPI_DOUBLE, rank - 1, 2, MPI_COMM_WORLD, &rq[nr++]);
  }
  if (rank + 1 < size) {
    MPI_Irecv(w + rows * n, (int)n, MPI_DOUBLE, rank + 1, 2, MPI_COMM_WORLD,
              &rq[nr++]);
    MPI_Isend(w + (rows - 1) * n, (int)n, MPI_DOUBLE, rank + 1, 1,
              MPI_COMM_WORLD, &rq[nr++]);
  }
  MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE);
}

/* The hand-written code: `steps` steps, each rank working in its local
 * window la, lb of rows [r0 - 1, r1 + 1). */
static void mpi_steps(uint64_t n, unsigned steps, double *la, double *lb,
                      int rank, int size) {
  uint64_t r0, r1;
  rows(n, rank, size, &r0, &r1);
  uint64_t lo = r0 ? r0 - 1 : 0; /* first row of the window */
  double *wa = la + (r0 - lo) * n, *wb = lb + (r0 - lo) * n;
  for (unsigned s = 0; s < steps; s++) {
    memcpy(wb, wa, (r1 - r0) * n * sizeof *wb);
    halo(wb, n, r1 - r0, rank, size);
    uint64_t i0 = r0 ? r0 : 1, i1 = r1 < n ? r1 : n - 1;
    for (uint64_t i = i0; i < i1; i++) {
      const double *bb = lb + (i - lo) * n;
      double *aa = la + (i - lo) * n;
      for (uint64_t j = 1; j + 1 < n; j++)
        aa[j] = 0.25 * (bb[j - n] + bb[j + n] + bb[j - 1] + bb[j + 1]);
    }
  }
}

/* The heat code (--app heat, examples/heat2d_kernels.c): step s reads one
 * grid (u when s is even, v when odd) with its halo rows, exchanged
 * first, and writes its rows of the other: the boundary copied, the
 * interior u + (sum of the 4 neighbours - 4u) / 8 (the same expression
 * as the example's kernel, for identical results). */
static void heat_steps(uint64_t n, unsigned steps, double *lu, double *lv,
                       int rank, int size) {
  uint64_t r0, r1;
  rows(n, rank, size, &r0, &r1);
  uint64_t lo = r0 ? r0 - 1 : 0;
  for (unsigned s = 0; s < steps; s++) {
    double *src = s % 2 ? lv : lu, *dst = s % 2 ? lu : lv;
    double *w = src + (r0 - lo) * n;
    halo(w, n, r1 - r0, rank, size);
    for (uint64_t i = r0; i < r1; i++) {
      const double *u = src + (i - lo) * n;
      double *o = dst + (i - lo) * n;
      for (uint64_t j = 0; j < n; j++)
        o[j] =
            i > 0 && i + 1 < n && j > 0 && j + 1 < n
                ? u[j] +
                      0.125 * (((u[j - n] + u[j + n]) + (u[j - 1] + u[j + 1])) -
                               4.0 * u[j])
                : u[j];
    }
  }
}

typedef void (*steps_fn)(uint64_t n, unsigned steps, double *la, double *lb,
                         int rank, int size);
static steps_fn hand_steps = mpi_steps;

/* One replicated run: the rows scattered from rank 0's grids (a, b), the
 * steps, the grids gathered back. */
static void mpi_run(uint64_t n, unsigned steps, double *a, double *b,
                    double *la, double *lb, int rank, int size, int *cnt,
                    int *dsp) {
  uint64_t r0, r1;
  rows(n, rank, size, &r0, &r1);
  uint64_t lo = r0 ? r0 - 1 : 0;
  double *wa = la + (r0 - lo) * n, *wb = lb + (r0 - lo) * n;
  MPI_Scatterv(a, cnt, dsp, MPI_DOUBLE, wa, cnt[rank], MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
  hand_steps(n, steps, la, lb, rank, size);
  MPI_Gatherv(wa, cnt[rank], MPI_DOUBLE, a, cnt, dsp, MPI_DOUBLE, 0,
              MPI_COMM_WORLD);
  MPI_Gatherv(wb, cnt[rank], MPI_DOUBLE, b, cnt, dsp, MPI_DOUBLE, 0,
              MPI_COMM_WORLD);
}

/* The costs of every operation of g, profiled here by the reference
 * replay (in us, per node), or NULL. It runs in place: g's host arrays
 * advance by one replay. */
static double *profile(const rp_graph *g) {
  const rp_backend *ref;
  rp_exec *x = NULL;
  double *us = malloc(rp_graph_num_nodes(g) * sizeof *us + 1);
  /* profiled twice: the first touches the images' pages, the second
   * times the operations alone */
  if (!us || rp_backend_find("reference", &ref) ||
      rp_exec_create(&x, g, ref, NULL) || rp_exec_profile(x, us) ||
      rp_exec_profile(x, us)) {
    free(us);
    us = NULL;
  }
  rp_exec_destroy(x);
  return us;
}

/* The analysis' makespan of one run over `size` ranks, from costs us
 * (transfers between ranks on the net lanes; no cost per task). */
static double predict_analysis(const rp_graph *g, int size, const double *us,
                               const net_model *net) {
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.measured_us = us;
  o.nranks = (unsigned)size;
  o.net_latency_us = net->latency_us;
  o.net_gbps = net->gbps;
  rp_analysis *an;
  double out = -1;
  if (rp_analyze(g, &o, &an) == RP_OK) {
    rp_summary sm;
    rp_analysis_summary(an, &sm);
    out = sm.makespan_us;
    rp_analysis_destroy(an);
  }
  return out;
}

/* The calibration probe of the net model's costs per task, per request
 * and per launch (net_model), on these ranks with the backend as the
 * benchmark runs it: the median of 7 runs of
 * - K tiny kernels in a chain on each rank's device (its row of a buffer
 *   distributed one row per rank: no message), K = 1 and K = 64: the
 *   slope is a task's cost, the rest of the one-kernel run the launch's
 *   (when the one-kernel run is the longer, on a loaded machine: the
 *   64-kernel run over its tasks, no launch cost);
 * - on 2 ranks or more, K rounds of a kernel on device 0 then one on
 *   device 1 touching the same 8 bytes: each round 2 messages, 6 tasks
 *   (2 kernels, 2 packs, 2 unpacks) and 4 requests in a row, so that a
 *   request costs (round - 6 tasks - 2 latencies) / 4;
 * and the bodies' slowdown with all ranks at once (probe_memory). */
RP_KERNEL(probe_touch, { RP_REGION_PTR(double, 0)[RP_X] += 1; })
static const rp_param probe_touch_params[] = {{"a", RP_INOUT}};
static const rp_kernel probe_touch_k =
    RP_KERNEL_DESC(probe_touch, probe_touch_params);

/* The median of 7 runs of x (the slowest rank's), after one untimed. */
static double median_of_7(rp_exec *x) {
  double t[7];
  rp_exec_run(x, 1);
  for (int r = 0; r < 7; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = rp_clock_us();
    rp_exec_run(x, 1);
    double dt = rp_clock_us() - t0;
    MPI_Allreduce(&dt, &t[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  qsort(t, 7, sizeof *t, cmp_d);
  return t[3];
}

static double probe_run(int size, unsigned k, int pingpong, uint32_t *tasks) {
  double *buf = calloc((size_t)size + 1, sizeof *buf);
  rp_graph *g = NULL;
  rp_exec *x = NULL;
  rp_buf B;
  int ok = buf && !rp_graph_create(&g, 0) &&
           !rp_buffer_register_2d(g, "P", buf, (uint64_t)size, 1, 8, &B);
  for (unsigned i = 0; ok && i < k; i++)
    for (int d = 0; ok && d < (pingpong ? 2 : size); d++) {
      uint64_t row = pingpong ? 0 : (uint64_t)d;
      rp_arg a = rp_arg_buf(rp_box2_elems(B, row, row + 1, 0, 1));
      ok = !rp_record_kernel(g, &probe_touch_k, d, rp_dims3(1, 1, 1), &a, NULL,
                             NULL);
    }
  ok = ok && (pingpong || !rp_buffer_distribute(g, B, (unsigned)size, NULL)) &&
       !rp_graph_end(g) && (x = exm_exec(g, "bench_mpi_jacobi"));
  double med = -1;
  double ntasks;
  if (ok && !rp_exec_stat_get(x, "tasks", &ntasks)) {
    *tasks = (uint32_t)ntasks;
    med = median_of_7(x);
  }
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(buf);
  return med;
}

/* The bodies' slowdown with every rank streaming memory at once against
 * one rank alone (net_model.body_scale): a 32 MB copy on rank 0
 * alone, then on every rank at once (the slowest rank's time), the
 * median of 5 each; at least 1. Where ranks share cores (the 2-core VM)
 * it measures their waiting for a core as much as the memory: pred/ach
 * leaves it out, pm/ach uses it. */
static double mem_scale = 1;

static double probe_memory(int rank, int size) {
  enum { MB = 32, R = 5 };
  size_t len = (size_t)MB << 20;
  char *a = malloc(len), *b = malloc(len);
  double one[R], all[R], v = 1;
  int ok = a && b, all_ok;
  if (ok) {
    memset(a, 1, len);
    memset(b, 2, len);
  }
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  for (int r = 0; all_ok && r < R; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = rp_clock_us();
    if (rank == 0)
      memcpy(b, a, len);
    one[r] = rp_clock_us() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = rp_clock_us();
    memcpy(a, b, len);
    double dt = rp_clock_us() - t0;
    MPI_Allreduce(&dt, &all[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  if (all_ok) {
    qsort(one, R, sizeof *one, cmp_d);
    qsort(all, R, sizeof *all, cmp_d);
    v = one[R / 2] > 0 && all[R / 2] > one[R / 2] ? all[R / 2] / one[R / 2] : 1;
  }
  MPI_Bcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  free(a);
  free(b);
  return size > 1 ? v : 1;
}

static void calibrate(int rank, int size, net_model *n) {
  enum { K = 64 };
  uint32_t t1 = 0, tk = 0, tmax;
  double a = probe_run(size, 1, 0, &t1), b = probe_run(size, K, 0, &tk);
  /* the slowest rank's time: its tasks */
  MPI_Allreduce(&tk, &tmax, 1, MPI_UINT32_T, MPI_MAX, MPI_COMM_WORLD);
  tk = tmax;
  MPI_Allreduce(&t1, &tmax, 1, MPI_UINT32_T, MPI_MAX, MPI_COMM_WORLD);
  t1 = tmax;
  if (a > 0 && b > a && tk > t1) {
    n->task_us = (b - a) / (double)(tk - t1);
    n->launch_us = a > t1 * n->task_us ? a - t1 * n->task_us : 0;
  } else if (b > 0 && tk) {
    /* the one-kernel run took longer (a loaded machine): the longer run
     * alone, all of it per task */
    n->task_us = b / (double)tk;
  }
  double c = -1;
  if (size >= 2) {
    uint32_t tp = 0;
    c = probe_run(size, K, 1, &tp);
    double m = (c / K - 6 * n->task_us - 2 * n->latency_us) / 4;
    if (c > 0)
      n->msg_us = m > 0 ? m : 0;
  }
  mem_scale = probe_memory(rank, size);
  if (rank == 0)
    printf("probe (median of 7, slowest rank): %u task(s) %.1f us, %u tasks "
           "%.1f us, %d rounds of 2 messages %.1f us\n",
           t1, a, tk, b, K, c);
  if (rank == 0)
    printf("net model: %.1f us + bytes / %.2f GB/s; probe: %.1f us per "
           "task, %.1f us per request, %.1f us per launch, %u worker(s); "
           "bodies x %.2f with the memory shared by the ranks (pm/ach)\n",
           n->latency_us, n->gbps, n->task_us, n->msg_us, n->launch_us,
           n->workers, mem_scale);
}

/* CPU time per thread of this process (Linux /proc/self/task): what each
 * of the two codes costs in CPU, thread by thread (StarPU's worker and MPI
 * progress threads, Open MPI's threads), robust where wall time on a
 * shared machine is not. */
#define NTH 64
typedef struct thr {
  int tid;
  char comm[24];
  double cpu_ms[4]; /* [0] during the MPI code's runs, [1] reprise's on
                       StarPU, [2] on its own engine, [3] the same with
                       its stencils whole */
  long csw[4];      /* context switches (voluntary + not) */
} thr;
static thr th[NTH];
static unsigned nth;

typedef struct snap {
  int tid[NTH];
  double ms[NTH];
  long csw[NTH];
  unsigned n;
} snap;

static long status_field(const char *path, const char *key) {
  FILE *f = fopen(path, "r");
  char line[256];
  long v = 0;
  size_t k = strlen(key);
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, key, k))
      v += atol(line + k);
  if (f)
    fclose(f);
  return v;
}

static void take(snap *s) {
  s->n = 0;
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  double tick = 1e3 / (double)sysconf(_SC_CLK_TCK);
  while (d && (e = readdir(d)) && s->n < NTH) {
    if (e->d_name[0] == '.')
      continue;
    char path[320], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f)
      continue;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    char *rp = strrchr(buf, ')');
    unsigned long ut = 0, st = 0;
    if (!rp || sscanf(rp + 2,
                      "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                      "%lu %lu",
                      &ut, &st) != 2)
      continue;
    int tid = atoi(e->d_name);
    unsigned i = s->n++;
    s->tid[i] = tid;
    s->ms[i] = (double)(ut + st) * tick;
    snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
    s->csw[i] = status_field(path, "voluntary_ctxt_switches:") +
                status_field(path, "nonvoluntary_ctxt_switches:");
    char *lp = strchr(buf, '(');
    unsigned t;
    for (t = 0; t < nth && th[t].tid != tid; t++)
      ;
    if (t == nth && nth < NTH && lp) {
      th[nth].tid = tid;
      size_t cl = (size_t)(rp - lp - 1);
      if (cl >= sizeof th[nth].comm)
        cl = sizeof th[nth].comm - 1;
      memcpy(th[nth].comm, lp + 1, cl);
      th[nth].comm[cl] = 0;
      nth++;
    }
  }
  if (d)
    closedir(d);
}

static void account(int which, const snap *a, const snap *b) {
  for (unsigned i = 0; i < b->n; i++) {
    double ms0 = 0;
    long c0 = 0;
    for (unsigned j = 0; j < a->n; j++)
      if (a->tid[j] == b->tid[i]) {
        ms0 = a->ms[j];
        c0 = a->csw[j];
      }
    for (unsigned t = 0; t < nth; t++)
      if (th[t].tid == b->tid[i]) {
        th[t].cpu_ms[which] += b->ms[i] - ms0;
        th[t].csw[which] += b->csw[i] - c0;
      }
  }
}

/* Rank 0 prints every rank's threads that used CPU: ms per timed run. */
static void print_threads(int rank, int size, unsigned runs, double body_ms) {
  double mine[NTH * 7];
  char names[NTH * 24];
  memset(mine, 0, sizeof mine);
  memset(names, 0, sizeof names);
  for (unsigned t = 0; t < nth; t++) {
    mine[7 * t] = th[t].tid;
    mine[7 * t + 1] = th[t].cpu_ms[0] / runs;
    mine[7 * t + 2] = th[t].cpu_ms[1] / runs;
    mine[7 * t + 3] = (double)th[t].csw[0] / runs;
    mine[7 * t + 4] = (double)th[t].csw[1] / runs;
    mine[7 * t + 5] = th[t].cpu_ms[2] / runs;
    mine[7 * t + 6] = (double)th[t].csw[2] / runs;
    memcpy(names + 24 * t, th[t].comm, 24);
  }
  double *allb = rank == 0 ? malloc(sizeof *allb * (size_t)size) : NULL;
  MPI_Gather(&body_ms, 1, MPI_DOUBLE, allb, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  double *all = rank == 0 ? malloc(sizeof mine * (size_t)size) : NULL;
  char *an = rank == 0 ? malloc(sizeof names * (size_t)size) : NULL;
  MPI_Gather(mine, NTH * 7, MPI_DOUBLE, all, NTH * 7, MPI_DOUBLE, 0,
             MPI_COMM_WORLD);
  MPI_Gather(names, NTH * 24, MPI_CHAR, an, NTH * 24, MPI_CHAR, 0,
             MPI_COMM_WORLD);
  if (rank == 0) {
    printf("  CPU per timed run, by thread (ms; context switches; reprise: "
           "on StarPU, own: on the mpi backend)\n"
           "  rank %-16s %10s %8s %10s %8s %10s %8s\n",
           "thread", "mpi_ms", "csw", "reprise_ms", "csw", "own_ms", "csw");
    for (int r = 0; r < size; r++) {
      double tot[3] = {0, 0, 0};
      for (unsigned t = 0; t < NTH; t++) {
        const double *v = all + (size_t)r * NTH * 7 + 7 * t;
        tot[0] += v[1];
        tot[1] += v[2];
        tot[2] += v[5];
        if (v[1] + v[2] + v[5] >= 1)
          printf("  %4d %-16s %10.1f %8.0f %10.1f %8.0f %10.1f %8.0f\n", r,
                 an + (size_t)r * NTH * 24 + 24 * t, v[1], v[3], v[2], v[4],
                 v[5], v[6]);
      }
      printf("  %4d %-16s %10.1f %8s %10.1f %8s %10.1f\n", r, "(all threads)",
             tot[0], "", tot[1], "", tot[2]);
      printf("  %4d %-16s %10s %8s %10.1f\n", r, "(task bodies)", "", "",
             allb[r]);
    }
  }
  free(all);
  free(an);
  free(allb);
}

static double own_us; /* this rank's time of the last timed run */

/* The second lowering (the mpi backend), when asked and built: its exec
 * on graph g, one thread per rank (own_threads; as the hand-written code),
 * its grids' arrays a2, b2 (own copies: the two lowerings run the same
 * number of times as the hand-written code, each on its own grids). */
static int own_on = 1;
static int own_threads = 1;
static int own_whole = 1; /* time mode "whole" too (whole_ms) */

/* mode: "mpi" (stencils with a halo cut into interior and boundary rows)
 * or "whole" (left whole: the lowering before issue 35's overlap). */
static rp_exec *own_exec_mode(const rp_graph *g, double *a2, double *b2,
                              uint64_t nn, const char *mode) {
  const rp_backend *be;
  rp_exec_opts o;
  rp_exec *x = NULL;
  rp_exec_opts_init(&o);
  o.mode = mode;
  o.nthreads = own_threads;
  if (rp_backend_find("mpi", &be) || rp_exec_create(&x, g, be, &o) ||
      rp_exec_rebind(x, 0, a2, nn * 8) || rp_exec_rebind(x, 1, b2, nn * 8)) {
    fprintf(stderr, "bench_mpi_jacobi: mpi backend: %s\n", rp_last_error());
    rp_exec_destroy(x);
    return NULL;
  }
  return x;
}

static rp_exec *own_exec(const rp_graph *g, double *a2, double *b2,
                         uint64_t nn) {
  return own_exec_mode(g, a2, b2, nn, "mpi");
}

/* Gathers on rank 0 five figures of the mpi backend's exec x (NULL or
 * another backend's: -1, 0, -1, -1, 0) on every rank: its threads, whether
 * bound, its first and last core; or, with `slices`, its kernels cut,
 * interior slices and those that wait for a receive, boundary slices and
 * those that wait. Rank 0 gets the array (5 per rank; free it). */
static int *own_gather(const rp_exec *x, int slices, int rank, int size) {
  static const char *const lay[5] = {"nthreads", "bound", "core_first",
                                     "core_last", NULL};
  static const char *const sl[5] = {"cut", "interior", "interior_waits",
                                    "boundary", "boundary_waits"};
  const char *const *names = slices ? sl : lay;
  int mine[5] = {-1, 0, -1, -1, 0};
  double v;
  for (int i = 0; x && i < 5 && names[i]; i++)
    if (rp_exec_stat_get(x, names[i], &v) == RP_OK)
      mine[i] = (int)v;
  int *all = rank == 0 ? malloc(sizeof mine * (size_t)size) : NULL;
  MPI_Gather(mine, 5, MPI_INT, all, 5, MPI_INT, 0, MPI_COMM_WORLD);
  return all;
}

/* Rank 0 prints the slices of every rank's cut stencils (exec x: the mpi
 * backend's): kernels cut, interior and boundary slices, and how many of
 * each wait for a receive. */
static void print_slices(const rp_exec *x, int rank, int size) {
  int *all = own_gather(x, 1, rank, size);
  if (rank != 0 || !all)
    return;
  printf("  own: stencils cut per rank (kernels cut; interior slices, "
         "waiting for a receive; boundary slices, waiting):");
  for (int r = 0; r < size; r++)
    printf(" %d: %d; %d, %d; %d, %d%s", r, all[5 * r], all[5 * r + 1],
           all[5 * r + 2], all[5 * r + 3], all[5 * r + 4],
           r + 1 < size ? " |" : "\n");
  free(all);
}

static double timed(int which, int dist, rp_exec *x, uint64_t n, unsigned steps,
                    double *a, double *b, double *la, double *lb, int rank,
                    int size, int *cnt, int *dsp) {
  snap s0, s1;
  MPI_Barrier(MPI_COMM_WORLD);
  take(&s0);
  double t0 = rp_clock_us();
  if (which)
    rp_exec_run(x, 1); /* 1: on StarPU; 2: on the own engine */
  else if (dist)
    hand_steps(n, steps, la, lb, rank, size);
  else
    mpi_run(n, steps, a, b, la, lb, rank, size, cnt, dsp);
  double t1 = rp_clock_us();
  take(&s1);
  account(which, &s0, &s1);
  MPI_Barrier(MPI_COMM_WORLD);
  double dt = t1 - t0, all;
  own_us = dt;
  /* the run ends when the slowest rank ends */
  MPI_Allreduce(&dt, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

/* Rows [r0, r1) of rank `rank` in the local window lw (rows from
 * r0 - 1) equal those rows of the full grid g. */
static int same_rows(uint64_t n, const double *g, const double *lw, int rank,
                     int size) {
  uint64_t r0, r1;
  rows(n, rank, size, &r0, &r1);
  uint64_t lo = r0 ? r0 - 1 : 0;
  return !memcmp(g + r0 * n, lw + (r0 - lo) * n, (r1 - r0) * n * 8);
}

/* The window of rank `rank` filled from the full grid g. */
static void fill_window(uint64_t n, const double *g, double *lw, int rank,
                        int size) {
  uint64_t r0, r1;
  rows(n, rank, size, &r0, &r1);
  uint64_t lo = r0 ? r0 - 1 : 0, hi = r1 < n ? r1 + 1 : n;
  memcpy(lw, g + lo * n, (hi - lo) * n * 8);
}

static double max_all(double v) {
  double m;
  MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

/* The mpi backend's model (rp_exec_predict() on an exec of the mpi
 * backend, issue 35; docs/mpi.md, "Predicting the mpi backend's
 * replay"): its engine's cost per task and per launch from a probe on
 * these ranks, the messages' latency and bandwidth from a ping-pong
 * between them (the parameter measure_reps; the figures net_latency_us
 * and net_gbps of rp_exec_stats()); columns mpi_p/a (the prediction of
 * its replay, cut as it runs, against own_ms) and per rank. */
#ifdef RP_HAVE_MPI_BACKEND
/* Its parameters: latency_us, gbps, task_us, launch_us. */
static struct { double latency_us, gbps, task_us, launch_us; } own_net;

/* The median of 7 runs (slowest rank) of k tiny kernels in a chain on each
 * rank's own row of a distributed buffer (no message) on the mpi backend;
 * *tasks the most engine tasks of a rank. With measure: the network
 * measured on that exec too (a prediction with measure_reps 50, the
 * figures into own_net). */
static double own_probe(int size, unsigned k, uint32_t *tasks, int measure) {
  double *buf = calloc((size_t)size + 1, sizeof *buf);
  rp_graph *g = NULL;
  rp_exec *x = NULL;
  rp_buf B;
  const rp_backend *be;
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.nthreads = own_threads;
  int ok = buf && !rp_graph_create(&g, 0) &&
           !rp_buffer_register_2d(g, "P", buf, (uint64_t)size, 1, 8, &B);
  for (unsigned i = 0; ok && i < k; i++)
    for (int d = 0; ok && d < size; d++) {
      rp_arg a =
          rp_arg_buf(rp_box2_elems(B, (uint64_t)d, (uint64_t)d + 1, 0, 1));
      ok = !rp_record_kernel(g, &probe_touch_k, d, rp_dims3(1, 1, 1), &a, NULL,
                             NULL);
    }
  ok = ok && !rp_buffer_distribute(g, B, (unsigned)size, NULL) &&
       !rp_graph_end(g) && !rp_backend_find("mpi", &be) &&
       !rp_exec_create(&x, g, be, &o);
  double med = -1, nt = 0;
  if (ok && !rp_exec_stat_get(x, "engine_tasks", &nt)) {
    uint32_t mine = (uint32_t)nt;
    MPI_Allreduce(&mine, tasks, 1, MPI_UINT32_T, MPI_MAX, MPI_COMM_WORLD);
    med = median_of_7(x);
    /* the ping-pong: 50 round trips of 8 bytes and of 1 MiB; gbps kept
     * on one rank */
    const rp_exec_stat m[] = {
        {"measure_reps", 50}, {"measure_bytes", 1 << 20}, {"gbps", 5}};
    double *zero = calloc(rp_graph_num_nodes(g) + 1, sizeof *zero);
    double *rk = calloc((size_t)size + 1, sizeof *rk);
    if (measure &&
        (!zero || !rk ||
         rp_exec_predict(x, m, 3, zero, (unsigned)size, rk) != RP_OK ||
         rp_exec_stat_get(x, "net_latency_us", &own_net.latency_us) ||
         rp_exec_stat_get(x, "net_gbps", &own_net.gbps)) &&
        size > 1)
      fprintf(stderr, "bench_mpi_jacobi: mpi ping-pong failed: %s\n",
              rp_last_error());
    free(zero);
    free(rk);
  }
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(buf);
  return med;
}

/* own_net: the slope of the probe's time over its tasks (1 and 256
 * kernels per rank) a task's cost, the rest of the one-kernel run the
 * launch's; the net by ping-pong. */
static void own_calibrate(int rank, int size) {
  enum { K = 256 };
  uint32_t t1 = 0, tk = 0;
  own_net.latency_us = 0;
  own_net.gbps = 5;
  own_net.task_us = own_net.launch_us = 0;
  double a = own_probe(size, 1, &t1, 1);
  double b = own_probe(size, K, &tk, 0);
  if (a > 0 && b > a && tk > t1) {
    own_net.task_us = (b - a) / (double)(tk - t1);
    own_net.launch_us = a > t1 * own_net.task_us ? a - t1 * own_net.task_us : 0;
  } else if (b > 0 && tk) {
    own_net.task_us = b / (double)tk;
  }
  if (rank == 0)
    printf("mpi backend model (mpi_p/a): %.2f us + bytes / %.2f GB/s "
           "(ping-pong, %d ranks); %.3f us per task, %.1f us per launch "
           "(probe: %u tasks %.1f us, %u tasks %.1f us)\n",
           own_net.latency_us, own_net.gbps, size, own_net.task_us,
           own_net.launch_us, t1, a, tk, b);
}

/* The mpi backend's prediction of exec xo's replay (collective): its
 * tasks profiled by 5 replays of its own on every rank, each task's
 * median (xo's grids advance: call it after comparing them), simulated
 * with own_net; the largest over the ranks, per rank in prk; -1 on a
 * failure. */
static double own_predict(rp_exec *xo, double *prk, int size) {
  double worst = -1;
  double *nus =
      xo ? calloc(rp_graph_num_nodes(rp_exec_graph(xo)) + 1, sizeof *nus)
         : NULL;
  int ok = nus != NULL, all_ok = 0;
  for (int k = 0; ok && k < 5; k++) /* each task's median of 5 */
    ok = rp_exec_profile(xo, nus) == RP_OK;
  free(nus);
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const rp_exec_stat m[] = {{"latency_us", own_net.latency_us},
                            {"gbps", own_net.gbps},
                            {"task_us", own_net.task_us},
                            {"launch_us", own_net.launch_us}};
  rp_status rc =
      all_ok ? rp_exec_predict(xo, m, 4, NULL, (unsigned)size, prk) : RP_EINVAL;
  if (rc != RP_OK) {
    fprintf(stderr, "bench_mpi_jacobi: mpi backend prediction: %s (%s)\n",
            all_ok ? rp_status_name(rc) : "profile failed", rp_last_error());
    return -1;
  }
  for (int r = 0; r < size; r++)
    worst = prk[r] > worst ? prk[r] : worst;
  return worst;
}
#else
static void own_calibrate(int rank, int size) {
  (void)rank;
  (void)size;
}
static double own_predict(rp_exec *xo, double *prk, int size) {
  (void)xo;
  (void)prk;
  (void)size;
  return -1;
}
#endif

/* Starts tracing exec x (rp_exec_trace()): its later launches add to the
 * per-rank breakdown print_breakdown() prints. */
static void trace(rp_exec *x) { rp_exec_trace(x, 1); }

/* Gathers every rank's breakdown of x's traced launches on rank 0 and
 * prints where each rank's time went per replay (ms): task bodies,
 * packing halos, the scatter and gather through the host's rank, waiting
 * on receives, StarPU's scheduling, submitting, the rest; tasks per
 * replay, StarPU's time per task, registering (once, at creation). */
static void print_breakdown(const rp_exec *x, const char *title) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* the traced launches' totals (rp_exec_trace()) */
  double replays = stat0(x, "trace_replays"), tasks = stat0(x, "trace_tasks");
  double register_us = stat0(x, "register_us");
  double r = replays > 0 ? replays : 1, tk = tasks > 0 ? tasks : 1;
  enum { NF = 14 };
  double mine[NF] = {
      stat0(x, "trace_wall_us") / r,
      stat0(x, "trace_body_us") / r,
      stat0(x, "trace_halo_us") / r,
      (stat0(x, "trace_host_us") + stat0(x, "trace_host_recv_us")) / r,
      stat0(x, "trace_recv_us") / r,
      stat0(x, "trace_sched_us") / r,
      stat0(x, "trace_submit_wait_us") / r,
      stat0(x, "trace_other_us") / r,
      stat0(x, "trace_submit_us") / r,
      tasks / r,
      (stat0(x, "trace_sched_us") + stat0(x, "trace_done_lat_us")) / tk,
      stat0(x, "trace_ready_lat_us") / tk,
      register_us,
      replays};
  double *all = rank == 0 ? malloc(sizeof mine * (size_t)size) : NULL;
  MPI_Gather(mine, NF, MPI_DOUBLE, all, NF, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank != 0)
    return;
  printf("  where the time went per replay, by rank (ms; %s)\n"
         "  %4s %8s %8s %8s %8s %8s %8s %8s %8s %8s %6s %7s %7s %7s\n",
         title, "rank", "wall", "bodies", "halo_pk", "scat_gth", "recv_wt",
         "sched", "sub_wt", "other", "submit", "tasks", "us/task", "rdy_us",
         "reg_ms");
  for (int q = 0; q < size && all; q++) {
    const double *v = all + (size_t)q * NF;
    printf("  %4d %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f "
           "%6.0f %7.1f %7.1f %7.2f\n",
           q, v[0] * 1e-3, v[1] * 1e-3, v[2] * 1e-3, v[3] * 1e-3, v[4] * 1e-3,
           v[5] * 1e-3, v[6] * 1e-3, v[7] * 1e-3, v[8] * 1e-3, v[9], v[10],
           v[11], v[12] * 1e-3);
  }
  free(all);
}

/* One grid size in one form: prints its row and its breakdown; 1 when
 * the grids differ, 2 on a failure. */
static int one(int heat, uint64_t n, int dist, unsigned steps, unsigned runs,
               const net_model *net, int rank, int size) {
  uint64_t nn = n * n, r0, r1;
  rows(n, rank, size, &r0, &r1);
  /* reprise's grids whole on every rank (as registered); the hand-written
   * code's whole grids on rank 0 only (the replicated form scatters from
   * and gathers to them), its window of rows [r0 - 1, r1 + 1) here */
  uint64_t mn = rank == 0 ? nn : 1, wn = (r1 - r0 + 2) * n;
  double *a = malloc(nn * 8), *b = malloc(nn * 8), s[1];
  double *ma = malloc(mn * 8), *mb = malloc(mn * 8);
  double *la = calloc(wn, 8), *lb = calloc(wn, 8);
  double *tm = malloc(runs * sizeof *tm), *tr = malloc(runs * sizeof *tr);
  double *mr = malloc(runs * sizeof *mr); /* this rank's own times */
  double *to = malloc(runs * sizeof *to); /* the own engine's times */
  double *tw = malloc(runs * sizeof *tw); /* the same, stencils whole */
  double *om = malloc(runs * sizeof *om); /* this rank's own-engine times */
  int wh = own_on && own_whole;
  double *a3 = wh ? malloc(nn * 8) : NULL;
  double *b3 = wh ? malloc(nn * 8) : NULL;
  double *a2 = own_on ? malloc(nn * 8) : NULL;
  double *b2 = own_on ? malloc(nn * 8) : NULL;
  int *cnt = malloc((size_t)size * sizeof *cnt);
  int *dsp = malloc((size_t)size * sizeof *dsp);
  if (!a || !b || !ma || !mb || !la || !lb || !tm || !tr || !mr || !cnt ||
      !dsp || !to || !tw || !om || (own_on && (!a2 || !b2)) ||
      (wh && (!a3 || !b3))) {
    fprintf(stderr, "bench_mpi_jacobi: out of memory at n = %llu\n",
            (unsigned long long)n);
    return 2;
  }
  for (int r = 0; r < size; r++) {
    uint64_t r0, r1;
    rows(n, r, size, &r0, &r1);
    cnt[r] = (int)((r1 - r0) * n);
    dsp[r] = (int)(r0 * n);
  }
  ex_jacobi2d p;
  memset(&p, 0, sizeof p);
  p.n = n;
  p.steps = steps;
  p.every = 0;
  p.blocks = (unsigned)size;
  p.devices = (unsigned)size;
  ex_heat2d hp;
  memset(&hp, 0, sizeof hp);
  hp.n = n;
  hp.steps = steps;
  hp.devices = (unsigned)size;
  rp_graph *g = NULL;
  rp_exec *x = NULL;
  if (heat)
    ex_heat2d_init(&hp, a, b);
  else
    ex_jacobi2d_init(&p, a, b, s);
  if (rank == 0) {
    memcpy(ma, a, nn * 8);
    memcpy(mb, b, nn * 8);
  }
  /* buffers 0 and 1: A and B, or U and V; the set-up timed is
   * rp_exec_create's (lowering, registration; StarPU already started) */
  double c0 = 0;
  if (rp_graph_create(&g, 0) ||
      (heat ? ex_heat2d_record(g, &hp, a, b)
            : ex_jacobi2d_record(g, &p, a, b, s)) ||
      (dist && (rp_buffer_distribute(g, 0, (unsigned)size, NULL) ||
                rp_buffer_distribute(g, 1, (unsigned)size, NULL))) ||
      rp_graph_end(g) || (c0 = rp_clock_us()) < 0 ||
      !(x = exm_exec(g, "bench_mpi_jacobi"))) {
    fprintf(stderr, "bench_mpi_jacobi: n = %llu: setup failed: %s\n",
            (unsigned long long)n, rp_last_error());
    return 2;
  }
  double setup = max_all(rp_clock_us() - c0);
  rp_exec *xo = NULL;
  double own_setup = -1, own_first = -1; /* create, first run (max) */
  if (own_on) { /* its grids from the same initial values */
    memcpy(a2, a, nn * 8);
    memcpy(b2, b, nn * 8);
    double oc0 = rp_clock_us();
    xo = own_exec(g, a2, b2, nn);
    own_setup = max_all(rp_clock_us() - oc0);
  }
  rp_exec *xw = NULL;
  if (wh) { /* the same with its stencils whole */
    memcpy(a3, a, nn * 8);
    memcpy(b3, b, nn * 8);
    xw = own_exec_mode(g, a3, b3, nn, "whole");
  }
  if (dist) {
    fill_window(n, a, la, rank, size); /* a, b: still the initial grids */
    fill_window(n, b, lb, rank, size);
  }
  /* the first run of each (reprise's: its first scatter in the replicated
   * form), then alternating timed runs */
  double first =
      timed(1, dist, x, n, steps, a, b, la, lb, rank, size, cnt, dsp);
  timed(0, dist, x, n, steps, ma, mb, la, lb, rank, size, cnt, dsp);
  if (xo)
    own_first =
        timed(2, dist, xo, n, steps, a2, b2, la, lb, rank, size, cnt, dsp);
  if (xw)
    timed(3, dist, xw, n, steps, a3, b3, la, lb, rank, size, cnt, dsp);
  memset(th, 0, sizeof th);
  nth = 0;
  double body0 = 0, body1 = 0; /* the task bodies' CPU time */
  rp_exec_stat_get(x, "body_cpu_us", &body0);
  trace(x);
  for (unsigned r = 0; r < runs; r++) {
    tm[r] = timed(0, dist, x, n, steps, ma, mb, la, lb, rank, size, cnt, dsp);
    tr[r] = timed(1, dist, x, n, steps, a, b, la, lb, rank, size, cnt, dsp);
    mr[r] = own_us;
    to[r] =
        xo ? timed(2, dist, xo, n, steps, a2, b2, la, lb, rank, size, cnt, dsp)
           : -1;
    om[r] = own_us;
    tw[r] =
        xw ? timed(3, dist, xw, n, steps, a3, b3, la, lb, rank, size, cnt, dsp)
           : -1;
  }
  qsort(to, runs, sizeof *to, cmp_d);
  qsort(tw, runs, sizeof *tw, cmp_d);
  rp_exec_stat_get(x, "body_cpu_us", &body1);
  qsort(tm, runs, sizeof *tm, cmp_d);
  qsort(tr, runs, sizeof *tr, cmp_d);
  qsort(mr, runs, sizeof *mr, cmp_d);
  int same;
  if (dist)
    same = same_rows(n, a, la, rank, size) && same_rows(n, b, lb, rank, size);
  else
    same = rank != 0 || (!memcmp(a, ma, nn * 8) && !memcmp(b, mb, nn * 8));
  int all_same;
  MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  /* the own engine's grids against the hand-written code's, likewise */
  int own_same = 0, all_own = 0;
  if (xo && dist)
    own_same =
        same_rows(n, a2, la, rank, size) && same_rows(n, b2, lb, rank, size);
  else if (xo)
    own_same =
        rank != 0 || (!memcmp(a2, ma, nn * 8) && !memcmp(b2, mb, nn * 8));
  if (xw && dist)
    own_same = own_same && same_rows(n, a3, la, rank, size) &&
               same_rows(n, b3, lb, rank, size);
  else if (xw)
    own_same =
        own_same &&
        (rank != 0 || (!memcmp(a3, ma, nn * 8) && !memcmp(b3, mb, nn * 8)));
  MPI_Allreduce(&own_same, &all_own, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  /* the predictions (rank 0): the net model over the lowering every rank
   * executes (rp_exec_predict() on the starpu exec), per rank and
   * overall, and the
   * analysis' makespan (no cost per task or request) */
  double *prk = calloc((size_t)size, sizeof *prk);
  double *ach = rank == 0 ? calloc((size_t)size, sizeof *ach) : NULL;
  double pred = -1, pan = -1, med = mr[runs / 2];
  MPI_Gather(&med, 1, MPI_DOUBLE, ach, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  double *us = rank == 0 ? profile(g) : NULL;
  if (us && prk)
    pred = predict(x, size, net, us, prk);
  /* the same with the bodies slowed by the probe's memory sharing */
  net_model nm = *net;
  nm.body_scale = mem_scale;
  double pm = -1, *pmr = calloc((size_t)size, sizeof *pmr);
  if (us && pmr)
    pm = predict(x, size, &nm, us, pmr);
  free(pmr);
  if (us)
    pan = predict_analysis(g, size, us, net);
  /* the own engine's: the same simulation of every rank's tasks (the two
   * lowerings place, cut and order alike) with no cost per task, request
   * or launch, its threads per rank */
  double opred = -1, *por = calloc((size_t)size, sizeof *por);
  net_model no = {net->latency_us,
                  net->gbps,
                  0,
                  0,
                  0,
                  (unsigned)(own_threads > 0 ? own_threads : 1),
                  1};
  if (xo && us && por)
    opred = predict(x, size, &no, us, por);
  free(por);
  /* the mpi backend's own model of what it runs (rp_exec_predict: its
   * lists after the cut, its engine's cost per task, the ping-pong's
   * network), against its median per rank and overall */
  double *mprk = calloc((size_t)size + 1, sizeof *mprk);
  double *mach = rank == 0 ? calloc((size_t)size + 1, sizeof *mach) : NULL;
  qsort(om, runs, sizeof *om, cmp_d);
  double omed = om[runs / 2];
  MPI_Gather(&omed, 1, MPI_DOUBLE, mach, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  double mpred = mprk && xo ? own_predict(xo, mprk, size) : -1;
  free(us);
  int bad = !all_same || (xo && !all_own);
  if (exm_check_lowering(x, "bench_mpi_jacobi"))
    bad = 2;
  if (rank == 0)
    printf("%-6s %6llu %-11s %9u %10.2f %10.2f %7.3f %9s %10.2f %7.3f "
           "%9.1f %9.1f %7.3f %7.3f %9.2f %9.3f %9s %8.3f %9.2f %9.3f "
           "%8.3f %10.2f\n",
           heat ? "heat" : "jacobi", (unsigned long long)n,
           dist ? "distributed" : "replicated", rp_graph_num_nodes(g),
           tm[runs / 2] * 1e-3, tr[runs / 2] * 1e-3,
           tr[runs / 2] / tm[runs / 2], all_same ? "identical" : "DIFFER",
           pred * 1e-3, pred / tr[runs / 2], setup * 1e-3, first * 1e-3,
           pan / tr[runs / 2], pm / tr[runs / 2], to[runs / 2] * 1e-3,
           to[runs / 2] / tm[runs / 2],
           !xo       ? "-"
           : all_own ? "identical"
                     : "DIFFER",
           opred / to[runs / 2], xw ? tw[runs / 2] * 1e-3 : -1,
           xw ? tw[runs / 2] / to[runs / 2] : -1,
           xo && mpred > 0 ? mpred / to[runs / 2] : -1,
           xo ? (own_setup + own_first) / to[runs / 2] : -1);
  print_slices(xo, rank, size);
  if (rank == 0 && ach && pred > 0) {
    printf("  predicted per rank (ms per run, each rank's own median):\n"
           "  %4s %9s %9s %8s\n",
           "rank", "pred_ms", "ach_ms", "pred/ach");
    for (int r = 0; r < size; r++)
      printf("  %4d %9.2f %9.2f %8.3f\n", r, prk[r] * 1e-3, ach[r] * 1e-3,
             ach[r] > 0 ? prk[r] / ach[r] : 0);
  }
  free(prk);
  free(ach);
  if (rank == 0 && mach && mpred > 0) {
    printf("  mpi backend predicted per rank (rp_exec_predict; ms per run, "
           "each rank's own median; set-up %.2f ms, first run %.2f ms):\n",
           own_setup * 1e-3, own_first * 1e-3);
    for (int r = 0; r < size; r++)
      printf("  mpi_rank %d pred_ms %.3f ach_ms %.3f mpi_p/a %.3f\n", r,
             mprk[r] * 1e-3, mach[r] * 1e-3,
             mach[r] > 0 ? mprk[r] / mach[r] : 0);
  }
  free(mprk);
  free(mach);
  char title[64];
  snprintf(title, sizeof title, "%s, n = %llu, %s", heat ? "heat" : "jacobi",
           (unsigned long long)n, dist ? "distributed" : "replicated");
  print_breakdown(x, title);
  print_threads(rank, size, runs, (body1 - body0) * 1e-3 / runs);
  fflush(stdout);
  rp_exec_destroy(xo);
  rp_exec_destroy(xw);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(a2);
  free(b2);
  free(a3);
  free(b3);
  free(tw);
  free(om);
  free(to);
  free(a);
  free(b);
  free(ma);
  free(mb);
  free(la);
  free(lb);
  free(tm);
  free(tr);
  free(mr);
  free(cnt);
  free(dsp);
  return bad;
}

/* Rank 0 prints where each rank's threads run (the layout figures of
 * starpu exec x in mode "mpi", rp_exec_stats()): the ranks sharing its
 * node, its workers and their cores, the MPI thread's core. */
static void print_layout(const rp_exec *x, int rank, int size) {
  static const char *const names[7] = {"local_ranks", "local_rank", "cores",
                                       "bound",       "workers",    "first_cpu",
                                       "mpi_cpu"};
  int mine[7];
  for (int i = 0; i < 7; i++)
    mine[i] = (int)stat0(x, names[i]);
  int *all = rank == 0 ? malloc(sizeof mine * (size_t)size) : NULL;
  MPI_Gather(mine, 7, MPI_INT, all, 7, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank != 0 || !all)
    return;
  printf("placement (per rank: ranks on its node, cores, workers, cores "
         "bound):\n");
  for (int r = 0; r < size; r++) {
    const int *v = all + 7 * r;
    if (v[3])
      printf("  rank %d: %d of %d on its node (%d cores): %d worker(s) on "
             "cores %d-%d, MPI thread on core %d\n",
             r, v[1], v[0], v[2], v[4], v[5],
             v[5] + (v[4] < v[6] - v[5] ? v[4] : v[6] - v[5]) - 1, v[6]);
    else
      printf("  rank %d: %d of %d on its node (%d cores): %d worker(s), "
             "not bound (fewer than 2 cores per rank, or placed by the user "
             "or launcher)\n",
             r, v[1], v[0], v[2], v[4]);
  }
  free(all);
}

/* Rank 0 prints the mpi backend's threads and cores on every rank (exec
 * x: that backend's; NULL: nothing). */
static void print_own_layout(const rp_exec *x, int rank, int size) {
  int *all = own_gather(x, 0, rank, size);
  if (rank != 0 || !all)
    return;
  printf("placement of the mpi backend (own engine; per rank):\n");
  for (int r = 0; r < size; r++) {
    const int *v = all + 5 * r;
    if (v[0] < 0)
      printf("  rank %d: unknown\n", r);
    else if (v[1])
      printf("  rank %d: %d thread(s) on cores %d-%d\n", r, v[0], v[2], v[3]);
    else
      printf("  rank %d: %d thread(s), not bound (placed by the launcher, "
             "or fewer cores than ranks)\n",
             r, v[0]);
  }
  free(all);
}

int main(int argc, char **argv) {
  int rank, size;
  /* the column reprise_ms, the probe and the breakdowns are StarPU's (the
   * examples' default may be the mpi backend): the own engine is timed
   * apart (own_exec) */
  setenv("REPRISE_MPI_BACKEND", "starpu", 1);
  if (exm_start(&argc, &argv, &rank, &size))
    return 2;
  unsigned steps[8] = {20}, nsteps = 1, runs = 5;
  double lat = 2, gbps = 5, task_us = -1, msg_us = -1, launch_us = -1;
  double body_scale = -1;
  uint64_t sizes[8] = {256, 1024, 2048};
  unsigned nsz = 3;
  int forms = 3; /* bit 0 replicated, bit 1 distributed */
  int heat = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
      nsteps = 0;
      for (char *t = strtok(argv[++i], ","); t && nsteps < 8;
           t = strtok(NULL, ","))
        steps[nsteps++] = (unsigned)atoi(t);
    } else if (!strcmp(argv[i], "--net-latency-us") && i + 1 < argc)
      lat = atof(argv[++i]);
    else if (!strcmp(argv[i], "--net-gbps") && i + 1 < argc)
      gbps = atof(argv[++i]);
    else if (!strcmp(argv[i], "--net-task-us") && i + 1 < argc)
      task_us = atof(argv[++i]);
    else if (!strcmp(argv[i], "--net-msg-us") && i + 1 < argc)
      msg_us = atof(argv[++i]);
    else if (!strcmp(argv[i], "--net-launch-us") && i + 1 < argc)
      launch_us = atof(argv[++i]);
    else if (!strcmp(argv[i], "--net-body-scale") && i + 1 < argc)
      body_scale = atof(argv[++i]);
    else if (!strcmp(argv[i], "--own") && i + 1 < argc)
      own_on = atoi(argv[++i]) != 0;
    else if (!strcmp(argv[i], "--own-whole") && i + 1 < argc)
      own_whole = atoi(argv[++i]) != 0;
    else if (!strcmp(argv[i], "--own-threads") && i + 1 < argc)
      own_threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--app") && i + 1 < argc)
      heat = !strcmp(argv[++i], "heat");
    else if (!strcmp(argv[i], "--form") && i + 1 < argc) {
      const char *f = argv[++i];
      forms = !strcmp(f, "replicated") ? 1 : !strcmp(f, "distributed") ? 2 : 3;
    } else if (!strcmp(argv[i], "--n") && i + 1 < argc) {
      nsz = 0;
      for (char *t = strtok(argv[++i], ","); t && nsz < 8;
           t = strtok(NULL, ","))
        sizes[nsz++] = strtoull(t, NULL, 10);
    } else {
      if (rank == 0)
        fprintf(stderr,
                "usage: bench_mpi_jacobi [--n N,N,...] "
                "[--steps S,S,...] [--runs R] "
                "[--form replicated|distributed|both] [--app jacobi|heat] "
                "[--net-latency-us L] [--net-gbps B] [--net-task-us T] "
                "[--net-msg-us M] [--net-launch-us S] "
                "[--net-body-scale X] [--own 0|1] [--own-threads T] "
                "[--own-whole 0|1]\n");
      return exm_finish(2);
    }
  }
  if (runs < 5)
    runs = 5;
  const rp_backend *ob;
  if (own_on &&
      (rp_backend_find("mpi", &ob) != RP_OK || rp_backend_probe(ob) != RP_OK))
    own_on = 0; /* not built */
  if (rank == 0)
    printf("bench_mpi_jacobi: %d ranks, %u steps per run (or as listed per "
           "grid), median of %u "
           "runs; net %.1f us + bytes / %.2f GB/s\n%-6s %6s %-11s %9s %10s "
           "%10s %7s %9s %10s %7s %9s %9s %7s %7s %9s %9s %9s %8s %9s %9s %8s "
           "%10s\n",
           size, steps[0], runs, lat, gbps, "app", "n", "form", "graph_ops",
           "mpi_ms", "reprise_ms", "ratio", "results", "pred_ms", "pred/ach",
           "setup_ms", "first_ms", "an/ach", "pm/ach", "own_ms", "own_ratio",
           "own_res", "own_p/a", "whole_ms", "whole/own", "mpi_p/a",
           "own_1st/rep");
  hand_steps = heat ? heat_steps : mpi_steps;
  net_model net = {lat, gbps, 0, 0, 0, 1, 1};
  { /* start StarPU(-MPI) before anything is timed: a tiny exec */
    ex_heat2d tp = {(uint64_t)(size < 3 ? 3 : size), 1, (unsigned)size, 0};
    double *tu = calloc(tp.n * tp.n, 8), *tv = calloc(tp.n * tp.n, 8);
    rp_graph *tg = NULL;
    rp_exec *tx = NULL;
    if (tu && tv && !rp_graph_create(&tg, 0) &&
        !ex_heat2d_record(tg, &tp, tu, tv) && !rp_graph_end(tg))
      tx = exm_exec(tg, "bench_mpi_jacobi");
    print_layout(tx, rank, size);
    if (own_on) { /* the own engine's threads and cores, on the same graph */
      double *u2 = calloc(tp.n * tp.n, 8), *v2 = calloc(tp.n * tp.n, 8);
      rp_exec *ox = u2 && v2 && tg ? own_exec(tg, u2, v2, tp.n * tp.n) : NULL;
      print_own_layout(ox, rank, size);
      rp_exec_destroy(ox);
      free(u2);
      free(v2);
    }
    double w;
    if (tx && rp_exec_stat_get(tx, "workers", &w) == RP_OK)
      net.workers = (unsigned)(w > 0 ? w : 1);
    rp_exec_destroy(tx);
    rp_graph_destroy(tg);
    free(tu);
    free(tv);
  }
  calibrate(rank, size, &net);
  if (own_on)
    own_calibrate(rank, size);
  if (task_us >= 0)
    net.task_us = task_us;
  if (msg_us >= 0)
    net.msg_us = msg_us;
  if (launch_us >= 0)
    net.launch_us = launch_us;
  if (body_scale > 0)
    net.body_scale = body_scale;
  int bad = 0;
  for (unsigned k = 0; k < nsz && bad < 2; k++)
    for (int f = 0; f < 2 && bad < 2; f++)
      if (forms & (1 << f)) {
        unsigned st = steps[k < nsteps ? k : nsteps - 1];
        int r = one(heat, sizes[k], f, st, runs, &net, rank, size);
        bad = r > bad ? r : bad;
      }
  return exm_finish(bad);
}
