/* Copies reshaped for devices with a cost per transfer: many small copies
 * in become one, one copy back becomes one per writer (transform/reshape.h).
 *
 * Why it is exact. A host->device copy c moved up to the place of an
 * earlier copy L changes what some operation sees only if an operation
 * between L and c accesses what c writes on the device (a read or write
 * there) or writes what c reads on the host; each of those has a hazard
 * with c, so it is an ancestor of c and comes after L. The plan moves c
 * only when every direct predecessor of c comes before L, hence every
 * ancestor. A merged copy covers exactly the bytes of the copies it
 * replaces (runs without gaps). A copy back split into pieces at its own
 * place copies the same bytes at the same point of program order. */
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "transform/reshape.h"

enum {
  MAX_IV = 256,   /* intervals of one access looked at */
  MAX_WALK = 4096 /* ancestors looked at for one copy back: beyond,
                         its writers count as dependent (kept whole), so
                         planning stays linear in the graph */
};

typedef struct span {
  uint64_t lo, hi;
  rp_node op;
} span;

/* A region the plan gives to op `op`; seq keeps their order. */
typedef struct extra {
  rp_node op;
  uint32_t seq;
  rp_buf buf;
  uint64_t lo, hi;
} extra;

typedef struct group {
  rp_node lead;
  rp_buf buf;
  span *m;
  uint32_t n, cap;
} group;

typedef struct planner {
  const rp_graph *g;
  uint64_t bytes;
  uint64_t run;             /* larger copies: merge runs up to this total
                                that feed no pipeline (0: never) */
  uint8_t *drop, *replaced; /* per op: merged away; own region replaced */
  extra *x;
  uint32_t nx, capx;
  group *gr;
  uint32_t ngr, capgr;
  uint64_t *iv; /* MAX_IV pairs */
  span *sp;
  uint32_t nsp, capsp;
  rp_node *owner; /* per op: the writer whose ancestor it is */
  rp_node *walk;  /* ops marked in owner, to unmark */
  uint32_t nwalk, capwalk;
} planner;

/* A copy's buffer and byte range, when its region is one range. */
static int copy_range(const rp_graph *g, rp_node n, rp_buf *buf, uint64_t *lo,
                      uint64_t *hi) {
  rp_access_info ai;
  uint64_t iv[2];
  if (rp_node_access(g, n, 0, &ai) != RP_OK ||
      rp_region_intervals(g, &ai.region, iv, 1) != 1 || !iv[1])
    return 0;
  *buf = ai.region.buf;
  *lo = iv[0];
  *hi = iv[0] + iv[1];
  return 1;
}

static int add_extra(planner *p, rp_node op, rp_buf buf, uint64_t lo,
                     uint64_t hi) {
  if (rp__grow((void **)&p->x, &p->capx, p->nx + 1, sizeof *p->x))
    return -1;
  p->x[p->nx] = (extra){op, p->nx, buf, lo, hi};
  p->nx++;
  return 0;
}

static int add_span(span **s, uint32_t *n, uint32_t *cap, uint64_t lo,
                    uint64_t hi, rp_node op) {
  if (rp__grow((void **)s, cap, *n + 1, sizeof **s))
    return -1;
  (*s)[(*n)++] = (span){lo, hi, op};
  return 0;
}

static int cmp_span(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : x->op < y->op ? -1 : 1;
}

static int cmp_extra(const void *a, const void *b) {
  const extra *x = a, *y = b;
  if (x->op != y->op)
    return x->op < y->op ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq ? 1 : 0;
}

/* Whether copy c feeds a pipeline: a kernel that reads what it brings in
 * is directly followed by a copy off the device (copy in -> kernel -> copy
 * out). Such a piece's chain may overlap the later pieces' transfers (and
 * the copies back run on the other engine), so the piece is worth its own
 * transfer; a piece whose kernels only feed more kernels gains at most
 * their (short) work against the transfers left, while each extra copy
 * pays the engine's fixed cost. */
static int feeds_pipeline(const rp_graph *g, rp_node c) {
  uint32_t ns;
  const rp_node *su = rp_graph_succs(g, c, &ns);
  for (uint32_t i = 0; i < ns; i++) {
    rp_node_info ki;
    if (rp_node_info_get(g, su[i], &ki) != RP_OK || ki.type != RP_OP_KERNEL)
      continue;
    uint32_t nk;
    const rp_node *ks = rp_graph_succs(g, su[i], &nk);
    for (uint32_t j = 0; j < nk; j++) {
      rp_node_info ci;
      if (rp_node_info_get(g, ks[j], &ci) == RP_OK &&
          (ci.type == RP_OP_COPY_D2H || ci.type == RP_OP_COPY_D2D))
        return 1;
    }
  }
  return 0;
}

/* Whether the run m[i .. j) merges: its copies average fewer than
 * p->bytes bytes (the fixed cost per copy dominates), or (p->run > 0) its
 * total is at most p->run bytes and no copy but the run's last in program
 * order feeds a pipeline (feeds_pipeline): then the pieces only add their
 * fixed cost per copy to the transfer. */
static int run_merges(const planner *p, const span *m, uint32_t i, uint32_t j,
                      uint64_t lo, uint64_t hi) {
  uint32_t cnt = j - i;
  if (cnt < 2)
    return 0;
  if ((hi - lo) / cnt < p->bytes)
    return 1;
  if (!p->run || hi - lo > p->run)
    return 0;
  rp_node last = m[i].op;
  for (uint32_t k = i + 1; k < j; k++)
    last = m[k].op > last ? m[k].op : last;
  for (uint32_t k = i; k < j; k++)
    if (m[k].op != last && feeds_pipeline(p->g, m[k].op))
      return 0;
  return 1;
}

/* The runs of group q without a gap: one copy each at the leader's place
 * when they merge (run_merges). */
static int close_group(planner *p, group *q) {
  if (q->n < 2)
    return 0;
  qsort(q->m, q->n, sizeof *q->m, cmp_span);
  for (uint32_t i = 0; i < q->n;) {
    uint32_t j = i + 1;
    uint64_t hi = q->m[i].hi;
    while (j < q->n && q->m[j].lo <= hi) {
      hi = q->m[j].hi > hi ? q->m[j].hi : hi;
      j++;
    }
    if (run_merges(p, q->m, i, j, q->m[i].lo, hi)) {
      if (add_extra(p, q->lead, q->buf, q->m[i].lo, hi))
        return -1;
      for (uint32_t k = i; k < j; k++) {
        if (q->m[k].op == q->lead)
          p->replaced[q->lead] = 1;
        else
          p->drop[q->m[k].op] = 1;
      }
    }
    i = j;
  }
  return 0;
}

/* Host->device copies: groups per buffer and device, then their runs. */
static int plan_merges(planner *p, const uint8_t *after_target) {
  const rp_graph *g = p->g;
  uint32_t nop = rp_graph_num_nodes(g), nbuf = rp_graph_num_buffers(g);
  unsigned ndev = rp_graph_num_devices(g);
  if (!ndev)
    return 0;
  int32_t *open = malloc((size_t)nbuf * ndev * sizeof *open);
  if (!open)
    return -1;
  memset(open, 0xff, (size_t)nbuf * ndev * sizeof *open);
  int rc = 0;
  for (rp_node n = 0; n < nop && !rc; n++) {
    rp_node_info ni;
    rp_buf b;
    uint64_t lo, hi;
    rp_node_info_get(g, n, &ni);
    if (ni.type != RP_OP_COPY_H2D || ni.device < 0 ||
        (unsigned)ni.device >= ndev || !copy_range(g, n, &b, &lo, &hi))
      continue;
    int32_t *o = &open[(size_t)b * ndev + (unsigned)ni.device];
    uint32_t np;
    const rp_node *pr = rp_graph_preds(g, n, &np);
    int joins = *o >= 0 && !after_target[n];
    for (uint32_t i = 0; joins && i < np; i++)
      joins = pr[i] < p->gr[*o].lead;
    if (!joins) {
      if (rp__grow((void **)&p->gr, &p->capgr, p->ngr + 1, sizeof *p->gr)) {
        rc = -1;
        break;
      }
      memset(&p->gr[p->ngr], 0, sizeof *p->gr);
      p->gr[p->ngr].lead = n;
      p->gr[p->ngr].buf = b;
      *o = (int32_t)p->ngr++;
    }
    group *q = &p->gr[*o];
    rc = add_span(&q->m, &q->n, &q->cap, lo, hi, n);
  }
  for (uint32_t i = 0; i < p->ngr && !rc; i++)
    rc = close_group(p, &p->gr[i]);
  free(open);
  return rc;
}

static int visit(planner *p, rp_node v, rp_node who, int *shared) {
  if (p->owner[v] != RP_NONE) {
    *shared |= p->owner[v] != who;
    return 0;
  }
  if (p->nwalk >= MAX_WALK) {
    *shared = 1; /* too far to tell: as if they met */
    return 0;
  }
  if (rp__grow((void **)&p->walk, &p->capwalk, p->nwalk + 1, sizeof *p->walk))
    return -1;
  p->owner[v] = who;
  p->walk[p->nwalk++] = v;
  return 0;
}

/* Whether the writers of spans sp[0 .. ns) are independent chains: no
 * operation is an ancestor of two of them, none an ancestor of another.
 * Only then may they end at different times, so that pieces leaving as
 * each ends gain anything (writers behind one common step end together,
 * and the pieces only add their cost per copy): 1, 0, or -1 (memory). */
static int independent(planner *p, uint32_t ns) {
  const rp_graph *g = p->g;
  int shared = 0;
  p->nwalk = 0;
  for (uint32_t i = 0; i < ns && !shared; i++)
    if (p->owner[p->sp[i].op] == RP_NONE &&
        visit(p, p->sp[i].op, p->sp[i].op, &shared))
      return -1;
  /* Depth first from the writers; walk[] doubles as the stack of what
   * is left to expand (every marked op is expanded once). */
  for (uint32_t at = 0; at < p->nwalk && !shared; at++) {
    rp_node v = p->walk[at];
    uint32_t np;
    const rp_node *pr = rp_graph_preds(g, v, &np);
    for (uint32_t i = 0; i < np && !shared; i++)
      if (visit(p, pr[i], p->owner[v], &shared))
        return -1;
  }
  for (uint32_t i = 0; i < p->nwalk; i++)
    p->owner[p->walk[i]] = RP_NONE;
  return !shared;
}

/* Device->host copy n: its pieces per writer when they are big enough
 * and their writers independent. */
static int plan_split(planner *p, rp_node n, int dev) {
  const rp_graph *g = p->g;
  rp_buf b;
  uint64_t lo, hi;
  if (!copy_range(g, n, &b, &lo, &hi))
    return 0;
  uint32_t np;
  const rp_node *pr = rp_graph_preds(g, n, &np);
  p->nsp = 0;
  for (uint32_t i = 0; i < np; i++) {
    rp_node_info pi;
    rp_node_info_get(g, pr[i], &pi);
    for (unsigned k = 0; k < pi.naccess; k++) {
      rp_access_info ai;
      rp_node_access(g, pr[i], k, &ai);
      if (ai.region.buf != b || ai.space != dev || ai.mode == RP_IN)
        continue;
      uint64_t m = rp_region_intervals(g, &ai.region, p->iv, MAX_IV);
      if (m > MAX_IV)
        return 0;
      for (uint64_t j = 0; j < m; j++) {
        uint64_t a = p->iv[2 * j], e = a + p->iv[2 * j + 1];
        a = a < lo ? lo : a;
        e = e > hi ? hi : e;
        if (a < e && add_span(&p->sp, &p->nsp, &p->capsp, a, e, pr[i]))
          return -1;
      }
    }
  }
  if (p->nsp < 2)
    return 0;
  qsort(p->sp, p->nsp, sizeof *p->sp, cmp_span);
  uint32_t w = 0;
  for (uint32_t i = 1; i < p->nsp; i++) {
    if (p->sp[i].lo < p->sp[w].hi)
      return 0; /* two writers of one byte: not one last writer per part */
    if (p->sp[i].lo == p->sp[w].hi && p->sp[i].op == p->sp[w].op)
      p->sp[w].hi = p->sp[i].hi;
    else
      p->sp[++w] = p->sp[i];
  }
  uint32_t ns = w + 1, pieces = 0;
  uint64_t at = lo, least = hi - lo;
  for (uint32_t i = 0; i <= ns; i++) {
    uint64_t a = i < ns ? p->sp[i].lo : hi;
    if (a > at) { /* bytes between writers: a piece of their own */
      least = a - at < least ? a - at : least;
      pieces++;
    }
    if (i < ns) {
      least = p->sp[i].hi - a < least ? p->sp[i].hi - a : least;
      pieces++;
      at = p->sp[i].hi;
    }
  }
  if (pieces < 2 || least < p->bytes)
    return 0;
  int ind = independent(p, ns);
  if (ind <= 0)
    return ind;
  at = lo;
  for (uint32_t i = 0; i <= ns; i++) {
    uint64_t a = i < ns ? p->sp[i].lo : hi;
    if (a > at && add_extra(p, n, b, at, a))
      return -1;
    if (i < ns) {
      if (add_extra(p, n, b, a, p->sp[i].hi))
        return -1;
      at = p->sp[i].hi;
    }
  }
  p->replaced[n] = 1;
  return 1;
}

void rp__reshape_free(rp__reshape *r) {
  if (!r)
    return;
  free(r->off);
  free(r->reg);
  memset(r, 0, sizeof *r);
}

/* The CSR of every op's regions: a copy's own unless dropped or replaced,
 * then its extras. */
static rp_status build(planner *p, rp__reshape *out) {
  const rp_graph *g = p->g;
  uint32_t nop = rp_graph_num_nodes(g);
  if (p->nx)
    qsort(p->x, p->nx, sizeof *p->x, cmp_extra);
  out->off = calloc((size_t)nop + 1, sizeof *out->off);
  out->reg = malloc(((size_t)nop + p->nx + 1) * sizeof *out->reg);
  if (!out->off || !out->reg)
    return RP_ENOMEM;
  uint32_t at = 0, xi = 0;
  for (rp_node n = 0; n < nop; n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    out->off[n] = at;
    int copy = ni.type == RP_OP_COPY_H2D || ni.type == RP_OP_COPY_D2H ||
               ni.type == RP_OP_COPY_D2D;
    if (copy && !p->drop[n] && !p->replaced[n]) {
      rp_access_info ai;
      rp_node_access(g, n, 0, &ai);
      out->reg[at++] = ai.region;
    }
    for (; xi < p->nx && p->x[xi].op == n; xi++)
      out->reg[at++] =
          rp_range_bytes(p->x[xi].buf, p->x[xi].lo, p->x[xi].hi - p->x[xi].lo);
  }
  out->off[nop] = at;
  return RP_OK;
}

rp_status rp__reshape_plan(const rp_graph *g, uint64_t bytes, uint64_t run,
                           rp__reshape *out) {
  memset(out, 0, sizeof *out);
  uint32_t nop = rp_graph_num_nodes(g), ne = rp_graph_num_edges(g);
  planner p;
  memset(&p, 0, sizeof p);
  p.g = g;
  p.bytes = bytes;
  p.run = run;
  p.drop = calloc((size_t)nop + 1, 1);
  p.replaced = calloc((size_t)nop + 1, 1);
  p.iv = malloc(2 * MAX_IV * sizeof *p.iv);
  p.owner = malloc(((size_t)nop + 1) * sizeof *p.owner);
  uint8_t *after_target = calloc((size_t)nop + 1, 1);
  rp_status st = RP_ENOMEM;
  if (!p.drop || !p.replaced || !p.iv || !p.owner || !after_target)
    goto done;
  memset(p.owner, 0xff, ((size_t)nop + 1) * sizeof *p.owner);
  for (uint32_t i = 0; i < ne; i++) {
    rp_edge e;
    rp_graph_edge(g, i, &e);
    if (e.kind == RP_EDGE_AFTER)
      after_target[e.from] = 1;
  }
  if (plan_merges(&p, after_target))
    goto done;
  for (rp_node n = 0; n < nop; n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    if (ni.type != RP_OP_COPY_D2H)
      continue;
    int r = plan_split(&p, n, ni.device);
    if (r < 0)
      goto done;
    out->split += (uint32_t)r;
  }
  for (rp_node n = 0; n < nop; n++)
    out->merged += p.drop[n];
  /* Nothing to change (every graph without copies, on cuda by default):
   * no regions to build. */
  st = out->merged + out->split ? build(&p, out) : RP_OK;
done:
  for (uint32_t i = 0; i < p.ngr; i++)
    free(p.gr[i].m);
  free(p.gr);
  free(p.x);
  free(p.sp);
  free(p.iv);
  free(p.owner);
  free(p.walk);
  free(p.drop);
  free(p.replaced);
  free(after_target);
  if (st != RP_OK)
    rp__reshape_free(out);
  return st;
}
