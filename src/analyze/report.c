/* Reports of an analysis: the human text and the "reprise-analysis" JSON. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analysis.h"
#include "core/out.h"

/* Most critical-path operations the text report lists one by one. */
#define TEXT_PATH_MAX 20

void rp__put_num(FILE *fp, double v) {
  if (!isfinite(v)) {
    fputs("null", fp);
    return;
  }
  char buf[40];
  rp__num_text(buf, v);
  fputs(buf, fp);
}

void rp__put_json_str(FILE *fp, const char *s) {
  fputc('"', fp);
  char e[8];
  for (; *s; s++) {
    size_t k = rp__json_escape((unsigned char)*s, e);
    if (k)
      fwrite(e, 1, k, fp);
    else
      fputc(*s, fp);
  }
  fputc('"', fp);
}

const char *rp__op_name(const rp_analysis *a, uint32_t n) {
  const char *s = a->g->op[n].name;
  return s ? s : "";
}

const char *rp__buf_name(const rp_analysis *a, uint32_t b) {
  if (b >= a->g->nbuf || !a->g->buf[b].name)
    return "";
  return a->g->buf[b].name;
}

const char *rp__source_name(rp_cost_source s) {
  switch (s) {
  case RP_COST_GIVEN:
    return "given";
  case RP_COST_MEASURED:
    return "measured";
  case RP_COST_MODELLED:
    return "modelled";
  default:
    return "default";
  }
}

const char *rp__lane_colour(rp__lane_kind k) {
  static const char *const c[RP__LANE_KINDS] = {
      "#8fbcde", "#f4b183", "#f8cbad", "#f4b183", "#c5e0b4", "#d9d2e9"};
  return k < RP__LANE_KINDS ? c[k] : "#dddddd";
}

static rp_status done(FILE *fp) { return ferror(fp) ? RP_EIO : RP_OK; }

static void text_costs(const rp_analysis *a, FILE *fp) {
  uint32_t dk = 0, dh = 0, mod = a->nsource[RP_COST_MODELLED];
  uint32_t meas = a->nsource[RP_COST_MEASURED];
  for (uint32_t n = 0; n < a->nop; n++)
    if (a->source[n] == RP_COST_DEFAULT) {
      if (a->g->op[n].type == RP_OP_KERNEL)
        dk++;
      else
        dh++;
    } else if (a->elided[n]) {
      mod -= a->source[n] == RP_COST_MODELLED;
      meas -= a->source[n] == RP_COST_MEASURED;
    }
  fprintf(fp, "costs: %u given, %u measured, %u modelled, %u default",
          a->nsource[RP_COST_GIVEN], meas, mod, a->nsource[RP_COST_DEFAULT]);
  if (a->nelided)
    fprintf(fp, ", %u elided", a->nelided);
  fputc('\n', fp);
  if (a->nelided)
    fprintf(fp,
            "  elided: %u copies the %s backend does not perform (host "
            "and device share\n          memory): no cost, no lane\n",
            a->nelided, a->mbackend[0] ? a->mbackend : "model's");
  if (mod)
    fprintf(fp,
            "  modelled: %u copies as bytes / bandwidth (h2d %g GB/s, "
            "d2h %g GB/s, p2p %g GB/s)\n",
            mod, a->opts.h2d_gbps, a->opts.d2h_gbps, a->opts.p2p_gbps);
  if (dk)
    fprintf(fp, "  default: %u kernels without a cost at %g us each\n", dk,
            a->opts.kernel_us);
  if (dh)
    fprintf(fp, "  default: %u host tasks without a cost at %g us each\n", dh,
            a->opts.host_us);
}

rp_status rp_analysis_write_text(const rp_analysis *a, FILE *fp) {
  RP_ENTER();
  if (!a || !fp)
    return RP_NULL_ARG();
  const rp_summary *s = &a->sum;
  double ms = s->makespan_us;
  /* Lanes that hold only copies the backend elides are no lanes of it. */
  uint32_t *count = calloc(a->nlane ? a->nlane : 1, sizeof *count);
  if (!count)
    return RP_ENOMEM;
  for (uint32_t n = 0; n < a->nop; n++)
    count[a->lane[n]] += !a->elided[n];
  uint32_t shown = 0;
  for (uint32_t l = 0; l < a->nlane; l++)
    shown += count[l] > 0;
  fprintf(fp,
          "reprise analysis: %u operations, %u edges, %u lanes "
          "(%u copy engine%s per device)\n",
          a->nop, a->g->nedge, shown, a->opts.copy_engines,
          a->opts.copy_engines == 1 ? "" : "s");
  text_costs(a, fp);

  fprintf(fp, "\nlanes (busy time, %% of the makespan):\n");
  for (uint32_t l = 0; l < a->nlane; l++)
    if (count[l])
      fprintf(fp, "  %-12s %14.3f us %6.1f%%  %u ops\n", a->lanes[l].name,
              a->lanes[l].busy_us,
              ms > 0 ? 100 * a->lanes[l].busy_us / ms : 0.0, count[l]);
  free(count);

  fprintf(fp, "\ncritical path: %.3f us over %u operations\n",
          s->critical_path_us, a->ncrit);
  for (uint32_t i = 0; i < a->ncrit && i < TEXT_PATH_MAX; i++) {
    uint32_t n = a->crit[i];
    fprintf(fp, "  %s#%u %s  [%s] %.3f us (%s)\n", i ? "-> " : "   ", n,
            rp__op_name(a, n),
            a->elided[n] ? "elided" : a->lanes[a->lane[n]].name, a->cost[n],
            rp__source_name((rp_cost_source)a->source[n]));
  }
  if (a->ncrit > TEXT_PATH_MAX)
    fprintf(fp, "  ... and %u more\n", a->ncrit - TEXT_PATH_MAX);

  fprintf(fp, "\nserial          %14.3f us (one operation at a time)\n",
          s->serial_us);
  fprintf(fp, "critical path   %14.3f us\n", s->critical_path_us);
  fprintf(fp, "max lane        %14.3f us\n", s->max_lane_us);
  fprintf(fp,
          "upper bound     %14.3fx serial / max(critical path, max lane), "
          "limited by %s\n",
          s->bound,
          strcmp(s->limited_by, "critical_path") ? s->limited_by
                                                 : "the critical path");
  fprintf(fp, "diagnostics (no overheads: not predictions):\n");
  fprintf(fp,
          "amdahl overlap  %14.3fx (T + C) / max(T, C): kernels T = %.3f "
          "us, copies C = %.3f us\n",
          s->amdahl_speedup, s->amdahl_compute_us, s->amdahl_copy_us);
  fprintf(fp,
          "makespan        %14.3f us (list schedule, longest remaining "
          "path first)\n",
          ms);
  fprintf(fp, "list schedule   %14.3fx serial / makespan", s->schedule_speedup);
  double lim = fmax(s->critical_path_us, s->max_lane_us);
  if (ms > lim && lim > 0)
    fprintf(fp,
            " (the makespan is %.1f%% longer than max(critical path, "
            "max lane))\n",
            100 * (ms - lim) / lim);
  else
    fprintf(fp, " (the makespan reaches max(critical path, max lane): the "
                "bound)\n");
  if (s->modelled) {
    char team[32] = "";
    if (a->mthreads)
      snprintf(team, sizeof team, ", %u thread%s", a->mthreads,
               a->mthreads == 1 ? "" : "s");
    fprintf(fp,
            "\nmodel           %s on %s (%s%s), overlapped mode %s, "
            "serial mode %s\n",
            a->mbackend[0] ? a->mbackend : "?",
            a->mmachine[0] ? a->mmachine : "?",
            a->mcalibrated ? "calibrated"
                           : "uncalibrated: no overhead "
                             "measured",
            team, a->mmode, a->msmode);
    if (a->mcalibrated && a->mcpus && a->mload > a->mcpus)
      fprintf(fp,
              "                (calibrated at a load average of %.1f on "
              "%u cores: a busy machine's figures)\n",
              a->mload, a->mcpus);
    fprintf(fp,
            "model serial    %14.3f us (launch and synchronisation "
            "overheads in)\n",
            s->model_serial_us);
    fprintf(fp,
            "model overlap   %14.3f us (shared links, compute units "
            "and memory)\n",
            s->model_overlap_us);
    if (s->team_costs)
      fprintf(fp,
              "team costs      %d operations timed within the team's "
              "overlapped replays%s\n",
              s->team_costs,
              s->stored_team_used ? " (the graph's team times)" : "");
    else if (s->stored_team_threads)
      fprintf(fp,
              "team costs      none: the graph's team times are of %u "
              "threads on %s, this\n                prediction of %u on "
              "%s: it uses serial costs\n",
              s->stored_team_threads, a->tbackend[0] ? a->tbackend : "?",
              a->mthreads, a->mbackend[0] ? a->mbackend : "?");
    else if (a->mthreads > 1)
      fprintf(fp, "team costs      none: no team profile, the prediction "
                  "uses serial costs\n");
  }
  rp__write_predicted(a, fp);
  fprintf(fp, "(every term above: docs/terms.md)\n");
  return done(fp);
}

void rp__write_predicted(const rp_analysis *a, FILE *fp) {
  const rp_summary *s = &a->sum;
  if (!s->modelled) {
    fprintf(fp,
            "predicted speedup  none: without a machine model this "
            "analysis gives an upper\n                   bound only "
            "(%.3fx; analyse with a model: rp_analysis_opts_calibrated()"
            ",\n                   `reprise analyze --backend B`)\n",
            s->bound);
    return;
  }
  unsigned team = a->mthreads ? a->mthreads : 1;
  if (team > s->usable_cpus && s->usable_cpus)
    team = s->usable_cpus;
  double share =
      s->usable_cpus ? s->usable_cpus / (s->runnable + team) : 1; /* 1: quiet */
  if (s->withheld && !(share < 0.85) && s->team_share > 0) {
    /* Quiet before, yet the team waited for its cores while profiled. */
    fprintf(fp,
            "predicted speedup  withheld: machine busy: the team of %u got "
            "%.0f%% of its cores\n                   during its profiled "
            "replays (other tasks took the rest, a share that\n"
            "                   changes by the second; on a quiet machine "
            "%.3fx)\n",
            a->mthreads ? a->mthreads : 1, 100 * s->team_share,
            s->predicted_speedup);
    return;
  }
  if (s->withheld) {
    fprintf(fp,
            "predicted speedup  withheld: machine busy: %.1f runnable "
            "besides this program on %u CPUs\n                   (a team "
            "of %u would get about %.0f%% of its cores, a share that\n"
            "                   changes by the second; ",
            s->runnable, s->usable_cpus, team, 100 * share);
    if (a->mcalibrated && a->mcpus && a->mload > a->mcpus)
      fprintf(fp,
              "the model's %.3fx\n                   was calibrated "
              "busy too: `reprise calibrate` on a quiet machine)\n",
              s->predicted_speedup);
    else
      fprintf(fp, "on a quiet machine %.3fx)\n", s->predicted_speedup);
    return;
  }
  fprintf(fp,
          "predicted speedup %9.3fx  (%s model of %s: serial %.3f ms, "
          "overlapped %.3f ms per replay)\n",
          s->predicted_speedup, s->calibrated ? "calibrated" : "uncalibrated",
          a->mbackend[0] ? a->mbackend : "?", s->model_serial_us / 1e3,
          s->model_overlap_us / 1e3);
  if (s->profile_lo < s->profile_hi)
    fprintf(fp,
            "profile range     %.3fx - %.3fx  (every cost at its "
            "profile's smallest or largest:\n                   serial "
            "costs low and team times high, and the reverse)\n",
            s->profile_lo, s->profile_hi);
}

/* Key text `key` (its separator and quotes) and number v. */
static void num_field(FILE *fp, const char *key, double v) {
  fputs(key, fp);
  rp__put_num(fp, v);
}

/* Key text `key` and string v, quoted and escaped. */
static void str_field(FILE *fp, const char *key, const char *v) {
  fputs(key, fp);
  rp__put_json_str(fp, v);
}

/* The JSON's options object. */
static void json_options(const rp_analysis *a, FILE *fp) {
  fprintf(fp,
          "{\n  \"format\": \"reprise-analysis\", \"version\": 1,\n"
          "  \"options\": {\"copy_engines\": %u, \"h2d_gbps\": ",
          a->opts.copy_engines);
  rp__put_num(fp, a->opts.h2d_gbps);
  num_field(fp, ", \"d2h_gbps\": ", a->opts.d2h_gbps);
  num_field(fp, ", \"p2p_gbps\": ", a->opts.p2p_gbps);
  num_field(fp, ", \"kernel_us\": ", a->opts.kernel_us);
  num_field(fp, ", \"host_us\": ", a->opts.host_us);
}

/* The JSON's edges, as in graph files. RP_EINVAL: an edge unreadable. */
static rp_status json_edges(const rp_graph *g, FILE *fp) {
  fputs("},\n  \"edges\": [", fp);
  for (uint32_t i = 0; i < g->nedge; i++) {
    rp_edge e;
    if (rp_graph_edge(g, i, &e) != RP_OK)
      return RP_EINVAL;
    /* As in graph files: `after` edges have no buffer. */
    fprintf(fp, "%s\n    {\"from\": %u, \"to\": %u, \"kind\": \"%s\"",
            i ? "," : "", e.from, e.to, rp_edge_kind_name(e.kind));
    if (e.kind != RP_EDGE_AFTER && e.buf != RP_NONE)
      fprintf(fp, ", \"buffer\": %u", e.buf);
    fputc('}', fp);
  }
  return RP_OK;
}

/* The JSON's operations: lane, cost, times, slack, source. */
static void json_ops(const rp_analysis *a, FILE *fp) {
  const rp_graph *g = a->g;
  fputs(g->nedge ? "\n  ],\n  \"ops\": [" : "],\n  \"ops\": [", fp);
  for (uint32_t n = 0; n < a->nop; n++) {
    fprintf(fp, "%s\n    {\"id\": %u, \"name\": ", n ? "," : "", n);
    rp__put_json_str(fp, rp__op_name(a, n));
    fprintf(fp, ", \"type\": \"%s\", \"lane\": \"%s\", \"cost_us\": ",
            rp_op_type_name(g->op[n].type), a->lanes[a->lane[n]].name);
    rp__put_num(fp, a->cost[n]);
    num_field(fp, ", \"start_us\": ", a->start[n]);
    num_field(fp, ", \"end_us\": ", rp__end(a, n));
    num_field(fp, ", \"slack_us\": ", a->slack[n]);
    fprintf(fp, ", \"critical\": %s, \"source\": \"%s\"%s}",
            a->critical[n] ? "true" : "false",
            rp__source_name((rp_cost_source)a->source[n]),
            a->elided[n] ? ", \"elided\": true" : "");
  }
}

/* The JSON's lanes, those that hold only elided copies left out (no
 * lanes of the backend). RP_ENOMEM. */
static rp_status json_lanes(const rp_analysis *a, FILE *fp) {
  uint8_t *used = calloc(a->nlane ? a->nlane : 1, 1);
  if (!used)
    return RP_ENOMEM;
  for (uint32_t n = 0; n < a->nop; n++)
    used[a->lane[n]] |= !a->elided[n];
  fputs(a->nop ? "\n  ],\n  \"lanes\": [" : "],\n  \"lanes\": [", fp);
  uint32_t shown = 0;
  for (uint32_t l = 0; l < a->nlane; l++) {
    if (!used[l])
      continue;
    fprintf(fp, "%s\n    {\"name\": \"%s\", \"busy_us\": ", shown++ ? "," : "",
            a->lanes[l].name);
    rp__put_num(fp, a->lanes[l].busy_us);
    fputc('}', fp);
  }
  free(used);
  fputs(shown ? "\n  ],\n" : "],\n", fp);
  return RP_OK;
}

/* The JSON's summary: critical path, times, bounds, the prediction. */
static void json_summary(const rp_analysis *a, FILE *fp) {
  const rp_summary *s = &a->sum;
  fputs("  \"critical_path\": [", fp);
  for (uint32_t i = 0; i < a->ncrit; i++)
    fprintf(fp, "%s%u", i ? ", " : "", a->crit[i]);
  num_field(fp, "],\n  \"serial_us\": ", s->serial_us);
  num_field(fp, ", \"critical_path_us\": ", s->critical_path_us);
  num_field(fp, ", \"max_lane_us\": ", s->max_lane_us);
  num_field(fp, ", \"makespan_us\": ", s->makespan_us);
  num_field(fp, ",\n  \"bound\": {\"speedup\": ", s->bound);
  str_field(fp, ", \"limited_by\": ", s->limited_by);
  num_field(fp, "},\n  \"amdahl\": {\"compute_us\": ", s->amdahl_compute_us);
  num_field(fp, ", \"copy_us\": ", s->amdahl_copy_us);
  num_field(fp, ", \"speedup\": ", s->amdahl_speedup);
  num_field(fp, "},\n  \"predicted_speedup\": ", s->predicted_speedup);
  if (s->modelled) {
    num_field(fp, ", \"profile_range\": [", s->profile_lo);
    num_field(fp, ", ", s->profile_hi);
    fputs("]", fp);
  }
  fprintf(fp, ", \"prediction\": \"%s\", \"schedule_speedup\": ",
          !s->modelled    ? "bound only"
          : s->withheld   ? "withheld: machine busy"
          : s->calibrated ? "calibrated model"
                          : "uncalibrated model");
  rp__put_num(fp, s->schedule_speedup);
}

/* The JSON's model object (an analysis with a model): the model, its
 * prediction, the team's costs, the schedule it predicts per op. */
static void json_model(const rp_analysis *a, FILE *fp) {
  const rp_summary *s = &a->sum;
  str_field(fp, ",\n  \"model\": {\"backend\": ", a->mbackend);
  str_field(fp, ", \"machine\": ", a->mmachine);
  fprintf(fp, ", \"calibrated\": %s, \"mode\": ",
          a->mcalibrated ? "true" : "false");
  rp__put_json_str(fp, a->mmode);
  str_field(fp, ", \"serial_mode\": ", a->msmode);
  num_field(fp, ", \"serial_us\": ", s->model_serial_us);
  num_field(fp, ", \"overlap_us\": ", s->model_overlap_us);
  num_field(fp, ", \"speedup\": ", s->model_speedup);
  if (s->usable_cpus) {
    num_field(fp, ", \"runnable\": ", s->runnable);
    fprintf(fp, ", \"usable_cpus\": %u", s->usable_cpus);
  }
  if (s->stored_team_threads) {
    fprintf(fp, ", \"stored_team\": {\"threads\": %u, \"backend\": ",
            s->stored_team_threads);
    rp__put_json_str(fp, a->tbackend);
    fprintf(fp, ", \"used\": %s}", s->stored_team_used ? "true" : "false");
  }
  if (s->team_costs) {
    fprintf(fp, ", \"team_costs\": %d", s->team_costs);
    if (s->team_share > 0) {
      num_field(fp, ", \"team_share\": ", s->team_share);
    }
  }
  fprintf(fp, ", \"elided\": %u", a->nelided);
  fputs(",\n    \"ops\": [", fp);
  for (uint32_t n = 0; n < a->nop; n++) {
    fprintf(fp, "%s{\"id\": %u, \"start_us\": ", n ? ", " : "", n);
    rp__put_num(fp, a->mstart[n]);
    num_field(fp, ", \"end_us\": ", a->mend[n]);
    fputc('}', fp);
  }
  fputs("]}", fp);
}

rp_status rp_analysis_write_json(const rp_analysis *a, FILE *fp) {
  RP_ENTER();
  if (!a || !fp)
    return RP_NULL_ARG();
  json_options(a, fp);
  rp_status st = json_edges(a->g, fp);
  if (st != RP_OK)
    return st;
  json_ops(a, fp);
  st = json_lanes(a, fp);
  if (st != RP_OK)
    return st;
  json_summary(a, fp);
  if (a->sum.modelled)
    json_model(a, fp);
  fputs("\n}\n", fp);
  return done(fp);
}
