/* How long the chains of messages are in one replay of mode "mpi" over
 * all ranks (rp__starpu_msg_depth), from the task lists and dependencies
 * every rank would lower (fake ranks: no StarPU, no MPI): the tests check
 * that a step waits for its neighbours only, not for a chain through the
 * ranks (issue 35). */
#include <stdlib.h>
#include <string.h>
#include "sp_internal.h"

rp_status rp__sp_fake_rank(const rp_plan *p, int r, int nranks, int whole,
                           sp **out) {
  char err[256];
  sp *s = calloc(1, sizeof *s);
  if (!s)
    return RP_ENOMEM;
  *s = (sp){
      .p = p, .mode = SP_MPI, .rank = r, .nranks = nranks, .dep_whole = whole};
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  rp_status st = rp__sp_place(p, nranks, &s->place);
  if (st == RP_OK)
    st = rp__sp_part(p, SP_MPI, r, &s->place, &s->part, err, sizeof err);
  if (st == RP_OK)
    st = rp__sp_alias(p, SP_MPI, r, &s->place, &s->part);
  if (st == RP_OK) {
    s->h = calloc((size_t)p->nimage + 1, sizeof *s->h);
    s->sh = calloc((size_t)s->part.npiece + 1, sizeof *s->sh);
    s->mine = calloc((size_t)p->nnode + 1, sizeof *s->mine);
    st = s->h && s->sh && s->mine ? rp__sp_lower(s) : RP_ENOMEM;
  }
  if (st != RP_OK) {
    rp__sp_destroy(s);
    return st;
  }
  *out = s;
  return RP_OK;
}

long rp__sp_find_send(const sp *s, const sp *from, const sp_item *it) {
  const sp_piece *pc = &from->part.piece[it->piece];
  for (uint32_t i = 0; i < s->nitem; i++) {
    const sp_item *x = &s->item[i];
    if (x->kind != SP_SEND || x->v != it->v || x->peer != from->rank)
      continue;
    if (s->part.piece[x->piece].id == pc->id)
      return (long)i;
  }
  return -1;
}

rp_status rp__starpu_msg_depth(const rp_plan *p, int nranks, int whole,
                               uint32_t *depth) {
  if (nranks < 1)
    return RP_EINVAL;
  sp **r = calloc((size_t)nranks, sizeof *r);
  uint32_t **d = calloc((size_t)nranks, sizeof *d);
  long **peer = calloc((size_t)nranks, sizeof *peer);
  rp_status st = r && d && peer ? RP_OK : RP_ENOMEM;
  for (int k = 0; k < nranks && st == RP_OK; k++)
    if ((st = rp__sp_fake_rank(p, k, nranks, whole, &r[k])) == RP_OK &&
        (!(d[k] = calloc((size_t)r[k]->nitem + 1, sizeof *d[k])) ||
         !(peer[k] = calloc((size_t)r[k]->nitem + 1, sizeof *peer[k]))))
      st = RP_ENOMEM;
  /* each receive's send */
  for (int k = 0; k < nranks && st == RP_OK; k++)
    for (uint32_t i = 0; i < r[k]->nitem; i++) {
      const sp_item *it = &r[k]->item[i];
      peer[k][i] =
          it->kind == SP_RECV ? rp__sp_find_send(r[it->peer], r[k], it) : -1;
      if (it->kind == SP_RECV && peer[k][i] < 0)
        st = RP_EINVAL; /* a receive nobody sends: not a lowering */
    }
  /* longest paths, counting messages: relaxed in each rank's item order
   * (dependencies point to earlier items) until nothing changes (at most
   * one pass per message on a path, plus one) */
  uint64_t passes = 0, cap = 1;
  for (int k = 0; k < nranks && st == RP_OK; k++)
    cap += r[k]->nitem;
  for (int changed = st == RP_OK; changed && passes++ <= cap;) {
    changed = 0;
    for (int k = 0; k < nranks; k++)
      for (uint32_t i = 0; i < r[k]->nitem; i++) {
        const sp_item *it = &r[k]->item[i];
        uint32_t v = d[k][i];
        for (uint32_t j = 0; j < it->ndep; j++) {
          uint32_t e = r[k]->dep[it->dep0 + j];
          if (!(e & SP_DEP_PREV) && d[k][e] > v)
            v = d[k][e];
        }
        /* a send after its pack, an unpack after its receive (the item
         * before each), a receive one message after its send */
        if ((it->kind == SP_SEND || it->kind == SP_UNPACK) && i &&
            d[k][i - 1] > v)
          v = d[k][i - 1];
        if (it->kind == SP_RECV && d[it->peer][peer[k][i]] + 1 > v)
          v = d[it->peer][peer[k][i]] + 1;
        if (v != d[k][i]) {
          d[k][i] = v;
          changed = 1;
        }
      }
  }
  for (int k = 0; k < nranks && st == RP_OK; k++) {
    depth[k] = 0;
    for (uint32_t i = 0; i < r[k]->nitem; i++)
      if (d[k][i] > depth[k])
        depth[k] = d[k][i];
  }
  for (int k = 0; k < nranks; k++) {
    if (r)
      rp__sp_destroy(r[k]);
    if (d)
      free(d[k]);
    if (peer)
      free(peer[k]);
  }
  free(r);
  free(d);
  free(peer);
  return st;
}
