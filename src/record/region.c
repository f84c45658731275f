/* Regions: checking them against their buffer, and their byte runs. */
#include "record/graph.h"

rp_status rp__region_check(rp_graph *g, rp_region *r, const char *what) {
  if (r->buf >= g->nbuf)
    return r->buf == RP_NONE ? rp__fail(g, RP_EINVAL,
                                        "%s: names no buffer (RP_NONE: a "
                                        "scalar argument's region?)",
                                        what)
                             : rp__fail(g, RP_EINVAL,
                                        "%s: unknown buffer %u (the graph "
                                        "has %u buffers)",
                                        what, r->buf, g->nbuf);
  const rp__buffer *b = &g->buf[r->buf];
  switch (r->kind) {
  case RP_REGION_ELEMS: { /* stored as its byte range */
    if (b->no_elem)
      return rp__fail(g, RP_EINVAL,
                      "%s: rp_range_elems() on buffer \"%s\", "
                      "which rp_buffer_register() registered in bytes, with "
                      "no element size: say rp_range_bytes(), or register it "
                      "with rp_buffer_register_elems(g, \"%s\", host, count, "
                      "sizeof *host, &b)",
                      what, b->name, b->name);
    uint64_t el = b->elem ? b->elem : 1, n = b->bytes / el;
    if (r->lo[0] > r->hi[0])
      return rp__fail(g, RP_EINVAL,
                      "%s: element range [%llu, %llu) ends "
                      "before it starts",
                      what, (unsigned long long)r->lo[0],
                      (unsigned long long)r->hi[0]);
    if (r->hi[0] > n)
      return rp__fail(g, RP_ERANGE,
                      "%s: element range ends past buffer "
                      "\"%s\" (%llu elements of %llu bytes)",
                      what, b->name, (unsigned long long)n,
                      (unsigned long long)el);
    r->kind = RP_REGION_BYTES;
    r->offset = r->lo[0] * el;
    r->bytes = (r->hi[0] - r->lo[0]) * el;
    r->ndims = 0;
    for (unsigned i = 0; i < 3; i++)
      r->lo[i] = r->hi[i] = 0;
    return RP_OK;
  }
  case RP_REGION_WHOLE:
    r->kind = RP_REGION_BYTES;
    r->offset = 0;
    r->bytes = b->bytes;
    r->ndims = 0;
    return RP_OK;
  case RP_REGION_BYTES:
    if (r->offset > b->bytes || r->bytes > b->bytes - r->offset)
      return rp__fail(g, RP_ERANGE,
                      "%s: region ends past buffer \"%s\" (%llu bytes)", what,
                      b->name, (unsigned long long)b->bytes);
    r->ndims = 0;
    return RP_OK;
  case RP_REGION_BOX:
    if (!b->ndims)
      return rp__fail(g, RP_EINVAL,
                      "%s: box on buffer \"%s\", which has no "
                      "dims",
                      what, b->name);
    if (r->ndims != b->ndims)
      return rp__fail(g, RP_EINVAL,
                      "%s: box of rank %u on buffer \"%s\" of "
                      "rank %u",
                      what, r->ndims, b->name, b->ndims);
    for (unsigned i = 0; i < r->ndims; i++) {
      if (r->lo[i] > r->hi[i])
        return rp__fail(g, RP_EINVAL, "%s: box lo > hi in dim %u", what, i);
      if (r->hi[i] > b->dims[i])
        return rp__fail(g, RP_ERANGE,
                        "%s: box ends past buffer \"%s\" in dim %u (%llu)",
                        what, b->name, i, (unsigned long long)b->dims[i]);
    }
    for (unsigned i = r->ndims; i < 3; i++)
      r->lo[i] = r->hi[i] = 0;
    r->offset = r->bytes = 0;
    return RP_OK;
  }
  return rp__fail(g, RP_EINVAL, "%s: unknown region kind %d", what,
                  (int)r->kind);
}

/* A box's byte runs: the trailing dimensions the box spans entirely merge
 * with the first partial one into one contiguous run; the leading ones are
 * iterated. */
void rp__region_each(const rp__buffer *b, const rp_region *r,
                     void (*fn)(void *ctx, uint64_t off, uint64_t len),
                     void *ctx) {
  if (r->kind != RP_REGION_BOX) {
    if (r->bytes)
      fn(ctx, r->offset, r->bytes);
    return;
  }
  unsigned nd = r->ndims;
  for (unsigned i = 0; i < nd; i++)
    if (r->lo[i] >= r->hi[i])
      return;
  uint64_t stride[3];
  stride[nd - 1] = b->elem;
  for (int i = (int)nd - 2; i >= 0; i--)
    stride[i] = stride[i + 1] * b->dims[i + 1];
  /* k: the outermost dimension of the contiguous run. */
  int k = (int)nd - 1;
  while (k > 0 && r->lo[k] == 0 && r->hi[k] == b->dims[k])
    k--;
  uint64_t run = (r->hi[k] - r->lo[k]) * stride[k];
  uint64_t idx[3] = {r->lo[0], r->lo[1], r->lo[2]};
  for (;;) {
    uint64_t off = 0;
    for (unsigned i = 0; i < nd; i++)
      off += (i < (unsigned)k ? idx[i] : r->lo[i]) * stride[i];
    fn(ctx, off, run);
    int i = k - 1;
    while (i >= 0 && ++idx[i] == r->hi[i]) {
      idx[i] = r->lo[i];
      i--;
    }
    if (i < 0)
      return;
  }
}

struct fill {
  uint64_t *iv, max, n;
};

static void fill_one(void *ctx, uint64_t off, uint64_t len) {
  struct fill *f = ctx;
  if (f->n < f->max) {
    f->iv[2 * f->n] = off;
    f->iv[2 * f->n + 1] = len;
  }
  f->n++;
}

uint64_t rp_region_intervals(const rp_graph *g, const rp_region *r,
                             uint64_t *iv, uint64_t max) {
  if (!g || !r || r->buf >= g->nbuf)
    return 0;
  struct fill f = {iv, iv ? max : 0, 0};
  rp_region c = *r;
  if (c.kind == RP_REGION_ELEMS) {
    uint64_t el = g->buf[r->buf].elem ? g->buf[r->buf].elem : 1;
    if (g->buf[r->buf].no_elem || c.lo[0] > c.hi[0] ||
        c.hi[0] > g->buf[r->buf].bytes / el)
      return 0;
    c = rp_range_bytes(r->buf, c.lo[0] * el, (c.hi[0] - c.lo[0]) * el);
  }
  if (c.kind == RP_REGION_WHOLE) {
    c.kind = RP_REGION_BYTES;
    c.offset = 0;
    c.bytes = g->buf[r->buf].bytes;
  }
  rp__region_each(&g->buf[r->buf], &c, fill_one, &f);
  return f.n;
}
