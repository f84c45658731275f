/* Exact transitive reduction of one operation's candidate edges.
 *
 * Let P be the nodes that node j conflicts with (plus its explicit "after"
 * nodes). The edge c -> j is in the transitive reduction iff c is in P and
 * reaches no other member of P (a longer path c -> ... -> x -> j ends with
 * an edge from some x in P). The hazard tracker (record/hazard.c) gives a
 * candidate set C, a subset of P that holds every member of P reaching no
 * other member. Every member of P reaches such a maximal member, so for c
 * in C: c reaches another member of P iff c reaches a kept candidate.
 * Candidates are therefore decided latest first: c is kept iff it is not
 * an ancestor of a candidate kept before it (every kept one is later).
 *
 * Whether c is such an ancestor is answered, in this order:
 *  - inside the ancestor window: every node u has a bitset of its
 *    ancestors among the W - 1 nodes before it, built from the bitsets of
 *    its stored predecessors (exact: an ancestor x of u inside the window
 *    is a stored predecessor of u or lies inside the window of one). The
 *    union of the kept candidates' bitsets decides every candidate inside
 *    j's window exactly, since all kept ones are later and so inside too;
 *  - for an older candidate, first two sound shortcuts: the bitset of a
 *    kept candidate whose window covers c; a chain of known descendants
 *    (the latest node that had c as a candidate, and so on) that meets an
 *    ancestor of a kept candidate inside j's window;
 *  - else an exhaustive backward exploration from the kept candidates, in
 *    decreasing node order, over the stored edges (whose closure is the
 *    closure of all hazards). Nodes older than the oldest candidate, or of
 *    a lower level than every undecided candidate, cannot lead to one and
 *    are not expanded. When c is decided every ancestor of a kept
 *    candidate later than c has been expanded, so c is marked iff it is an
 *    ancestor. No budget: the result is always the exact reduction. */
#include <stdlib.h>
#include <string.h>
#include "record/reduce.h"

struct rp__reduce {
  uint32_t W, WW;   /* window (nodes) and words per bitset */
  uint64_t *ring;   /* W bitsets; node u's at (u % W) * WW */
  uint32_t cap;     /* per-node arrays below */
  uint32_t *level;  /* longest path from a source, in edges */
  uint32_t *succ;   /* latest node that had this one as a candidate */
  uint32_t *cst;    /* == cur: a candidate of the current node */
  uint32_t *cix;    /* its index in c */
  uint32_t *mark;   /* == cur: an ancestor of a kept candidate */
  uint32_t cur, now; /* now: the node begun last */
  rp__cand *c;
  uint32_t nc, capc;
  uint32_t *kept, nkept, capkept;
  uint32_t *heap, nheap, capheap;
  uint32_t *minlev, capminlev;
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
  free(r->level);
  free(r->succ);
  free(r->cst);
  free(r->cix);
  free(r->mark);
  free(r->c);
  free(r->kept);
  free(r->heap);
  free(r->minlev);
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
  uint32_t **arr[] = {&r->level, &r->succ, &r->cst, &r->cix, &r->mark};
  for (unsigned i = 0; i < sizeof arr / sizeof *arr; i++) {
    uint32_t *q = realloc(*arr[i], (size_t)c * sizeof *q);
    if (!q)
      return -1;
    /* succ starts as RP_NONE; stamps and the rest as 0 */
    memset(q + r->cap, i == 1 ? 0xff : 0, (size_t)(c - r->cap) * sizeof *q);
    *arr[i] = q;
  }
  r->cap = (uint32_t)c;
  return 0;
}

int rp__reduce_begin(rp__reduce *r, uint32_t j) {
  if (grow_nodes(r, j + 1))
    return -1;
  if (++r->cur == 0) { /* stamps wrapped: forget them all */
    memset(r->cst, 0, (size_t)r->cap * sizeof *r->cst);
    memset(r->mark, 0, (size_t)r->cap * sizeof *r->mark);
    r->cur = 1;
  }
  r->nc = 0;
  r->oom = 0;
  r->now = j;
  memset(r->ring + (size_t)(j & (r->W - 1)) * r->WW, 0,
         r->WW * sizeof *r->ring);
  return 0;
}

void rp__reduce_add(rp__reduce *r, uint32_t from, int kind, int keep,
                    uint32_t buf) {
  if (r->cst[from] == r->cur) {
    rp__cand *c = &r->c[r->cix[from]];
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
  r->cst[from] = r->cur;
  r->cix[from] = r->nc;
  r->c[r->nc++] = (rp__cand){from, (uint8_t)kind, (uint8_t)keep, buf};
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

/* Adds m's window ancestors, and m, to the bitset of j (m in j's window):
 * m's bitset covers m-W+1 .. m-1, of which j-W+1 .. m-1 are in j's window:
 * W - 1 - (j - m) ring positions starting at that of j + 1. */
static void or_into(rp__reduce *r, uint64_t *dst, uint32_t m, uint32_t j) {
  uint32_t W = r->W, len = W - 1 - (j - m), start = (j + 1) & (W - 1);
  const uint64_t *src = anc_of(r, m);
  uint32_t n1 = W - start < len ? W - start : len;
  or_lin(dst, src, start, n1);
  or_lin(dst, src, 0, len - n1);
  bit_set(r, dst, m);
}

int rp__reduce_known_ancestor(const rp__reduce *r, uint32_t x, uint32_t u) {
  /* u's bitset stays in the ring while u is among the last W nodes begun. */
  return x < u && u < r->now && r->now - u < r->W && u - x < r->W &&
         bit_get(r, anc_of(r, u), x);
}

/* ---- the exhaustive exploration ----------------------------------------- */

static int heap_push(rp__reduce *r, uint32_t u) {
  if (rp__grow((void **)&r->heap, &r->capheap, r->nheap + 1,
               sizeof *r->heap))
    return -1;
  uint32_t i = r->nheap++;
  while (i && r->heap[(i - 1) / 2] < u) {
    r->heap[i] = r->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  r->heap[i] = u;
  return 0;
}

static uint32_t heap_pop(rp__reduce *r) {
  uint32_t top = r->heap[0], last = r->heap[--r->nheap], i = 0;
  for (;;) {
    uint32_t k = 2 * i + 1;
    if (k >= r->nheap)
      break;
    if (k + 1 < r->nheap && r->heap[k + 1] > r->heap[k])
      k++;
    if (r->heap[k] <= last)
      break;
    r->heap[i] = r->heap[k];
    i = k;
  }
  if (r->nheap)
    r->heap[i] = last;
  return top;
}

/* Marks node u as an ancestor of a kept candidate (or one itself) and
 * queues it for expansion. */
static int explore_add(rp__reduce *r, uint32_t u) {
  if (r->mark[u] == r->cur)
    return 0;
  r->mark[u] = r->cur;
  return heap_push(r, u);
}

/* Expands every queued node above c; nodes below lo or of a level below
 * minlev are not queued. */
static int explore_down_to(const rp_graph *g, rp__reduce *r, uint32_t c,
                           uint32_t lo, uint32_t minlev) {
  while (r->nheap && r->heap[0] > c) {
    uint32_t u = heap_pop(r);
    for (uint32_t e = g->pred_off[u]; e < g->pred_off[u + 1]; e++) {
      uint32_t p = g->edge[e].from;
      if (p < lo || r->level[p] < minlev || r->mark[p] == r->cur)
        continue;
      if (explore_add(r, p))
        return -1;
    }
  }
  return 0;
}

/* ---- deciding the candidates ------------------------------------------- */

static int cand_desc(const void *a, const void *b) {
  uint32_t x = ((const rp__cand *)a)->from, y = ((const rp__cand *)b)->from;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Is far candidate c (outside j's window) an ancestor of a kept one? */
static int far_reached(const rp_graph *g, rp__reduce *r, uint32_t j,
                       uint32_t c, const uint64_t *aj, int *exploring,
                       uint32_t lo, uint32_t minlev) {
  uint32_t W = r->W;
  for (uint32_t i = 0; i < r->nkept; i++) {
    uint32_t m = r->kept[i];
    if (j - m < W && m - c < W && bit_get(r, anc_of(r, m), c))
      return 1;
  }
  /* A chain of descendants of c reaching into j's window (a shortcut
   * only, so its length is bounded). */
  uint32_t steps = 0;
  for (uint32_t x = r->succ[c]; x != RP_NONE && x < j && steps < 64;
       x = r->succ[x], steps++)
    if (j - x < W && bit_get(r, aj, x))
      return 1;
  if (!*exploring) {
    *exploring = 1;
    r->nheap = 0;
    for (uint32_t i = 0; i < r->nkept; i++)
      if (explore_add(r, r->kept[i]))
        return -1;
  }
  if (explore_down_to(g, r, c, lo, minlev))
    return -1;
  return r->mark[c] == r->cur;
}

int rp__reduce_end(rp_graph *g, rp__reduce *r, uint32_t j) {
  if (r->oom)
    return -1;
  uint32_t n = r->nc, W = r->W;
  if (n > 1)
    qsort(r->c, n, sizeof *r->c, cand_desc);
  if (rp__grow((void **)&g->edge, &g->capedge, g->nedge + n,
               sizeof *g->edge) ||
      rp__grow((void **)&r->kept, &r->capkept, n, sizeof *r->kept) ||
      rp__grow((void **)&r->minlev, &r->capminlev, n + 1,
               sizeof *r->minlev))
    return -1;
  /* minlev[i]: the lowest level among candidates i .. n-1. */
  r->minlev[n] = UINT32_MAX;
  for (uint32_t i = n; i-- > 0;) {
    uint32_t l = r->level[r->c[i].from];
    r->minlev[i] = l < r->minlev[i + 1] ? l : r->minlev[i + 1];
  }
  uint64_t *aj = anc_of(r, j);
  uint32_t lo = n ? r->c[n - 1].from : 0, lev = 0, e0 = g->nedge;
  int exploring = 0;
  r->nkept = 0;
  for (uint32_t i = 0; i < n; i++) {
    const rp__cand *c = &r->c[i];
    uint32_t f = c->from;
    int reached;
    if (!r->nkept)
      reached = 0;
    else if (j - f < W)
      reached = bit_get(r, aj, f);
    else if ((reached = far_reached(g, r, j, f, aj, &exploring, lo,
                                    r->minlev[i])) < 0)
      return -1;
    if (reached && !c->keep)
      continue;
    g->edge[g->nedge++] = (rp_edge){f, j, (rp_edge_kind)c->kind, c->buf};
    if (r->level[f] + 1 > lev)
      lev = r->level[f] + 1;
    if (j - f < W)
      or_into(r, aj, f, j);
    r->kept[r->nkept++] = f;
    if (exploring && explore_add(r, f))
      return -1;
  }
  r->level[j] = lev;
  for (uint32_t i = 0; i < n; i++)
    r->succ[r->c[i].from] = j;
  /* Sources increasing, as the CSR will have them. */
  for (uint32_t a = e0, b = g->nedge; a + 1 < b; a++, b--) {
    rp_edge t = g->edge[a];
    g->edge[a] = g->edge[b - 1];
    g->edge[b - 1] = t;
  }
  return 0;
}
