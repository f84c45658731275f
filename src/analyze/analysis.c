/* Analysis object: options, the passes in order, the headline figures. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analysis.h"

void rp_analysis_opts_init(rp_analysis_opts *o) {
  if (!o)
    return;
  memset(o, 0, sizeof *o);
  o->size = sizeof *o;
  o->copy_engines = 2;
  o->h2d_gbps = 25;
  o->d2h_gbps = 25;
  o->p2p_gbps = 25;
  o->kernel_us = 10;
  o->host_us = 10;
  o->measured_us = NULL;
  o->net_latency_us = 2;
  o->net_gbps = 10;
}

rp_status rp__analysis_opts_in(rp_analysis_opts *dst,
                               const rp_analysis_opts *src, const char *what) {
  rp_analysis_opts_init(dst);
  if (!src)
    return RP_OK;
  /* The first layout with a size ended at net_gbps (team_us came with
   * issue 33): a caller compiled with it keeps the defaults past it. */
  return rp__versioned_load(dst, sizeof *dst, src,
                            offsetof(rp_analysis_opts, team_us), what);
}

static int bad_rate(double x) { return !isfinite(x) || !(x > 0); }
static int bad_time(double x) { return !isfinite(x) || !(x >= 0); }

void rp_analysis_destroy(rp_analysis *a) {
  if (!a)
    return;
  free(a->lane);
  free(a->cost);
  free(a->source);
  free(a->elided);
  free(a->lanes);
  free(a->bottom);
  free(a->critical);
  free(a->crit);
  free(a->start);
  free(a->slack);
  free(a->order);
  free(a->mstart);
  free(a->mend);
  free(a->tcost);
  free(a->clo);
  free(a->chi);
  free(a->tlo);
  free(a->thi);
  free(a);
}

/* The bound of a team of CPU threads (a model with host_units): every
 * operation is a task of the pool, a split kernel may use all its group's
 * threads, host tasks any thread. No replay beats the longest path (a
 * split kernel costing its work over its group's threads) or the work
 * over the threads (a group's kernels and copies over its own). The lanes
 * of compute units taken in turn are no bound there: a kernel split over
 * the team ends before its cost, and a list schedule balances the threads
 * better than turns do. */
static void pool_bound(rp_analysis *a) {
  const rp_model *m = a->opts.model;
  rp_summary *s = &a->sum;
  if (!m || !m->host_units || m->multiprocessors)
    return;
  double *fin = malloc(sizeof *fin * (a->nop ? a->nop : 1));
  if (!fin)
    return; /* the lanes' bound stays */
  double grp[RP_MAX_DEVICES] = {0}, all = 0, cp = 0;
  for (uint32_t n = 0; n < a->nop; n++) {
    const rp__op *op = &a->g->op[n];
    double c = a->cost[n];
    int d = op->device >= 0 && op->device < RP_MAX_DEVICES ? op->device : -1;
    unsigned u = d >= 0 && m->units[d] > 1 ? m->units[d] : 1;
    int r = d >= 0 && m->phys[d] >= 0 ? m->phys[d] : d;
    if (op->type == RP_OP_KERNEL && u > 1) {
      rp_dims sp = rp__op_space(a->g, n);
      if (sp.x * sp.y * sp.z >= (m->split_min ? m->split_min : 1))
        c /= u;
    }
    if (op->type != RP_OP_HOST && r >= 0)
      grp[r] += a->cost[n] / u;
    all += a->cost[n];
    uint32_t np;
    const rp_node *pr = rp_graph_preds(a->g, n, &np);
    double st = 0;
    for (uint32_t i = 0; i < np; i++)
      st = fin[pr[i]] > st ? fin[pr[i]] : st;
    fin[n] = st + c;
    cp = fin[n] > cp ? fin[n] : cp;
  }
  free(fin);
  double load = all / m->host_units;
  for (int d = 0; d < RP_MAX_DEVICES; d++)
    load = grp[d] > load ? grp[d] : load;
  double lim = fmax(cp, load);
  s->bound = lim > 0 ? s->serial_us / lim : 1;
  s->limited_by = cp >= load ? "critical_path" : "threads";
}

/* Serial time, lane loads, the bound and the Amdahl form. */
static void figures(rp_analysis *a) {
  rp_summary *s = &a->sum;
  double serial = 0, t = 0, c = 0;
  for (uint32_t n = 0; n < a->nop; n++) {
    serial += a->cost[n];
    switch (a->g->op[n].type) {
    case RP_OP_KERNEL:
      t += a->cost[n];
      break;
    case RP_OP_COPY_H2D:
    case RP_OP_COPY_D2H:
    case RP_OP_COPY_D2D:
      c += a->cost[n];
      break;
    default: /* host tasks count in neither */
      break;
    }
  }
  s->serial_us = serial;
  s->max_lane_us = 0;
  uint32_t maxl = RP_NONE;
  for (uint32_t l = 0; l < a->nlane; l++)
    if (maxl == RP_NONE || a->lanes[l].busy_us > s->max_lane_us) {
      s->max_lane_us = a->lanes[l].busy_us;
      maxl = l;
    }
  double lim = fmax(s->critical_path_us, s->max_lane_us);
  s->bound = lim > 0 ? serial / lim : 1;
  s->limited_by = (maxl == RP_NONE || s->critical_path_us >= s->max_lane_us)
                      ? "critical_path"
                      : a->lanes[maxl].name;
  pool_bound(a);
  s->amdahl_compute_us = t;
  s->amdahl_copy_us = c;
  s->amdahl_speedup = fmax(t, c) > 0 ? (t + c) / fmax(t, c) : 1;
  s->schedule_speedup = s->makespan_us > 0 ? serial / s->makespan_us : 1;
  s->predicted_speedup = s->schedule_speedup;
}

/* Every failure of rp_analyze says why (rp_last_error). */
static rp_status refuse(rp_status s, const char *msg) {
  char m[256];
  snprintf(m, sizeof m, "rp_analyze: %s", msg);
  rp__set_last_error(m);
  return s;
}

rp_status rp_analyze(const rp_graph *g, const rp_analysis_opts *o,
                     rp_analysis **out) {
  RP_ENTER();
  if (!out)
    return refuse(RP_EINVAL, "out is NULL");
  *out = NULL;
  if (!g)
    return refuse(RP_EINVAL, "no graph");
  if (!g->ended)
    return refuse(RP_ESTATE, "the graph is still recording (call "
                             "rp_graph_end first)");
  rp_analysis_opts mine;
  rp_status vs = rp__analysis_opts_in(&mine, o, "rp_analyze: rp_analysis_opts");
  if (vs != RP_OK)
    return vs;
  o = &mine;
  if (o->copy_engines != 1 && o->copy_engines != 2)
    return refuse(RP_EINVAL, "copy_engines must be 1 or 2");
  if (bad_rate(o->h2d_gbps) || bad_rate(o->d2h_gbps) || bad_rate(o->p2p_gbps))
    return refuse(RP_EINVAL, "bandwidths must be finite and > 0");
  if (bad_time(o->kernel_us) || bad_time(o->host_us))
    return refuse(RP_EINVAL, "default costs must be finite and >= 0");
  if (o->nranks > 1 && (bad_rate(o->net_gbps) || bad_time(o->net_latency_us)))
    return refuse(RP_EINVAL, "nranks > 1 needs a finite net_gbps > 0 and "
                             "net_latency_us >= 0");
  if (o->ncompute_units > RP_MAX_DEVICES ||
      (o->ncompute_units && !o->compute_units))
    return refuse(RP_EINVAL, "compute_units: NULL list or more entries "
                             "than RP_MAX_DEVICES");
  for (unsigned d = 0; d < o->ncompute_units; d++)
    if (o->compute_units[d] > 4096)
      return refuse(RP_EINVAL, "compute_units: more than 4096 on a device");
  if (o->model && !rp__model_valid(o->model))
    return refuse(RP_EINVAL, "model: not a valid machine model");
  if (!isfinite(o->team_share) || o->team_share < 0 || o->team_share > 1)
    return refuse(RP_EINVAL, "team_share must be in [0, 1]");
  for (uint32_t n = 0; n < g->nop; n++)
    if ((o->team_us && !isfinite(o->team_us[n])) ||
        (o->team_min_us && !isfinite(o->team_min_us[n])) ||
        (o->team_max_us && !isfinite(o->team_max_us[n])) ||
        (o->measured_min_us && !isfinite(o->measured_min_us[n])) ||
        (o->measured_max_us && !isfinite(o->measured_max_us[n])))
      return refuse(RP_EINVAL, "team_us, team_min_us, team_max_us, "
                               "measured_min_us, measured_max_us: an entry "
                               "is not finite");

  rp_analysis *a = calloc(1, sizeof *a);
  if (!a)
    return refuse(RP_ENOMEM, "out of memory");
  a->g = g;
  a->opts = *o;
  for (int d = 0; d < RP_MAX_DEVICES; d++)
    a->mphys[d] = o->model ? o->model->phys[d] : -1;
  a->opts.measured_us = NULL; /* not kept: the caller owns it */
  a->opts.team_us = NULL;     /* copied below where a model uses it */
  a->has_measured = o->measured_us != NULL;
  uint32_t nop = a->nop = g->nop;
  size_t m = nop ? nop : 1;
  a->lane = malloc(sizeof *a->lane * m);
  a->cost = malloc(sizeof *a->cost * m);
  a->source = malloc(m);
  a->elided = calloc(m, 1);
  a->bottom = malloc(sizeof *a->bottom * m);
  a->critical = calloc(m, 1);
  a->start = malloc(sizeof *a->start * m);
  a->slack = malloc(sizeof *a->slack * m);
  a->order = malloc(sizeof *a->order * m);
  rp_status s = RP_ENOMEM;
  if (!a->lane || !a->cost || !a->source || !a->elided || !a->bottom ||
      !a->critical || !a->start || !a->slack || !a->order)
    goto fail;
  if (o->model &&
      (!(a->clo = malloc(sizeof *a->clo * m)) ||
       !(a->chi = malloc(sizeof *a->chi * m)) ||
       (s = rp__analysis_team(a, o->model, o->team_us, o->team_min_us,
                              o->team_max_us)) != RP_OK))
    goto fail;
  if ((s = rp__analysis_lanes(a, o->measured_us)) != RP_OK ||
      (s = rp__analysis_pool_team(a)) != RP_OK ||
      (s = rp__analysis_critical(a)) != RP_OK ||
      (s = rp__analysis_schedule(a)) != RP_OK)
    goto fail;
  a->opts.compute_units = NULL; /* used above; the caller owns it */
  a->opts.ncompute_units = 0;
  figures(a);
  a->opts.measured_min_us = a->opts.measured_max_us = NULL; /* read */
  a->opts.team_min_us = a->opts.team_max_us = NULL;
  a->sum.profile_lo = a->sum.profile_hi = a->sum.predicted_speedup;
  if (o->model && ((s = rp__analysis_predict(a, o->model)) != RP_OK ||
                   (s = rp__analysis_range(a, o->model)) != RP_OK))
    goto fail;
  a->opts.model = NULL; /* the caller owns it, and the mode names */
  a->opts.mode = a->opts.serial_mode = NULL;
  *out = a;
  rp__set_last_error("");
  return RP_OK;
fail:
  rp_analysis_destroy(a);
  return refuse(s, s == RP_ENOMEM   ? "out of memory"
                   : s == RP_EINVAL ? "a cost or a sum of costs is not "
                                      "finite (more than a double holds)"
                                    : rp_strerror(s));
}

void rp_analysis_summary(const rp_analysis *a, rp_summary *out) {
  if (!out)
    return;
  if (!a) {
    memset(out, 0, sizeof *out);
    out->limited_by = "critical_path";
    return;
  }
  *out = a->sum;
}

rp_status rp_analysis_op(const rp_analysis *a, rp_node n, rp_op_sched *out) {
  RP_ENTER();
  if (!a || !out || n >= a->nop)
    return RP_BAD_ARG();
  out->lane = a->lane[n];
  out->cost_us = a->cost[n];
  out->start_us = a->start[n];
  out->end_us = rp__end(a, n);
  out->slack_us = a->slack[n];
  out->critical = a->critical[n];
  out->source = (rp_cost_source)a->source[n];
  return RP_OK;
}

rp_status rp_analysis_op_model(const rp_analysis *a, rp_node n,
                               double *start_us, double *end_us) {
  RP_ENTER();
  if (!a || n >= a->nop)
    return RP_BAD_ARG();
  if (!a->mstart)
    return RP_ENOTFOUND;
  if (start_us)
    *start_us = a->mstart[n];
  if (end_us)
    *end_us = a->mend[n];
  return RP_OK;
}

uint32_t rp_analysis_num_lanes(const rp_analysis *a) {
  return a ? a->nlane : 0;
}

rp_status rp_analysis_lane(const rp_analysis *a, uint32_t i, const char **name,
                           double *busy_us) {
  RP_ENTER();
  if (!a || i >= a->nlane)
    return RP_BAD_ARG();
  if (name)
    *name = a->lanes[i].name;
  if (busy_us)
    *busy_us = a->lanes[i].busy_us;
  return RP_OK;
}
