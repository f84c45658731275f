/* Pieces of the simulations of a replay over ranks that both lowerings'
 * predictions use (rp__starpu_predict, sp_predict.c; the mpi backend's
 * rp__mpi_simulate, backends/mpi/mpi_model.c): the queue of events by
 * time, and the bytes a copy node moves. */
#include "sp_place.h"

static int sp_ev_before(const sp_ev *a, const sp_ev *b) {
  return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

int rp__sp_ev_push(sp_evq *h, sp_ev x) {
  if (rp__sp_room(&h->e, h->n, &h->cap, sizeof *h->e))
    return -1;
  size_t i = h->n++;
  while (i > 0 && sp_ev_before(&x, &h->e[(i - 1) / 2])) {
    h->e[i] = h->e[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->e[i] = x;
  return 0;
}

sp_ev rp__sp_ev_pop(sp_evq *h) {
  sp_ev top = h->e[0], x = h->e[--h->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && sp_ev_before(&h->e[c + 1], &h->e[c]))
      c++;
    if (!sp_ev_before(&h->e[c], &x))
      break;
    h->e[i] = h->e[c];
    i = c;
  }
  if (h->n)
    h->e[i] = x;
  return top;
}

uint64_t rp__sp_copy_bytes(const rp_plan *p, uint32_t v) {
  const rp_plan_node *nd = &p->node[v];
  if (nd->nacc < 2)
    return 0;
  const rp_plan_access *a = p->acc + nd->acc0 + 1;
  uint64_t b = 0;
  for (uint32_t i = 0; i < a->niv; i++)
    b += p->iv[2 * ((uint64_t)a->iv0 + i) + 1];
  return b;
}
