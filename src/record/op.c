/* Recording operations: validation, automatic coherence, appending. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "record/hazard.h"

static const char *buf_name(const rp_graph *g, rp_buf b) {
  return b < g->nbuf ? g->buf[b].name : "?";
}

static int space_valid(int space) {
  return space >= RP_SPACE_HOST && space < RP_MAX_DEVICES;
}

/* Checks every access of an op; on success the checked copies (WHOLE
 * resolved) are in out. */
/* The access that the last failed check_accesses of this thread refused
 * (RP_NONE: none), for rp_record_kernel to name its parameter. */
static _Thread_local uint32_t refused_access = RP_NONE;

static rp_status check_accesses(rp_graph *g, const rp__proto *p,
                                const rp__access *acc, uint32_t nacc,
                                rp__access *out) {
  for (uint32_t i = 0; i < nacc; i++) {
    refused_access = i; /* until it passes */
    out[i] = acc[i];
    /* The message names the access: formatted only when a check fails
     * (rp__region_check changes nothing then, so it says it again). */
    rp_status s = rp__region_check(g, &out[i].region, "access");
    if (s != RP_OK) {
      char what[64];
      snprintf(what, sizeof what, "access[%u]", i);
      return rp__region_check(g, &out[i].region, what);
    }
    if (out[i].mode != RP_IN && out[i].mode != RP_OUT &&
        out[i].mode != RP_INOUT)
      return rp__fail(g, RP_EINVAL, "access[%u]: bad mode %d", i,
                      (int)out[i].mode);
    if (!space_valid(out[i].space))
      return rp__fail(g, RP_EINVAL, "access[%u]: bad memory space %d", i,
                      out[i].space);
    if (out[i].space == RP_SPACE_HOST && !g->buf[out[i].region.buf].host &&
        !(g->flags & RP_GRAPH_NO_COHERENCE))
      return rp__fail(g, RP_EINVAL,
                      "access[%u]: buffer \"%s\" is internal "
                      "(it has no host image)",
                      i, buf_name(g, out[i].region.buf));
  }
  (void)p;
  refused_access = RP_NONE;
  return RP_OK;
}

static rp_status check_devices(rp_graph *g, const rp__proto *p) {
  if ((unsigned)p->type > RP_OP_HOST)
    return rp__fail(g, RP_EINVAL, "bad operation type %d", (int)p->type);
  if (p->type == RP_OP_HOST)
    return RP_OK;
  if (p->device < 0 || p->device >= RP_MAX_DEVICES)
    return rp__fail(g, RP_EINVAL, "device %d out of range (0..%d)", p->device,
                    RP_MAX_DEVICES - 1);
  if (p->dst_device < 0 || p->dst_device >= RP_MAX_DEVICES)
    return rp__fail(g, RP_EINVAL, "device %d out of range (0..%d)",
                    p->dst_device, RP_MAX_DEVICES - 1);
  if (p->type == RP_OP_COPY_D2D && p->device == p->dst_device)
    return rp__fail(g, RP_EINVAL, "peer copy from device %d to itself",
                    p->device);
  return RP_OK;
}

/* The op's name: the given one (copied), else its kernel's own (shared,
 * not copied: the descriptor outlives the graph), else a derived one.
 * *owned says whether the graph must free it. */
char *rp__derive_name(const rp_graph *g, const rp__proto *p,
                      const rp__access *acc, const char *given, bool *owned) {
  char tmp[256];
  *owned = true;
  if (given)
    return rp__strdup(given);
  if (p->type == RP_OP_KERNEL && p->kernel && p->kernel->name) {
    *owned = false;
    return (char *)p->kernel->name;
  }
  if (p->type == RP_OP_KERNEL) {
    /* Its kernel's name, cut as the formatted names are (a read graph
     * file gives one to every op: no snprintf per op). */
    const char *kn = p->kernel_name ? p->kernel_name : "kernel";
    size_t n = 0;
    while (n < sizeof tmp - 1 && kn[n])
      n++;
    char *d = malloc(n + 1);
    if (d) {
      memcpy(d, kn, n);
      d[n] = '\0';
    }
    return d;
  }
  const char *b = p->nacc ? buf_name(g, acc[0].region.buf) : "";
  switch (p->type) {
  case RP_OP_COPY_H2D:
    snprintf(tmp, sizeof tmp, "moveto %s", b);
    break;
  case RP_OP_COPY_D2H:
    snprintf(tmp, sizeof tmp, "movefrom %s", b);
    break;
  case RP_OP_COPY_D2D:
    snprintf(tmp, sizeof tmp, "peer %s %d->%d", b, p->device, p->dst_device);
    break;
  default:
    snprintf(tmp, sizeof tmp, "host");
  }
  return rp__strdup(tmp);
}

/* ---- automatic coherence ----------------------------------------------- */

typedef struct piece {
  uint64_t off, len;
  int src; /* source space */
} piece;

typedef struct plan {
  rp_graph *g;
  rp_buf buf;
  piece *p;
  uint32_t n, cap;
  int dst;
  int oom;
} plan;

/* Two stale pieces with the same source merge into one copy across a gap
 * the source holds valid (the gap is then copied too: where the
 * destination was valid it gets the same bytes, where not it becomes
 * valid). A box's rows become one copy instead of one per row. The gap
 * may be at most this long, or as long as the copy so far. */
enum { BRIDGE_BYTES = 64 * 1024 };

static void plan_piece(void *ctx, uint64_t off, uint64_t len, uint64_t mask) {
  plan *pl = ctx;
  int src;
  if (!mask)
    return; /* never written anywhere: nothing to copy */
  if (pl->dst != RP_SPACE_HOST && (mask & RP__HOST_BIT))
    src = RP_SPACE_HOST;
  else {
    src = 0;
    while (!(mask & rp__space_bit(src)))
      src++;
  }
  if (pl->n && pl->p[pl->n - 1].src == src) {
    piece *last = &pl->p[pl->n - 1];
    uint64_t end = last->off + last->len;
    if (end == off ||
        (end < off && (off - end <= BRIDGE_BYTES || off - end <= last->len) &&
         rp__valid_over(pl->g, pl->buf, end, off, src))) {
      last->len = off + len - last->off;
      return;
    }
  }
  if (rp__grow((void **)&pl->p, &pl->cap, pl->n + 1, sizeof *pl->p)) {
    pl->oom = 1;
    return;
  }
  pl->p[pl->n++] = (piece){off, len, src};
}

/* Records the copies that make region a->region valid in a->space. */
static rp_status make_valid(rp_graph *g, const rp__access *a,
                            const char *served, unsigned *count) {
  plan pl = {g, a->region.buf, NULL, 0, 0, a->space, 0};
  rp_status s = rp__stale_each(g, a, plan_piece, &pl);
  if (s == RP_OK && pl.oom)
    s = rp__fail(g, RP_ENOMEM, "out of memory planning coherence copies");
  for (uint32_t i = 0; s == RP_OK && i < pl.n; i++) {
    const piece *pc = &pl.p[i];
    rp__proto p = {0};
    rp__access ca[2];
    rp_region r = rp_range_bytes(a->region.buf, pc->off, pc->len);
    if (pc->off == 0 && pc->len == g->buf[a->region.buf].bytes)
      r = rp_whole(a->region.buf);
    ca[0] = (rp__access){r, RP_IN, pc->src};
    ca[1] = (rp__access){r, RP_OUT, a->space};
    char name[320];
    const char *bn = buf_name(g, a->region.buf);
    if (a->space == RP_SPACE_HOST) {
      p.type = RP_OP_COPY_D2H;
      p.device = p.dst_device = pc->src;
      snprintf(name, sizeof name, "movefrom %s for %s", bn, served);
    } else if (pc->src == RP_SPACE_HOST) {
      p.type = RP_OP_COPY_H2D;
      p.device = p.dst_device = a->space;
      snprintf(name, sizeof name, "moveto %s for %s", bn, served);
    } else {
      p.type = RP_OP_COPY_D2D;
      p.device = pc->src;
      p.dst_device = a->space;
      snprintf(name, sizeof name, "peer %s %d->%d for %s", bn, pc->src,
               a->space, served);
    }
    p.cost_us = -1;
    p.inserted = true;
    rp_op_opts o = RP_OP_OPTS_WITH(.name = name);
    s = rp__record_op(g, &p, ca, 2, NULL, &o, NULL);
    if (s == RP_OK && count)
      (*count)++;
  }
  free(pl.p);
  return s;
}

/* ---- appending ---------------------------------------------------------- */

/* Appends op *p (name, cost, kernel, type and devices set) with its
 * checked accesses, the scalar values of args, q's index space or host
 * function and the explicit dependencies: fills p's indices, grows the
 * arrays (pred_off to nop + 2 entries, not set). RP_ENOMEM leaves the
 * graph as it was. Shared by rp__record_op() and the file loader
 * (record/load.c). */
rp_status rp__store_op(rp_graph *g, rp__op *pp, const rp__proto *q,
                       const rp__access *chk, uint32_t nacc, const rp_arg *args,
                       const rp_node *after, uint32_t nafter, rp_node *out) {
  rp__op p = *pp;
  int host = p.type == RP_OP_HOST;
  int dims = p.type == RP_OP_KERNEL &&
             (q->space.x != 1 || q->space.y != 1 || q->space.z != 1);
  uint32_t nscalar = 0, nboxes = 0;
  for (uint32_t i = 0; p.kernel && args && i < p.kernel->nparams; i++)
    nscalar += p.kernel->params[i].mode == RP_SCALAR;
  /* A kernel loaded without its descriptor: the count, then the values. */
  int loaded = p.type == RP_OP_KERNEL && !p.kernel;
  if (loaded)
    nscalar = 1 + q->nscalars;
  for (uint32_t i = 0; i < nacc; i++)
    nboxes += chk[i].region.kind == RP_REGION_BOX;
  if (rp__grow((void **)&g->op, &g->capop, g->nop + 1, sizeof *g->op) ||
      rp__grow((void **)&g->sacc, &g->capsacc, g->nsacc + nacc,
               sizeof *g->sacc) ||
      rp__grow((void **)&g->box, &g->capbox, g->nbox + nboxes,
               sizeof *g->box) ||
      rp__grow((void **)&g->slot, &g->capslot, g->nslot + nscalar,
               sizeof *g->slot) ||
      rp__grow((void **)&g->dims, &g->capdims, g->ndims + (uint32_t)dims,
               sizeof *g->dims) ||
      rp__grow((void **)&g->hostfn, &g->caphostfn, g->nhostfn + (uint32_t)host,
               sizeof *g->hostfn) ||
      rp__grow((void **)&g->after, &g->capafter, g->nafter + nafter,
               sizeof *g->after) ||
      rp__grow((void **)&g->pred_off, &g->cappred, g->nop + 2,
               sizeof *g->pred_off))
    return RP_ENOMEM;
  rp_node j = g->nop;
  p.nacc = nacc;
  p.dims0 = RP_NONE;
  p.acc0 = g->nsacc;
  p.arg0 = host ? g->nhostfn : g->nslot;
  if (host)
    g->hostfn[g->nhostfn++] = (rp__hostfn){q->fn, q->user};
  if (dims) {
    p.dims0 = g->ndims;
    g->dims[g->ndims++] = q->space;
  }
  p.after0 = g->nafter;
  p.nafter = nafter;
  for (uint32_t i = 0; i < nacc; i++) {
    const rp_region *r = &chk[i].region;
    rp__sacc *a = &g->sacc[g->nsacc + i];
    *a = (rp__sacc){r->buf,
                    (uint8_t)r->kind,
                    (uint8_t)chk[i].mode,
                    (int16_t)chk[i].space,
                    r->offset,
                    r->bytes};
    if (r->kind == RP_REGION_BOX) {
      rp__box *b = &g->box[g->nbox];
      memset(b, 0, sizeof *b);
      b->ndims = r->ndims;
      for (unsigned d = 0; d < r->ndims && d < 3; d++) {
        b->lo[d] = r->lo[d];
        b->hi[d] = r->hi[d];
      }
      a->off = g->nbox++;
      a->len = 0;
    }
  }
  for (uint32_t i = 0; p.kernel && args && i < p.kernel->nparams; i++)
    if (p.kernel->params[i].mode == RP_SCALAR)
      g->slot[g->nslot++] = args[i].value;
  if (loaded) {
    g->slot[g->nslot++].u64 = q->nscalars;
    for (uint32_t i = 0; i < q->nscalars; i++)
      g->slot[g->nslot++] = q->scalars[i];
  }
  if (nafter)
    memcpy(g->after + g->nafter, after, nafter * sizeof *g->after);
  g->nsacc += nacc;
  g->nafter += nafter;
  g->op[j] = p;
  g->nop++;
  if (p.type != RP_OP_HOST) {
    int hi = q->device > q->dst_device ? q->device : q->dst_device;
    if (hi > g->max_device)
      g->max_device = hi;
  }
  *pp = p;
  *out = j;
  return RP_OK;
}

rp_status rp__record_op(rp_graph *g, const rp__proto *proto,
                        const rp__access *acc, uint32_t nacc,
                        const rp_arg *args, const rp_op_opts *o, rp_node *out) {
  refused_access = RP_NONE;
  if (!g || !proto || (nacc && !acc))
    return g ? rp__fail(g, RP_EINVAL, "NULL argument") : RP_EINVAL;
  if (g->ended)
    return rp__fail(g, RP_ESTATE, "graph ended: nothing more can be recorded");
  if (g->broken)
    return rp__fail(g, RP_ESTATE,
                    "graph unusable after an earlier failure "
                    "to allocate memory");
  if (g->nop >= RP_NONE - 1)
    return rp__fail(g, RP_ENOMEM, "too many operations");
  rp_status s = check_devices(g, proto);
  if (s != RP_OK)
    return s;
  rp_op_opts ol;
  if ((s = rp__op_opts_in(g, &ol, o)) != RP_OK)
    return s;
  o = &ol;
  if (o->nafter && !o->after)
    return rp__fail(g, RP_EINVAL, "after: NULL list of %u nodes", o->nafter);
  if (isnan(o->cost_us) || isinf(o->cost_us))
    return rp__fail(g, RP_EINVAL, "cost must be finite");
  for (unsigned i = 0; i < o->nafter; i++)
    if (o->after[i] >= g->nop)
      return rp__fail(g, RP_EINVAL,
                      "after[%u]: node %u is not an earlier "
                      "node (%u recorded)",
                      i, o->after[i], g->nop);
  /* Scratch for the checked accesses: on the stack for every kernel (at
   * most RP_MAX_PARAMS) and copy, so recording allocates nothing here. */
  rp__access small[RP_MAX_PARAMS], *chk = small;
  if (nacc > RP_MAX_PARAMS && !(chk = malloc(nacc * sizeof *chk)))
    return rp__fail(g, RP_ENOMEM, "out of memory recording");
  if ((s = check_accesses(g, proto, acc, nacc, chk)) != RP_OK)
    goto done;
  rp__proto q = *proto;
  q.nacc = nacc;
  rp__op p;
  memset(&p, 0, sizeof p);
  p.type = (uint8_t)q.type;
  p.device = (int16_t)q.device;
  p.dst_device = (int16_t)q.dst_device;
  p.cost_us = q.cost_us;
  p.kernel = q.type == RP_OP_KERNEL ? q.kernel : NULL;
  p.inserted = q.inserted;
  p.nacc = nacc;
  p.dims0 = RP_NONE;
  bool owned;
  p.name = rp__derive_name(g, &q, chk, o->name, &owned);
  p.name_shared = !owned;
  if (!p.name) {
    s = rp__fail(g, RP_ENOMEM, "out of memory recording");
    goto done;
  }
  if (proto->kernel_name && !(p.kernel_name = rp__strdup(proto->kernel_name))) {
    if (owned)
      free(p.name);
    s = rp__fail(g, RP_ENOMEM, "out of memory recording");
    goto done;
  }
  if (o->cost_us > 0)
    p.cost_us = o->cost_us;

  /* Coherence copies come first, in the order of the accesses. */
  int coherent = !(g->flags & RP_GRAPH_NO_COHERENCE) && !p.inserted &&
                 (p.type == RP_OP_KERNEL || p.type == RP_OP_HOST);
  for (uint32_t i = 0; coherent && i < nacc; i++)
    if (chk[i].mode & RP_IN)
      if ((s = make_valid(g, &chk[i], p.name, NULL)) != RP_OK) {
        if (owned)
          free(p.name);
        free(p.kernel_name);
        goto done;
      }

  rp_node j;
  if (rp__store_op(g, &p, &q, chk, nacc, args, o->after, o->nafter, &j) !=
      RP_OK) {
    if (owned)
      free(p.name);
    free(p.kernel_name);
    s = rp__fail(g, RP_ENOMEM, "out of memory recording");
    goto done;
  }
  g->pred_off[j + 1] = g->nedge;
  uint32_t nafter = p.nafter;
  s = rp__hazards(g, j, chk, nacc, g->after + p.after0, nafter);
  g->pred_off[j + 1] = g->nedge;
  if (s == RP_OK && !(g->flags & RP_GRAPH_NO_COHERENCE))
    s = rp__coherence_update(g, &p, chk);
  if (s != RP_OK)
    g->broken = true; /* the tracking state may be half updated */
  else if (out)
    *out = j;
done:
  if (chk != small)
    free(chk);
  return s;
}

/* ---- the public recording calls ----------------------------------------- */

rp_status rp_record_kernel(rp_graph *g, const rp_kernel *k, int device,
                           rp_dims space, const rp_arg *args,
                           const rp_op_opts *o, rp_node *out) {
  RP_ENTER();
  if (!g)
    return RP_BAD_ARG();
  if (!k)
    return rp__fail(g, RP_EINVAL, "kernel: NULL descriptor");
  rp_status s = rp__kernel_in(g, k, &k);
  if (s != RP_OK)
    return s;
  const char *kn = k->name ? k->name : "?";
  if (k->nparams > RP_MAX_PARAMS)
    return rp__fail(g, RP_EINVAL, "kernel \"%s\": %u parameters (at most %d)",
                    kn, k->nparams, RP_MAX_PARAMS);
  if (k->nparams && (!k->params || !args))
    return rp__fail(g, RP_EINVAL, "kernel \"%s\": NULL %s", kn,
                    k->params ? "arguments" : "parameter list");
  rp__access acc[RP_MAX_PARAMS];
  uint32_t nacc = 0;
  for (unsigned i = 0; i < k->nparams; i++) {
    rp_mode m = k->params[i].mode;
    const char *pn = k->params[i].name ? k->params[i].name : "?";
    /* rp_arg_buf() names a buffer; the scalar constructors RP_NONE. */
    if (m == RP_SCALAR && args[i].region.buf != RP_NONE)
      return rp__fail(
          g, RP_EINVAL,
          "parameter %u '%s' of kernel '%s' "
          "expects a scalar, got a region of buffer %s%s%s "
          "(rp_arg_buf(); a scalar is rp_arg_i64(), "
          "rp_arg_f64(), ...)",
          i, pn, kn, args[i].region.buf < g->nbuf ? "\"" : "",
          args[i].region.buf < g->nbuf ? g->buf[args[i].region.buf].name : "?",
          args[i].region.buf < g->nbuf ? "\"" : "");
    if (m == RP_SCALAR)
      continue;
    if (m != RP_IN && m != RP_OUT && m != RP_INOUT)
      return rp__fail(g, RP_EINVAL,
                      "parameter %u '%s' of kernel '%s': bad "
                      "mode %d",
                      i, pn, kn, (int)m);
    /* rp_arg_i64() and the other scalar constructors name no buffer. */
    if (args[i].region.buf == RP_NONE)
      return rp__fail(g, RP_EINVAL,
                      "parameter %u '%s' of kernel '%s' "
                      "expects a buffer region (%s), got a scalar",
                      i, pn, kn,
                      m == RP_IN    ? "in"
                      : m == RP_OUT ? "out"
                                    : "inout");
    if (args[i].region.buf >= g->nbuf)
      return rp__fail(g, RP_EINVAL,
                      "parameter %u '%s' of kernel '%s' "
                      "expects a buffer region, got one of buffer %u (the "
                      "graph has %u buffers)",
                      i, pn, kn, args[i].region.buf, g->nbuf);
    acc[nacc++] = (rp__access){args[i].region, m, device};
  }
  rp__proto p = {0};
  p.type = RP_OP_KERNEL;
  p.device = p.dst_device = device;
  p.cost_us = -1;
  p.kernel = k;
  p.space.x = space.x ? space.x : 1;
  p.space.y = space.y ? space.y : 1;
  p.space.z = space.z ? space.z : 1;
  s = rp__record_op(g, &p, acc, nacc, args, o, out);
  if (s != RP_OK && refused_access != RP_NONE) {
    /* Name the parameter rather than the access. */
    unsigned ai = refused_access, pi = 0, seen = 0;
    for (; pi < k->nparams; pi++)
      if (k->params[pi].mode != RP_SCALAR && seen++ == ai)
        break;
    char *colon = strchr(g->err, ':');
    char msg[sizeof g->err];
    snprintf(msg, sizeof msg, "parameter %u '%s' of kernel '%s'%s", pi,
             pi < k->nparams && k->params[pi].name ? k->params[pi].name : "?",
             kn, colon ? colon : "");
    rp__fail(g, s, "%s", msg);
  }
  return s;
}

static rp_status record_copy(rp_graph *g, rp_op_type t, rp_region r, int src,
                             int dst, const rp_op_opts *o, rp_node *out) {
  if (!g)
    return RP_EINVAL;
  rp__proto p = {0};
  p.type = t;
  p.device = t == RP_OP_COPY_H2D ? dst : src;
  p.dst_device = t == RP_OP_COPY_D2H ? src : dst;
  p.cost_us = -1;
  rp__access acc[2] = {{r, RP_IN, src}, {r, RP_OUT, dst}};
  return rp__record_op(g, &p, acc, 2, NULL, o, out);
}

rp_status rp_record_copy_to_device(rp_graph *g, rp_region r, int device,
                                   const rp_op_opts *o, rp_node *out) {
  RP_ENTER();
  if (!g)
    return RP_NULL_ARG();
  return record_copy(g, RP_OP_COPY_H2D, r, RP_SPACE_HOST, device, o, out);
}

rp_status rp_record_copy_to_host(rp_graph *g, rp_region r, int device,
                                 const rp_op_opts *o, rp_node *out) {
  RP_ENTER();
  if (!g)
    return RP_NULL_ARG();
  return record_copy(g, RP_OP_COPY_D2H, r, device, RP_SPACE_HOST, o, out);
}

rp_status rp_record_copy_peer(rp_graph *g, rp_region r, int src, int dst,
                              const rp_op_opts *o, rp_node *out) {
  RP_ENTER();
  if (!g)
    return RP_NULL_ARG();
  return record_copy(g, RP_OP_COPY_D2D, r, src, dst, o, out);
}

rp_status rp_record_host(rp_graph *g, rp_host_fn fn, void *user,
                         const rp_access *acc, unsigned nacc,
                         const rp_op_opts *o, rp_node *out) {
  RP_ENTER();
  if (!g)
    return RP_BAD_ARG();
  if (!fn)
    return rp__fail(g, RP_EINVAL, "host task: NULL function");
  if (nacc && !acc)
    return rp__fail(g, RP_EINVAL, "host task: NULL access list");
  rp__access small[RP_MAX_PARAMS], *a = small;
  if (nacc > RP_MAX_PARAMS && !(a = malloc(nacc * sizeof *a)))
    return rp__fail(g, RP_ENOMEM, "out of memory recording");
  for (unsigned i = 0; i < nacc; i++)
    a[i] = (rp__access){acc[i].region, acc[i].mode, RP_SPACE_HOST};
  rp__proto p = {0};
  p.type = RP_OP_HOST;
  p.device = p.dst_device = 0;
  p.cost_us = -1;
  p.fn = fn;
  p.user = user;
  rp_status s = rp__record_op(g, &p, nacc ? a : NULL, nacc, NULL, o, out);
  if (a != small)
    free(a);
  return s;
}

rp_status rp_record_sync_host(rp_graph *g, rp_region r, unsigned *count) {
  RP_ENTER();
  if (!g)
    return RP_BAD_ARG();
  if (count)
    *count = 0;
  if (g->ended)
    return rp__fail(g, RP_ESTATE, "graph ended: nothing more can be recorded");
  rp__access a = {r, RP_IN, RP_SPACE_HOST};
  rp_status s = rp__region_check(g, &a.region, "sync");
  if (s != RP_OK)
    return s;
  if (!g->buf[r.buf].host)
    return rp__fail(g, RP_EINVAL,
                    "sync: buffer \"%s\" is internal (it has "
                    "no host image)",
                    g->buf[r.buf].name);
  char served[300];
  snprintf(served, sizeof served, "sync %s", g->buf[r.buf].name);
  return make_valid(g, &a, served, count);
}
