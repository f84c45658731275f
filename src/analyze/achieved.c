/* The achieved timeline beside the prediction: departures with their
 * causes, and a two-track Chrome trace with flow arrows for the edges. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analysis.h"

static double pstart(const rp_analysis *a, uint32_t n) {
  return a->mstart ? a->mstart[n] : a->start[n];
}
static double pend(const rp_analysis *a, uint32_t n) {
  return a->mstart ? a->mend[n] : rp__end(a, n);
}

static int bad_times(const rp_analysis *a, const double *s, const double *e) {
  for (uint32_t n = 0; n < a->nop; n++)
    if (!isfinite(s[n]) || !isfinite(e[n]) || e[n] < s[n])
      return 1;
  return 0;
}

/* The three parts of an op's departure: its duration, its wait between
 * its inputs being ready and its start, and how late its inputs were. */
typedef struct parts {
  double dur, gap, in, key;
  uint32_t last; /* predecessor that ended last (achieved), or RP_NONE */
  int which;     /* 0 dur, 1 gap, 2 in */
} parts;

static parts parts_of(const rp_analysis *a, const double *s, const double *e,
                      uint32_t n) {
  parts p = {0, 0, 0, 0, RP_NONE, 0};
  uint32_t np;
  const rp_node *pr = rp_graph_preds(a->g, n, &np);
  double ra = 0, rpred = 0;
  for (uint32_t i = 0; i < np; i++) {
    if (p.last == RP_NONE || e[pr[i]] > ra) {
      ra = e[pr[i]];
      p.last = pr[i];
    }
    if (pend(a, pr[i]) > rpred)
      rpred = pend(a, pr[i]);
  }
  p.dur = (e[n] - s[n]) - (pend(a, n) - pstart(a, n));
  p.gap = (s[n] - ra) - (pstart(a, n) - rpred);
  p.in = ra - rpred;
  double m[3] = {fabs(p.dur), fabs(p.gap), fabs(p.in)};
  p.which = m[1] > m[p.which] ? 1 : p.which;
  p.which = m[2] > m[p.which] ? 2 : p.which;
  p.key = m[p.which];
  return p;
}

static int is_copy(rp_op_type t) {
  return t == RP_OP_COPY_H2D || t == RP_OP_COPY_D2H || t == RP_OP_COPY_D2D;
}

/* First op other than n whose achieved interval meets (t0, t1) and that
 * satisfies want(). */
static uint32_t overlapping(const rp_analysis *a, const double *s,
                            const double *e, uint32_t n, double t0, double t1,
                            int (*want)(const rp_analysis *, uint32_t,
                                        uint32_t)) {
  for (uint32_t m = 0; m < a->nop; m++)
    if (m != n && s[m] < t1 && e[m] > t0 && want(a, n, m))
      return m;
  return RP_NONE;
}

static int same_lane(const rp_analysis *a, uint32_t n, uint32_t m) {
  return a->lane[n] == a->lane[m];
}
static int other_direction(const rp_analysis *a, uint32_t n, uint32_t m) {
  const rp__op *x = &a->g->op[n], *y = &a->g->op[m];
  return x->device == y->device &&
         ((x->type == RP_OP_COPY_H2D && y->type == RP_OP_COPY_D2H) ||
          (x->type == RP_OP_COPY_D2H && y->type == RP_OP_COPY_H2D));
}
static int kernel_same_device(const rp_analysis *a, uint32_t n, uint32_t m) {
  const rp__op *x = &a->g->op[n], *y = &a->g->op[m];
  return y->type == RP_OP_KERNEL &&
         (x->device == y->device ||
          (a->mphys[x->device] >= 0 &&
           a->mphys[x->device] == a->mphys[y->device]));
}

static void cause_of(const rp_analysis *a, const double *s, const double *e,
                     uint32_t n, const parts *p, rp_departure *d) {
  const rp__op *op = &a->g->op[n];
  d->blame = RP_NONE;
  if (p->which == 0) {
    d->cause = p->dur < 0 ? "ran shorter" : "ran longer";
    if (p->dur > 0 &&
        (op->type == RP_OP_COPY_H2D || op->type == RP_OP_COPY_D2H)) {
      d->blame = overlapping(a, s, e, n, s[n], e[n], other_direction);
      if (d->blame != RP_NONE)
        d->cause = "shared link";
    } else if (p->dur > 0 && op->type == RP_OP_KERNEL) {
      d->blame = overlapping(a, s, e, n, s[n], e[n], kernel_same_device);
      if (d->blame != RP_NONE)
        d->cause = "shared compute";
    }
  } else if (p->which == 1) {
    /* Only the wait beyond the predicted one: was the lane held then? */
    double ready = p->last == RP_NONE ? 0 : e[p->last];
    double pgap = s[n] - ready - p->gap;
    d->blame =
        overlapping(a, s, e, n, ready + (pgap > 0 ? pgap : 0), s[n], same_lane);
    d->cause = d->blame != RP_NONE ? "waited on a lane" : "launch";
  } else {
    d->blame = p->last;
    d->cause = p->last != RP_NONE && is_copy(a->g->op[p->last].type)
                   ? "waited on a copy"
                   : "waited on an op";
  }
}

typedef struct ranked {
  double key;
  uint32_t n;
} ranked;

static int ranked_cmp(const void *x, const void *y) {
  const ranked *a = x, *b = y;
  if (a->key != b->key)
    return a->key > b->key ? -1 : 1;
  return a->n < b->n ? -1 : a->n > b->n;
}

rp_status rp_analysis_departures(const rp_analysis *a, const double *start_us,
                                 const double *end_us, rp_departure *out,
                                 uint32_t max, uint32_t *count) {
  RP_ENTER();
  if (count)
    *count = 0;
  if (!a || !start_us || !end_us || (max && !out) ||
      bad_times(a, start_us, end_us))
    return RP_BAD_ARG();
  ranked *r = malloc(sizeof *r * (a->nop ? a->nop : 1));
  if (!r)
    return RP_ENOMEM;
  for (uint32_t n = 0; n < a->nop; n++) {
    parts p = parts_of(a, start_us, end_us, n);
    r[n].key = p.key;
    r[n].n = n;
  }
  qsort(r, a->nop, sizeof *r, ranked_cmp);
  uint32_t k = max < a->nop ? max : a->nop;
  for (uint32_t i = 0; i < k; i++) {
    uint32_t n = r[i].n;
    parts p = parts_of(a, start_us, end_us, n);
    rp_departure *d = &out[i];
    d->node = n;
    d->pred_start_us = pstart(a, n);
    d->pred_end_us = pend(a, n);
    d->start_us = start_us[n];
    d->end_us = end_us[n];
    d->own_us = p.dur + p.gap;
    d->late_us = end_us[n] - pend(a, n);
    cause_of(a, start_us, end_us, n, &p, d);
  }
  free(r);
  if (count)
    *count = k;
  return RP_OK;
}

rp_status rp_analysis_write_departures(const rp_analysis *a,
                                       const double *start_us,
                                       const double *end_us, unsigned top,
                                       FILE *fp) {
  RP_ENTER();
  if (!a || !fp)
    return RP_NULL_ARG();
  rp_departure *d = malloc(sizeof *d * (top ? top : 1));
  uint32_t k = 0;
  if (!d)
    return RP_ENOMEM;
  rp_status s = rp_analysis_departures(a, start_us, end_us, d, top, &k);
  if (s != RP_OK) {
    free(d);
    return s;
  }
  double ms_a = 0, ms_p = 0;
  for (uint32_t n = 0; n < a->nop; n++) {
    ms_a = end_us[n] > ms_a ? end_us[n] : ms_a;
    ms_p = pend(a, n) > ms_p ? pend(a, n) : ms_p;
  }
  fprintf(fp, "achieved %.3f us against predicted %.3f us (%s)\n", ms_a, ms_p,
          a->mstart ? "model" : "list schedule");
  fprintf(fp, "largest departures (achieved - predicted):\n");
  for (uint32_t i = 0; i < k; i++) {
    fprintf(fp,
            "  #%u %-20s  start %+.3f us, duration %+.3f us, end %+.3f "
            "us: %s",
            d[i].node, rp__op_name(a, d[i].node),
            d[i].start_us - d[i].pred_start_us,
            (d[i].end_us - d[i].start_us) -
                (d[i].pred_end_us - d[i].pred_start_us),
            d[i].late_us, d[i].cause);
    if (d[i].blame != RP_NONE)
      fprintf(fp, " (#%u %s)", d[i].blame, rp__op_name(a, d[i].blame));
    fputc('\n', fp);
  }
  free(d);
  return ferror(fp) ? RP_EIO : RP_OK;
}

static void track(const rp_analysis *a, FILE *fp, int pid, const char *name,
                  const double *s, const double *e) {
  fprintf(fp,
          ",\n  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, "
          "\"tid\": 0, \"args\": {\"name\": \"%s\"}}",
          pid, name);
  fprintf(fp,
          ",\n  {\"name\": \"process_sort_index\", \"ph\": \"M\", "
          "\"pid\": %d, \"tid\": 0, \"args\": {\"sort_index\": %d}}",
          pid, pid);
  for (uint32_t l = 0; l < a->nlane; l++)
    fprintf(fp,
            ",\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, "
            "\"tid\": %u, \"args\": {\"name\": \"%s\"}}",
            pid, l + 1, a->lanes[l].name);
  for (uint32_t n = 0; n < a->nop; n++) {
    fputs(",\n  {\"name\": ", fp);
    rp__put_json_str(fp, rp__op_name(a, n));
    fprintf(fp, ", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": ",
            rp_op_type_name(a->g->op[n].type));
    rp__put_num(fp, s ? s[n] : pstart(a, n));
    fputs(", \"dur\": ", fp);
    rp__put_num(fp, s ? e[n] - s[n] : pend(a, n) - pstart(a, n));
    fprintf(fp, ", \"pid\": %d, \"tid\": %u, \"args\": {\"id\": %u}}", pid,
            a->lane[n] + 1, n);
  }
  for (uint32_t i = 0; i < a->g->nedge; i++) {
    rp_edge ed;
    if (rp_graph_edge(a->g, i, &ed) != RP_OK)
      continue;
    char label[96];
    snprintf(label, sizeof label, "%s%s%.80s", rp_edge_kind_name(ed.kind),
             ed.kind != RP_EDGE_AFTER ? " " : "",
             ed.kind != RP_EDGE_AFTER ? rp__buf_name(a, ed.buf) : "");
    for (int end = 0; end < 2; end++) {
      uint32_t n = end ? ed.to : ed.from;
      fputs(",\n  {\"name\": ", fp);
      rp__put_json_str(fp, label);
      fprintf(fp,
              ", \"cat\": \"edge\", \"ph\": \"%s\", %s\"id\": %u, "
              "\"ts\": ",
              end ? "f" : "s", end ? "\"bp\": \"e\", " : "",
              2 * i + (unsigned)pid);
      rp__put_num(fp, s ? s[n] : pstart(a, n));
      fprintf(fp, ", \"pid\": %d, \"tid\": %u}", pid, a->lane[n] + 1);
    }
  }
}

rp_status rp_analysis_write_trace_achieved(const rp_analysis *a,
                                           const double *start_us,
                                           const double *end_us, FILE *fp) {
  RP_ENTER();
  if (!a || !fp || !start_us || !end_us || bad_times(a, start_us, end_us))
    return RP_BAD_ARG();
  fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n"
        "  {\"name\": \"reprise\", \"ph\": \"M\", \"pid\": 0, \"tid\": 0, "
        "\"args\": {}}",
        fp);
  track(a, fp, 1, a->mstart ? "predicted (model)" : "predicted (schedule)",
        NULL, NULL);
  track(a, fp, 2, "achieved", start_us, end_us);
  fputs("\n]}\n", fp);
  return ferror(fp) ? RP_EIO : RP_OK;
}

static int cmp_dbl(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

rp_status rp_achieved_compute(const rp_analysis *a, const double *serial_us,
                              const double *overlap_us, unsigned runs,
                              rp_achieved *out) {
  RP_ENTER();
  if (!out || !serial_us || !overlap_us || !runs)
    return RP_NULL_ARG();
  memset(out, 0, sizeof *out);
  double *r = malloc(sizeof *r * runs);
  if (!r)
    return RP_ENOMEM;
  for (unsigned i = 0; i < runs; i++) {
    if (!isfinite(serial_us[i]) || !isfinite(overlap_us[i]) ||
        !(serial_us[i] > 0) || !(overlap_us[i] > 0)) {
      free(r);
      return RP_EINVAL;
    }
    r[i] = serial_us[i] / overlap_us[i];
  }
  qsort(r, runs, sizeof *r, cmp_dbl);
  out->speedup = runs % 2 ? r[runs / 2] : (r[runs / 2 - 1] + r[runs / 2]) / 2;
  out->min = r[0];
  out->max = r[runs - 1];
  out->runs = runs;
  free(r);
  out->below_one = out->speedup < 1;
  if (a) {
    double p = a->sum.predicted_speedup;
    out->pred_lo = p * (1 - RP_PREDICT_TOLERANCE);
    out->pred_hi = p * (1 + RP_PREDICT_TOLERANCE);
    /* Without a model the headline is no prediction, and a withheld one
     * claims nothing: no range. */
    out->outside = a->sum.modelled && !a->sum.withheld &&
                   (out->speedup < out->pred_lo || out->speedup > out->pred_hi);
  }
  return RP_OK;
}

rp_status rp_achieved_compare_serial(rp_achieved *ach, const rp_analysis *a,
                                     double serial_us) {
  RP_ENTER();
  if (!ach || !a)
    return RP_NULL_ARG();
  double want = a->sum.modelled ? a->sum.model_serial_us : a->sum.serial_us;
  if (!isfinite(serial_us) || !(serial_us > 0) || !(want > 0)) {
    rp__set_last_errorf("rp_achieved_compare_serial: serial time %g us "
                        "against a predicted %g us",
                        serial_us, want);
    return RP_EINVAL;
  }
  ach->serial_ratio = serial_us / want;
  ach->serial_off = fabs(ach->serial_ratio - 1) > RP_SERIAL_TOLERANCE;
  return RP_OK;
}

rp_status rp_analysis_write_achieved(const rp_analysis *a,
                                     const rp_achieved *ach, FILE *fp) {
  RP_ENTER();
  if (!a || !ach || !fp || !ach->runs)
    return RP_NULL_ARG();
  rp__write_predicted(a, fp);
  fprintf(fp,
          "achieved speedup  %9.3fx  (median of %u timed pairs, "
          "serial / overlapped; %.3fx - %.3fx)\n",
          ach->speedup, ach->runs, ach->min, ach->max);
  fprintf(fp,
          "upper bound       %9.3fx  (serial / max(critical path, max "
          "lane): no replay beats it but by noise)\n",
          a->sum.bound);
  if (ach->below_one)
    fprintf(fp, "warning: the achieved speedup is below 1: the overlapped "
                "replay ran slower than the serial one\n");
  if (ach->outside)
    fprintf(fp,
            "warning: the achieved speedup %.3fx is outside the "
            "predicted range %.3fx - %.3fx (+-%.0f%%): the machine was "
            "busy, or the model misses something (docs/model.md)\n",
            ach->speedup, ach->pred_lo, ach->pred_hi,
            100 * RP_PREDICT_TOLERANCE);
  if (ach->serial_off)
    fprintf(fp,
            "warning: the serial replay took %.2fx the predicted one "
            "(%.3f ms: the profiled\n         costs and the model's "
            "overheads): the profile does not describe the\n         "
            "replays timed (the load changed between them, or the "
            "operations run\n         slower in a sequence than "
            "alone)\n",
            ach->serial_ratio,
            (a->sum.modelled ? a->sum.model_serial_us : a->sum.serial_us) /
                1e3);
  return ferror(fp) ? RP_EIO : RP_OK;
}
