/* The orderings an image shared by several spaces needs: the recorder
 * ordered conflicting accesses per space, so two accesses of different
 * spaces that now touch the same memory (a kernel on device 0 writing what
 * a host task reads, say) get an edge here, in program order. */
#include <stdlib.h>
#include <string.h>
#include "replay/plan.h"

typedef struct sacc {
  uint32_t node;
  int space;
  uint8_t mode;
  const uint64_t *iv;
  uint32_t niv;
} sacc;

typedef struct rdr {
  uint32_t node;
  int space;
  int64_t next;
} rdr;

static rp_status push(rp__pedge **e, size_t *ne, size_t *cap, uint32_t from,
                      uint32_t to) {
  if (rp__growz((void **)e, cap, *ne + 1, sizeof **e))
    return RP_ENOMEM;
  (*e)[(*ne)++] = (rp__pedge){from, to};
  return RP_OK;
}

/* Conflicts between accesses of different spaces of one image. */
static rp_status image_edges(const sacc *a, uint32_t na, rp__pedge **e,
                             size_t *ne, size_t *cap) {
  uint64_t nbp = 0;
  for (uint32_t k = 0; k < na; k++)
    nbp += 2 * (uint64_t)a[k].niv;
  uint64_t *bp = malloc((nbp + 1) * sizeof *bp);
  int64_t *lastw = malloc((nbp + 1) * sizeof *lastw);
  int64_t *rhead = malloc((nbp + 1) * sizeof *rhead);
  int *lwsp = malloc((nbp + 1) * sizeof *lwsp);
  rdr *pool = NULL;
  size_t npool = 0, cappool = 0;
  rp_status s = RP_ENOMEM;
  if (!bp || !lastw || !rhead || !lwsp)
    goto out;
  uint64_t i = 0, max = 0;
  for (uint32_t k = 0; k < na; k++)
    for (uint32_t v = 0; v < a[k].niv; v++) {
      bp[i++] = a[k].iv[2 * v];
      bp[i++] = a[k].iv[2 * v] + a[k].iv[2 * v + 1];
      if (bp[i - 1] > max)
        max = bp[i - 1];
    }
  /* lastw is the sort's scratch before it is set. */
  uint64_t u = rp__segs_sort(bp, (uint64_t *)lastw, nbp, max);
  for (i = 0; i < u; i++)
    lastw[i] = rhead[i] = -1;
  for (uint32_t x = 0; x < na;) {
    uint32_t y = x;
    while (y < na && a[y].node == a[x].node)
      y++;
    for (int phase = 0; phase < 2; phase++)
      for (uint32_t k = x; k < y; k++) {
        uint8_t m = phase == 0 ? RP_IN : RP_OUT;
        if (!(a[k].mode & m))
          continue;
        uint32_t me = a[k].node;
        int sp = a[k].space;
        for (uint32_t v = 0; v < a[k].niv; v++) {
          uint64_t q0 = rp__segs_find(bp, u, a[k].iv[2 * v]);
          uint64_t q1 =
              rp__segs_find(bp, u, a[k].iv[2 * v] + a[k].iv[2 * v + 1]);
          for (uint64_t q = q0; q < q1; q++) {
            int64_t w = lastw[q];
            if (w >= 0 && (uint32_t)w != me && lwsp[q] != sp &&
                push(e, ne, cap, (uint32_t)w, me))
              goto out;
            if (phase == 0) {
              int64_t h = rhead[q];
              if (h >= 0 && pool[h].node == me)
                continue;
              if (rp__growz((void **)&pool, &cappool, npool + 1, sizeof *pool))
                goto out;
              pool[npool] = (rdr){me, sp, h};
              rhead[q] = (int64_t)npool++;
              continue;
            }
            for (int64_t r = rhead[q]; r >= 0; r = pool[r].next)
              if (pool[r].node != me && pool[r].space != sp &&
                  push(e, ne, cap, pool[r].node, me))
                goto out;
            rhead[q] = -1;
            lastw[q] = me;
            lwsp[q] = sp;
          }
        }
      }
    x = y;
  }
  s = RP_OK;
out:
  free(bp);
  free(lastw);
  free(rhead);
  free(lwsp);
  free(pool);
  return s;
}

rp_status rp__plan_share_edges(const rp_plan *p, rp__pedge **e, size_t *ne,
                               size_t *cap) {
  uint32_t *off = calloc((size_t)p->nimage + 2, sizeof *off);
  sacc *all = malloc((p->nacc ? p->nacc : 1) * sizeof *all);
  rp_status s = RP_ENOMEM;
  if (!off || !all)
    goto out;
  for (uint32_t k = 0; k < p->nacc; k++)
    if (p->acc[k].image != RP_NONE)
      off[p->acc[k].image + 2]++;
  for (uint32_t i = 0; i < p->nimage; i++)
    off[i + 2] += off[i + 1];
  for (uint32_t v = 0; v < p->nnode; v++) {
    const rp_plan_node *nd = &p->node[v];
    for (uint32_t k = 0; k < nd->nacc; k++) {
      const rp_plan_access *ac = &p->acc[nd->acc0 + k];
      if (ac->image == RP_NONE)
        continue;
      all[off[ac->image + 1]++] =
          (sacc){v, ac->space, (uint8_t)ac->mode, p->iv + 2 * (uint64_t)ac->iv0,
                 ac->niv};
    }
  }
  s = RP_OK;
  for (uint32_t i = 0; i < p->nimage && s == RP_OK; i++) {
    uint64_t sp = p->image[i].spaces;
    if (sp & (sp - 1))
      s = image_edges(all + off[i], off[i + 1] - off[i], e, ne, cap);
  }
out:
  free(off);
  free(all);
  return s;
}
