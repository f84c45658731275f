/* Property tests of the analysis on random graphs against brute force. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"
#include "reprise/backend.h"

#define MAXN 256 /* ops in a small random graph, coherence too */
#define W (MAXN / 64)
#define NBUF 4
#define MAXACC 8

typedef struct rng {
  uint64_t s;
} rng;

static uint64_t next64(rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 0x2545F4914F6CDD1DULL;
}
static unsigned rnd(rng *r, unsigned n) { return (unsigned)(next64(r) % n); }

static void nop_cpu(const rp_kargs *a, const uint64_t lo[3],
                    const uint64_t hi[3]) {}
static void nop_host(void *user, void *const *ptrs) {}

static const rp_param p1[] = {{"a", RP_INOUT}};
static const rp_param p2[] = {{"a", RP_IN}, {"b", RP_OUT}};
static const rp_param p3[] = {
    {"a", RP_IN}, {"b", RP_IN}, {"c", RP_INOUT}, {"s", RP_SCALAR}};
static const rp_kernel kernels[3] = {
    RP_KERNEL_WITH(.name = "k1", .nparams = 1, .params = p1, .cpu = nop_cpu),
    RP_KERNEL_WITH(.name = "k2", .nparams = 2, .params = p2, .cpu = nop_cpu),
    RP_KERNEL_WITH(.name = "k3", .nparams = 4, .params = p3, .cpu = nop_cpu)};

static unsigned char mem_v[256], mem_m[256], mem_t[128];

/* Buffers: v (256 bytes, 1-d), m (8 x 8 of 4 bytes), t (4 x 4 x 4 of 2
 * bytes), i (64 bytes, internal: device images only). */
static void add_buffers(rp_graph *g) {
  rp_buf b;
  cr_assert_eq(rp_buffer_register(g, "v", mem_v, 256, &b), RP_OK);
  cr_assert_eq(rp_buffer_register_2d(g, "m", mem_m, 8, 8, 4, &b), RP_OK);
  rp_buffer_desc t = {"t", mem_t, 128, 2, 3, {4, 4, 4}};
  cr_assert_eq(rp_buffer_add(g, &t, &b), RP_OK);
  rp_buffer_desc i = {"i", NULL, 64, 1, 0, {0, 0, 0}};
  cr_assert_eq(rp_buffer_add(g, &i, &b), RP_OK);
}

static rp_region rand_region(rng *r, rp_buf b) {
  static const uint64_t size[NBUF] = {256, 256, 128, 64};
  unsigned k = rnd(r, 8);
  if (k == 0)
    return rp_whole(b);
  if (b == 1 && k < 5) {
    uint64_t r0 = rnd(r, 8), c0 = rnd(r, 8);
    uint64_t r1 = r0 + 1 + rnd(r, 8 - r0), c1 = c0 + 1 + rnd(r, 8 - c0);
    return rp_box2(b, r0, r1, c0, c1);
  }
  if (b == 2 && k < 5) {
    uint64_t lo[3], hi[3];
    for (int d = 0; d < 3; d++) {
      lo[d] = rnd(r, 4);
      hi[d] = lo[d] + 1 + rnd(r, 4 - (unsigned)lo[d]);
    }
    return rp_box(b, 3, lo, hi);
  }
  uint64_t off = rnd(r, (unsigned)size[b]);
  uint64_t len = 1 + rnd(r, (unsigned)(size[b] - off));
  return rp_bytes(b, off, len);
}

typedef struct gen {
  rp_graph *g;
  uint32_t nafter;
  rp_node after_from[4 * MAXN], after_to[4 * MAXN];
} gen;

/* Records up to @p nops random operations of every type over two devices,
 * with random given costs and explicit `after` edges. Calls the recorder
 * rejects (an internal buffer on the host, say) are skipped. */
static void random_graph(gen *gn, rng *r, unsigned nops, unsigned flags) {
  rp_graph *g = NULL;
  cr_assert_eq(rp_graph_create(&g, flags), RP_OK);
  add_buffers(g);
  gn->g = g;
  gn->nafter = 0;
  for (unsigned k = 0; k < nops; k++) {
    rp_node after[2];
    rp_op_opts o = RP_OP_OPTS_WITH(.after = after);
    uint32_t have = rp_graph_num_nodes(g);
    if (have && rnd(r, 4) == 0) {
      o.nafter = 1 + rnd(r, 2);
      for (unsigned i = 0; i < o.nafter; i++)
        after[i] = rnd(r, have);
    }
    if (rnd(r, 2))
      o.cost_us = 1 + rnd(r, 20);
    int dev = (int)rnd(r, 2);
    rp_buf hb = rnd(r, 3); /* buffers with a host image */
    rp_node n = RP_NONE;
    rp_status s;
    switch (rnd(r, 5)) {
    case 0: {
      const rp_kernel *kd = &kernels[rnd(r, 3)];
      rp_arg args[4];
      for (unsigned p = 0; p < kd->nparams; p++)
        args[p] = kd->params[p].mode == RP_SCALAR
                      ? rp_arg_f64(1.5)
                      : rp_arg_buf(rand_region(r, rnd(r, NBUF)));
      s = rp_record_kernel(g, kd, dev, rp_dims3(4, 1, 1), args, &o, &n);
      break;
    }
    case 1:
      s = rp_record_copy_to_device(g, rand_region(r, hb), dev, &o, &n);
      break;
    case 2:
      s = rp_record_copy_to_host(g, rand_region(r, hb), dev, &o, &n);
      break;
    case 3:
      s = rp_record_copy_peer(g, rand_region(r, rnd(r, NBUF)), dev, 1 - dev, &o,
                              &n);
      break;
    default: {
      static const rp_mode modes[3] = {RP_IN, RP_OUT, RP_INOUT};
      rp_access acc[2];
      unsigned na = 1 + rnd(r, 2);
      for (unsigned i = 0; i < na; i++) {
        acc[i].region = rand_region(r, rnd(r, 3));
        acc[i].mode = modes[rnd(r, 3)];
      }
      s = rp_record_host(g, nop_host, NULL, acc, na, &o, &n);
      break;
    }
    }
    if (s != RP_OK)
      continue;
    cr_assert_lt(rp_graph_num_nodes(g), MAXN);
    for (unsigned i = 0; i < o.nafter; i++) {
      gn->after_from[gn->nafter] = after[i];
      gn->after_to[gn->nafter++] = n;
    }
  }
  cr_assert_eq(rp_graph_end(g), RP_OK);
}

/* ---- brute force ------------------------------------------------------ */

typedef struct bacc {
  rp_buf buf;
  int space, write;
  uint64_t bytes[4]; /* bitmap over the buffer's (at most 256) bytes */
} bacc;

typedef struct bop {
  rp_node_info info;
  unsigned nacc;
  bacc acc[MAXACC];
} bop;

static void set_bits(uint64_t *bm, uint64_t off, uint64_t len) {
  for (uint64_t i = off; i < off + len; i++)
    bm[i / 64] |= 1ULL << (i % 64);
}

static void region_bits(const rp_graph *g, const rp_region *r, uint64_t *bm) {
  rp_buffer_desc d;
  cr_assert_eq(rp_buffer_info(g, r->buf, &d), RP_OK);
  cr_assert_leq(d.bytes, 256);
  uint64_t e = d.elem ? d.elem : 1;
  memset(bm, 0, 4 * sizeof *bm);
  if (r->kind == RP_REGION_BYTES) {
    set_bits(bm, r->offset, r->bytes);
  } else if (r->kind == RP_REGION_WHOLE) {
    set_bits(bm, 0, d.bytes);
  } else {
    uint64_t lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1}, dim[3] = {1, 1, 1};
    for (unsigned i = 0; i < r->ndims; i++) {
      lo[3 - r->ndims + i] = r->lo[i];
      hi[3 - r->ndims + i] = r->hi[i];
      dim[3 - r->ndims + i] = d.dims[i];
    }
    for (uint64_t a = lo[0]; a < hi[0]; a++)
      for (uint64_t b = lo[1]; b < hi[1]; b++)
        for (uint64_t c = lo[2]; c < hi[2]; c++)
          set_bits(bm, ((a * dim[1] + b) * dim[2] + c) * e, e);
  }
}

static void load_ops(const rp_graph *g, bop *ops) {
  uint32_t n = rp_graph_num_nodes(g);
  for (uint32_t i = 0; i < n; i++) {
    cr_assert_eq(rp_node_info_get(g, i, &ops[i].info), RP_OK);
    ops[i].nacc = ops[i].info.naccess;
    cr_assert_leq(ops[i].nacc, MAXACC);
    for (unsigned k = 0; k < ops[i].nacc; k++) {
      rp_access_info ai;
      cr_assert_eq(rp_node_access(g, i, k, &ai), RP_OK);
      ops[i].acc[k].buf = ai.region.buf;
      ops[i].acc[k].space = ai.space;
      ops[i].acc[k].write = ai.mode == RP_OUT || ai.mode == RP_INOUT;
      region_bits(g, &ai.region, ops[i].acc[k].bytes);
    }
  }
}

static int conflict(const bop *x, const bop *y) {
  for (unsigned i = 0; i < x->nacc; i++)
    for (unsigned j = 0; j < y->nacc; j++) {
      const bacc *a = &x->acc[i], *b = &y->acc[j];
      if (a->buf != b->buf || a->space != b->space || !(a->write || b->write))
        continue;
      for (int w = 0; w < 4; w++)
        if (a->bytes[w] & b->bytes[w])
          return 1;
    }
  return 0;
}

static uint64_t popcount_bm(const uint64_t *bm) {
  uint64_t c = 0;
  for (int w = 0; w < 4; w++)
    c += (uint64_t)__builtin_popcountll(bm[w]);
  return c;
}

/* Transitive closure of a relation given as direct successor bitsets;
 * edges go forward in id order. */
static void closure(uint64_t (*rel)[W], uint32_t n) {
  for (uint32_t i = n; i-- > 0;)
    for (uint32_t j = i + 1; j < n; j++)
      if (rel[i][j / 64] >> (j % 64) & 1)
        for (int w = 0; w < W; w++)
          rel[i][w] |= rel[j][w];
}

static const char *expect_lane(const rp_node_info *in, unsigned engines,
                               char *buf) {
  switch (in->type) {
  case RP_OP_KERNEL:
    sprintf(buf, "compute:%d", in->device);
    break;
  case RP_OP_COPY_H2D:
    sprintf(buf, "%s:%d", engines == 1 ? "copy" : "h2d", in->device);
    break;
  case RP_OP_COPY_D2H:
    sprintf(buf, "%s:%d", engines == 1 ? "copy" : "d2h", in->device);
    break;
  case RP_OP_COPY_D2D:
    sprintf(buf, "p2p:%d", in->device);
    break;
  default:
    sprintf(buf, "host");
  }
  return buf;
}

static int close_to(double x, double y) {
  return fabs(x - y) <= 1e-9 * fmax(1, fmax(fabs(x), fabs(y)));
}

typedef struct sched_op {
  double start, end;
  uint32_t id;
} sched_op;

static int by_start(const void *x, const void *y) {
  const sched_op *a = x, *b = y;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  if (a->end != b->end)
    return a->end < b->end ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

/* Schedule validity, checked on any size of graph: every edge respected,
 * one op at a time per lane, no lane idle while one of its ops is ready,
 * makespan between the bound's limit and the serial time. */
static void check_schedule(const rp_graph *g, const rp_analysis *a) {
  uint32_t n = rp_graph_num_nodes(g), nl = rp_analysis_num_lanes(a);
  rp_summary s;
  rp_analysis_summary(a, &s);
  rp_op_sched *o = malloc(sizeof *o * (n ? n : 1));
  sched_op *sl = malloc(sizeof *sl * (n ? n : 1));
  uint32_t *lane_off = calloc(nl + 1, sizeof *lane_off);
  double maxend = 0;
  for (uint32_t i = 0; i < n; i++) {
    cr_assert_eq(rp_analysis_op(a, i, &o[i]), RP_OK);
    cr_assert_lt(o[i].lane, nl);
    cr_assert_eq(o[i].end_us, o[i].start_us + o[i].cost_us);
    cr_assert_geq(o[i].start_us, 0);
    cr_assert_geq(o[i].slack_us, 0);
    maxend = fmax(maxend, o[i].end_us);
    lane_off[o[i].lane + 1]++;
  }
  cr_assert_eq(s.makespan_us, maxend);
  cr_assert_geq(s.makespan_us + 1e-9 * fmax(1, s.makespan_us),
                fmax(s.critical_path_us, s.max_lane_us));
  cr_assert_leq(s.makespan_us, s.serial_us * (1 + 1e-12) + 1e-9);
  for (uint32_t i = 0; i < rp_graph_num_edges(g); i++) {
    rp_edge e;
    cr_assert_eq(rp_graph_edge(g, i, &e), RP_OK);
    cr_assert_geq(o[e.to].start_us, o[e.from].end_us, "edge %u -> %u", e.from,
                  e.to);
    /* slack never lets an op push a successor past its latest start */
    cr_assert_leq(o[e.from].end_us + o[e.from].slack_us,
                  o[e.to].start_us + o[e.to].slack_us + 1e-9 * fmax(1, maxend));
  }
  for (uint32_t l = 0; l < nl; l++)
    lane_off[l + 1] += lane_off[l];
  uint32_t *fill = calloc(nl + 1, sizeof *fill);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t l = o[i].lane;
    sched_op so = {o[i].start_us, o[i].end_us, i};
    sl[lane_off[l] + fill[l]++] = so;
  }
  int ends_at_makespan_tight = n == 0;
  for (uint32_t l = 0; l < nl; l++) {
    sched_op *v = sl + lane_off[l];
    uint32_t m = lane_off[l + 1] - lane_off[l];
    qsort(v, m, sizeof *v, by_start);
    for (uint32_t k = 0; k + 1 < m; k++) {
      cr_assert_leq(v[k].end, v[k + 1].start, "lane %u overlaps", l);
      /* later ops on the lane start after this one's latest end */
      if (v[k + 1].start > v[k].start)
        cr_assert_leq(v[k].end + o[v[k].id].slack_us,
                      v[k + 1].start + o[v[k + 1].id].slack_us +
                          1e-9 * fmax(1, maxend));
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    cr_assert_leq(o[i].end_us + o[i].slack_us,
                  s.makespan_us * (1 + 1e-9) + 1e-9);
    if (o[i].end_us == s.makespan_us && o[i].slack_us == 0)
      ends_at_makespan_tight = 1;
    /* Non-delay: between the time the op is ready and its start, its lane
     * is busy without a gap. */
    uint32_t np;
    const rp_node *p = rp_graph_preds(g, i, &np);
    double t = 0;
    for (uint32_t k = 0; k < np; k++)
      t = fmax(t, o[p[k]].end_us);
    cr_assert_geq(o[i].start_us, t);
    const sched_op *v = sl + lane_off[o[i].lane];
    uint32_t m = lane_off[o[i].lane + 1] - lane_off[o[i].lane];
    for (uint32_t k = 0; k < m && t < o[i].start_us; k++)
      if (v[k].start <= t && v[k].end > t)
        t = v[k].end;
    cr_assert_geq(t, o[i].start_us, "op %u waits on an idle lane", i);
  }
  cr_assert(ends_at_makespan_tight);
  free(fill);
  free(lane_off);
  free(sl);
  free(o);
}

typedef struct check_opts {
  rp_analysis_opts ao;
  double measured[MAXN];
} check_opts;

/* Everything against brute force, on a small graph. */
static void check_all(const gen *gn, const check_opts *co) {
  const rp_graph *g = gn->g;
  const rp_analysis_opts *ao = &co->ao;
  uint32_t n = rp_graph_num_nodes(g);
  cr_assert_leq(n, MAXN);
  static bop ops[MAXN];
  static uint64_t want[MAXN][W], have[MAXN][W];
  load_ops(g, ops);

  /* Edges: their closure is the closure of conflicts plus afters. */
  memset(want, 0, sizeof want);
  memset(have, 0, sizeof have);
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = i + 1; j < n; j++)
      if (conflict(&ops[i], &ops[j]))
        want[i][j / 64] |= 1ULL << (j % 64);
  for (uint32_t k = 0; k < gn->nafter; k++) {
    rp_node f = gn->after_from[k], t = gn->after_to[k];
    want[f][t / 64] |= 1ULL << (t % 64);
  }
  for (uint32_t i = 0; i < rp_graph_num_edges(g); i++) {
    rp_edge e;
    cr_assert_eq(rp_graph_edge(g, i, &e), RP_OK);
    cr_assert_lt(e.from, e.to);
    have[e.from][e.to / 64] |= 1ULL << (e.to % 64);
  }
  closure(want, n);
  closure(have, n);
  for (uint32_t i = 0; i < n; i++)
    cr_assert_arr_eq(want[i], have[i], sizeof want[i],
                     "reachability from op %u differs", i);

  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(g, ao, &a), RP_OK);
  rp_summary s;
  rp_analysis_summary(a, &s);

  /* Costs and lanes. */
  double cost[MAXN], serial = 0, tk = 0, tc = 0;
  char names[MAXN][16], lane[16];
  double busy[MAXN];
  uint32_t nl = 0;
  for (uint32_t i = 0; i < n; i++) {
    const rp_node_info *in = &ops[i].info;
    rp_op_sched o;
    cr_assert_eq(rp_analysis_op(a, i, &o), RP_OK);
    double c;
    rp_cost_source src;
    if (ao->measured_us && ao->measured_us[i] >= 0) {
      c = ao->measured_us[i];
      src = RP_COST_MEASURED;
    } else if (in->cost_us >= 0) {
      c = in->cost_us;
      src = RP_COST_GIVEN;
    } else if (in->type == RP_OP_KERNEL || in->type == RP_OP_HOST) {
      c = in->type == RP_OP_KERNEL ? ao->kernel_us : ao->host_us;
      src = RP_COST_DEFAULT;
    } else {
      double gbps = in->type == RP_OP_COPY_H2D   ? ao->h2d_gbps
                    : in->type == RP_OP_COPY_D2H ? ao->d2h_gbps
                                                 : ao->p2p_gbps;
      uint64_t bytes = 0;
      for (unsigned k = 0; k < ops[i].nacc; k++)
        if (ops[i].acc[k].write)
          bytes = popcount_bm(ops[i].acc[k].bytes);
      c = (double)bytes / (gbps * 1e3);
      src = RP_COST_MODELLED;
    }
    cr_assert_eq(o.cost_us, c, "op %u", i);
    cr_assert_eq(o.source, src, "op %u", i);
    cost[i] = c;
    serial += c;
    if (in->type == RP_OP_KERNEL)
      tk += c;
    else if (in->type != RP_OP_HOST)
      tc += c;
    expect_lane(in, ao->copy_engines, lane);
    const char *got;
    cr_assert_eq(rp_analysis_lane(a, o.lane, &got, NULL), RP_OK);
    cr_assert_str_eq(got, lane, "op %u", i);
    uint32_t l = 0;
    while (l < nl && strcmp(names[l], lane))
      l++;
    if (l == nl) {
      cr_assert_eq(o.lane, nl, "lanes in order of first use");
      strcpy(names[nl], lane);
      busy[nl++] = 0;
    }
    busy[l] += c;
  }
  cr_assert_eq(rp_analysis_num_lanes(a), nl);
  double maxl = 0;
  for (uint32_t l = 0; l < nl; l++) {
    double b;
    cr_assert_eq(rp_analysis_lane(a, l, NULL, &b), RP_OK);
    cr_assert(close_to(b, busy[l]));
    maxl = fmax(maxl, busy[l]);
  }
  cr_assert(close_to(s.serial_us, serial));
  cr_assert(close_to(s.max_lane_us, maxl));
  cr_assert(close_to(s.amdahl_compute_us, tk));
  cr_assert(close_to(s.amdahl_copy_us, tc));
  double am = fmax(tk, tc) > 0 ? (tk + tc) / fmax(tk, tc) : 1;
  cr_assert(close_to(s.amdahl_speedup, am));

  /* Longest path by relaxation over all edges until nothing changes. */
  double lp[MAXN];
  for (uint32_t i = 0; i < n; i++)
    lp[i] = cost[i];
  for (int changed = 1; changed;) {
    changed = 0;
    for (uint32_t k = rp_graph_num_edges(g); k-- > 0;) {
      rp_edge e;
      rp_graph_edge(g, k, &e);
      if (lp[e.from] + cost[e.to] > lp[e.to]) {
        lp[e.to] = lp[e.from] + cost[e.to];
        changed = 1;
      }
    }
  }
  double cp = 0;
  for (uint32_t i = 0; i < n; i++)
    cp = fmax(cp, lp[i]);
  cr_assert(close_to(s.critical_path_us, cp), "%.17g vs %.17g",
            s.critical_path_us, cp);
  /* The ops marked critical form a path of that length. */
  double along = 0;
  rp_node prev = RP_NONE;
  for (uint32_t i = 0; i < n; i++) {
    rp_op_sched o;
    rp_analysis_op(a, i, &o);
    if (!o.critical)
      continue;
    if (prev != RP_NONE) {
      uint32_t np;
      const rp_node *p = rp_graph_preds(g, i, &np);
      int direct = 0;
      for (uint32_t k = 0; k < np; k++)
        direct |= p[k] == prev;
      cr_assert(direct, "critical ops %u and %u not joined by an edge", prev,
                i);
    }
    along += cost[i];
    prev = i;
  }
  cr_assert(n == 0 || close_to(along, cp));

  double lim = fmax(cp, maxl);
  cr_assert(close_to(s.bound, lim > 0 ? serial / lim : 1));
  if (s.critical_path_us >= s.max_lane_us) {
    cr_assert_str_eq(s.limited_by, "critical_path");
  } else {
    uint32_t l = 0;
    while (l < nl && strcmp(names[l], s.limited_by))
      l++;
    cr_assert_lt(l, nl, "limited by unknown lane %s", s.limited_by);
    cr_assert(close_to(busy[l], maxl));
  }
  cr_assert(close_to(s.predicted_speedup,
                     s.makespan_us > 0 ? serial / s.makespan_us : 1));

  /* Priority: when an op starts on a lane, no op of that lane that was
   * ready then has a longer remaining path (bottom level). */
  double bl[MAXN];
  for (uint32_t i = n; i-- > 0;) {
    uint32_t ns;
    const rp_node *sc = rp_graph_succs(g, i, &ns);
    bl[i] = 0;
    for (uint32_t k = 0; k < ns; k++)
      bl[i] = fmax(bl[i], bl[sc[k]]);
    bl[i] += cost[i];
  }
  for (uint32_t i = 0; i < n; i++) {
    rp_op_sched oi;
    rp_analysis_op(a, i, &oi);
    if (oi.cost_us == 0) /* holds its lane for no time */
      continue;
    for (uint32_t j = 0; j < n; j++) {
      rp_op_sched oj;
      rp_analysis_op(a, j, &oj);
      if (j == i || oj.lane != oi.lane || oj.start_us <= oi.start_us)
        continue;
      uint32_t np;
      const rp_node *p = rp_graph_preds(g, j, &np);
      double ready = 0;
      for (uint32_t k = 0; k < np; k++) {
        rp_op_sched op;
        rp_analysis_op(a, p[k], &op);
        ready = fmax(ready, op.end_us);
      }
      if (ready <= oi.start_us)
        cr_assert(bl[i] > bl[j] - 1e-9 || (close_to(bl[i], bl[j]) && i < j),
                  "op %u (bl %g) started before ready op %u (bl %g)", i, bl[i],
                  j, bl[j]);
    }
  }
  check_schedule(g, a);

  /* The JSON and trace writers parse on every graph. */
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  cr_assert_eq(rp_analysis_write_json(a, fp), RP_OK);
  fclose(fp);
  cJSON *j = cJSON_Parse(buf);
  cr_assert_not_null(j, "%s", buf);
  cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "ops")), (int)n);
  const cJSON *je = cJSON_GetObjectItem(j, "edges");
  cr_assert_eq(cJSON_GetArraySize(je), (int)rp_graph_num_edges(g));
  for (uint32_t i = 0; i < rp_graph_num_edges(g); i++) {
    rp_edge e;
    rp_graph_edge(g, i, &e);
    const cJSON *x = cJSON_GetArrayItem(je, (int)i);
    const cJSON *b = cJSON_GetObjectItem(x, "buffer");
    cr_assert_eq(cJSON_GetObjectItem(x, "from")->valuedouble, e.from);
    cr_assert_eq(cJSON_GetObjectItem(x, "to")->valuedouble, e.to);
    cr_assert_str_eq(cJSON_GetObjectItem(x, "kind")->valuestring,
                     rp_edge_kind_name(e.kind));
    if (e.kind == RP_EDGE_AFTER)
      cr_assert_null(b);
    else
      cr_assert_eq(b->valuedouble, e.buf);
  }
  cJSON_Delete(j);
  free(buf);
  fp = open_memstream(&buf, &len);
  cr_assert_eq(rp_analysis_write_trace(a, fp), RP_OK);
  fclose(fp);
  j = cJSON_Parse(buf);
  cr_assert_not_null(j, "%s", buf);
  cJSON_Delete(j);
  free(buf);
  rp_analysis_destroy(a);
}

static void random_opts(check_opts *co, rng *r, uint32_t n) {
  rp_analysis_opts_init(&co->ao);
  co->ao.copy_engines = 1 + rnd(r, 2);
  /* slow links, so that modelled copies weigh as much as kernels */
  co->ao.h2d_gbps = 0.016;
  co->ao.d2h_gbps = 0.032;
  co->ao.p2p_gbps = 0.008;
  co->ao.kernel_us = 1 + rnd(r, 10);
  co->ao.host_us = rnd(r, 4);
  if (rnd(r, 3) == 0) {
    for (uint32_t i = 0; i < n; i++)
      co->measured[i] = rnd(r, 3) ? -1 : rnd(r, 8) * 0.5;
    co->ao.measured_us = co->measured;
  }
}

Test(schedule, random_graphs_match_brute_force, .timeout = 120) {
  static gen gn;
  static check_opts co;
  for (uint64_t seed = 1; seed <= 400; seed++) {
    rng r = {seed * 0x9E3779B97F4A7C15ULL};
    unsigned flags = rnd(&r, 2) ? RP_GRAPH_NO_COHERENCE : 0;
    random_graph(&gn, &r, 2 + rnd(&r, 30), flags);
    random_opts(&co, &r, rp_graph_num_nodes(gn.g));
    check_all(&gn, &co);
    /* and with the other number of copy engines */
    co.ao.copy_engines = 3 - co.ao.copy_engines;
    check_all(&gn, &co);
    rp_graph_destroy(gn.g);
  }
}

Test(schedule, zero_costs_everywhere) {
  static gen gn;
  static check_opts co;
  for (uint64_t seed = 1; seed <= 50; seed++) {
    rng r = {seed * 0xD1B54A32D192ED03ULL};
    random_graph(&gn, &r, 2 + rnd(&r, 30), RP_GRAPH_NO_COHERENCE);
    rp_analysis_opts_init(&co.ao);
    uint32_t n = rp_graph_num_nodes(gn.g);
    for (uint32_t i = 0; i < n; i++)
      co.measured[i] = rnd(&r, 2) ? 0 : 1;
    co.ao.measured_us = co.measured;
    check_all(&gn, &co);
    rp_graph_destroy(gn.g);
  }
}

/* A larger graph: schedule validity only (the brute force is quadratic). */
Test(schedule, large_random_graph_valid_schedule, .timeout = 120) {
  rng r = {42};
  rp_graph *g = NULL;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  add_buffers(g);
  for (unsigned k = 0; k < 5000; k++) {
    rp_op_opts o = RP_OP_OPTS_WITH(.cost_us = (double)(1 + rnd(&r, 20)));
    int dev = (int)rnd(&r, 2);
    switch (rnd(&r, 4)) {
    case 0: {
      rp_arg arg = rp_arg_buf(rand_region(&r, rnd(&r, NBUF)));
      rp_record_kernel(g, &kernels[0], dev, rp_dims3(4, 1, 1), &arg, &o, NULL);
      break;
    }
    case 1:
      rp_record_copy_to_device(g, rand_region(&r, rnd(&r, 3)), dev, &o, NULL);
      break;
    case 2:
      rp_record_copy_to_host(g, rand_region(&r, rnd(&r, 3)), dev, &o, NULL);
      break;
    default:
      rp_record_copy_peer(g, rand_region(&r, rnd(&r, NBUF)), dev, 1 - dev, &o,
                          NULL);
    }
  }
  cr_assert_eq(rp_graph_end(g), RP_OK);
  cr_assert_gt(rp_graph_num_nodes(g), 4000);
  for (unsigned e = 1; e <= 2; e++) {
    rp_analysis_opts o;
    rp_analysis_opts_init(&o);
    o.copy_engines = e;
    rp_analysis *a = NULL;
    cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
    check_schedule(g, a);
    rp_analysis_destroy(a);
  }
  rp_graph_destroy(g);
}
