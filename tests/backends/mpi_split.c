/* The mpi backend overlaps halos with computation (issue 35, item 2): a
 * stencil with a halo (rp_kernel.halo) whose rows on a rank need received
 * rows is cut into its interior, which waits for no receive, and its
 * boundary rows, which wait for them. Run under mpirun on 2 and 4 ranks
 * (tests/backends/mpi.cmake); exit status 0 on success.
 *
 * A heat-like graph over one device per rank, its grids A and B
 * distributed one part per rank, ROWS rows each: per step each device
 * copies its rows of A into B, then a stencil (halo 1 along y, the row)
 * reads its rows of B with one row above and below (the grid's first and
 * last rows copied) and writes its rows of A. Checks, on every rank:
 *
 * - counts: per step one kernel cut (STEPS in all), one interior slice and
 *   a boundary slice per neighbour (1 on the first and last ranks, 2
 *   between); no interior slice waits for a receive (none among its
 *   direct predecessors, the figure "interior_waits" of rp_exec_stats()), every boundary
 *   slice does; the tasks without slices are the same as in
 *   mode "whole" (no cut: 0 slices), whose engine has STEPS x (slices - 1)
 *   fewer tasks;
 * - results: the rank's rows of A and B equal the reference replay's, in
 *   both modes;
 * - overlap, timing-free, on ranks 0 and 1: rank 1's copy at step 0 (which
 *   its halo row to rank 0 waits for) blocks until rank 0 sends it a "go"
 *   message from its stencil's first row (an interior row of rank 0). The
 *   replay completes only if rank 0's interior runs before its receive
 *   completes; otherwise rank 1 gives up after GATE_S seconds and the test
 *   fails (in mode "whole" it would: not run).
 *
 * `mpi_split --timed` (2 ranks or more; not a check, not in ctest)
 * prints the overlap's effect with sleeps, no CPU: rank 1's copies sleep
 * 100 ms (its halo late), rank 0's stencil 15 ms per row (8 rows); with
 * the neighbour's delay of the first step hidden behind rank 0's
 * interior, a replay takes about 360 ms cut against 460 ms whole (the
 * later steps' delays overlap the step before in both). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "reprise.h"
#include "reprise/backend.h"
#include "reprise/kernel.h"
#include "mpi_stencil.h"

enum { ROWS = 8, COLS = 16, STEPS = 3, REPLAYS = 2, GATE_S = 20, GO_TAG = 77 };

static int me, nranks;
static int gate_on;     /* the gate between ranks 0 and 1 is live */
static int gate_failed; /* rank 1 gave up waiting for "go" */
/* --timed: rank 1's copies sleep delay_us (its halo late), rank 0's
 * stencils row_us per row (its work); no CPU, so robust to load */
static long delay_us, row_us;
static double replay_ms; /* the last run_mode's replay, this rank */

static void nap_us(long us) {
  struct timespec t = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&t, NULL);
}

/* rank 1, step 0: wait for rank 0's "go" (at most GATE_S seconds) */
static void gate_wait(void) {
  int go = 0, done = 0;
  MPI_Request rq;
  MPI_Irecv(&go, 1, MPI_INT, 0, GO_TAG, MPI_COMM_WORLD, &rq);
  struct timespec t0, t, nap = {0, 1000000};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (done || t.tv_sec - t0.tv_sec > GATE_S)
      break;
    nanosleep(&nap, NULL);
  }
  if (!done) {
    gate_failed = 1;
    gate_on = 0;
    MPI_Cancel(&rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
  }
}

RP_KERNEL(sp_copy, {
  uint64_t r0 = (uint64_t)RP_VAL(int64_t, 2), i = (r0 + RP_Y) * COLS + RP_X;
  if (gate_on && me == 1 && RP_VAL(int64_t, 3) == 0 && RP_X == 0 && RP_Y == 0)
    gate_wait();
  if (delay_us && me == 1 && RP_X == 0 && RP_Y == 0)
    nap_us(delay_us);
  RP_PTR(double, 1)[i] = RP_PTR(const double, 0)[i];
})
RP_KERNEL(sp_sten, {
  const double *b = RP_PTR(const double, 0);
  uint64_t n = (uint64_t)RP_VAL(int64_t, 2);
  uint64_t r = (uint64_t)RP_VAL(int64_t, 3) + RP_Y, i = r * COLS + RP_X;
  if (gate_on && me == 0 && RP_VAL(int64_t, 4) == 0 && RP_X == 0 && RP_Y == 0) {
    int go = 1;
    MPI_Send(&go, 1, MPI_INT, 1, GO_TAG, MPI_COMM_WORLD);
  }
  if (row_us && me == 0 && RP_X == 0)
    nap_us(row_us);
  RP_PTR(double, 1)[i] = mpi_stencil_at(b, n, r, i, COLS);
})
static const rp_param copy_params[] = {
    {"src", RP_IN}, {"dst", RP_OUT}, {"r0", RP_SCALAR}, {"step", RP_SCALAR}};
static const rp_param sten_params[] = {{"src", RP_IN},
                                       {"dst", RP_OUT},
                                       {"n", RP_SCALAR},
                                       {"r0", RP_SCALAR},
                                       {"step", RP_SCALAR}};
static const rp_kernel copy_k = RP_KERNEL_DESC(sp_copy, copy_params);
static const rp_kernel sten_k =
    RP_KERNEL_DESC_HALO(sp_sten, sten_params, 0, 1, 0);

static void init(double *a, double *b) {
  uint64_t nn = (uint64_t)nranks * ROWS * COLS;
  for (uint64_t i = 0; i < nn; i++) {
    a[i] = (double)((i * 7919) % 1000) / 1000.0;
    b[i] = 0;
  }
}

/* The mpi backend's figures of the cut, through rp_exec_stats(). */
typedef struct figs {
  uint32_t cut, interior, boundary, interior_waits, boundary_waits;
  uint32_t tasks, engine_tasks;
} figs;

static int get_figs(const rp_exec *x, figs *f) {
  static const char *const names[7] = {
      "cut",   "interior",    "boundary", "interior_waits", "boundary_waits",
      "tasks", "engine_tasks"};
  uint32_t *dst[7] = {&f->cut,
                      &f->interior,
                      &f->boundary,
                      &f->interior_waits,
                      &f->boundary_waits,
                      &f->tasks,
                      &f->engine_tasks};
  for (int i = 0; i < 7; i++) {
    double v;
    if (rp_exec_stat_get(x, names[i], &v) != RP_OK)
      return 1;
    *dst[i] = (uint32_t)v;
  }
  return 0;
}

#define FAIL(...)                                                              \
  do {                                                                         \
    fprintf(stderr, "mpi_split rank %d: ", me);                                \
    fprintf(stderr, __VA_ARGS__);                                              \
    fputc('\n', stderr);                                                       \
    bad = 1;                                                                   \
  } while (0)

/* One exec of g in mode `mode`: its figures in *st, this rank's rows of
 * the results against the reference's. 0: right. */
static int run_mode(rp_graph *g, double *a, double *b, const char *mode,
                    int gate, figs *st) {
  const rp_backend *be;
  rp_exec *x = NULL;
  rp_exec_opts o;
  int bad = 0;
  rp_exec_opts_init(&o);
  o.mode = mode;
  o.nthreads = 1;
  uint64_t nn = (uint64_t)nranks * ROWS * COLS, mine = (uint64_t)me * ROWS;
  double *sa = malloc(nn * 8), *sb = malloc(nn * 8);
  if (!sa || !sb || rp_backend_find("mpi", &be) ||
      rp_exec_create(&x, g, be, &o) || get_figs(x, st)) {
    FAIL("exec in mode %s: %s", mode, rp_last_error());
    goto out;
  }
  init(a, b);
  gate_on = gate && nranks >= 2;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = rp_clock_us();
  if (rp_exec_run(x, REPLAYS))
    FAIL("replay in mode %s: %s", mode, rp_exec_error(x));
  replay_ms = (rp_clock_us() - t0) * 1e-3 / REPLAYS;
  gate_on = 0;
  memcpy(sa, a, nn * 8);
  memcpy(sb, b, nn * 8);
  init(a, b);
  if (rp_replay_reference(g, REPLAYS))
    FAIL("reference: %s", rp_last_error());
  if (memcmp(sa + mine * COLS, a + mine * COLS, ROWS * COLS * 8) ||
      memcmp(sb + mine * COLS, b + mine * COLS, ROWS * COLS * 8))
    FAIL("mode %s: rows differ from the reference replay", mode);
out:
  rp_exec_destroy(x);
  free(sa);
  free(sb);
  return bad;
}

int main(int argc, char **argv) {
  int level, bad = 0;
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  uint64_t nn = (uint64_t)nranks * ROWS * COLS;
  double *a = malloc(nn * 8), *b = malloc(nn * 8);
  rp_graph *g = NULL;
  int timed = argc > 1 && !strcmp(argv[1], "--timed") && nranks >= 2;
  if (!a || !b || rp_graph_create(&g, 0) ||
      mpi_stencil_record(g, a, b, nranks, ROWS, COLS, STEPS, &copy_k,
                         &sten_k)) {
    FAIL("recording: %s", g ? rp_graph_error(g) : "no memory");
  } else if (timed) { /* not a check: the overlap's effect, printed */
    figs st;
    delay_us = 100000;
    row_us = 15000;
    double ms[2];
    for (int k = 0; k < 2; k++) {
      bad |= run_mode(g, a, b, k ? "whole" : "mpi", 0, &st);
      MPI_Allreduce(&replay_ms, &ms[k], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    if (me == 0)
      printf("mpi_split --timed: rank 1's halo %ld ms late per step, rank "
             "0's stencil %d rows x %ld ms, %d steps: %.1f ms per replay "
             "cut, %.1f ms whole (whole/cut %.2f)\n",
             delay_us / 1000, ROWS, row_us / 1000, STEPS, ms[0], ms[1],
             ms[1] / ms[0]);
  } else {
    figs cut, whole;
    bad |= run_mode(g, a, b, "mpi", 1, &cut);
    bad |= run_mode(g, a, b, "whole", 0, &whole);
    uint32_t nb = nranks < 2 ? 0 : me == 0 || me == nranks - 1 ? 1 : 2;
    uint32_t ni = nranks < 2 ? 0 : 1;
    printf("mpi_split rank %d: cut %u, interior %u (%u after a receive), "
           "boundary %u (%u after a receive), tasks %u / engine %u; whole: "
           "cut %u, tasks %u / engine %u\n",
           me, cut.cut, cut.interior, cut.interior_waits, cut.boundary,
           cut.boundary_waits, cut.tasks, cut.engine_tasks, whole.cut,
           whole.tasks, whole.engine_tasks);
    if (!bad && (cut.cut != ni * STEPS || cut.interior != ni * STEPS ||
                 cut.boundary != nb * STEPS || cut.interior_waits != 0 ||
                 cut.boundary_waits != nb * STEPS))
      FAIL("slices: want %u cut, %u interior, %u boundary, all after a "
           "receive",
           ni * STEPS, ni * STEPS, nb * STEPS);
    if (!bad &&
        (whole.cut || whole.interior || whole.boundary ||
         whole.tasks != cut.tasks || whole.engine_tasks != whole.tasks ||
         cut.engine_tasks != cut.tasks + STEPS * (ni + nb) - cut.cut))
      FAIL("mode whole: want the same tasks, none cut");
    if (gate_failed)
      FAIL("rank 0's interior did not run before its receive completed "
           "(rank 1 waited %d s for its \"go\")",
           GATE_S);
  }
  rp_graph_destroy(g);
  free(a);
  free(b);
  return mpi_test_finish("mpi_split", "", bad);
}
