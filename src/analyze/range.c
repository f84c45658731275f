/* The team times a prediction takes (given, or stored in the graph with
 * the thread count and backend of the team they were taken on) and the
 * predicted range: the prediction again with every cost at an end of its
 * profile (issue 33). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analysis.h"

/* The graph's team time of op n when it is of a team of @p threads on
 * @p backend: 1 and *t, else 0. */
static int stored(const rp_graph *g, uint32_t n, unsigned threads,
                  const char *backend, rp_team_measured *t) {
  return rp_graph_get_team_measured(g, n, t) == RP_OK &&
         t->threads == threads && !strcmp(t->backend, backend);
}

rp_status rp__analysis_team(rp_analysis *a, const rp_model *m,
                            const double *team, const double *tmin,
                            const double *tmax) {
  const rp_graph *g = a->g;
  uint32_t nop = a->nop;
  size_t k = nop ? nop : 1;
  rp_team_measured t;
  /* The graph's team profile: its first operation's says of which team. */
  for (uint32_t n = 0; g->measured && n < nop; n++)
    if (rp_graph_get_team_measured(g, n, &t) == RP_OK) {
      a->sum.stored_team_threads = t.threads;
      snprintf(a->tbackend, sizeof a->tbackend, "%s", t.backend);
      break;
    }
  int use = !team && a->sum.stored_team_threads &&
            a->sum.stored_team_threads == m->host_units &&
            !strcmp(a->tbackend, m->backend);
  if (!team && !use)
    return RP_OK;
  a->tcost = malloc(sizeof *a->tcost * k);
  a->tlo = malloc(sizeof *a->tlo * k);
  a->thi = malloc(sizeof *a->thi * k);
  if (!a->tcost || !a->tlo || !a->thi)
    return RP_ENOMEM;
  double share = 0;
  for (uint32_t n = 0; n < nop; n++) {
    double c = -1, lo = -1, hi = -1;
    if (team) {
      c = team[n];
      lo = tmin ? tmin[n] : c;
      hi = tmax ? tmax[n] : c;
    } else if (stored(g, n, m->host_units, m->backend, &t)) {
      c = t.median_us;
      lo = t.min_us;
      hi = t.max_us;
      share = share > 0 ? share : t.share;
    }
    a->tcost[n] = c;
    a->tlo[n] = c >= 0 && lo >= 0 && lo < c ? lo : c;
    a->thi[n] = c >= 0 && hi > c ? hi : c;
  }
  if (use) {
    a->sum.stored_team_used = 1;
    if (!(a->opts.team_share > 0))
      a->opts.team_share = share;
  }
  return RP_OK;
}

/* The model's speedup with the costs @p cost and team times @p tcost in
 * place of the analysis' own, which are put back with its prediction. */
static rp_status predict_with(rp_analysis *a, const rp_model *m, double *cost,
                              double *tcost, double *speedup) {
  double *c0 = a->cost, *t0 = a->tcost, *ms = a->mstart, *me = a->mend;
  rp_summary s0 = a->sum;
  a->cost = cost;
  a->tcost = t0 ? tcost : NULL;
  a->mstart = a->mend = NULL;
  rp_status st = rp__analysis_predict(a, m);
  *speedup = a->sum.model_speedup;
  free(a->mstart);
  free(a->mend);
  a->cost = c0;
  a->tcost = t0;
  a->mstart = ms;
  a->mend = me;
  a->sum = s0;
  return st;
}

rp_status rp__analysis_range(rp_analysis *a, const rp_model *m) {
  rp_summary *sum = &a->sum;
  double p = sum->predicted_speedup;
  sum->profile_lo = sum->profile_hi = p;
  int vary = 0;
  for (uint32_t n = 0; n < a->nop && !vary; n++)
    vary = a->clo[n] != a->cost[n] || a->chi[n] != a->cost[n] ||
           (a->tcost && (a->tlo[n] != a->tcost[n] || a->thi[n] != a->tcost[n]));
  if (!vary || m->in_order) /* in order: 1.00x whatever the costs */
    return RP_OK;
  double lo, hi;
  rp_status st = predict_with(a, m, a->clo, a->thi, &lo);
  if (st == RP_OK)
    st = predict_with(a, m, a->chi, a->tlo, &hi);
  if (st != RP_OK)
    return st;
  sum->profile_lo = fmin(p, fmin(lo, hi));
  sum->profile_hi = fmax(p, fmax(lo, hi));
  return RP_OK;
}
