/* Graphviz output of an analysis: lanes as clusters, critical path bold. */
#include <ctype.h>
#include <math.h>
#include <string.h>
#include <stdio.h>
#include "analyze/analysis.h"

/* Prints s inside a dot double-quoted string. */
static void put_dot_str(FILE *fp, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(fp, "\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", fp);
    else if (*p < 0x20 || *p == 0x7f)
      fputc(' ', fp);
    else
      fputc(*p, fp);
  }
}

/* Is u -> v a step of the critical path? The path's ids increase. */
static int crit_step(const rp_analysis *a, uint32_t u, uint32_t v) {
  if (!a->critical[u] || !a->critical[v])
    return 0;
  uint32_t lo = 0, hi = a->ncrit;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (a->crit[mid] < u)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo + 1 < a->ncrit && a->crit[lo] == u && a->crit[lo + 1] == v;
}

/* A time for a label: 4 significant digits at most (never exponents for
 * times up to 10^15 us), trailing zeros dropped: "5.461", "180", "1234". */
static void label_num(FILE *fp, double v) {
  if (!isfinite(v)) {
    fputs("?", fp);
    return;
  }
  double m = fabs(v);
  int dec = m >= 1000 ? 0 : m >= 100 ? 1 : m >= 10 ? 2 : 3;
  char buf[48];
  snprintf(buf, sizeof buf, "%.*f", dec, v);
  if (dec) {
    char *e = buf + strlen(buf) - 1;
    while (*e == '0')
      *e-- = 0;
    if (*e == '.')
      *e = 0;
  }
  fputs(strcmp(buf, "-0") ? buf : "0", fp);
}

rp_status rp_analysis_write_dot(const rp_analysis *a, FILE *fp) {
  if (!a || !fp)
    return RP_EINVAL;
  const rp_graph *g = a->g;
  fprintf(fp, "digraph reprise {\n  graph [fontname=\"Helvetica\", "
              "label=\"serial ");
  label_num(fp, a->sum.serial_us);
  fputs(" us, critical path ", fp);
  label_num(fp, a->sum.critical_path_us);
  fputs(" us, makespan ", fp);
  label_num(fp, a->sum.makespan_us);
  fputs(" us\", labelloc=t];\n"
        "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\""
        ", fontsize=10];\n"
        "  edge [fontname=\"Helvetica\", fontsize=9];\n", fp);
  /* One cluster per lane; nodes listed lane by lane in start order. */
  for (uint32_t l = 0; l < a->nlane; l++) {
    const rp__lane *ln = &a->lanes[l];
    fprintf(fp, "  subgraph cluster_%u {\n    label=\"%s\"; style=filled; "
                "color=\"#f2f2f2\";\n", l, ln->name);
    for (uint32_t i = 0; i < a->nop; i++) {
      uint32_t n = a->order[i];
      if (a->lane[n] != l)
        continue;
      fprintf(fp, "    n%u [label=\"#%u ", n, n);
      put_dot_str(fp, rp__op_name(a, n));
      fputs("\\n", fp);
      label_num(fp, a->start[n]);
      fputs(" .. ", fp);
      label_num(fp, rp__end(a, n));
      fprintf(fp, " us\", fillcolor=\"%s\"%s];\n", rp__lane_colour(ln->kind),
              a->critical[n] ? ", penwidth=3, style=\"rounded,filled,bold\""
                             : "");
    }
    fputs("  }\n", fp);
  }
  for (uint32_t i = 0; i < g->nedge; i++) {
    rp_edge e;
    if (rp_graph_edge(g, i, &e) != RP_OK)
      return RP_EINVAL;
    const char *k = rp_edge_kind_name(e.kind);
    fprintf(fp, "  n%u -> n%u [label=\"", e.from, e.to);
    for (const char *p = k; *p; p++)
      fputc(toupper((unsigned char)*p), fp);
    if (e.buf != RP_NONE) {
      fputc(' ', fp);
      put_dot_str(fp, rp__buf_name(a, e.buf));
    }
    fprintf(fp, "\"%s];\n",
            crit_step(a, e.from, e.to) ? ", penwidth=3, style=bold" : "");
  }
  fputs("}\n", fp);
  return ferror(fp) ? RP_EIO : RP_OK;
}
