/* Graphviz output of a recorded graph. */
#include "record/graph.h"

/* A colour per lane kind, shaded per device. */
static const char *lane_colour(const rp__op *o) {
  static const char *const compute[] = {"#9ecae1", "#6baed6", "#4292c6",
                                        "#2171b5"};
  static const char *const h2d[] = {"#a1d99b", "#74c476", "#41ab5d",
                                    "#238b45"};
  static const char *const d2h[] = {"#fdae6b", "#fd8d3c", "#f16913",
                                    "#d94801"};
  static const char *const p2p[] = {"#bcbddc", "#9e9ac8", "#807dba",
                                    "#6a51a3"};
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
static void put_escaped(FILE *fp, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fputc('\\', fp);
    if (*s == '\n')
      fputs("\\n", fp);
    else
      fputc(*s, fp);
  }
}

rp_status rp_graph_write_dot(const rp_graph *g, FILE *fp) {
  if (!g || !fp)
    return RP_EINVAL;
  fputs("digraph reprise {\n  rankdir=TB;\n"
        "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\""
        ", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n",
        fp);
  for (uint32_t i = 0; i < g->nop; i++) {
    const rp__op *o = &g->op[i];
    fprintf(fp, "  n%u [label=\"%u: ", i, i);
    put_escaped(fp, o->name);
    fprintf(fp, "\\n%s", rp_op_type_name(o->type));
    if (o->type == RP_OP_COPY_D2D)
      fprintf(fp, " dev %d->%d", o->device, o->dst_device);
    else if (o->type != RP_OP_HOST)
      fprintf(fp, " dev %d", o->device);
    fprintf(fp, "\", fillcolor=\"%s\"%s];\n", lane_colour(o),
            o->inserted ? ", style=\"rounded,filled,dashed\"" : "");
  }
  uint32_t m = rp_graph_num_edges(g);
  for (uint32_t i = 0; i < m; i++) {
    rp_edge e;
    rp_graph_edge(g, i, &e);
    fprintf(fp, "  n%u -> n%u [label=\"", e.from, e.to);
    if (e.kind == RP_EDGE_AFTER)
      fputs("after", fp);
    else {
      fprintf(fp, "%s ", e.kind == RP_EDGE_RAW   ? "RAW"
                         : e.kind == RP_EDGE_WAR ? "WAR"
                                                 : "WAW");
      put_escaped(fp, g->buf[e.buf].name);
    }
    fprintf(fp, "\"%s];\n", e.kind == RP_EDGE_AFTER ? ", style=dashed" : "");
  }
  fputs("}\n", fp);
  return ferror(fp) ? RP_EIO : RP_OK;
}
