/* Automatic chunked pipelining: a graph-to-graph rewrite. Every kernel
 * declared splittable (rp_kernel.split_axis) is recorded again as k
 * launches over slices of its index space, and every host<->device copy of
 * exactly one of its following regions, on its device, as k copies of the
 * matching slices; every other operation is recorded as it was. The new
 * graph goes through the ordinary recorder, so its hazard edges are the
 * exact ones between chunks: copy-in i -> chunk i -> copy-out i, which the
 * backends overlap like a pipeline written by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "transform/reshape.h"
#include "transform/split.h"

/* A cut region: the bytes [off, off + len) of buf on device dev, cut as a
 * kernel's axis of extent S into kk chunks, unit bytes per index point. */
typedef struct cut {
  rp_buf buf;
  int dev;
  int contiguous;
  uint64_t off, len, unit, S;
  unsigned kk;
} cut;

/* The slowest-dimension geometry of a checked region: its first unit,
 * its units, the bytes of one unit and, when the region is one contiguous
 * byte range, that range. Returns 0 when it has no slowest dimension. */
static int geometry(const rp_graph *g, const rp_region *r, uint64_t *first,
                    uint64_t *units, uint64_t *unit, int *contig, uint64_t *off,
                    uint64_t *len) {
  rp_buffer_desc d;
  if (rp_buffer_info(g, r->buf, &d) != RP_OK)
    return 0;
  uint64_t el = d.elem ? d.elem : 1;
  if (r->kind == RP_REGION_BYTES) {
    if (r->offset % el || r->bytes % el || !r->bytes)
      return 0;
    *first = r->offset / el;
    *units = r->bytes / el;
    *unit = el;
    *contig = 1;
    *off = r->offset;
    *len = r->bytes;
    return 1;
  }
  if (r->kind != RP_REGION_BOX || !r->ndims || r->ndims != d.ndims)
    return 0;
  uint64_t row = el;
  *contig = 1;
  for (unsigned i = 1; i < r->ndims; i++) {
    row *= d.dims[i];
    *contig &= r->lo[i] == 0 && r->hi[i] == d.dims[i];
  }
  if (r->hi[0] <= r->lo[0])
    return 0;
  *first = r->lo[0];
  *units = r->hi[0] - r->lo[0];
  *unit = row;
  *off = r->lo[0] * row;
  *len = *units * row;
  return 1;
}

/* Slice [a, b) of the S points of the axis, over a region whose slowest
 * dimension spans m * S units starting at unit `first`. */
static rp_region slice(rp_region r, uint64_t first, uint64_t unit, uint64_t m,
                       uint64_t a, uint64_t b) {
  if (r.kind == RP_REGION_BOX) {
    r.lo[0] = first + a * m;
    r.hi[0] = first + b * m;
  } else {
    r.offset = (first + a * m) * unit;
    r.bytes = (b - a) * m * unit;
  }
  return r;
}

int rp__split_eligible(const rp_graph *g, rp_node n, unsigned *axis, char *why,
                       size_t whylen) {
  char tmp[8];
  if (!why) {
    why = tmp;
    whylen = sizeof tmp;
  }
  why[0] = 0;
  rp_node_info ni;
  if (rp_node_info_get(g, n, &ni) != RP_OK || ni.type != RP_OP_KERNEL) {
    snprintf(why, whylen, "not a kernel");
    return 0;
  }
  const rp_kernel *k = ni.kernel;
  if (!k || k->split_axis < RP_SPLIT_X || k->split_axis > RP_SPLIT_Z) {
    snprintf(why, whylen, "not declared splittable");
    return 0;
  }
  unsigned ax = k->split_axis - 1;
  uint64_t S = ax == 0 ? ni.space.x : ax == 1 ? ni.space.y : ni.space.z;
  if (S < 2) {
    snprintf(why, whylen, "its axis has one point");
    return 0;
  }
  unsigned follow = 0;
  for (unsigned p = 0, j = 0; p < k->nparams; p++) {
    int f = (k->split_follow >> p) & 1u;
    if (k->params[p].mode == RP_SCALAR) {
      if (f) {
        snprintf(why, whylen, "parameter %u is a scalar", p);
        return 0;
      }
      continue;
    }
    rp_access_info ai;
    if (rp_node_access(g, n, j++, &ai) != RP_OK)
      return 0;
    if (!f) {
      if (ai.mode != RP_IN) {
        snprintf(why, whylen,
                 "parameter \"%s\" is written but does not "
                 "follow the cut",
                 k->params[p].name);
        return 0;
      }
      continue;
    }
    uint64_t first, units, unit, off, len;
    int contig;
    if (!geometry(g, &ai.region, &first, &units, &unit, &contig, &off, &len) ||
        units % S) {
      snprintf(why, whylen,
               "the region of \"%s\" does not span a whole "
               "multiple of the axis' %llu points",
               k->params[p].name, (unsigned long long)S);
      return 0;
    }
    follow++;
  }
  if (!follow) {
    snprintf(why, whylen, "no parameter follows the cut");
    return 0;
  }
  if (axis)
    *axis = ax;
  return 1;
}

/* The cut matching a copy of region r on device dev, or NULL. */
static const cut *find_cut(const rp_graph *g, const cut *c, uint32_t nc,
                           const rp_region *r, int dev) {
  uint64_t first, units, unit, off, len;
  int contig;
  if (!geometry(g, r, &first, &units, &unit, &contig, &off, &len) || !contig)
    return NULL;
  for (uint32_t i = 0; i < nc; i++)
    if (c[i].contiguous && c[i].buf == r->buf && c[i].dev == dev &&
        c[i].off == off && c[i].len == len)
      return &c[i];
  return NULL;
}

typedef struct rec {
  const rp_graph *g;
  rp_graph *ng;
  rp__rewrite *s;
  uint32_t *aoff; /* explicit afters by target: CSR */
  rp_node *afrom;
  rp_node *after; /* scratch for one op's mapped afters */
  char *name;
  size_t namelen;
  uint32_t at; /* next op of ng */
} rec;

/* The options of piece i of `pieces` of op n. */
static rp_op_opts piece_opts(rec *c, rp_node n, const rp_node_info *ni,
                             unsigned i, unsigned pieces) {
  rp_op_opts o = RP_OP_OPTS_WITH(.name = ni->name);
  if (pieces > 1) {
    snprintf(c->name, c->namelen, "%s[%u]", ni->name, i);
    o.name = c->name;
  }
  if (ni->cost_us >= 0)
    o.cost_us = ni->cost_us / pieces;
  unsigned na = 0;
  for (uint32_t e = c->aoff[n]; e < c->aoff[n + 1]; e++) {
    rp_node f = c->afrom[e];
    for (uint32_t m = c->s->first[f]; m < c->s->first[f + 1]; m++)
      c->after[na++] = m;
  }
  o.after = na ? c->after : NULL;
  o.nafter = na;
  return o;
}

static void mark(rec *c, rp_node n, int axis, uint64_t origin) {
  c->s->orig[c->at] = n;
  c->s->axis[c->at] = (int8_t)axis;
  c->s->origin[c->at] = origin;
  c->at++;
}

static rp_status record_kernel(rec *c, rp_node n, const rp_node_info *ni,
                               unsigned kk, unsigned ax) {
  const rp_kernel *k = ni->kernel;
  rp_arg args[RP_MAX_PARAMS];
  uint64_t first[RP_MAX_PARAMS], unit[RP_MAX_PARAMS], m[RP_MAX_PARAMS];
  uint64_t S = ax == 0 ? ni->space.x : ax == 1 ? ni->space.y : ni->space.z;
  const rp__op *op = &c->g->op[n];
  for (unsigned p = 0, j = 0, sc = 0; p < k->nparams; p++) {
    if (k->params[p].mode == RP_SCALAR) {
      args[p] = rp_arg_i64(0);
      args[p].value = c->g->slot[op->arg0 + sc++];
      continue;
    }
    rp_access_info ai;
    rp_node_access(c->g, n, j++, &ai);
    args[p] = rp_arg_buf(ai.region);
    uint64_t units, off, len;
    int contig;
    m[p] = 0;
    if (kk > 1 && ((k->split_follow >> p) & 1u) &&
        geometry(c->g, &ai.region, &first[p], &units, &unit[p], &contig, &off,
                 &len))
      m[p] = units / S;
  }
  for (unsigned i = 0; i < kk; i++) {
    uint64_t a = S * i / kk, b = S * (i + 1) / kk;
    rp_arg ca[RP_MAX_PARAMS];
    memcpy(ca, args, sizeof ca);
    for (unsigned p = 0; p < k->nparams; p++)
      if (k->params[p].mode != RP_SCALAR && m[p])
        ca[p].region = slice(args[p].region, first[p], unit[p], m[p], a, b);
    rp_dims sp = ni->space;
    if (kk > 1)
      *(ax == 0 ? &sp.x : ax == 1 ? &sp.y : &sp.z) = b - a;
    rp_op_opts o = piece_opts(c, n, ni, i, kk);
    rp_status s = rp_record_kernel(c->ng, k, ni->device, sp, ca, &o, NULL);
    if (s != RP_OK)
      return s;
    mark(c, n, kk > 1 ? (int)ax : -1, a);
  }
  return RP_OK;
}

/* Region r of copy n recorded as piece i of kk. */
static rp_status record_copy_piece(rec *c, rp_node n, const rp_node_info *ni,
                                   rp_region r, unsigned i, unsigned kk) {
  rp_op_opts o = piece_opts(c, n, ni, i, kk);
  rp_status s;
  if (ni->type == RP_OP_COPY_H2D)
    s = rp_record_copy_to_device(c->ng, r, ni->device, &o, NULL);
  else if (ni->type == RP_OP_COPY_D2H)
    s = rp_record_copy_to_host(c->ng, r, ni->device, &o, NULL);
  else
    s = rp_record_copy_peer(c->ng, r, ni->device, ni->dst_device, &o, NULL);
  if (s == RP_OK)
    mark(c, n, -1, 0);
  return s;
}

/* Copy n as its cut's kk slices (ct), as the regions the reshape plan
 * gives it (sh), or as recorded. */
static rp_status record_copy(rec *c, rp_node n, const rp_node_info *ni,
                             const cut *ct, const rp__reshape *sh) {
  if (sh) {
    unsigned kk = sh->off[n + 1] - sh->off[n];
    rp_status s = RP_OK;
    for (unsigned i = 0; i < kk && s == RP_OK; i++)
      s = record_copy_piece(c, n, ni, sh->reg[sh->off[n] + i], i, kk);
    return s;
  }
  rp_access_info ai;
  rp_node_access(c->g, n, 0, &ai);
  unsigned kk = ct ? ct->kk : 1;
  for (unsigned i = 0; i < kk; i++) {
    rp_region r = ai.region;
    if (ct) {
      uint64_t a = ct->S * i / kk, b = ct->S * (i + 1) / kk;
      r = rp_range_bytes(ai.region.buf, ct->off + a * ct->unit,
                         (b - a) * ct->unit);
    }
    rp_status s = record_copy_piece(c, n, ni, r, i, kk);
    if (s != RP_OK)
      return s;
  }
  return RP_OK;
}

static rp_status record_host(rec *c, rp_node n, const rp_node_info *ni) {
  rp_host_fn fn;
  void *user;
  rp_status s = rp_node_host_fn(c->g, n, &fn, &user);
  if (s != RP_OK)
    return s;
  rp_access *acc = malloc((ni->naccess ? ni->naccess : 1) * sizeof *acc);
  if (!acc)
    return RP_ENOMEM;
  for (unsigned i = 0; i < ni->naccess; i++) {
    rp_access_info ai;
    rp_node_access(c->g, n, i, &ai);
    acc[i].region = ai.region;
    acc[i].mode = ai.mode;
  }
  rp_op_opts o = piece_opts(c, n, ni, 0, 1);
  s = rp_record_host(c->ng, fn, user, acc, ni->naccess, &o, NULL);
  free(acc);
  if (s == RP_OK)
    mark(c, n, -1, 0);
  return s;
}

/* Explicit dependencies, by target. */
static rp_status afters(const rp_graph *g, uint32_t nop, rec *c) {
  uint32_t ne = rp_graph_num_edges(g), na = 0;
  c->aoff = calloc(nop + 1, sizeof *c->aoff);
  if (!c->aoff)
    return RP_ENOMEM;
  for (uint32_t i = 0; i < ne; i++) {
    rp_edge e;
    rp_graph_edge(g, i, &e);
    if (e.kind == RP_EDGE_AFTER) {
      c->aoff[e.to + 1]++;
      na++;
    }
  }
  for (uint32_t n = 0; n < nop; n++)
    c->aoff[n + 1] += c->aoff[n];
  c->afrom = malloc((na ? na : 1) * sizeof *c->afrom);
  uint32_t *fill = malloc((nop ? nop : 1) * sizeof *fill);
  if (!c->afrom || !fill) {
    free(fill);
    return RP_ENOMEM;
  }
  memcpy(fill, c->aoff, nop * sizeof *fill);
  for (uint32_t i = 0; i < ne; i++) {
    rp_edge e;
    rp_graph_edge(g, i, &e);
    if (e.kind == RP_EDGE_AFTER)
      c->afrom[fill[e.to]++] = e.from;
  }
  free(fill);
  return RP_OK;
}

/* Decides the pieces of every op: kernels split and copies matched to
 * their cuts. pieces[n] > 1 for what is cut; cutof[n]: a copy's cut. */
static rp_status plan_cuts(const rp_graph *g, uint32_t nop, unsigned k,
                           unsigned *pieces, uint32_t *cutof, cut **cuts,
                           uint32_t *ncuts, uint64_t *total) {
  uint32_t cap = 0, nc = 0;
  cut *c = NULL;
  for (rp_node n = 0; n < nop; n++) {
    pieces[n] = 1;
    cutof[n] = RP_NONE;
    unsigned ax;
    if (!rp__split_eligible(g, n, &ax, NULL, 0))
      continue;
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    uint64_t S = ax == 0 ? ni.space.x : ax == 1 ? ni.space.y : ni.space.z;
    unsigned kk = S < k ? (unsigned)S : k;
    pieces[n] = kk;
    const rp_kernel *kd = ni.kernel;
    for (unsigned p = 0, j = 0; p < kd->nparams; p++) {
      if (kd->params[p].mode == RP_SCALAR)
        continue;
      rp_access_info ai;
      rp_node_access(g, n, j++, &ai);
      if (!((kd->split_follow >> p) & 1u))
        continue;
      cut ct = {ai.region.buf, ni.device, 0, 0, 0, 0, S, kk};
      uint64_t first, units, unit;
      geometry(g, &ai.region, &first, &units, &unit, &ct.contiguous, &ct.off,
               &ct.len);
      ct.unit = unit * (units / S);
      if (rp__grow((void **)&c, &cap, nc + 1, sizeof *c)) {
        free(c);
        return RP_ENOMEM;
      }
      c[nc++] = ct;
    }
  }
  for (rp_node n = 0; n < nop; n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    if (nc && (ni.type == RP_OP_COPY_H2D || ni.type == RP_OP_COPY_D2H)) {
      rp_access_info ai;
      rp_node_access(g, n, 0, &ai);
      const cut *ct = find_cut(g, c, nc, &ai.region, ni.device);
      if (ct && ct->kk > 1) {
        cutof[n] = (uint32_t)(ct - c);
        pieces[n] = ct->kk;
      }
    }
    *total += pieces[n];
  }
  *cuts = c;
  *ncuts = nc;
  return RP_OK;
}

static rp_status rebuild(rec *c, const unsigned *pieces, const uint32_t *cutof,
                         const cut *cuts, const rp__reshape *sh) {
  const rp_graph *g = c->g;
  rp__rewrite *s = c->s;
  unsigned nd = rp_graph_num_devices(g);
  rp_status st = RP_OK;
  for (unsigned d = 0; d < nd && st == RP_OK; d++)
    if (rp_graph_device_kind(g, d) != RP_DEVICE_DEFAULT)
      st = rp_graph_set_device_kind(c->ng, (int)d, rp_graph_device_kind(g, d));
  for (rp_buf b = 0; b < rp_graph_num_buffers(g) && st == RP_OK; b++) {
    rp_buffer_desc d;
    rp_buf nb;
    rp_buffer_info(g, b, &d);
    st = rp_buffer_add(c->ng, &d, &nb);
    if (st == RP_OK) /* a distributed buffer stays distributed */
      st = rp__buffer_copy_parts(c->ng, nb, g, b);
  }
  for (rp_node n = 0; n < s->nop && st == RP_OK; n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    s->first[n] = c->at;
    size_t need = strlen(ni.name) + 16;
    if (need > c->namelen) {
      char *nn = realloc(c->name, need);
      if (!nn)
        return RP_ENOMEM;
      c->name = nn;
      c->namelen = need;
    }
    switch (ni.type) {
    case RP_OP_KERNEL: {
      unsigned ax = 0;
      if (pieces[n] > 1)
        rp__split_eligible(g, n, &ax, NULL, 0);
      st = record_kernel(c, n, &ni, pieces[n], ax);
      break;
    }
    case RP_OP_HOST:
      st = record_host(c, n, &ni);
      break;
    default:
      st = record_copy(c, n, &ni, cutof[n] != RP_NONE ? &cuts[cutof[n]] : NULL,
                       sh);
      break;
    }
  }
  s->first[s->nop] = c->at;
  return st;
}

rp_status rp__split_build(const rp_graph *g, unsigned k, uint64_t reshape,
                          rp__rewrite *out, char *err, size_t errlen) {
  return rp__split_build_run(g, k, reshape, 0, out, err, errlen);
}

rp_status rp__split_build_run(const rp_graph *g, unsigned k, uint64_t reshape,
                              uint64_t run, rp__rewrite *out, char *err,
                              size_t errlen) {
  memset(out, 0, sizeof *out);
  if (err && errlen)
    err[0] = 0;
  uint32_t nop = rp_graph_num_nodes(g);
  if ((k <= 1 && !reshape) || !nop)
    return RP_OK;
  for (rp_node n = 0; n < nop; n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    if (ni.type == RP_OP_KERNEL && !ni.kernel) {
      if (err)
        snprintf(err, errlen,
                 "%s: op %u \"%s\" has no kernel "
                 "descriptor (graph loaded from a file)",
                 k > 1 ? "split" : "reshaping copies", n, ni.name);
      return RP_ENOTSUP;
    }
  }
  unsigned *pieces = malloc(nop * sizeof *pieces);
  uint32_t *cutof = malloc(nop * sizeof *cutof);
  cut *cuts = NULL;
  uint32_t ncuts = 0;
  uint64_t total = 0;
  rp__reshape sh;
  int use_sh = 0;
  memset(&sh, 0, sizeof sh);
  rec c;
  memset(&c, 0, sizeof c);
  rp_status st = pieces && cutof ? RP_OK : RP_ENOMEM;
  if (st == RP_OK && k > 1)
    st = plan_cuts(g, nop, k, pieces, cutof, &cuts, &ncuts, &total);
  for (rp_node n = 0; st == RP_OK && k <= 1 && n < nop; n++) {
    pieces[n] = 1;
    cutof[n] = RP_NONE;
    total++;
  }
  /* Copies are reshaped only where nothing is split: a copy is either
   * cut with its kernel or reshaped, never both. */
  if (st == RP_OK && reshape && !ncuts) {
    st = rp__reshape_plan(g, reshape, run, &sh);
    use_sh = st == RP_OK && sh.merged + sh.split > 0;
    for (rp_node n = 0; use_sh && n < nop; n++) {
      rp_node_info ni;
      rp_node_info_get(g, n, &ni);
      if (ni.type != RP_OP_KERNEL && ni.type != RP_OP_HOST) {
        total -= pieces[n];
        pieces[n] = sh.off[n + 1] - sh.off[n];
        total += pieces[n];
      }
    }
  }
  if (st != RP_OK || (!ncuts && !use_sh) || total >= RP_NONE)
    goto done;
  out->nop = nop;
  out->first = malloc((nop + 1) * sizeof *out->first);
  out->orig = malloc(total * sizeof *out->orig);
  out->axis = malloc(total * sizeof *out->axis);
  out->origin = malloc(total * sizeof *out->origin);
  unsigned maxafter = 0;
  for (rp_node n = 0; n < nop; n++)
    maxafter = pieces[n] > maxafter ? pieces[n] : maxafter;
  st = afters(g, nop, &c);
  uint32_t naft = st == RP_OK ? c.aoff[nop] : 0;
  c.after = malloc(((size_t)naft * maxafter + 1) * sizeof *c.after);
  if (st != RP_OK || !out->first || !out->orig || !out->axis || !out->origin ||
      !c.after) {
    st = RP_ENOMEM;
    goto done;
  }
  for (rp_node n = 0; n < nop && !use_sh; n++) {
    out->nkernels += pieces[n] > 1 && cutof[n] == RP_NONE;
    out->ncopies += cutof[n] != RP_NONE;
  }
  out->nmerged = use_sh ? sh.merged : 0;
  out->nsplit = use_sh ? sh.split : 0;
  c.g = g;
  c.s = out;
  if ((st = rp_graph_create(&out->g, RP_GRAPH_NO_COHERENCE)) != RP_OK)
    goto done;
  c.ng = out->g;
  st = rebuild(&c, pieces, cutof, cuts, use_sh ? &sh : NULL);
  if (st == RP_OK)
    st = rp_graph_end(out->g);
  if (st != RP_OK && err)
    snprintf(err, errlen, "%s: %s",
             ncuts ? "split: recording the chunked "
                     "graph"
                   : "recording the graph with its copies reshaped",
             out->g ? rp_graph_error(out->g) : rp_strerror(st));
done:
  rp__reshape_free(&sh);
  free(pieces);
  free(cutof);
  free(cuts);
  free(c.aoff);
  free(c.afrom);
  free(c.after);
  free(c.name);
  if (st != RP_OK || !out->g)
    rp__rewrite_free(out);
  return st;
}
