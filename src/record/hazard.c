/* Hazard edges and coherence state, derived while recording.
 *
 * For every (buffer, space) the recorder keeps a sorted list of segments
 * covering the buffer; each segment remembers its last writer and the
 * readers since. A new access visits only the segments it overlaps, so the
 * cost per operation depends on what it touches, never on how many
 * operations came before. A segment's readers that are known ancestors of
 * its latest reader are dropped (a later writer's edge from the latest one
 * implies theirs). Candidates, one per source (record/reduce.c), are then
 * reduced exactly: one is dropped iff another candidate's path implies it.
 * For every buffer a second segment list keeps
 * which spaces hold a valid copy of each byte (bit 0 the host, bit d+1
 * device d), for automatic coherence. */
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

typedef struct vseg {
  uint64_t lo, hi, mask;
} vseg;

typedef struct tbuf {
  segs *sp; /* index: space + 1 */
  uint32_t nsp;
  vseg *v;
  uint32_t nv, capv;
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
      for (uint32_t k = 0; k < b->sp[s].n; k++)
        free(b->sp[s].s[k].rd);
      free(b->sp[s].s);
    }
    free(b->sp);
    free(b->v);
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

/* The segment list of (buffer, space), created on first use. */
static segs *segs_get(rp_graph *g, tbuf *tb, rp_buf b, int space) {
  uint32_t i = (uint32_t)(space + 1);
  if (i >= tb->nsp) {
    segs *n = realloc(tb->sp, (i + 1) * sizeof *n);
    if (!n)
      return NULL;
    memset(n + tb->nsp, 0, (i + 1 - tb->nsp) * sizeof *n);
    tb->sp = n;
    tb->nsp = i + 1;
  }
  segs *S = &tb->sp[i];
  if (!S->n) {
    if (rp__grow((void **)&S->s, &S->cap, 1, sizeof *S->s))
      return NULL;
    S->s[0] = (seg){0, g->buf[b].bytes, RP_NONE, 0, 0, NULL};
    S->n = 1;
  }
  return S;
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
    if (s->writer != RP_NONE && s->writer != v->j)
      rp__reduce_add(v->t->red, s->writer, RP_EDGE_RAW, 0, v->buf);
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
      segs *S = segs_get(g, tb, a->region.buf, a->space);
      if (!S)
        return rp__fail(g, RP_ENOMEM, "out of memory deriving hazards");
      struct visit v = {g, t, S, a->region.buf, j, pass};
      rp__region_each(&g->buf[a->region.buf], &a->region,
                      pass ? visit_write : visit_read, &v);
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

static tbuf *vbuf_get(rp_graph *g, rp_buf b) {
  rp__track *t = track_get(g);
  if (!t)
    return NULL;
  tbuf *tb = &t->b[b];
  if (!tb->nv) {
    if (rp__grow((void **)&tb->v, &tb->capv, 1, sizeof *tb->v))
      return NULL;
    tb->v[0] = (vseg){0, g->buf[b].bytes, g->buf[b].host ? 1u : 0u};
    tb->nv = 1;
  }
  return tb;
}

static uint32_t vfind(const tbuf *tb, uint64_t x) {
  uint32_t lo = 0, hi = tb->nv;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (tb->v[m].hi <= x)
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

static int vsplit(tbuf *tb, uint64_t x) {
  uint32_t i = vfind(tb, x);
  if (i == tb->nv || tb->v[i].lo == x)
    return 0;
  if (rp__grow((void **)&tb->v, &tb->capv, tb->nv + 1, sizeof *tb->v))
    return -1;
  memmove(tb->v + i + 1, tb->v + i, (tb->nv - i) * sizeof *tb->v);
  tb->nv++;
  tb->v[i].hi = x;
  tb->v[i + 1].lo = x;
  return 0;
}

struct stale {
  tbuf *tb;
  uint64_t bit;
  rp__stale_fn fn;
  void *ctx;
};

static void stale_visit(void *ctx, uint64_t a, uint64_t len) {
  struct stale *s = ctx;
  tbuf *tb = s->tb;
  for (uint32_t i = vfind(tb, a); i < tb->nv && tb->v[i].lo < a + len; i++) {
    const vseg *v = &tb->v[i];
    if (v->mask & s->bit)
      continue;
    uint64_t lo = v->lo > a ? v->lo : a;
    uint64_t hi = v->hi < a + len ? v->hi : a + len;
    s->fn(s->ctx, lo, hi - lo, v->mask);
  }
}

rp_status rp__stale_each(rp_graph *g, const rp__access *a, rp__stale_fn fn,
                         void *ctx) {
  tbuf *tb = vbuf_get(g, a->region.buf);
  if (!tb)
    return rp__fail(g, RP_ENOMEM, "out of memory tracking coherence");
  struct stale s = {tb, 1ull << (a->space + 1), fn, ctx};
  rp__region_each(&g->buf[a->region.buf], &a->region, stale_visit, &s);
  return RP_OK;
}

int rp__valid_over(rp_graph *g, rp_buf b, uint64_t lo, uint64_t hi,
                   int space) {
  tbuf *tb = vbuf_get(g, b);
  if (!tb)
    return 0;
  uint64_t bit = 1ull << (space + 1);
  for (uint32_t i = vfind(tb, lo); i < tb->nv && tb->v[i].lo < hi; i++)
    if (!(tb->v[i].mask & bit))
      return 0;
  return 1;
}

struct vupd {
  tbuf *tb;
  uint64_t dst, src; /* src 0: a write (mask := dst) */
  int oom;
};

static void vupd_visit(void *ctx, uint64_t a, uint64_t len) {
  struct vupd *u = ctx;
  tbuf *tb = u->tb;
  if (vsplit(tb, a) || vsplit(tb, a + len)) {
    u->oom = 1;
    return;
  }
  uint32_t i = vfind(tb, a), k = i;
  for (; k < tb->nv && tb->v[k].lo < a + len; k++) {
    vseg *v = &tb->v[k];
    if (!u->src)
      v->mask = u->dst;
    else if (v->mask & u->src)
      v->mask |= u->dst;
    else
      v->mask &= ~u->dst;
  }
  /* Coalesce equal neighbours around the range to keep the list short. */
  uint32_t lo = i ? i - 1 : 0, hi = k < tb->nv ? k : tb->nv - 1, w = lo;
  for (uint32_t r = lo + 1; r <= hi; r++) {
    if (tb->v[r].mask == tb->v[w].mask)
      tb->v[w].hi = tb->v[r].hi;
    else
      tb->v[++w] = tb->v[r];
  }
  uint32_t removed = hi - w;
  if (removed) {
    memmove(tb->v + w + 1, tb->v + hi + 1,
            (tb->nv - hi - 1) * sizeof *tb->v);
    tb->nv -= removed;
  }
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
    struct vupd u = {tb, 1ull << (a->space + 1), 0, 0};
    if (copy) /* the source is the op's first access */
      u.src = 1ull << (acc[0].space + 1);
    rp__region_each(&g->buf[a->region.buf], &a->region, vupd_visit, &u);
    if (u.oom)
      return rp__fail(g, RP_ENOMEM, "out of memory tracking coherence");
  }
  return RP_OK;
}
