/* Hazard edges and coherence state, derived while recording.
 *
 * A buffer is seen as rows of equal length (a 2-d buffer's rows, a 3-d
 * buffer's rows of rows, a 1-d buffer one row), split into bands of rows
 * where accesses begin or end. Each band keeps a sorted list of segments
 * covering a row's bytes; a segment stands for the same columns of every
 * row of its band. One such band map per (buffer, space) keeps, per
 * segment, its last writer and the readers since; one per buffer keeps
 * which spaces hold a valid copy of each byte (bit 0 the host, bit d+1
 * device d), for automatic coherence. An access (a byte range: at most
 * three rectangles; a box: one per run of rows) visits only the bands and
 * segments it overlaps, so the cost per operation depends on what it
 * touches, never on how many operations came before.
 *
 * Most buffers are accessed on a regular grid: a solver's tiles, a
 * vector's fixed pieces, a matrix's rows or blocks of rows. The hazard
 * state of a (buffer, space) is kept as an array of tiles, each a segment
 * standing for all its bytes, from its first access that does not cover
 * the whole buffer when that access tiles the buffer, for as long as every
 * access is a union of tiles: an access costs a division per side and the
 * tiles it covers, no band or segment search. A read off the grid (a
 * stencil's halo) reads every tile it touches: exact for the hazards while
 * every write covers whole tiles (a tile's writer wrote all of it, a
 * tile's writer-to-be overwrites all of it). But not for the band map,
 * so the exact state as it was then is copied into the map (a band per
 * row of tiles, a segment per tile), and the rectangles visited after it
 * are logged, to be replayed into the map (without deriving anything)
 * when the log is full. The first write off the grid turns the
 * tiles into the band map: that map, brought up to date, or else the
 * tiles themselves.
 *
 * A read of a whole buffer visits no segment: every (buffer, space) keeps
 * its whole-buffer readers apart, and the ops that wrote it since the
 * latest whole read. A writer older than that read r is an ancestor of r
 * (r read what it wrote), and r of every later writer (r read the bytes
 * they write), so when some op wrote since r the writers since r are the
 * only candidates needed; when none did, the next whole read sees what r
 * saw, and takes r's candidates. A later write finds the whole readers
 * since a segment's writer beside its own readers. A whole reader is
 * dropped once a newer whole read follows a write after it (it reaches
 * that newer reader through the write), so only the readers since the
 * latest write stay.
 *
 * Readers that are known ancestors of a segment's latest reader are
 * dropped now and then (a later writer's edge from the latest one implies
 * theirs). Candidates, one per source (record/reduce.c), are then reduced
 * exactly: one is dropped iff another candidate's path implies it. */
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "record/hazard.h"
#include "record/reduce.h"

/* A segment [lo, hi) of a row's bytes. Hazard maps use writer and the
 * readers since it (rd: nrd ops, increasing); validity maps use mask.
 * (It begins with lo, hi, as a band does: first_above.) */
typedef struct seg {
  uint64_t lo, hi;
  uint64_t mask;
  uint32_t writer;
  uint32_t nrd, caprd;
  uint32_t ncomp; /* nrd after the last pruning of rd */
  uint32_t *rd;
} seg;

/* A band of rows [lo, hi) and its segments, which cover a row. */
typedef struct band {
  uint64_t lo, hi;
  seg *s;
  uint32_t n, cap;
} band;

/* A buffer seen as rows: bands covering the rows, made on first use. */
typedef struct bmap {
  band *b;
  uint32_t n, cap;
} bmap;

/* How the hazard state of one (buffer, space) keeps its segments: the
 * band map still one band of one segment (nothing but whole-buffer
 * accesses yet); a regular grid of tiles; the band map. */
enum { M_NEW, M_GRID, M_MAP };

/* Tiles at most in a grid (40 bytes each, all made at once: a buffer cut
 * finer stays a band map, which makes its segments where accesses fall). */
enum { GRID_MAX = 4096 };

/* The hazard state of one (buffer, space). */
typedef struct hstate {
  bmap m;
  /* M_GRID: tiles of tr rows x tc bytes, ntc to a row of tiles, row-major
   * (a tile is a segment standing for all of its bytes); tsh, csh: their
   * log2 when tr, tc are powers of two, else -1. */
  seg *tile;
  uint64_t tr, tc;
  uint32_t ntile, ntc;
  int8_t tsh, csh;
  uint8_t mode;
  /* M_GRID after a read off the grid: m is the exact state as it was
   * then, and log the rectangles visited since, to replay into it (the
   * tiles say that such a reader read all of each tile it touched: exact
   * for the hazards while every write stays on the grid, not for the
   * map the grid must become at a write off it). */
  uint8_t shadow;
  struct rlog {
    uint64_t r0, r1, c0, c1;
    uint32_t op, write;
  } * log;
  uint32_t nlog, caplog;
  uint32_t *wr; /* whole-buffer readers, increasing */
  uint32_t nwr, capwr, wcomp;
  uint32_t *wl; /* ops that wrote here since the latest whole read */
  uint32_t nwl, capwl;
  uint32_t *gl; /* that read's writer candidates */
  uint32_t ngl, capgl;
  uint32_t lastw; /* the latest op that wrote here, RP_NONE */
  int wl_ok;      /* a whole read happened, and wl holds every write since */
} hstate;

typedef struct tbuf {
  hstate *sp; /* index: space + 1 */
  uint32_t nsp;
  bmap v; /* validity */
} tbuf;

struct rp__track {
  tbuf *b;
  uint32_t nb, capb;
  rp__reduce *red;
  uint32_t window, list, search; /* 0: the defaults (record/reduce.h);
                                    search: 1 + the nodes a search enters */
  int oom;
};

/* Writers kept since a whole read, at most: past it the next whole read
 * visits the segments. */
enum { WL_MAX = 1024 };

/* ---- band maps ----------------------------------------------------------- */

static void bmap_free(bmap *m) {
  for (uint32_t i = 0; i < m->n; i++) {
    for (uint32_t k = 0; k < m->b[i].n; k++)
      free(m->b[i].s[k].rd);
    free(m->b[i].s);
  }
  free(m->b);
  memset(m, 0, sizeof *m);
}

/* One band of `rows` rows, one segment `init` of `rowb` bytes. */
static int bmap_init(bmap *m, uint64_t rows, uint64_t rowb, seg init) {
  if (rp__grow((void **)&m->b, &m->cap, 1, sizeof *m->b))
    return -1;
  band *B = &m->b[0];
  memset(B, 0, sizeof *B);
  if (rp__grow((void **)&B->s, &B->cap, 1, sizeof *B->s))
    return -1;
  init.lo = 0;
  init.hi = rowb;
  B->s[0] = init;
  B->n = 1;
  B->lo = 0;
  B->hi = rows;
  m->n = 1;
  return 0;
}

/* Bands and segments both begin with [lo, hi) and lie in order: the index
 * of the first of n such items (stride bytes apart) with hi > x. */
static uint32_t first_above(const void *items, size_t stride, uint32_t n,
                            uint64_t x) {
  const char *base = items;
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    uint64_t end;
    memcpy(&end, base + (size_t)mid * stride + sizeof(uint64_t), sizeof end);
    if (end <= x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Index of the first band with hi > r. */
static uint32_t band_find(const bmap *m, uint64_t r) {
  return first_above(m->b, sizeof *m->b, m->n, r);
}

/* A copy of segment s (its readers too) into d; -1 when out of memory. */
static int seg_copy(seg *d, const seg *s) {
  *d = *s;
  d->rd = NULL;
  d->caprd = s->nrd;
  if (s->nrd) {
    if (!(d->rd = malloc(s->nrd * sizeof *d->rd)))
      return -1;
    memcpy(d->rd, s->rd, s->nrd * sizeof *d->rd);
  }
  return 0;
}

/* Makes row r a band boundary (the new band gets a copy of the segments);
 * returns 0, or -1 when out of memory. */
static int band_split(bmap *m, uint64_t r) {
  uint32_t i = band_find(m, r);
  if (i == m->n || m->b[i].lo == r)
    return 0;
  if (rp__grow((void **)&m->b, &m->cap, m->n + 1, sizeof *m->b))
    return -1;
  const band *S = &m->b[i];
  band C = {r, S->hi, malloc(S->n * sizeof *S->s), S->n, S->n};
  if (!C.s)
    return -1;
  for (uint32_t k = 0; k < S->n; k++)
    if (seg_copy(&C.s[k], &S->s[k])) {
      for (uint32_t x = 0; x < k; x++)
        free(C.s[x].rd);
      free(C.s);
      return -1;
    }
  memmove(m->b + i + 1, m->b + i, (m->n - i) * sizeof *m->b);
  m->n++;
  m->b[i].hi = r;
  m->b[i + 1] = C;
  return 0;
}

/* Index of the first segment with hi > x (segments cover the row). */
static uint32_t seg_find(const band *B, uint64_t x) {
  return first_above(B->s, sizeof *B->s, B->n, x);
}

/* Makes x a segment boundary; returns the index of the segment starting at
 * x (B->n if x is the end), or UINT32_MAX when out of memory. */
static uint32_t seg_split(band *B, uint64_t x) {
  uint32_t i = seg_find(B, x);
  if (i == B->n || B->s[i].lo == x)
    return i;
  if (rp__grow((void **)&B->s, &B->cap, B->n + 1, sizeof *B->s))
    return UINT32_MAX;
  seg c;
  if (seg_copy(&c, &B->s[i]))
    return UINT32_MAX;
  seg *s = &B->s[i];
  memmove(s + 2, s + 1, (B->n - i - 1) * sizeof *s);
  B->n++;
  s[0].hi = x;
  c.lo = x;
  s[1] = c;
  return i + 1;
}

/* Makes a and e segment boundaries; [*i0, *i1): the segments between. */
static int seg_range(band *B, uint64_t a, uint64_t e, uint32_t *i0,
                     uint32_t *i1) {
  uint32_t i = seg_split(B, a), k = seg_split(B, e);
  if (i == UINT32_MAX || k == UINT32_MAX)
    return -1;
  *i0 = i; /* the split at e comes later: nothing before it moved */
  *i1 = k;
  return 0;
}

/* Segments [i, k) of B become one, s[i] stretched over them, which loses
 * its readers. */
static seg *seg_merge(band *B, uint32_t i, uint32_t k) {
  seg *s = &B->s[i];
  for (uint32_t x = i + 1; x < k; x++)
    free(B->s[x].rd);
  s->hi = B->s[k - 1].hi;
  s->nrd = s->ncomp = 0;
  if (k > i + 1) {
    memmove(s + 1, B->s + k, (B->n - k) * sizeof *s);
    B->n -= k - i - 1;
  }
  return s;
}

/* ---- the tracking state -------------------------------------------------- */

void rp__track_free(rp_graph *g) {
  rp__track *t = g->track;
  if (!t)
    return;
  for (uint32_t i = 0; i < t->nb; i++) {
    tbuf *b = &t->b[i];
    for (uint32_t s = 0; s < b->nsp; s++) {
      hstate *h = &b->sp[s];
      bmap_free(&h->m);
      for (uint32_t k = 0; k < h->ntile; k++)
        free(h->tile[k].rd);
      free(h->tile);
      free(h->log);
      free(h->wr);
      free(h->wl);
      free(h->gl);
    }
    free(b->sp);
    bmap_free(&b->v);
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
      !(t->red = rp__reduce_new(t->window ? t->window : RP__ANC_WINDOW,
                                t->list ? t->list : RP__ANC_LIST,
                                t->search ? t->search - 1 : RP__SEARCH_MAX)))
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

/* The hazard state of (buffer, space), created on first use. */
static hstate *hstate_get(rp_graph *g, tbuf *tb, rp_buf b, int space) {
  uint32_t i = (uint32_t)(space + 1);
  if (i >= tb->nsp) {
    hstate *n = realloc(tb->sp, (i + 1) * sizeof *n);
    if (!n)
      return NULL;
    memset(n + tb->nsp, 0, (i + 1 - tb->nsp) * sizeof *n);
    for (uint32_t k = tb->nsp; k <= i; k++)
      n[k].lastw = RP_NONE;
    tb->sp = n;
    tb->nsp = i + 1;
  }
  hstate *h = &tb->sp[i];
  if (!h->m.n) {
    uint64_t rows, rowb;
    geometry(&g->buf[b], &rows, &rowb);
    seg init = {0, 0, 0, RP_NONE, 0, 0, 0, NULL};
    if (bmap_init(&h->m, rows, rowb, init))
      return NULL;
  }
  return h;
}

/* Calls fn for the bytes of region r (checked, never WHOLE) of buffer b
 * as rectangles: rows [r0, r1) x bytes [c0, c1) of each row, rows in
 * increasing order. Stops at and returns fn's first non-zero value. */
typedef int (*rect_fn)(void *ctx, uint64_t r0, uint64_t r1, uint64_t c0,
                       uint64_t c1);

static int region_rects(const rp__buffer *b, const rp_region *r, rect_fn fn,
                        void *ctx) {
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
    return fn(ctx, r->lo[0], r->hi[0], r->lo[1] * b->elem, r->hi[1] * b->elem);
  /* 3-d: rows are (i, k) pairs, i * dims[1] + k. */
  uint64_t d1 = b->dims[1], c0 = r->lo[2] * b->elem, c1 = r->hi[2] * b->elem;
  if (r->lo[1] == 0 && r->hi[1] == d1)
    return fn(ctx, r->lo[0] * d1, r->hi[0] * d1, c0, c1);
  for (uint64_t i = r->lo[0]; i < r->hi[0]; i++)
    if ((e = fn(ctx, i * d1 + r->lo[1], i * d1 + r->hi[1], c0, c1)))
      return e;
  return 0;
}

/* Does the (checked) region cover its whole buffer? */
static int region_whole(const rp__buffer *b, const rp_region *r) {
  if (r->kind != RP_REGION_BOX)
    return r->offset == 0 && r->bytes == b->bytes;
  for (unsigned i = 0; i < r->ndims; i++)
    if (r->lo[i] != 0 || r->hi[i] != b->dims[i])
      return 0;
  return 1;
}

/* ---- hazards ------------------------------------------------------------- */

struct visit {
  rp__track *t;
  const rp_graph *g;
  hstate *h;
  rp_buf buf;
  rp_node j;
  int write;
  int quiet; /* state only, no candidates (a replay) */
};

/* Drops the readers rd[0 .. n-1) that are known ancestors of the latest
 * one, rd[n-1]; returns the new count. */
static uint32_t prune_readers(const rp__reduce *red, uint32_t *rd, uint32_t n) {
  if (n < 2)
    return n;
  uint32_t last = rd[n - 1], w = 0;
  for (uint32_t r = 0; r + 1 < n; r++)
    if (!rp__reduce_known_ancestor(red, rd[r], last))
      rd[w++] = rd[r];
  rd[w++] = last;
  return w;
}

/* Appends j to the readers (*rd, *n), pruning them now and then (when
 * they doubled since the last time: constant time per reader). */
static int add_reader(const rp__reduce *red, uint32_t **rd, uint32_t *n,
                      uint32_t *cap, uint32_t *ncomp, uint32_t j) {
  if (*n >= 2 && *n >= 2 * *ncomp)
    *ncomp = *n = prune_readers(red, *rd, *n);
  if (rp__grow((void **)rd, cap, *n + 1, sizeof **rd))
    return -1;
  (*rd)[(*n)++] = j;
  return 0;
}

/* j reads segment s. */
static void seg_read(struct visit *v, seg *s) {
  if (s->writer != RP_NONE && s->writer != v->j && !v->quiet)
    rp__reduce_add(v->t->red, s->writer, RP_EDGE_RAW, 0, v->buf);
  if (s->nrd && s->rd[s->nrd - 1] == v->j)
    return;
  if (add_reader(v->t->red, &s->rd, &s->nrd, &s->caprd, &s->ncomp, v->j))
    v->t->oom = 1;
}

static void read_band(struct visit *v, band *B, uint64_t a, uint64_t e) {
  uint32_t i, k;
  if (seg_range(B, a, e, &i, &k)) {
    v->t->oom = 1;
    return;
  }
  for (; i < k && !v->t->oom; i++)
    seg_read(v, &B->s[i]);
}

/* The first whole reader of h later than op w (RP_NONE: none written). */
static uint32_t whole_since(const hstate *h, uint32_t w) {
  if (w == RP_NONE)
    return 0;
  uint32_t lo = 0, hi = h->nwr;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (h->wr[m] <= w)
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

/* The candidates of j writing segment s (its state is left as it was). */
static void seg_write(struct visit *v, const seg *s) {
  const hstate *h = v->h;
  int any = 0, self = 0;
  for (uint32_t r = 0; r < s->nrd; r++)
    if (s->rd[r] != v->j) {
      rp__reduce_add(v->t->red, s->rd[r], RP_EDGE_WAR, 0, v->buf);
      any = 1;
    } else {
      self = 1;
    }
  for (uint32_t r = whole_since(h, s->writer); r < h->nwr; r++)
    if (h->wr[r] != v->j) {
      rp__reduce_add(v->t->red, h->wr[r], RP_EDGE_WAR, 0, v->buf);
      any = 1;
    } else {
      self = 1;
    }
  if (s->writer == RP_NONE || s->writer == v->j)
    return;
  if (any) /* it wrote what they read: an ancestor of each */
    rp__reduce_implied(v->t->red, s->writer);
  else if (!self)
    rp__reduce_add(v->t->red, s->writer, RP_EDGE_WAW, 0, v->buf);
}

static void write_band(struct visit *v, band *B, uint64_t a, uint64_t e) {
  uint32_t i, k;
  if (seg_range(B, a, e, &i, &k)) {
    v->t->oom = 1;
    return;
  }
  for (uint32_t x = i; x < k && !v->quiet; x++)
    seg_write(v, &B->s[x]);
  /* Segments i .. k-1 become one, written by j, with no readers. */
  seg_merge(B, i, k)->writer = v->j;
}

/* ---- regular grids ------------------------------------------------------- */

/* log2 of d when a power of two, else -1. */
static int8_t shift_of(uint64_t d) {
  return d && !(d & (d - 1)) ? (int8_t)__builtin_ctzll(d) : -1;
}

/* x / d, and whether d divides x. */
static uint64_t grid_div(uint64_t x, uint64_t d, int8_t sh, int *exact) {
  if (sh >= 0) {
    *exact &= !(x & (d - 1));
    return x >> sh;
  }
  *exact &= !(x % d);
  return x / d;
}

/* Makes h a grid of tiles of [r0, r1) x [c0, c1) when that rectangle
 * tiles its buffer (rows x rowb) and the band map is still one segment
 * (every tile takes a copy of its state); 0, or -1 when out of memory. */
static int grid_make(hstate *h, uint64_t rows, uint64_t rowb, uint64_t r0,
                     uint64_t r1, uint64_t c0, uint64_t c1) {
  uint64_t tr = r1 - r0, tc = c1 - c0;
  if (rows % tr || rowb % tc || r0 % tr || c0 % tc || rows / tr > GRID_MAX ||
      rowb / tc > GRID_MAX || (rows / tr) * (rowb / tc) > GRID_MAX) {
    h->mode = M_MAP;
    return 0;
  }
  uint32_t n = (uint32_t)((rows / tr) * (rowb / tc));
  seg *t = malloc((size_t)n * sizeof *t);
  if (!t)
    return -1;
  for (uint32_t i = 0; i < n; i++)
    if (seg_copy(&t[i], &h->m.b[0].s[0])) {
      for (uint32_t k = 0; k < i; k++)
        free(t[k].rd);
      free(t);
      return -1;
    }
  h->tile = t;
  h->ntile = n;
  h->ntc = (uint32_t)(rowb / tc);
  h->tr = tr;
  h->tc = tc;
  h->tsh = shift_of(tr);
  h->csh = shift_of(tc);
  h->mode = M_GRID;
  return 0;
}

/* Turns h's grid into its band map (a band per row of tiles, a segment
 * per tile, which gives it its readers); 0, or -1 when out of memory. */
static int map_visit(struct visit *v, uint64_t r0, uint64_t r1, uint64_t c0,
                     uint64_t c1);

/* Brings the shadow map up to date (the log replayed into it). */
static int shadow_replay(struct visit *v) {
  hstate *h = v->h;
  struct visit q = *v;
  q.quiet = 1;
  for (uint32_t i = 0; i < h->nlog; i++) {
    const struct rlog *e = &h->log[i];
    q.j = e->op;
    q.write = (int)e->write;
    if (map_visit(&q, e->r0, e->r1, e->c0, e->c1))
      return -1;
  }
  h->nlog = 0;
  return 0;
}

/* Makes m a copy of the tiles (exact while no reader read part of one). */
static int shadow_make(hstate *h) {
  uint32_t nb = h->ntile / h->ntc;
  bmap m = {calloc(nb, sizeof *m.b), nb, nb};
  int bad = !m.b;
  for (uint32_t i = 0; !bad && i < nb; i++) {
    band *B = &m.b[i];
    if (!(B->s = calloc(h->ntc, sizeof *B->s))) {
      bad = 1;
      break;
    }
    B->lo = i * h->tr;
    B->hi = B->lo + h->tr;
    B->n = B->cap = h->ntc;
    for (uint32_t k = 0; k < h->ntc && !bad; k++) {
      bad = seg_copy(&B->s[k], &h->tile[i * h->ntc + k]);
      B->s[k].lo = k * h->tc;
      B->s[k].hi = B->s[k].lo + h->tc;
    }
  }
  if (bad) {
    bmap_free(&m);
    return -1;
  }
  bmap_free(&h->m);
  h->m = m;
  h->shadow = 1;
  h->nlog = 0;
  return 0;
}

/* Rectangles a shadow map's log holds before it is replayed (each costs
 * its replay once, whatever the batch: the bound keeps the log small). */
enum { LOG_MAX = 256 };

/* Logs a rectangle visited on a shadowed grid, replaying the log first
 * when it is full. */
static int shadow_log(struct visit *v, uint64_t r0, uint64_t r1, uint64_t c0,
                      uint64_t c1) {
  hstate *h = v->h;
  if (h->nlog >= LOG_MAX && shadow_replay(v))
    return -1;
  if (rp__grow((void **)&h->log, &h->caplog, h->nlog + 1, sizeof *h->log))
    return -1;
  h->log[h->nlog++] = (struct rlog){r0, r1, c0, c1, v->j, (uint32_t)v->write};
  return 0;
}

static void tiles_free(hstate *h) {
  for (uint32_t k = 0; k < h->ntile; k++)
    free(h->tile[k].rd);
  free(h->tile);
  h->tile = NULL;
  h->ntile = 0;
  free(h->log);
  h->log = NULL;
  h->nlog = h->caplog = 0;
  h->shadow = 0;
  h->mode = M_MAP;
}

static int grid_to_map(struct visit *v) {
  hstate *h = v->h;
  if (h->shadow) { /* the shadow map, brought up to date */
    if (shadow_replay(v))
      return -1;
    tiles_free(h);
    return 0;
  }
  uint32_t nb = h->ntile / h->ntc;
  bmap m = {calloc(nb, sizeof *m.b), nb, nb};
  if (!m.b)
    return -1;
  for (uint32_t i = 0; i < nb; i++) {
    band *B = &m.b[i];
    if (!(B->s = malloc(h->ntc * sizeof *B->s))) {
      for (uint32_t k = 0; k < i; k++)
        free(m.b[k].s);
      free(m.b);
      return -1;
    }
    B->lo = i * h->tr;
    B->hi = B->lo + h->tr;
    B->n = B->cap = h->ntc;
    for (uint32_t k = 0; k < h->ntc; k++) {
      B->s[k] = h->tile[i * h->ntc + k];
      B->s[k].lo = k * h->tc;
      B->s[k].hi = B->s[k].lo + h->tc;
    }
  }
  bmap_free(&h->m);
  h->m = m;
  free(h->tile);
  h->tile = NULL;
  h->ntile = 0;
  h->mode = M_MAP;
  return 0;
}

/* Visits [r0, r1) x [c0, c1) on h's grid: 1 done, 0 a write not a union
 * of tiles (the grid is now the band map), -1 out of memory. A read off
 * the grid reads the tiles it touches (the shadow map keeps what it
 * read exactly). */
static int grid_visit(struct visit *v, uint64_t r0, uint64_t r1, uint64_t c0,
                      uint64_t c1) {
  hstate *h = v->h;
  int exact = 1;
  uint64_t a = grid_div(r0, h->tr, h->tsh, &exact);
  uint64_t b = grid_div(r1, h->tr, h->tsh, &exact);
  uint64_t x = grid_div(c0, h->tc, h->csh, &exact);
  uint64_t y = grid_div(c1, h->tc, h->csh, &exact);
  if (!exact && v->write)
    return grid_to_map(v) ? -1 : 0;
  if (!exact) {
    b += r1 > b * h->tr; /* the tiles it touches */
    y += c1 > y * h->tc;
    if (!h->shadow && shadow_make(h))
      return -1;
  }
  if (h->shadow && shadow_log(v, r0, r1, c0, c1))
    return -1;
  for (uint64_t r = a; r < b; r++)
    for (uint64_t c = x; c < y; c++) {
      seg *s = &h->tile[r * h->ntc + c];
      if (!v->write) {
        seg_read(v, s);
        continue;
      }
      seg_write(v, s);
      s->writer = v->j;
      s->nrd = s->ncomp = 0;
    }
  return v->t->oom ? -1 : 1;
}

/* Visits rows [r0, r1) x bytes [c0, c1) of every row. */
static int visit_rect(void *ctx, uint64_t r0, uint64_t r1, uint64_t c0,
                      uint64_t c1) {
  struct visit *v = ctx;
  hstate *h = v->h;
  if (r0 >= r1 || c0 >= c1)
    return 0;
  if (h->mode == M_NEW) {
    uint64_t rows, rowb;
    geometry(&v->g->buf[v->buf], &rows, &rowb);
    /* Whole-buffer writes keep the map one segment: undecided yet. */
    if (!(r0 == 0 && r1 == rows && c0 == 0 && c1 == rowb) &&
        grid_make(h, rows, rowb, r0, r1, c0, c1))
      return -1;
  }
  if (h->mode == M_GRID) {
    int x = grid_visit(v, r0, r1, c0, c1);
    if (x)
      return x < 0 ? -1 : 0;
  }
  return map_visit(v, r0, r1, c0, c1);
}

/* Visits [r0, r1) x [c0, c1) on h's band map. */
static int map_visit(struct visit *v, uint64_t r0, uint64_t r1, uint64_t c0,
                     uint64_t c1) {
  bmap *m = &v->h->m;
  if (band_split(m, r0) || band_split(m, r1))
    return -1;
  for (uint32_t i = band_find(m, r0); i < m->n && m->b[i].lo < r1; i++)
    (v->write ? write_band : read_band)(v, &m->b[i], c0, c1);
  return v->t->oom ? -1 : 0;
}

static int gl_cmp(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Adds the writers of segments s[0 .. n) other than j to h->gl. */
static int gl_add(hstate *h, const seg *s, uint32_t n, rp_node j) {
  for (uint32_t k = 0; k < n; k++) {
    uint32_t w = s[k].writer;
    if (w == RP_NONE || w == j)
      continue;
    if (rp__grow((void **)&h->gl, &h->capgl, h->ngl + 1, sizeof *h->gl))
      return -1;
    h->gl[h->ngl++] = w;
  }
  return 0;
}

/* j reads all of (buffer, space) h: see the top of the file. */
static int whole_read(rp__track *t, hstate *h, rp_buf buf, rp_node j) {
  rp__reduce *red = t->red;
  if (!h->wl_ok) {
    h->ngl = 0;
    if (h->mode == M_GRID) {
      if (gl_add(h, h->tile, h->ntile, j))
        return -1;
    } else {
      for (uint32_t i = 0; i < h->m.n; i++)
        if (gl_add(h, h->m.b[i].s, h->m.b[i].n, j))
          return -1;
    }
    if (h->ngl > 1) {
      qsort(h->gl, h->ngl, sizeof *h->gl, gl_cmp);
      uint32_t u = 0;
      for (uint32_t i = 0; i < h->ngl; i++)
        if (!u || h->gl[u - 1] != h->gl[i])
          h->gl[u++] = h->gl[i];
      h->ngl = u;
    }
    h->wl_ok = 1;
    h->nwl = 0;
  } else if (h->nwl) {
    /* The writers since the latest whole read: theirs now. */
    uint32_t *x = h->gl, c = h->capgl;
    h->gl = h->wl;
    h->capgl = h->capwl;
    h->ngl = h->nwl;
    h->wl = x;
    h->capwl = c;
    h->nwl = 0;
  }
  for (uint32_t i = 0; i < h->ngl; i++)
    if (h->gl[i] != j)
      rp__reduce_add(red, h->gl[i], RP_EDGE_RAW, 0, buf);
  if (h->nwr && h->wr[h->nwr - 1] == j)
    return 0;
  /* Whole readers before the latest write reach j through it. */
  uint32_t keep = whole_since(h, h->lastw);
  if (keep) {
    memmove(h->wr, h->wr + keep, (h->nwr - keep) * sizeof *h->wr);
    h->nwr -= keep;
    h->wcomp = h->wcomp > keep ? h->wcomp - keep : 0;
  }
  return add_reader(red, &h->wr, &h->nwr, &h->capwr, &h->wcomp, j);
}

/* j wrote (buffer, space) h. */
static int noted_write(hstate *h, rp_node j) {
  h->lastw = j;
  if (!h->wl_ok || (h->nwl && h->wl[h->nwl - 1] == j))
    return 0;
  if (h->nwl >= WL_MAX) {
    h->wl_ok = 0;
    h->nwl = 0;
    return 0;
  }
  if (rp__grow((void **)&h->wl, &h->capwl, h->nwl + 1, sizeof *h->wl))
    return -1;
  h->wl[h->nwl++] = j;
  return 0;
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
      rp_buf b = a->region.buf;
      hstate *h = hstate_get(g, &t->b[b], b, a->space);
      struct visit v = {t, g, h, b, j, pass, 0};
      if (!h ||
          (pass == 0 && region_whole(&g->buf[b], &a->region)
               ? whole_read(t, h, b, j)
               : region_rects(&g->buf[b], &a->region, visit_rect, &v)) ||
          (pass == 1 && noted_write(h, j)))
        return rp__fail(g, RP_ENOMEM, "out of memory deriving hazards");
    }
  for (uint32_t i = 0; i < nafter; i++)
    rp__reduce_add(t->red, after[i], RP_EDGE_AFTER, 1, RP_NONE);
  if (t->oom || rp__reduce_end(g, t->red, j))
    return rp__fail(g, RP_ENOMEM, "out of memory deriving hazards");
  return RP_OK;
}

rp_status rp__hazards_settle(rp_graph *g) {
  if (g->track && rp__reduce_pending(g->track->red) &&
      rp__reduce_settle(g, g->track->red))
    return rp__fail(g, RP_ENOMEM, "out of memory deriving hazards");
  return RP_OK;
}

void rp__hazard_tune(rp_graph *g, uint32_t window, uint32_t list,
                     uint32_t search) {
  if (g && !g->track && (g->track = calloc(1, sizeof *g->track))) {
    g->track->window = window;
    g->track->list = list;
    g->track->search = search;
  }
}

uint32_t rp__hazard_window_now(const rp_graph *g) {
  return g && g->track ? rp__reduce_window(g->track->red) : 0;
}

uint32_t rp__hazard_pending(const rp_graph *g) {
  return g && g->track ? rp__reduce_pending(g->track->red) : 0;
}

void rp__hazard_window(rp_graph *g, uint32_t window) {
  rp__hazard_tune(g, window, 0, 0);
}

/* ---- coherence: which spaces hold a valid copy ------------------------ */

/* The validity map of buffer b, created on first use. */
static bmap *vmap_get(rp_graph *g, rp_buf b) {
  rp__track *t = track_get(g);
  if (!t)
    return NULL;
  bmap *m = &t->b[b].v;
  if (!m->n) {
    uint64_t rows, rowb;
    geometry(&g->buf[b], &rows, &rowb);
    seg init = {0, 0,   g->buf[b].host ? RP__HOST_BIT : 0, RP_NONE, 0, 0,
                0, NULL};
    if (bmap_init(m, rows, rowb, init))
      return NULL;
  }
  return m;
}

struct stale {
  bmap *m;
  uint64_t bit, rowb;
  rp__stale_fn fn;
  void *ctx;
};

/* Reports the stale parts of a rectangle row by row, in offset order. */
static int stale_rect(void *ctx, uint64_t r0, uint64_t r1, uint64_t c0,
                      uint64_t c1) {
  struct stale *s = ctx;
  const bmap *m = s->m;
  for (uint32_t b = band_find(m, r0); b < m->n && m->b[b].lo < r1; b++) {
    const band *V = &m->b[b];
    uint32_t first = seg_find(V, c0), k = first;
    int any = 0;
    for (; k < V->n && V->s[k].lo < c1 && !any; k++)
      any = !(V->s[k].mask & s->bit);
    if (!any)
      continue; /* valid over the whole band */
    uint64_t ra = V->lo > r0 ? V->lo : r0, rb = V->hi < r1 ? V->hi : r1;
    for (uint64_t row = ra; row < rb; row++)
      for (k = first; k < V->n && V->s[k].lo < c1; k++) {
        const seg *v = &V->s[k];
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
  bmap *m = vmap_get(g, a->region.buf);
  if (!m)
    return rp__fail(g, RP_ENOMEM, "out of memory tracking coherence");
  uint64_t rows;
  struct stale s = {m, rp__space_bit(a->space), 0, fn, ctx};
  geometry(&g->buf[a->region.buf], &rows, &s.rowb);
  region_rects(&g->buf[a->region.buf], &a->region, stale_rect, &s);
  return RP_OK;
}

struct valid {
  const bmap *m;
  uint64_t bit;
};

static int valid_rect(void *ctx, uint64_t r0, uint64_t r1, uint64_t c0,
                      uint64_t c1) {
  struct valid *x = ctx;
  const bmap *m = x->m;
  for (uint32_t b = band_find(m, r0); b < m->n && m->b[b].lo < r1; b++) {
    const band *V = &m->b[b];
    for (uint32_t k = seg_find(V, c0); k < V->n && V->s[k].lo < c1; k++)
      if (!(V->s[k].mask & x->bit))
        return 1;
  }
  return 0;
}

int rp__valid_over(rp_graph *g, rp_buf b, uint64_t lo, uint64_t hi, int space) {
  bmap *m = vmap_get(g, b);
  if (!m)
    return 0;
  struct valid x = {m, rp__space_bit(space)};
  rp_region r = rp_range_bytes(b, lo, hi > lo ? hi - lo : 0);
  return !region_rects(&g->buf[b], &r, valid_rect, &x);
}

struct vupd {
  bmap *m;
  uint64_t dst, src; /* src 0: a write (mask := dst) */
};

static int vupd_band(band *V, const struct vupd *u, uint64_t a, uint64_t e) {
  uint32_t i, k;
  if (seg_range(V, a, e, &i, &k))
    return -1;
  for (uint32_t x = i; x < k; x++) {
    seg *v = &V->s[x];
    if (!u->src)
      v->mask = u->dst;
    else if (v->mask & u->src)
      v->mask |= u->dst;
    else
      v->mask &= ~u->dst;
  }
  /* Coalesce equal neighbours around the range to keep the list short. */
  uint32_t lo = i ? i - 1 : 0, hi = k < V->n ? k : V->n - 1, w = lo;
  for (uint32_t r = lo + 1; r <= hi; r++) {
    if (V->s[r].mask == V->s[w].mask)
      V->s[w].hi = V->s[r].hi;
    else
      V->s[++w] = V->s[r];
  }
  uint32_t removed = hi - w;
  if (removed) {
    memmove(V->s + w + 1, V->s + hi + 1, (V->n - hi - 1) * sizeof *V->s);
    V->n -= removed;
  }
  return 0;
}

static int vupd_rect(void *ctx, uint64_t r0, uint64_t r1, uint64_t c0,
                     uint64_t c1) {
  struct vupd *u = ctx;
  bmap *m = u->m;
  if (band_split(m, r0) || band_split(m, r1))
    return -1;
  for (uint32_t b = band_find(m, r0); b < m->n && m->b[b].lo < r1; b++)
    if (vupd_band(&m->b[b], u, c0, c1))
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
    bmap *m = vmap_get(g, a->region.buf);
    if (!m)
      return rp__fail(g, RP_ENOMEM, "out of memory tracking coherence");
    struct vupd u = {m, rp__space_bit(a->space), 0};
    if (copy) /* the source is the op's first access */
      u.src = rp__space_bit(acc[0].space);
    if (region_rects(&g->buf[a->region.buf], &a->region, vupd_rect, &u))
      return rp__fail(g, RP_ENOMEM, "out of memory tracking coherence");
  }
  return RP_OK;
}
