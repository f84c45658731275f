/* The driver the MPI examples share (mpi_common.c): start MPI, create the
 * distributed exec (the mpi backend, or the starpu backend's mode "mpi"),
 * check each rank's lowering, finish. */
#ifndef RP_MPI_COMMON_H
#define RP_MPI_COMMON_H

#include <mpi.h>
#include "reprise.h"
#include "reprise/backend.h" /* rp_clock_us */

/* MPI_Init_thread (MPI_THREAD_MULTIPLE) and this process's place. */
int exm_start(int *argc, char ***argv, int *rank, int *size);
/* The backend the examples replay with: $REPRISE_MPI_BACKEND, else the
 * mpi backend (the openmp engine with nonblocking MPI messages) where it
 * is built, else "starpu" (mode "mpi"). */
const char *exm_backend(void);
/* That backend in mode "mpi" on ended graph g; NULL after saying why on
 * stderr. */
rp_exec *exm_exec(const rp_graph *g, const char *prog);
/* iters replays of x on every rank between two barriers: 0 and the
 * microseconds they took in *us, or 2 after saying on stderr why not. */
int exm_run(rp_exec *x, unsigned iters, const char *prog, int rank, double *us);
/* Gathers every rank's lowering figures on rank 0, prints them and checks
 * that each rank submits exactly its pruned task list (what the plan says
 * it runs and feeds), less than the whole graph when there are several
 * ranks. Returns 0 when every rank is right (on every rank). */
int exm_check_lowering(const rp_exec *x, const char *prog);
/* Distributed buffer b of g (rp_buffer_distribute): sets every row of
 * array a that this rank does not hold to NaN, so that a replay reading
 * one would show in the results. */
void exm_poison_foreign(const rp_graph *g, rp_buf b, double *a);
/* Distributed buffer b of g: every rank sends the rows it holds of its
 * array a to rank 0, which puts them in place in its a: rank 0's a is
 * then the whole result. Collective. */
void exm_gather_parts(const rp_graph *g, rp_buf b, double *a);
/* Same value of rc on every rank (the largest); then MPI_Finalize. */
int exm_finish(int rc);

#endif
