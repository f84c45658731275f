/* The driver the MPI examples share. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpi_common.h"
#include "rp_starpu.h"
#ifdef RP_HAVE_MPI_BACKEND
#include "rp_mpi.h"
#endif

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

/* The mpi backend's lowering against the fake-rank count of the starpu
 * lowering of the same plan (the same placement, sp_part.c): the same
 * nodes and pieces, so the same sends and receives, and one task more
 * where the rank receives (the post of its receives). 1: wrong. */
static int check_own_lowering(const rp_exec *x, int rank, int size,
                              const rp__starpu_stats *want) {
#ifdef RP_HAVE_MPI_BACKEND
  rp__mpi_stats m;
  if (rp__mpi_stats_get(x, &m) != RP_OK)
    return 1;
  return m.tasks != want->tasks + (want->recvs > 0) || m.sends != want->sends ||
         m.recvs != want->recvs || m.rank != rank || m.nranks != size;
#else
  (void)x;
  (void)rank;
  (void)size;
  (void)want;
  return 1;
#endif
}

int exm_check_lowering(const rp_exec *x, const char *prog) {
  rp__starpu_stats st, want;
  int rank, size, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rp__starpu_count(rp_exec_plan(x), rank, size, &want) != RP_OK)
    memset(&want, 0xff, sizeof want);
  if (strcmp(exm_backend(), "starpu")) {
    bad = check_own_lowering(x, rank, size, &want);
    int any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#ifdef RP_HAVE_MPI_BACKEND
    rp__mpi_stats ms;
    if (rank == 0 && rp__mpi_stats_get(x, &ms) == RP_OK)
      printf("%s: %s backend: %d thread(s) on rank 0, %u tasks, %u sends, "
             "%u receives per replay\n",
             prog, exm_backend(), ms.nthreads, ms.tasks, ms.sends, ms.recvs);
#endif
    if (rank == 0)
      printf("%s: %s backend: every rank's tasks, sends and receives as the "
             "placement says: %s\n",
             prog, exm_backend(), any ? "WRONG" : "ok");
    return any;
  }
  if (rp__starpu_stats_get(x, &st) != RP_OK)
    memset(&st, 0, sizeof st);
  /* what the exec lowered is what the fake-rank count of the same plan
   * says, and less than the whole graph */
  bad = st.tasks != want.tasks || st.sends != want.sends ||
        st.recvs != want.recvs || st.visited != want.visited ||
        st.images != want.images || st.handles != want.handles ||
        st.image_bytes != want.image_bytes || st.aliased != want.aliased ||
        st.user_arrays != want.user_arrays ||
        (size > 1 && st.tasks >= st.nodes);
  double mine[9] = {st.nodes,    st.tasks, st.sends,   st.recvs,
                    st.lower_us, bad,      st.handles, (double)st.image_bytes,
                    st.visited};
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

void exm_trace(const rp_exec *x) { rp__starpu_trace(x, 1); }

void exm_print_breakdown(const rp_exec *x, const char *title) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  rp__starpu_breakdown b;
  rp__starpu_stats st;
  memset(&b, 0, sizeof b);
  memset(&st, 0, sizeof st);
  rp__starpu_breakdown_get(x, &b);
  rp__starpu_stats_get(x, &st);
  double r = b.replays ? (double)b.replays : 1, tk = b.tasks ? b.tasks : 1;
  enum { NF = 14 };
  double mine[NF] = {b.wall_us / r,
                     b.body_us / r,
                     b.halo_us / r,
                     (b.host_us + b.host_recv_us) / r,
                     b.recv_us / r,
                     b.sched_us / r,
                     b.submit_wait_us / r,
                     b.other_us / r,
                     b.submit_us / r,
                     (double)b.tasks / r,
                     (b.sched_us + b.done_lat_us) / tk,
                     b.ready_lat_us / tk,
                     st.register_us,
                     b.replays};
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
