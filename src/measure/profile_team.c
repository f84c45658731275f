/* Operation costs at the replay's thread count (issue 33): each
 * operation timed within overlapped replays of the team that will run
 * it, so that the prediction sees the contention of that replay (the
 * other threads' memory traffic, their share of the cores, a split's own
 * cost) instead of guessing it from a profile taken one operation at a
 * time; and the team's real share of its cores while it ran. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "measure/measure.h"

/* Adds a thread's schedstat (running, waiting for a core: ns) to u. */
static int add_times(FILE *fp, void *u) {
  double *t = u;
  unsigned long long r, w;
  if (fscanf(fp, "%llu %llu", &r, &w) != 2)
    return 0;
  t[0] += (double)r;
  t[1] += (double)w;
  return 1;
}

int rp_sched_times(double *run_ns, double *wait_ns) {
  double t[2] = {0, 0};
  int k = rp__each_thread("schedstat", add_times, t);
  if (run_ns)
    *run_ns = t[0];
  if (wait_ns)
    *wait_ns = t[1];
  return k > 0;
}

/* Host arrays of x as they are, to put back after the runs (NULL out of
 * memory). */
static void **snapshot(const rp_exec *x, uint32_t nb) {
  void **c = calloc(nb ? nb : 1, sizeof *c);
  for (uint32_t b = 0; c && b < nb; b++) {
    uint64_t bytes = x->g->buf[b].bytes;
    if (!x->host[b])
      continue;
    if (!(c[b] = malloc(bytes ? bytes : 1))) {
      for (uint32_t k = 0; k < b; k++)
        free(c[k]);
      free(c);
      return NULL;
    }
    memcpy(c[b], x->host[b], bytes);
  }
  return c;
}

static void restore(rp_exec *x, void **c, uint32_t nb) {
  for (uint32_t b = 0; b < nb; b++) {
    if (c[b])
      memcpy(x->host[b], c[b], x->g->buf[b].bytes);
    free(c[b]);
  }
  free(c);
}

rp_status rp_exec_profile_team(rp_exec *x, unsigned runs, double *median_us,
                               double *min_us, double *max_us, double *share) {
  RP_ENTER();
  if (!x)
    return RP_NULL_ARG();
  if (runs > 1000)
    return RP_BAD_ARG();
  if (!runs)
    runs = 5;
  if (x->g != x->ug && !x->rw.g) {
    rp_exec_set_error(x, "profile_team: the exec replays a rewrite of its "
                         "graph that does not map back to it");
    return RP_ENOTSUP;
  }
  uint32_t n = rp_graph_num_nodes(x->ug);
  uint32_t nb = rp_graph_num_buffers(x->g);
  /* rp_exec_timeline() gives one entry per node of the graph the exec
   * replays, or of the user's graph when a split maps chunks back. */
  uint32_t ne = rp_graph_num_nodes(x->g);
  size_t k = (n > ne ? n : ne) + 1;
  double *t = malloc(sizeof *t * n * runs + 1);
  double *st = malloc(sizeof *st * k), *en = malloc(sizeof *en * k);
  double *col = malloc(sizeof *col * runs);
  void **snap = snapshot(x, nb);
  if (!t || !st || !en || !col || !snap) {
    free(t);
    free(st);
    free(en);
    free(col);
    if (snap)
      restore(x, snap, nb);
    return RP_ENOMEM;
  }
  double r0 = 0, w0 = 0, r1 = 0, w1 = 0;
  int have = rp_sched_times(&r0, &w0);
  rp_status s = RP_OK;
  for (unsigned r = 0; r < runs && s == RP_OK; r++) {
    s = rp_exec_timeline(x, st, en);
    for (uint32_t v = 0; s == RP_OK && v < n; v++) {
      double d = en[v] - st[v];
      t[(size_t)r * n + v] = d > 0 ? d : 0;
    }
  }
  have = have && rp_sched_times(&r1, &w1);
  restore(x, snap, nb);
  if (s == RP_OK) {
    rp__op_stats(t, runs, n, col, median_us, min_us, max_us);
    double run = r1 - r0, wait = w1 - w0;
    if (share)
      *share = have && run + wait > 0 ? run / (run + wait) : 0;
  }
  free(t);
  free(st);
  free(en);
  free(col);
  return s;
}
