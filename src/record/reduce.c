/* Exact transitive reduction of one operation's candidate edges.
 *
 * Let P be the nodes that node j conflicts with (plus its explicit "after"
 * nodes). The edge c -> j is in the transitive reduction iff c is in P and
 * reaches no other member of P (a longer path c -> ... -> x -> j ends with
 * an edge from some x in P). The hazard tracker (record/hazard.c) gives a
 * candidate set C, a subset of P that holds every member of P reaching no
 * other member. Every member of P reaches such a maximal member, so for c
 * in C: c reaches another member of P iff c reaches another candidate.
 * That is what is decided for each candidate, from exact knowledge of
 * every node's ancestors of two kinds, then a few cheap facts, then a
 * bounded search, and what is still open is decided later in bulk:
 *  - the ancestor window: every node u has a bitset of its ancestors among
 *    the W - 1 nodes before it, built from the bitsets of its candidates
 *    (an ancestor x of u inside the window is a candidate of u or lies
 *    inside the window of one: the last node before u on a path from x is
 *    in P, and the one of P reaching it maximal is a candidate). The union
 *    of the bitsets of the candidates inside j's window decides each of
 *    them exactly: another candidate that c reaches is later, so inside
 *    the window too. The bitsets of the last W nodes are kept (a ring; it
 *    starts at 64 nodes and doubles with the graph up to W, past 1 024
 *    only where candidates in the far half of the window are frequent);
 *  - the ancestor list: every node u keeps its latest ancestors, up to L
 *    of them, newest first, with the bound lo(u) above which the list is
 *    complete: x in [lo(u), u) is an ancestor of u iff it is listed. It is
 *    merged from the lists of u's stored predecessors (whose closure is
 *    u's ancestors): lo(u) is the highest of theirs, raised where the
 *    merge had to stop at L entries. Where the graph is sparse (candidates
 *    far back, few ancestors per stretch of program order) the lists reach
 *    tens of thousands of operations back, far past any affordable window.
 *    The lists live in one arena that keeps the latest ones (a node whose
 *    list was overwritten has lo = itself: nothing below it is known);
 *  - a candidate c outside j's window: if its level (longest path from a
 *    source) is not below another candidate's, it does not reach that
 *    one; else the window or the list of the other candidate c' decides
 *    "c reaches c'" when it covers c. For those left undecided: the
 *    tracker may know that c reaches another candidate (a writer whose
 *    readers since are WAR candidates of j: rp__reduce_implied); c
 *    conflicting directly with c' (their stored accesses) makes it an
 *    ancestor; c' may be replaced by its frontier, the stored predecessors
 *    below lo(c') of c' and of the nodes on its list (any path from c to
 *    c' enters the list through one of them, and their lists reach
 *    further back); then a forward search from c over the stored edges
 *    (their closure is that of all hazards; every node keeps its stored
 *    out-edges while recording), latest successors first, entering at
 *    most a few nodes. A node x met is a hit if it is another candidate,
 *    an ancestor of j inside the window, or a node an earlier search
 *    reached a candidate from; it is not entered if it is inside the
 *    window but no ancestor of j, if no undecided candidate is later and
 *    of a higher level, or if the windows and lists say x reaches none of
 *    them. A node searched to the end without success stays "no" for the
 *    other candidates of j; when a search succeeds the nodes on its path
 *    are marked "yes";
 *  - a candidate still undecided when the search stops is stored, and
 *    pending: rp__reduce_settle decides all pending edges at once, before
 *    anything reads the edges (one sweep over the nodes with 64-bit words
 *    of pending sources, see there), and removes the implied ones.
 * Once settled, the stored edges are always exactly the reduction. */
#include <stdlib.h>
#include <string.h>
#include "record/reduce.h"

enum {
  INLINE_OUT = 3,
  MIN_WINDOW = 64,
  ARENA0 = 1024,        /* first arena, in list entries */
  ARENA_MAX = 1u << 22, /* 16 MiB of lists at most */
  HORIZON = 1u << 16,   /* the arena grows while it covers fewer nodes */
  FRONTIER_MAX = 32     /* a frontier replacing undecided targets holds
                             at most this many */
};

/* Per node, 48 bytes: what deciding a candidate and searching read (its
 * level is apart, in lev: a search reads the levels of many nodes it does
 * not enter). */
struct node {
  uint32_t cst;   /* == cur: a candidate of the current node */
  uint32_t cix;   /* its index in c, while a candidate */
  uint32_t imp;   /* == cur: known to reach another candidate */
  uint32_t lo;    /* the list holds every ancestor in [lo, node) */
  uint32_t aoff;  /* the list's first entry in the arena (mod 2^32) */
  uint32_t alen;  /* entries in the list */
  uint32_t mark;  /* 2 cur: searched, reaches no candidate; 2 cur + 1:
                     reaches one */
  uint32_t ohead; /* latest out-edge past the inline ones (in oe), NONE */
  uint32_t nout;  /* how many of out[] are set */
  uint32_t out[INLINE_OUT]; /* the first out-edges' targets */
};

struct rp__reduce {
  uint32_t W, Wmax, WW; /* window now (nodes), at most, words per bitset */
  uint64_t *ring;       /* W bitsets; node u's at (u % W) * WW */
  uint32_t lcap;        /* list entries per node at most */
  uint32_t smax;        /* nodes a search may enter */
  uint32_t *ar;         /* the lists, a ring of acap entries */
  uint32_t acap, ahead; /* ahead: entries ever written (mod 2^32) */
  uint32_t nlow;        /* the oldest node whose list is still whole */
  uint32_t cap;         /* nodes in nd and lev */
  struct node *nd;
  uint32_t *lev;       /* per node: longest path from a source, in edges */
  struct oedge {       /* a stored edge past its source's inline ones */
    uint32_t to, next; /* next: the source's next older out-edge */
  } * oe;
  uint32_t noe, capoe;
  struct pend { /* a stored edge not decided yet (rp__reduce_settle) */
    uint32_t from, to;
  } * pd;
  uint32_t npd, cappd;
  uint32_t cur, now; /* now: the node begun last */
  uint32_t nend;     /* nodes ended */
  uint32_t wlo;      /* bitsets are complete from here on (grow_ring) */
  uint32_t nfar;     /* open candidates W to 2 W back since wcount */
  uint32_t wcount;   /* the node from which nfar counts */
  uint32_t maxlev;   /* the highest level of a candidate of now */
  rp__cand *c;
  uint32_t nc, capc;
  uint32_t *und; /* candidates a far one is undecided about */
  uint32_t nund, capund;
  uint32_t *tmp; /* merging a list */
  uint32_t captmp;
  /* Search stack: node, next out-edge in oe, then inline ones left. */
  struct fwd {
    uint32_t u, e, i;
  } * st;
  uint32_t capst;
  int oom;
};

rp__reduce *rp__reduce_new(uint32_t window, uint32_t list, uint32_t search) {
  if (window < MIN_WINDOW || (window & (window - 1)) || !list ||
      list > ARENA0 / 2)
    return NULL;
  rp__reduce *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->Wmax = window;
  r->lcap = list;
  r->smax = search;
  return r;
}

void rp__reduce_free(rp__reduce *r) {
  if (!r)
    return;
  free(r->ring);
  free(r->ar);
  free(r->nd);
  free(r->lev);
  free(r->oe);
  free(r->pd);
  free(r->c);
  free(r->und);
  free(r->tmp);
  free(r->st);
  free(r);
}

static int grow_nodes(rp__reduce *r, uint32_t n) {
  if (n <= r->cap)
    return 0;
  uint64_t c = r->cap ? r->cap : 64;
  while (c < n)
    c *= 2;
  if (c > UINT32_MAX)
    c = UINT32_MAX;
  struct node *q = realloc(r->nd, (size_t)c * sizeof *q);
  if (!q)
    return -1;
  r->nd = q;
  uint32_t *l = realloc(r->lev, (size_t)c * sizeof *l);
  if (!l)
    return -1;
  r->lev = l;
  for (uint32_t i = r->cap; i < c; i++) {
    q[i] = (struct node){0, 0, 0, 0, 0, 0, 0, RP_NONE, 0, {0}};
    l[i] = 0;
  }
  r->cap = (uint32_t)c;
  return 0;
}

/* Widens the window to W = 2 r->W (or makes the first one, W = 64). A
 * node u's bitset holds the bits of [u - r->W + 1, u) at positions
 * x mod r->W: they move to x mod W, in the half of u's block of r->W
 * nodes for x in it, else in the other half (the bits that the wider
 * window adds, below u - r->W + 1, stay 0). So the bitsets of the nodes
 * ended by now are complete only above wlo = nend - r->W: a bit is
 * trusted to say "no" only there (in_window); "yes" is always true. */
static int grow_ring(rp__reduce *r, uint32_t W) {
  uint32_t WW = W / 64, Wo = r->W, WWo = r->WW;
  uint64_t *q = calloc((size_t)W * WW, sizeof *q);
  if (!q)
    return -1;
  uint32_t first = r->nend > Wo ? r->nend - Wo : 0;
  for (uint32_t u = first; Wo && u < r->nend; u++) {
    const uint64_t *s = r->ring + (size_t)(u & (Wo - 1)) * WWo;
    uint64_t *d = q + (size_t)(u & (W - 1)) * WW;
    uint32_t pu = u & (Wo - 1), wu = pu >> 6;
    uint32_t own = (u / Wo) & 1 ? WWo : 0, prev = WWo - own;
    uint64_t low = (pu & 63) == 63 ? ~0ull : (2ull << (pu & 63)) - 1;
    for (uint32_t w = 0; w < WWo; w++) {
      if (w < wu) {
        d[own + w] = s[w];
      } else if (w > wu) {
        d[prev + w] = s[w];
      } else {
        d[own + w] |= s[w] & low;
        d[prev + w] |= s[w] & ~low;
      }
    }
  }
  if (r->nend > Wo && r->nend - Wo > r->wlo)
    r->wlo = r->nend - Wo;
  free(r->ring);
  r->ring = q;
  r->W = W;
  r->WW = WW;
  return 0;
}

int rp__reduce_begin(rp__reduce *r, uint32_t j) {
  if (grow_nodes(r, j + 1))
    return -1;
  if (!r->ring && grow_ring(r, MIN_WINDOW))
    return -1;
  /* Up to RP__ANC_WINDOW_SURE while the graph grows into it; past it,
   * every W nodes, wider when at least one node in 64 had a candidate
   * from W to 2 W back that the level test and the ancestor lists left
   * open (a dense graph whose hazards reach about as far back as the
   * window: the wider window decides those for the price of wider
   * bitsets). */
  while (j >= r->W && r->W < r->Wmax && j == r->nend && r->nend <= r->W &&
         r->W < RP__ANC_WINDOW_SURE)
    if (grow_ring(r, 2 * r->W))
      return -1;
  if (r->W >= RP__ANC_WINDOW_SURE && r->W < r->Wmax && j == r->nend &&
      j - r->wcount >= r->W) {
    if (r->nfar >= r->W / 64 && grow_ring(r, 2 * r->W))
      return -1;
    r->nfar = 0;
    r->wcount = j;
  }
  if (++r->cur >= 1u << 31) { /* stamps (2 cur + 1 too) wrapped */
    for (uint32_t i = 0; i < r->cap; i++)
      r->nd[i].cst = r->nd[i].mark = 0;
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
  struct node *f = &r->nd[from];
  if (f->cst == r->cur) {
    rp__cand *c = &r->c[f->cix];
    int better = keep != c->keep   ? keep > c->keep
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
  f->cst = r->cur;
  f->cix = r->nc;
  r->c[r->nc++] = (rp__cand){from, (uint8_t)kind, (uint8_t)keep, buf};
}

void rp__reduce_implied(rp__reduce *r, uint32_t from) {
  r->nd[from].imp = r->cur;
}

/* ---- bitsets over the ring ---------------------------------------------- */

/* Does node j's bitset decide whether x (< j) is an ancestor? */
static int in_window(const rp__reduce *r, uint32_t j, uint32_t x) {
  return j - x < r->W && x >= r->wlo;
}

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

/* d |= s over ring positions [lo, lo + n), lo + n <= W: the partial
 * words at the ends masked, the whole words between in a plain loop the
 * compiler vectorizes. */
static void or_lin(uint64_t *d, const uint64_t *s, uint32_t lo, uint32_t n) {
  if (!n)
    return;
  uint32_t hi = lo + n, w0 = lo >> 6, w1 = (hi - 1) >> 6;
  uint64_t m0 = ~0ull << (lo & 63);
  uint64_t m1 = hi & 63 ? ~0ull >> (64 - (hi & 63)) : ~0ull;
  if (w0 == w1) {
    d[w0] |= s[w0] & m0 & m1;
    return;
  }
  d[w0] |= s[w0] & m0;
  uint32_t w = w0 + 1;
#if defined(__GNUC__)
  /* Four words a step in two 16-byte vectors (SSE2 / NEON): a bitset of
   * 4 096 bits is 64 words, ORed at about a third of the instructions. */
  typedef uint64_t v2 __attribute__((vector_size(16)));
  for (; w + 4 <= w1; w += 4) {
    v2 a, b, x, y;
    memcpy(&a, d + w, sizeof a);
    memcpy(&b, d + w + 2, sizeof b);
    memcpy(&x, s + w, sizeof x);
    memcpy(&y, s + w + 2, sizeof y);
    a |= x;
    b |= y;
    memcpy(d + w, &a, sizeof a);
    memcpy(d + w + 2, &b, sizeof b);
  }
#endif
  for (; w < w1; w++)
    d[w] |= s[w];
  d[w1] |= s[w1] & m1;
}

/* Adds m's window ancestors to the bitset of j (m in j's window):
 * m's bitset covers m-W+1 .. m-1, of which j-W+1 .. m-1 are in j's window:
 * W - 1 - (j - m) ring positions starting at that of j + 1. */
static void or_ancestors(rp__reduce *r, uint64_t *dst, uint32_t m, uint32_t j) {
  uint32_t W = r->W, len = W - 1 - (j - m), start = (j + 1) & (W - 1);
  const uint64_t *src = anc_of(r, m);
  uint32_t n1 = W - start < len ? W - start : len;
  or_lin(dst, src, start, n1);
  or_lin(dst, src, 0, len - n1);
}

/* ---- ancestor lists ------------------------------------------------------ */

/* Node u's list (newest first; in one piece in the arena). */
static const uint32_t *list_of(const rp__reduce *r, const struct node *u) {
  return r->ar + (u->aoff & (r->acap - 1));
}

/* Entry i of node u's list. */
static uint32_t list_at(const rp__reduce *r, const struct node *u, uint32_t i) {
  return list_of(r, u)[i];
}

/* The bound above which u's list is complete: u itself when its list was
 * overwritten. */
static uint32_t list_lo(const rp__reduce *r, uint32_t u) {
  return u >= r->nlow ? r->nd[u].lo : u;
}

/* Is x listed among u's ancestors? (x >= list_lo(u), x < u.) */
static int list_has(const rp__reduce *r, uint32_t u, uint32_t x) {
  const struct node *n = &r->nd[u];
  const uint32_t *l = list_of(r, n);
  uint32_t a = 0, b = n->alen; /* entries decrease with the index */
  while (a < b) {
    uint32_t m = a + (b - a) / 2, v = l[m];
    if (v == x)
      return 1;
    if (v > x)
      a = m + 1;
    else
      b = m;
  }
  return 0;
}

/* Does x (x < t, both ended) reach t? 1 yes, 0 no, -1 not known. */
static int known(const rp__reduce *r, uint32_t x, uint32_t t) {
  if (r->now - t < r->W && t - x < r->W && x >= r->wlo)
    return bit_get(r, anc_of(r, t), x);
  if (x >= list_lo(r, t))
    return list_has(r, t, x);
  return -1;
}

int rp__reduce_known_ancestor(const rp__reduce *r, uint32_t x, uint32_t u) {
  return x < u && u < r->nend && known(r, x, u) == 1;
}

/* Makes room for len more entries at the arena's head: grows the arena
 * while it covers fewer than HORIZON nodes, else forgets the oldest
 * lists. */
static int arena_room(rp__reduce *r, uint32_t len) {
  if (!r->ar) {
    if (!(r->ar = malloc(ARENA0 * sizeof *r->ar)))
      return -1;
    r->acap = ARENA0;
  }
  for (;;) {
    uint32_t used = r->nlow < r->nend ? r->ahead - r->nd[r->nlow].aoff : 0;
    uint32_t at = r->ahead & (r->acap - 1);
    uint32_t skip = at + len > r->acap ? r->acap - at : 0;
    if (used + skip + len <= r->acap) {
      r->ahead += skip; /* a list never wraps */
      return 0;
    }
    if (r->acap < ARENA_MAX && r->nend - r->nlow < HORIZON) {
      /* Twice as large: every list stays in one piece. */
      uint32_t nc = 2 * r->acap, *q = malloc((size_t)nc * sizeof *q);
      if (!q)
        return -1;
      /* Entry k moves from k mod acap to k mod nc: in at most three runs
       * (the old ring's two pieces, the second cut where k mod nc
       * wraps). */
      for (uint32_t k = r->ahead - used; k != r->ahead;) {
        uint32_t from = k & (r->acap - 1), to = k & (nc - 1);
        uint32_t len = r->ahead - k;
        if (len > r->acap - from)
          len = r->acap - from;
        if (len > nc - to)
          len = nc - to;
        memcpy(q + to, r->ar + from, (size_t)len * sizeof *q);
        k += len;
      }
      free(r->ar);
      r->ar = q;
      r->acap = nc;
    } else {
      r->nlow++;
    }
  }
}

/* Merges predecessor p's list (p, then its list, cut at lo; p >= lo)
 * into a[0 .. n) (decreasing, distinct), writing at most cap entries to
 * out; returns their number. */
static uint32_t list_merge(const rp__reduce *r, const uint32_t *a, uint32_t n,
                           uint32_t p, uint32_t lo, uint32_t *out,
                           uint32_t cap) {
  const uint32_t *b = NULL;
  uint32_t nb = 0, i = 0, k = 0, o = 0;
  if (p >= r->nlow) {
    b = list_of(r, &r->nd[p]);
    /* Its entries >= lo: a prefix (they decrease). */
    uint32_t hi = r->nd[p].alen;
    while (nb < hi) {
      uint32_t m = nb + (hi - nb) / 2;
      if (b[m] >= lo)
        nb = m + 1;
      else
        hi = m;
    }
  }
  while (i < n && a[i] > p && o < cap)
    out[o++] = a[i++];
  if (o < cap) {
    out[o++] = p; /* above all of its list */
    i += i < n && a[i] == p;
  }
  while (i < n && k < nb && o < cap) {
    uint32_t x = a[i], y = b[k];
    out[o++] = x > y ? x : y;
    i += x >= y;
    k += y >= x;
  }
  /* One of them is done: the rest of the other as it is. */
  uint32_t rest = i < n ? n - i : nb - k;
  if (rest > cap - o)
    rest = cap - o;
  if (rest)
    memcpy(out + o, i < n ? a + i : b + k, (size_t)rest * sizeof *out);
  return o + rest;
}

/* Builds node j's list from its m stored predecessors pred[0 .. m). */
static int list_build(rp__reduce *r, uint32_t j, const rp_edge *pred,
                      uint32_t m) {
  uint32_t lo = 0, L = r->lcap, n = 0;
  for (uint32_t i = 0; i < m; i++) {
    uint32_t l = list_lo(r, pred[i].from);
    if (l > lo)
      lo = l;
  }
  if (rp__grow((void **)&r->tmp, &r->captmp, 2 * (L + 1), sizeof *r->tmp))
    return -1;
  /* The newest L + 1 of every predecessor and of what its list holds at
   * or above lo, each once. */
  uint32_t *t = r->tmp, *u = r->tmp + L + 1;
  for (uint32_t i = 0; i < m; i++) {
    if (pred[i].from < lo)
      continue;
    n = list_merge(r, t, n, pred[i].from, lo, u, L + 1);
    uint32_t *x = t;
    t = u;
    u = x;
  }
  if (n > L) {
    lo = t[L] + 1;
    n = L;
  }
  /* A list that does not reach past the window (a dense graph) tells
   * little the window does not: kept empty, it costs nothing to write or
   * to merge (nothing is known below j then). */
  if (j - lo < r->W) {
    lo = j;
    n = 0;
  }
  if (arena_room(r, n))
    return -1;
  struct node *nj = &r->nd[j];
  nj->lo = lo;
  nj->aoff = r->ahead;
  nj->alen = n;
  memcpy(r->ar + (r->ahead & (r->acap - 1)), t, n * sizeof *t);
  r->ahead += n;
  return 0;
}

/* ---- deciding the candidates far back ------------------------------------ */

/* Per undecided candidate t (und[]): t, its level, and the lowest node
 * whose reaching t the window or t's list can tell (known() answers "not
 * known" below it: for most nodes a search meets far back, where lists
 * are empty), in r->tmp; NULL when out of memory. */
static uint32_t *undecided_bounds(rp__reduce *r) {
  if (rp__grow((void **)&r->tmp, &r->captmp, 3 * r->nund, sizeof *r->tmp))
    return NULL;
  uint32_t *ut = r->tmp, W = r->W;
  for (uint32_t i = 0; i < r->nund; i++) {
    uint32_t t = r->und[i], kb = list_lo(r, t);
    if (r->now - t < W) {
      uint32_t w = t >= W ? t - W + 1 : 0;
      w = w > r->wlo ? w : r->wlo;
      kb = w < kb ? w : kb;
    }
    ut[3 * i] = t;
    ut[3 * i + 1] = r->lev[t];
    ut[3 * i + 2] = kb;
  }
  return ut;
}

/* Exhaustive forward search from c for another candidate, over what the
 * undecided candidates und[] leave possible; 1 if it meets one (or an
 * ancestor of one), 0 if not, -1 when out of memory. A node met is only
 * read (a cache miss, far back) when it must be entered: what decides it
 * otherwise (its level, the window, the lists of und[]) lies elsewhere. */
static int search(rp__reduce *r, uint32_t j, uint32_t c, const uint64_t *aj) {
  uint32_t sp = 0, cur = r->cur, W = r->W, maxu = 0, maxl = 0;
  uint32_t budget = r->smax;
  struct node *nd = r->nd;
  const uint32_t *lev = r->lev, *und = r->und, nund = r->nund;
  for (uint32_t i = 0; i < nund; i++) {
    if (und[i] > maxu)
      maxu = und[i];
    if (lev[und[i]] > maxl)
      maxl = lev[und[i]];
  }
  uint32_t *ut = NULL; /* made when first needed (undecided_bounds) */
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
    /* Later than every undecided candidate: reaches none (nor any that c
     * does not reach). Inside j's window: the bitset knows exactly. */
    if (x > maxu)
      continue;
    int hit = 0, open = 0;
    if (j - x < W && x >= r->wlo) {
      if (!bit_get(r, aj, x))
        continue;
      hit = 1;
    }
    for (uint32_t i = 0; i < nund && !hit; i++)
      hit = und[i] == x; /* a candidate */
    /* Not below any undecided candidate's level: reaches none. */
    if (!hit && lev[x] >= maxl)
      continue;
    uint32_t lx = lev[x];
    if (!hit && !ut && !(ut = undecided_bounds(r)))
      return -1;
    for (uint32_t i = 0; i < nund && !hit; i++) {
      const uint32_t *u = ut + 3 * i;
      if (u[0] > x && u[1] > lx) {
        int k = x < u[2] ? -1 : known(r, x, u[0]);
        hit = k > 0;
        open |= k < 0;
      }
    }
    if (!hit) {
      if (!open)
        continue; /* x reaches no candidate */
      struct node *n = &nd[x];
      if (n->mark == 2 * cur)
        continue;
      if (n->mark != 2 * cur + 1) {
        if (!budget--) {
          /* Too far: left to rp__reduce_settle. The nodes entered so far
           * are not known to reach nothing. */
          for (uint32_t i = 0; i < sp; i++)
            nd[r->st[i].u].mark = 0;
          return 2;
        }
        n->mark = 2 * cur;
        if (rp__grow((void **)&r->st, &r->capst, sp + 1, sizeof *r->st))
          return -1;
        r->st[sp++] = (struct fwd){x, n->ohead, n->nout};
        continue;
      }
    } else {
      nd[x].mark = 2 * cur + 1;
    }
    for (uint32_t i = 0; i < sp; i++)
      nd[r->st[i].u].mark = 2 * cur + 1;
    return 1;
  }
  return 0;
}

/* Replaces each undecided target t of c (und[]) by its frontier below
 * lo(t): the stored predecessors below lo(t) of t and of the nodes t's
 * list holds. Any path from c to t enters [lo(t), t] through one of them
 * (its first node there is on t's list or t; the node before it is
 * below), so c reaches t iff c is one of them or reaches one; each one
 * has a list reaching further back. 1: c reaches a target, 0: the targets
 * left are in und[] (none: c reaches none; a frontier wider than
 * FRONTIER_MAX leaves them as they were), -1: out of memory. */
static int expand(const rp_graph *g, rp__reduce *r, uint32_t c) {
  uint32_t lc = r->lev[c], n = 0;
  uint32_t *f;
  if (rp__grow((void **)&r->tmp, &r->captmp, FRONTIER_MAX, sizeof *r->tmp))
    return -1;
  for (uint32_t i = 0; i < r->nund; i++) {
    uint32_t t = r->und[i], lo = list_lo(r, t);
    if (t < r->nlow) { /* its list is gone: keep it */
      if (n == FRONTIER_MAX)
        return 0;
      r->tmp[n++] = t;
      continue;
    }
    const struct node *nt = &r->nd[t];
    for (uint32_t k = 0; k <= nt->alen; k++) {
      uint32_t y = k ? list_at(r, nt, k - 1) : t;
      for (uint32_t e = g->pred_off[y]; e < g->pred_off[y + 1]; e++) {
        uint32_t z = g->edge[e].from;
        if (z >= lo)
          break; /* sources increase */
        if (z == c)
          return 1;
        if (z < c || r->lev[z] <= lc)
          continue;
        int kn = known(r, c, z);
        if (kn > 0)
          return 1;
        if (kn < 0 && (!n || r->tmp[n - 1] != z)) { /* may repeat */
          if (n == FRONTIER_MAX)
            return 0; /* too wide: the targets stay as they were */
          r->tmp[n++] = z;
        }
      }
    }
  }
  f = r->tmp;
  if (rp__grow((void **)&r->und, &r->capund, n, sizeof *r->und))
    return -1;
  memcpy(r->und, f, n * sizeof *f);
  r->nund = n;
  return 0;
}

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

/* Does op c (earlier) conflict directly with op t: one access of each on
 * the same bytes of one space, one of them a write? Then c -> t is a
 * hazard, and c an ancestor of t. 0 also means "not known". */
static int conflicts(const rp_graph *g, uint32_t c, uint32_t t) {
  const rp__sacc *ac = g->sacc + g->op[c].acc0, *at = g->sacc + g->op[t].acc0;
  for (uint32_t i = 0; i < g->op[c].nacc; i++)
    for (uint32_t k = 0; k < g->op[t].nacc; k++)
      if (((ac[i].mode | at[k].mode) & RP_OUT) && overlap(g, &ac[i], &at[k]))
        return 1;
  return 0;
}

/* Does candidate c, outside j's window, reach another candidate? 1 yes,
 * 0 no, 2 not decided yet (pending), -1 out of memory. */
static int far_reached(const rp_graph *g, rp__reduce *r, uint32_t j, uint32_t c,
                       const uint64_t *aj) {
  uint32_t lc = r->lev[c];
  /* An ancestor has a lower level than its descendants. */
  if (lc >= r->maxlev)
    return 0;
  r->nund = 0;
  for (uint32_t i = 0; i < r->nc; i++) {
    uint32_t t = r->c[i].from;
    if (t <= c || r->lev[t] <= lc)
      continue;
    int k = known(r, c, t);
    if (k > 0)
      return 1;
    if (k < 0) {
      if (rp__grow((void **)&r->und, &r->capund, r->nund + 1, sizeof *r->und))
        return -1;
      r->und[r->nund++] = t;
    }
  }
  if (r->nund && j - c < 2 * r->W)
    r->nfar++; /* a wider window would decide it */
  /* One the accesses say c conflicts with (few: a far candidate is
   * mostly undecided about one or two). */
  for (uint32_t i = 0; i < r->nund && i < 8; i++)
    if (conflicts(g, c, r->und[i]))
      return 1;
  /* The undecided ones: their frontiers, while they stay few. */
  for (int round = 0; round < 1 && r->nund && r->nund <= FRONTIER_MAX;
       round++) {
    int x = expand(g, r, c);
    if (x)
      return x;
  }
  return r->nund ? search(r, j, c, aj) : 0;
}

static int edge_from_cmp(const void *a, const void *b) {
  uint32_t x = ((const rp_edge *)a)->from, y = ((const rp_edge *)b)->from;
  return x < y ? -1 : x > y;
}

static int u32_desc(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x > y ? -1 : x < y;
}

int rp__reduce_end(rp_graph *g, rp__reduce *r, uint32_t j) {
  if (r->oom)
    return -1;
  uint32_t n = r->nc, maxlev = 0, e0 = g->nedge;
  if (rp__grow((void **)&g->edge, &g->capedge, g->nedge + n, sizeof *g->edge) ||
      rp__grow((void **)&r->oe, &r->capoe, r->noe + n, sizeof *r->oe) ||
      rp__grow((void **)&r->pd, &r->cappd, r->npd + n, sizeof *r->pd))
    return -1;
  /* j's window bitset: first the ancestors of every candidate inside the
   * window, which decide those candidates; then the candidates too. */
  uint64_t *aj = anc_of(r, j);
  if (rp__grow((void **)&r->tmp, &r->captmp, n, sizeof *r->tmp))
    return -1;
  uint32_t nin = 0, *win = r->tmp;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t f = r->c[i].from;
    if (r->lev[f] > maxlev)
      maxlev = r->lev[f];
    if (in_window(r, j, f))
      win[nin++] = f;
  }
  /* Latest first; a candidate already among the ancestors ORed in adds
   * none: its ancestors in j's window, from wlo on, are in the bitset of
   * the later candidate it reaches (complete there), so in aj already. */
  if (nin > 32) {
    qsort(win, nin, sizeof *win, u32_desc);
  } else {
    for (uint32_t a = 1; a < nin; a++) {
      uint32_t x = win[a], b = a;
      for (; b > 0 && win[b - 1] < x; b--)
        win[b] = win[b - 1];
      win[b] = x;
    }
  }
  for (uint32_t i = 0; i < nin; i++)
    if (!bit_get(r, aj, win[i]))
      or_ancestors(r, aj, win[i], j);
  r->maxlev = maxlev;
  for (uint32_t i = 0; i < n; i++) {
    const rp__cand *c = &r->c[i];
    uint32_t f = c->from;
    if (in_window(r, j, f) &&
        (c->keep || (r->nd[f].imp != r->cur && !bit_get(r, aj, f))))
      g->edge[g->nedge++] = (rp_edge){f, j, (rp_edge_kind)c->kind, c->buf};
  }
  for (uint32_t i = 0; i < n; i++)
    if (in_window(r, j, r->c[i].from))
      bit_set(r, aj, r->c[i].from);
  /* Then the older candidates. */
  for (uint32_t i = 0; i < n; i++) {
    const rp__cand *c = &r->c[i];
    uint32_t f = c->from;
    if (in_window(r, j, f))
      continue;
    int reached = r->nd[f].imp == r->cur ? 1 : far_reached(g, r, j, f, aj);
    if (reached < 0)
      return -1;
    if (c->keep || reached != 1)
      g->edge[g->nedge++] = (rp_edge){f, j, (rp_edge_kind)c->kind, c->buf};
    if (!c->keep && reached == 2)
      r->pd[r->npd++] = (struct pend){f, j};
  }
  r->lev[j] = n ? maxlev + 1 : 0;
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
  if (list_build(r, j, ej, m))
    return -1;
  for (uint32_t e = e0; e < g->nedge; e++) {
    uint32_t f = g->edge[e].from;
    struct node *nf = &r->nd[f];
    if (nf->nout < INLINE_OUT) {
      nf->out[nf->nout++] = j;
    } else {
      r->oe[r->noe] = (struct oedge){j, nf->ohead};
      nf->ohead = r->noe++;
    }
  }
  r->nend = j + 1;
  return 0;
}

/* ---- deciding the pending edges in bulk ---------------------------------- */

uint32_t rp__reduce_pending(const rp__reduce *r) { return r ? r->npd : 0; }

uint32_t rp__reduce_window(const rp__reduce *r) { return r ? r->W : 0; }

/* The length class of a pending edge: floor(log2(to - from)). */
static unsigned len_class(const struct pend *p) {
  uint32_t d = p->to - p->from;
  return d > 1 ? 31u - (unsigned)__builtin_clz(d) : 0;
}

/* Sort keys of a pending edge: its class and source; its target. */
enum { BY_CLASS, BY_FROM };

static uint64_t pend_key(const struct pend *p, int by) {
  return by == BY_FROM ? p->from : (uint64_t)len_class(p) << 32 | p->from;
}

/* Sorts a[0 .. n) by key `by`, stably (a radix sort of 11-bit digits
 * over the key bits in use, through tmp[0 .. n)). */
static void pend_sort(struct pend *a, struct pend *tmp, uint32_t n, int by) {
  if (n < 64) {
    for (uint32_t i = 1; i < n; i++) {
      struct pend x = a[i];
      uint64_t k = pend_key(&x, by);
      uint32_t b = i;
      for (; b > 0 && pend_key(&a[b - 1], by) > k; b--)
        a[b] = a[b - 1];
      a[b] = x;
    }
    return;
  }
  uint64_t max = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t k = pend_key(&a[i], by);
    max = k > max ? k : max;
  }
  struct pend *src = a, *dst = tmp;
  for (unsigned sh = 0; sh < 64 && (max >> sh); sh += 11) {
    uint32_t cnt[2048];
    memset(cnt, 0, sizeof cnt);
    for (uint32_t i = 0; i < n; i++)
      cnt[(pend_key(&src[i], by) >> sh) & 2047]++;
    for (uint32_t i = 0, sum = 0; i < 2048; i++) {
      uint32_t c = cnt[i];
      cnt[i] = sum;
      sum += c;
    }
    for (uint32_t i = 0; i < n; i++)
      dst[cnt[(pend_key(&src[i], by) >> sh) & 2047]++] = src[i];
    struct pend *t = src;
    src = dst;
    dst = t;
  }
  if (src != a)
    memcpy(a, src, (size_t)n * sizeof *a);
}

/* 64 LANES pending edges at most, pd[q0 .. q0 + n), live from lo to
 * hi; edge q0 + i is bit i % 64 of lane i / 64. */
enum { LANES = 4 };
struct word {
  uint32_t lo, hi; /* first source, last target */
  uint32_t q0;     /* its first edge */
  uint32_t next;   /* its next edge to start */
  uint32_t n;
  uint32_t nl; /* lanes: 1 for at most 64 edges, else LANES */
  uint64_t *R; /* R[(v - lo) nl + l]: its sources reaching v (or v) */
};

static int word_cmp(const void *a, const void *b) {
  const struct word *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The words: the pending edges pd (np, sorted by class and source) by
 * 64 LANES at most, of one class, into wd (nw of them, returned), then in
 * order of their first sources; wq[q]: edge q's word; byto: (target,
 * edge) by target; *first and *top: the first source and the last
 * target. */
static uint32_t make_words(const struct pend *pd, uint32_t np, struct word *wd,
                           uint32_t *wq, struct pend *byto, struct pend *stmp,
                           uint32_t *first, uint32_t *top) {
  uint32_t nw = 0;
  *top = 0;
  *first = RP_NONE;
  for (uint32_t q = 0; q < np; q++) {
    if (!q || wd[nw - 1].n == 64 * LANES ||
        len_class(&pd[q]) != len_class(&pd[q - 1]))
      wd[nw++] = (struct word){pd[q].from, pd[q].to, q, q, 0, 1, NULL};
    struct word *w = &wd[nw - 1];
    w->n++;
    if (pd[q].to > w->hi)
      w->hi = pd[q].to;
    if (pd[q].to > *top)
      *top = pd[q].to;
    if (pd[q].from < *first)
      *first = pd[q].from;
  }
  qsort(wd, nw, sizeof *wd, word_cmp);
  for (uint32_t k = 0; k < nw; k++)
    for (uint32_t q = wd[k].q0; q < wd[k].q0 + wd[k].n; q++) {
      wq[q] = k;
      byto[q] = (struct pend){pd[q].to, q};
    }
  pend_sort(byto, stmp, np, BY_FROM); /* indices increase among equals */
  return nw;
}

/* The words of wd (nw) from *nextw whose first source is v go live (onto
 * live, *nlive of them), each with its array of sets; -1: out of memory
 * (the words made live so far keep theirs, to free). */
static int open_words(struct word *wd, uint32_t nw, uint32_t *nextw, uint32_t v,
                      uint32_t *live, uint32_t *nlive) {
  for (; *nextw < nw && wd[*nextw].lo == v; (*nextw)++) {
    struct word *w = &wd[*nextw];
    w->nl = w->n > 64 ? LANES : 1; /* a word of few edges stays narrow */
    if (!(w->R = malloc(((size_t)w->hi - w->lo + 1) * w->nl * sizeof *w->R)))
      return -1;
    live[(*nlive)++] = *nextw;
  }
  return 0;
}

/* Node v's set in every live word: the sources of its pending edges
 * starting at v, and the sets of its predecessors (one lane for a word
 * of at most 64 edges, else LANES). */
static void sweep_node(const rp_graph *g, const struct pend *pd,
                       struct word *wd, const uint32_t *live, uint32_t nlive,
                       uint32_t v) {
  uint32_t e0 = g->pred_off[v], e1 = g->pred_off[v + 1];
  for (uint32_t a = 0; a < nlive; a++) {
    struct word *w = &wd[live[a]];
    uint32_t q1 = w->q0 + w->n;
    uint64_t x[LANES] = {0};
    for (; w->next < q1 && pd[w->next].from == v; w->next++) {
      uint32_t i = w->next - w->q0;
      x[i / 64] |= 1ull << (i % 64);
    }
    uint64_t x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3];
    if (w->nl == 1) {
      for (uint32_t e = e0; e < e1; e++) {
        uint32_t p = g->edge[e].from;
        if (p >= w->lo)
          x0 |= w->R[p - w->lo];
      }
      w->R[v - w->lo] = x0;
      continue;
    }
    for (uint32_t e = e0; e < e1; e++) {
      uint32_t p = g->edge[e].from;
      if (p >= w->lo) {
        const uint64_t *rp = w->R + (size_t)(p - w->lo) * LANES;
        x0 |= rp[0];
        x1 |= rp[1];
        x2 |= rp[2];
        x3 |= rp[3];
      }
    }
    uint64_t *rv = w->R + (size_t)(v - w->lo) * LANES;
    rv[0] = x0;
    rv[1] = x1;
    rv[2] = x2;
    rv[3] = x3;
  }
}

/* The pending edges ending at v (byto from *ct): each one implied by
 * another predecessor of v goes into dead (its edge index). */
static void settle_targets(const rp_graph *g, const struct pend *pd,
                           uint32_t np, const struct word *wd,
                           const uint32_t *wq, const struct pend *byto,
                           uint32_t *ct, uint32_t v, uint32_t *dead,
                           uint32_t *ndead) {
  uint32_t e0 = g->pred_off[v], e1 = g->pred_off[v + 1];
  for (; *ct < np && byto[*ct].from == v; (*ct)++) {
    uint32_t q = byto[*ct].to, c = pd[q].from, at = RP_NONE;
    const struct word *w = &wd[wq[q]];
    uint32_t i = q - w->q0, lane = i / 64;
    uint64_t bit = 1ull << (i % 64);
    int implied = 0;
    for (uint32_t e = e0; e < e1; e++) {
      uint32_t p = g->edge[e].from;
      if (p == c)
        at = e;
      else if (p >= w->lo && (w->R[(size_t)(p - w->lo) * w->nl + lane] & bit))
        implied = 1;
    }
    if (implied && at != RP_NONE)
      dead[(*ndead)++] = at;
  }
}

/* The live words past their last target, v, freed and taken off live. */
static void close_words(struct word *wd, uint32_t *live, uint32_t *nlive,
                        uint32_t v) {
  for (uint32_t a = 0; a < *nlive;)
    if (wd[live[a]].hi == v) {
      free(wd[live[a]].R);
      wd[live[a]].R = NULL;
      live[a] = live[--*nlive];
    } else {
      a++;
    }
}

/* Drops edges dead (ndead edge indices, in order of targets) from g's
 * nend nodes; each target's predecessors stay together. */
static void drop_edges(rp_graph *g, uint32_t nend, uint32_t *dead,
                       uint32_t ndead) {
  /* In order of targets, so nearly sorted: insertion. */
  for (uint32_t a = 1; a < ndead; a++) {
    uint32_t x = dead[a], b = a;
    for (; b > 0 && dead[b - 1] > x; b--)
      dead[b] = dead[b - 1];
    dead[b] = x;
  }
  uint32_t w = 0, k = 0, v = 0, n = nend;
  for (uint32_t e = 0; e < g->nedge; e++) {
    while (v < n && g->pred_off[v + 1] <= e)
      g->pred_off[++v] = w; /* node v's predecessors start here */
    if (k < ndead && dead[k] == e) {
      k++;
      continue;
    }
    g->edge[w++] = g->edge[e];
  }
  while (v < n)
    g->pred_off[++v] = w;
  g->nedge = w;
}

/* A pending edge c -> t is implied iff c reaches another predecessor of
 * t: every path from c to t of two edges or more ends with one. One sweep
 * over the nodes, from the first source to the last target, decides them
 * all: the pending edges go by 256 (four 64-bit lanes: a node's step
 * costs about as much for four lanes as for one, and a word of 256 lives
 * little longer than one of 64) into words, each word edges of one
 * length class (lengths within a factor 2), sources increasing; a word
 * is live from its first source to its last target, and gives each node
 * meanwhile the set of its sources that reach the node (or are it), the
 * union of the node's predecessors' sets, in an array of its own. At a
 * target, the union over its other predecessors decides. A node costs
 * a word per lane of each live word and predecessor, read in program
 * order (one lane for a word of at most 64 edges, else four). Steps:
 * make_words, then per node open_words, sweep_node, settle_targets and
 * close_words; at the end drop_edges. */
int rp__reduce_settle(rp_graph *g, rp__reduce *r) {
  if (!r || !r->npd)
    return 0;
  struct pend *pd = r->pd;
  uint32_t np = r->npd, nw = 0, *dead = NULL, ndead = 0;
  struct pend *byto = NULL; /* (target, index), by target */
  struct pend *stmp = NULL;
  struct word *wd = NULL;
  uint32_t *live = NULL, nlive = 0, *wq = NULL; /* wq: each edge's word */
  int st = -1;
  if (!(stmp = malloc((size_t)np * sizeof *stmp)))
    goto out;
  /* By class and source (the order among equal ones does not matter). */
  pend_sort(pd, stmp, np, BY_CLASS);
  if (!(byto = malloc((size_t)np * sizeof *byto)) ||
      !(dead = malloc((size_t)np * sizeof *dead)) ||
      !(wd = calloc(np, sizeof *wd)) || !(live = malloc(np * sizeof *live)) ||
      !(wq = malloc((size_t)np * sizeof *wq)))
    goto out;
  uint32_t top, first;
  nw = make_words(pd, np, wd, wq, byto, stmp, &first, &top);
  uint32_t nextw = 0, ct = 0;
  for (uint32_t v = first; v <= top; v++) {
    if (!nlive && nextw < nw && wd[nextw].lo > v)
      v = wd[nextw].lo; /* nothing live in between */
    if (open_words(wd, nw, &nextw, v, live, &nlive))
      goto out;
    sweep_node(g, pd, wd, live, nlive, v);
    settle_targets(g, pd, np, wd, wq, byto, &ct, v, dead, &ndead);
    close_words(wd, live, &nlive, v);
  }
  if (ndead)
    drop_edges(g, r->nend, dead, ndead);
  r->npd = 0;
  st = 0;
out:
  for (uint32_t a = 0; wd && a < nw; a++)
    free(wd[a].R);
  free(wd);
  free(wq);
  free(live);
  free(byto);
  free(stmp);
  free(dead);
  return st;
}
