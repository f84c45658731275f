/* Lanes and costs: which lane runs each operation and for how long. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "analyze/analysis.h"

static const char *const kind_prefix[RP__LANE_KINDS] = {
    "compute", "h2d", "d2h", "copy", "p2p", "host"};

/* Bytes a stored region covers. Stored regions are byte ranges or boxes
 * (WHOLE is resolved at record time); WHOLE is still handled, for safety. */
uint64_t rp__region_bytes(const rp_graph *g, const rp_region *r) {
  if (r->buf >= g->nbuf)
    return 0;
  const rp__buffer *b = &g->buf[r->buf];
  switch (r->kind) {
  case RP_REGION_BYTES:
    return r->bytes;
  case RP_REGION_BOX: {
    uint64_t n = b->elem ? b->elem : 1;
    for (unsigned d = 0; d < r->ndims && d < 3; d++)
      n *= r->hi[d] > r->lo[d] ? r->hi[d] - r->lo[d] : 0;
    return n;
  }
  default:
    return b->bytes;
  }
}

/* Bytes an operation moves through memory: a read region once, a written
 * one twice: read and written back, or, written only, read for ownership
 * first (a store to a line not in cache fetches it: write-allocate), as
 * the memory system moves them. The calibration's streaming kernel (an
 * in and an inout) is counted the same way. */
double rp__op_bytes(const rp_graph *g, uint32_t n) {
  double b = 0;
  for (uint32_t i = 0; i < g->op[n].nacc; i++) {
    rp__access a = rp__acc_get(g, n, i);
    double r = (double)rp__region_bytes(g, &a.region);
    b += a.mode & RP_OUT ? 2 * r : r;
  }
  return b;
}

/* A copy moves the bytes of the access it writes (its destination). */
uint64_t rp__copy_bytes(const rp_graph *g, uint32_t n) {
  const rp__op *op = &g->op[n];
  if (op->nacc == 0)
    return 0;
  for (uint32_t i = 0; i < op->nacc; i++) {
    rp__access a = rp__acc_get(g, n, i);
    if (a.mode == RP_OUT || a.mode == RP_INOUT)
      return rp__region_bytes(g, &a.region);
  }
  rp__access a = rp__acc_get(g, n, 0);
  return rp__region_bytes(g, &a.region);
}

static void lane_of(const rp__op *op, unsigned engines, rp__lane_kind *kind,
                    int *dev) {
  *dev = op->device;
  switch (op->type) {
  case RP_OP_KERNEL:
    *kind = RP__LANE_COMPUTE;
    break;
  case RP_OP_COPY_H2D:
    *kind = engines == 1 ? RP__LANE_COPY : RP__LANE_H2D;
    break;
  case RP_OP_COPY_D2H:
    *kind = engines == 1 ? RP__LANE_COPY : RP__LANE_D2H;
    break;
  case RP_OP_COPY_D2D:
    *kind = RP__LANE_P2P;
    break;
  default:
    *kind = RP__LANE_HOST;
    *dev = -1;
    break;
  }
}

/* Modelled or default cost of op n, from the options. */
static double model_cost(const rp_analysis *a, uint32_t n,
                         rp_cost_source *src) {
  const rp__op *op = &a->g->op[n];
  double gbps;
  switch (op->type) {
  case RP_OP_KERNEL:
    *src = RP_COST_DEFAULT;
    return a->opts.kernel_us;
  case RP_OP_HOST:
    *src = RP_COST_DEFAULT;
    return a->opts.host_us;
  case RP_OP_COPY_H2D:
    gbps = a->opts.h2d_gbps;
    break;
  case RP_OP_COPY_D2H:
    gbps = a->opts.d2h_gbps;
    break;
  default:
    gbps = a->opts.p2p_gbps;
    break;
  }
  *src = RP_COST_MODELLED;
  /* GB/s = 1e9 B/s = 1e3 B/us. */
  return (double)rp__copy_bytes(a->g, n) / (gbps * 1e3);
}

/* A copy the model's backend elides: a CPU backend (host and device
 * images share memory) or links that cost nothing, and no cost of its
 * own (none measured, given or modelled but 0). */
static int model_elides(const rp_analysis *a, uint32_t n, rp_cost_source src,
                        double c) {
  const rp_model *m = a->opts.model;
  rp_op_type t = a->g->op[n].type;
  if (!m || (t != RP_OP_COPY_H2D && t != RP_OP_COPY_D2H && t != RP_OP_COPY_D2D))
    return 0;
  const rp_model_link *l = t == RP_OP_COPY_H2D   ? &m->h2d
                           : t == RP_OP_COPY_D2H ? &m->d2h
                                                 : &m->p2p;
  if (!m->shared_memory && l->gbps > 0)
    return 0;
  return src == RP_COST_MODELLED || (src == RP_COST_MEASURED && c == 0);
}

/* Compute units of device d (1 unless the options say more). */
static unsigned units_of(const rp_analysis *a, int d) {
  if (!a->opts.compute_units || d < 0 || (unsigned)d >= a->opts.ncompute_units)
    return 1;
  unsigned k = a->opts.compute_units[d];
  return k ? k : 1;
}

/* Lane l's name: "net:R-S" for transfers between ranks R and S, "host",
 * "<kind>:<dev>", or "<kind>:<dev>.<unit>" for one of k > 1 units. */
static void name_lane(rp__lane *l, int net, int rlo, int rhi, unsigned k,
                      unsigned u) {
  if (net)
    snprintf(l->name, sizeof l->name, "net:%u-%u", (unsigned)rlo & 63u,
             (unsigned)rhi & 63u); /* ranks < RP_MAX_DEVICES */
  else if (l->kind == RP__LANE_HOST)
    snprintf(l->name, sizeof l->name, "host");
  else if (k > 1)
    snprintf(l->name, sizeof l->name, "%s:%d.%u", kind_prefix[l->kind],
             l->device, u);
  else
    snprintf(l->name, sizeof l->name, "%s:%d", kind_prefix[l->kind], l->device);
}

/* The cost of operation n placed `place` (net: a transfer between ranks),
 * its source, and the profile's range (*lo, *hi; -1: the cost). */
static double op_cost(const rp_analysis *a, uint32_t n, const double *measured,
                      int net, int place, rp_cost_source *src, double *lo,
                      double *hi) {
  const rp_graph *g = a->g;
  rp_measured gm;
  if (net) { /* a profile times copies within one process: the net
                model is what a transfer between ranks costs, plus the
                pack and the unpack at its two ends (a copy in memory
                each, what a profile of the copy measured) */
    *src = RP_COST_MODELLED;
    double c = a->opts.net_latency_us +
               (double)rp__copy_bytes(g, n) / (a->opts.net_gbps * 1e3);
    if (measured && measured[n] > 0)
      c += 2 * measured[n];
    return c;
  }
  if (place == RP__NET_SAME_MEMORY) {
    *src = RP_COST_MODELLED;
    return 0; /* its rank keeps both ends in one memory: nothing moves */
  }
  if (measured && measured[n] >= 0) {
    double c = measured[n];
    *src = RP_COST_MEASURED;
    *lo = a->opts.measured_min_us ? a->opts.measured_min_us[n] : c;
    *hi = a->opts.measured_max_us ? a->opts.measured_max_us[n] : c;
    return c;
  }
  if (g->measured && rp_graph_get_measured(g, n, &gm) == RP_OK) {
    *src = RP_COST_MEASURED;
    *lo = gm.min_us;
    *hi = gm.max_us;
    return gm.median_us;
  }
  if (g->op[n].cost_us >= 0) {
    *src = RP_COST_GIVEN;
    return g->op[n].cost_us;
  }
  return model_cost(a, n, src);
}

rp_status rp__analysis_lanes(rp_analysis *a, const double *measured) {
  const rp_graph *g = a->g;
  uint32_t nop = a->nop;
  /* Lane of (kind, device): device slots 0..RP_MAX_DEVICES-1, host in 0;
   * then one slot per compute unit of devices with several. */
  uint32_t units = 0, unit_base[RP_MAX_DEVICES], turn[RP_MAX_DEVICES] = {0};
  for (int d = 0; d < RP_MAX_DEVICES; d++) {
    unit_base[d] = RP__LANE_KINDS * RP_MAX_DEVICES + units;
    units += units_of(a, d) > 1 ? units_of(a, d) : 0;
  }
  uint32_t net0 = RP__LANE_KINDS * RP_MAX_DEVICES + units;
  uint32_t nslot =
      net0 + (a->opts.nranks > 1 ? RP_MAX_DEVICES * RP_MAX_DEVICES : 0);
  uint32_t *map = malloc(sizeof *map * nslot);
  a->lanes = calloc(nslot, sizeof *a->lanes);
  rp__net *nt = NULL; /* the placement over ranks (net.c) */
  if (!map || !a->lanes ||
      (a->opts.nranks > 1 && rp__net_init(g, a->opts.nranks, &nt))) {
    free(map);
    return RP_ENOMEM;
  }
  for (uint32_t i = 0; i < nslot; i++)
    map[i] = RP_NONE;
  a->nlane = 0;
  double total = 0;
  for (uint32_t n = 0; n < nop; n++) {
    const rp__op *op = &g->op[n];
    rp__lane_kind kind;
    int dev;
    lane_of(op, a->opts.copy_engines, &kind, &dev);
    if (kind != RP__LANE_HOST && (dev < 0 || dev >= RP_MAX_DEVICES)) {
      free(map);
      rp__net_free(nt);
      return RP_EINVAL;
    }
    uint32_t *slot = &map[kind * RP_MAX_DEVICES + (dev < 0 ? 0 : dev)];
    unsigned k = kind == RP__LANE_COMPUTE ? units_of(a, dev) : 1, u = 0;
    int rlo = 0, rhi = 0,
        place = nt ? rp__net_place(nt, n, &rlo, &rhi) : RP__NET_LOCAL;
    int net = place == RP__NET_PAIR;
    if (net) { /* a transfer between ranks: a copy lane of its own */
      kind = RP__LANE_P2P;
      dev = -1;
      slot = &map[net0 + (uint32_t)rlo * RP_MAX_DEVICES + (uint32_t)rhi];
    } else if (k > 1) {
      u = turn[dev]++ % k;
      slot = &map[unit_base[dev] + u];
    }
    if (*slot == RP_NONE) {
      rp__lane *l = &a->lanes[a->nlane];
      l->kind = kind;
      l->device = dev;
      name_lane(l, net, rlo, rhi, k, u);
      *slot = a->nlane++;
    }
    a->lane[n] = *slot;

    rp_cost_source src;
    double lo = -1, hi = -1; /* the profile's range; -1: c */
    double c = op_cost(a, n, measured, net, place, &src, &lo, &hi);
    if (!net && place != RP__NET_SAME_MEMORY && model_elides(a, n, src, c)) {
      c = 0;
      a->elided[n] = 1;
      a->nelided++;
    }
    if (!isfinite(c)) {
      free(map);
      rp__net_free(nt);
      return RP_EINVAL;
    }
    if (a->clo) { /* the range: within [0, inf), about c */
      a->clo[n] = isfinite(lo) && lo >= 0 && lo < c && !a->elided[n] ? lo : c;
      a->chi[n] = isfinite(hi) && hi > c && !a->elided[n] ? hi : c;
    }
    a->cost[n] = c;
    a->source[n] = (uint8_t)src;
    a->nsource[src]++;
    a->lanes[*slot].busy_us += c;
    total += c;
  }
  free(map);
  rp__net_free(nt);
  /* Every figure is at most the serial time: if that is finite, all are. */
  return isfinite(total) ? RP_OK : RP_EINVAL;
}
