/* Loading a graph file whose saved edges are trusted (record/json_read.c checks
 * its "edges_check" first): operations are appended without deriving
 * hazards, then the saved edges are installed. Mirrors the appending part
 * of rp__record_op() (record/op.c); keep the two in step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/load.h"

rp_status rp__load_op(rp_graph *g, const rp__proto *proto,
                      const rp__access *acc, uint32_t nacc,
                      const rp_node *after, uint32_t nafter, const char *name,
                      rp_node *out) {
  if (g->ended || g->broken || g->nedge || g->nop >= RP_NONE - 1)
    return rp__fail(g, RP_ESTATE, "cannot load an operation now");
  rp__op p;
  memset(&p, 0, sizeof p);
  p.type = (uint8_t)proto->type;
  p.device = (int16_t)proto->device;
  p.dst_device = (int16_t)proto->dst_device;
  p.cost_us = proto->cost_us;
  p.inserted = proto->inserted;
  rp__proto q = *proto;
  q.nacc = nacc;
  q.kernel = NULL; /* loaded ops have none: the name is always owned */
  bool owned;
  p.name = rp__derive_name(g, &q, acc, name, &owned);
  p.name_shared = false;
  if (!p.name || (proto->kernel_name &&
                  !(p.kernel_name = rp__strdup(proto->kernel_name)))) {
    free(p.name);
    return rp__fail(g, RP_ENOMEM, "out of memory loading");
  }
  rp_node j;
  if (rp__store_op(g, &p, proto, acc, nacc, NULL, after, nafter, &j)) {
    free(p.name);
    free(p.kernel_name);
    return rp__fail(g, RP_ENOMEM, "out of memory loading");
  }
  g->pred_off[j] = g->pred_off[j + 1] = 0;
  if (out)
    *out = j;
  return RP_OK;
}

rp_status rp__load_edges(rp_graph *g, const rp_edge *e, uint32_t m) {
  uint32_t n = g->nop;
  if (g->ended || g->nedge)
    return rp__fail(g, RP_ESTATE, "cannot load edges now");
  if (rp__grow((void **)&g->edge, &g->capedge, m ? m : 1, sizeof *g->edge) ||
      rp__grow((void **)&g->pred_off, &g->cappred, n + 2, sizeof *g->pred_off))
    return rp__fail(g, RP_ENOMEM, "out of memory loading edges");
  /* Counting sort by target: e is in (from, to) order, so the sources of
   * each target stay increasing, as the recorder appends them. */
  uint32_t *po = g->pred_off;
  memset(po, 0, ((size_t)n + 2) * sizeof *po);
  for (uint32_t i = 0; i < m; i++)
    po[e[i].to + 2]++;
  for (uint32_t i = 0; i < n; i++)
    po[i + 2] += po[i + 1];
  for (uint32_t i = 0; i < m; i++)
    g->edge[po[e[i].to + 1]++] = e[i];
  g->nedge = m;
  return RP_OK;
}
