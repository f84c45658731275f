/* Graphviz output of an analysis: lanes as clusters, critical path bold. */
#include <ctype.h>
#include <math.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include "analyze/analysis.h"
#include "core/out.h"
#include "record/dot.h"

/* Prints s inside a dot double-quoted string. */
static void put_dot_str(rp__out *w, const char *s) {
  const unsigned char *p = (const unsigned char *)s, *run = p;
  for (; *p; p++) {
    if (*p >= 0x20 && *p != 0x7f && *p != '"' && *p != '\\')
      continue;
    rp__out_mem(w, (const char *)run, (size_t)(p - run));
    run = p + 1;
    rp__out_str(w, *p == '"'    ? "\\\""
                   : *p == '\\' ? "\\\\"
                   : *p == '\n' ? "\\n"
                                : " ");
  }
  rp__out_mem(w, (const char *)run, (size_t)(p - run));
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
static void label_num(rp__out *w, double v) {
  if (!isfinite(v)) {
    rp__out_str(w, "?");
    return;
  }
  double m = fabs(v);
  if (m >= 1000 && m < 1e15 && v == floor(v)) { /* whole: no formatting */
    if (v < 0)
      rp__out_str(w, "-");
    rp__out_u64(w, (uint64_t)m);
    return;
  }
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
  rp__out_str(w, strcmp(buf, "-0") ? buf : "0");
}

/* The drawing of a big graph: grouped by step (record/dot_group.c), with
 * the analysis' lanes, times and critical path. */
static rp_status write_grouped(const rp_analysis *a, FILE *fp) {
  const char **names = malloc(sizeof *names * (a->nlane ? a->nlane : 1));
  int *kinds = malloc(sizeof *kinds * (a->nlane ? a->nlane : 1));
  double *end = malloc(sizeof *end * (a->nop ? a->nop : 1));
  char title[160];
  rp_status s = RP_ENOMEM;
  if (names && kinds && end) {
    /* rp__lane_kind and the drawing's kinds name the same lanes. */
    for (uint32_t l = 0; l < a->nlane; l++) {
      names[l] = a->lanes[l].name;
      kinds[l] = (int)a->lanes[l].kind;
    }
    for (uint32_t n = 0; n < a->nop; n++)
      end[n] = rp__end(a, n);
    char t[3][32];
    const double v[3] = {a->sum.serial_us, a->sum.critical_path_us,
                         a->sum.makespan_us};
    for (int i = 0; i < 3; i++)
      snprintf(t[i], sizeof t[i], v[i] >= 1000 ? "%.0f" : "%.4g", v[i]);
    snprintf(title, sizeof title,
             "serial %s us, critical path %s us, "
             "makespan %s us",
             t[0], t[1], t[2]);
    rp__dot_extra x = {title,    a->lane, names,       kinds,   a->nlane,
                       a->start, end,     a->critical, a->crit, a->ncrit};
    s = rp__dot_grouped(a->g, &x, fp);
  }
  free(names);
  free(kinds);
  free(end);
  return s;
}

/* The legend of the detailed drawing: its lanes' colours (one per kind,
 * rp__lane_colour) and the critical path. */
static void legend(const rp_analysis *a, FILE *fp) {
  fputs("  legend [shape=plaintext, fontsize=9, label=<<TABLE BORDER=\"0\" "
        "CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\">"
        "<TR><TD COLSPAN=\"2\"><B>legend</B></TD></TR>\n",
        fp);
  static const char *const what[RP__LANE_KINDS] = {
      "kernels",          "copies host to device", "copies device to host",
      "copies both ways", "peer copies",           "host tasks"};
  for (uint32_t l = 0; l < a->nlane; l++)
    fprintf(fp,
            "    <TR><TD BGCOLOR=\"%s\">    </TD><TD ALIGN=\"LEFT\">"
            "%s: %s</TD></TR>\n",
            rp__lane_colour(a->lanes[l].kind), a->lanes[l].name,
            what[a->lanes[l].kind % RP__LANE_KINDS]);
  fputs("    <TR><TD>&#8594;</TD><TD ALIGN=\"LEFT\">waits for: RAW, WAR or "
        "WAW on a buffer, or AFTER</TD></TR>\n    <TR><TD><B>bold</B></TD>"
        "<TD ALIGN=\"LEFT\">the critical path</TD></TR>\n  </TABLE>>];\n",
        fp);
}

rp_status rp_analysis_write_dot(const rp_analysis *a, FILE *fp) {
  RP_ENTER();
  if (!a || !fp)
    return RP_NULL_ARG();
  if (a->nop > RP__DOT_DETAIL)
    return write_grouped(a, fp);
  const rp_graph *g = a->g;
  rp__out *w = rp__out_new(fp);
  if (!w)
    return RP_ENOMEM;
  rp__out_str(w, "digraph reprise {\n  graph [fontname=\"Helvetica\", "
                 "label=\"serial ");
  label_num(w, a->sum.serial_us);
  rp__out_str(w, " us, critical path ");
  label_num(w, a->sum.critical_path_us);
  rp__out_str(w, " us, makespan ");
  label_num(w, a->sum.makespan_us);
  rp__out_str(
      w, " us\", labelloc=t];\n"
         "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\""
         ", fontsize=10];\n"
         "  edge [fontname=\"Helvetica\", fontsize=9];\n");
  /* One cluster per lane; nodes listed lane by lane in start order. */
  for (uint32_t l = 0; l < a->nlane && !w->bad; l++) {
    const rp__lane *ln = &a->lanes[l];
    rp__out_str(w, "  subgraph cluster_");
    rp__out_u64(w, l);
    rp__out_str(w, " {\n    label=\"");
    rp__out_str(w, ln->name);
    rp__out_str(w, "\"; style=filled; color=\"#f2f2f2\";\n");
    for (uint32_t i = 0; i < a->nop; i++) {
      uint32_t n = a->order[i];
      if (a->lane[n] != l)
        continue;
      rp__out_str(w, "    n");
      rp__out_u64(w, n);
      rp__out_str(w, " [label=\"#");
      rp__out_u64(w, n);
      rp__out_str(w, " ");
      put_dot_str(w, rp__op_name(a, n));
      rp__out_str(w, "\\n");
      label_num(w, a->start[n]);
      rp__out_str(w, " .. ");
      label_num(w, rp__end(a, n));
      rp__out_str(w, " us\", fillcolor=\"");
      rp__out_str(w, rp__lane_colour(ln->kind));
      rp__out_str(w, a->critical[n]
                         ? "\", penwidth=3, style=\"rounded,filled,bold\"];\n"
                         : "\"];\n");
    }
    rp__out_str(w, "  }\n");
  }
  for (uint32_t i = 0; i < g->nedge && !w->bad; i++) {
    rp_edge e;
    if (rp_graph_edge(g, i, &e) != RP_OK) {
      rp__out_end(w);
      return RP_EINVAL;
    }
    rp__out_str(w, "  n");
    rp__out_u64(w, e.from);
    rp__out_str(w, " -> n");
    rp__out_u64(w, e.to);
    rp__out_str(w, " [label=\"");
    char k[8];
    const char *kn = rp_edge_kind_name(e.kind);
    size_t j = 0;
    for (; kn[j] && j < sizeof k - 1; j++)
      k[j] = (char)toupper((unsigned char)kn[j]);
    k[j] = '\0';
    rp__out_str(w, k);
    if (e.buf != RP_NONE) {
      rp__out_str(w, " ");
      put_dot_str(w, rp__buf_name(a, e.buf));
    }
    rp__out_str(w, crit_step(a, e.from, e.to) ? "\", penwidth=3, style=bold];\n"
                                              : "\"];\n");
  }
  if (rp__out_end(w))
    return RP_EIO;
  legend(a, fp);
  fputs("}\n", fp);
  return ferror(fp) ? RP_EIO : RP_OK;
}
