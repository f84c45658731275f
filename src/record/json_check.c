/* JSON graph files: the edges' check. */
#include "record/json_read.h"

/* ------------------------------------------------------------------------
 * The edges' check: a 64-bit hash of everything the edges are derived
 * from (buffer geometry; per operation its type, devices, accesses and
 * explicit dependencies, in order) and of the edges themselves. Names,
 * costs and measurements are left out: editing them keeps the saved edges
 * valid. A reader that finds the same hash over what it loaded installs
 * the saved edges instead of deriving them again; an edited file (or one
 * damaged) gets another hash and its edges are derived again. It guards
 * against accidents, not against a forged file.
 * ---------------------------------------------------------------------- */

static inline uint64_t hmix(uint64_t h, uint64_t v) {
  h = (h ^ v) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

uint64_t rp__json_hash_nodes(const rp_graph *g) {
  uint64_t h = hmix(0x7265707269736531ull, g->nbuf);
  for (uint32_t i = 0; i < g->nbuf; i++) {
    const rp__buffer *b = &g->buf[i];
    h = hmix(hmix(hmix(h, b->bytes), b->elem), b->ndims);
    for (unsigned d = 0; d < b->ndims && d < 3; d++)
      h = hmix(h, b->dims[d]);
  }
  h = hmix(h, g->nop);
  for (uint32_t i = 0; i < g->nop; i++) {
    const rp__op *o = &g->op[i];
    h = hmix(h, (uint64_t)o->type << 48 ^ (uint64_t)(uint16_t)o->device << 32 ^
                    (uint64_t)(uint16_t)o->dst_device << 16 ^ o->nacc);
    for (uint32_t k = 0; k < o->nacc; k++) {
      const rp__access acc = rp__acc_get(g, i, k);
      const rp__access *a = &acc;
      const rp_region *r = &a->region;
      h = hmix(h, (uint64_t)r->buf << 32 ^ (uint64_t)(uint8_t)a->space << 16 ^
                      (uint64_t)a->mode << 8 ^ (uint64_t)r->kind);
      if (r->kind == RP_REGION_BOX) {
        h = hmix(h, r->ndims);
        for (unsigned d = 0; d < r->ndims && d < 3; d++)
          h = hmix(hmix(h, r->lo[d]), r->hi[d]);
      } else {
        h = hmix(hmix(h, r->offset), r->bytes);
      }
    }
    h = hmix(h, o->nafter);
    for (uint32_t k = 0; k < o->nafter; k++)
      h = hmix(h, g->after[o->after0 + k]);
  }
  return h;
}

uint64_t rp__json_hash_edge(uint64_t h, const rp_edge *e) {
  return hmix(hmix(h, (uint64_t)e->from << 32 | e->to),
              (uint64_t)e->kind << 32 | e->buf);
}

uint64_t rp__json_hash_end(uint64_t h, uint32_t m) {
  h = hmix(h, m);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

/* The check of graph @p g (its operations) with edges @p e. */
uint64_t rp__json_edges_check(const rp_graph *g, const rp_edge *e, uint32_t m) {
  uint64_t h = rp__json_hash_nodes(g);
  for (uint32_t i = 0; i < m; i++)
    h = rp__json_hash_edge(h, &e[i]);
  return rp__json_hash_end(h, m);
}
