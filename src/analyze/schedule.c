/* List schedule: starts, ends and slack of every operation on its lane. */
#include <stdlib.h>
#include "analyze/analysis.h"

/* A binary min-heap of (key, id), ties broken by the smaller id, so that
 * every choice of the scheduler is deterministic. */
typedef struct item {
  double key;
  uint32_t id;
} item;

typedef struct heap {
  item *v;
  uint32_t n, cap;
} heap;

static int before(item x, item y) {
  return x.key < y.key || (x.key == y.key && x.id < y.id);
}

static int heap_push(heap *h, double key, uint32_t id) {
  if (h->n == h->cap) {
    uint32_t cap = h->cap ? h->cap * 2 : 8;
    item *v = realloc(h->v, sizeof *v * cap);
    if (!v)
      return -1;
    h->v = v;
    h->cap = cap;
  }
  item x = {key, id};
  uint32_t i = h->n++;
  while (i > 0) {
    uint32_t p = (i - 1) / 2;
    if (!before(x, h->v[p]))
      break;
    h->v[i] = h->v[p];
    i = p;
  }
  h->v[i] = x;
  return 0;
}

static item heap_pop(heap *h) {
  item top = h->v[0], x = h->v[--h->n];
  uint32_t i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && before(h->v[c + 1], h->v[c]))
      c++;
    if (!before(h->v[c], x))
      break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (h->n)
    h->v[i] = x;
  return top;
}

typedef struct state {
  rp_analysis *a;
  uint32_t *indeg;
  heap *ready; /* per lane, keyed by -bottom level */
  uint8_t *busy, *dirty, *pending;
  uint32_t *dirtyl, ndirty; /* lanes whose state changed at time t */
  uint32_t *pendl, npend;   /* free lanes with a costly op to start */
} state;

static void mark(state *s, uint32_t l) {
  if (!s->dirty[l]) {
    s->dirty[l] = 1;
    s->dirtyl[s->ndirty++] = l;
  }
}

/* Op n starts at time t on its lane. */
static void start(state *s, uint32_t *next, uint32_t *last, uint32_t n,
                  double t, uint32_t *started) {
  rp_analysis *a = s->a;
  uint32_t l = a->lane[n];
  a->start[n] = t;
  a->order[(*started)++] = n;
  if (last[l] != RP_NONE)
    next[last[l]] = n;
  last[l] = n;
}

/* Op n ends: its lane frees, its successors whose last predecessor it was
 * become ready. */
static int finish(state *s, uint32_t n) {
  rp_analysis *a = s->a;
  uint32_t l = a->lane[n], ns;
  s->busy[l] = 0;
  mark(s, l);
  const rp_node *succ = rp_graph_succs(a->g, n, &ns);
  for (uint32_t i = 0; i < ns; i++) {
    uint32_t m = succ[i];
    if (--s->indeg[m] == 0) {
      if (heap_push(&s->ready[a->lane[m]], -a->bottom[m], m))
        return -1;
      mark(s, a->lane[m]);
    }
  }
  return 0;
}

/* Event-driven list scheduling. Time advances from one completion to the
 * next; at each time every free lane starts its ready operation of highest
 * priority, the priority being the bottom level (longest remaining path,
 * the operation's own cost included), ties to program order. An operation
 * is ready once all its predecessors have ended, so every edge holds; a
 * lane runs one operation at a time. Operations of zero cost run as soon
 * as they head their lane's ready queue, before the costly ones of the same
 * time start, so that what they make ready competes at once. Only lanes
 * whose state changed at the current time are looked at, and at most one
 * operation per lane is running, so the whole costs O((V + E) log V). */
static rp_status run(state *s, uint32_t *next) {
  rp_analysis *a = s->a;
  uint32_t nop = a->nop, started = 0;
  uint32_t *last = malloc(sizeof *last * a->nlane);
  heap ev = {malloc(sizeof(item) * (a->nlane ? a->nlane : 1)), 0,
             a->nlane ? a->nlane : 1};
  rp_status st = RP_ENOMEM;
  if (!last || !ev.v)
    goto out;
  for (uint32_t l = 0; l < a->nlane; l++)
    last[l] = RP_NONE;
  for (uint32_t n = 0; n < nop; n++) {
    uint32_t np;
    rp_graph_preds(a->g, n, &np);
    s->indeg[n] = np;
    if (np == 0) {
      if (heap_push(&s->ready[a->lane[n]], -a->bottom[n], n))
        goto out;
      mark(s, a->lane[n]);
    }
  }
  double t = 0;
  for (;;) {
    /* Zero-cost operations first: they end as they start and never hold
     * their lane, and what they make ready at time t competes at t. */
    while (s->ndirty) {
      uint32_t l = s->dirtyl[--s->ndirty];
      s->dirty[l] = 0;
      if (s->busy[l] || s->ready[l].n == 0)
        continue;
      uint32_t n = s->ready[l].v[0].id;
      if (a->cost[n] > 0) {
        if (!s->pending[l]) {
          s->pending[l] = 1;
          s->pendl[s->npend++] = l;
        }
        continue;
      }
      heap_pop(&s->ready[l]);
      start(s, next, last, n, t, &started);
      if (finish(s, n))
        goto out;
    }
    /* Then each free lane starts its ready operation of highest
     * priority. */
    for (uint32_t i = 0; i < s->npend; i++) {
      uint32_t l = s->pendl[i];
      s->pending[l] = 0;
      if (s->busy[l] || s->ready[l].n == 0)
        continue;
      uint32_t n = heap_pop(&s->ready[l]).id;
      start(s, next, last, n, t, &started);
      s->busy[l] = 1;
      heap_push(&ev, t + a->cost[n], n); /* never grows: one per lane */
    }
    s->npend = 0;
    if (ev.n == 0)
      break;
    item e = heap_pop(&ev);
    t = e.key;
    if (finish(s, e.id))
      goto out;
    while (ev.n && ev.v[0].key == t)
      if (finish(s, heap_pop(&ev).id))
        goto out;
  }
  /* Edges go forward in program order, so every op gets started. */
  st = started == nop ? RP_OK : RP_EINVAL;
out:
  free(last);
  free(ev.v);
  return st;
}

/* Slack from the schedule: how long an operation may start later than
 * scheduled without the makespan growing, the schedule's order on each lane
 * kept. Latest starts are computed backwards (reverse start order is a
 * reverse topological order of the edges plus the lane orders):
 * latest_end(n) = min(makespan, latest start of its successors and of the
 * next op on its lane); slack = latest_end - cost - start. Rounding errors
 * below 1e-9 of the makespan are snapped to 0. */
static void slack(rp_analysis *a, const uint32_t *next) {
  double ms = a->sum.makespan_us;
  double eps = 1e-9 * (ms > 1 ? ms : 1);
  double *ls = a->slack;
  for (uint32_t i = a->nop; i-- > 0;) {
    uint32_t n = a->order[i], ns;
    const rp_node *succ = rp_graph_succs(a->g, n, &ns);
    double lf = ms;
    for (uint32_t j = 0; j < ns; j++)
      if (ls[succ[j]] < lf)
        lf = ls[succ[j]];
    if (next[n] != RP_NONE && ls[next[n]] < lf)
      lf = ls[next[n]];
    ls[n] = lf - a->cost[n];
  }
  for (uint32_t n = 0; n < a->nop; n++) {
    double d = ls[n] - a->start[n];
    a->slack[n] = d < eps ? 0 : d;
  }
}

rp_status rp__analysis_schedule(rp_analysis *a) {
  uint32_t nop = a->nop, nl = a->nlane;
  state s = {a, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0};
  uint32_t *next = malloc(sizeof *next * (nop ? nop : 1));
  s.indeg = malloc(sizeof *s.indeg * (nop ? nop : 1));
  s.ready = calloc(nl ? nl : 1, sizeof *s.ready);
  s.busy = calloc(nl ? nl : 1, 1);
  s.dirty = calloc(nl ? nl : 1, 1);
  s.pending = calloc(nl ? nl : 1, 1);
  s.dirtyl = malloc(sizeof *s.dirtyl * (nl ? nl : 1));
  s.pendl = malloc(sizeof *s.pendl * (nl ? nl : 1));
  rp_status st = RP_ENOMEM;
  if (!next || !s.indeg || !s.ready || !s.busy || !s.dirty || !s.pending ||
      !s.dirtyl || !s.pendl)
    goto out;
  for (uint32_t n = 0; n < nop; n++)
    next[n] = RP_NONE;
  st = run(&s, next);
  if (st != RP_OK)
    goto out;
  double ms = 0;
  for (uint32_t n = 0; n < nop; n++)
    if (rp__end(a, n) > ms)
      ms = rp__end(a, n);
  a->sum.makespan_us = ms;
  slack(a, next);
out:
  if (s.ready)
    for (uint32_t l = 0; l < nl; l++)
      free(s.ready[l].v);
  free(s.ready);
  free(s.busy);
  free(s.dirty);
  free(s.pending);
  free(s.dirtyl);
  free(s.pendl);
  free(s.indeg);
  free(next);
  return st;
}
