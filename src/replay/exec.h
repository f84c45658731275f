/* The backend-neutral executor's state (replay/exec.c). */
#ifndef RP_EXEC_H
#define RP_EXEC_H

#include "record/graph.h"

struct rp_exec {
  const rp_graph *g;
  const rp_backend *be;
  void *state;
  rp_exec_opts opts;
  void **host;        /* per buffer */
  rp_kargs *kargs;    /* per kernel node */
  uint32_t *kidx;     /* node -> index in kargs, RP_NONE for others */
  int *cores;         /* copy of opts.cores */
  int *device_map;    /* copy of opts.device_map */
  double last_us;
  double t0;
  int launched;
  char err[512];
};

/* Monotonic time in microseconds. */
double rp__now_us(void);

#endif
