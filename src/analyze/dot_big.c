/* Graphviz output of a graph too big to draw whole: the critical path of
 * its analysis and the operations next to it, with a note saying what was
 * left out. Graphviz lays out a few thousand nodes in seconds, not a few
 * hundred thousand. */
#include <stdlib.h>
#include <string.h>
#include "analyze/analysis.h"

/* Writes s as the inside of a dot string. */
static void put_dot_str(FILE *fp, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(fp, "\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f)
      fputc(' ', fp);
    else
      fputc(*p, fp);
  }
}

/* Op n, or the ops n .. last of the critical path (count of them). */
static void write_node(FILE *fp, const rp_analysis *a, uint32_t n,
                       uint32_t count, uint32_t last, uint32_t hidden) {
  const rp_graph *g = a->g;
  if (count > 1) {
    fprintf(fp, "  n%u [label=\"#%u..#%u: %u ops\\n", n, n, last, count);
    put_dot_str(fp, rp__op_name(a, n));
    fputs(" .. ", fp);
    put_dot_str(fp, rp__op_name(a, last));
  } else {
    fprintf(fp, "  n%u [label=\"#%u ", n, n);
    put_dot_str(fp, rp__op_name(a, n));
    fprintf(fp, "\\n%s", rp_op_type_name(g->op[n].type));
  }
  if (hidden)
    fprintf(fp, "\\n+%u edges not drawn", hidden);
  fprintf(fp, "\", fillcolor=\"%s\"%s];\n",
          rp__lane_colour(a->lanes[a->lane[n]].kind),
          a->critical[n] ? ", penwidth=3, style=\"rounded,filled,bold\"" : "");
}

rp_status rp_graph_write_dot_limited(const rp_graph *g, FILE *fp,
                                     uint32_t max_nodes) {
  RP_ENTER();
  if (!g || !fp)
    return RP_NULL_ARG();
  uint32_t n = rp_graph_num_nodes(g);
  if (!max_nodes || n <= max_nodes)
    return rp_graph_write_dot(g, fp);
  rp_analysis *a;
  rp_status s = rp_analyze(g, NULL, &a);
  if (s != RP_OK)
    return s;
  uint32_t *id = malloc((size_t)n * sizeof *id);
  uint32_t *cnt = calloc((size_t)n, sizeof *cnt);
  uint32_t *end = calloc((size_t)n, sizeof *end);
  if (!id || !cnt || !end) {
    free(id), free(cnt), free(end);
    rp_analysis_destroy(a);
    return RP_ENOMEM;
  }
  memset(id, 0xff, (size_t)n * sizeof *id);
  /* Every critical op is drawn; when the path alone is too long, runs of
   * consecutive critical ops become one node each (at most half the
   * limit of them). */
  int group = a->ncrit > max_nodes;
  uint32_t half = max_nodes / 2 ? max_nodes / 2 : 1;
  uint32_t chunk = group ? (a->ncrit + half - 1) / half : 1, drawn = 0;
  for (uint32_t i = 0; i < a->ncrit; i++) {
    uint32_t u = a->crit[i], head = a->crit[i - i % chunk];
    id[u] = head;
    if (u == head) {
      cnt[u] = 0;
      drawn++;
    }
    cnt[head]++;
    end[head] = u;
  }
  /* Then their neighbours, nearest along the path first, to the limit. */
  for (uint32_t i = 0; !group && i < a->ncrit && drawn < max_nodes; i++) {
    uint32_t u = a->crit[i], k;
    for (int dir = 0; dir < 2; dir++) {
      const rp_node *nb =
          dir ? rp_graph_succs(g, u, &k) : rp_graph_preds(g, u, &k);
      for (uint32_t x = 0; x < k && drawn < max_nodes; x++)
        if (id[nb[x]] == RP_NONE) {
          id[nb[x]] = nb[x];
          cnt[nb[x]] = 1;
          drawn++;
        }
    }
  }
  fputs("digraph reprise {\n  graph [fontname=\"Helvetica\", "
        "labelloc=t];\n  node [shape=box, style=\"rounded,filled\", "
        "fontname=\"Helvetica\""
        ", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n",
        fp);
  /* Edges between drawn nodes (a collapsed run's inner edges vanish);
   * each node notes how many of its edges lead to ops not drawn. */
  uint32_t m = rp_graph_num_edges(g), nedges = 0;
  uint32_t *hidden = calloc((size_t)n, sizeof *hidden);
  if (!hidden) {
    free(id), free(cnt), free(end);
    rp_analysis_destroy(a);
    return RP_ENOMEM;
  }
  for (uint32_t i = 0; i < m; i++) {
    rp_edge e;
    rp_graph_edge(g, i, &e);
    uint32_t f = id[e.from], t = id[e.to];
    if (f != RP_NONE && t == RP_NONE)
      hidden[f]++;
    else if (t != RP_NONE && f == RP_NONE)
      hidden[t]++;
  }
  for (uint32_t u = 0; u < n; u++)
    if (id[u] == u)
      write_node(fp, a, u, cnt[u], end[u], hidden[u]);
  for (uint32_t i = 0; i < m; i++) {
    rp_edge e;
    rp_graph_edge(g, i, &e);
    uint32_t f = id[e.from], t = id[e.to];
    if (f == RP_NONE || t == RP_NONE || f == t)
      continue;
    fprintf(fp, "  n%u -> n%u [label=\"%s", f, t, rp_edge_kind_name(e.kind));
    if (e.buf != RP_NONE) {
      fputc(' ', fp);
      put_dot_str(fp, rp__buf_name(a, e.buf));
    }
    fprintf(fp, "\"%s];\n",
            a->critical[e.from] && a->critical[e.to] ? ", penwidth=3" : "");
    nedges++;
  }
  /* The note, last: only now is the number of edges drawn known. */
  fprintf(fp,
          "  graph [label=\"%u of %u operations drawn: the critical "
          "path (%u operations%s)%s; %u of %u edges. Left out: every "
          "other operation. reprise dot --full draws everything.\"];\n}\n",
          drawn, n, a->ncrit,
          group ? ", runs of consecutive operations drawn as one node" : "",
          group ? "" : " and the operations next to it", nedges, m);
  free(id);
  free(cnt);
  free(end);
  free(hidden);
  rp_analysis_destroy(a);
  return ferror(fp) ? RP_EIO : RP_OK;
}
