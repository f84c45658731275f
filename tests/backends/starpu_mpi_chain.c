/* Mode "mpi" builds no chain through the ranks (issue 35), run under
 * mpirun on 4 ranks (tests/backends/starpu.cmake).
 *
 * A Jacobi-like graph over one device per rank, its grids distributed one
 * part per rank: per step, each device copies its rows of A into B (fast),
 * then a stencil reads its rows of B with one halo row above and below
 * (the recorder inserts the halo copies between neighbouring devices) and
 * writes its rows of A, then sleeps T ms (no CPU: robust on a loaded
 * 2-core machine). A step needs only the neighbours' rows of the step
 * before, so every rank's replay should take about S stencils, S * T, and
 * its wait for receives should not grow with its rank. A chain that makes
 * rank k wait for rank k - 1 within a step (before issue 35: a halo
 * unpacked into a device's image ordered the pack of the row it sends on
 * after it, and the one worker ran the stencil that became ready with it
 * first) costs rank k about k more stencils per step: (2 S + k) T.
 *
 * Checks: the grids equal the reference replay's on every rank's rows;
 * the last rank's wall time per replay, and its wait on receives, exceed
 * the first rank's by less than 1.5 T. Measured on the 2-core VM under a
 * load of 13-14 (4 ranks, T = 60 ms; S T = 240 ms): before issue 35,
 * replays of 499, 595, 658, 746 ms on ranks 0-3 (the last rank's wait
 * 171-221 ms above the first's: a stencil per rank); after, 297-415 ms on
 * every rank, waits within 40 ms of each other (60 once). Prints each
 * rank's figures. Exit status 0 on success.
 *
 * With REPRISE_MPI_BACKEND=mpi the same on the mpi backend (one thread
 * per rank), its wall time per replay taken from a barrier to the end of
 * the rank's rp_exec_run (no breakdown there: the wall check only). Its
 * list in program order made the same chain (rank k waited for rank k -
 * 1's halo before sending its own): measured on the 2-core VM under a
 * load of 13, replays of 430, 490, 550, 613 ms on ranks 0-3 (this test
 * failed); in lazy-receive order 260-279 ms on every rank. */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "reprise.h"
#include "reprise/backend.h"
#include "rp_starpu.h"

enum { STEPS = 4, T_MS = 60, COLS = 16 };

static void ch_copy_cpu(const rp_kargs *a, const uint64_t lo[3],
                        const uint64_t hi[3]) {
  const double *src = a->a[0].p;
  double *dst = a->a[1].p;
  uint64_t r0 = (uint64_t) * (const int64_t *)(const void *)&a->a[2];
  for (uint64_t y = lo[1]; y < hi[1]; y++)
    for (uint64_t x = lo[0]; x < hi[0]; x++)
      dst[(r0 + y) * COLS + x] = src[(r0 + y) * COLS + x];
}

/* A's rows r0 + y: the mean of B's rows above and below (the grid's first
 * and last rows copied), then T ms asleep. */
static void ch_sten_cpu(const rp_kargs *a, const uint64_t lo[3],
                        const uint64_t hi[3]) {
  const double *b = a->a[0].p;
  double *o = a->a[1].p;
  uint64_t r0 = (uint64_t) * (const int64_t *)(const void *)&a->a[2];
  uint64_t n = (uint64_t) * (const int64_t *)(const void *)&a->a[3];
  for (uint64_t y = lo[1]; y < hi[1]; y++) {
    uint64_t i = r0 + y;
    for (uint64_t x = lo[0]; x < hi[0]; x++)
      o[i * COLS + x] =
          i == 0 || i + 1 == n
              ? b[i * COLS + x]
              : 0.5 * (b[(i - 1) * COLS + x] + b[(i + 1) * COLS + x]);
  }
  struct timespec t = {0, T_MS * 1000000L};
  nanosleep(&t, NULL);
}

static const rp_param copy_params[] = {
    {"src", RP_IN}, {"dst", RP_OUT}, {"r0", RP_SCALAR}};
static const rp_param sten_params[] = {
    {"b", RP_IN}, {"a", RP_OUT}, {"r0", RP_SCALAR}, {"n", RP_SCALAR}};
static const rp_kernel copy_k =
    RP_KERNEL_WITH(.name = "ch_copy", .nparams = 3, .params = copy_params,
                   .cpu = ch_copy_cpu);
static const rp_kernel sten_k =
    RP_KERNEL_WITH(.name = "ch_sten", .nparams = 4, .params = sten_params,
                   .cpu = ch_sten_cpu);

static rp_status record(rp_graph *g, uint64_t n, int ranks, double *a,
                        double *b, int dist) {
  rp_buf A, B;
  rp_status rc;
  if ((rc = rp_buffer_register_2d(g, "A", a, n, COLS, 8, &A)) ||
      (rc = rp_buffer_register_2d(g, "B", b, n, COLS, 8, &B)))
    return rc;
  for (unsigned s = 0; s < STEPS; s++) {
    for (int d = 0; d < ranks; d++) {
      uint64_t r0 = n * (uint64_t)d / (uint64_t)ranks;
      uint64_t r1 = n * (uint64_t)(d + 1) / (uint64_t)ranks;
      rp_arg args[3] = {rp_arg_buf(rp_box2_elems(A, r0, r1, 0, COLS)),
                        rp_arg_buf(rp_box2_elems(B, r0, r1, 0, COLS)),
                        rp_arg_i64((int64_t)r0)};
      if ((rc = rp_record_kernel(g, &copy_k, d, rp_dims3(COLS, r1 - r0, 1),
                                 args, NULL, NULL)))
        return rc;
    }
    for (int d = 0; d < ranks; d++) {
      uint64_t r0 = n * (uint64_t)d / (uint64_t)ranks;
      uint64_t r1 = n * (uint64_t)(d + 1) / (uint64_t)ranks;
      uint64_t h0 = r0 ? r0 - 1 : 0, h1 = r1 < n ? r1 + 1 : n;
      rp_arg args[4] = {rp_arg_buf(rp_box2_elems(B, h0, h1, 0, COLS)),
                        rp_arg_buf(rp_box2_elems(A, r0, r1, 0, COLS)),
                        rp_arg_i64((int64_t)r0), rp_arg_i64((int64_t)n)};
      if ((rc = rp_record_kernel(g, &sten_k, d, rp_dims3(COLS, r1 - r0, 1),
                                 args, NULL, NULL)))
        return rc;
    }
  }
  if ((rc = rp_record_sync_host(g, rp_whole(A), NULL)) ||
      (rc = rp_record_sync_host(g, rp_whole(B), NULL)))
    return rc;
  if (dist && ((rc = rp_buffer_distribute(g, A, (unsigned)ranks, NULL)) ||
               (rc = rp_buffer_distribute(g, B, (unsigned)ranks, NULL))))
    return rc;
  return rp_graph_end(g);
}

static void init(uint64_t n, double *a, double *b) {
  for (uint64_t i = 0; i < n * COLS; i++) {
    a[i] = (double)((i * 7919) % 1000) / 8.0;
    b[i] = 0;
  }
}

/* 1 when rp_exec_predict() on starpu exec x of mode "mpi" differs from
 * rp__starpu_predict on its plan with the same model (its messages cost
 * latency, bandwidth and requests: each parameter reaches its member),
 * or a message's latency does not delay the ranks that receive. */
static int prediction_differs(const rp_exec *x) {
  const rp_plan *p = rp_exec_plan(x);
  double us[4096], pub[64], own[64], slow[64];
  int nr = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &nr);
  if (nr > 64 || p->nnode > 4096)
    return 1;
  for (uint32_t k = 0; k < p->nnode; k++)
    us[k] = 100;
  const rp_exec_stat m[] = {
      {"latency_us", 5}, {"gbps", 0.5},  {"task_us", 2},     {"msg_us", 3},
      {"launch_us", 10}, {"workers", 1}, {"body_scale", 1.5}};
  rp__starpu_net n = {5, 0.5, 2, 3, 10, 1, 1.5};
  if (rp_exec_predict(x, m, 7, us, (unsigned)nr, pub) != RP_OK ||
      rp__starpu_predict(p, nr, 0, &n, us, own) != RP_OK)
    return 1;
  const rp_exec_stat late = {"latency_us", 5000};
  if (rp_exec_predict(x, &late, 1, us, (unsigned)nr, slow) != RP_OK)
    return 1;
  for (int r = 0; r < nr; r++)
    if (pub[r] != own[r] || (nr > 1 && r > 0 && slow[r] < 5000)) {
      fprintf(stderr, "starpu_mpi_chain: rank %d predicted %g, %g, %g\n", r,
              pub[r], own[r], slow[r]);
      return 1;
    }
  return 0;
}

/* 1 when the public figures of starpu exec x (rp_exec_trace(),
 * rp_exec_stats(): the breakdown's trace_*, the layout's) differ from the
 * backend's own (bd, rp__starpu_layout_get). */
static int public_figures_differ(const rp_exec *x,
                                 const rp__starpu_breakdown *bd) {
  rp__starpu_layout l;
  if (rp__starpu_layout_get(&l) != RP_OK)
    return 1;
  const struct {
    const char *name;
    double v;
  } f[] = {{"trace_launches", bd->launches},
           {"trace_replays", bd->replays},
           {"trace_tasks", (double)bd->tasks},
           {"trace_recvs", (double)bd->recvs},
           {"trace_wall_us", bd->wall_us},
           {"trace_recv_us", bd->recv_us},
           {"trace_body_us", bd->body_us},
           {"trace_sched_us", bd->sched_us},
           {"local_ranks", l.local_ranks},
           {"local_rank", l.local_rank},
           {"cores", l.cores},
           {"bound", l.bound},
           {"workers", l.workers},
           {"first_cpu", l.first_cpu},
           {"mpi_cpu", l.mpi_cpu}};
  for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
    double v = -1;
    if (rp_exec_stat_get(x, f[i].name, &v) != RP_OK || v != f[i].v) {
      fprintf(stderr, "starpu_mpi_chain: %s: %g, the backend's %g\n", f[i].name,
              v, f[i].v);
      return 1;
    }
  }
  if (bd->replays != 2) /* the two traced replays */
    return 1;
  return prediction_differs(x);
}

int main(int argc, char **argv) {
  int level, rank, size;
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  uint64_t n = 8 * (uint64_t)size;
  double *a = malloc(n * COLS * 8), *b = malloc(n * COLS * 8);
  double *ra = malloc(n * COLS * 8), *rb = malloc(n * COLS * 8);
  rp_graph *g = NULL, *rg = NULL;
  rp_exec *x = NULL, *rx = NULL;
  const rp_backend *sp, *ref;
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.mode = "mpi";
  const char *bn = getenv("REPRISE_MPI_BACKEND");
  int own = bn && !strcmp(bn, "mpi"); /* else the starpu backend */
  if (own)
    o.nthreads = 1;
  int bad = !a || !b || !ra || !rb;
  if (!bad) {
    init(n, a, b);
    init(n, ra, rb);
  }
  if (bad || rp_graph_create(&g, 0) || record(g, n, size, a, b, 1) ||
      rp_backend_find(own ? "mpi" : "starpu", &sp) ||
      rp_exec_create(&x, g, sp, &o) || rp_graph_create(&rg, 0) ||
      record(rg, n, size, ra, rb, 0) || rp_backend_find("reference", &ref) ||
      rp_exec_create(&rx, rg, ref, NULL)) {
    fprintf(stderr, "starpu_mpi_chain: rank %d: set-up failed: %s\n", rank,
            rp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* one replay untimed (first touch, StarPU's warm-up), two traced */
  MPI_Barrier(MPI_COMM_WORLD);
  bad |= rp_exec_run(x, 1) != RP_OK;
  if (!own)
    bad |= rp_exec_trace(x, 1) != RP_OK;
  double own_ms = 0;
  for (int k = 0; k < 2; k++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = rp_clock_us();
    bad |= rp_exec_run(x, 1) != RP_OK;
    own_ms += (rp_clock_us() - t0) * 1e-3 / 2;
  }
  bad |= rp_exec_run(rx, 3) != RP_OK;
  /* this rank's rows (its part of both grids) as the reference's */
  uint64_t r0 = n * (uint64_t)rank / (uint64_t)size;
  uint64_t r1 = n * (uint64_t)(rank + 1) / (uint64_t)size;
  bad |= memcmp(a + r0 * COLS, ra + r0 * COLS, (r1 - r0) * COLS * 8) != 0 ||
         memcmp(b + r0 * COLS, rb + r0 * COLS, (r1 - r0) * COLS * 8) != 0;
  rp__starpu_breakdown bd;
  memset(&bd, 0, sizeof bd);
  if (!own) {
    rp__starpu_breakdown_get(x, &bd);
    bad |= public_figures_differ(x, &bd);
  }
  double mine[3] = {bd.replays ? bd.wall_us / bd.replays * 1e-3 : -1,
                    bd.replays ? bd.recv_us / bd.replays * 1e-3 : -1, bad};
  if (own) { /* no breakdown: wall from the barrier, no receive wait */
    mine[0] = own_ms;
    mine[1] = 0;
  }
  double all[3 * 64];
  MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int fail = 0;
  if (rank == 0 && size <= 64) {
    double t = T_MS, last = all[3 * (size - 1) + 1], first = all[1];
    printf("starpu_mpi_chain: %s backend, %d ranks, %d steps, stencil %d ms "
           "asleep\n"
           "  rank  wall_ms  recv_wt_ms  results\n",
           own ? "mpi" : "starpu", size, STEPS, T_MS);
    for (int r = 0; r < size; r++) {
      const double *v = all + 3 * r;
      printf("  %4d %8.1f %11.1f  %s\n", r, v[0], v[1],
             v[2] ? "DIFFER" : "identical");
      if (v[2] || v[0] < 0) {
        fail = 1;
        printf("  rank %d: results differ from the reference replay, its "
               "public figures from the backend's, or no replay traced\n",
               r);
      }
    }
    double wl = all[3 * (size - 1)], w0 = all[0];
    if (wl - w0 >= 1.5 * t) {
      fail = 1;
      printf("  the last rank's replay took %.1f ms more than the first's "
             "(>= 1.5 x %d ms): a chain through the ranks\n",
             wl - w0, T_MS);
    }
    if (last - first >= 1.5 * t) {
      fail = 1;
      printf("  the last rank waited %.1f ms more than the first on "
             "receives (>= 1.5 x %d ms): a chain through the ranks\n",
             last - first, T_MS);
    }
    printf("%s\n", fail ? "FAIL" : "ok");
  }
  MPI_Bcast(&fail, 1, MPI_INT, 0, MPI_COMM_WORLD);
  rp_exec_destroy(x);
  rp_exec_destroy(rx);
  rp_graph_destroy(g);
  rp_graph_destroy(rg);
  free(a);
  free(b);
  free(ra);
  free(rb);
  MPI_Finalize();
  return fail;
}
