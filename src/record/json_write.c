/* JSON graph files ("reprise-graph", version 1): writing. */
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "record/json_read.h"
#include "record/hazard.h"
#include "core/out.h"

/* ------------------------------------------------------------------------
 * Writing. The file is streamed through a local buffer rather than built
 * as a cJSON tree: a tree of a graph with millions of operations would take
 * gigabytes. Output depends only on the graph, so equal graphs give equal
 * bytes.
 * ---------------------------------------------------------------------- */

static void w_space(rp__out *w, int space) {
  if (space == RP_SPACE_HOST) {
    rp__out_str(w, "\"host\"");
    return;
  }
  rp__out_str(w, "\"device:");
  rp__out_u64(w, (uint64_t)space);
  rp__out_str(w, "\"");
}

static void w_key_u64(rp__out *w, const char *key, uint64_t v) {
  rp__out_str(w, key);
  rp__out_u64(w, v);
}

static void w_u64_list(rp__out *w, const uint64_t *v, unsigned n) {
  rp__out_str(w, "[");
  for (unsigned i = 0; i < n; i++) {
    if (i)
      rp__out_str(w, ", ");
    rp__out_u64(w, v[i]);
  }
  rp__out_str(w, "]");
}

static void write_buffer(rp__out *w, const rp__buffer *b, uint32_t i) {
  w_key_u64(w, "    {\"id\": ", i);
  rp__out_str(w, ", \"name\": ");
  rp__out_jstr(w, b->name);
  w_key_u64(w, ", \"bytes\": ", b->bytes);
  w_key_u64(w, ", \"elem\": ", b->elem);
  if (b->ndims) {
    rp__out_str(w, ", \"dims\": ");
    w_u64_list(w, b->dims, b->ndims);
  }
  rp__out_str(w, "}");
}

static void write_access(rp__out *w, const rp__access *a) {
  w_key_u64(w, "       {\"buffer\": ", a->region.buf);
  rp__out_str(w, ", \"space\": ");
  w_space(w, a->space);
  rp__out_str(w, ", \"mode\": \"");
  rp__out_str(w, (unsigned)a->mode < 4 ? rp__json_mode_names[a->mode] : "?");
  rp__out_str(w, "\"");
  if (a->region.kind == RP_REGION_BOX) {
    rp__out_str(w, ", \"box\": {\"lo\": ");
    w_u64_list(w, a->region.lo, a->region.ndims);
    rp__out_str(w, ", \"hi\": ");
    w_u64_list(w, a->region.hi, a->region.ndims);
    rp__out_str(w, "}");
  } else if (a->region.kind == RP_REGION_BYTES) {
    w_key_u64(w, ", \"offset\": ", a->region.offset);
    w_key_u64(w, ", \"bytes\": ", a->region.bytes);
  }
  rp__out_str(w, "}");
}

static void write_op(rp__out *w, const rp_graph *g, uint32_t i) {
  const rp__op *o = &g->op[i];
  w_key_u64(w, "    {\"id\": ", i);
  rp__out_str(w, ", \"name\": ");
  rp__out_jstr(w, o->name ? o->name : "");
  rp__out_str(w, ", \"type\": \"");
  rp__out_str(w, (unsigned)o->type < 5 ? rp__json_type_names[o->type] : "?");
  rp__out_str(w, "\"");
  if (o->type != RP_OP_HOST && o->device >= 0)
    w_key_u64(w, ", \"device\": ", (uint64_t)o->device);
  if (o->type == RP_OP_COPY_D2D) {
    w_key_u64(w, ", \"src_device\": ", (uint64_t)o->device);
    w_key_u64(w, ", \"dst_device\": ", (uint64_t)o->dst_device);
  }
  if (o->type == RP_OP_KERNEL) {
    const char *kn = o->kernel ? o->kernel->name : o->kernel_name;
    if (kn) {
      rp__out_str(w, ", \"kernel\": ");
      rp__out_jstr(w, kn);
    }
    rp_dims d = rp__op_space(g, i);
    uint64_t sp[3] = {d.x, d.y, d.z};
    rp__out_str(w, ", \"space\": ");
    w_u64_list(w, sp, 3);
    /* The scalar parameters' values, as the raw 64 bits of each slot. */
    rp_slot v[RP_MAX_PARAMS];
    unsigned nv = 0;
    rp_node_scalars(g, i, v, RP_MAX_PARAMS, &nv);
    for (unsigned k = 0; k < nv && k < RP_MAX_PARAMS; k++) {
      char hex[24];
      snprintf(hex, sizeof hex, "\"0x%llx\"", (unsigned long long)v[k].u64);
      rp__out_str(w, k ? ", " : ", \"scalars\": [");
      rp__out_str(w, hex);
      if (k + 1 == nv || k + 1 == RP_MAX_PARAMS)
        rp__out_str(w, "]");
    }
  }
  if (o->inserted)
    rp__out_str(w, ", \"inserted\": true");
  if (o->cost_us >= 0 && isfinite(o->cost_us)) {
    rp__out_str(w, ", \"cost_us\": ");
    rp__out_num(w, o->cost_us);
  }
  rp__measured_write(w, g, i);
  rp__team_write(w, g, i);
  rp__out_str(w, ",\n     \"access\": [");
  for (uint32_t k = 0; k < o->nacc; k++) {
    rp__out_str(w, k ? ",\n" : "\n");
    rp__access a = rp__acc_get(g, i, k);
    write_access(w, &a);
  }
  rp__out_str(w, "],\n     \"after\": [");
  for (uint32_t k = 0; k < o->nafter; k++) {
    if (k)
      rp__out_str(w, ", ");
    rp__out_u64(w, g->after[o->after0 + k]);
  }
  rp__out_str(w, "]}");
}

/* Edge i of a graph being written, in (from, to) order: from the
 * successor CSR once ended (*f is the cursor over sources, from 0), else
 * from @p sorted. */
static rp_edge edge_at(const rp_graph *g, const rp_edge *sorted, uint32_t i,
                       uint32_t *f) {
  rp_edge e;
  if (!g->ended)
    return sorted[i];
  while (g->succ_off[*f + 1] <= i)
    (*f)++;
  e.from = *f;
  e.to = g->succ[i];
  e.kind = (rp_edge_kind)(g->ekind[i] >> 30);
  e.buf = (g->ekind[i] & ((1u << 30) - 1)) - 1;
  return e;
}

static int edge_cmp(const void *a, const void *b) {
  const rp_edge *x = a, *y = b;
  if (x->from != y->from)
    return x->from < y->from ? -1 : 1;
  if (x->to != y->to)
    return x->to < y->to ? -1 : 1;
  if (x->kind != y->kind)
    return x->kind < y->kind ? -1 : 1;
  return x->buf < y->buf ? -1 : x->buf > y->buf;
}

rp_status rp_graph_write_json(const rp_graph *g, FILE *fp) {
  RP_ENTER();
  if (!g || !fp)
    return RP_BAD_ARG();
  /* While recording, undecided (pending) edges are settled first, as
   * every reader of the edges does. */
  if (!g->ended) {
    rp_status st = rp__hazards_settle((rp_graph *)g);
    if (st != RP_OK)
      return st;
  }
  rp__out *w = rp__out_new(fp);
  if (!w)
    return RP_ENOMEM;
  /* While recording, edges are grouped by target: sort a copy as
   * rp_graph_end() would, so the file does not depend on the phase. */
  const rp_edge *edges = g->edge;
  rp_edge *tmp = NULL;
  if (!g->ended && g->nedge) {
    if (!(tmp = malloc((size_t)g->nedge * sizeof *tmp))) {
      free(w);
      return RP_ENOMEM;
    }
    memcpy(tmp, g->edge, (size_t)g->nedge * sizeof *tmp);
    qsort(tmp, g->nedge, sizeof *tmp, edge_cmp);
    edges = tmp;
  }
  uint64_t hc = rp__json_hash_nodes(g);
  for (uint32_t i = 0, f = 0; i < g->nedge; i++) {
    rp_edge e = edge_at(g, edges, i, &f);
    hc = rp__json_hash_edge(hc, &e);
  }
  hc = rp__json_hash_end(hc, g->nedge);
  char hex[17];
  for (int k = 0; k < 16; k++)
    hex[k] = "0123456789abcdef"[(hc >> (60 - 4 * k)) & 15];
  hex[16] = '\0';
  rp__out_str(w, "{\n  \"format\": \"reprise-graph\",\n  \"version\": 1,\n"
                 "  \"edges_check\": \"");
  rp__out_str(w, hex);
  rp__out_str(w, "\",\n  \"buffers\": [");
  for (uint32_t i = 0; i < g->nbuf; i++) {
    rp__out_str(w, i ? ",\n" : "\n");
    write_buffer(w, &g->buf[i], i);
  }
  rp__out_str(w, "],\n  \"ops\": [");
  for (uint32_t i = 0; i < g->nop && !w->bad; i++) {
    rp__out_str(w, i ? ",\n" : "\n");
    write_op(w, g, i);
  }
  rp__out_str(w, "],\n  \"edges\": [");
  for (uint32_t i = 0, f = 0; i < g->nedge && !w->bad; i++) {
    rp_edge e = edge_at(g, edges, i, &f);
    rp__out_str(w, i ? ",\n" : "\n");
    w_key_u64(w, "    {\"from\": ", e.from);
    w_key_u64(w, ", \"to\": ", e.to);
    rp__out_str(w, ", \"kind\": \"");
    rp__out_str(w, rp_edge_kind_name(e.kind));
    rp__out_str(w, "\"");
    if (e.kind != RP_EDGE_AFTER && e.buf != RP_NONE)
      w_key_u64(w, ", \"buffer\": ", e.buf);
    rp__out_str(w, "}");
  }
  rp__out_str(w, "]\n}\n");
  int bad = rp__out_end(w);
  free(tmp);
  if (bad || fflush(fp) != 0)
    return RP_EIO;
  return RP_OK;
}
