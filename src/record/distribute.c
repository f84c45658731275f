/* Buffers distributed by rows over ranks (rp_buffer_distribute): a
 * declaration the graph keeps for the backends that run over several
 * processes; nothing else in the recorder reads it. */
#include <stdlib.h>
#include "record/graph.h"

/* Most parts a buffer may be cut into. */
#define MAX_PARTS 65536u

static uint64_t buffer_rows(const rp__buffer *b) {
  return b->ndims ? b->dims[0] : b->bytes / b->elem;
}

rp_status rp_buffer_distribute(rp_graph *g, rp_buf b, unsigned nparts,
                               const uint64_t *bounds) {
  RP_ENTER();
  if (!g)
    return RP_NULL_ARG();
  if (g->ended)
    return rp__fail(g, RP_ESTATE,
                    "graph ended: no buffer can be "
                    "distributed");
  if (b >= g->nbuf)
    return rp__fail(g, RP_EINVAL, "rp_buffer_distribute: no buffer %u", b);
  rp__buffer *x = &g->buf[b];
  if (!x->host)
    return rp__fail(g, RP_EINVAL,
                    "buffer \"%s\": an internal buffer has no "
                    "host array to distribute",
                    x->name);
  if (nparts < 1 || nparts > MAX_PARTS)
    return rp__fail(g, RP_EINVAL, "buffer \"%s\": %u parts (1 to %u)", x->name,
                    nparts, MAX_PARTS);
  uint64_t rows = buffer_rows(x);
  if (bounds) {
    if (bounds[0] != 0 || bounds[nparts] != rows)
      return rp__fail(g, RP_EINVAL,
                      "buffer \"%s\": part bounds must go from "
                      "row 0 to row %llu",
                      x->name, (unsigned long long)rows);
    for (unsigned p = 0; p < nparts; p++)
      if (bounds[p] > bounds[p + 1])
        return rp__fail(g, RP_EINVAL,
                        "buffer \"%s\": part %u ends before it "
                        "starts",
                        x->name, p);
  }
  uint64_t *nb = malloc(((size_t)nparts + 1) * sizeof *nb);
  if (!nb)
    return rp__fail(g, RP_ENOMEM, "out of memory distributing \"%s\"", x->name);
  for (unsigned p = 0; p <= nparts; p++)
    nb[p] = bounds ? bounds[p] : rows * p / nparts;
  free(x->bounds);
  x->bounds = nb;
  x->nparts = nparts;
  return RP_OK;
}

unsigned rp_buffer_num_parts(const rp_graph *g, rp_buf b) {
  return g && b < g->nbuf ? g->buf[b].nparts : 0;
}

rp_status rp_buffer_part_rows(const rp_graph *g, rp_buf b, unsigned part,
                              uint64_t *r0, uint64_t *r1) {
  RP_ENTER();
  if (!g || b >= g->nbuf || !r0 || !r1)
    return RP_BAD_ARG();
  const rp__buffer *x = &g->buf[b];
  if (!x->nparts) {
    *r0 = 0;
    *r1 = buffer_rows(x);
    return part == 0 ? RP_OK : RP_EINVAL;
  }
  if (part >= x->nparts)
    return RP_EINVAL;
  *r0 = x->bounds[part];
  *r1 = x->bounds[part + 1];
  return RP_OK;
}

rp_status rp__buffer_copy_parts(rp_graph *dst, rp_buf db, const rp_graph *src,
                                rp_buf sb) {
  const rp__buffer *x = &src->buf[sb];
  return x->nparts ? rp_buffer_distribute(dst, db, x->nparts, x->bounds)
                   : RP_OK;
}
