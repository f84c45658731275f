/* OpenMP backend: host-side images of buffers and the elision of copies.
 *
 * Every memory space is host memory here. A buffer gets one image shared by
 * all its spaces when that cannot change any result: a program-order
 * simulation over the buffer's segments checks that every read (kernel,
 * host task, copy source) finds its space holding the latest value, starting
 * from "only the host image is valid" (internal buffers: all valid, two
 * passes). Copies of a shared buffer are then no-ops. Sharing also makes
 * accesses in different spaces touch the same memory, so the conflicts
 * between them (which the recorder, reasoning per space, did not order) are
 * returned as extra edges. A buffer that fails the check keeps one image per
 * space and its copies are real memcpy's. */
#include <stdlib.h>
#include <string.h>
#include "omp_internal.h"

typedef struct bacc {
  uint32_t op;
  uint8_t mode, copy;
  int space;
  uint64_t iv0, niv;   /* into the interval pool */
} bacc;

typedef struct rdr {
  uint32_t op;
  int space;
  int32_t next;
} rdr;

typedef struct sim {
  uint64_t *iv;        /* interval pool (offset, length) */
  uint64_t niv, capiv;
  uint64_t *bp;        /* breakpoints */
  uint64_t *mask;      /* per segment: spaces holding the latest value */
  int32_t *lastw, *rhead;
  int *lwspace;
  rdr *pool;
  size_t npool, cappool;
  uint32_t *edge;
  size_t nedge, capedge;
} sim;

static bool grow(void **p, size_t *cap, size_t need, size_t sz) {
  if (need <= *cap)
    return true;
  size_t c = *cap ? *cap : 64;
  while (c < need)
    c *= 2;
  void *q = realloc(*p, c * sz);
  if (!q)
    return false;
  *p = q;
  *cap = c;
  return true;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static int cmp_edge(const void *a, const void *b) {
  const uint32_t *x = a, *y = b;
  if (x[0] != y[0])
    return (x[0] > y[0]) - (x[0] < y[0]);
  return (x[1] > y[1]) - (x[1] < y[1]);
}

static uint64_t seg_of(const uint64_t *bp, uint64_t nbp, uint64_t v) {
  uint64_t lo = 0, hi = nbp;
  while (lo < hi) {
    uint64_t mid = (lo + hi) / 2;
    if (bp[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static uint64_t bit(int space) {
  return space < 0 ? (1ull << 63) : (1ull << (unsigned)space);
}

static bool add_edge(sim *s, uint32_t from, uint32_t to) {
  size_t cap = s->capedge / 2;
  if (!grow((void **)&s->edge, &cap, s->nedge + 1, 2 * sizeof(uint32_t)))
    return false;
  s->capedge = cap * 2;
  s->edge[2 * s->nedge] = from;
  s->edge[2 * s->nedge + 1] = to;
  s->nedge++;
  return true;
}

/* Validity simulation of one pass; returns false at the first stale read. */
static bool sim_pass(sim *s, const bacc *a, uint32_t na, uint64_t nbp) {
  for (uint32_t i = 0; i < na;) {
    uint32_t j = i;
    while (j < na && a[j].op == a[i].op)
      j++;
    for (int phase = 0; phase < 2; phase++) {
      for (uint32_t k = i; k < j; k++) {
        uint8_t m = phase == 0 ? RP_IN : RP_OUT;
        if (!(a[k].mode & m))
          continue;
        for (uint64_t v = 0; v < a[k].niv; v++) {
          const uint64_t *p = s->iv + 2 * (a[k].iv0 + v);
          uint64_t s0 = seg_of(s->bp, nbp, p[0]);
          uint64_t s1 = seg_of(s->bp, nbp, p[0] + p[1]);
          for (uint64_t q = s0; q < s1; q++) {
            if (phase == 0 && !(s->mask[q] & bit(a[k].space)))
              return false;
            if (phase == 1)
              s->mask[q] = a[k].copy ? s->mask[q] | bit(a[k].space)
                                     : bit(a[k].space);
          }
        }
      }
    }
    i = j;
  }
  return true;
}

/* Orderings between non-copy accesses of different spaces (one image). */
static bool cross_edges(sim *s, const bacc *a, uint32_t na, uint64_t nseg) {
  for (uint64_t q = 0; q < nseg; q++)
    s->lastw[q] = s->rhead[q] = -1;
  s->npool = 0;
  for (uint32_t i = 0; i < na;) {
    uint32_t j = i;
    while (j < na && a[j].op == a[i].op)
      j++;
    for (int phase = 0; phase < 2; phase++) {
      for (uint32_t k = i; k < j; k++) {
        uint8_t m = phase == 0 ? RP_IN : RP_OUT;
        if (a[k].copy || !(a[k].mode & m))
          continue;
        uint32_t op = a[k].op;
        int sp = a[k].space;
        for (uint64_t v = 0; v < a[k].niv; v++) {
          const uint64_t *p = s->iv + 2 * (a[k].iv0 + v);
          uint64_t s0 = seg_of(s->bp, nseg + 1, p[0]);
          uint64_t s1 = seg_of(s->bp, nseg + 1, p[0] + p[1]);
          for (uint64_t q = s0; q < s1; q++) {
            int32_t w = s->lastw[q];
            if (w >= 0 && (uint32_t)w != op && s->lwspace[q] != sp &&
                !add_edge(s, (uint32_t)w, op))
              return false;
            if (phase == 0) {
              int32_t h = s->rhead[q];
              if (h >= 0 && s->pool[h].op == op)
                continue;
              if (!grow((void **)&s->pool, &s->cappool, s->npool + 1,
                        sizeof(rdr)))
                return false;
              s->pool[s->npool].op = op;
              s->pool[s->npool].space = sp;
              s->pool[s->npool].next = h;
              s->rhead[q] = (int32_t)s->npool++;
              continue;
            }
            for (int32_t r = s->rhead[q]; r >= 0; r = s->pool[r].next)
              if (s->pool[r].op != op && s->pool[r].space != sp &&
                  !add_edge(s, s->pool[r].op, op))
                return false;
            s->rhead[q] = -1;
            s->lastw[q] = (int32_t)op;
            s->lwspace[q] = sp;
          }
        }
      }
    }
    i = j;
  }
  return true;
}

static void *own(ostate *st, uint64_t bytes) {
  void *p = calloc(1, bytes ? bytes : 1);
  if (p)
    st->owned[st->nowned++] = p;
  return p;
}

rp_status rp__omp_images(ostate *st, uint32_t **edges, size_t *nedges) {
  const rp_graph *g = st->g;
  void *const *host = rp_exec_host(st->x);
  rp_status rc = RP_ENOMEM;
  sim s;
  memset(&s, 0, sizeof s);
  uint32_t *cnt = calloc(g->nbuf + 1, sizeof *cnt);
  bacc *all = malloc((g->nacc ? g->nacc : 1) * sizeof *all);
  if (!cnt || !all)
    goto out;
  /* Bucket the accesses by buffer, each bucket in program order. */
  for (uint32_t a = 0; a < g->nacc; a++)
    cnt[g->acc[a].region.buf + 1]++;
  for (uint32_t b = 0; b < g->nbuf; b++)
    cnt[b + 1] += cnt[b];
  uint32_t *fill = calloc(g->nbuf ? g->nbuf : 1, sizeof *fill);
  if (!fill)
    goto out;
  for (uint32_t n = 0; n < g->nop; n++) {
    const rp__op *o = &g->op[n];
    for (uint32_t k = 0; k < o->nacc; k++) {
      const rp__access *ac = &g->acc[o->acc0 + k];
      rp_buf b = ac->region.buf;
      bacc *e = &all[cnt[b] + fill[b]++];
      e->op = n;
      e->mode = (uint8_t)ac->mode;
      e->copy = o->type == RP_OP_COPY_H2D || o->type == RP_OP_COPY_D2H ||
                o->type == RP_OP_COPY_D2D;
      e->space = ac->space;
      uint64_t tot = rp_region_intervals(g, &ac->region, NULL, 0);
      size_t cap = s.capiv / 2;
      if (!grow((void **)&s.iv, &cap, s.niv + tot, 2 * sizeof(uint64_t))) {
        free(fill);
        goto out;
      }
      s.capiv = cap * 2;
      e->iv0 = s.niv;
      e->niv = rp_region_intervals(g, &ac->region, s.iv + 2 * s.niv, tot);
      s.niv += e->niv;
    }
  }
  free(fill);
  for (rp_buf b = 0; b < g->nbuf; b++) {
    const bacc *a = all + cnt[b];
    uint32_t na = cnt[b + 1] - cnt[b];
    uint64_t nbp = 0, full = 0;
    for (uint32_t k = 0; k < na; k++)
      nbp += 2 * a[k].niv;
    free(s.bp);
    free(s.mask);
    free(s.lastw);
    free(s.rhead);
    free(s.lwspace);
    s.bp = malloc((nbp + 1) * sizeof *s.bp);
    s.mask = malloc((nbp + 1) * sizeof *s.mask);
    s.lastw = malloc((nbp + 1) * sizeof *s.lastw);
    s.rhead = malloc((nbp + 1) * sizeof *s.rhead);
    s.lwspace = malloc((nbp + 1) * sizeof *s.lwspace);
    if (!s.bp || !s.mask || !s.lastw || !s.rhead || !s.lwspace)
      goto out;
    for (uint32_t k = 0, i = 0; k < na; k++)
      for (uint64_t v = 0; v < a[k].niv; v++) {
        s.bp[i++] = s.iv[2 * (a[k].iv0 + v)];
        s.bp[i++] = s.iv[2 * (a[k].iv0 + v)] + s.iv[2 * (a[k].iv0 + v) + 1];
      }
    if (nbp)
      qsort(s.bp, nbp, sizeof *s.bp, cmp_u64);
    uint64_t u = 0;
    for (uint64_t i = 0; i < nbp; i++)
      if (u == 0 || s.bp[u - 1] != s.bp[i])
        s.bp[u++] = s.bp[i];
    uint64_t nseg = u ? u - 1 : 0;
    bool internal = host[b] == NULL;
    for (uint64_t q = 0; q < nseg; q++)
      s.mask[q] = internal ? ~0ull : bit(RP_SPACE_HOST);
    bool ok = sim_pass(&s, a, na, u) && (!internal || sim_pass(&s, a, na, u));
    st->shared[b] = ok;
    uint64_t spaces = 0;
    for (uint32_t k = 0; k < na; k++)
      if (!a[k].copy)
        spaces |= bit(a[k].space);
    full = g->buf[b].bytes;
    if (ok) {
      void *p = internal ? own(st, full) : host[b];
      if (!p)
        goto out;
      for (unsigned sl = 0; sl < st->ns; sl++)
        st->img[b * st->ns + sl] = p;
      if ((spaces & (spaces - 1)) && !cross_edges(&s, a, na, nseg))
        goto out;
      continue;
    }
    st->img[b * st->ns] = host[b];
    for (uint32_t k = 0; k < na; k++) {
      unsigned sl = a[k].space < 0 ? 0 : 1 + (unsigned)a[k].space;
      if (sl && !st->img[b * st->ns + sl] &&
          !(st->img[b * st->ns + sl] = own(st, full)))
        goto out;
    }
  }
  /* Sort and deduplicate the extra edges. */
  if (s.nedge)
    qsort(s.edge, s.nedge, 2 * sizeof(uint32_t), cmp_edge);
  size_t ne = 0;
  for (size_t i = 0; i < s.nedge; i++)
    if (ne == 0 || s.edge[2 * ne - 2] != s.edge[2 * i] ||
        s.edge[2 * ne - 1] != s.edge[2 * i + 1]) {
      s.edge[2 * ne] = s.edge[2 * i];
      s.edge[2 * ne + 1] = s.edge[2 * i + 1];
      ne++;
    }
  *edges = s.edge;
  *nedges = ne;
  s.edge = NULL;
  rc = RP_OK;
out:
  free(cnt);
  free(all);
  free(s.iv);
  free(s.bp);
  free(s.mask);
  free(s.lastw);
  free(s.rhead);
  free(s.lwspace);
  free(s.pool);
  free(s.edge);
  return rc;
}
