/* Graphviz output of an analysis: lanes as clusters, critical path bold. */
#include <ctype.h>
#include <math.h>
#include <string.h>
#include <stdio.h>
#include "analyze/analysis.h"
#include "core/out.h"

/* Prints s inside a dot double-quoted string. */
static void put_dot_str(rp__out *w, const char *s) {
  const unsigned char *p = (const unsigned char *)s, *run = p;
  for (; *p; p++) {
    if (*p >= 0x20 && *p != 0x7f && *p != '"' && *p != '\\')
      continue;
    rp__out_mem(w, (const char *)run, (size_t)(p - run));
    run = p + 1;
    rp__out_str(w, *p == '"' ? "\\\"" : *p == '\\' ? "\\\\"
                   : *p == '\n' ? "\\n" : " ");
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

rp_status rp_analysis_write_dot(const rp_analysis *a, FILE *fp) {
  if (!a || !fp)
    return RP_EINVAL;
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
  rp__out_str(w, " us\", labelloc=t];\n"
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
  rp__out_str(w, "}\n");
  return rp__out_end(w) ? RP_EIO : RP_OK;
}
