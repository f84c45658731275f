/* Checking hand-written dependencies: races the `after` edges leave open,
 * `after` edges no hazard needs, and what dropping those would gain. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analysis.h"

typedef struct pair {
  uint32_t from, to;
  rp_edge_kind kind;
  uint32_t buf;
  int space;
  uint64_t off, len;
} pair;

typedef struct aedge {
  uint32_t from, to;
} aedge;

struct rp_check {
  const rp_graph *g;
  rp_check_item *race, *extra;
  uint32_t nrace, nextra;
  uint32_t norders; /* distinct `after` edges checked; 0: nothing to */
  double written_us, minimal_us;
};

/* One access with its byte runs. */
typedef struct accx {
  uint32_t op, buf;
  int space;
  rp_mode mode;
  uint64_t *iv; /* (offset, length) pairs, increasing */
  uint64_t niv;
} accx;

static int acc_cmp(const void *x, const void *y) {
  const accx *a = x, *b = y;
  if (a->buf != b->buf)
    return a->buf < b->buf ? -1 : 1;
  if (a->space != b->space)
    return a->space < b->space ? -1 : 1;
  return a->op < b->op ? -1 : a->op > b->op;
}

static int pair_cmp(const void *x, const void *y) {
  const pair *a = x, *b = y;
  if (a->to != b->to)
    return a->to < b->to ? -1 : 1;
  if (a->from != b->from)
    return a->from < b->from ? -1 : 1;
  return 0;
}

/* First intersecting byte range of two run lists; 0 if none. */
static int intersect(const accx *a, const accx *b, uint64_t *off,
                     uint64_t *len) {
  uint64_t i = 0, j = 0;
  while (i < a->niv && j < b->niv) {
    uint64_t a0 = a->iv[2 * i], a1 = a0 + a->iv[2 * i + 1];
    uint64_t b0 = b->iv[2 * j], b1 = b0 + b->iv[2 * j + 1];
    uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    if (lo < hi) {
      *off = lo;
      *len = hi - lo;
      return 1;
    }
    if (a1 <= b1)
      i++;
    else
      j++;
  }
  return 0;
}

static rp_edge_kind hazard(rp_mode first, rp_mode second) {
  if ((first & RP_OUT) && (second & RP_IN))
    return RP_EDGE_RAW;
  if ((first & RP_IN) && (second & RP_OUT))
    return RP_EDGE_WAR;
  return RP_EDGE_WAW;
}

/* Every conflicting pair of operations, once each, sorted by (to, from). */
static rp_status conflicts(const rp_graph *g, pair **out, uint32_t *nout) {
  uint32_t nacc = 0;
  for (uint32_t n = 0; n < g->nop; n++)
    nacc += g->op[n].nacc;
  accx *ax = calloc(nacc ? nacc : 1, sizeof *ax);
  pair *p = NULL;
  uint32_t np = 0, cap = 0, k = 0;
  rp_status st = RP_ENOMEM;
  if (!ax)
    return st;
  for (uint32_t n = 0; n < g->nop; n++) {
    for (uint32_t i = 0; i < g->op[n].nacc; i++, k++) {
      accx *x = &ax[k];
      const rp__access a1 = rp__acc_get(g, n, i);
      x->op = n;
      x->buf = a1.region.buf;
      x->space = a1.space;
      x->mode = a1.mode;
      x->niv = rp_region_intervals(g, &a1.region, NULL, 0);
      x->iv = malloc(sizeof *x->iv * 2 * (x->niv ? x->niv : 1));
      if (!x->iv)
        goto out;
      rp_region_intervals(g, &a1.region, x->iv, x->niv);
    }
  }
  if (nacc > 1) /* qsort of a NULL array is undefined, even of 0 */
    qsort(ax, nacc, sizeof *ax, acc_cmp);
  for (uint32_t lo = 0; lo < nacc;) {
    uint32_t hi = lo;
    while (hi < nacc && ax[hi].buf == ax[lo].buf &&
           ax[hi].space == ax[lo].space)
      hi++;
    for (uint32_t i = lo; i < hi; i++)
      for (uint32_t j = i + 1; j < hi; j++) {
        const accx *a = &ax[i], *b = &ax[j];
        uint64_t off, len;
        /* Copies automatic coherence inserted are the recorder's, ordered
         * by it: no hand-written order is asked of them. */
        if (a->op == b->op || !((a->mode | b->mode) & RP_OUT) ||
            g->op[a->op].inserted || g->op[b->op].inserted ||
            !intersect(a, b, &off, &len))
          continue;
        if (np == cap) {
          uint32_t nc = cap ? cap * 2 : 64;
          pair *q = realloc(p, sizeof *p * nc);
          if (!q)
            goto out;
          p = q;
          cap = nc;
        }
        pair *e = &p[np++];
        e->from = a->op;
        e->to = b->op;
        e->kind = hazard(a->mode, b->mode);
        e->buf = a->buf;
        e->space = a->space;
        e->off = off;
        e->len = len;
      }
    lo = hi;
  }
  /* Once per pair of operations: the first found (lowest buffer). */
  if (np > 1) /* p is NULL when no accesses conflict */
    qsort(p, np, sizeof *p, pair_cmp);
  uint32_t w = 0;
  for (uint32_t i = 0; i < np; i++)
    if (!w || p[w - 1].from != p[i].from || p[w - 1].to != p[i].to)
      p[w++] = p[i];
  *out = p;
  *nout = w;
  p = NULL;
  st = RP_OK;
out:
  for (uint32_t i = 0; i < nacc; i++)
    free(ax[i].iv);
  free(ax);
  free(p);
  return st;
}

/* Ancestors through the `after` edges, bit sets of `words` words per op;
 * `skip` (an index into e, or UINT32_MAX) left out, and `dead` edges too. */
static void reach(const aedge *e, uint32_t ne, const uint8_t *dead,
                  uint32_t skip, uint32_t nop, uint32_t words, uint64_t *anc) {
  memset(anc, 0, sizeof *anc * words * nop);
  /* e is sorted by `to`, and from < to: one pass in program order. */
  for (uint32_t i = 0; i < ne; i++) {
    if (i == skip || (dead && dead[i]))
      continue;
    uint64_t *t = anc + (size_t)e[i].to * words;
    const uint64_t *f = anc + (size_t)e[i].from * words;
    for (uint32_t w = 0; w < words; w++)
      t[w] |= f[w];
    t[e[i].from / 64] |= 1ull << (e[i].from % 64);
  }
}

static int ordered(const uint64_t *anc, uint32_t words, uint32_t from,
                   uint32_t to) {
  return (anc[(size_t)to * words + from / 64] >> (from % 64)) & 1;
}

static int edge_cmp(const void *x, const void *y) {
  const aedge *a = x, *b = y;
  if (a->to != b->to)
    return a->to < b->to ? -1 : 1;
  return a->from < b->from ? -1 : a->from > b->from;
}

/* Predicted time of g ordered by the live edges of e only. */
static rp_status time_with(const rp_graph *g, const rp_analysis_opts *o,
                           const aedge *e, uint32_t ne, const uint8_t *dead,
                           uint32_t skip, double *us) {
  uint32_t nop = g->nop, m = 0;
  uint32_t *so = calloc(nop + 1, sizeof *so), *po = calloc(nop + 1, sizeof *po);
  rp_node *succ = malloc(sizeof *succ * (ne ? ne : 1));
  rp_node *pred = malloc(sizeof *pred * (ne ? ne : 1));
  uint32_t *sorted = malloc(sizeof *sorted * (ne ? ne : 1));
  uint32_t *fill = calloc(nop + 1, sizeof *fill);
  rp_status st = RP_ENOMEM;
  if (!so || !po || !succ || !pred || !sorted || !fill)
    goto out;
  for (uint32_t i = 0; i < ne; i++)
    if (i != skip && !(dead && dead[i])) {
      so[e[i].from + 1]++;
      po[e[i].to + 1]++;
      m++;
    }
  for (uint32_t n = 0; n < nop; n++) {
    so[n + 1] += so[n];
    po[n + 1] += po[n];
  }
  for (uint32_t i = 0; i < ne; i++) /* e sorted by to: preds in order */
    if (i != skip && !(dead && dead[i]))
      pred[po[e[i].to] + fill[e[i].to]++] = e[i].from;
  memset(fill, 0, sizeof *fill * (nop + 1));
  uint32_t k = 0;
  for (uint32_t i = 0; i < ne; i++)
    if (i != skip && !(dead && dead[i])) {
      succ[so[e[i].from] + fill[e[i].from]++] = e[i].to;
      /* the edge's kind, encoded as rp_graph_edge() reads it */
      sorted[k++] = (uint32_t)RP_EDGE_AFTER << 30;
    }
  {
    /* A view of g with these edges only (the analysis reads the graph's
     * ops and its successor and predecessor lists). */
    rp_graph v = *g;
    v.succ_off = so;
    v.succ = succ;
    v.pred_off_end = po;
    v.pred = pred;
    v.ekind = sorted;
    v.nedge = m;
    v.track = NULL;
    rp_analysis *a = NULL;
    st = rp_analyze(&v, o, &a);
    if (st == RP_OK) {
      rp_summary s;
      rp_analysis_summary(a, &s);
      *us = s.modelled ? s.model_overlap_us : s.makespan_us;
    }
    rp_analysis_destroy(a);
  }
out:
  free(so);
  free(po);
  free(succ);
  free(pred);
  free(sorted);
  free(fill);
  return st;
}

void rp_check_destroy(rp_check *c) {
  if (!c)
    return;
  free(c->race);
  free(c->extra);
  free(c);
}

/* The work of rp_check_deps: the graph's written orders and conflicts,
 * the reachability scratch, the report being filled. */
typedef struct dep_check {
  const rp_graph *g;
  const rp_analysis_opts *o;
  uint32_t nop, words, ne, np;
  aedge *e;      /* the written orders, sorted, each once */
  pair *p;       /* the conflicts */
  uint64_t *anc; /* reachability over every written order */
  uint64_t *alt; /* reachability over some of them */
  uint8_t *dead; /* per written order: dropped from the minimal set */
  rp_check *c;
} dep_check;

static void dep_check_free(dep_check *d) {
  free(d->e);
  free(d->anc);
  free(d->alt);
  free(d->dead);
  free(d->p);
}

/* The hand-written orders (after edges), sorted, each once. */
static rp_status written_orders(dep_check *d) {
  const rp_graph *g = d->g;
  aedge *e = d->e;
  uint32_t ne = 0;
  for (uint32_t n = 0; n < d->nop; n++)
    for (uint32_t i = 0; i < g->op[n].nafter; i++) {
      uint32_t f = g->after[g->op[n].after0 + i];
      if (f >= n) /* the recorder refuses these; a loaded file too */
        return RP_EINVAL;
      e[ne].from = f;
      e[ne++].to = n;
    }
  if (ne > 1)
    qsort(e, ne, sizeof *e, edge_cmp);
  uint32_t w = 0; /* duplicates of one edge: keep one */
  for (uint32_t i = 0; i < ne; i++)
    if (!w || e[w - 1].from != e[i].from || e[w - 1].to != e[i].to)
      e[w++] = e[i];
  d->ne = w;
  return RP_OK;
}

/* The conflicts no written order (nor its transitive closure) orders. */
static void find_races(dep_check *d) {
  rp_check *c = d->c;
  for (uint32_t i = 0; i < d->np; i++) {
    const pair *q = &d->p[i];
    if (ordered(d->anc, d->words, q->from, q->to))
      continue;
    rp_check_item *r = &c->race[c->nrace++];
    memset(r, 0, sizeof *r);
    r->from = q->from;
    r->to = q->to;
    r->kind = q->kind;
    r->buf = q->buf;
    r->space = q->space;
    r->offset = q->off;
    r->bytes = q->len;
  }
}

/* Does every conflict ordered by all written orders stay ordered by those
 * reachability @p alt holds? */
static int keeps_order(const dep_check *d) {
  for (uint32_t i = 0; i < d->np; i++)
    if (ordered(d->anc, d->words, d->p[i].from, d->p[i].to) &&
        !ordered(d->alt, d->words, d->p[i].from, d->p[i].to))
      return 0;
  return 1;
}

/* Each edge alone: superfluous if every ordered conflict stays ordered
 * without it; its gain, the time saved without it. */
static rp_status find_extras(dep_check *d) {
  rp_check *c = d->c;
  const aedge *e = d->e;
  for (uint32_t k = 0; k < d->ne; k++) {
    reach(e, d->ne, NULL, k, d->nop, d->words, d->alt);
    if (!keeps_order(d))
      continue;
    rp_check_item *x = &c->extra[c->nextra++];
    memset(x, 0, sizeof *x);
    x->from = e[k].from;
    x->to = e[k].to;
    x->kind = RP_EDGE_AFTER;
    x->buf = RP_NONE;
    x->space = RP_SPACE_HOST;
    x->implied = ordered(d->alt, d->words, e[k].from, e[k].to);
    double t;
    rp_status st = time_with(d->g, d->o, e, d->ne, NULL, k, &t);
    if (st)
      return st;
    x->gain_us = c->written_us - t > 0 ? c->written_us - t : 0;
  }
  return RP_OK;
}

/* All superfluous edges dropped, one at a time (each re-checked, since two
 * edges may each be superfluous only while the other stays). */
static void minimal_orders(dep_check *d) {
  for (uint32_t k = 0; k < d->ne; k++) {
    d->dead[k] = 1;
    reach(d->e, d->ne, d->dead, UINT32_MAX, d->nop, d->words, d->alt);
    if (!keeps_order(d))
      d->dead[k] = 0;
  }
}

/* Races, superfluous orders and the times with all, each and none of
 * them, once the written orders are known (d->ne > 0). */
static rp_status judge_orders(dep_check *d) {
  rp_check *c = d->c;
  rp_status st = conflicts(d->g, &d->p, &d->np);
  if (st != RP_OK)
    return st;
  reach(d->e, d->ne, NULL, UINT32_MAX, d->nop, d->words, d->anc);
  c->race = malloc(sizeof *c->race * (d->np ? d->np : 1));
  c->extra = malloc(sizeof *c->extra * d->ne);
  if (!c->race || !c->extra)
    return RP_ENOMEM;
  find_races(d);
  if ((st = time_with(d->g, d->o, d->e, d->ne, NULL, UINT32_MAX,
                      &c->written_us)))
    return st;
  if ((st = find_extras(d)))
    return st;
  minimal_orders(d);
  return time_with(d->g, d->o, d->e, d->ne, d->dead, UINT32_MAX,
                   &c->minimal_us);
}

rp_status rp_check_deps(const rp_graph *g, const rp_analysis_opts *o,
                        rp_check **out) {
  RP_ENTER();
  if (!out)
    return RP_NULL_ARG();
  *out = NULL;
  if (!g)
    return RP_EINVAL;
  if (!g->ended)
    return RP_ESTATE;
  if (g->nop > RP_CHECK_MAX_OPS)
    return RP_EINVAL;
  dep_check d = {.g = g, .o = o, .nop = g->nop};
  uint32_t ne = 0;
  d.words = (d.nop + 63) / 64;
  for (uint32_t n = 0; n < d.nop; n++)
    ne += g->op[n].nafter;
  d.c = calloc(1, sizeof *d.c);
  d.e = malloc(sizeof *d.e * (ne ? ne : 1));
  d.anc = malloc(sizeof *d.anc * ((size_t)d.words * d.nop + 1));
  d.alt = malloc(sizeof *d.alt * ((size_t)d.words * d.nop + 1));
  d.dead = calloc(ne ? ne : 1, 1);
  rp_status st = RP_ENOMEM;
  if (d.c && d.e && d.anc && d.alt && d.dead) {
    d.c->g = g;
    st = written_orders(&d);
  }
  if (st == RP_OK) {
    d.c->norders = d.ne;
    /* no hand-written order: the derived ones are the whole */
    if (d.ne)
      st = judge_orders(&d);
  }
  dep_check_free(&d);
  if (st != RP_OK) {
    rp_check_destroy(d.c);
    return st;
  }
  *out = d.c;
  return RP_OK;
}

uint32_t rp_check_num_races(const rp_check *c) { return c ? c->nrace : 0; }
uint32_t rp_check_num_orders(const rp_check *c) { return c ? c->norders : 0; }
uint32_t rp_check_num_superfluous(const rp_check *c) {
  return c ? c->nextra : 0;
}

rp_status rp_check_race(const rp_check *c, uint32_t i, rp_check_item *out) {
  RP_ENTER();
  if (!c || !out || i >= c->nrace)
    return RP_BAD_ARG();
  *out = c->race[i];
  return RP_OK;
}

rp_status rp_check_superfluous(const rp_check *c, uint32_t i,
                               rp_check_item *out) {
  RP_ENTER();
  if (!c || !out || i >= c->nextra)
    return RP_BAD_ARG();
  *out = c->extra[i];
  return RP_OK;
}

void rp_check_times(const rp_check *c, double *as_written_us,
                    double *minimal_us) {
  if (as_written_us)
    *as_written_us = c ? c->written_us : 0;
  if (minimal_us)
    *minimal_us = c ? c->minimal_us : 0;
}

static const char *op_name(const rp_graph *g, uint32_t n) {
  return g->op[n].name ? g->op[n].name : "";
}

static void space_name(int s, char *b, size_t n) {
  if (s == RP_SPACE_HOST)
    snprintf(b, n, "host");
  else
    snprintf(b, n, "device:%d", s);
}

rp_status rp_check_write_text(const rp_check *c, FILE *fp) {
  RP_ENTER();
  if (!c || !fp)
    return RP_NULL_ARG();
  const rp_graph *g = c->g;
  if (!c->norders) {
    fprintf(fp,
            "no hand-written orders to check: no operation has an "
            "`after` list, so every\norder of the %u operations is one "
            "of the %u that reprise derives from their\naccesses (RAW, "
            "WAR, WAW), and a replay has no race. The check is for\n"
            "programs transcribed with their own orders (streams and "
            "events as `after`\nlists).\n",
            g->nop, g->nedge);
    return ferror(fp) ? RP_EIO : RP_OK;
  }
  fprintf(fp, "hand-written orders checked: %u\n", c->norders);
  fprintf(fp, "races (orders missing): %u\n", c->nrace);
  for (uint32_t i = 0; i < c->nrace; i++) {
    const rp_check_item *r = &c->race[i];
    char sp[24];
    space_name(r->space, sp, sizeof sp);
    fprintf(fp, "  %s: #%u %s -> #%u %s on %s in %s, bytes [%llu, %llu)\n",
            rp_edge_kind_name(r->kind), r->from, op_name(g, r->from), r->to,
            op_name(g, r->to), r->buf < g->nbuf ? g->buf[r->buf].name : "?", sp,
            (unsigned long long)r->offset,
            (unsigned long long)r->offset + (unsigned long long)r->bytes);
  }
  fprintf(fp, "superfluous orders (no hazard needs them): %u\n", c->nextra);
  for (uint32_t i = 0; i < c->nextra; i++) {
    const rp_check_item *x = &c->extra[i];
    fprintf(fp, "  after: #%u %s -> #%u %s: ", x->from, op_name(g, x->from),
            x->to, op_name(g, x->to));
    if (x->implied)
      fprintf(fp, "implied by other orders (no gain)\n");
    else
      fprintf(fp, "dropping it gains %.3f us\n", x->gain_us);
  }
  fprintf(fp,
          "predicted time as written %.3f us, with every superfluous "
          "order dropped %.3f us\n",
          c->written_us, c->minimal_us);
  return ferror(fp) ? RP_EIO : RP_OK;
}

rp_status rp_check_write_json(const rp_check *c, FILE *fp) {
  RP_ENTER();
  if (!c || !fp)
    return RP_NULL_ARG();
  const rp_graph *g = c->g;
  fprintf(fp,
          "{\"format\": \"reprise-check\", \"version\": 1,\n "
          "\"orders\": %u, \"races\": [",
          c->norders);
  for (uint32_t i = 0; i < c->nrace; i++) {
    const rp_check_item *r = &c->race[i];
    char sp[24];
    space_name(r->space, sp, sizeof sp);
    fprintf(fp,
            "%s\n  {\"from\": %u, \"to\": %u, \"kind\": \"%s\", "
            "\"buffer\": %u, \"space\": \"%s\", \"offset\": %llu, "
            "\"bytes\": %llu, \"from_name\": ",
            i ? "," : "", r->from, r->to, rp_edge_kind_name(r->kind), r->buf,
            sp, (unsigned long long)r->offset, (unsigned long long)r->bytes);
    rp__put_json_str(fp, op_name(g, r->from));
    fputs(", \"to_name\": ", fp);
    rp__put_json_str(fp, op_name(g, r->to));
    fputc('}', fp);
  }
  fputs("],\n \"superfluous\": [", fp);
  for (uint32_t i = 0; i < c->nextra; i++) {
    const rp_check_item *x = &c->extra[i];
    fprintf(fp,
            "%s\n  {\"from\": %u, \"to\": %u, \"implied\": %s, "
            "\"gain_us\": ",
            i ? "," : "", x->from, x->to, x->implied ? "true" : "false");
    rp__put_num(fp, x->gain_us);
    fputc('}', fp);
  }
  fputs("],\n \"as_written_us\": ", fp);
  rp__put_num(fp, c->written_us);
  fputs(", \"minimal_us\": ", fp);
  rp__put_num(fp, c->minimal_us);
  fputs("}\n", fp);
  return ferror(fp) ? RP_EIO : RP_OK;
}
