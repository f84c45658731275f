/* Lowering the part of the plan this rank runs (sp_part.c) into the task
 * list one replay submits, once at instantiate; and the work of each
 * item. A node run here is one task; a piece of a copy (a transfer
 * between ranks) is a pack task and a send on its source's rank, a
 * receive and an unpack task on its destination's; a local piece of a
 * copy of a distributed array, one task copying its runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sp_internal.h"

static enum starpu_data_access_mode sp_mode(unsigned m) {
  switch (m & RP_INOUT) {
  case RP_IN:
    return STARPU_R;
  case RP_OUT:
    return STARPU_W;
  default:
    return STARPU_RW;
  }
}

/* Appends a data access to the item being built, merging repeats of one
 * handle. */
static void add_descr(sp *s, sp_item *it, starpu_data_handle_t h,
                      unsigned mode) {
  for (uint32_t k = it->d0; k < it->d0 + it->nd; k++)
    if (s->descr[k].handle == h) {
      s->descr[k].mode |= sp_mode(mode);
      return;
    }
  s->descr[it->d0 + it->nd].handle = h;
  s->descr[it->d0 + it->nd].mode = sp_mode(mode);
  it->nd++;
}

/* Whether the tasks of mode "mpi" name the images as StarPU data: only
 * where a CUDA worker may run them (StarPU then moves the images; their
 * order is still the explicit dependencies, rp__sp_deps: alloc_data turns
 * StarPU's sequential consistency off on them). On CPU workers the tasks
 * name their staging buffers only. */
#ifdef STARPU_USE_CUDA
#define SP_MPI_IMAGES 1
#else
#define SP_MPI_IMAGES 0
#endif

static sp_item *add_item(sp *s, uint32_t v, int kind, int peer) {
  sp_item *it = &s->item[s->nitem++];
  it->s = s;
  it->v = v;
  it->kind = (uint8_t)kind;
  it->peer = peer;
  it->piece = RP_NONE;
  it->cls = SP_CL_BODY;
  it->d0 = s->ndescr;
  it->nd = 0;
  return it;
}

static int cross_cls(const rp_plan *p, uint32_t v) {
  const rp_plan_access *a = p->acc + p->node[v].acc0;
  return a[0].space < 0 || a[1].space < 0 ? SP_CL_HOST : SP_CL_HALO;
}

rp_status rp__sp_lower(sp *s) {
  const rp_plan *p = s->p;
  const sp_part *pt = &s->part;
  /* At most one item per node it runs, two per piece; at most nacc + 1
   * accesses per item. */
  size_t nit = (size_t)pt->nnode + 2 * (size_t)pt->npiece + 1;
  s->item = calloc(nit, sizeof *s->item);
  s->descr = calloc((size_t)pt->naccess + 2 * nit + 1, sizeof *s->descr);
  if (!s->item || !s->descr)
    return RP_ENOMEM;
  int data = s->mode == SP_IMPLICIT || (s->mode == SP_MPI && SP_MPI_IMAGES);
  uint32_t pc = 0;
  for (uint32_t k = 0; k < pt->nnode; k++) {
    uint32_t v = pt->node[k];
    const rp_plan_node *nd = &p->node[v];
    const rp_plan_access *a = p->acc + nd->acc0;
    if (pc == pt->npiece || pt->piece[pc].v != v) {
      sp_item *it = add_item(s, v, SP_RUN, 0);
      s->mine[v]++;
      for (uint32_t j = 0; data && j < nd->nacc; j++)
        if (a[j].image != RP_NONE)
          add_descr(s, it, s->h[a[j].image], a[j].mode);
      s->ndescr += it->nd;
      continue;
    }
    for (; pc < pt->npiece && pt->piece[pc].v == v; pc++) {
      const sp_piece *pp = &pt->piece[pc];
      int cls = cross_cls(p, v);
      if (pp->src == pp->dst) { /* a local piece */
        sp_item *it = add_item(s, v, SP_RUN, 0);
        it->piece = pc;
        s->mine[v]++;
        if (data) {
          add_descr(s, it, s->h[a[0].image], RP_IN);
          add_descr(s, it, s->h[a[1].image], RP_INOUT);
        }
        s->ndescr += it->nd;
        continue;
      }
      if (pp->src == s->rank) {
        sp_item *it = add_item(s, v, SP_PACK, 0);
        it->piece = pc;
        it->cls = (uint8_t)cls;
        if (data)
          add_descr(s, it, s->h[a[0].image], RP_IN);
        add_descr(s, it, s->sh[pc], RP_OUT);
        s->ndescr += it->nd;
        add_item(s, v, SP_SEND, pp->dst)->piece = pc;
      }
      if (pp->dst == s->rank) {
        sp_item *r = add_item(s, v, SP_RECV, pp->src);
        r->piece = pc;
        r->cls = (uint8_t)cls;
        sp_item *it = add_item(s, v, SP_UNPACK, 0);
        it->piece = pc;
        it->cls = (uint8_t)cls;
        s->mine[v]++;
        add_descr(s, it, s->sh[pc], RP_IN);
        if (data)
          add_descr(s, it, s->h[a[1].image], RP_INOUT);
        s->ndescr += it->nd;
      }
    }
  }
  return s->mode == SP_MPI ? rp__sp_deps(s) : RP_OK;
}

/* An image's base: the user's array, or our allocation of its bytes
 * [lo, hi) moved back by lo (addresses below lo are never used). */
static void *image(const sp *s, uint32_t i) {
  const rp_plan_image *im = &s->p->image[i];
  return rp__sp_in_user(s->p, &s->part, i)
             ? rp_exec_host(s->x)[im->buf]
             /* NOLINTNEXTLINE(performance-no-int-to-ptr): an image address rebased by its lowest byte */
             : (void *)((uintptr_t)s->img[i] - im->lo);
}

static void run_work(const sp_item *it);

void rp__sp_run_item(const sp_item *it) {
  sp *s = it->s;
  if (__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE)) {
    /* a failed batch stops: later tasks do nothing */
  } else {
    run_work(it);
  }
  char msg[256];
  int code = it->kind == SP_RUN ? rp_task_take_failure(msg, sizeof msg) : 0;
  rp__sp_item_done(it, code, msg);
}

void rp__sp_item_done(const sp_item *it, int code, const char *msg) {
  sp *s = it->s;
  if (it->kind != SP_RUN && it->kind != SP_UNPACK)
    return;
  pthread_mutex_lock(&s->mu);
  if (code && !s->failed) {
    s->fail_code = code;
    s->fail_v = it->v;
    s->fail_rep =
        s->mine[it->v] > 1 ? s->ndone[it->v] / s->mine[it->v] : s->ndone[it->v];
    snprintf(s->fail_msg, sizeof s->fail_msg, "%s", msg);
    __atomic_store_n(&s->failed, 1, __ATOMIC_RELEASE);
  }
  s->ndone[it->v]++;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

static void run_work(const sp_item *it) {
  const sp *s = it->s;
  const rp_plan *p = s->p;
  const rp_plan_node *nd = &p->node[it->v];
  const rp_plan_access *a = p->acc + nd->acc0;
  const uint64_t *iv = nd->nacc > 1 ? p->iv + 2 * (uint64_t)a[1].iv0 : NULL;
  uint32_t niv = nd->nacc > 1 ? a[1].niv : 0;
  if (it->piece != RP_NONE) {
    const sp_piece *pc = &s->part.piece[it->piece];
    iv = s->part.runs + 2 * (uint64_t)pc->r0;
    niv = pc->nr;
  }
  if (it->kind == SP_PACK || it->kind == SP_UNPACK) {
    char *st = s->stage[it->piece];
    char *im = image(s, a[it->kind == SP_PACK ? 0 : 1].image);
    uint64_t off = 0;
    for (uint32_t i = 0; i < niv; i++) {
      if (it->kind == SP_PACK)
        memcpy(st + off, im + iv[2 * i], iv[2 * i + 1]);
      else
        memcpy(im + iv[2 * i], st + off, iv[2 * i + 1]);
      off += iv[2 * i + 1];
    }
    return;
  }
  switch (nd->type) {
  case RP_OP_KERNEL: {
    rp_kargs ka = *rp_exec_args(s->x, nd->op);
    for (uint32_t k = 0; k < nd->nacc; k++)
      if (a[k].image != RP_NONE)
        ka.a[k].p = image(s, a[k].image);
    uint64_t lo[3] = {0, 0, 0};
    s->kern[it->v]->cpu(&ka, lo, ka.n);
    return;
  }
  case RP_OP_HOST: {
    void *ptrs[nd->nacc ? nd->nacc : 1];
    for (uint32_t k = 0; k < nd->nacc; k++)
      ptrs[k] = image(s, a[k].image);
    nd->host_fn(nd->host_user, ptrs);
    return;
  }
  default: {
    char *dst = image(s, a[1].image);
    const char *src = image(s, a[0].image);
    if (dst == src)
      return; /* both ends in one memory (rp__sp_alias): nothing moves */
    for (uint32_t i = 0; i < niv; i++)
      memmove(dst + iv[2 * i], src + iv[2 * i], iv[2 * i + 1]);
    return;
  }
  }
}
