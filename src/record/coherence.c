/* The coherence model: which value each memory space of a buffer holds at
 * every step of program order, over any number of replays.
 *
 * Values are versions, per segment of a buffer (the pieces between the
 * breakpoints of its accesses): the user's array starts with version 0,
 * every device image with version 1 (zeros), and each write makes a new
 * version; a copy gives its destination the version of its source. This is
 * exactly what the sequential reference replay does with one image per
 * space, so two questions about a recorded graph have exact answers:
 *
 * - the check at rp_graph_end(): does a device operation read an image
 *   that nothing wrote or copied in (version 1), and does the user's array
 *   miss the value last written on a device at the end of a replay?
 * - sharing, for the plan: if a set of spaces (a "class") were one memory,
 *   holding the last version written into any of them, would every read in
 *   a space of the class still see the version the reference sees, and
 *   would the user's array end every replay as the reference leaves it?
 *   The simulation runs replay after replay until the equality pattern of
 *   the versions at a replay's start repeats (the checks then repeat too).
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "record/coherence.h"
#include "record/graph.h"

#define V_USER 0u
#define V_ZERO 1u
#define MAX_REPLAYS 8

typedef struct bacc {
  rp_node op;
  uint8_t mode;
  uint8_t role; /* 0 kernel/host access, 1 copy source, 2 copy dest */
  int space;
  uint32_t k; /* which access of its op */
} bacc;

struct rp__coh {
  const rp_graph *g;
  uint32_t nbuf;
  uint32_t *off; /* per buffer: its accesses at a[off[b] .. off[b + 1]) */
  bacc *a;
};

void rp__coh_free(rp__coh *c) {
  if (!c)
    return;
  free(c->off);
  free(c->a);
  free(c);
}

/* The byte runs of the accesses, gathered into iv: (offset, length)
 * pairs, n of them, room for cap. */
typedef struct runs {
  uint64_t *iv;
  size_t n, cap;
  int oom;
} runs;

static void run_add(void *ctx, uint64_t off, uint64_t len) {
  runs *r = ctx;
  if (r->oom)
    return;
  if (r->n == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 64;
    uint64_t *iv = realloc(r->iv, cap * 2 * sizeof *iv);
    if (!iv) {
      r->oom = 1;
      return;
    }
    r->iv = iv;
    r->cap = cap;
  }
  r->iv[2 * r->n] = off;
  r->iv[2 * r->n + 1] = len;
  r->n++;
}

/* Appends the byte runs of access i of op n: one for a byte range, one
 * per run of rows for a box (computed here when the box is one run, as
 * rp__region_each would give it). */
static void acc_runs(const rp_graph *g, rp_node n, uint32_t i, runs *r) {
  const rp__sacc *a = g->sacc + g->op[n].acc0 + i;
  if (a->kind != RP_REGION_BOX) {
    if (a->len)
      run_add(r, a->off, a->len);
    return;
  }
  const rp__box *x = g->box + a->off;
  const rp__buffer *b = &g->buf[a->buf];
  unsigned nd = x->ndims;
  if (nd < 1 || nd > 3)
    return;
  for (unsigned d = 0; d < nd; d++)
    if (x->lo[d] >= x->hi[d])
      return;
  /* k: the outermost dimension of the contiguous run; one run when every
   * dimension outside it spans one index. */
  int k = (int)nd - 1;
  while (k > 0 && x->lo[k] == 0 && x->hi[k] == b->dims[k])
    k--;
  for (int d = 0; d < k; d++)
    if (x->hi[d] - x->lo[d] != 1) {
      rp__access acc = rp__acc_get(g, n, i);
      rp__region_each(b, &acc.region, run_add, r);
      return;
    }
  uint64_t stride = b->elem, off = 0, len = 0;
  for (int d = (int)nd - 1; d >= 0; d--) {
    off += x->lo[d] * stride;
    if (d == k)
      len = (x->hi[d] - x->lo[d]) * stride;
    stride *= b->dims[d];
  }
  run_add(r, off, len);
}

rp_status rp__coh_build(const rp_graph *g, rp__coh **out) {
  *out = NULL;
  rp__coh *c = calloc(1, sizeof *c);
  if (!c)
    return RP_ENOMEM;
  c->g = g;
  c->nbuf = g->nbuf;
  uint32_t nop = g->nop;
  c->off = calloc((size_t)c->nbuf + 2, sizeof *c->off);
  if (!c->off)
    goto nomem;
  uint64_t nacc = 0;
  for (rp_node n = 0; n < nop; n++)
    for (uint32_t k = 0; k < g->op[n].nacc; k++) {
      c->off[g->sacc[g->op[n].acc0 + k].buf + 2]++;
      nacc++;
    }
  for (uint32_t b = 0; b < c->nbuf; b++)
    c->off[b + 2] += c->off[b + 1];
  c->a = malloc((nacc ? nacc : 1) * sizeof *c->a);
  if (!c->a)
    goto nomem;
  for (rp_node n = 0; n < nop; n++) {
    const rp__op *o = &g->op[n];
    bool copy = o->type == RP_OP_COPY_H2D || o->type == RP_OP_COPY_D2H ||
                o->type == RP_OP_COPY_D2D;
    for (uint32_t k = 0; k < o->nacc; k++) {
      const rp__sacc *ai = g->sacc + o->acc0 + k;
      bacc *e = &c->a[c->off[ai->buf + 1]++];
      e->op = n;
      e->mode = ai->mode;
      e->role = copy ? (uint8_t)(k == 0 ? 1 : 2) : 0;
      e->space = ai->space;
      e->k = k;
    }
  }
  *out = c;
  return RP_OK;
nomem:
  rp__coh_free(c);
  return RP_ENOMEM;
}

/* Per-buffer simulation state. */
typedef struct vsim {
  const rp__coh *c;
  rp_buf b;
  const bacc *a;
  uint32_t na;
  uint64_t *iv; /* the accesses' byte runs, (offset, length) pairs */
  struct ivx {
    uint64_t iv0, niv;
  } * ix;       /* access k's: iv[2 iv0 ..) */
  uint64_t *bp; /* breakpoints */
  uint64_t nseg;
  uint32_t *qix; /* NULL, or qix[v >> tz]: the index of breakpoint v */
  unsigned tz;   /* trailing zeros every breakpoint has */
  int sp[RP_MAX_DEVICES + 1];      /* local slot -> space */
  int slot_of[RP_MAX_DEVICES + 1]; /* space + 1 -> local slot, -1 */
  unsigned nsl;
  uint32_t *ver;                      /* nseg * nsl */
  uint32_t *cver;                     /* nseg: the shared image's version */
  uint32_t *latest;                   /* nseg: last version written anywhere */
  rp_node *lastw;                     /* nseg: op that wrote it */
  uint64_t nzero[RP_MAX_DEVICES + 1]; /* per slot: segments at V_ZERO */
  uint32_t next;                      /* next fresh version */
  uint64_t cls; /* sharing class as local slot bits; 0: none */
  bool user;    /* buffer has a user array */
} vsim;

/* The index of breakpoint v (every run's ends are breakpoints). */
static uint64_t seg_of(const vsim *s, uint64_t v) {
  if (s->qix)
    return s->qix[v >> s->tz];
  return rp__segs_find(s->bp, s->nseg + 1, v);
}

static void vsim_free(vsim *s) {
  free(s->iv);
  free(s->ix);
  free(s->bp);
  free(s->qix);
  free(s->ver);
  free(s->cver);
  free(s->latest);
  free(s->lastw);
}

/* Segments and slots of buffer b over its first accesses (at least limit,
 * whole ops; UINT32_MAX: all); cls_spaces: bit 63 host, bit d device d. */
static rp_status vsim_init(vsim *s, const rp__coh *c, rp_buf b,
                           uint64_t cls_spaces, uint32_t limit) {
  memset(s, 0, sizeof *s);
  s->c = c;
  s->b = b;
  s->a = c->a + c->off[b];
  s->na = c->off[b + 1] - c->off[b];
  if (limit < s->na) { /* the first accesses only, whole ops */
    uint32_t n = limit;
    while (n < s->na && s->a[n].op == s->a[n - 1].op)
      n++;
    s->na = n;
  }
  rp_buffer_desc d;
  rp_buffer_info(c->g, b, &d);
  s->user = d.host != NULL;
  for (unsigned i = 0; i <= RP_MAX_DEVICES; i++)
    s->slot_of[i] = -1;
  s->slot_of[0] = 0;
  s->sp[0] = RP_SPACE_HOST;
  s->nsl = 1;
  uint64_t nbp = 0;
  if (!(s->ix = malloc((s->na ? s->na : 1) * sizeof *s->ix)))
    return RP_ENOMEM;
  runs r = {NULL, 0, 0, 0};
  for (uint32_t k = 0; k < s->na; k++) {
    int sp = s->a[k].space;
    if (s->slot_of[sp + 1] < 0) {
      s->slot_of[sp + 1] = (int)s->nsl;
      s->sp[s->nsl++] = sp;
    }
    s->ix[k].iv0 = r.n;
    acc_runs(c->g, s->a[k].op, s->a[k].k, &r);
    s->ix[k].niv = r.n - s->ix[k].iv0;
  }
  s->iv = r.iv;
  if (r.oom || (!r.iv && !(s->iv = malloc(2 * sizeof *s->iv))))
    return RP_ENOMEM;
  nbp = 2 * (uint64_t)r.n;
  for (unsigned l = 0; l < s->nsl; l++) {
    int sp = s->sp[l];
    if (cls_spaces & rp__space_bit(sp))
      s->cls |= 1ull << l;
  }
  s->bp = malloc((nbp + 1) * sizeof *s->bp);
  uint64_t *tmp = malloc((nbp + 1) * sizeof *tmp);
  if (!s->bp || !tmp) {
    free(tmp);
    return RP_ENOMEM;
  }
  uint64_t i = 0, max = 0;
  for (uint32_t k = 0; k < s->na; k++)
    for (uint64_t v = 0; v < s->ix[k].niv; v++) {
      const uint64_t *p = s->iv + 2 * (s->ix[k].iv0 + v);
      s->bp[i++] = p[0];
      s->bp[i++] = p[0] + p[1];
      if (p[0] + p[1] > max)
        max = p[0] + p[1];
    }
  uint64_t u = rp__segs_sort(s->bp, tmp, nbp, max);
  free(tmp);
  s->nseg = u ? u - 1 : 0;
  /* Breakpoints on a coarse grid (chunks, rows, tiles: multiples of a
   * power of two, few) index a table of their indices: a run's
   * segments in two loads instead of two binary searches. */
  uint64_t any = 0;
  for (uint64_t q = 0; q < u; q++)
    any |= s->bp[q];
  s->tz = any ? (unsigned)__builtin_ctzll(any) : 0;
  if (u && (s->bp[u - 1] >> s->tz) < 4 * u + 64) {
    uint64_t span = (s->bp[u - 1] >> s->tz) + 1;
    if (!(s->qix = malloc(span * sizeof *s->qix)))
      return RP_ENOMEM;
    for (uint64_t q = 0; q < u; q++)
      s->qix[s->bp[q] >> s->tz] = (uint32_t)q;
  }
  size_t ns = s->nseg ? s->nseg : 1;
  s->ver = malloc(ns * s->nsl * sizeof *s->ver);
  s->cver = malloc(ns * sizeof *s->cver);
  s->latest = malloc(ns * sizeof *s->latest);
  s->lastw = malloc(ns * sizeof *s->lastw);
  if (!s->ver || !s->cver || !s->latest || !s->lastw)
    return RP_ENOMEM;
  for (unsigned l = 0; l < s->nsl; l++)
    s->nzero[l] = (l == 0 && s->user) ? 0 : s->nseg;
  for (uint64_t q = 0; q < s->nseg; q++) {
    for (unsigned l = 0; l < s->nsl; l++)
      s->ver[q * s->nsl + l] = (l == 0 && s->user) ? V_USER : V_ZERO;
    s->cver[q] = s->user && (s->cls & 1) ? V_USER : V_ZERO;
    s->latest[q] = s->user ? V_USER : V_ZERO;
    s->lastw[q] = RP_NONE;
  }
  s->next = 2;
  return RP_OK;
}

/* What one pass found. */
typedef struct vfind {
  bool share_ok;
  /* first read of never-written device memory */
  rp_node zread_op;
  int zread_space;
  uint64_t zread_lo, zread_hi;
  /* user array missing the last device value at the end */
  uint64_t stale_lo, stale_hi, nstale;
  rp_node stale_op;
} vfind;

#define NIV(s, e) ((s)->ix[(e) - (s)->a].niv)
#define SEGS(s, e, v, q0, q1)                                                  \
  const uint64_t *v##p = (s)->iv + 2 * ((s)->ix[(e) - (s)->a].iv0 + (v));      \
  /* NOLINTNEXTLINE(bugprone-macro-parentheses): q0, q1 are declared */        \
  uint64_t q0 = seg_of((s), v##p[0]), q1 = seg_of((s), v##p[0] + v##p[1])

static void note_zero_read(vsim *s, vfind *f, const bacc *e, uint64_t q) {
  if (f->zread_op == RP_NONE) {
    f->zread_op = e->op;
    f->zread_space = e->space;
    f->zread_lo = s->bp[q];
    f->zread_hi = s->bp[q + 1];
  } else if (f->zread_op == e->op && f->zread_hi == s->bp[q]) {
    f->zread_hi = s->bp[q + 1];
  }
}

/* One replay through the buffer's accesses. */
static void vsim_pass(vsim *s, vfind *f, bool first) {
  for (uint32_t i = 0; i < s->na;) {
    uint32_t j = i;
    while (j < s->na && s->a[j].op == s->a[i].op)
      j++;
    if (s->a[i].role) {
      /* A copy: access i is its source, i + 1 its destination (same
       * region, so the same segments). */
      const bacc *src = &s->a[i], *dst = &s->a[i + 1];
      unsigned ls = (unsigned)s->slot_of[src->space + 1];
      unsigned ld = (unsigned)s->slot_of[dst->space + 1];
      bool cs = (s->cls >> ls) & 1, cd = (s->cls >> ld) & 1;
      for (uint64_t v = 0; v < NIV(s, src); v++) {
        SEGS(s, src, v, q0, q1);
        for (uint64_t q = q0; q < q1; q++) {
          uint32_t *ver = s->ver + q * s->nsl;
          if (first && src->space >= 0 && ver[ls] == V_ZERO)
            note_zero_read(s, f, src, q);
          if (cs && !cd && ver[ls] != s->cver[q])
            f->share_ok = false;
          if (cd && !cs)
            s->cver[q] = ver[ls];
          s->nzero[ld] += (ver[ls] == V_ZERO) - (ver[ld] == V_ZERO);
          ver[ld] = ver[ls];
        }
      }
      i = j;
      continue;
    }
    for (uint32_t k = i; k < j; k++) {
      const bacc *e = &s->a[k];
      if (!(e->mode & RP_IN))
        continue;
      unsigned l = (unsigned)s->slot_of[e->space + 1];
      bool in_cls = (s->cls >> l) & 1;
      /* Only a read that may share an image, or a device read that may
       * be the first of never-written memory (or extend it), looks. */
      if (!in_cls && !(first && e->space >= 0 && s->nzero[l] &&
                       (f->zread_op == RP_NONE || f->zread_op == e->op)))
        continue;
      for (uint64_t v = 0; v < NIV(s, e); v++) {
        SEGS(s, e, v, q0, q1);
        for (uint64_t q = q0; q < q1; q++) {
          uint32_t ver = s->ver[q * s->nsl + l];
          if (first && e->space >= 0 && ver == V_ZERO)
            note_zero_read(s, f, e, q);
          if (in_cls && ver != s->cver[q])
            f->share_ok = false;
        }
      }
    }
    uint32_t nv = s->next;
    bool wrote = false;
    for (uint32_t k = i; k < j; k++) {
      const bacc *e = &s->a[k];
      if (!(e->mode & RP_OUT))
        continue;
      wrote = true;
      unsigned l = (unsigned)s->slot_of[e->space + 1];
      bool in_cls = (s->cls >> l) & 1;
      for (uint64_t v = 0; v < NIV(s, e); v++) {
        SEGS(s, e, v, q0, q1);
        for (uint64_t q = q0; q < q1; q++) {
          s->nzero[l] -= s->ver[q * s->nsl + l] == V_ZERO;
          s->ver[q * s->nsl + l] = nv;
          if (in_cls)
            s->cver[q] = nv;
          s->latest[q] = nv;
          s->lastw[q] = e->op;
        }
      }
    }
    if (wrote)
      s->next++;
    i = j;
  }
  if (!s->user)
    return;
  for (uint64_t q = 0; q < s->nseg; q++) {
    const uint32_t *ver = s->ver + q * s->nsl;
    if ((s->cls & 1) && ver[0] != s->cver[q])
      f->share_ok = false;
    if (first && ver[0] != s->latest[q]) {
      if (!f->nstale++) {
        f->stale_lo = s->bp[q];
        f->stale_op = s->lastw[q];
      }
      f->stale_hi = s->bp[q + 1];
    }
  }
}

/* Equality pattern of the versions of every segment (slots, then the
 * shared image), versions renumbered by first appearance. */
static void pattern(const vsim *s, uint8_t *out) {
  unsigned w = s->nsl + 1;
  for (uint64_t q = 0; q < s->nseg; q++) {
    uint32_t seen[RP_MAX_DEVICES + 2];
    unsigned ns = 0;
    for (unsigned l = 0; l < w; l++) {
      uint32_t v = l < s->nsl ? s->ver[q * s->nsl + l] : s->cver[q];
      unsigned id = 0;
      while (id < ns && seen[id] != v)
        id++;
      if (id == ns)
        seen[ns++] = v;
      out[q * w + l] = (uint8_t)id;
    }
  }
}

rp_status rp__coh_share(const rp__coh *c, rp_buf b, uint64_t spaces, bool *ok) {
  vsim s;
  *ok = false;
  rp_status st = vsim_init(&s, c, b, spaces, UINT32_MAX);
  uint8_t *p0 = NULL, *p1 = NULL;
  size_t plen = (size_t)s.nseg * (s.nsl + 1) + 1;
  if (st == RP_OK && (!(p0 = malloc(plen)) || !(p1 = malloc(plen))))
    st = RP_ENOMEM;
  if (st != RP_OK)
    goto out;
  vfind f = {.share_ok = true, .zread_op = RP_NONE};
  pattern(&s, p0);
  for (unsigned r = 0; r < MAX_REPLAYS && f.share_ok; r++) {
    vsim_pass(&s, &f, false);
    pattern(&s, p1);
    if (!memcmp(p0, p1, plen - 1)) {
      *ok = f.share_ok;
      break;
    }
    uint8_t *t = p0;
    p0 = p1;
    p1 = t;
  }
out:
  free(p0);
  free(p1);
  vsim_free(&s);
  return st;
}

static const char *space_name(int sp, char *buf, size_t n) {
  if (sp < 0)
    snprintf(buf, n, "the host");
  else
    snprintf(buf, n, "device %d", sp);
  return buf;
}

rp_status rp__coh_check(const rp__coh *c,
                        rp_status (*warn)(void *ctx, const char *msg),
                        void *ctx) {
  const rp_graph *g = c->g;
  for (rp_buf b = 0; b < c->nbuf; b++) {
    if (c->off[b + 1] == c->off[b])
      continue;
    /* Only the host: no device read, and every write leaves the host
     * array with the latest value (a copy within the host keeps it). */
    uint32_t dev = c->off[b];
    while (dev < c->off[b + 1] && c->a[dev].space < 0)
      dev++;
    if (dev == c->off[b + 1])
      continue;
    /* Without a user array only the first read of never-written memory
     * can be found: first among a few accesses, then twice as many, and
     * so on (the versions of a prefix of the accesses are the same over
     * its coarser segments, so what it finds is what all of them find). */
    rp_buffer_desc d;
    rp_buffer_info(g, b, &d);
    uint32_t total = c->off[b + 1] - c->off[b], lim = d.host ? total : 64;
    vfind f;
    rp_status st;
    for (;; lim = lim > total / 2 ? total : 2 * lim) {
      vsim s;
      st = vsim_init(&s, c, b, 0, lim);
      if (st != RP_OK) {
        vsim_free(&s);
        return st;
      }
      f = (vfind){.share_ok = true, .zread_op = RP_NONE};
      vsim_pass(&s, &f, true);
      uint32_t done = s.na;
      vsim_free(&s);
      if (f.zread_op != RP_NONE || done == total)
        break;
    }
    char msg[512], sp[32];
    if (f.zread_op != RP_NONE) {
      rp_node_info ni;
      rp_node_info_get(g, f.zread_op, &ni);
      snprintf(msg, sizeof msg,
               "op %u \"%s\" reads bytes [%llu, %llu) of buffer \"%s\" on "
               "%s, which nothing wrote or copied there before it: the "
               "first replay reads zeros (record a copy to the device, or "
               "leave automatic coherence on)",
               f.zread_op, ni.name, (unsigned long long)f.zread_lo,
               (unsigned long long)f.zread_hi, d.name,
               space_name(f.zread_space, sp, sizeof sp));
      if ((st = warn(ctx, msg)) != RP_OK)
        return st;
    }
    if (f.nstale) {
      rp_node_info ni = {0};
      if (f.stale_op != RP_NONE) /* a failed call would set the error */
        rp_node_info_get(g, f.stale_op, &ni);
      snprintf(msg, sizeof msg,
               "buffer \"%s\": bytes [%llu, %llu)%s last written by op %u "
               "\"%s\" on %s never reach the host array, which keeps its "
               "earlier value after each replay (record "
               "rp_record_sync_host, or a copy to the host)",
               d.name, (unsigned long long)f.stale_lo,
               (unsigned long long)f.stale_hi,
               f.nstale > 1 ? " (and other pieces)" : "", f.stale_op,
               ni.name ? ni.name : "?", space_name(ni.device, sp, sizeof sp));
      if ((st = warn(ctx, msg)) != RP_OK)
        return st;
    }
  }
  return RP_OK;
}
