/* Graphviz output of a recorded graph: one node per operation for small
 * graphs, grouped by step beyond (record/dot_group.c). */
#include "record/dot.h"
#include "core/out.h"

/* A colour per lane kind, shaded per device. */
static const char *lane_colour(const rp__op *o) {
  static const char *const compute[] = {"#9ecae1", "#6baed6", "#4292c6",
                                        "#2171b5"};
  static const char *const h2d[] = {"#a1d99b", "#74c476", "#41ab5d", "#238b45"};
  static const char *const d2h[] = {"#fdae6b", "#fd8d3c", "#f16913", "#d94801"};
  static const char *const p2p[] = {"#bcbddc", "#9e9ac8", "#807dba", "#6a51a3"};
  unsigned d = (unsigned)o->device % 4;
  switch (o->type) {
  case RP_OP_KERNEL:
    return compute[d];
  case RP_OP_COPY_H2D:
    return h2d[d];
  case RP_OP_COPY_D2H:
    return d2h[d];
  case RP_OP_COPY_D2D:
    return p2p[d];
  default:
    return "#d9d9d9";
  }
}

/* Writes s as the inside of a dot string. */
static void put_escaped(rp__out *w, const char *s) {
  const char *run = s;
  for (; *s; s++) {
    if (*s != '"' && *s != '\\' && *s != '\n')
      continue;
    rp__out_mem(w, run, (size_t)(s - run));
    run = s + 1;
    rp__out_str(w, *s == '"' ? "\\\"" : *s == '\\' ? "\\\\" : "\\n");
  }
  rp__out_mem(w, run, (size_t)(s - run));
}

rp_status rp_graph_write_dot(const rp_graph *g, FILE *fp) {
  RP_ENTER();
  if (!g || !fp)
    return RP_BAD_ARG();
  if (g->nop > RP__DOT_DETAIL)
    return rp__dot_grouped(g, NULL, fp);
  rp__out *w = rp__out_new(fp);
  if (!w)
    return RP_ENOMEM;
  rp__out_str(
      w, "digraph reprise {\n  rankdir=TB;\n"
         "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\""
         ", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n");
  for (uint32_t i = 0; i < g->nop && !w->bad; i++) {
    const rp__op *o = &g->op[i];
    rp__out_str(w, "  n");
    rp__out_u64(w, i);
    rp__out_str(w, " [label=\"");
    rp__out_u64(w, i);
    rp__out_str(w, ": ");
    put_escaped(w, o->name);
    rp__out_str(w, "\\n");
    rp__out_str(w, rp_op_type_name(o->type));
    if (o->type == RP_OP_COPY_D2D) {
      rp__out_str(w, " dev ");
      rp__out_int(w, o->device);
      rp__out_str(w, "->");
      rp__out_int(w, o->dst_device);
    } else if (o->type != RP_OP_HOST) {
      rp__out_str(w, " dev ");
      rp__out_int(w, o->device);
    }
    rp__out_str(w, "\", fillcolor=\"");
    rp__out_str(w, lane_colour(o));
    rp__out_str(w, o->inserted ? "\", style=\"rounded,filled,dashed\"];\n"
                               : "\"];\n");
  }
  uint32_t m = rp_graph_num_edges(g);
  for (uint32_t i = 0; i < m && !w->bad; i++) {
    rp_edge e;
    rp_graph_edge(g, i, &e);
    rp__out_str(w, "  n");
    rp__out_u64(w, e.from);
    rp__out_str(w, " -> n");
    rp__out_u64(w, e.to);
    rp__out_str(w, " [label=\"");
    if (e.kind == RP_EDGE_AFTER) {
      rp__out_str(w, "after\", style=dashed];\n");
      continue;
    }
    rp__out_str(w, e.kind == RP_EDGE_RAW   ? "RAW "
                   : e.kind == RP_EDGE_WAR ? "WAR "
                                           : "WAW ");
    put_escaped(w, g->buf[e.buf].name);
    rp__out_str(w, "\"];\n");
  }
  if (rp__out_end(w))
    return RP_EIO;
  rp__dot_legend(g, NULL, fp);
  fputs("}\n", fp);
  return ferror(fp) ? RP_EIO : RP_OK;
}
