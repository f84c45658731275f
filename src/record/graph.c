/* Graphs and buffers: creation, the end of recording, inspection. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "record/hazard.h"

rp_status rp__fail(rp_graph *g, rp_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g->err, sizeof g->err, fmt, ap);
  va_end(ap);
  rp__set_last_error(g->err);
  return s;
}

rp_status rp_graph_create(rp_graph **out, unsigned flags) {
  RP_ENTER();
  if (!out)
    return RP_NULL_ARG();
  *out = NULL;
  if (flags & ~(unsigned)(RP_GRAPH_NO_COHERENCE | RP_GRAPH_STRICT)) {
    rp__set_last_error("rp_graph_create: unknown flags");
    return RP_EINVAL;
  }
  rp_graph *g = calloc(1, sizeof *g);
  if (!g)
    return RP_ENOMEM;
  g->flags = flags;
  g->max_device = -1;
  g->pred_off = calloc(1, sizeof *g->pred_off);
  if (!g->pred_off) {
    free(g);
    return RP_ENOMEM;
  }
  g->cappred = 1;
  *out = g;
  return RP_OK;
}

void rp_graph_destroy(rp_graph *g) {
  if (!g)
    return;
  rp__track_free(g);
  rp__warnings_free(g);
  rp__measured_free(g);
  rp__kcopy_free(g);
  for (uint32_t i = 0; i < g->nbuf; i++) {
    free(g->buf[i].name);
    free(g->buf[i].bounds);
  }
  for (uint32_t i = 0; i < g->nop; i++) {
    if (!g->op[i].name_shared)
      free(g->op[i].name);
    free(g->op[i].kernel_name);
  }
  free(g->buf);
  free(g->names);
  free(g->op);
  free(g->sacc);
  free(g->box);
  free(g->slot);
  free(g->dims);
  free(g->hostfn);
  free(g->after);
  free(g->edge);
  free(g->pred_off);
  free(g->ekind);
  free(g->succ_off);
  free(g->pred_off_end);
  free(g->succ);
  free(g->pred);
  free(g->bound_sites);
  free(g);
}

rp_status rp_graph_end(rp_graph *g) {
  RP_ENTER();
  if (!g)
    return RP_BAD_ARG();
  if (g->ended)
    return rp__fail(g, RP_ESTATE, "graph already ended");
  if (g->broken)
    return rp__fail(g, RP_ENOMEM,
                    "graph unusable after an earlier failure "
                    "to allocate memory");
  rp_status cs = rp__hazards_settle(g);
  if (cs == RP_OK)
    cs = rp__graph_check(g);
  if (cs != RP_OK)
    return cs;
  uint32_t n = g->nop, m = g->nedge;
  uint32_t *ek = malloc(((size_t)m + 1) * sizeof *ek);
  uint32_t *so = calloc((size_t)n + 1, sizeof *so);
  uint32_t *po = calloc((size_t)n + 1, sizeof *po);
  rp_node *succ = malloc(((size_t)m + 1) * sizeof *succ);
  rp_node *pred = malloc(((size_t)m + 1) * sizeof *pred);
  if (!ek || !so || !po || !succ || !pred) {
    free(ek), free(so), free(po), free(succ), free(pred);
    return rp__fail(g, RP_ENOMEM, "out of memory ending the graph");
  }
  /* g->edge is grouped by target in increasing order, so a stable counting
   * sort by source yields the (from, to) order in linear time. */
  for (uint32_t i = 0; i < m; i++) {
    so[g->edge[i].from + 1]++;
    po[g->edge[i].to + 1]++;
  }
  for (uint32_t i = 0; i < n; i++) {
    so[i + 1] += so[i];
    po[i + 1] += po[i];
  }
  /* so[f] is used as the fill cursor of f, then shifted back. */
  for (uint32_t i = 0; i < m; i++) {
    const rp_edge *e = &g->edge[i];
    uint32_t at = so[e->from]++;
    succ[at] = e->to;
    ek[at] = (uint32_t)e->kind << 30 | (e->buf + 1);
    pred[i] = e->from; /* grouped by target, sources increasing */
  }
  for (uint32_t i = n; i > 0; i--)
    so[i] = so[i - 1];
  so[0] = 0;
  free(g->edge);
  g->edge = NULL;
  g->capedge = 0;
  free(g->pred_off); /* the same as pred_off_end now */
  g->pred_off = NULL;
  g->cappred = 0;
  g->ekind = ek;
  g->succ_off = so;
  g->pred_off_end = po;
  g->succ = succ;
  g->pred = pred;
  rp__track_free(g);
  g->ended = true;
  return RP_OK;
}

int rp_graph_ended(const rp_graph *g) { return g && g->ended; }
const char *rp_graph_error(const rp_graph *g) { return g ? g->err : ""; }
void rp_graph_set_data(rp_graph *g, void *data) {
  if (g)
    g->data = data;
}
void *rp_graph_get_data(const rp_graph *g) { return g ? g->data : NULL; }
uint32_t rp_graph_num_nodes(const rp_graph *g) { return g ? g->nop : 0; }
uint32_t rp_graph_num_buffers(const rp_graph *g) { return g ? g->nbuf : 0; }
/* The edges of a graph being recorded, settled (record/hazard.h): a
 * failure to settle (out of memory) leaves pending edges visible. */
static void settled(const rp_graph *g) {
  if (!g->ended && g->track)
    rp__hazards_settle((rp_graph *)g);
}

uint32_t rp_graph_num_edges(const rp_graph *g) {
  if (!g)
    return 0;
  settled(g);
  return g->nedge;
}
unsigned rp_graph_num_devices(const rp_graph *g) {
  return g ? (unsigned)(g->max_device + 1) : 0;
}

rp_status rp_graph_edge(const rp_graph *g, uint32_t i, rp_edge *out) {
  RP_ENTER();
  if (!g || !out)
    return RP_NULL_ARG();
  settled(g);
  if (i >= g->nedge)
    return RP_EINVAL;
  if (!g->ended) {
    *out = g->edge[i];
    return RP_OK;
  }
  /* The source: the last node whose successors start at or before i. */
  uint32_t lo = 0, hi = g->nop;
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (g->succ_off[mid] <= i)
      lo = mid;
    else
      hi = mid;
  }
  uint32_t k = g->ekind[i];
  out->from = lo;
  out->to = g->succ[i];
  out->kind = (rp_edge_kind)(k >> 30);
  out->buf = (k & ((1u << 30) - 1)) - 1;
  return RP_OK;
}

const rp_node *rp_graph_succs(const rp_graph *g, rp_node n, uint32_t *count) {
  if (!g->ended || n >= g->nop) {
    *count = 0;
    return NULL;
  }
  *count = g->succ_off[n + 1] - g->succ_off[n];
  return g->succ + g->succ_off[n];
}

const rp_node *rp_graph_preds(const rp_graph *g, rp_node n, uint32_t *count) {
  if (!g->ended || n >= g->nop) {
    *count = 0;
    return NULL;
  }
  *count = g->pred_off_end[n + 1] - g->pred_off_end[n];
  return g->pred + g->pred_off_end[n];
}

rp_status rp_node_info_get(const rp_graph *g, rp_node n, rp_node_info *out) {
  RP_ENTER();
  if (!g || !out || n >= g->nop)
    return RP_BAD_ARG();
  const rp__op *o = &g->op[n];
  out->type = (rp_op_type)o->type;
  out->device = o->device;
  out->dst_device = o->dst_device;
  out->name = o->name;
  out->cost_us = o->cost_us;
  out->inserted = o->inserted;
  out->naccess = o->nacc;
  out->kernel = o->kernel;
  out->space = rp__op_space(g, n);
  return RP_OK;
}

rp_status rp_node_access(const rp_graph *g, rp_node n, unsigned i,
                         rp_access_info *out) {
  RP_ENTER();
  if (!g || !out || n >= g->nop || i >= g->op[n].nacc)
    return RP_BAD_ARG();
  rp__access a = rp__acc_get(g, n, i);
  out->region = a.region;
  out->mode = a.mode;
  out->space = a.space;
  return RP_OK;
}

rp_status rp_node_host_fn(const rp_graph *g, rp_node n, rp_host_fn *fn,
                          void **user) {
  RP_ENTER();
  if (!g || n >= g->nop || g->op[n].type != RP_OP_HOST)
    return RP_BAD_ARG();
  *fn = g->hostfn[g->op[n].arg0].fn;
  *user = g->hostfn[g->op[n].arg0].user;
  return RP_OK;
}

const char *rp_node_kernel_name(const rp_graph *g, rp_node n) {
  if (!g || n >= g->nop || g->op[n].type != RP_OP_KERNEL)
    return NULL;
  const rp__op *o = &g->op[n];
  return o->kernel ? o->kernel->name : o->kernel_name;
}

rp_status rp_node_scalars(const rp_graph *g, rp_node n, rp_slot *out,
                          unsigned max, unsigned *count) {
  RP_ENTER();
  if (!g || n >= g->nop || g->op[n].type != RP_OP_KERNEL || (max && !out))
    return RP_BAD_ARG();
  const rp__op *o = &g->op[n];
  const rp_slot *v = g->slot + o->arg0;
  unsigned k = 0;
  if (o->kernel) {
    for (unsigned p = 0; p < o->kernel->nparams; p++)
      k += o->kernel->params[p].mode == RP_SCALAR;
  } else {
    k = (unsigned)v[0].u64;
    v++;
  }
  for (unsigned i = 0; i < k && i < max; i++)
    out[i] = v[i];
  if (count)
    *count = k;
  return RP_OK;
}

rp_status rp_node_set_cost(rp_graph *g, rp_node n, double us) {
  RP_ENTER();
  if (!g)
    return RP_BAD_ARG();
  if (g->ended)
    return rp__fail(g, RP_ESTATE, "graph ended: costs are fixed");
  if (n >= g->nop)
    return rp__fail(g, RP_EINVAL, "no node %u", n);
  if (!isfinite(us) || us < 0)
    return rp__fail(g, RP_EINVAL, "cost of \"%s\" must be finite and >= 0",
                    g->op[n].name);
  g->op[n].cost_us = us;
  return RP_OK;
}

rp_status rp_graph_find_buffer(const rp_graph *g, const char *name,
                               rp_buf *out) {
  RP_ENTER();
  if (!g || !name || !out)
    return RP_NULL_ARG();
  rp_buf b = rp__names_find(g, name);
  if (b == RP_NONE)
    return RP_ENOTFOUND;
  *out = b;
  return RP_OK;
}

rp_status rp_buffer_add(rp_graph *g, const rp_buffer_desc *d, rp_buf *out) {
  RP_ENTER();
  if (!g || !d)
    return RP_BAD_ARG();
  if (g->ended)
    return rp__fail(g, RP_ESTATE, "graph ended: no buffer can be added");
  if (!d->name || !d->name[0])
    return rp__fail(g, RP_EINVAL, "a buffer needs a name");
  const char *nm = d->name;
  if (d->bytes == 0)
    return rp__fail(g, RP_EINVAL, "buffer \"%s\": size 0", nm);
  if (d->ndims > 3)
    return rp__fail(g, RP_EINVAL, "buffer \"%s\": %u dims (at most 3)", nm,
                    d->ndims);
  uint64_t elem = d->elem ? d->elem : 1;
  if (d->bytes % elem)
    return rp__fail(g, RP_EINVAL,
                    "buffer \"%s\": %llu bytes is not a whole number of "
                    "%llu-byte elements",
                    nm, (unsigned long long)d->bytes, (unsigned long long)elem);
  if (d->ndims) {
    uint64_t prod = elem;
    for (unsigned i = 0; i < d->ndims; i++) {
      if (d->dims[i] == 0 || prod > UINT64_MAX / d->dims[i])
        return rp__fail(g, RP_EINVAL,
                        "buffer \"%s\": bad or overflowing "
                        "dims",
                        nm);
      prod *= d->dims[i];
    }
    if (prod != d->bytes)
      return rp__fail(g, RP_EINVAL,
                      "buffer \"%s\": dims give %llu bytes, not %llu", nm,
                      (unsigned long long)prod, (unsigned long long)d->bytes);
  }
  rp_buf dup;
  if (rp_graph_find_buffer(g, nm, &dup) == RP_OK)
    return rp__fail(g, RP_EINVAL, "buffer \"%s\" already exists", nm);
  if (g->nbuf >= RP__MAX_BUFFERS ||
      rp__grow((void **)&g->buf, &g->capbuf, g->nbuf + 1, sizeof *g->buf))
    return rp__fail(g, RP_ENOMEM, "out of memory adding buffer \"%s\"", nm);
  rp__buffer *b = &g->buf[g->nbuf];
  memset(b, 0, sizeof *b);
  if (!(b->name = rp__strdup(nm)))
    return rp__fail(g, RP_ENOMEM, "out of memory adding buffer \"%s\"", nm);
  if (rp__names_add(g, g->nbuf)) {
    free(b->name);
    return rp__fail(g, RP_ENOMEM, "out of memory adding buffer \"%s\"", nm);
  }
  b->host = d->host;
  b->bytes = d->bytes;
  b->elem = elem;
  b->no_elem = !d->elem && !d->ndims;
  b->ndims = d->ndims;
  for (unsigned i = 0; i < d->ndims; i++)
    b->dims[i] = d->dims[i];
  if (out)
    *out = g->nbuf;
  g->nbuf++;
  return RP_OK;
}

rp_status rp_buffer_register(rp_graph *g, const char *name, void *host,
                             uint64_t bytes, rp_buf *out) {
  RP_ENTER();
  if (!host)
    return g ? rp__fail(g, RP_EINVAL, "buffer \"%s\": NULL host pointer",
                        name ? name : "?")
             : RP_NULL_ARG();
  /* elem 0: no element size, so rp_range_elems() on it is refused. */
  rp_buffer_desc d = {name, host, bytes, 0, 0, {0, 0, 0}};
  return rp_buffer_add(g, &d, out);
}

rp_status rp_buffer_register_elems(rp_graph *g, const char *name, void *host,
                                   uint64_t count, uint64_t elem, rp_buf *out) {
  RP_ENTER();
  if (!host)
    return g ? rp__fail(g, RP_EINVAL, "buffer \"%s\": NULL host pointer",
                        name ? name : "?")
             : RP_NULL_ARG();
  if (!count || !elem || count > UINT64_MAX / elem)
    return g ? rp__fail(g, RP_EINVAL,
                        "buffer \"%s\": bad shape (%llu "
                        "elements of %llu bytes)",
                        name ? name : "?", (unsigned long long)count,
                        (unsigned long long)elem)
             : RP_BAD_ARG();
  rp_buffer_desc d = {name, host, count * elem, elem, 0, {0, 0, 0}};
  return rp_buffer_add(g, &d, out);
}

rp_status rp_buffer_register_2d(rp_graph *g, const char *name, void *host,
                                uint64_t rows, uint64_t cols, uint64_t elem,
                                rp_buf *out) {
  RP_ENTER();
  if (!host)
    return g ? rp__fail(g, RP_EINVAL, "buffer \"%s\": NULL host pointer",
                        name ? name : "?")
             : RP_NULL_ARG();
  if (!rows || !cols || !elem || rows > UINT64_MAX / cols ||
      rows * cols > UINT64_MAX / elem)
    return g ? rp__fail(g, RP_EINVAL, "buffer \"%s\": bad shape",
                        name ? name : "?")
             : RP_EINVAL;
  rp_buffer_desc d = {name, host, rows * cols * elem, elem, 2, {rows, cols, 0}};
  return rp_buffer_add(g, &d, out);
}

rp_status rp_buffer_info(const rp_graph *g, rp_buf b, rp_buffer_desc *out) {
  RP_ENTER();
  if (!g || !out || b >= g->nbuf)
    return RP_BAD_ARG();
  const rp__buffer *x = &g->buf[b];
  out->name = x->name;
  out->host = x->host;
  out->bytes = x->bytes;
  out->elem = x->elem;
  out->ndims = x->ndims;
  for (int i = 0; i < 3; i++)
    out->dims[i] = i < (int)x->ndims ? x->dims[i] : 0;
  return RP_OK;
}
