/* SVG Gantt chart of the schedule: a row per lane, a bar per operation
 * (over SVG_LIMIT operations, a bar per run of operations closer than a
 * pixel). */
#include <math.h>
#include <stdlib.h>
#include "analyze/analysis.h"

#define LEFT 110.0  /* room for the lane names */
#define PLOT 1000.0 /* width of the time axis */
#define ROW 26.0
#define TOP 30.0
/* Over this many operations, bars closer than a pixel are merged. */
#define SVG_LIMIT 2000

void rp__put_xml_str(FILE *fp, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '&':
      fputs("&amp;", fp);
      break;
    case '<':
      fputs("&lt;", fp);
      break;
    case '>':
      fputs("&gt;", fp);
      break;
    case '"':
      fputs("&quot;", fp);
      break;
    default:
      fputc(*p < 0x20 ? ' ' : *p, fp);
    }
  }
}

/* A tick step of 1, 2 or 5 times a power of ten, about 10 ticks. */
static double tick_step(double span) {
  double raw = span / 10, p = pow(10, floor(log10(raw)));
  return raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}

/* Bars of one lane merged while they are less than a pixel apart. */
typedef struct span {
  double x0, x1, t0, t1;
  uint32_t first, count;
  int crit;
} span;

static void span_flush(FILE *fp, const rp_analysis *a, uint32_t l, uint32_t row,
                       span *s, uint32_t *bars) {
  if (!s->count)
    return;
  double w = s->x1 - s->x0;
  fprintf(fp,
          "<rect x=\"%.3f\" y=\"%.1f\" width=\"%.3f\" height=\"%.0f\" "
          "fill=\"%s\" stroke=\"#000000\" stroke-width=\"%s\">"
          "<title>%u ops from #%u (",
          s->x0, TOP + ROW * row + 3, w < 0.5 ? 0.5 : w, ROW - 6,
          rp__lane_colour(a->lanes[l].kind), s->crit ? "2" : "0.3", s->count,
          s->first);
  rp__put_xml_str(fp, rp__op_name(a, s->first));
  fprintf(fp, "): %.3f .. %.3f us</title></rect>\n", s->t0, s->t1);
  s->count = 0;
  (*bars)++;
}

/* The bars of a big schedule: per lane, operations in start order merged
 * into one bar while less than a pixel apart (critical ones marked). */
static rp_status merged_bars(const rp_analysis *a, FILE *fp, double scale,
                             const uint32_t *row, uint32_t nrow) {
  span *sp = calloc(a->nlane ? a->nlane : 1, sizeof *sp);
  if (!sp)
    return RP_ENOMEM;
  uint32_t bars = 0;
  for (uint32_t i = 0; i < a->nop; i++) {
    uint32_t n = a->order[i], l = a->lane[n];
    if (a->elided[n])
      continue;
    span *s = &sp[l];
    double x0 = LEFT + a->start[n] * scale, x1 = x0 + a->cost[n] * scale;
    if (s->count && x0 > s->x1 + 1)
      span_flush(fp, a, l, row[l], s, &bars);
    if (!s->count) {
      *s = (span){x0, x1, a->start[n], rp__end(a, n), n, 0, 0};
    }
    if (x1 > s->x1)
      s->x1 = x1;
    if (rp__end(a, n) > s->t1)
      s->t1 = rp__end(a, n);
    s->count++;
    s->crit |= a->critical[n];
  }
  for (uint32_t l = 0; l < a->nlane; l++)
    span_flush(fp, a, l, row[l], &sp[l], &bars);
  fprintf(fp,
          "<text x=\"4\" y=\"%.1f\">%u operations drawn as %u bars: "
          "operations less than a pixel apart on a lane are merged "
          "(one bar per operation up to %d operations; the trace has "
          "them all)</text>\n",
          TOP + ROW * nrow + 44, a->nop, bars, SVG_LIMIT);
  free(sp);
  return RP_OK;
}

rp_status rp_analysis_write_svg(const rp_analysis *a, FILE *fp) {
  RP_ENTER();
  if (!a || !fp)
    return RP_NULL_ARG();
  double ms = a->sum.makespan_us;
  double scale = ms > 0 ? PLOT / ms : 0;
  int big = a->nop > SVG_LIMIT;
  /* A row per lane of the backend: none for lanes that hold only copies
   * it elides. */
  uint32_t *row = calloc(a->nlane ? a->nlane : 1, sizeof *row), nrow = 0;
  if (!row)
    return RP_ENOMEM;
  for (uint32_t n = 0; n < a->nop; n++)
    row[a->lane[n]] |= !a->elided[n];
  for (uint32_t l = 0; l < a->nlane; l++)
    row[l] = row[l] ? nrow++ : UINT32_MAX;
  double h = TOP + ROW * nrow + (big ? 50 : 30);
  fprintf(fp,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
          "height=\"%.0f\" font-family=\"Helvetica, sans-serif\" "
          "font-size=\"11\">\n"
          "<text x=\"4\" y=\"16\">makespan %.3f us, serial %.3f us, "
          "critical path %.3f us (bold)</text>\n",
          LEFT + PLOT + 20, h, ms, a->sum.serial_us, a->sum.critical_path_us);
  for (uint32_t l = 0; l < a->nlane; l++) {
    if (row[l] == UINT32_MAX)
      continue;
    double y = TOP + ROW * row[l];
    fprintf(fp,
            "<rect x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" "
            "fill=\"%s\"/>\n<text x=\"4\" y=\"%.1f\">%s</text>\n",
            y, LEFT + PLOT + 20, ROW, row[l] % 2 ? "#ffffff" : "#f6f6f6",
            y + ROW / 2 + 4, a->lanes[l].name);
  }
  if (ms > 0) {
    double step = tick_step(ms), yb = TOP + ROW * nrow;
    for (int k = 0; step > 0 && k <= 100; k++) {
      double t = k * step, x = LEFT + t * scale;
      if (t > ms * (1 + 1e-12))
        break;
      fprintf(fp,
              "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
              "stroke=\"#cccccc\"/>\n<text x=\"%.2f\" y=\"%.1f\" "
              "text-anchor=\"middle\">%g</text>\n",
              x, TOP, x, yb + 4, x, yb + 16, t);
    }
    fprintf(fp, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">us</text>\n",
            LEFT + PLOT + 18, yb + 28);
  }
  if (big) {
    rp_status st = merged_bars(a, fp, scale, row, nrow);
    if (st != RP_OK) {
      free(row);
      return st;
    }
  }
  for (uint32_t n = 0; !big && n < a->nop; n++) {
    if (a->elided[n])
      continue;
    const rp__lane *ln = &a->lanes[a->lane[n]];
    double x = LEFT + a->start[n] * scale, w = a->cost[n] * scale;
    double y = TOP + ROW * row[a->lane[n]] + 3;
    fprintf(fp,
            "<rect x=\"%.3f\" y=\"%.1f\" width=\"%.3f\" height=\"%.0f\" "
            "fill=\"%s\" stroke=\"#000000\" stroke-width=\"%s\">"
            "<title>#%u ",
            x, y, w < 0.5 ? 0.5 : w, ROW - 6, rp__lane_colour(ln->kind),
            a->critical[n] ? "2" : "0.3", n);
    rp__put_xml_str(fp, rp__op_name(a, n));
    fprintf(fp, ": %.3f .. %.3f us, slack %.3f us</title></rect>\n",
            a->start[n], rp__end(a, n), a->slack[n]);
  }
  free(row);
  fputs("</svg>\n", fp);
  return ferror(fp) ? RP_EIO : RP_OK;
}
