/* Speedup against threads (streams, devices) as an SVG: the predicted
 * curve, the achieved points with their spread, the upper bound as the
 * top of a band. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analysis.h"

#define PW 640.0 /* picture */
#define PH 400.0
#define ML 64.0 /* margins */
#define MR 150.0
#define MT 40.0
#define MB 52.0

static int has(double v) { return isfinite(v) && v > 0; }

typedef struct frame {
  double x0, x1, ymax;
  int logx;
} frame;

static double px(const frame *f, double x) {
  double a = f->logx ? log2(x) : x, lo = f->logx ? log2(f->x0) : f->x0,
         hi = f->logx ? log2(f->x1) : f->x1;
  double w = PW - ML - MR;
  return hi > lo ? ML + (a - lo) / (hi - lo) * w : ML + w / 2;
}

static double py(const frame *f, double y) {
  return PH - MB - y / f->ymax * (PH - MT - MB);
}

/* The legend, right of the frame: its labels, and the picture's width,
 * wide enough for the longest label at LEGEND_CHAR_W pixels a character
 * (12 px sans-serif averages under 7.2: DejaVu Sans, Helvetica, Arial). */
#define LEGEND_X (PW - MR + 14)
#define LEGEND_TEXT_X (LEGEND_X + 18)
#define LEGEND_CHAR_W 7.5
static const char *const legend_label[] = {"predicted", "achieved (min-max)",
                                           "1 to upper bound"};

static double legend_right(void) {
  size_t n = 0;
  for (size_t i = 0; i < sizeof legend_label / sizeof *legend_label; i++)
    if (strlen(legend_label[i]) > n)
      n = strlen(legend_label[i]);
  double w = LEGEND_TEXT_X + (double)n * LEGEND_CHAR_W + 12;
  return w > PW ? w : PW;
}

/* A "nice" step for about 5 ticks up to top. */
static double tick_step(double top) {
  double raw = top / 5, p = pow(10, floor(log10(raw))), m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static int by_x(const void *a, const void *b) {
  const rp_speedup_point *p = a, *q = b;
  return p->x < q->x ? -1 : p->x > q->x;
}

/* The frame of points p (n, sorted by x): its x range, its top (a tenth
 * above the highest figure), log2 x when it spans a factor 4. 0 when a
 * point has no valid x. */
static int frame_of(const rp_speedup_point *p, unsigned n, frame *f) {
  *f = (frame){p[0].x, p[n - 1].x, 1, 0};
  for (unsigned i = 0; i < n; i++) {
    if (!has(p[i].x))
      return 0;
    double v[4] = {p[i].predicted, p[i].bound, p[i].achieved,
                   p[i].achieved_max};
    for (int k = 0; k < 4; k++)
      if (has(v[k]) && v[k] > f->ymax)
        f->ymax = v[k];
  }
  f->ymax *= 1.1;
  f->logx = f->x1 / f->x0 >= 4;
  return 1;
}

/* The XML header, the white background and the title. */
static void put_head(const char *title, FILE *fp) {
  fprintf(fp,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
          "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
          "font-family=\"sans-serif\" font-size=\"12\">\n",
          legend_right(), PH, legend_right(), PH);
  fputs("<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" "
        "fill=\"white\"/>\n",
        fp);
  fprintf(fp, "<text x=\"%.1f\" y=\"24\" font-size=\"15\">", ML);
  rp__put_xml_str(fp, title && *title ? title : "speedup");
  fputs("</text>\n", fp);
}

/* A point's figures, by which. */
enum { FIG_PREDICTED, FIG_BOUND, FIG_ACHIEVED };
static double fig(const rp_speedup_point *p, int which) {
  return which == FIG_PREDICTED ? p->predicted
         : which == FIG_BOUND   ? p->bound
                                : p->achieved;
}

/* How many of points p (n) have figure `which`. */
static unsigned count_fig(const rp_speedup_point *p, unsigned n, int which) {
  unsigned k = 0;
  for (unsigned i = 0; i < n; i++)
    k += has(fig(&p[i], which));
  return k;
}

/* "x,y " of each point that has figure `which`, in order of x. */
static void put_points(const frame *f, const rp_speedup_point *p, unsigned n,
                       int which, FILE *fp) {
  for (unsigned i = 0; i < n; i++)
    if (has(fig(&p[i], which)))
      fprintf(fp, "%.1f,%.1f ", px(f, p[i].x), py(f, fig(&p[i], which)));
}

/* The band: from 1 (no gain) up to the upper bound. */
static void put_band(const frame *f, const rp_speedup_point *p, unsigned n,
                     FILE *fp) {
  if (!count_fig(p, n, FIG_BOUND))
    return;
  fputs("<polygon class=\"bound\" fill=\"#d9e4f2\" stroke=\"#7f9cc2\" "
        "stroke-dasharray=\"4 3\" points=\"",
        fp);
  put_points(f, p, n, FIG_BOUND, fp);
  for (unsigned i = n; i-- > 0;)
    if (has(p[i].bound))
      fprintf(fp, "%.1f,%.1f ", px(f, p[i].x),
              py(f, p[i].bound < 1 ? p[i].bound : 1));
  fputs("\"/>\n", fp);
}

/* Axes, ticks, grid, the axes' labels. */
static void put_axes(const frame *f, const rp_speedup_point *p, unsigned n,
                     const char *xlabel, FILE *fp) {
  double step = tick_step(f->ymax);
  for (double y = 0; y <= f->ymax + 1e-9; y += step) {
    fprintf(fp,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"#e6e6e6\"/>\n",
            ML, py(f, y), PW - MR, py(f, y));
    fprintf(fp,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g"
            "</text>\n",
            ML - 6, py(f, y) + 4, y);
  }
  fprintf(fp,
          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
          "stroke=\"black\"/>\n",
          ML, PH - MB, PW - MR, PH - MB);
  fprintf(fp,
          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
          "stroke=\"black\"/>\n",
          ML, MT, ML, PH - MB);
  for (unsigned i = 0; i < n; i++)
    if (!i || p[i].x != p[i - 1].x)
      fprintf(fp,
              "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g"
              "</text>\n",
              px(f, p[i].x), PH - MB + 16, p[i].x);
  fprintf(fp, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
          ML + (PW - ML - MR) / 2, PH - 12);
  rp__put_xml_str(fp, xlabel && *xlabel ? xlabel : "threads");
  fputs("</text>\n", fp);
  fprintf(fp,
          "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" "
          "transform=\"rotate(-90 16 %.1f)\">speedup (x)</text>\n",
          MT + (PH - MT - MB) / 2, MT + (PH - MT - MB) / 2);
}

/* The predicted curve and its points. */
static void put_predicted(const frame *f, const rp_speedup_point *p, unsigned n,
                          FILE *fp) {
  if (count_fig(p, n, FIG_PREDICTED) > 1) {
    fputs("<polyline class=\"predicted\" fill=\"none\" stroke=\"#1f6fb4\" "
          "stroke-width=\"2\" points=\"",
          fp);
    put_points(f, p, n, FIG_PREDICTED, fp);
    fputs("\"/>\n", fp);
  }
  for (unsigned i = 0; i < n; i++)
    if (has(p[i].predicted))
      fprintf(fp,
              "<circle class=\"predicted\" cx=\"%.1f\" cy=\"%.1f\" "
              "r=\"4\" fill=\"#1f6fb4\"><title>predicted %g: %.3fx"
              "</title></circle>\n",
              px(f, p[i].x), py(f, p[i].predicted), p[i].x, p[i].predicted);
}

/* The achieved points, their spread as error bars, joined. */
static void put_achieved(const frame *f, const rp_speedup_point *p, unsigned n,
                         FILE *fp) {
  if (count_fig(p, n, FIG_ACHIEVED) > 1) {
    fputs("<polyline class=\"achieved\" fill=\"none\" stroke=\"#d95f02\" "
          "stroke-width=\"1.5\" stroke-dasharray=\"5 3\" points=\"",
          fp);
    put_points(f, p, n, FIG_ACHIEVED, fp);
    fputs("\"/>\n", fp);
  }
  for (unsigned i = 0; i < n; i++) {
    if (!has(p[i].achieved))
      continue;
    double x = px(f, p[i].x);
    double lo = has(p[i].achieved_min) ? p[i].achieved_min : p[i].achieved;
    double hi = has(p[i].achieved_max) ? p[i].achieved_max : p[i].achieved;
    fprintf(fp,
            "<g class=\"errorbar\" stroke=\"#d95f02\"><line x1=\"%.1f\" "
            "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/><line x1=\"%.1f\" "
            "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/><line x1=\"%.1f\" "
            "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/></g>\n",
            x, py(f, lo), x, py(f, hi), x - 4, py(f, lo), x + 4, py(f, lo),
            x - 4, py(f, hi), x + 4, py(f, hi));
    fprintf(fp,
            "<rect class=\"achieved\" x=\"%.1f\" y=\"%.1f\" "
            "width=\"8\" height=\"8\" fill=\"#d95f02\"><title>achieved "
            "%g: %.3fx (%.3fx - %.3fx)</title></rect>\n",
            x - 4, py(f, p[i].achieved) - 4, p[i].x, p[i].achieved, lo, hi);
  }
}

/* The legend, right of the frame. */
static void put_legend(FILE *fp) {
  double lx = LEGEND_X, ly = MT + 10, tx = LEGEND_TEXT_X;
  fprintf(fp,
          "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#1f6fb4\"/>"
          "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
          lx + 6, ly, tx, ly + 4, legend_label[0]);
  fprintf(fp,
          "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" "
          "fill=\"#d95f02\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
          lx + 2, ly + 16, tx, ly + 24, legend_label[1]);
  fprintf(fp,
          "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" "
          "fill=\"#d9e4f2\" stroke=\"#7f9cc2\"/><text x=\"%.1f\" "
          "y=\"%.1f\">%s</text>\n",
          lx, ly + 35, tx, ly + 44, legend_label[2]);
}

rp_status rp_speedup_write_svg(const rp_speedup_point *pts, unsigned n,
                               const char *title, const char *xlabel,
                               FILE *fp) {
  RP_ENTER();
  if (!pts || !n || !fp)
    return RP_NULL_ARG();
  rp_speedup_point *p = malloc(sizeof *p * n);
  if (!p)
    return RP_ENOMEM;
  memcpy(p, pts, sizeof *p * n);
  qsort(p, n, sizeof *p, by_x);
  frame f;
  if (!frame_of(p, n, &f)) {
    free(p);
    return RP_EINVAL;
  }
  put_head(title, fp);
  put_band(&f, p, n, fp);
  put_axes(&f, p, n, xlabel, fp);
  put_predicted(&f, p, n, fp);
  put_achieved(&f, p, n, fp);
  put_legend(fp);
  fputs("</svg>\n", fp);
  free(p);
  return ferror(fp) ? RP_EIO : RP_OK;
}
