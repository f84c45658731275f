/* Calibration: measures a backend's machine model by replaying small graphs
 * through the public replay API (chains of empty operations in every mode,
 * copies of two sizes alone and in both directions at once, peer copies;
 * on a team of threads, independent and split tasks, a compute-bound and a
 * streaming kernel against one thread). */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "measure/measure.h"

#define CHAIN_SHORT 8
#define CHAIN_LONG 64
#define COPY_SMALL (1u << 20)
#define COPY_LARGE (32u << 20)
/* Backends but cuda copy in host memory (when they copy at all): smaller
 * copies show their bandwidth as well, in less time. */
#define COPY_SCALE_CPU 4

static void nop_kernel(const rp_kargs *a, const uint64_t lo[3],
                       const uint64_t hi[3]) {
  (void)a;
  (void)lo;
  (void)hi;
}

static void nop_host(void *user, void *const *ptrs) {
  (void)user;
  (void)ptrs;
}

static void nop2_kernel(const rp_kargs *a, const uint64_t lo[3],
                        const uint64_t hi[3]) {
  (void)a;
  (void)lo;
  (void)hi;
}
static const rp_param nop2_params[] = {{"in", RP_IN}, {"x", RP_INOUT}};
static const rp_kernel nop2 =
    RP_KERNEL_WITH(.name = "rp_calibrate_nop2", .nparams = 2,
                   .params = nop2_params, .cpu = nop2_kernel);

static const rp_param nop_params[] = {{"x", RP_INOUT}};
static const rp_kernel nop =
    RP_KERNEL_WITH(.name = "rp_calibrate_nop", .nparams = 1,
                   .params = nop_params, .cpu = nop_kernel);

/* The team's kernels work by rows: a point of the index space is a row
 * of `cols` elements, so that a block of fewer than 8192 rows is never
 * split over the team (the cost of splitting is measured apart).
 *
 * A streaming kernel: y = 0.5 * y + x * x over the rows [lo, hi) of its
 * block (x in, y inout: 3 streams). */
static void triad_kernel(const rp_kargs *a, const uint64_t lo[3],
                         const uint64_t hi[3]) {
  const float *x = (const float *)a->a[0].p;
  float *y = (float *)a->a[1].p;
  uint64_t o = (uint64_t)a->a[2].i64, cols = (uint64_t)a->a[3].i64;
  for (int64_t p = 0; p < a->a[4].i64; p++) /* passes over the block */
    for (uint64_t j = lo[0]; j < hi[0]; j++)
      for (uint64_t i = 0; i < cols; i++) {
        uint64_t k = o + j * cols + i;
        y[k] = 0.5f * y[k] + x[k] * x[k];
      }
}
static const rp_param triad_params[] = {{"x", RP_IN},
                                        {"y", RP_INOUT},
                                        {"off", RP_SCALAR},
                                        {"cols", RP_SCALAR},
                                        {"passes", RP_SCALAR}};
static const rp_kernel triad =
    RP_KERNEL_WITH(.name = "rp_calibrate_triad", .nparams = 5,
                   .params = triad_params, .cpu = triad_kernel);

/* A compute-bound kernel: SPIN_ITERS steps of a logistic map per element
 * in registers, the result stored (so that nothing is optimised away). */
#define SPIN_ITERS 32
static void spin_kernel(const rp_kargs *a, const uint64_t lo[3],
                        const uint64_t hi[3]) {
  float *y = (float *)a->a[0].p;
  uint64_t o = (uint64_t)a->a[1].i64, cols = (uint64_t)a->a[2].i64;
  for (uint64_t j = lo[0]; j < hi[0]; j++)
    for (uint64_t i = 0; i < cols; i++) {
      uint64_t k = o + j * cols + i;
      double v = 0.25 + 1e-7 * (double)k;
      for (int t = 0; t < SPIN_ITERS; t++)
        v = 3.7 * v * (1 - v);
      y[k] = (float)v;
    }
}
static const rp_param spin_params[] = {
    {"y", RP_OUT}, {"off", RP_SCALAR}, {"cols", RP_SCALAR}};
static const rp_kernel spin =
    RP_KERNEL_WITH(.name = "rp_calibrate_spin", .nparams = 3,
                   .params = spin_params, .cpu = spin_kernel);

/* Calibrations run by this process. */
static _Atomic unsigned long ncalibrations;

unsigned long rp_model_calibrations(void) {
  return atomic_load(&ncalibrations);
}

typedef enum { CHAIN_KERNEL, CHAIN_COPY, CHAIN_HOST } chain_kind;

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* Median over `runs` timed rp_exec_run()s of `iters` iterations, per
 * iteration, after one untimed run. */
static rp_status time_exec(rp_exec *x, unsigned runs, unsigned iters,
                           double *us) {
  double t[64];
  rp_status s = runs ? rp_exec_run(x, 1) : RP_OK;
  if (!runs) /* warm already: one timed run */
    runs = 1;
  for (unsigned i = 0; s == RP_OK && i < runs; i++) {
    s = rp_exec_run(x, iters);
    t[i] = rp_exec_last_us(x) / iters;
  }
  if (s != RP_OK)
    return s;
  qsort(t, runs, sizeof t[0], cmp_double);
  *us = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
  return RP_OK;
}

/* Exec options as given (or zeroed) with another mode. */
static rp_exec_opts with_mode(const rp_exec_opts *xo, const char *mode) {
  rp_exec_opts o;
  if (xo)
    o = *xo;
  else
    rp_exec_opts_init(&o);
  o.mode = mode;
  return o;
}

/* Instantiates g on be in mode and times it. */
static rp_status time_graph(rp_graph *g, const rp_backend *be,
                            const rp_exec_opts *xo, const char *mode,
                            unsigned runs, unsigned iters, double *us) {
  rp_exec_opts o = with_mode(xo, mode);
  rp_exec *x = NULL;
  rp_status s = rp_exec_create(&x, g, be, &o);
  if (s == RP_OK)
    s = time_exec(x, runs, iters, us);
  rp_exec_destroy(x);
  return s;
}

/* Ends a graph recorded with status s: *out on success, else destroyed. */
static rp_status finish(rp_graph *g, rp_status s, rp_graph **out) {
  if (s == RP_OK)
    s = rp_graph_end(g);
  if (s != RP_OK) {
    rp_graph_destroy(g);
    return s;
  }
  *out = g;
  return RP_OK;
}

/* A chain of n empty operations of one kind, each depending on the last. */
static rp_status chain(rp_graph **out, chain_kind kind, unsigned n,
                       void *host) {
  rp_graph *g;
  rp_buf b;
  rp_status s = rp_graph_create(&g, RP_GRAPH_NO_COHERENCE);
  if (s != RP_OK)
    return s;
  s = rp_buffer_register(g, "x", host, 64, &b);
  for (unsigned i = 0; s == RP_OK && i < n; i++) {
    if (kind == CHAIN_KERNEL) {
      rp_arg arg = rp_arg_buf(rp_whole(b));
      s = rp_record_kernel(g, &nop, 0, rp_dims3(1, 1, 1), &arg, NULL, NULL);
    } else if (kind == CHAIN_COPY) {
      s = rp_record_copy_to_device(g, rp_range_bytes(b, 0, 4), 0, NULL, NULL);
    } else {
      rp_access a = {rp_whole(b), RP_INOUT};
      s = rp_record_host(g, nop_host, NULL, &a, 1, NULL, NULL);
    }
  }
  return finish(g, s, out);
}

/* Per-operation and per-replay overhead of a chain kind in one mode: the
 * slope and intercept between a short and a long chain. */
static rp_status chain_cost(chain_kind kind, const rp_backend *be,
                            const rp_exec_opts *xo, const char *mode,
                            unsigned runs, double *op_us, double *run_us) {
  static char host[64];
  double t[2];
  const unsigned len[2] = {CHAIN_SHORT, CHAIN_LONG};
  for (int i = 0; i < 2; i++) {
    rp_graph *g = NULL;
    rp_status s = chain(&g, kind, len[i], host);
    if (s == RP_OK)
      s = time_graph(g, be, xo, mode, runs, 10, &t[i]);
    rp_graph_destroy(g);
    if (s != RP_OK)
      return s;
  }
  double slope = (t[1] - t[0]) / (CHAIN_LONG - CHAIN_SHORT);
  *op_us = slope > 0 ? slope : 0;
  double icpt = t[0] - CHAIN_SHORT * *op_us;
  *run_us = icpt > 0 ? icpt : 0;
  return RP_OK;
}

/* One graph of independent copies: h2d of buffer a and/or d2h of buffer b,
 * each of `bytes`, or a peer copy 0 -> 1 of a. */
typedef enum { CP_H2D = 1, CP_D2H = 2, CP_BOTH = 3, CP_PEER = 4 } cp_kind;

static rp_status copy_time(cp_kind k, uint64_t bytes, char *a, char *b,
                           const rp_backend *be, const rp_exec_opts *xo,
                           const char *mode, unsigned runs, double *us) {
  rp_graph *g;
  rp_buf ba, bb;
  rp_status s = rp_graph_create(&g, RP_GRAPH_NO_COHERENCE);
  if (s != RP_OK)
    return s;
  if ((s = rp_buffer_register(g, "a", a, bytes, &ba)) == RP_OK)
    s = rp_buffer_register(g, "b", b, bytes, &bb);
  if (s == RP_OK && (k & CP_H2D))
    s = rp_record_copy_to_device(g, rp_whole(ba), 0, NULL, NULL);
  if (s == RP_OK && (k & CP_D2H))
    s = rp_record_copy_to_host(g, rp_whole(bb), 0, NULL, NULL);
  if (s == RP_OK && k == CP_PEER)
    s = rp_record_copy_peer(g, rp_whole(ba), 0, 1, NULL, NULL);
  if (s == RP_OK)
    s = rp_graph_end(g);
  if (s == RP_OK)
    s = time_graph(g, be, xo, mode, runs, 3, us);
  rp_graph_destroy(g);
  return s;
}

/* Bandwidth and latency of one copy kind from two sizes, given the mode's
 * fixed overhead (per replay and per operation). Copies that do not grow with their size (elided: host and
 * device share memory) get gbps 0, meaning free. */
static rp_status measure_link(cp_kind k, uint64_t small, uint64_t large,
                              char *a, char *b, const rp_backend *be,
                              const rp_exec_opts *xo, const char *mode,
                              double fixed, unsigned runs, rp_model_link *l,
                              double *large_xfer_us) {
  double t1, t2;
  rp_status s;
  if ((s = copy_time(k, small, a, b, be, xo, mode, runs, &t1)) ||
      (s = copy_time(k, large, a, b, be, xo, mode, runs, &t2)))
    return s;
  /* Less than 1 us per MiB more for 31 MiB more, or not twice the time
   * for 32 times the bytes: faster than any link, or nothing but noise
   * on a loaded machine (an elided copy). */
  if (t2 - t1 < (double)(large - small) / 1048576.0 || t2 < 2 * t1) {
    l->gbps = 0;
    l->latency_us = 0;
    *large_xfer_us = 0;
    return RP_OK;
  }
  l->gbps = (double)(large - small) / (t2 - t1) / 1e3;
  double lat = t1 - fixed - (double)small / (l->gbps * 1e3);
  l->latency_us = lat > 0 ? lat : 0;
  *large_xfer_us = t2 - fixed - l->latency_us;
  return RP_OK;
}

/* A graph of `nblk` independent kernels of kernel k over blocks of `rows`
 * rows of `cols` floats of x (the triad's) and y, each fewer than 8192
 * rows: none is split. */
static rp_status blocks_graph(rp_graph **out, const rp_kernel *k, float *x,
                              float *y, unsigned nblk, uint64_t cols,
                              uint64_t rows, int64_t passes) {
  rp_graph *g;
  rp_buf bx = RP_NONE, by;
  uint64_t blk = cols * rows, bytes = blk * sizeof(float);
  rp_status s = rp_graph_create(&g, RP_GRAPH_NO_COHERENCE);
  if (s != RP_OK)
    return s;
  if (x)
    s = rp_buffer_register(g, "x", x, bytes * nblk, &bx);
  if (s == RP_OK)
    s = rp_buffer_register(g, "y", y, bytes * nblk, &by);
  for (unsigned b = 0; s == RP_OK && b < nblk; b++) {
    uint64_t off = (uint64_t)b * bytes;
    rp_arg args[5];
    unsigned na = 0;
    if (x)
      args[na++] = rp_arg_buf(rp_range_bytes(bx, off, bytes));
    args[na++] = rp_arg_buf(rp_range_bytes(by, off, bytes));
    args[na++] = rp_arg_i64((int64_t)(b * blk));
    args[na++] = rp_arg_i64((int64_t)cols);
    if (x)
      args[na++] = rp_arg_i64(passes);
    s = rp_record_kernel(g, k, 0, rp_dims3(rows, 1, 1), args, NULL, NULL);
  }
  return finish(g, s, out);
}

/* Serial and overlapped replays of g timed in alternating rounds; the
 * median of the rounds' ratios (serial / overlapped, less `overhead` us
 * of the overlapped replay's own costs) and the median serial time. On a shared machine a change of load between two timings
 * moves one round, not the result (one pair of timings gave ratios of
 * 0.12-0.92 from one calibration to the next). */
enum { TEAM_ROUNDS = 7 };
static rp_status team_ratio(rp_graph *g, const rp_backend *be,
                            const rp_exec_opts *xo, unsigned runs,
                            unsigned iters, double overhead, double *ratio,
                            double *serial) {
  double r[TEAM_ROUNDS], ts[TEAM_ROUNDS];
  /* Rounds: the runs asked for, 3 to TEAM_ROUNDS. */
  const unsigned nr = runs < 3 ? 3 : runs > TEAM_ROUNDS ? TEAM_ROUNDS : runs;
  rp_exec_opts op = with_mode(xo, "parallel"), os = with_mode(xo, "serial");
  rp_exec *xp = NULL, *xs = NULL;
  rp_status s = rp_exec_create(&xp, g, be, &op);
  if (s == RP_OK)
    s = rp_exec_create(&xs, g, be, &os);
  /* Warm both (the first launch of a team also chooses its owners), then
   * one timed run of each per round. */
  if (s == RP_OK && (s = rp_exec_run(xp, iters)) == RP_OK)
    s = rp_exec_run(xs, iters);
  for (unsigned k = 0; s == RP_OK && k < nr; k++) {
    double tp;
    if ((s = time_exec(xp, 0, iters, &tp)) ||
        (s = time_exec(xs, 0, iters, &ts[k])))
      break;
    /* The overlapped replay's own costs (per replay, per task) are in
     * the model apart: the ratio is the work's. */
    tp = tp - overhead > 0.25 * tp ? tp - overhead : 0.25 * tp;
    r[k] = tp > 0 ? ts[k] / tp : 1;
  }
  rp_exec_destroy(xp);
  rp_exec_destroy(xs);
  if (s != RP_OK)
    return s;
  qsort(r, nr, sizeof r[0], cmp_double);
  qsort(ts, nr, sizeof ts[0], cmp_double);
  *ratio = r[nr / 2];
  *serial = ts[nr / 2];
  return RP_OK;
}

/* Streaming bandwidth (GB/s) of the triad over `floats` floats of x and
 * of y, in 4 blocks per thread, each swept `passes` times, by one thread
 * and by the team (less `overhead` us of its own costs per replay). */
static rp_status bandwidth(const rp_backend *be, const rp_exec_opts *xo,
                           unsigned runs, unsigned threads, uint64_t floats,
                           int64_t passes, double overhead, double *one,
                           double *team) {
  const uint64_t nblk = 4 * (uint64_t)threads;
  const uint64_t cols = floats / nblk >= 1024 ? 1024 : 64;
  const uint64_t rows = floats / (cols * nblk);
  floats = nblk * rows * cols;
  float *x = malloc(sizeof(float) * floats),
        *y = malloc(sizeof(float) * floats);
  rp_graph *g = NULL;
  rp_status s = RP_ENOMEM;
  if (x && y) {
    for (uint64_t i = 0; i < floats; i++)
      x[i] = y[i] = (float)(i & 255) / 256.0f;
    s = blocks_graph(&g, &triad, x, y, (unsigned)nblk, cols, rows, passes);
  }
  double r = 1, ts = 0;
  if (s == RP_OK)
    s = team_ratio(g, be, xo, runs, 1, overhead, &r, &ts);
  rp_graph_destroy(g);
  free(x);
  free(y);
  if (s != RP_OK)
    return s;
  /* Bytes as the analysis counts them: x read, y read and written. */
  double bytes = 3.0 * (double)floats * sizeof(float) * (double)passes;
  *one = ts > 0 ? bytes / ts / 1e3 : 0;
  *team = *one * r;
  return RP_OK;
}

/* The share of a core each thread of a team gets: a compute-bound kernel
 * in 4 blocks per thread of 8192 elements (about 1 ms each on one core),
 * none split, 3 replays per timing (long enough for a loaded machine's
 * scheduler to share its cores as it does for the workloads), against one
 * thread, divided by the team. */
static rp_status core_share(rp_model *m, const rp_backend *be,
                            const rp_exec_opts *xo, unsigned runs,
                            unsigned threads, double own) {
  const uint64_t cols = 256, rows = 32, nblk = 4 * (uint64_t)threads;
  float *y = calloc(cols * rows * nblk, sizeof *y);
  rp_graph *g = NULL;
  double r = 1, ts;
  rp_status s =
      y ? blocks_graph(&g, &spin, NULL, y, (unsigned)nblk, cols, rows, 1)
        : RP_ENOMEM;
  if (s == RP_OK)
    s = team_ratio(g, be, xo, runs, 3, own, &r, &ts);
  rp_graph_destroy(g);
  free(y);
  if (s != RP_OK)
    return s;
  double e = r / threads;
  m->split_efficiency = e > 1 ? 1 : e > 0 ? e : 0;
  return RP_OK;
}

/* A team of several threads (openmp): the share of a core each thread
 * gets (a compute-bound kernel split over the team against one thread),
 * the streaming bandwidths in and out of cache, and what a task and a
 * split kernel cost the team. */
enum { INDEP_TASKS = 256, SPLIT_CHAIN = 16, EDGE_LEVELS = 32 };
static rp_status team(rp_model *m, const rp_backend *be, const rp_exec_opts *xo,
                      unsigned runs, unsigned threads) {
  rp_status s = RP_OK;
  rp_graph *g = NULL;
  static float tiny[INDEP_TASKS * 16]; /* 16 KiB: 64 B per task */
  /* Independent empty tasks: the team's time per task, less the replay's
   * own overhead, times the threads. */
  {
    rp_buf b;
    if ((s = rp_graph_create(&g, RP_GRAPH_NO_COHERENCE)) ||
        (s = rp_buffer_register(g, "x", tiny, sizeof tiny, &b)))
      goto out;
    for (unsigned i = 0; i < INDEP_TASKS && s == RP_OK; i++) {
      rp_arg arg = rp_arg_buf(rp_range_bytes(b, i * 64u, 64));
      s = rp_record_kernel(g, &nop, 0, rp_dims3(1, 1, 1), &arg, NULL, NULL);
    }
    double t;
    if (s || (s = rp_graph_end(g)) ||
        (s = time_graph(g, be, xo, "parallel", runs, 10, &t)))
      goto out;
    double run = m->mode[0].run_us, per = (t - run) * threads / INDEP_TASKS;
    m->task_us = per > 0 ? per : 0;
    rp_graph_destroy(g);
    g = NULL;
  }
  /* A chain of split kernels of empty points: per kernel beyond a task. */
  {
    rp_buf b;
    if ((s = rp_graph_create(&g, RP_GRAPH_NO_COHERENCE)) ||
        (s = rp_buffer_register(g, "x", tiny, 64, &b)))
      goto out;
    for (unsigned i = 0; i < SPLIT_CHAIN && s == RP_OK; i++) {
      rp_arg arg = rp_arg_buf(rp_whole(b));
      s = rp_record_kernel(g, &nop, 0, rp_dims3(8192, 1, 1), &arg, NULL, NULL);
    }
    double t;
    if (s || (s = rp_graph_end(g)) ||
        (s = time_graph(g, be, xo, "parallel", runs, 10, &t)))
      goto out;
    double per =
        (t - m->mode[0].run_us) / SPLIT_CHAIN - m->mode[0].op_us - m->task_us;
    m->split_us = per > 0 ? per : 0;
    rp_graph_destroy(g);
    g = NULL;
  }
  if (threads < 2) /* one thread: no team to share a core or memory */
    goto out;
  /* Hand-offs between threads: T chains of EDGE_LEVELS empty kernels, op
   * i of chain c also after op i - 1 of chain c + 1 (mod T), so that
   * every op waits for another thread's, against T independent chains;
   * per level. */
  {
    double t[2];
    for (int zig = 0; zig < 2; zig++) {
      rp_buf b;
      if ((s = rp_graph_create(&g, RP_GRAPH_NO_COHERENCE)) ||
          (s = rp_buffer_register(g, "x", tiny, sizeof tiny, &b)))
        goto out;
      for (unsigned i = 0; i < EDGE_LEVELS && s == RP_OK; i++)
        for (unsigned c = 0; c < threads && s == RP_OK; c++) {
          /* Two slots per chain, by the level's parity: a level writes
           * what the next reads. */
          uint64_t own = (c * 2u + (i & 1)) * 64u;
          uint64_t other = (((c + 1) % threads) * 2u + ((i + 1) & 1)) * 64u;
          rp_arg a[2] = {
              rp_arg_buf(rp_range_bytes(b, zig ? other : own + 8, 8)),
              rp_arg_buf(rp_range_bytes(b, own, 8))};
          if (!zig) /* the chain alone: its own slot, always */
            a[1] = rp_arg_buf(rp_range_bytes(b, c * 128u, 8));
          s = rp_record_kernel(g, &nop2, 0, rp_dims3(1, 1, 1), a, NULL, NULL);
        }
      if (s || (s = rp_graph_end(g)) ||
          (s = time_graph(g, be, xo, "parallel", runs, 10, &t[zig])))
        goto out;
      rp_graph_destroy(g);
      g = NULL;
    }
    double per = (t[1] - t[0]) / EDGE_LEVELS;
    m->edge_us = per > 0 ? per : 0;
  }
  /* The overlapped replay's own costs in a team timing of 4 tasks per
   * thread, all independent: its threads' time per task. (Not its cost
   * per replay: a chain's intercept, too noisy on a busy machine to take
   * out of another timing.) */
  const double own = 4 * m->task_us;
  if ((s = core_share(m, be, xo, runs, threads, own)))
    goto out;
  /* Streaming: 16 KiB per block and array within cache (the blocks of a
   * thread fit its own caches) swept 64 times, 2 x 32 MiB in all beyond
   * it once. */
  if ((s = bandwidth(be, xo, runs, threads, 4096 * 4 * (uint64_t)threads, 64,
                     own, &m->cache1_gbps, &m->cache_gbps)) ||
      (s = bandwidth(be, xo, runs, threads, 8u << 20, 1, own, &m->mem1_gbps,
                     &m->mem_gbps)))
    goto out;
out:
  rp_graph_destroy(g);
  return s;
}

/* How many physical devices the backend accepts in a device map: the
 * largest k (up to 8) for which a graph on k devices mapped one to one
 * instantiates. */
static unsigned count_devices(const rp_backend *be, const rp_exec_opts *xo) {
  static char host[64];
  static const int ident[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  unsigned found = 1;
  for (unsigned k = 2; k <= 8; k++) {
    rp_graph *g = NULL;
    rp_buf b;
    rp_status s = rp_graph_create(&g, RP_GRAPH_NO_COHERENCE);
    if (s == RP_OK)
      s = rp_buffer_register(g, "x", host, sizeof host, &b);
    for (unsigned d = 0; s == RP_OK && d < k; d++)
      s = rp_record_copy_to_device(g, rp_range_bytes(b, 0, 4), (int)d, NULL,
                                   NULL);
    if (s == RP_OK)
      s = rp_graph_end(g);
    rp_exec_opts o = with_mode(xo, xo ? xo->mode : NULL);
    o.device_map = ident;
    o.ndevice_map = k;
    rp_exec *x = NULL;
    if (s == RP_OK)
      s = rp_exec_create(&x, g, be, &o);
    rp_exec_destroy(x);
    rp_graph_destroy(g);
    if (s != RP_OK)
      break;
    found = k;
  }
  return found;
}

/* An attribute of GPU 0 as the CUDA driver reports it (libcuda.so.1, the
 * driver library the cuda backend's runtime loads; its interface and the
 * attribute numbers are stable: 16 multiprocessors, 39 threads per
 * multiprocessor); 0 when it cannot say. */
static unsigned gpu_attribute(int which) {
  typedef int (*init_fn)(unsigned);
  typedef int (*get_fn)(int *, int);
  typedef int (*attr_fn)(int *, int, int);
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return 0;
  void *si = dlsym(h, "cuInit"), *sg = dlsym(h, "cuDeviceGet"),
       *sa = dlsym(h, "cuDeviceGetAttribute");
  init_fn init;
  get_fn get;
  attr_fn attr;
  int dev = 0, n = 0;
  unsigned r = 0;
  memcpy(&init, &si, sizeof init);
  memcpy(&get, &sg, sizeof get);
  memcpy(&attr, &sa, sizeof attr);
  if (si && sg && sa && init(0) == 0 && get(&dev, 0) == 0 &&
      attr(&n, which, dev) == 0 && n > 0 && n <= 65536)
    r = (unsigned)n;
  dlclose(h); /* the runtime holds its own reference */
  return r;
}

void rp__gpu_name(char *out, size_t n) {
  typedef int (*init_fn)(unsigned);
  typedef int (*get_fn)(int *, int);
  typedef int (*name_fn)(char *, int, int);
  out[0] = 0;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return;
  void *si = dlsym(h, "cuInit"), *sg = dlsym(h, "cuDeviceGet"),
       *sn = dlsym(h, "cuDeviceGetName");
  init_fn init;
  get_fn get;
  name_fn name;
  int dev = 0;
  memcpy(&init, &si, sizeof init);
  memcpy(&get, &sg, sizeof get);
  memcpy(&name, &sn, sizeof name);
  if (!si || !sg || !sn || init(0) != 0 || get(&dev, 0) != 0 ||
      name(out, (int)n, dev) != 0)
    out[0] = 0;
  out[n - 1] = 0;
  dlclose(h);
}

/* The modes a backend offers, its overlapped mode first. */
static unsigned backend_modes(const char *name, const char **modes,
                              int *issue) {
  if (!strcmp(name, "cuda")) {
    modes[0] = "graph", issue[0] = 0;
    modes[1] = "streams", issue[1] = 1;
    modes[2] = "serial", issue[2] = 1;
    return 3;
  }
  if (!strcmp(name, "openmp")) {
    modes[0] = "parallel", issue[0] = 0;
    modes[1] = "serial", issue[1] = 1;
    return 2;
  }
  modes[0] = "default", issue[0] = 0;
  modes[1] = "serial", issue[1] = 1;
  return 2;
}

rp_status rp_model_calibrate(rp_model *m, const rp_backend *be,
                             const rp_exec_opts *xo, unsigned runs) {
  RP_ENTER();
  if (!m || runs > 63)
    return RP_BAD_ARG();
  if (!runs)
    runs = 5;
  rp_status s;
  rp_exec_opts xl;
  if ((s = rp__exec_opts_in(&xl, xo, "rp_model_calibrate: rp_exec_opts")) !=
      RP_OK)
    return s;
  xo = &xl;
  if (!be && (s = rp_backend_find(NULL, &be)) != RP_OK)
    return s;
  atomic_fetch_add(&ncalibrations, 1);
  rp_model_init(m);
  snprintf(m->backend, sizeof m->backend, "%s", rp_backend_name(be));
  rp__model_key(m, be, xo, NULL);
  const char *modes[RP_MODEL_MAX_MODES];
  int issue[RP_MODEL_MAX_MODES];
  unsigned nm = backend_modes(m->backend, modes, issue);
  for (unsigned i = 0; i < nm; i++) {
    rp_model_mode *md = &m->mode[m->nmode];
    /* The generic modes are the backend's default (no mode given). */
    const char *arg = strcmp(modes[i], "default") ? modes[i] : NULL;
    s = chain_cost(CHAIN_KERNEL, be, xo, arg, runs, &md->op_us, &md->run_us);
    if (s == RP_ENOKERNEL) /* no CPU body there: tiny copies instead */
      s = chain_cost(CHAIN_COPY, be, xo, arg, runs, &md->op_us, &md->run_us);
    if (s != RP_OK && i > 0)
      continue; /* a mode this backend does not offer */
    if (s != RP_OK)
      return s;
    snprintf(md->name, sizeof md->name, "%s", modes[i]);
    md->host_issue = issue[i];
    m->nmode++;
  }
  /* Host tasks: what a host task costs beyond an operation's overhead. */
  double hop, hrun;
  const char *arg0 = strcmp(modes[0], "default") ? modes[0] : NULL;
  if ((s = chain_cost(CHAIN_HOST, be, xo, arg0, runs, &hop, &hrun)))
    return s;
  m->host_task_us = hop > m->mode[0].op_us ? hop - m->mode[0].op_us : 0;

  uint64_t small = COPY_SMALL, large = COPY_LARGE;
  if (strcmp(m->backend, "cuda"))
    small /= COPY_SCALE_CPU, large /= COPY_SCALE_CPU;
  char *a = calloc(large, 1), *b = calloc(large, 1);
  if (!a || !b) {
    free(a);
    free(b);
    return RP_ENOMEM;
  }
  double fixed = m->mode[0].run_us + m->mode[0].op_us;
  double xh, xd, xb = 0, tb;
  s = measure_link(CP_H2D, small, large, a, b, be, xo, arg0, fixed, runs,
                   &m->h2d, &xh);
  if (s == RP_OK)
    s = measure_link(CP_D2H, small, large, a, b, be, xo, arg0, fixed, runs,
                     &m->d2h, &xd);
  if (s == RP_OK && m->h2d.gbps > 0 && m->d2h.gbps > 0 &&
      (s = copy_time(CP_BOTH, large, a, b, be, xo, arg0, runs, &tb)) == RP_OK) {
    double lat = m->h2d.latency_us > m->d2h.latency_us ? m->h2d.latency_us
                                                       : m->d2h.latency_us;
    xb = tb - m->mode[0].run_us - 2 * m->mode[0].op_us - lat;
    double alone = xh > xd ? xh : xd;
    double r = xb > alone ? alone / xb : 1;
    m->duplex_h2d_gbps = m->h2d.gbps * r;
    m->duplex_d2h_gbps = m->d2h.gbps * r;
  }
  /* Peer copies need two devices; where the backend has one, peer copies
   * are modelled as h2d ones. */
  if (s == RP_OK) {
    double xp;
    rp_exec_opts po;
    static const int two[2] = {0, 0};
    if (xo)
      po = *xo;
    else
      rp_exec_opts_init(&po);
    rp_status ps = measure_link(CP_PEER, small, large, a, b, be, &po, arg0,
                                fixed, runs, &m->p2p, &xp);
    if (ps != RP_OK && !po.device_map) {
      po.device_map = two; /* both logical devices on the first one */
      po.ndevice_map = 2;
      ps = measure_link(CP_PEER, small, large, a, b, be, &po, arg0, fixed, runs,
                        &m->p2p, &xp);
    }
    if (ps != RP_OK)
      m->p2p = m->h2d;
  }
  free(a);
  free(b);
  if (s != RP_OK)
    return s;
  if (!strcmp(m->backend, "cuda")) {
    m->physical_devices = count_devices(be, xo);
    m->multiprocessors = gpu_attribute(16);
    m->threads_per_mp = gpu_attribute(39);
  }
  if (!strcmp(m->backend, "openmp")) {
    m->split_min = 8192; /* RP_OMP_SPLIT_MIN of backends/openmp */
    m->host_units = m->threads;
    if ((s = team(m, be, xo, runs, m->threads)) != RP_OK)
      return s;
  }
  m->calibrated = 1;
  return RP_OK;
}
