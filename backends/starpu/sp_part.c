/* Placing the plan over ranks (mode "mpi") and finding the part one rank
 * lowers, without StarPU: device d lives on rank d % nranks, the host on
 * rank 0, except the rows of a distributed buffer (rp_buffer_distribute),
 * part p's on rank p % nranks. Every node runs on the rank that owns what
 * it writes; a copy between two ranks' spaces is a transfer (a piece), the
 * source packing and sending, the destination receiving and unpacking; a
 * copy between a device and a distributed host array is cut at the parts'
 * bounds into one piece per rank holding some of its rows (a local piece
 * when that rank is the device's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sp_place.h"

int rp__sp_space_rank(int space, int nranks) {
  return space < 0 || nranks <= 1 ? 0 : space % nranks;
}

void rp__sp_place_free(sp_place *pl) {
  for (uint32_t b = 0; pl->dist && b < pl->nbuf; b++)
    free(pl->dist[b].bounds);
  free(pl->dist);
  memset(pl, 0, sizeof *pl);
}

rp_status rp__sp_place(const rp_plan *p, int nranks, sp_place *out) {
  memset(out, 0, sizeof *out);
  out->nranks = nranks > 0 ? nranks : 1;
  out->nbuf = p->nbuf;
  if (out->nranks < 2)
    return RP_OK; /* one rank holds everything */
  for (rp_buf b = 0; b < out->nbuf; b++) {
    const rp_plan_buffer *pb = &p->buf[b];
    unsigned n = pb->nparts;
    if (!n)
      continue;
    if (!out->dist && !(out->dist = calloc(out->nbuf, sizeof *out->dist)))
      return RP_ENOMEM;
    sp_dist *d = &out->dist[b];
    if (!(d->bounds = malloc(((size_t)n + 1) * sizeof *d->bounds))) {
      rp__sp_place_free(out);
      return RP_ENOMEM;
    }
    d->nparts = n;
    memcpy(d->bounds, pb->part_rows, ((size_t)n + 1) * sizeof *d->bounds);
    d->rowbytes = pb->desc.bytes / (d->bounds[n] ? d->bounds[n] : 1);
  }
  return RP_OK;
}

/* The distribution of image i's buffer when the image is the host's and
 * the buffer distributed; NULL otherwise. */
static const sp_dist *host_dist(const sp_place *pl, const rp_plan *p,
                                uint32_t i) {
  if (!pl || !pl->dist || i == RP_NONE || !(p->image[i].spaces >> 63))
    return NULL;
  const sp_dist *d = &pl->dist[p->image[i].buf];
  return d->nparts ? d : NULL;
}

/* The part holding row r: the last part starting at or before r (empty
 * parts start where the next one does). */
static unsigned part_of_row(const sp_dist *d, uint64_t r) {
  unsigned lo = 0, hi = d->nparts;
  while (hi - lo > 1) {
    unsigned mid = lo + (hi - lo) / 2;
    if (d->bounds[mid] <= r)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* The ranks holding rows of bytes [off, off + len) of a distributed host
 * array, in the order of their first part, each once, into h (room for
 * nranks); returns how many. Every row of the span is touched by a box or
 * a byte range, so these are exactly the ranks its runs fall on. */
static unsigned holders(const sp_dist *d, int nranks, uint64_t off,
                        uint64_t len, int *h) {
  if (!len)
    return 0;
  uint64_t r0 = off / d->rowbytes, r1 = (off + len - 1) / d->rowbytes + 1;
  unsigned n = 0;
  for (unsigned k = part_of_row(d, r0); k < d->nparts && d->bounds[k] < r1;
       k++) {
    if (d->bounds[k] == d->bounds[k + 1])
      continue;
    int q = (int)(k % (unsigned)nranks), seen = 0;
    for (unsigned j = 0; j < n && !seen; j++)
      seen = h[j] == q;
    if (!seen)
      h[n++] = q;
    if (n == (unsigned)nranks)
      break;
  }
  return n;
}

/* Where node v runs. Returns 0: on rank *at (-1: a host task whose host
 * rows lie on several ranks); 1: a transfer *src -> *dst between two
 * ranks; 2: a copy between the device of rank *at and a distributed host
 * array whose rows lie on the *nh ranks h (*hsrc: the host is the
 * source), at least one of them another rank. */
static int where(const sp_place *pl, const rp_plan *p, uint32_t v, int *at,
                 int *src, int *dst, int *h, unsigned *nh, int *hsrc) {
  const rp_plan_node *nd = &p->node[v];
  const rp_plan_access *a = p->acc + nd->acc0;
  int nr = pl->nranks;
  switch (nd->type) {
  case RP_OP_KERNEL:
    *at = rp__sp_space_rank(nd->device, nr);
    return 0;
  case RP_OP_HOST:
    *at = 0;
    if (!pl->dist)
      return 0;
    /* the rank holding every host row it touches (rank 0 for arrays that
     * are not distributed) */
    for (uint32_t k = 0, first = 1; k < nd->nacc; k++) {
      const sp_dist *d = host_dist(pl, p, a[k].image);
      int one = 0;
      if (d) {
        unsigned n = holders(d, nr, a[k].offset, a[k].bytes, h);
        if (!n)
          continue;
        if (n > 1) {
          *at = -1;
          return 0;
        }
        one = h[0];
      }
      if (!first && one != *at) {
        *at = -1;
        return 0;
      }
      *at = one;
      first = 0;
    }
    return 0;
  default:
    break;
  }
  *src = rp__sp_space_rank(a[0].space, nr);
  *dst = rp__sp_space_rank(a[1].space, nr);
  const sp_dist *d = host_dist(pl, p, a[0].image);
  *hsrc = d != NULL;
  if (!d)
    d = host_dist(pl, p, a[1].image);
  if (d) {
    *at = *hsrc ? *dst : *src;
    *nh = holders(d, nr, a[1].offset, a[1].bytes, h);
    if (*nh == 0 || (*nh == 1 && h[0] == *at))
      return 0; /* every row on the device's rank: a local copy */
    return 2;
  }
  *at = *dst;
  return *src == *dst ? 0 : 1;
}

void rp__sp_part_free(sp_part *pt) {
  free(pt->alias);
  free(pt->node);
  free(pt->image);
  free(pt->piece);
  free(pt->runs);
  memset(pt, 0, sizeof *pt);
}

static rp_status add_run(sp_part *pt, uint64_t off, uint64_t len) {
  if (pt->nruns &&
      pt->runs[2 * pt->nruns - 2] + pt->runs[2 * pt->nruns - 1] == off &&
      pt->npiece && pt->piece[pt->npiece - 1].nr) {
    pt->runs[2 * pt->nruns - 1] += len; /* continues the last run */
    return RP_OK;
  }
  if (pt->nruns == pt->capruns) {
    uint64_t c = pt->capruns ? 2 * pt->capruns : 64;
    uint64_t *r = realloc(pt->runs, 2 * c * sizeof *r);
    if (!r)
      return RP_ENOMEM;
    pt->runs = r;
    pt->capruns = c;
  }
  pt->runs[2 * pt->nruns] = off;
  pt->runs[2 * pt->nruns + 1] = len;
  pt->nruns++;
  pt->piece[pt->npiece - 1].nr++;
  return RP_OK;
}

/* Appends a piece of copy v, with its runs: all of the node's (d NULL),
 * or those of its rows held by rank q. */
static rp_status add_piece(sp_part *pt, const rp_plan *p, uint32_t v, int src,
                           int dst, uint32_t id, const sp_dist *d, int nranks,
                           int q) {
  if (pt->npiece == pt->cappiece) {
    uint32_t c = pt->cappiece ? 2 * pt->cappiece : 16;
    sp_piece *n = realloc(pt->piece, c * sizeof *n);
    if (!n)
      return RP_ENOMEM;
    pt->piece = n;
    pt->cappiece = c;
  }
  sp_piece *pc = &pt->piece[pt->npiece++];
  *pc = (sp_piece){v, src, dst, id, (uint32_t)pt->nruns, 0, 0};
  const rp_plan_access *a = p->acc + p->node[v].acc0 + 1;
  const uint64_t *iv = p->iv + 2 * (uint64_t)a->iv0;
  for (uint32_t j = 0; j < a->niv; j++) {
    uint64_t o = iv[2 * j], l = iv[2 * j + 1];
    while (l) {
      uint64_t take = l;
      int r = q;
      if (d) {
        unsigned k = part_of_row(d, o / d->rowbytes);
        uint64_t end = d->bounds[k + 1] * d->rowbytes;
        take = end - o < l ? end - o : l;
        r = (int)(k % (unsigned)nranks);
      }
      if (r == q) {
        if (add_run(pt, o, take))
          return RP_ENOMEM;
        pc = &pt->piece[pt->npiece - 1];
        pc->bytes += take;
      }
      o += take;
      l -= take;
    }
  }
  return RP_OK;
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

static rp_status push_node(sp_part *out, uint32_t *cap, uint32_t v,
                           uint32_t nacc) {
  if (out->nnode == *cap) {
    uint32_t *t = realloc(out->node, 2 * (size_t)*cap * sizeof *t);
    if (!t)
      return RP_ENOMEM;
    out->node = t;
    *cap *= 2;
  }
  out->node[out->nnode++] = v;
  out->naccess += nacc;
  return RP_OK;
}

/* The pieces of distributed copy v that rank `rank` takes part in. */
static rp_status dist_pieces(sp_part *out, const rp_plan *p, const sp_place *pl,
                             uint32_t v, int rank, int dev, const int *h,
                             unsigned nh, int hsrc) {
  const rp_plan_access *a = p->acc + p->node[v].acc0;
  const sp_dist *d = host_dist(pl, p, a[hsrc ? 0 : 1].image);
  for (unsigned k = 0; k < nh; k++) {
    int q = h[k];
    if (rank != dev && q != rank)
      continue;
    int src = hsrc ? q : dev, dst = hsrc ? dev : q;
    if (add_piece(out, p, v, src, dst, k, d, pl->nranks, q))
      return RP_ENOMEM;
    if (q == dev) {
      out->tasks++; /* a local piece: one task */
      continue;
    }
    out->nstage++;
    out->tasks++;
    out->sends += src == rank;
    out->recvs += dst == rank;
  }
  return RP_OK;
}

rp_status rp__sp_part(const rp_plan *p, int mode, int rank, const sp_place *pl,
                      sp_part *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  int nr = mode == SP_MPI && pl ? pl->nranks : 1;
  sp_place one = {1, 0, NULL};
  if (mode != SP_MPI || !pl)
    pl = &one;
  /* The one pass over the whole plan: each node's owners (a few loads and
   * a modulo; for a host task or a copy of a distributed array, the parts
   * its span covers); the rest works on what this pass keeps. */
  uint32_t cap = 16;
  int *h = malloc((size_t)nr * sizeof *h);
  out->node = malloc(cap * sizeof *out->node);
  if (!h || !out->node) {
    free(h);
    rp__sp_part_free(out);
    return RP_ENOMEM;
  }
  rp_status st = RP_OK;
  for (uint32_t v = 0; v < p->nnode && st == RP_OK; v++) {
    int at = 0, src = 0, dst = 0, hsrc = 0;
    unsigned nh = 0;
    const rp_plan_node *nd = &p->node[v];
    int k = where(pl, p, v, &at, &src, &dst, h, &nh, &hsrc);
    if (k == 0 && at < 0) {
      snprintf(err, errlen,
               "starpu mpi: host task \"%s\" (op %u) touches "
               "rows of distributed buffers that lie on several ranks (a "
               "host task runs where all its host rows are)",
               nd->name, nd->op);
      st = RP_ENOTSUP;
      break;
    }
    if (k == 0) {
      if (at != rank)
        continue;
      if ((st = push_node(out, &cap, v, nd->nacc)) == RP_OK)
        out->tasks++;
      continue;
    }
    if (k == 1) {
      if (src != rank && dst != rank)
        continue;
      if ((st = push_node(out, &cap, v, nd->nacc)) != RP_OK ||
          (st = add_piece(out, p, v, src, dst, 0, NULL, nr, rank)) != RP_OK)
        break;
      out->nstage++;
      out->tasks += (src == rank) + (dst == rank);
      out->sends += src == rank;
      out->recvs += dst == rank;
      continue;
    }
    int in = at == rank;
    for (unsigned j = 0; j < nh && !in; j++)
      in = h[j] == rank;
    if (!in)
      continue;
    if ((st = push_node(out, &cap, v, nd->nacc)) != RP_OK)
      break;
    st = dist_pieces(out, p, pl, v, rank, at, h, nh, hsrc);
  }
  free(h);
  if (st != RP_OK) {
    rp__sp_part_free(out);
    return st;
  }
  /* The images those nodes access here: for a copy between ranks, only
   * the ends its pieces have on this rank. */
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
  for (uint32_t k = 0, pc = 0; k < out->nnode; k++) {
    uint32_t v = out->node[k];
    const rp_plan_node *nd = &p->node[v];
    const rp_plan_access *a = p->acc + nd->acc0;
    int end[2] = {1, 1};
    if (pc < out->npiece && out->piece[pc].v == v) {
      end[0] = end[1] = 0;
      for (; pc < out->npiece && out->piece[pc].v == v; pc++) {
        end[0] |= out->piece[pc].src == rank;
        end[1] |= out->piece[pc].dst == rank;
      }
    }
    for (uint32_t j = 0; j < nd->nacc; j++) {
      if (a[j].image == RP_NONE || (j < 2 && !end[j]))
        continue;
      if (set_add(set, scap, a[j].image))
        out->image[out->nimage++] = a[j].image;
    }
  }
  free(set);
  return RP_OK;
}

int rp__sp_in_user(const rp_plan *p, const sp_part *pt, uint32_t i) {
  return (p->image[i].flags & RP_IMAGE_USER) || (pt->alias && pt->alias[i]);
}

rp_status rp__sp_alias(const rp_plan *p, int mode, int rank, const sp_place *pl,
                       sp_part *pt) {
  uint32_t nbuf = p->nbuf;
  pt->alias = calloc((size_t)p->nimage + 1, 1);
  uint8_t *seen = calloc((size_t)nbuf + 1, 1);
  if (!pt->alias || !seen) {
    free(seen);
    return RP_ENOMEM;
  }
  int nr = pl && pl->nranks > 0 ? pl->nranks : 1;
  uint64_t devs = 0; /* this rank's devices */
  for (unsigned d = 0; d < p->ndev && d < 63; d++)
    if ((int)(d % (unsigned)nr) == rank)
      devs |= 1ull << d;
  rp_status st = RP_OK;
  for (uint32_t k = 0; k < pt->nimage && st == RP_OK; k++) {
    rp_buf b = p->image[pt->image[k]].buf;
    if (seen[b])
      continue;
    seen[b] = 1;
    if (!p->buf[b].desc.host)
      continue; /* internal: no user array */
    int dist = pl && pl->dist && pl->dist[b].nparts;
    if (mode != SP_MPI || (!dist && rank != 0))
      continue; /* the user's array is rank 0's alone */
    /* the host's rows here and this rank's devices: one memory if the
     * coherence model cannot tell; for a distributed buffer the rows it
     * does not hold are its devices' alone (checked apart) */
    uint64_t s1 = (1ull << 63) | devs;
    int ok = 0, ok2 = 1;
    st = rp_plan_may_share(p, b, s1, &ok);
    if (st == RP_OK && ok && dist && (devs & (devs - 1)))
      st = rp_plan_may_share(p, b, devs, &ok2);
    if (st != RP_OK || !ok || !ok2)
      continue;
    for (uint32_t j = 0; j < pt->nimage; j++) {
      uint32_t i = pt->image[j];
      if (p->image[i].buf == b && (p->image[i].spaces & s1))
        pt->alias[i] = 1;
    }
  }
  /* one handle per user array used here */
  memset(seen, 0, (size_t)nbuf + 1);
  pt->nuser = 0;
  for (uint32_t k = 0; k < pt->nimage; k++) {
    uint32_t i = pt->image[k];
    if (rp__sp_in_user(p, pt, i) && !seen[p->image[i].buf]) {
      seen[p->image[i].buf] = 1;
      pt->nuser++;
    }
  }
  free(seen);
  return st;
}
