/* rp_exec_predict() for the mpi backend (the backend table's predict
 * entry): the model's parameters by name into an rp_mpi_net, the network
 * measured first by the ping-pong when asked ("measure_reps" > 0, its
 * figures kept for rp_exec_stats()), then rp__mpi_predict on the exec's
 * lowering (mpi_predict.c). docs/mpi.md, "Predicting the mpi backend's
 * replay". */
#include <math.h>
#include <string.h>
#include "mpi_internal.h"
#include "rp_mpi.h"

static int bad(double v) { return !isfinite(v) || v < 0; }

/* The parameters' names, their largest values, and which are counts. */
static const char *const names[] = {"latency_us",   "gbps",
                                    "task_us",      "launch_us",
                                    "measure_reps", "measure_bytes"};
enum { NPARAM = sizeof names / sizeof *names, NFIG = 4 };
static const double most[NPARAM] = {INFINITY, INFINITY, INFINITY,
                                    INFINITY, 1e6,      1 << 30};

/* Pair p into *slot[k] for its name k: 1 when known and in range (the
 * figures finite and not negative, the ping-pong's whole numbers);
 * otherwise 0, exec m's error naming it. */
static int set_param(mstate *m, double *const slot[NPARAM],
                     const rp_exec_stat *p) {
  const double v = p->value;
  for (int k = 0; p->name && k < NPARAM; k++)
    if (!strcmp(p->name, names[k]) && !bad(v) && v <= most[k] &&
        (k < NFIG || v == floor(v))) {
      *slot[k] = v;
      return 1;
    }
  rp_exec_set_error(m->x,
                    "mpi: no model parameter \"%s\" of value %g "
                    "(latency_us, gbps, task_us, launch_us, measure_reps, "
                    "measure_bytes)",
                    p->name ? p->name : "(null)", v);
  return 0;
}

rp_status rp__mpi_predict_named(void *state, const rp_exec_stat *model,
                                unsigned nmodel, const double *op_us,
                                unsigned nranks, double *rank_us) {
  mstate *m = state;
  rp_mpi_net n = {0, 0, 0, 0};
  double reps = 0, bytes = 0;
  double *const slot[NPARAM] = {&n.latency_us, &n.gbps, &n.task_us,
                                &n.launch_us,  &reps,   &bytes};
  for (unsigned i = 0; i < nmodel; i++)
    if (!set_param(m, slot, &model[i]))
      return RP_EINVAL;
  if (nranks != (unsigned)m->nranks) {
    rp_exec_set_error(m->x, "mpi: %u ranks asked: the exec has %d", nranks,
                      m->nranks);
    return RP_EINVAL;
  }
  rp_status st = RP_OK;
  if (reps > 0) {
    st = rp__mpi_net_measure(m->x, (unsigned)reps, (uint64_t)bytes, &n);
    if (st == RP_OK) {
      m->net_latency_us = n.latency_us;
      m->net_gbps = n.gbps;
      m->net_measured = 1;
    } else {
      rp_exec_set_error(m->x, "mpi: the ping-pong failed (%s)",
                        rp_status_name(st));
      return st;
    }
  }
  st = rp__mpi_predict(m->x, &n, op_us, rank_us);
  if (st == RP_EINVAL)
    rp_exec_set_error(m->x, "mpi: %s",
                      op_us ? "the operations' costs do not fit the lists "
                              "(a negative or non-finite cost)"
                            : "no profile of the exec's own "
                              "(rp_exec_profile() it first)");
  else if (st == RP_ENOMEM)
    rp_exec_set_error(m->x, "mpi: out of memory predicting");
  else if (st == RP_ENODEV)
    rp_exec_set_error(m->x, "mpi: an MPI call failed predicting");
  return st;
}
