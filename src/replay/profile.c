/* Profiling over several replays: median, min and max per operation. */
#include <stdlib.h>
#include <string.h>
#include "replay/exec.h"

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

rp_status rp_exec_profile_n(rp_exec *x, unsigned runs, double *median_us,
                            double *min_us, double *max_us) {
  if (!x || runs > 1000)
    return RP_EINVAL;
  rp__exec_begin(x);
  if (!runs)
    runs = 5;
  uint32_t nop = rp_graph_num_nodes(x->ug);
  size_t k = nop ? nop : 1;
  double *t = malloc(sizeof *t * k * runs), *col = malloc(sizeof *col * runs);
  if (!t || !col) {
    free(t);
    free(col);
    return RP_ENOMEM;
  }
  rp_status s = RP_OK;
  for (unsigned r = 0; r < runs && s == RP_OK; r++)
    s = rp__exec_profile(x, t + (size_t)r * k, 1);
  for (uint32_t n = 0; s == RP_OK && n < nop; n++) {
    for (unsigned r = 0; r < runs; r++)
      col[r] = t[(size_t)r * k + n];
    qsort(col, runs, sizeof *col, cmp_double);
    if (median_us)
      median_us[n] = runs % 2 ? col[runs / 2]
                              : (col[runs / 2 - 1] + col[runs / 2]) / 2;
    if (min_us)
      min_us[n] = col[0];
    if (max_us)
      max_us[n] = col[runs - 1];
  }
  free(t);
  free(col);
  return s;
}

/* An elided copy moves nothing: it starts and ends when the last of its
 * predecessors in the graph ended (0 with none). */
static void elided_times(const rp_graph *g, const rp_plan *p, double *start,
                         double *end) {
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
    if (p->node_of[n] != RP_NONE)
      continue;
    uint32_t np;
    const rp_node *pr = rp_graph_preds(g, n, &np);
    double t = 0;
    for (uint32_t i = 0; i < np; i++)
      if (end[pr[i]] > t)
        t = end[pr[i]];
    start[n] = end[n] = t;
  }
}

static rp_status timeline(rp_exec *x, double *start_us, double *end_us) {
  const rp_backend *be = rp_exec_backend(x);
  const rp_plan *p = rp_exec_plan(x);
  const rp_graph *g = rp_exec_graph(x);
  uint32_t nop = rp_graph_num_nodes(g);
  if (be->timeline) {
    rp_status s = rp__exec_wait(x);
    if (s != RP_OK)
      return s;
    double *st = malloc(sizeof *st * (p->nnode + 1));
    double *en = malloc(sizeof *en * (p->nnode + 1));
    if (!st || !en) {
      free(st);
      free(en);
      return RP_ENOMEM;
    }
    s = rp__exec_timeline(x, st, en);
    for (uint32_t n = 0; s == RP_OK && n < nop; n++)
      if (p->node_of[n] != RP_NONE) {
        start_us[n] = st[p->node_of[n]];
        end_us[n] = en[p->node_of[n]];
      }
    if (s == RP_OK)
      elided_times(g, p, start_us, end_us);
    free(st);
    free(en);
    return s;
  }
  if (strcmp(rp_backend_name(be), "reference")) {
    rp_exec_set_error(x, "backend \"%s\" cannot record a timeline",
                      rp_backend_name(be));
    return RP_ENOTSUP;
  }
  rp_status s = rp__exec_profile(x, end_us, 0);
  if (s != RP_OK)
    return s;
  double t = 0;
  for (uint32_t n = 0; n < nop; n++) {
    double d = end_us[n];
    start_us[n] = t;
    t += d;
    end_us[n] = t;
  }
  return RP_OK;
}

rp_status rp_exec_timeline(rp_exec *x, double *start_us, double *end_us) {
  if (!x || !start_us || !end_us)
    return RP_EINVAL;
  if (!x->rw.g)
    return timeline(x, start_us, end_us);
  /* Split: a recorded operation spans its chunks. */
  uint32_t nn = rp_graph_num_nodes(x->g);
  double *st = malloc(sizeof *st * (nn + 1));
  double *en = malloc(sizeof *en * (nn + 1));
  rp_status s = st && en ? timeline(x, st, en) : RP_ENOMEM;
  for (uint32_t n = 0; s == RP_OK && n < x->rw.nop; n++) {
    uint32_t a = x->rw.first[n], b = x->rw.first[n + 1];
    start_us[n] = a < b ? st[a] : 0;
    end_us[n] = a < b ? en[a] : 0;
    for (uint32_t m = a + 1; m < b; m++) {
      start_us[n] = st[m] < start_us[n] ? st[m] : start_us[n];
      end_us[n] = en[m] > end_us[n] ? en[m] : end_us[n];
    }
  }
  free(st);
  free(en);
  return s;
}
