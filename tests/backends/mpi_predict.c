/* The mpi backend's prediction of its own replay (rp__mpi_predict, issue
 * 35) over what it really lowered on each rank: the lists after the cut
 * into interior and boundary slices. Run under mpirun on 2 and 4 ranks
 * (tests/backends/mpi.cmake); exit status 0 on success.
 *
 * The graph: one device per rank, grids A and B distributed, ROWS = 8
 * rows of 16 doubles (128 bytes) each per rank; STEPS = 2 steps of a copy
 * (B = A over the device's rows) and a stencil (halo 1 along y: it reads
 * its rows of B and one row on either side, writes its rows of A). Costs
 * given per operation: the copy kernel 100 us, the stencil 800 us (100
 * per row), everything else 0; model: no cost per task or launch, 128
 * bytes per us (a halo row takes 1 us more than the latency).
 *
 * Cut (mode "mpi"), latency 50 us, every rank: per step the copy 100, the
 * sends (arriving 51 us later), the interior (7 rows: 700; between two
 * neighbours 6 rows, 600, then two boundary rows), the receives (arrived
 * long before), the boundary rows: 900 per step, 1800 in all.
 * Whole (mode "whole"), latency 50: copy 0-100, the halo arrives 151, the
 * stencil 151-951; copy 951-1051, arrival 1102, stencil 1102-1902: 1902.
 * On 2 ranks with a latency of 1000 us: cut, copy 0-100, arrival 1101,
 * interior 100-800, boundary 1101-1201; copy 1201-1301, arrival 2302,
 * interior to 2001, boundary 2302-2402: 2402; whole, copy 0-100, stencil
 * 1101-1901, copy 1901-2001, stencil 3002-3802: 3802.
 *
 * And the exec's own profile: before any rp_exec_profile() the prediction
 * from it is refused (RP_EINVAL on every rank); after one, it is made, and
 * it is at least the stencils' and copies' profiled bodies on the rank.
 * And rp__mpi_net_measure: a latency and a bandwidth, the same on every
 * rank, the engine's figures left as they were.
 *
 * And the public path, rp_exec_predict() (the backend table's predict
 * entry): bit for bit rp__mpi_predict's figures, from given costs (1800
 * us), from the exec's own profile, with the defaults; unknown names,
 * negative or non-finite values, a fractional measure_reps, other ranks
 * than the exec's refused with a message; op_us NULL refused before a
 * profile; a measuring prediction (measure_reps) keeps net_latency_us and
 * net_gbps (absent before), the same on every rank, and predicts with
 * them (the given latency_us replaced). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"
#include "reprise/backend.h"
#include "reprise/kernel.h"
#include "mpi_stencil.h"
#include "rp_mpi.h"

enum { ROWS = 8, COLS = 16, STEPS = 2 };

static int me, nranks, bad;

RP_KERNEL(pd_copy, {
  uint64_t r0 = (uint64_t)RP_VAL(int64_t, 2), i = (r0 + RP_Y) * COLS + RP_X;
  RP_PTR(double, 1)[i] = RP_PTR(const double, 0)[i];
})
RP_KERNEL(pd_sten, {
  const double *b = RP_PTR(const double, 0);
  uint64_t n = (uint64_t)RP_VAL(int64_t, 2);
  uint64_t r = (uint64_t)RP_VAL(int64_t, 3) + RP_Y, i = r * COLS + RP_X;
  RP_PTR(double, 1)[i] = mpi_stencil_at(b, n, r, i, COLS);
})
static const rp_param copy_params[] = {
    {"src", RP_IN}, {"dst", RP_OUT}, {"r0", RP_SCALAR}};
static const rp_param sten_params[] = {
    {"src", RP_IN}, {"dst", RP_OUT}, {"n", RP_SCALAR}, {"r0", RP_SCALAR}};
static const rp_kernel copy_k = RP_KERNEL_DESC(pd_copy, copy_params);
static const rp_kernel sten_k =
    RP_KERNEL_DESC_HALO(pd_sten, sten_params, 0, 1, 0);

static void check(int cond, const char *what) {
  if (!cond) {
    fprintf(stderr, "mpi_predict: rank %d: %s\n", me, what);
    bad = 1;
  }
}

/* The costs above, per operation of x's graph (nop + 1 entries). */
static double *costs(const rp_exec *x) {
  const rp_graph *g = rp_exec_graph(x);
  uint32_t nop = rp_graph_num_nodes(g);
  double *us = calloc(nop + 1, sizeof *us);
  for (uint32_t i = 0; us && i < nop; i++) {
    rp_node_info ni;
    if (rp_node_info_get(g, i, &ni) == RP_OK && ni.type == RP_OP_KERNEL)
      us[i] = ni.kernel == &copy_k ? 100 : ni.kernel == &sten_k ? 800 : 0;
  }
  return us;
}

/* Exec x's prediction with the costs above and latency lat is want us on
 * every rank. */
static void predicts(rp_exec *x, double lat, double want, const char *what) {
  double *us = costs(x), t[16];
  rp_mpi_net n = {lat, 0.128, 0, 0};
  rp_status rc = us ? rp__mpi_predict(x, &n, us, t) : RP_ENOMEM;
  check(rc == RP_OK, what);
  for (int r = 0; rc == RP_OK && r < nranks; r++)
    if (t[r] < want - 1e-6 || t[r] > want + 1e-6) {
      fprintf(stderr, "mpi_predict: %s: rank %d predicted %.6f us, not %g\n",
              what, r, t[r], want);
      bad = 1;
    }
  free(us);
}

/* rp_exec_predict() on exec x with model m (nm pairs) and op_us gives
 * exactly rp__mpi_predict with net n, on every rank. */
static void public_equals(rp_exec *x, const rp_exec_stat *m, unsigned nm,
                          const rp_mpi_net *n, const double *op_us,
                          const char *what) {
  double pub[16] = {0}, own[16] = {0};
  rp_status a = rp_exec_predict(x, m, nm, op_us, (unsigned)nranks, pub);
  rp_status b = rp__mpi_predict(x, n, op_us, own);
  if (a != RP_OK || b != RP_OK)
    fprintf(stderr, "mpi_predict: %s: %s / %s: %s\n", what, rp_status_name(a),
            rp_status_name(b), rp_last_error());
  check(a == RP_OK && b == RP_OK, what);
  check(!memcmp(pub, own, sizeof pub), what);
}

/* The public path (rp_exec_predict(), the table's predict entry): the
 * backend's own prediction exactly, from given costs and from its
 * profile; bad parameters refused with a message; the network measured
 * by a measuring prediction and its figures then in rp_exec_stats(). */
static void public_path(rp_exec *x) {
  double *us = costs(x), t[16];
  const rp_exec_stat m[] = {{"latency_us", 50}, {"gbps", 0.128}};
  rp_mpi_net n = {50, 0.128, 0, 0};
  public_equals(x, m, 2, &n, us, "public, costs given");
  check(rp_exec_predict(x, m, 2, us, (unsigned)nranks, t) == RP_OK &&
            t[0] == 1800 && t[nranks - 1] == 1800,
        "public prediction not 1800 us");
  const rp_exec_stat all[] = {
      {"latency_us", 3}, {"gbps", 2}, {"task_us", 0.5}, {"launch_us", 7}};
  rp_mpi_net nall = {3, 2, 0.5, 7};
  public_equals(x, all, 4, &nall, NULL, "public, own profile");
  rp_mpi_net none = {0, 0, 0, 0};
  public_equals(x, NULL, 0, &none, us, "public, defaults");
  const rp_exec_stat bad_m[] = {{"msg_us", 1},         {"latency_us", -1},
                                {"gbps", INFINITY},    {"task_us", NAN},
                                {"measure_reps", 1.5}, {NULL, 1}};
  for (size_t i = 0; i < sizeof bad_m / sizeof *bad_m; i++) {
    check(rp_exec_predict(x, &bad_m[i], 1, us, (unsigned)nranks, t) ==
              RP_EINVAL,
          "a bad model parameter taken");
    check(strstr(rp_last_error(), "rp_exec_predict: mpi: no model parameter") !=
              NULL,
          "no message naming the parameter");
  }
  check(rp_exec_predict(x, m, 2, us, (unsigned)nranks + 1, t) == RP_EINVAL &&
            strstr(rp_last_error(), "ranks asked") != NULL,
        "a prediction on other ranks than the exec's taken");
  double v = -1;
  check(rp_exec_stat_get(x, "net_latency_us", &v) == RP_ENOTFOUND,
        "net figures before any measure");
  /* measured: the figures kept, the same on every rank, and the
   * prediction the one with them */
  const rp_exec_stat meas[] = {{"latency_us", 1e6},
                               {"measure_reps", 10},
                               {"measure_bytes", 65536},
                               {"task_us", 2}};
  double pub[16] = {0}, own[16] = {0}, lat = -1, bw = -1;
  check(rp_exec_predict(x, meas, 4, us, (unsigned)nranks, pub) == RP_OK,
        "no measuring prediction");
  check(rp_exec_stat_get(x, "net_latency_us", &lat) == RP_OK &&
            rp_exec_stat_get(x, "net_gbps", &bw) == RP_OK,
        "no net figures after a measuring prediction");
  check(lat > 0 && lat < 1e6 && bw > 0, "net figures out of range");
  double fig[2] = {lat, bw}, fig0[2] = {lat, bw};
  MPI_Bcast(fig0, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  check(!memcmp(fig, fig0, sizeof fig), "ranks kept different net figures");
  rp_mpi_net nm = {lat, bw, 2, 0};
  check(rp__mpi_predict(x, &nm, us, own) == RP_OK &&
            !memcmp(pub, own, sizeof pub),
        "the measuring prediction is not the one with its figures");
  free(us);
}

static rp_exec *make(rp_graph *g, const char *mode) {
  const rp_backend *be;
  rp_exec_opts o;
  rp_exec *x = NULL;
  rp_exec_opts_init(&o);
  o.mode = mode;
  o.nthreads = 1;
  if (rp_backend_find("mpi", &be) || rp_exec_create(&x, g, be, &o)) {
    fprintf(stderr, "mpi_predict: rank %d: %s\n", me, rp_last_error());
    return NULL;
  }
  return x;
}

int main(int argc, char **argv) {
  int level;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  size_t cells = (size_t)nranks * ROWS * COLS;
  double *a = calloc(cells, 8), *b = calloc(cells, 8);
  rp_graph *g = NULL;
  if (!a || !b || rp_graph_create(&g, 0) ||
      mpi_stencil_record(g, a, b, nranks, ROWS, COLS, STEPS, &copy_k,
                         &sten_k)) {
    fprintf(stderr, "mpi_predict: rank %d: record: %s\n", me, rp_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  rp_exec *cut = make(g, "mpi"), *whole = make(g, "whole");
  if (!cut || !whole)
    MPI_Abort(MPI_COMM_WORLD, 2);
  predicts(cut, 50, 1800, "cut, latency 50");
  predicts(whole, 50, 1902, "whole, latency 50");
  if (nranks == 2) {
    predicts(cut, 1000, 2402, "cut, latency 1000");
    predicts(whole, 1000, 3802, "whole, latency 1000");
  }
  /* from the exec's own profile: refused before one, made after */
  rp_mpi_net n = {1, 1, 0, 0};
  double t[16], *nus = calloc(rp_graph_num_nodes(g) + 1, sizeof *nus);
  check(rp__mpi_predict(cut, &n, NULL, t) == RP_EINVAL,
        "a prediction from no profile was made");
  check(nus && rp_exec_profile(cut, nus) == RP_OK, "rp_exec_profile failed");
  double mine = 0;
  for (uint32_t i = 0; nus && i < rp_graph_num_nodes(g); i++)
    mine += nus[i];
  check(rp__mpi_predict(cut, &n, NULL, t) == RP_OK,
        "no prediction from the exec's profile");
  check(t[me] >= mine * (1 - 1e-9),
        "predicted less than the rank's profiled bodies");
  check(rp__mpi_predict(NULL, &n, NULL, t) == RP_EINVAL, "NULL exec taken");
  public_path(cut);
  check(rp_exec_predict(whole, NULL, 0, NULL, (unsigned)nranks, t) ==
                RP_EINVAL &&
            strstr(rp_last_error(), "rp_exec_predict: mpi: no profile") != NULL,
        "a public prediction from no profile was made");
  /* the network model measured between the ranks: figures on every rank,
   * the same on every rank */
  rp_mpi_net m = {0, 5, 7, 9}, m0;
  check(rp__mpi_net_measure(cut, 10, 1u << 16, &m) == RP_OK,
        "rp__mpi_net_measure failed");
  check(m.latency_us > 0 && m.gbps > 0 && m.task_us == 7 && m.launch_us == 9,
        "a network model without latency or bandwidth");
  m0 = m;
  MPI_Bcast(&m0, sizeof m0, MPI_BYTE, 0, MPI_COMM_WORLD);
  check(!memcmp(&m0, &m, sizeof m), "ranks measured different models");
  free(nus);
  rp_exec_destroy(cut);
  rp_exec_destroy(whole);
  rp_graph_destroy(g);
  free(a);
  free(b);
  char what[32];
  snprintf(what, sizeof what, "%d ranks: ", nranks);
  return mpi_test_finish("mpi_predict", what, bad);
}
