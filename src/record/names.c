/* The index of buffer names: open addressing over buffer ids, so that
 * adding a buffer and finding one by name take constant time whatever the
 * number of buffers. */
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"

static uint64_t hash_name(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The slot of name: the one holding its buffer, or the empty one where it
 * would go. The table is never more than half full. */
static uint32_t slot_of(const rp_graph *g, const char *name) {
  uint32_t m = g->capnames - 1, i = (uint32_t)hash_name(name) & m;
  while (g->names[i] != RP_NONE && strcmp(g->buf[g->names[i]].name, name))
    i = (i + 1) & m;
  return i;
}

rp_buf rp__names_find(const rp_graph *g, const char *name) {
  if (!g->capnames)
    return RP_NONE;
  return g->names[slot_of(g, name)];
}

int rp__names_add(rp_graph *g, rp_buf b) {
  if (2 * ((uint64_t)g->nnames + 1) > g->capnames) {
    uint64_t cap = g->capnames ? 2 * (uint64_t)g->capnames : 64;
    if (cap > UINT32_MAX)
      return -1;
    uint32_t *old = g->names, oldcap = g->capnames;
    if (!(g->names = malloc(cap * sizeof *g->names))) {
      g->names = old;
      return -1;
    }
    memset(g->names, 0xff, cap * sizeof *g->names);
    g->capnames = (uint32_t)cap;
    for (uint32_t i = 0; i < oldcap; i++)
      if (old[i] != RP_NONE)
        g->names[slot_of(g, g->buf[old[i]].name)] = old[i];
    free(old);
  }
  g->names[slot_of(g, g->buf[b].name)] = b;
  g->nnames++;
  return 0;
}

/* Names of operation types and edge kinds. */
const char *rp_op_type_name(rp_op_type t) {
  static const char *const names[] = {"kernel", "copy_h2d", "copy_d2h",
                                      "copy_d2d", "host"};
  return (unsigned)t < 5 ? names[t] : "unknown";
}

const char *rp_edge_kind_name(rp_edge_kind k) {
  static const char *const names[] = {"raw", "war", "waw", "after"};
  return (unsigned)k < 4 ? names[k] : "unknown";
}
