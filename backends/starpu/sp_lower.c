/* Lowering the plan into the task list one replay submits, once at
 * instantiate; and the work of each item. In mode "mpi" every space has an
 * owner rank (the host: rank 0; device d: rank d % nranks) and every node
 * runs on the owner of what it writes; a rank lowers only the nodes it
 * runs and, for a copy between ranks, its half: the source's owner packs
 * the region and sends it, the destination's owner receives and unpacks
 * it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sp_internal.h"

/* Where node nd runs (mpi); for a copy, *src and *dst are the owners of
 * its two ends. */
static int node_rank(const rp_plan *p, const rp_plan_node *nd, int nranks,
                     int *src, int *dst) {
  const rp_plan_access *a = p->acc + nd->acc0;
  switch (nd->type) {
  case RP_OP_KERNEL:
    *src = *dst = rp__sp_space_rank(nd->device, nranks);
    break;
  case RP_OP_HOST:
    *src = *dst = 0;
    break;
  default:
    *src = rp__sp_space_rank(a[0].space, nranks);
    *dst = rp__sp_space_rank(a[1].space, nranks);
  }
  return *dst;
}

/* Which images the part accesses on this rank, each once: an open
 * addressing set sized from the part (cap a power of two, > 2x entries). */
static int set_add(uint32_t *tab, uint32_t cap, uint32_t i) {
  uint32_t h = (i * 2654435761u) & (cap - 1);
  while (tab[h] != RP_NONE) {
    if (tab[h] == i)
      return 0;
    h = (h + 1) & (cap - 1);
  }
  tab[h] = i;
  return 1;
}

void rp__sp_part_free(sp_part *pt) {
  free(pt->node);
  free(pt->image);
  memset(pt, 0, sizeof *pt);
}

rp_status rp__sp_part(const rp_plan *p, int mode, int rank, int nranks,
                      sp_part *out) {
  memset(out, 0, sizeof *out);
  /* The one pass over the whole plan: each node's owners (a few loads and
   * a modulo); the rest works on what this pass keeps. */
  uint32_t n = 0, cap = 16;
  out->node = malloc(cap * sizeof *out->node);
  if (!out->node)
    return RP_ENOMEM;
  for (uint32_t v = 0; v < p->nnode; v++) {
    int a = 0, b = 0;
    if (mode == SP_MPI) {
      node_rank(p, &p->node[v], nranks, &a, &b);
      if (a != rank && b != rank)
        continue;
    }
    if (n == cap) {
      uint32_t *t = realloc(out->node, 2 * (size_t)cap * sizeof *t);
      if (!t) {
        rp__sp_part_free(out);
        return RP_ENOMEM;
      }
      out->node = t;
      cap *= 2;
    }
    out->node[n++] = v;
    out->naccess += p->node[v].nacc;
    if (a == b) {
      out->tasks++;
      continue;
    }
    out->nstage++;
    out->tasks += (a == rank) + (b == rank);
    out->sends += a == rank;
    out->recvs += b == rank;
  }
  out->nnode = n;
  /* The images those nodes access here: for a copy between ranks, only
   * its end on this rank. */
  uint32_t scap = 16;
  while (scap < 2 * (uint64_t)out->naccess + 2)
    scap *= 2;
  uint32_t *set = malloc(scap * sizeof *set);
  out->image = malloc(((size_t)out->naccess + 1) * sizeof *out->image);
  if (!set || !out->image) {
    free(set);
    rp__sp_part_free(out);
    return RP_ENOMEM;
  }
  memset(set, 0xff, scap * sizeof *set);
  for (uint32_t k = 0; k < n; k++) {
    const rp_plan_node *nd = &p->node[out->node[k]];
    const rp_plan_access *a = p->acc + nd->acc0;
    int src = rank, dst = rank;
    if (mode == SP_MPI)
      node_rank(p, nd, nranks, &src, &dst);
    for (uint32_t j = 0; j < nd->nacc; j++) {
      if (a[j].image == RP_NONE)
        continue;
      if (src != dst && (j == 0 ? src : dst) != rank)
        continue;
      if (set_add(set, scap, a[j].image))
        out->image[out->nimage++] = a[j].image;
    }
  }
  free(set);
  return RP_OK;
}

void rp__sp_part_stats(const rp_plan *p, const sp_part *pt, int rank,
                       int nranks, rp__starpu_stats *out) {
  memset(out, 0, sizeof *out);
  out->rank = rank;
  out->nranks = nranks;
  out->nodes = p->nnode;
  out->tasks = pt->tasks;
  out->sends = pt->sends;
  out->recvs = pt->recvs;
  out->scanned = p->nnode;
  out->visited = pt->nnode;
  out->accesses = pt->naccess;
  out->images = pt->nimage;
  for (uint32_t k = 0; k < pt->nimage; k++) {
    const rp_plan_image *im = &p->image[pt->image[k]];
    out->image_bytes += im->flags & RP_IMAGE_USER ? 0 : im->hi - im->lo;
  }
}

rp_status rp__starpu_count(const rp_plan *p, int rank, int nranks,
                           rp__starpu_stats *out) {
  sp_part pt;
  double t0 = rp_clock_us();
  rp_status st = rp__sp_part(p, SP_MPI, rank, nranks, &pt);
  double t1 = rp_clock_us();
  if (st != RP_OK)
    return st;
  rp__sp_part_stats(p, &pt, rank, nranks, out);
  out->lower_us = t1 - t0;
  out->handles = pt.nimage + pt.nstage;
  rp__sp_part_free(&pt);
  return RP_OK;
}

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

static sp_item *add_item(sp *s, uint32_t v, int kind, int peer) {
  sp_item *it = &s->item[s->nitem++];
  it->s = s;
  it->v = v;
  it->kind = (uint8_t)kind;
  it->peer = peer;
  it->d0 = s->ndescr;
  it->nd = 0;
  return it;
}

rp_status rp__sp_lower(sp *s) {
  const rp_plan *p = s->p;
  const sp_part *pt = &s->part;
  /* At most two items per node, at most nacc + 1 accesses per item. */
  s->item = calloc(2 * (size_t)pt->nnode + 1, sizeof *s->item);
  s->descr = calloc(2 * ((size_t)pt->naccess + 2 * (size_t)pt->nnode) + 1,
                    sizeof *s->descr);
  if (!s->item || !s->descr)
    return RP_ENOMEM;
  int data = s->mode != SP_EXPLICIT;
  for (uint32_t k = 0; k < pt->nnode; k++) {
    uint32_t v = pt->node[k];
    const rp_plan_node *nd = &p->node[v];
    const rp_plan_access *a = p->acc + nd->acc0;
    int src = 0, dst = 0;
    if (s->mode == SP_MPI)
      node_rank(p, nd, s->nranks, &src, &dst);
    if (src == dst) {
      if (dst != s->rank)
        continue;
      sp_item *it = add_item(s, v, SP_RUN, 0);
      s->mine[v] = 1;
      for (uint32_t k = 0; data && k < nd->nacc; k++)
        if (a[k].image != RP_NONE)
          add_descr(s, it, s->h[a[k].image], a[k].mode);
      s->ndescr += it->nd;
      continue;
    }
    if (src == s->rank) {
      sp_item *it = add_item(s, v, SP_PACK, 0);
      add_descr(s, it, s->h[a[0].image], RP_IN);
      add_descr(s, it, s->sh[v], RP_OUT);
      s->ndescr += it->nd;
      add_item(s, v, SP_SEND, dst);
    }
    if (dst == s->rank) {
      add_item(s, v, SP_RECV, src);
      sp_item *it = add_item(s, v, SP_UNPACK, 0);
      s->mine[v] = 1;
      add_descr(s, it, s->sh[v], RP_IN);
      add_descr(s, it, s->h[a[1].image], RP_INOUT);
      s->ndescr += it->nd;
    }
  }
  return RP_OK;
}

/* An image's base: the user's array, or our allocation of its bytes
 * [lo, hi) moved back by lo (addresses below lo are never used). */
static void *image(const sp *s, uint32_t i) {
  const rp_plan_image *im = &s->p->image[i];
  return im->flags & RP_IMAGE_USER ? rp_exec_host(s->x)[im->buf]
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
    s->fail_rep = s->ndone[it->v];
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
  if (it->kind == SP_PACK || it->kind == SP_UNPACK) {
    char *st = s->stage[it->v];
    char *im = image(s, a[it->kind == SP_PACK ? 0 : 1].image);
    uint64_t off = 0;
    for (uint32_t i = 0; i < a[1].niv; i++) {
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
    rp_host_fn fn;
    void *user, *ptrs[nd->nacc ? nd->nacc : 1];
    rp_node_host_fn(p->graph, nd->op, &fn, &user);
    for (uint32_t k = 0; k < nd->nacc; k++)
      ptrs[k] = image(s, a[k].image);
    fn(user, ptrs);
    return;
  }
  default: {
    char *dst = image(s, a[1].image);
    const char *src = image(s, a[0].image);
    for (uint32_t i = 0; i < a[1].niv; i++)
      memmove(dst + iv[2 * i], src + iv[2 * i], iv[2 * i + 1]);
    return;
  }
  }
}
