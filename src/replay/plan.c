/* The execution plan: built once per exec from the ended graph and the
 * backend's description of its memory (see reprise/backend.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "replay/plan.h"
#include "record/graph.h"
#include "record/coherence.h"

struct rp__plan {
  rp_plan pub;
  rp_plan_node *node;
  rp_plan_access *acc;
  rp_plan_image *image;
  uint32_t *succ, *pred;
  uint64_t *iv;
  rp_plan_device dev[RP_MAX_DEVICES];
  uint32_t *node_of;
  uint32_t *hw_off, *hw;
  rp_plan_buffer *buf;
  uint64_t *part_rows;
};

const rp_plan *rp__plan_view(const rp__plan *p) { return &p->pub; }

void rp__plan_free(rp__plan *p) {
  if (!p)
    return;
  free(p->node);
  free(p->acc);
  free(p->image);
  free(p->succ);
  free(p->pred);
  free(p->iv);
  free(p->node_of);
  free(p->hw_off);
  free(p->hw);
  free(p->buf);
  free(p->part_rows);
  free(p);
}

static bool is_copy(rp_op_type t) {
  return t == RP_OP_COPY_H2D || t == RP_OP_COPY_D2H || t == RP_OP_COPY_D2D;
}

/* Builder state. */
typedef struct bld {
  const rp_graph *g;
  const rp_backend *be;
  rp__plan *p;
  char *err;
  size_t errlen;
  uint32_t nop, nbuf;
  unsigned nsl;      /* space slots: host + devices */
  uint32_t *img_of;  /* nbuf * nsl: image of (buffer, slot), RP_NONE */
  uint64_t *touched; /* per buffer: spaces accessed */
  size_t capacc, capiv, capimg;
} bld;

static unsigned slot(int sp) { return (unsigned)(sp + 1); }

static rp_status fail(bld *b, rp_status s, const char *fmt, const char *a,
                      unsigned n) {
  snprintf(b->err, b->errlen, fmt, a, n);
  return s;
}

static rp_status grow(void **p, size_t *cap, size_t need, size_t sz) {
  return rp__growz(p, cap, need, sz) ? RP_ENOMEM : RP_OK;
}

static void devices(bld *b) {
  rp_plan *pub = &b->p->pub;
  pub->ndev = rp_graph_num_devices(b->g);
  for (unsigned d = 0; d < pub->ndev; d++) {
    rp_device_kind k = rp_graph_device_kind(b->g, (int)d);
    if (k == RP_DEVICE_DEFAULT)
      k = b->be->owns;
    rp_plan_device *v = &b->p->dev[d];
    v->kind = k;
    v->native = k == b->be->owns;
    v->host_memory = k == RP_DEVICE_CPU || !v->native;
  }
  pub->dev = b->p->dev;
}

static bool host_memory(const bld *b, int sp) {
  return sp < 0 || b->p->dev[sp].host_memory;
}

static rp_status add_image(bld *b, rp_buf buf, uint64_t spaces,
                           bool user_array) {
  rp__plan *p = b->p;
  if (grow((void **)&p->image, &b->capimg, p->pub.nimage + 1, sizeof *p->image))
    return RP_ENOMEM;
  rp_buffer_desc d;
  rp_buffer_info(b->g, buf, &d);
  rp_plan_image *im = &p->image[p->pub.nimage];
  im->buf = buf;
  im->spaces = spaces;
  im->bytes = d.bytes;
  im->space = RP_SPACE_HOST;
  if (!(spaces & RP__HOST_BIT))
    for (int s = 0; s < RP_MAX_DEVICES; s++)
      if (spaces & (1ull << s)) {
        im->space = s;
        break;
      }
  im->flags = user_array ? RP_IMAGE_USER : RP_IMAGE_ZERO;
  im->lo = user_array ? 0 : d.bytes;
  im->hi = user_array ? d.bytes : 0;
  if (host_memory(b, im->space))
    im->flags |= RP_IMAGE_HOST_MEMORY;
  for (unsigned l = 0; l < b->nsl; l++)
    if (spaces & rp__space_bit((int)l - 1))
      b->img_of[(size_t)buf * b->nsl + l] = p->pub.nimage;
  p->pub.nimage++;
  return RP_OK;
}

/* One image per (buffer, space), except that the host-memory spaces of a
 * buffer share one when the coherence model says nothing can tell. */
static rp_status images(bld *b) {
  const rp_graph *g = b->g;
  size_t nslots = (size_t)b->nbuf * b->nsl;
  b->img_of = malloc((nslots ? nslots : 1) * sizeof *b->img_of);
  b->touched = calloc(b->nbuf ? b->nbuf : 1, sizeof *b->touched);
  if (!b->img_of || !b->touched)
    return RP_ENOMEM;
  for (size_t i = 0; i < nslots; i++)
    b->img_of[i] = RP_NONE;
  for (rp_node n = 0; n < b->nop; n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    for (unsigned k = 0; k < ni.naccess; k++) {
      rp_access_info ai;
      rp_node_access(g, n, k, &ai);
      b->touched[ai.region.buf] |= rp__space_bit(ai.space);
    }
  }
  bool may_share = !(b->be->flags & RP_BACKEND_SEPARATE_IMAGES);
  rp__coh *coh = NULL;
  rp_status s = RP_OK;
  for (rp_buf buf = 0; buf < b->nbuf && s == RP_OK; buf++) {
    rp_buffer_desc d;
    rp_buffer_info(g, buf, &d);
    uint64_t t = b->touched[buf], cls = 0;
    for (unsigned l = 0; l < b->nsl; l++)
      if ((t & rp__space_bit((int)l - 1)) && host_memory(b, (int)l - 1))
        cls |= rp__space_bit((int)l - 1);
    bool share = false;
    if (may_share && (cls & (cls - 1))) {
      if (!coh && (s = rp__coh_build(g, &coh)) != RP_OK)
        break;
      s = rp__coh_share(coh, buf, cls, &share);
    }
    if (s != RP_OK)
      break;
    if (share) {
      s = add_image(b, buf, cls, d.host && (cls & RP__HOST_BIT));
      t &= ~cls;
    }
    for (unsigned l = 0; l < b->nsl && s == RP_OK; l++) {
      uint64_t bit = rp__space_bit((int)l - 1);
      if (t & bit)
        s = add_image(b, buf, bit, d.host && l == 0);
    }
  }
  rp__coh_free(coh);
  b->p->pub.image = b->p->image;
  return s;
}

static rp_status add_access(bld *b, const rp_access_info *ai, rp_mode mode) {
  rp__plan *p = b->p;
  if (grow((void **)&p->acc, &b->capacc, p->pub.nacc + 1, sizeof *p->acc))
    return RP_ENOMEM;
  rp_plan_access *a = &p->acc[p->pub.nacc++];
  memset(a, 0, sizeof *a);
  a->mode = mode;
  if (!ai) {
    a->image = RP_NONE;
    return RP_OK;
  }
  a->space = ai->space;
  a->image = b->img_of[(size_t)ai->region.buf * b->nsl + slot(ai->space)];
  uint64_t n = rp_region_intervals(b->g, &ai->region, NULL, 0);
  if (grow((void **)&p->iv, &b->capiv, 2 * (p->pub.niv + n), sizeof *p->iv))
    return RP_ENOMEM;
  a->iv0 = (uint32_t)p->pub.niv;
  a->niv = (uint32_t)n;
  rp_region_intervals(b->g, &ai->region, p->iv + 2 * p->pub.niv, n);
  if (n) {
    const uint64_t *f = p->iv + 2 * p->pub.niv, *l = f + 2 * (n - 1);
    a->offset = f[0];
    a->bytes = l[0] + l[1] - f[0];
    rp_plan_image *im = &p->image[a->image];
    if (a->offset < im->lo)
      im->lo = a->offset;
    if (a->offset + a->bytes > im->hi)
      im->hi = a->offset + a->bytes;
  }
  p->pub.niv += n;
  return RP_OK;
}

/* Nodes and their accesses, in program order; copies within one image are
 * elided. */
static rp_status nodes(bld *b) {
  rp__plan *p = b->p;
  const rp_graph *g = b->g;
  p->node = malloc((b->nop ? b->nop : 1) * sizeof *p->node);
  p->node_of = malloc((b->nop ? b->nop : 1) * sizeof *p->node_of);
  if (!p->node || !p->node_of)
    return RP_ENOMEM;
  for (rp_node n = 0; n < b->nop; n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    p->node_of[n] = RP_NONE;
    if (is_copy(ni.type)) {
      rp_access_info s0, s1;
      rp_node_access(g, n, 0, &s0);
      rp_node_access(g, n, 1, &s1);
      rp_buf buf = s0.region.buf;
      if (b->img_of[(size_t)buf * b->nsl + slot(s0.space)] ==
          b->img_of[(size_t)buf * b->nsl + slot(s1.space)]) {
        p->pub.nelided++;
        continue;
      }
    }
    rp_plan_node *v = &p->node[p->pub.nnode];
    memset(v, 0, sizeof *v);
    v->type = ni.type;
    v->op = n;
    v->device = ni.device;
    v->dst_device = ni.dst_device;
    v->name = ni.name;
    v->kernel = ni.type == RP_OP_KERNEL ? ni.kernel : NULL;
    if (ni.type == RP_OP_HOST &&
        rp_node_host_fn(g, n, &v->host_fn, &v->host_user) != RP_OK)
      v->host_fn = NULL;
    v->acc0 = p->pub.nacc;
    if (ni.type == RP_OP_KERNEL && ni.device >= 0 &&
        !p->dev[ni.device].native) {
      v->flags |= RP_PLAN_ON_HOST;
      if (!ni.kernel || !ni.kernel->cpu)
        return fail(b, RP_ENOKERNEL,
                    "kernel \"%s\" (op %u) runs on the host "
                    "(its device's kind is not the backend's own) but has "
                    "no CPU body",
                    ni.name, n);
    }
    rp_status s = RP_OK;
    if (ni.type == RP_OP_KERNEL && ni.kernel) {
      for (unsigned i = 0, k = 0; i < ni.kernel->nparams && !s; i++) {
        rp_access_info ai;
        if (ni.kernel->params[i].mode == RP_SCALAR) {
          s = add_access(b, NULL, RP_SCALAR);
          continue;
        }
        rp_node_access(g, n, k++, &ai);
        s = add_access(b, &ai, ai.mode);
      }
    } else {
      for (unsigned k = 0; k < ni.naccess && !s; k++) {
        rp_access_info ai;
        rp_node_access(g, n, k, &ai);
        s = add_access(b, &ai, ai.mode);
      }
    }
    if (s)
      return s;
    v->nacc = p->pub.nacc - v->acc0;
    p->node_of[n] = p->pub.nnode++;
  }
  for (uint32_t i = 0; i < p->pub.nimage; i++)
    if (p->image[i].lo >= p->image[i].hi)
      p->image[i].lo = p->image[i].hi = 0; /* no node touches it */
  p->pub.node = p->node;
  p->pub.node_of = p->node_of;
  p->pub.acc = p->acc;
  p->pub.iv = p->iv;
  return RP_OK;
}

static int cmp_edge(const void *x, const void *y) {
  const rp__pedge *a = x, *b = y;
  if (a->to != b->to)
    return (a->to > b->to) - (a->to < b->to);
  return (a->from > b->from) - (a->from < b->from);
}

/* The graph's edges with elided copies contracted, plus what sharing
 * needs; CSR both ways. */
static rp_status edges(bld *b) {
  rp__plan *p = b->p;
  const rp_graph *g = b->g;
  rp__pedge *e = NULL;
  size_t ne = 0, cap = 0;
  /* Elided ops: their effective predecessors (nodes), in a pool:
   * pool[eoff[n] .. eoff[n] + stamp[n]). */
  uint32_t *eoff = calloc((size_t)b->nop + 1, sizeof *eoff);
  uint32_t *pool = NULL, *stamp = calloc(b->nop + 1, sizeof *stamp);
  size_t npool = 0, cappool = 0;
  rp_status s = RP_ENOMEM;
  if (!eoff || !stamp)
    goto out;
  for (rp_node n = 0; n < b->nop; n++) {
    uint32_t np;
    const rp_node *pr = rp_graph_preds(g, n, &np);
    uint32_t me = p->node_of[n];
    size_t start = npool;
    for (uint32_t i = 0; i < np; i++) {
      bool kept = p->node_of[pr[i]] != RP_NONE;
      uint32_t k0 = kept ? 0 : eoff[pr[i]];
      uint32_t k1 = kept ? 1 : k0 + stamp[pr[i]];
      for (uint32_t k = k0; k < k1; k++) {
        uint32_t f = kept ? p->node_of[pr[i]] : pool[k];
        if (me != RP_NONE) {
          if (grow((void **)&e, &cap, ne + 1, sizeof *e))
            goto out;
          e[ne++] = (rp__pedge){f, me};
        } else {
          if (grow((void **)&pool, &cappool, npool + 1, sizeof *pool))
            goto out;
          pool[npool++] = f;
        }
      }
    }
    if (me == RP_NONE) {
      eoff[n] = (uint32_t)start;
      stamp[n] = (uint32_t)(npool - start);
    }
  }
  if ((s = rp__plan_share_edges(&p->pub, &e, &ne, &cap)) != RP_OK)
    goto out;
  s = RP_ENOMEM;
  if (ne)
    qsort(e, ne, sizeof *e, cmp_edge);
  size_t u = 0;
  for (size_t i = 0; i < ne; i++)
    if (!u || e[u - 1].from != e[i].from || e[u - 1].to != e[i].to)
      e[u++] = e[i];
  ne = u;
  uint32_t nn = p->pub.nnode;
  p->succ = malloc((ne ? ne : 1) * sizeof *p->succ);
  p->pred = malloc((ne ? ne : 1) * sizeof *p->pred);
  uint32_t *cnt = calloc((size_t)nn + 1, sizeof *cnt);
  if (!p->succ || !p->pred || !cnt) {
    free(cnt);
    goto out;
  }
  for (size_t i = 0; i < ne; i++) {
    p->pred[i] = e[i].from;
    cnt[e[i].from + 1]++;
  }
  for (uint32_t v = 0; v < nn; v++)
    cnt[v + 1] += cnt[v];
  for (uint32_t v = 0; v < nn; v++) {
    p->node[v].succ0 = cnt[v];
    p->node[v].nsucc = 0;
    p->node[v].npred = 0;
  }
  for (size_t i = 0; i < ne; i++) {
    rp_plan_node *f = &p->node[e[i].from], *t = &p->node[e[i].to];
    p->succ[f->succ0 + f->nsucc++] = e[i].to;
    if (!t->npred++)
      t->pred0 = (uint32_t)i;
  }
  free(cnt);
  p->pub.nedge = (uint32_t)ne;
  p->pub.succ = p->succ;
  p->pub.pred = p->pred;
  s = RP_OK;
out:
  free(e);
  free(eoff);
  free(pool);
  free(stamp);
  return s;
}

/* Per buffer, the nodes writing its user array's memory. */
static rp_status host_writers(bld *b) {
  rp__plan *p = b->p;
  p->hw_off = calloc((size_t)b->nbuf + 2, sizeof *p->hw_off);
  if (!p->hw_off)
    return RP_ENOMEM;
  for (int pass = 0; pass < 2; pass++) {
    for (uint32_t v = 0; v < p->pub.nnode; v++) {
      const rp_plan_node *nd = &p->node[v];
      rp_buf last = RP_NONE;
      for (uint32_t k = 0; k < nd->nacc; k++) {
        const rp_plan_access *a = &p->acc[nd->acc0 + k];
        if (a->image == RP_NONE || !(a->mode & RP_OUT) ||
            !(p->image[a->image].flags & RP_IMAGE_USER))
          continue;
        rp_buf buf = p->image[a->image].buf;
        if (buf == last)
          continue;
        last = buf;
        if (pass == 0)
          p->hw_off[buf + 2]++;
        else
          p->hw[p->hw_off[buf + 1]++] = v;
      }
    }
    if (pass == 0) {
      for (uint32_t i = 0; i < b->nbuf; i++)
        p->hw_off[i + 2] += p->hw_off[i + 1];
      size_t tot = p->hw_off[b->nbuf + 1];
      if (!(p->hw = malloc((tot ? tot : 1) * sizeof *p->hw)))
        return RP_ENOMEM;
    }
  }
  p->pub.hw_off = p->hw_off;
  p->pub.host_writers = p->hw;
  return RP_OK;
}

/* The buffers' descriptions and parts, for backends that read nothing
 * but the plan. */
static rp_status buffers(bld *b) {
  rp__plan *p = b->p;
  uint64_t nrow = 0;
  for (rp_buf i = 0; i < b->nbuf; i++) {
    unsigned k = rp_buffer_num_parts(b->g, i);
    nrow += k ? k + 1 : 0;
  }
  p->buf = calloc(b->nbuf ? b->nbuf : 1, sizeof *p->buf);
  p->part_rows = malloc((nrow ? nrow : 1) * sizeof *p->part_rows);
  if (!p->buf || !p->part_rows)
    return RP_ENOMEM;
  uint64_t *row = p->part_rows;
  for (rp_buf i = 0; i < b->nbuf; i++) {
    rp_plan_buffer *pb = &p->buf[i];
    rp_buffer_info(b->g, i, &pb->desc);
    pb->nparts = rp_buffer_num_parts(b->g, i);
    if (!pb->nparts)
      continue;
    pb->part_rows = row;
    for (unsigned q = 0; q < pb->nparts; q++)
      rp_buffer_part_rows(b->g, i, q, &row[q], &row[q + 1]);
    row += pb->nparts + 1;
  }
  p->pub.nbuf = b->nbuf;
  p->pub.buf = p->buf;
  return RP_OK;
}

rp_status rp__plan_build(const rp_graph *g, const rp_backend *be,
                         rp__plan **out, char *err, size_t errlen) {
  *out = NULL;
  err[0] = 0;
  bld b = {0};
  b.g = g;
  b.be = be;
  b.err = err;
  b.errlen = errlen;
  b.nop = rp_graph_num_nodes(g);
  b.nbuf = rp_graph_num_buffers(g);
  b.nsl = 1 + rp_graph_num_devices(g);
  if (!(b.p = calloc(1, sizeof *b.p)))
    return RP_ENOMEM;
  b.p->pub.graph = g;
  devices(&b);
  rp_status s;
  if ((s = buffers(&b)) == RP_OK && (s = images(&b)) == RP_OK &&
      (s = nodes(&b)) == RP_OK && (s = edges(&b)) == RP_OK)
    s = host_writers(&b);
  free(b.img_of);
  free(b.touched);
  if (s != RP_OK) {
    if (!err[0])
      snprintf(err, errlen, "building the execution plan: %s", rp_strerror(s));
    rp__plan_free(b.p);
    return s;
  }
  *out = b.p;
  return RP_OK;
}

rp_status rp_plan_may_share(const rp_plan *p, rp_buf b, uint64_t spaces,
                            int *ok) {
  RP_ENTER();
  if (!p || !ok || b >= rp_graph_num_buffers(p->graph))
    return RP_BAD_ARG();
  *ok = 0;
  rp__coh *c = NULL;
  bool share = false;
  rp_status s = rp__coh_build(p->graph, &c);
  if (s == RP_OK)
    s = rp__coh_share(c, b, spaces, &share);
  rp__coh_free(c);
  *ok = s == RP_OK && share;
  return s;
}
