/* Exact transitive reduction of one operation's candidate edges.
 *
 * Let P be the nodes that node j conflicts with (plus its explicit "after"
 * nodes). The edge c -> j is in the transitive reduction iff c is in P and
 * reaches no other member of P (a longer path c -> ... -> x -> j ends with
 * an edge from some x in P). The hazard tracker (record/hazard.c) gives a
 * candidate set C, a subset of P that holds every member of P reaching no
 * other member. Every member of P reaches such a maximal member, so for c
 * in C: c reaches another member of P iff c reaches another candidate.
 * That is what is decided, for each candidate, in any order:
 *  - inside the ancestor window: every node u has a bitset of its
 *    ancestors among the W - 1 nodes before it, built from the bitsets of
 *    its candidates (all of them are its ancestors, and an ancestor x of u
 *    inside the window is a candidate of u or lies inside the window of
 *    one: the last node before u on a path from x is in P, and the one of
 *    P reaching it maximal is a candidate). The union of the bitsets of the
 *    candidates inside j's window decides each of them exactly: another
 *    candidate that c reaches is later, so inside the window too;
 *  - a candidate c known to be an ancestor of a node x of the window
 *    (rp__reduce_add_via) is implied when x is in j's window bitset: x is
 *    then an ancestor of another candidate (or one), and so is c;
 *  - for an older candidate c: if its level is not below the highest
 *    candidate level it reaches none. Else sound shortcuts: a descendant
 *    of c found by an earlier search, or a chain of known descendants (the
 *    latest node that had c as a candidate, and so on), that is another
 *    candidate, a node of j's window bitset (an ancestor of a candidate)
 *    or a node on an earlier successful search path; or, among a few
 *    candidates, a later one that c conflicts with directly (same bytes
 *    of one space, one of them written);
 *  - else an exhaustive forward search from c over the stored edges (whose
 *    closure is the closure of all hazards; every node keeps the list of
 *    its stored out-edges while recording), latest successors first. It
 *    succeeds at a node of the kinds above. It does not enter a node
 *    inside j's window that the bitset does not hold (exactly known not to
 *    lead to a candidate), nor one whose level is not below the highest
 *    candidate level, nor one later than the latest candidate (paths go
 *    forward). A node searched to the end without success stays
 *    "no" for the other candidates of j (the target set is the same);
 *    when a search succeeds the nodes on its path are marked "yes".
 * No budget anywhere: the result is always the exact reduction. */
#include <stdlib.h>
#include <string.h>
#include "record/reduce.h"

enum { RP__INLINE_OUT = 3 };

struct rp__reduce {
  uint32_t W, WW;   /* window (nodes) and words per bitset */
  uint64_t *ring;   /* W bitsets; node u's at (u % W) * WW */
  uint32_t cap;     /* nodes in nd */
  /* Per node, split by use: what a search reads for every node it meets
   * (32 bytes, its first out-edges inline: following a linked list of
   * out-edges cost a cache miss per edge), then the rest. */
  struct node {
    uint32_t level; /* longest path from a source, in edges */
    uint32_t cst;   /* == cur: a candidate of the current node */
    uint32_t mark;  /* 2 cur: searched (or on the search path), no;
                       2 cur + 1: reaches a candidate (successful path) */
    uint32_t ohead; /* latest out-edge past the inline ones (in oe), NONE */
    uint32_t out[RP__INLINE_OUT]; /* the first out-edges' targets */
    uint32_t nout;  /* how many of out[] are set */
  } *nd;
  struct cold {
    uint32_t succ;  /* latest node that had this one as a candidate */
    uint32_t via;   /* a descendant found by an earlier search, or NONE */
    uint32_t cix;   /* its index in c, while a candidate */
  } *cd;
  struct oedge {    /* per stored edge past a node's inline ones, by
                       index in g->edge */
    uint32_t to, next; /* next: the source's next older out-edge */
  } *oe;
  uint32_t capoe;
  uint32_t cur, now; /* now: the node begun last */
  uint32_t maxc;     /* the latest candidate of the current node */
  rp__cand *c;
  uint32_t nc, capc;
  struct proxy { rp__cand c; uint32_t via; } *px; /* see rp__reduce_add_via */
  uint32_t npx, cappx;
  /* Search stack: node, next out-edge in oe, then inline ones left. */
  struct fwd { uint32_t u, e, i; } *st;
  uint32_t capst;
  int oom;
};

rp__reduce *rp__reduce_new(uint32_t window) {
  if (window < 64 || (window & (window - 1)))
    return NULL;
  rp__reduce *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->W = window;
  r->WW = window / 64;
  if (!(r->ring = calloc((size_t)window * r->WW, sizeof *r->ring))) {
    free(r);
    return NULL;
  }
  return r;
}

void rp__reduce_free(rp__reduce *r) {
  if (!r)
    return;
  free(r->ring);
  free(r->nd);
  free(r->cd);
  free(r->oe);
  free(r->c);
  free(r->px);
  free(r->st);
  free(r);
}

static int grow_nodes(rp__reduce *r, uint32_t n) {
  if (n <= r->cap)
    return 0;
  uint64_t c = r->cap ? r->cap : 1024;
  while (c < n)
    c *= 2;
  if (c > UINT32_MAX)
    c = UINT32_MAX;
  struct node *q = realloc(r->nd, (size_t)c * sizeof *q);
  if (!q)
    return -1;
  r->nd = q;
  struct cold *d = realloc(r->cd, (size_t)c * sizeof *d);
  if (!d)
    return -1;
  r->cd = d;
  for (uint32_t i = r->cap; i < c; i++) {
    q[i] = (struct node){0, 0, 0, RP_NONE, {0}, 0};
    d[i] = (struct cold){RP_NONE, RP_NONE, 0};
  }
  r->cap = (uint32_t)c;
  return 0;
}

int rp__reduce_begin(rp__reduce *r, uint32_t j) {
  if (grow_nodes(r, j + 1))
    return -1;
  if (++r->cur >= 1u << 31) { /* stamps (2 cur + 1 too) wrapped */
    for (uint32_t i = 0; i < r->cap; i++)
      r->nd[i].cst = r->nd[i].mark = 0;
    r->cur = 1;
  }
  r->nc = 0;
  r->npx = 0;
  r->oom = 0;
  r->now = j;
  memset(r->ring + (size_t)(j & (r->W - 1)) * r->WW, 0,
         r->WW * sizeof *r->ring);
  return 0;
}

void rp__reduce_add(rp__reduce *r, uint32_t from, int kind, int keep,
                    uint32_t buf) {
  if (r->nd[from].cst == r->cur) {
    rp__cand *c = &r->c[r->cd[from].cix];
    int better = keep != c->keep ? keep > c->keep
                 : kind != c->kind ? kind < c->kind
                                   : buf < c->buf;
    if (better)
      *c = (rp__cand){from, (uint8_t)kind, (uint8_t)keep, buf};
    return;
  }
  if (rp__grow((void **)&r->c, &r->capc, r->nc + 1, sizeof *r->c)) {
    r->oom = 1;
    return;
  }
  r->nd[from].cst = r->cur;
  r->cd[from].cix = r->nc;
  r->c[r->nc++] = (rp__cand){from, (uint8_t)kind, (uint8_t)keep, buf};
}

void rp__reduce_add_via(rp__reduce *r, uint32_t from, uint32_t via, int kind,
                        uint32_t buf) {
  if (r->now - from < r->W || r->now - via >= r->W) {
    rp__reduce_add(r, from, kind, 0, buf); /* no use */
    return;
  }
  if (rp__grow((void **)&r->px, &r->cappx, r->npx + 1, sizeof *r->px)) {
    r->oom = 1;
    return;
  }
  r->px[r->npx++] = (struct proxy){{from, (uint8_t)kind, 0, buf}, via};
}

/* ---- bitsets over the ring ---------------------------------------------- */

static uint64_t *anc_of(const rp__reduce *r, uint32_t u) {
  return r->ring + (size_t)(u & (r->W - 1)) * r->WW;
}

static int bit_get(const rp__reduce *r, const uint64_t *a, uint32_t x) {
  uint32_t p = x & (r->W - 1);
  return (int)((a[p >> 6] >> (p & 63)) & 1);
}

static void bit_set(const rp__reduce *r, uint64_t *a, uint32_t x) {
  uint32_t p = x & (r->W - 1);
  a[p >> 6] |= 1ull << (p & 63);
}

/* d |= s over ring positions [lo, lo + n), lo + n <= W. */
static void or_lin(uint64_t *d, const uint64_t *s, uint32_t lo, uint32_t n) {
  if (!n)
    return;
  uint32_t hi = lo + n, w0 = lo >> 6, w1 = (hi - 1) >> 6;
  for (uint32_t w = w0; w <= w1; w++) {
    uint64_t m = ~0ull;
    if (w == w0)
      m &= ~0ull << (lo & 63);
    if (w == w1 && (hi & 63))
      m &= ~0ull >> (64 - (hi & 63));
    d[w] |= s[w] & m;
  }
}

/* Adds m's window ancestors to the bitset of j (m in j's window):
 * m's bitset covers m-W+1 .. m-1, of which j-W+1 .. m-1 are in j's window:
 * W - 1 - (j - m) ring positions starting at that of j + 1. */
static void or_ancestors(rp__reduce *r, uint64_t *dst, uint32_t m,
                         uint32_t j) {
  uint32_t W = r->W, len = W - 1 - (j - m), start = (j + 1) & (W - 1);
  const uint64_t *src = anc_of(r, m);
  uint32_t n1 = W - start < len ? W - start : len;
  or_lin(dst, src, start, n1);
  or_lin(dst, src, 0, len - n1);
}

int rp__reduce_known_ancestor(const rp__reduce *r, uint32_t x, uint32_t u) {
  /* u's bitset stays in the ring while u is among the last W nodes begun. */
  return x < u && u < r->now && r->now - u < r->W && u - x < r->W &&
         bit_get(r, anc_of(r, u), x);
}

/* ---- deciding the candidates ------------------------------------------- */

/* Is x (a descendant of the candidate being decided) known to be another
 * candidate or an ancestor of one? Then the candidate reaches another
 * member of P and its edge is implied. */
static int known_implying(const rp__reduce *r, uint32_t j, uint32_t x,
                          const uint64_t *aj) {
  uint32_t cur = r->cur;
  return r->nd[x].cst == cur || r->nd[x].mark == 2 * cur + 1 ||
         (j - x < r->W && bit_get(r, aj, x));
}

/* Exhaustive forward search from c; 1 if it meets another candidate or
 * an ancestor of one, 0 if not, -1 when out of memory. */
static int search(const rp_graph *g, rp__reduce *r, uint32_t j, uint32_t c,
                  const uint64_t *aj, uint32_t maxlev) {
  uint32_t sp = 0, cur = r->cur, W = r->W, maxc = r->maxc;
  struct node *nd = r->nd;
  (void)g;
  if (rp__grow((void **)&r->st, &r->capst, 1, sizeof *r->st))
    return -1;
  nd[c].mark = 2 * cur;
  r->st[sp++] = (struct fwd){c, nd[c].ohead, nd[c].nout};
  while (sp) {
    struct fwd *top = &r->st[sp - 1];
    uint32_t x;
    if (top->e != RP_NONE) { /* latest out-edges first */
      x = r->oe[top->e].to;
      top->e = r->oe[top->e].next;
    } else if (top->i) {
      x = nd[top->u].out[--top->i];
    } else {
      sp--; /* searched: no */
      continue;
    }
    /* Later than every candidate: neither one nor an ancestor of one
     * (paths go forward). Inside j's window: the bitset knows exactly
     * (a node of the window reaching a candidate reaches one of the
     * window, whose ancestors the bitset holds). Neither needs x's
     * state. */
    if (x > maxc)
      continue;
    int hit;
    if (j - x < W) {
      if (!bit_get(r, aj, x))
        continue;
      hit = 1;
    } else {
      hit = nd[x].cst == cur || nd[x].mark == 2 * cur + 1;
    }
    if (hit) {
      for (uint32_t i = 0; i < sp; i++)
        nd[r->st[i].u].mark = 2 * cur + 1;
      r->cd[c].via = x;
      return 1;
    }
    if (nd[x].mark == 2 * cur || nd[x].level >= maxlev)
      continue;
    nd[x].mark = 2 * cur;
    if (rp__grow((void **)&r->st, &r->capst, sp + 1, sizeof *r->st))
      return -1;
    r->st[sp++] = (struct fwd){x, nd[x].ohead, nd[x].nout};
  }
  return 0;
}

/* Is far candidate c (outside j's window) an ancestor of another
 * candidate? maxlev: the highest level of a candidate. */
/* Do two stored accesses overlap? Byte ranges and boxes of one rank are
 * compared; anything else answers "not known" (0). */
static int overlap(const rp_graph *g, const rp__sacc *x, const rp__sacc *y) {
  if (x->buf != y->buf || x->space != y->space || x->kind != y->kind)
    return 0;
  if (x->kind == RP_REGION_BYTES)
    return x->off < y->off + y->len && y->off < x->off + x->len;
  if (x->kind != RP_REGION_BOX)
    return 0;
  const rp__box *p = &g->box[x->off], *q = &g->box[y->off];
  if (p->ndims != q->ndims)
    return 0;
  for (unsigned d = 0; d < p->ndims && d < 3; d++)
    if (!(p->lo[d] < q->hi[d] && q->lo[d] < p->hi[d]))
      return 0;
  return 1;
}

/* Does op c (earlier) conflict directly with op y: one access of each on
 * the same bytes of one space, one of them a write? Then c -> y is a
 * hazard. 0 also means "not known". */
static int conflicts(const rp_graph *g, uint32_t c, uint32_t y) {
  const rp__sacc *ac = g->sacc + g->op[c].acc0, *ay = g->sacc + g->op[y].acc0;
  for (uint32_t i = 0; i < g->op[c].nacc; i++)
    for (uint32_t k = 0; k < g->op[y].nacc; k++)
      if (((ac[i].mode | ay[k].mode) & RP_OUT) &&
          overlap(g, &ac[i], &ay[k]))
        return 1;
  return 0;
}

static int far_reached(const rp_graph *g, rp__reduce *r, uint32_t j,
                       uint32_t c, const uint64_t *aj, uint32_t maxlev) {
  /* An ancestor has a lower level than its descendants. */
  if (r->nd[c].level >= maxlev)
    return 0;
  /* The descendant an earlier search found; then a chain of descendants
   * (shortcuts only, so the chain's length is bounded). */
  uint32_t x = r->cd[c].via;
  if (x != RP_NONE && x < j && known_implying(r, j, x, aj))
    return 1;
  uint32_t steps = 0;
  for (x = r->cd[c].succ; x != RP_NONE && x <= r->maxc && steps < 64;
       x = r->cd[x].succ, steps++)
    if (known_implying(r, j, x, aj)) {
      r->cd[c].via = x;
      return 1;
    }
  /* A later candidate that c conflicts with directly (when few). */
  for (uint32_t i = 0; r->nc <= 8 && i < r->nc; i++) {
    uint32_t y = r->c[i].from;
    if (y > c && conflicts(g, c, y)) {
      r->cd[c].via = y;
      return 1;
    }
  }
  return search(g, r, j, c, aj, maxlev);
}

static int edge_from_cmp(const void *a, const void *b) {
  uint32_t x = ((const rp_edge *)a)->from, y = ((const rp_edge *)b)->from;
  return x < y ? -1 : x > y;
}

int rp__reduce_end(rp_graph *g, rp__reduce *r, uint32_t j) {
  if (r->oom)
    return -1;
  uint32_t n = r->nc, W = r->W, maxlev = 0, e0 = g->nedge;
  r->maxc = 0;
  if (rp__grow((void **)&g->edge, &g->capedge, g->nedge + n,
               sizeof *g->edge) ||
      rp__grow((void **)&r->oe, &r->capoe, g->nedge + n, sizeof *r->oe))
    return -1;
  /* j's window bitset: first the ancestors of every candidate inside the
   * window, which decide those candidates; then the candidates too. */
  uint64_t *aj = anc_of(r, j);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t f = r->c[i].from;
    if (r->nd[f].level > maxlev)
      maxlev = r->nd[f].level;
    if (f > r->maxc)
      r->maxc = f;
    if (j - f < W)
      or_ancestors(r, aj, f, j);
  }
  for (uint32_t i = 0; i < n; i++) {
    const rp__cand *c = &r->c[i];
    uint32_t f = c->from;
    if (j - f < W && (c->keep || !bit_get(r, aj, f)))
      g->edge[g->nedge++] = (rp_edge){f, j, (rp_edge_kind)c->kind, c->buf};
  }
  for (uint32_t i = 0; i < n; i++)
    if (j - r->c[i].from < W)
      bit_set(r, aj, r->c[i].from);
  /* Candidates behind a node of the window: implied when that node is an
   * ancestor of a candidate (or one); else candidates like the others. */
  for (uint32_t i = 0; i < r->npx; i++) {
    const struct proxy *p = &r->px[i];
    if (!bit_get(r, aj, p->via)) {
      rp__reduce_add(r, p->c.from, p->c.kind, 0, p->c.buf);
      if (r->nd[p->c.from].level > maxlev)
        maxlev = r->nd[p->c.from].level;
      if (p->c.from > r->maxc)
        r->maxc = p->c.from;
    }
  }
  if (r->oom || rp__grow((void **)&g->edge, &g->capedge, g->nedge + r->nc,
                         sizeof *g->edge) ||
      rp__grow((void **)&r->oe, &r->capoe, g->nedge + r->nc, sizeof *r->oe))
    return -1;
  n = r->nc;
  /* Then the older candidates. */
  for (uint32_t i = 0; i < n; i++) {
    const rp__cand *c = &r->c[i];
    uint32_t f = c->from;
    if (j - f < W)
      continue;
    int reached = far_reached(g, r, j, f, aj, maxlev);
    if (reached < 0)
      return -1;
    if (c->keep || !reached)
      g->edge[g->nedge++] = (rp_edge){f, j, (rp_edge_kind)c->kind, c->buf};
  }
  r->nd[j].level = n ? maxlev + 1 : 0;
  for (uint32_t i = 0; i < n; i++)
    r->cd[r->c[i].from].succ = j;
  /* Sources increasing, as the CSR will have them. */
  rp_edge *ej = g->edge + e0;
  uint32_t m = g->nedge - e0;
  if (m > 16) {
    qsort(ej, m, sizeof *ej, edge_from_cmp);
  } else {
    for (uint32_t a = 1; a < m; a++) {
      rp_edge t = ej[a];
      uint32_t b = a;
      for (; b > 0 && ej[b - 1].from > t.from; b--)
        ej[b] = ej[b - 1];
      ej[b] = t;
    }
  }
  for (uint32_t e = e0; e < g->nedge; e++) {
    uint32_t f = g->edge[e].from;
    struct node *nf = &r->nd[f];
    if (nf->nout < RP__INLINE_OUT) {
      nf->out[nf->nout++] = j;
    } else {
      r->oe[e] = (struct oedge){j, nf->ohead};
      nf->ohead = e;
    }
  }
  return 0;
}
