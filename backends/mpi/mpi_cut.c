/* The mpi backend's overlap of halo messages with computation (issue 35):
 * a stencil kernel (rp_kernel.halo) whose part on this rank reads rows
 * that a receive brings is cut along its halo's axis into slices: the
 * interior, whose reads touch no received byte, and the boundary rows,
 * which do. Each slice is a task of its own with the bytes it touches
 * (rp__sp_order then orders the interior after the local work it reads
 * only, the boundary after the receives too), listed interior first: the
 * rank posts its sends, computes its interior while the messages fly,
 * then waits and computes its boundary rows, as hand-written MPI does.
 *
 * A slice runs as the split pass's chunks do (docs/split.md): a launch
 * over [origin, origin + n) of the whole index space, so that bodies made
 * with RP_KERNEL need no change. The cut changes no result: the halo
 * promises that the slices write disjoint units of buffers that no slice
 * reads, so they may run in any order. */
#include <stdlib.h>
#include <string.h>
#include "mpi_internal.h"

/* Most slices a kernel is cut into; more runs of received rows than this
 * leave it whole. */
enum { MAX_SLICES = 16 };

/* Bytes of one unit (row) of buffer b's slowest dimension. */
static uint64_t unit_of(const rp_plan *p, rp_buf b) {
  if (b >= p->nbuf)
    return 0;
  const rp_buffer_desc d = p->buf[b].desc;
  uint64_t u = d.elem ? d.elem : 1;
  for (unsigned k = 1; k < d.ndims && k < 3; k++)
    u *= d.dims[k] ? d.dims[k] : 1;
  return u;
}

static int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The geometry of a cut: units per index point m, the written regions'
 * first unit w0, the unit's bytes, the radius h in index points. */
typedef struct geom {
  uint64_t m, w0, unit, h, S;
  int ax;
} geom;

/* Kernel node v's geometry along its halo's axis; 0 when it may not be
 * cut (no halo, shapes that do not follow the promise). */
static int geometry(const mstate *m, uint32_t v, geom *G) {
  const rp_plan *p = m->p;
  const rp_plan_node *nd = &p->node[v];
  const rp_plan_access *a = p->acc + nd->acc0;
  const rp_kernel *k = nd->kernel;
  const rp_kargs *tpl = rp_exec_args(m->x, nd->op);
  if (nd->type != RP_OP_KERNEL || !tpl || !k)
    return 0;
  G->ax = -1;
  for (int d = 0; d < 3 && G->ax < 0; d++)
    if (k->halo[d])
      G->ax = d;
  if (G->ax < 0)
    return 0;
  G->h = k->halo[G->ax];
  G->S = tpl->n[G->ax];
  G->m = G->w0 = G->unit = 0;
  if (G->S < 2)
    return 0;
  for (uint32_t j = 0; j < nd->nacc; j++) { /* the written regions */
    if (a[j].image == RP_NONE || !(a[j].mode & RP_OUT))
      continue;
    rp_buf b = p->image[a[j].image].buf;
    uint64_t u = unit_of(p, b);
    if (!u || (a[j].mode & RP_IN) || !a[j].bytes)
      return 0;
    uint64_t w0 = a[j].offset / u;
    uint64_t w1 = (a[j].offset + a[j].bytes + u - 1) / u;
    if ((w1 - w0) % G->S ||
        (G->m && (G->m != (w1 - w0) / G->S || G->w0 != w0 || G->unit != u)))
      return 0;
    G->m = (w1 - w0) / G->S;
    G->w0 = w0;
    G->unit = u;
    for (uint32_t k = 0; k < nd->nacc; k++) /* no buffer read and written */
      if (k != j && a[k].image != RP_NONE && (a[k].mode & RP_IN) &&
          p->image[a[k].image].buf == b)
        return 0;
  }
  if (!G->m)
    return 0;
  for (uint32_t j = 0; j < nd->nacc; j++) /* read regions of that unit */
    if (a[j].image != RP_NONE &&
        unit_of(p, p->image[a[j].image].buf) != G->unit)
      return 0;
  return 1;
}

/* Whether images i and j are one memory of this rank. */
static int same_memory(const mstate *m, uint32_t i, uint32_t j) {
  return i == j || (rp__sp_in_user(m->p, &m->part, i) &&
                    rp__sp_in_user(m->p, &m->part, j) &&
                    m->p->image[i].buf == m->p->image[j].buf);
}

/* Marks in bnd[0 .. S) the index points whose reads touch bytes [lo, hi)
 * of a read access of node v received in image img. */
static void mark_received(const mstate *m, const geom *G, uint32_t v,
                          uint32_t img, uint64_t lo, uint64_t hi,
                          uint8_t *bnd) {
  const rp_plan_node *nd = &m->p->node[v];
  const rp_plan_access *a = m->p->acc + nd->acc0;
  for (uint32_t j = 0; j < nd->nacc; j++) {
    if (a[j].image == RP_NONE || !(a[j].mode & RP_IN) ||
        !same_memory(m, a[j].image, img))
      continue;
    uint64_t l = lo > a[j].offset ? lo : a[j].offset;
    uint64_t r = hi < a[j].offset + a[j].bytes ? hi : a[j].offset + a[j].bytes;
    if (l >= r)
      continue;
    /* units [u0, u1); point y reads [w0 + (y - h) m, w0 + (y + 1 + h) m) */
    int64_t u0 = (int64_t)(l / G->unit) - (int64_t)G->w0;
    int64_t u1 = (int64_t)((r + G->unit - 1) / G->unit) - (int64_t)G->w0;
    int64_t mm = (int64_t)G->m, h = (int64_t)G->h;
    int64_t y0 = floor_div(u0, mm) - h;
    int64_t y1 = floor_div(u1 + h * mm + mm - 1, mm); /* exclusive */
    for (int64_t y = y0 < 0 ? 0 : y0; y < y1 && y < (int64_t)G->S; y++)
      bnd[y] = 1;
  }
}

/* The span [lo, hi) of units [u0, u1) (clipped at 0) within access a. */
static void slice_span(const rp_plan_access *a, const geom *G, int64_t u0,
                       int64_t u1, uint64_t *lo, uint64_t *hi) {
  uint64_t b0 = u0 > 0 ? (uint64_t)u0 * G->unit : 0;
  uint64_t b1 = u1 > 0 ? (uint64_t)u1 * G->unit : 0;
  *lo = b0 > a->offset ? b0 : a->offset;
  *hi = b1 < a->offset + a->bytes ? b1 : a->offset + a->bytes;
  if (*hi < *lo)
    *hi = *lo;
}

static rp_status add_slice(mstate *m, uint32_t v, const geom *G, uint64_t y0,
                           uint64_t y1, int boundary) {
  const rp_plan_node *nd = &m->p->node[v];
  const rp_plan_access *a = m->p->acc + nd->acc0;
  if (rp__sp_room(&m->chunk, m->nchunk, &m->capchunk, sizeof *m->chunk))
    return RP_ENOMEM;
  mchunk *c = &m->chunk[m->nchunk];
  *c = (mchunk){.v = v, .ax = G->ax, .y0 = y0, .y1 = y1, .boundary = boundary};
  if (!(c->span = calloc(2 * (size_t)nd->nacc + 1, sizeof *c->span)))
    return RP_ENOMEM;
  m->nchunk++;
  int64_t w0 = (int64_t)G->w0, mm = (int64_t)G->m, h = (int64_t)G->h;
  for (uint32_t j = 0; j < nd->nacc; j++) {
    if (a[j].image == RP_NONE)
      continue;
    int64_t d = (a[j].mode & RP_OUT) ? 0 : h; /* reads reach h further */
    slice_span(&a[j], G, w0 + ((int64_t)y0 - d) * mm,
               w0 + ((int64_t)y1 + d) * mm, &c->span[2 * j],
               &c->span[2 * j + 1]);
  }
  return RP_OK;
}

/* Cut kernel node v when it may be and some of its points read bytes
 * that a receive before it in program order writes (and not all do): its slices appended to m->chunk, interior ones
 * first; *n their count (0: left whole). */
static rp_status cut_node(mstate *m, uint32_t v, uint32_t *n) {
  geom G;
  *n = 0;
  if (!geometry(m, v, &G))
    return RP_OK;
  uint8_t *bnd = calloc(G.S, 1);
  if (!bnd)
    return RP_ENOMEM;
  for (uint32_t k = 0; k < m->nrecv; k++) {
    const mmsg *g = &m->msg[m->recv[k]];
    if (m->part.piece[m->recv[k]].v > v)
      continue; /* later in program order: it waits for v, not v for it */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t r = 0; r < g->nr; r++) {
      lo = g->runs[2 * r] < lo ? g->runs[2 * r] : lo;
      if (g->runs[2 * r] + g->runs[2 * r + 1] > hi)
        hi = g->runs[2 * r] + g->runs[2 * r + 1];
    }
    mark_received(m, &G, v, g->dst, lo, hi, bnd);
  }
  uint32_t runs = 1, nb = bnd[0];
  for (uint64_t y = 1; y < G.S; y++) {
    runs += bnd[y] != bnd[y - 1];
    nb += bnd[y];
  }
  rp_status rc = RP_OK;
  uint32_t first = m->nchunk;
  if (nb && nb < G.S && runs <= MAX_SLICES)
    for (int pass = 0; pass < 2 && rc == RP_OK; pass++) /* interior first */
      for (uint64_t y = 0, y0 = 0; y <= G.S && rc == RP_OK; y++)
        if (y == G.S || bnd[y] != bnd[y0]) {
          if (bnd[y0] == pass)
            rc = add_slice(m, v, &G, y0, y, pass);
          y0 = y;
        }
  free(bnd);
  *n = m->nchunk - first;
  return rc;
}

rp_status rp__mpi_cuts(mstate *m) {
  const sp_part *pt = &m->part;
  m->cut0 = calloc((size_t)pt->nnode + 1, sizeof *m->cut0);
  m->cutn = calloc((size_t)pt->nnode + 1, sizeof *m->cutn);
  if (!m->cut0 || !m->cutn)
    return RP_ENOMEM;
  for (uint32_t k = 0; k < pt->nnode && !m->nocut; k++) {
    m->cut0[k] = m->nchunk;
    rp_status rc = cut_node(m, pt->node[k], &m->cutn[k]);
    if (rc != RP_OK)
      return rc;
    m->ncut += m->cutn[k] > 0;
  }
  return RP_OK;
}

void rp__mpi_chunk_args(const mchunk *c, rp_kargs *ka) {
  for (int d = 0; d < 3; d++)
    if (!ka->whole[d])
      ka->whole[d] = ka->n[d];
  ka->origin[c->ax] += c->y0;
  ka->n[c->ax] = c->y1 - c->y0;
}

void rp__mpi_cuts_free(mstate *m) {
  for (uint32_t k = 0; m->chunk && k < m->nchunk; k++)
    free(m->chunk[k].span);
  free(m->chunk);
  free(m->cut0);
  free(m->cutn);
}
