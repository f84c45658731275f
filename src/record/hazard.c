/* Hazard edges and coherence state, derived while recording.
 *
 * A buffer is seen as rows of equal length (a 2-d buffer's rows, a 3-d
 * buffer's rows of rows, a 1-d buffer one row), split into bands of rows
 * where accesses begin or end. For every (buffer, space) each band keeps a
 * sorted list of segments covering a row's bytes; each segment remembers
 * its last writer and the readers since, for every row of the band. An
 * access (a byte range: at most three rectangles; a box: one per run of
 * rows) visits only the bands and segments it overlaps, so the cost per
 * operation depends on what it touches, never on how many operations came
 * before. A segment's readers that are known ancestors of its latest
 * reader are dropped (a later writer's edge from the latest one implies
 * theirs). Candidates, one per source (record/reduce.c), are then reduced
 * exactly: one is dropped iff another candidate's path implies it.
 * For every buffer, bands of a second kind keep which spaces hold a valid
 * copy of each byte (bit 0 the host, bit d+1 device d), for automatic
 * coherence. */
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "record/hazard.h"
#include "record/reduce.h"

typedef struct seg {
  uint64_t lo, hi;
  uint32_t writer;
  uint32_t nrd, caprd;
  uint32_t *rd;
} seg;

typedef struct segs {
  seg *s;
  uint32_t n, cap;
} segs;

/* A band of rows [lo, hi) of a buffer seen as rows of equal length (a 2-d
 * buffer's rows, a 3-d buffer's rows of rows, a 1-d buffer is one row):
 * its segments cover a row's bytes and stand for the same columns of every
 * row of the band. A box then touches one band per run of rows instead of
 * one segment per row. */
typedef struct band {
  uint64_t lo, hi;
  segs S;
} band;

typedef struct bands {
  band *b;
  uint32_t n, cap;
} bands;

typedef struct vseg {
  uint64_t lo, hi, mask;
} vseg;

/* Validity of a band of rows [lo, hi): the same columns of every row. */
typedef struct vband {
  uint64_t lo, hi;
  vseg *v;
  uint32_t nv, capv;
} vband;

typedef struct tbuf {
  bands *sp; /* index: space + 1 */
  uint32_t nsp;
  vband *vb;
  uint32_t nvb, capvb;
} tbuf;

struct rp__track {
  tbuf *b;
  uint32_t nb, capb;
  rp__reduce *red;
  uint32_t window; /* 0: RP__ANC_WINDOW */
  int oom;
};

void rp__track_free(rp_graph *g) {
  rp__track *t = g->track;
  if (!t)
    return;
  for (uint32_t i = 0; i < t->nb; i++) {
    tbuf *b = &t->b[i];
    for (uint32_t s = 0; s < b->nsp; s++) {
      for (uint32_t r = 0; r < b->sp[s].n; r++) {
        segs *S = &b->sp[s].b[r].S;
        for (uint32_t k = 0; k < S->n; k++)
          free(S->s[k].rd);
        free(S->s);
      }
      free(b->sp[s].b);
    }
    free(b->sp);
    for (uint32_t r = 0; r < b->nvb; r++)
      free(b->vb[r].v);
    free(b->vb);
  }
  free(t->b);
  rp__reduce_free(t->red);
  free(t);
  g->track = NULL;
}

static rp__track *track_get(rp_graph *g) {
  if (!g->track && !(g->track = calloc(1, sizeof *g->track)))
    return NULL;
  rp__track *t = g->track;
  if (!t->red &&
      !(t->red = rp__reduce_new(t->window ? t->window : RP__ANC_WINDOW)))
    return NULL;
  if (t->nb < g->nbuf) {
    if (rp__grow((void **)&t->b, &t->capb, g->nbuf, sizeof *t->b))
      return NULL;
    memset(t->b + t->nb, 0, (g->nbuf - t->nb) * sizeof *t->b);
    t->nb = g->nbuf;
  }
  return t;
}

/* Rows and row length (bytes) of buffer b seen as rows. */
static void geometry(const rp__buffer *b, uint64_t *rows, uint64_t *rowb) {
  if (b->ndims == 2) {
    *rows = b->dims[0];
    *rowb = b->dims[1] * b->elem;
  } else if (b->ndims == 3) {
    *rows = b->dims[0] * b->dims[1];
    *rowb = b->dims[2] * b->elem;
  } else {
    *rows = 1;
    *rowb = b->bytes;
  }
}

/* The bands of (buffer, space), created on first use. */
static bands *bands_get(rp_graph *g, tbuf *tb, rp_buf b, int space) {
  uint32_t i = (uint32_t)(space + 1);
  if (i >= tb->nsp) {
    bands *n = realloc(tb->sp, (i + 1) * sizeof *n);
    if (!n)
      return NULL;
    memset(n + tb->nsp, 0, (i + 1 - tb->nsp) * sizeof *n);
    tb->sp = n;
    tb->nsp = i + 1;
  }
  bands *B = &tb->sp[i];
  if (!B->n) {
    uint64_t rows, rowb;
    geometry(&g->buf[b], &rows, &rowb);
    if (rp__grow((void **)&B->b, &B->cap, 1, sizeof *B->b))
      return NULL;
    segs *S = &B->b[0].S;
    memset(S, 0, sizeof *S);
    if (rp__grow((void **)&S->s, &S->cap, 1, sizeof *S->s))
      return NULL;
    S->s[0] = (seg){0, rowb, RP_NONE, 0, 0, NULL};
    S->n = 1;
    B->b[0].lo = 0;
    B->b[0].hi = rows;
    B->n = 1;
  }
  return B;
}

/* Index of the first band with hi > r. */
static uint32_t band_find(const bands *B, uint64_t r) {
  uint32_t lo = 0, hi = B->n;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (B->b[m].hi <= r)
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

/* Makes row r a band boundary (the new band gets a copy of the segments);
 * returns 0, or -1 when out of memory. */
static int band_split(bands *B, uint64_t r) {
  uint32_t i = band_find(B, r);
  if (i == B->n || B->b[i].lo == r)
    return 0;
  if (rp__grow((void **)&B->b, &B->cap, B->n + 1, sizeof *B->b))
    return -1;
  const segs *S = &B->b[i].S;
  segs C = {malloc(S->n * sizeof *S->s), S->n, S->n};
  if (!C.s)
    return -1;
  for (uint32_t k = 0; k < S->n; k++) {
    C.s[k] = S->s[k];
    C.s[k].rd = NULL;
    C.s[k].caprd = C.s[k].nrd;
    if (S->s[k].nrd) {
      if (!(C.s[k].rd = malloc(S->s[k].nrd * sizeof *C.s[k].rd))) {
        for (uint32_t x = 0; x < k; x++)
          free(C.s[x].rd);
        free(C.s);
        return -1;
      }
      memcpy(C.s[k].rd, S->s[k].rd, S->s[k].nrd * sizeof *C.s[k].rd);
    }
  }
  memmove(B->b + i + 1, B->b + i, (B->n - i) * sizeof *B->b);
  B->n++;
  B->b[i].hi = r;
  B->b[i + 1].lo = r;
  B->b[i + 1].S = C;
  return 0;
}

/* Index of the first segment with hi > x (segments cover the buffer). */
static uint32_t seg_find(const segs *S, uint64_t x) {
  uint32_t lo = 0, hi = S->n;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (S->s[m].hi <= x)
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

/* Makes x a segment boundary; returns the index of the segment starting at
 * x (S->n if x is the end), or UINT32_MAX when out of memory. */
static uint32_t seg_split(segs *S, uint64_t x) {
  uint32_t i = seg_find(S, x);
  if (i == S->n || S->s[i].lo == x)
    return i;
  if (rp__grow((void **)&S->s, &S->cap, S->n + 1, sizeof *S->s))
    return UINT32_MAX;
  seg *s = &S->s[i];
  uint32_t *rd = NULL;
  if (s->nrd) {
    if (!(rd = malloc(s->nrd * sizeof *rd)))
      return UINT32_MAX;
    memcpy(rd, s->rd, s->nrd * sizeof *rd);
  }
  memmove(s + 1, s, (S->n - i) * sizeof *s);
  S->n++;
  s[0].hi = x;
  s[1].lo = x;
  s[1].rd = rd;
  s[1].caprd = s[1].nrd;
  return i + 1;
}

struct visit {
  rp_graph *g;
  rp__track *t;
  segs *S;
  rp_buf buf;
  rp_node j;
  int write;
  bands *B;
};

static void visit_read(void *ctx, uint64_t a, uint64_t len) {
  struct visit *v = ctx;
  segs *S = v->S;
  uint32_t i = seg_split(S, a), e = seg_split(S, a + len);
  if (i == UINT32_MAX || e == UINT32_MAX) {
    v->t->oom = 1;
    return;
  }
  i = seg_find(S, a); /* the second split may have moved nothing before */
  for (; i < S->n && S->s[i].lo < a + len; i++) {
    seg *s = &S->s[i];
    if (s->writer != RP_NONE && s->writer != v->j) {
      /* A reader since the writer is a descendant of it. */
      uint32_t last = s->nrd ? s->rd[s->nrd - 1] : RP_NONE;
      if (last != RP_NONE && last != v->j)
        rp__reduce_add_via(v->t->red, s->writer, last, RP_EDGE_RAW, v->buf);
      else
        rp__reduce_add(v->t->red, s->writer, RP_EDGE_RAW, 0, v->buf);
    }
    if (s->nrd && s->rd[s->nrd - 1] == v->j)
      continue;
    /* Readers that are ancestors of the latest one need no edge to a
     * later writer: the latest one's edge implies theirs. */
    if (s->nrd > 1) {
      uint32_t last = s->rd[s->nrd - 1], w = 0;
      for (uint32_t r = 0; r + 1 < s->nrd; r++)
        if (!rp__reduce_known_ancestor(v->t->red, s->rd[r], last))
          s->rd[w++] = s->rd[r];
      s->rd[w++] = last;
      s->nrd = w;
    }
    if (rp__grow((void **)&s->rd, &s->caprd, s->nrd + 1, sizeof *s->rd)) {
      v->t->oom = 1;
      return;
    }
    s->rd[s->nrd++] = v->j;
  }
}

static void visit_write(void *ctx, uint64_t a, uint64_t len) {
  struct visit *v = ctx;
  segs *S = v->S;
  uint32_t i = seg_split(S, a), e = seg_split(S, a + len);
  if (i == UINT32_MAX || e == UINT32_MAX) {
    v->t->oom = 1;
    return;
  }
  i = seg_find(S, a);
  uint32_t k = i;
  for (; k < S->n && S->s[k].lo < a + len; k++) {
    seg *s = &S->s[k];
    int any = 0;
    for (uint32_t r = 0; r < s->nrd; r++)
      if (s->rd[r] != v->j) {
        rp__reduce_add(v->t->red, s->rd[r], RP_EDGE_WAR, 0, v->buf);
        any = 1;
      }
    if (!any && s->writer != RP_NONE && s->writer != v->j &&
        !(s->nrd && s->rd[0] == v->j))
      rp__reduce_add(v->t->red, s->writer, RP_EDGE_WAW, 0, v->buf);
  }
  /* Segments i .. k-1 become one, written by j, with no readers. */
  for (uint32_t x = i + 1; x < k; x++)
    free(S->s[x].rd);
  seg *s = &S->s[i];
  s->hi = a + len;
  s->writer = v->j;
  s->nrd = 0;
  if (k > i + 1) {
    memmove(S->s + i + 1, S->s + k, (S->n - k) * sizeof *S->s);
    S->n -= k - i - 1;
  }
}

/* Visits rows [r0, r1) x bytes [c0, c1) of every row. */
static int visit_rect(struct visit *v, bands *B, uint64_t r0, uint64_t r1,
                      uint64_t c0, uint64_t c1) {
  if (r0 >= r1 || c0 >= c1)
    return 0;
  if (band_split(B, r0) || band_split(B, r1))
    return -1;
  for (uint32_t i = band_find(B, r0); i < B->n && B->b[i].lo < r1; i++) {
    v->S = &B->b[i].S;
    (v->write ? visit_write : visit_read)(v, c0, c1 - c0);
  }
  return v->t->oom ? -1 : 0;
}

/* Calls fn for the bytes of region r (checked, never WHOLE) of buffer b
 * as rectangles: rows [r0, r1) x bytes [c0, c1) of each row, rows in
 * increasing order. Stops at and returns fn's first non-zero value. */
typedef int (*rect_fn)(void *ctx, uint64_t r0, uint64_t r1, uint64_t c0,
                       uint64_t c1);

static int region_rects(const rp__buffer *b, const rp_region *r,
                        rect_fn fn, void *ctx) {
  uint64_t rows, rowb;
  geometry(b, &rows, &rowb);
  int e;
  if (r->kind != RP_REGION_BOX) {
    uint64_t lo = r->offset, hi = r->offset + r->bytes;
    if (lo >= hi)
      return 0;
    uint64_t ra = lo / rowb, ca = lo % rowb, rb = hi / rowb, cb = hi % rowb;
    if (ra == rb)
      return fn(ctx, ra, ra + 1, ca, cb);
    if (ca) {
      if ((e = fn(ctx, ra, ra + 1, ca, rowb)))
        return e;
      ra++;
    }
    if (ra < rb && (e = fn(ctx, ra, rb, 0, rowb)))
      return e;
    return cb ? fn(ctx, rb, rb + 1, 0, cb) : 0;
  }
  for (unsigned i = 0; i < r->ndims; i++)
    if (r->lo[i] >= r->hi[i])
      return 0;
  if (r->ndims == 2)
    return fn(ctx, r->lo[0], r->hi[0], r->lo[1] * b->elem,
              r->hi[1] * b->elem);
  /* 3-d: rows are (i, k) pairs, i * dims[1] + k. */
  uint64_t d1 = b->dims[1], c0 = r->lo[2] * b->elem, c1 = r->hi[2] * b->elem;
  if (r->lo[1] == 0 && r->hi[1] == d1)
    return fn(ctx, r->lo[0] * d1, r->hi[0] * d1, c0, c1);
  for (uint64_t i = r->lo[0]; i < r->hi[0]; i++)
    if ((e = fn(ctx, i * d1 + r->lo[1], i * d1 + r->hi[1], c0, c1)))
      return e;
  return 0;
}

static int visit_rect_cb(void *ctx, uint64_t r0, uint64_t r1, uint64_t c0,
                         uint64_t c1) {
  struct visit *v = ctx;
  return visit_rect(v, v->B, r0, r1, c0, c1);
}

/* Visits the bytes of one access as rectangles of rows x row bytes. */
static int visit_region(rp_graph *g, rp__track *t, bands *B,
                        const rp__access *a, rp_node j, int write) {
  struct visit v = {g, t, NULL, a->region.buf, j, write, B};
  return region_rects(&g->buf[a->region.buf], &a->region, visit_rect_cb,
                      &v);
}

rp_status rp__hazards(rp_graph *g, rp_node j, const rp__access *acc,
                      uint32_t nacc, const rp_node *after, uint32_t nafter) {
  rp__track *t = track_get(g);
  if (!t || rp__reduce_begin(t->red, j))
    return rp__fail(g, RP_ENOMEM, "out of memory deriving hazards");
  t->oom = 0;
  /* Reads first: an op reads its inputs before it writes its outputs. */
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < nacc; i++) {
      const rp__access *a = &acc[i];
      int w = (a->mode & RP_OUT) != 0, r = (a->mode & RP_IN) != 0;
      if (pass == 0 ? !r : !w)
        continue;
      tbuf *tb = &t->b[a->region.buf];
      bands *B = bands_get(g, tb, a->region.buf, a->space);
      if (!B || visit_region(g, t, B, a, j, pass))
        return rp__fail(g, RP_ENOMEM, "out of memory deriving hazards");
    }
  for (uint32_t i = 0; i < nafter; i++)
    rp__reduce_add(t->red, after[i], RP_EDGE_AFTER, 1, RP_NONE);
  if (t->oom || rp__reduce_end(g, t->red, j))
    return rp__fail(g, RP_ENOMEM, "out of memory deriving hazards");
  return RP_OK;
}

void rp__hazard_window(rp_graph *g, uint32_t window) {
  if (g && !g->track && (g->track = calloc(1, sizeof *g->track)))
    g->track->window = window;
}

/* ---- coherence: which spaces hold a valid copy ------------------------ */

/* The validity bands of buffer b, created on first use. */
static tbuf *vbuf_get(rp_graph *g, rp_buf b) {
  rp__track *t = track_get(g);
  if (!t)
    return NULL;
  tbuf *tb = &t->b[b];
  if (!tb->nvb) {
    uint64_t rows, rowb;
    geometry(&g->buf[b], &rows, &rowb);
    if (rp__grow((void **)&tb->vb, &tb->capvb, 1, sizeof *tb->vb))
      return NULL;
    vband *V = &tb->vb[0];
    memset(V, 0, sizeof *V);
    if (rp__grow((void **)&V->v, &V->capv, 1, sizeof *V->v))
      return NULL;
    V->v[0] = (vseg){0, rowb, g->buf[b].host ? RP__HOST_BIT : 0};
    V->nv = 1;
    V->lo = 0;
    V->hi = rows;
    tb->nvb = 1;
  }
  return tb;
}

/* Index of the first band with hi > r. */
static uint32_t vband_find(const tbuf *tb, uint64_t r) {
  uint32_t lo = 0, hi = tb->nvb;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (tb->vb[m].hi <= r)
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

/* Makes row r a band boundary; 0, or -1 when out of memory. */
static int vband_split(tbuf *tb, uint64_t r) {
  uint32_t i = vband_find(tb, r);
  if (i == tb->nvb || tb->vb[i].lo == r)
    return 0;
  if (rp__grow((void **)&tb->vb, &tb->capvb, tb->nvb + 1, sizeof *tb->vb))
    return -1;
  vband *V = &tb->vb[i];
  vseg *copy = malloc(V->nv * sizeof *copy);
  if (!copy)
    return -1;
  memcpy(copy, V->v, V->nv * sizeof *copy);
  memmove(tb->vb + i + 1, tb->vb + i, (tb->nvb - i) * sizeof *tb->vb);
  tb->nvb++;
  tb->vb[i].hi = r;
  tb->vb[i + 1].lo = r;
  tb->vb[i + 1].v = copy;
  tb->vb[i + 1].capv = tb->vb[i + 1].nv;
  return 0;
}

static uint32_t vfind(const vband *V, uint64_t x) {
  uint32_t lo = 0, hi = V->nv;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (V->v[m].hi <= x)
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

static int vsplit(vband *V, uint64_t x) {
  uint32_t i = vfind(V, x);
  if (i == V->nv || V->v[i].lo == x)
    return 0;
  if (rp__grow((void **)&V->v, &V->capv, V->nv + 1, sizeof *V->v))
    return -1;
  memmove(V->v + i + 1, V->v + i, (V->nv - i) * sizeof *V->v);
  V->nv++;
  V->v[i].hi = x;
  V->v[i + 1].lo = x;
  return 0;
}

struct stale {
  tbuf *tb;
  uint64_t bit, rowb;
  rp__stale_fn fn;
  void *ctx;
};

/* Reports the stale parts of a rectangle row by row, in offset order. */
static int stale_rect(void *ctx, uint64_t r0, uint64_t r1, uint64_t c0,
                      uint64_t c1) {
  struct stale *s = ctx;
  tbuf *tb = s->tb;
  for (uint32_t b = vband_find(tb, r0); b < tb->nvb && tb->vb[b].lo < r1;
       b++) {
    const vband *V = &tb->vb[b];
    uint32_t first = vfind(V, c0), k = first;
    int any = 0;
    for (; k < V->nv && V->v[k].lo < c1 && !any; k++)
      any = !(V->v[k].mask & s->bit);
    if (!any)
      continue; /* valid over the whole band */
    uint64_t ra = V->lo > r0 ? V->lo : r0, rb = V->hi < r1 ? V->hi : r1;
    for (uint64_t row = ra; row < rb; row++)
      for (k = first; k < V->nv && V->v[k].lo < c1; k++) {
        const vseg *v = &V->v[k];
        if (v->mask & s->bit)
          continue;
        uint64_t lo = v->lo > c0 ? v->lo : c0;
        uint64_t hi = v->hi < c1 ? v->hi : c1;
        s->fn(s->ctx, row * s->rowb + lo, hi - lo, v->mask);
      }
  }
  return 0;
}

rp_status rp__stale_each(rp_graph *g, const rp__access *a, rp__stale_fn fn,
                         void *ctx) {
  tbuf *tb = vbuf_get(g, a->region.buf);
  if (!tb)
    return rp__fail(g, RP_ENOMEM, "out of memory tracking coherence");
  uint64_t rows;
  struct stale s = {tb, rp__space_bit(a->space), 0, fn, ctx};
  geometry(&g->buf[a->region.buf], &rows, &s.rowb);
  region_rects(&g->buf[a->region.buf], &a->region, stale_rect, &s);
  return RP_OK;
}

struct valid {
  tbuf *tb;
  uint64_t bit;
};

static int valid_rect(void *ctx, uint64_t r0, uint64_t r1, uint64_t c0,
                      uint64_t c1) {
  struct valid *x = ctx;
  tbuf *tb = x->tb;
  for (uint32_t b = vband_find(tb, r0); b < tb->nvb && tb->vb[b].lo < r1;
       b++) {
    const vband *V = &tb->vb[b];
    for (uint32_t k = vfind(V, c0); k < V->nv && V->v[k].lo < c1; k++)
      if (!(V->v[k].mask & x->bit))
        return 1;
  }
  return 0;
}

int rp__valid_over(rp_graph *g, rp_buf b, uint64_t lo, uint64_t hi,
                   int space) {
  tbuf *tb = vbuf_get(g, b);
  if (!tb)
    return 0;
  struct valid x = {tb, rp__space_bit(space)};
  rp_region r = rp_bytes(b, lo, hi > lo ? hi - lo : 0);
  return !region_rects(&g->buf[b], &r, valid_rect, &x);
}

struct vupd {
  tbuf *tb;
  uint64_t dst, src; /* src 0: a write (mask := dst) */
};

static int vupd_list(vband *V, const struct vupd *u, uint64_t a,
                     uint64_t len) {
  if (vsplit(V, a) || vsplit(V, a + len))
    return -1;
  uint32_t i = vfind(V, a), k = i;
  for (; k < V->nv && V->v[k].lo < a + len; k++) {
    vseg *v = &V->v[k];
    if (!u->src)
      v->mask = u->dst;
    else if (v->mask & u->src)
      v->mask |= u->dst;
    else
      v->mask &= ~u->dst;
  }
  /* Coalesce equal neighbours around the range to keep the list short. */
  uint32_t lo = i ? i - 1 : 0, hi = k < V->nv ? k : V->nv - 1, w = lo;
  for (uint32_t r = lo + 1; r <= hi; r++) {
    if (V->v[r].mask == V->v[w].mask)
      V->v[w].hi = V->v[r].hi;
    else
      V->v[++w] = V->v[r];
  }
  uint32_t removed = hi - w;
  if (removed) {
    memmove(V->v + w + 1, V->v + hi + 1, (V->nv - hi - 1) * sizeof *V->v);
    V->nv -= removed;
  }
  return 0;
}

static int vupd_rect(void *ctx, uint64_t r0, uint64_t r1, uint64_t c0,
                     uint64_t c1) {
  struct vupd *u = ctx;
  tbuf *tb = u->tb;
  if (vband_split(tb, r0) || vband_split(tb, r1))
    return -1;
  for (uint32_t b = vband_find(tb, r0); b < tb->nvb && tb->vb[b].lo < r1;
       b++)
    if (vupd_list(&tb->vb[b], u, c0, c1 - c0))
      return -1;
  return 0;
}

rp_status rp__coherence_update(rp_graph *g, const rp__op *op,
                               const rp__access *acc) {
  int copy = op->type == RP_OP_COPY_H2D || op->type == RP_OP_COPY_D2H ||
             op->type == RP_OP_COPY_D2D;
  for (uint32_t i = 0; i < op->nacc; i++) {
    const rp__access *a = &acc[i];
    if (!(a->mode & RP_OUT))
      continue;
    tbuf *tb = vbuf_get(g, a->region.buf);
    if (!tb)
      return rp__fail(g, RP_ENOMEM, "out of memory tracking coherence");
    struct vupd u = {tb, rp__space_bit(a->space), 0};
    if (copy) /* the source is the op's first access */
      u.src = rp__space_bit(acc[0].space);
    if (region_rects(&g->buf[a->region.buf], &a->region, vupd_rect, &u))
      return rp__fail(g, RP_ENOMEM, "out of memory tracking coherence");
  }
  return RP_OK;
}
