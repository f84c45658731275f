/* The driver the MPI examples share. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpi_common.h"

int exm_start(int *argc, char ***argv, int *rank, int *size) {
  int level;
  /* Open MPI yields the core while it polls (the hand-written code's
   * MPI_Waitall and StarPU-MPI's progress thread alike) when ranks share
   * cores; the environment's own setting wins */
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
  if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &level) != MPI_SUCCESS)
    return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return 0;
}

/* The mpi backend by default where it is built: on the 2-core VM its
 * replays cost 4-90x less than StarPU-MPI's on small grids and the same
 * within the VM's noise on large ones (docs/benchmarks.md, issue 35); the
 * 16-core host's mpi_scaling.sh is to confirm it. */
const char *exm_backend(void) {
  const char *b = getenv("REPRISE_MPI_BACKEND");
#ifdef RP_HAVE_MPI_BACKEND
  return b && *b ? b : "mpi";
#else
  return b && *b ? b : "starpu";
#endif
}

rp_exec *exm_exec(const rp_graph *g, const char *prog) {
  const rp_backend *be;
  rp_exec_opts o;
  rp_exec *x = NULL;
  rp_status rc;
  rp_exec_opts_init(&o);
  o.mode = "mpi";
  /* the mpi backend's threads per rank (default: the node's cores over
   * its ranks) */
  const char *nt = getenv("REPRISE_MPI_THREADS");
  if (nt && strcmp(exm_backend(), "starpu"))
    o.nthreads = atoi(nt);
  if ((rc = rp_backend_find(exm_backend(), &be)) ||
      (rc = rp_exec_create(&x, g, be, &o))) {
    fprintf(stderr, "%s: %s mpi exec: %s: %s\n", prog, exm_backend(),
            rp_strerror(rc), rp_last_error());
    return NULL;
  }
  return x;
}

/* Figure `name` of exec x (rp_exec_stat_get), -1 when it has none. */
static double fig(const rp_exec *x, const char *name) {
  double v;
  return rp_exec_stat_get(x, name, &v) == RP_OK ? v : -1;
}

/* The mpi backend's lowering against what the placement gives the rank
 * (the starpu backend's placement, sp_part.c: its figures part_*): the
 * same nodes and pieces, so the same sends and receives, and one task
 * more where the rank receives (the post of its receives). 1: wrong. */
static int check_own_lowering(const rp_exec *x, int rank, int size) {
  double recvs = fig(x, "part_recvs");
  return recvs < 0 || fig(x, "tasks") != fig(x, "part_tasks") + (recvs > 0) ||
         fig(x, "sends") != fig(x, "part_sends") || fig(x, "recvs") != recvs ||
         fig(x, "rank") != rank || fig(x, "nranks") != size;
}

int exm_check_lowering(const rp_exec *x, const char *prog) {
  int rank, size, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (strcmp(exm_backend(), "starpu")) {
    bad = check_own_lowering(x, rank, size);
    int any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && fig(x, "nthreads") >= 0)
      printf("%s: %s backend: %.0f thread(s) on rank 0, %.0f tasks, %.0f "
             "sends, %.0f receives per replay\n",
             prog, exm_backend(), fig(x, "nthreads"), fig(x, "tasks"),
             fig(x, "sends"), fig(x, "recvs"));
    if (rank == 0)
      printf("%s: %s backend: every rank's tasks, sends and receives as the "
             "placement says: %s\n",
             prog, exm_backend(), any ? "WRONG" : "ok");
    return any;
  }
  /* what the exec registered is what its part needs (a handle per image
   * of its own, user array and staging buffer), and it lowered less than
   * the whole graph */
  double nodes = fig(x, "nodes"), tasks = fig(x, "tasks");
  bad = nodes < 0 || fig(x, "handles") != fig(x, "part_handles") ||
        (size > 1 && tasks >= nodes);
  double mine[9] = {nodes,
                    tasks,
                    fig(x, "sends"),
                    fig(x, "recvs"),
                    fig(x, "lower_us"),
                    bad,
                    fig(x, "handles"),
                    fig(x, "image_bytes"),
                    fig(x, "visited")};
  double *all = rank == 0 ? malloc(9 * sizeof *all * (size_t)size) : NULL;
  MPI_Gather(mine, 9, MPI_DOUBLE, all, 9, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("%s: lowering per rank (plan: %.0f nodes)\n", prog, all[0]);
    printf("  rank  nodes  tasks  sends  recvs  handles  image_MB  "
           "lower_us  pruned\n");
    for (int r = 0; r < size; r++) {
      const double *v = all + 9 * r;
      printf("  %4d  %5.0f  %5.0f  %5.0f  %5.0f  %7.0f  %8.2f  %8.1f  %s\n", r,
             v[8], v[1], v[2], v[3], v[6], v[7] / 1048576.0, v[4],
             v[5] ? "WRONG" : "ok");
    }
    free(all);
  }
  int any;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any;
}

/* Bytes per row of buffer b (its rows: dims[0], or its elements). */
static uint64_t row_bytes(const rp_graph *g, rp_buf b) {
  rp_buffer_desc d;
  rp_buffer_info(g, b, &d);
  uint64_t rows = d.ndims ? d.dims[0] : d.bytes / (d.elem ? d.elem : 1);
  return d.bytes / rows;
}

void exm_poison_foreign(const rp_graph *g, rp_buf b, double *a) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  uint64_t rb = row_bytes(g, b) / sizeof *a;
  unsigned np = rp_buffer_num_parts(g, b);
  for (unsigned q = 0; q < np; q++) {
    uint64_t r0, r1;
    rp_buffer_part_rows(g, b, q, &r0, &r1);
    if ((int)(q % (unsigned)size) == rank)
      continue;
    for (uint64_t i = r0 * rb; i < r1 * rb; i++)
      a[i] = NAN;
  }
}

void exm_gather_parts(const rp_graph *g, rp_buf b, double *a) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  uint64_t rb = row_bytes(g, b);
  unsigned np = rp_buffer_num_parts(g, b);
  for (unsigned q = 0; q < np; q++) {
    uint64_t r0, r1;
    rp_buffer_part_rows(g, b, q, &r0, &r1);
    int holder = (int)(q % (unsigned)size);
    char *at = (char *)a + r0 * rb;
    int bytes = (int)((r1 - r0) * rb);
    if (holder == 0 || !bytes)
      continue;
    if (rank == holder)
      MPI_Send(at, bytes, MPI_BYTE, 0, (int)q, MPI_COMM_WORLD);
    else if (rank == 0)
      MPI_Recv(at, bytes, MPI_BYTE, holder, (int)q, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  }
}

int exm_finish(int rc) {
  int all = rc;
  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return all;
}

int exm_run(rp_exec *x, unsigned iters, const char *prog, int rank,
            double *us) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = rp_clock_us();
  if (rp_exec_run(x, iters)) {
    fprintf(stderr, "%s: rank %d: replay failed: %s\n", prog, rank,
            rp_exec_error(x));
    return 2;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  *us = rp_clock_us() - t0;
  return 0;
}
