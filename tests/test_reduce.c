/* Exact transitive reduction: on large random graphs of several shapes the
 * stored edges must EQUAL the brute-force transitive reduction of the
 * brute-force pairwise hazards (plus the explicit edges), for the default
 * ancestor window and for a tiny one (so that most decisions are made
 * outside the window). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "record/hazard.h"
#include "util.h"
#include "reprise/kernel.h"

TestSuite(reduce, .timeout = 300);

/* ASan+UBSan (RP_SANITIZE) runs these cases about 10x slower, and CI keeps
 * each test under 60 s on 2 cores under load: there, the longest cases
 * run fewer seeds or smaller graphs, SAN(plain, sanitized); every shape,
 * window and tuning stays. */
#ifdef RP_TEST_SANITIZED
#define SAN(plain, sanitized) (sanitized)
#else
#define SAN(plain, sanitized) (plain)
#endif

/* ---- brute force --------------------------------------------------------- */

typedef struct bacc {
  uint32_t node, buf;
  int space, mode;
  uint64_t n, *iv; /* n (offset, length) pairs, increasing */
} bacc;

static int overlap(const bacc *a, const bacc *b) {
  uint64_t i = 0, k = 0;
  while (i < a->n && k < b->n) {
    uint64_t alo = a->iv[2 * i], ahi = alo + a->iv[2 * i + 1];
    uint64_t blo = b->iv[2 * k], bhi = blo + b->iv[2 * k + 1];
    if (alo < bhi && blo < ahi)
      return 1;
    if (ahi <= bhi)
      i++;
    else
      k++;
  }
  return 0;
}

/* Hazard kind bits of (earlier a, later b): 1 raw, 2 war, 4 waw. */
static unsigned kinds(const bacc *a, const bacc *b) {
  if (a->buf != b->buf || a->space != b->space || !overlap(a, b))
    return 0;
  unsigned k = 0;
  if ((a->mode & RP_OUT) && (b->mode & RP_IN))
    k |= 1;
  if ((a->mode & RP_IN) && (b->mode & RP_OUT))
    k |= 2;
  if ((a->mode & RP_OUT) && (b->mode & RP_OUT))
    k |= 4;
  return k;
}

typedef struct brute {
  uint32_t n, words;
  uint64_t *direct; /* row i: direct successors of i */
  uint64_t *after;  /* row i: explicit successors of i */
  uint64_t *reach;  /* row i: descendants of i */
  bacc *acc;
  uint32_t nacc;
} brute;

#define ROW(m, b, i) ((m) + (size_t)(i) * (b)->words)
#define BIT(r, k) (((r)[(k) >> 6] >> ((k)&63)) & 1)
#define SET(r, k) ((r)[(k) >> 6] |= 1ull << ((k)&63))

static int acc_cmp(const void *x, const void *y) {
  const bacc *a = x, *b = y;
  if (a->buf != b->buf)
    return a->buf < b->buf ? -1 : 1;
  if (a->space != b->space)
    return a->space < b->space ? -1 : 1;
  return a->node < b->node ? -1 : a->node > b->node;
}

static void brute_build(brute *B, const rp_graph *g) {
  uint32_t n = rp_graph_num_nodes(g);
  B->n = n;
  B->words = (n + 63) / 64;
  B->direct = calloc((size_t)n * B->words, 8);
  B->after = calloc((size_t)n * B->words, 8);
  B->reach = calloc((size_t)n * B->words, 8);
  B->acc = calloc(g->nsacc + 1, sizeof *B->acc);
  B->nacc = 0;
  for (uint32_t j = 0; j < n; j++) {
    rp_node_info in;
    rp_node_info_get(g, j, &in);
    for (unsigned x = 0; x < in.naccess; x++) {
      rp_access_info ai;
      rp_node_access(g, j, x, &ai);
      bacc *a = &B->acc[B->nacc++];
      a->node = j;
      a->buf = ai.region.buf;
      a->space = ai.space;
      a->mode = ai.mode;
      a->n = rp_region_intervals(g, &ai.region, NULL, 0);
      a->iv = malloc((a->n + 1) * 2 * sizeof *a->iv);
      rp_region_intervals(g, &ai.region, a->iv, a->n);
    }
    const rp__op *o = &g->op[j];
    for (uint32_t k = 0; k < o->nafter; k++)
      SET(ROW(B->after, B, g->after[o->after0 + k]), j);
  }
  /* Pairs of accesses of one (buffer, space). */
  qsort(B->acc, B->nacc, sizeof *B->acc, acc_cmp);
  for (uint32_t s = 0, e; s < B->nacc; s = e) {
    for (e = s; e < B->nacc && B->acc[e].buf == B->acc[s].buf &&
                B->acc[e].space == B->acc[s].space;
         e++)
      ;
    for (uint32_t x = s; x < e; x++)
      for (uint32_t y = x + 1; y < e; y++)
        if (B->acc[x].node < B->acc[y].node && kinds(&B->acc[x], &B->acc[y]))
          SET(ROW(B->direct, B, B->acc[x].node), B->acc[y].node);
  }
  for (size_t i = 0; i < (size_t)n * B->words; i++)
    B->direct[i] |= B->after[i];
  /* Descendants, latest node first. */
  for (uint32_t i = n; i-- > 0;) {
    uint64_t *r = ROW(B->reach, B, i);
    const uint64_t *d = ROW(B->direct, B, i);
    for (uint32_t k = i + 1; k < n; k++)
      if (BIT(d, k)) {
        SET(r, k);
        const uint64_t *rk = ROW(B->reach, B, k);
        for (uint32_t w = 0; w < B->words; w++)
          r[w] |= rk[w];
      }
  }
}

static void brute_free(brute *B) {
  for (uint32_t i = 0; i < B->nacc; i++)
    free(B->acc[i].iv);
  free(B->acc);
  free(B->direct);
  free(B->after);
  free(B->reach);
}

/* Hazard kinds between nodes i < j on buffer b (bits as in kinds()). */
static unsigned pair_kinds(const brute *B, uint32_t i, uint32_t j, uint32_t b) {
  unsigned k = 0;
  for (uint32_t x = 0; x < B->nacc; x++)
    if (B->acc[x].node == i && B->acc[x].buf == b)
      for (uint32_t y = 0; y < B->nacc; y++)
        if (B->acc[y].node == j)
          k |= kinds(&B->acc[x], &B->acc[y]);
  return k;
}

/* ---- labels ------------------------------------------------------------- */

/* The label a kept hazard edge carries: over the accesses of its target,
 * byte by byte, reads first, then writes: a read sees the last writer
 * (RAW), a write the readers since the last writer (WAR) or, when none
 * read it since, that writer (WAW); the least kind, then the lowest
 * buffer, of what the source was seen as. */
typedef struct triple {
  uint32_t from, to, kind, buf;
} triple;

static int triple_cmp(const void *x, const void *y) {
  const triple *a = x, *b = y;
  if (a->to != b->to)
    return a->to < b->to ? -1 : 1;
  if (a->from != b->from)
    return a->from < b->from ? -1 : 1;
  if (a->kind != b->kind)
    return a->kind < b->kind ? -1 : 1;
  return a->buf < b->buf ? -1 : a->buf > b->buf;
}

static int u64_cmp(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

typedef struct tlist {
  triple *t;
  size_t n, cap;
} tlist;

static void tl_add(tlist *l, uint32_t from, uint32_t to, uint32_t kind,
                   uint32_t buf) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 1024;
    l->t = realloc(l->t, l->cap * sizeof *l->t);
  }
  l->t[l->n++] = (triple){from, to, kind, buf};
}

/* What every node sees each earlier one as (B->acc sorted by buffer,
 * space, node), sorted by (to, from, kind, buf). */
static tlist seen_as(const brute *B) {
  tlist l = {NULL, 0, 0};
  for (uint32_t s = 0, e; s < B->nacc; s = e) {
    for (e = s; e < B->nacc && B->acc[e].buf == B->acc[s].buf &&
                B->acc[e].space == B->acc[s].space;
         e++)
      ;
    size_t nbp = 0;
    for (uint32_t x = s; x < e; x++)
      nbp += 2 * B->acc[x].n;
    uint64_t *bp = malloc((nbp + 1) * sizeof *bp);
    nbp = 0;
    for (uint32_t x = s; x < e; x++)
      for (uint64_t v = 0; v < B->acc[x].n; v++) {
        bp[nbp++] = B->acc[x].iv[2 * v];
        bp[nbp++] = B->acc[x].iv[2 * v] + B->acc[x].iv[2 * v + 1];
      }
    qsort(bp, nbp, sizeof *bp, u64_cmp);
    size_t k = 0;
    for (size_t x = 0; x < nbp; x++)
      if (!k || bp[k - 1] != bp[x])
        bp[k++] = bp[x];
    size_t nseg = k ? k - 1 : 0;
    uint32_t *wr = malloc((nseg + 1) * sizeof *wr);
    uint32_t **rd = calloc(nseg + 1, sizeof *rd);
    uint32_t *nrd = calloc(nseg + 1, sizeof *nrd);
    for (size_t q = 0; q < nseg; q++)
      wr[q] = RP_NONE;
    for (uint32_t a = s, b; a < e; a = b) {
      uint32_t j = B->acc[a].node;
      for (b = a; b < e && B->acc[b].node == j; b++)
        ;
      for (int pass = 0; pass < 2; pass++)
        for (uint32_t x = a; x < b; x++) {
          const bacc *ac = &B->acc[x];
          if (!(ac->mode & (pass ? RP_OUT : RP_IN)))
            continue;
          for (uint64_t v = 0; v < ac->n; v++) {
            uint64_t lo = ac->iv[2 * v], hi = lo + ac->iv[2 * v + 1];
            size_t q = 0, qe = nseg;
            while (q < qe) { /* the segment starting at lo */
              size_t m = q + (qe - q) / 2;
              if (bp[m] < lo)
                q = m + 1;
              else
                qe = m;
            }
            for (; q < nseg && bp[q] < hi; q++) {
              if (!pass) {
                if (wr[q] != RP_NONE && wr[q] != j)
                  tl_add(&l, wr[q], j, RP_EDGE_RAW, ac->buf);
                if (!nrd[q] || rd[q][nrd[q] - 1] != j) {
                  rd[q] = realloc(rd[q], (nrd[q] + 1) * sizeof **rd);
                  rd[q][nrd[q]++] = j;
                }
                continue;
              }
              for (uint32_t r = 0; r < nrd[q]; r++)
                if (rd[q][r] != j)
                  tl_add(&l, rd[q][r], j, RP_EDGE_WAR, ac->buf);
              if (!nrd[q] && wr[q] != RP_NONE && wr[q] != j)
                tl_add(&l, wr[q], j, RP_EDGE_WAW, ac->buf);
              wr[q] = j;
              nrd[q] = 0;
            }
          }
        }
    }
    for (size_t q = 0; q < nseg; q++)
      free(rd[q]);
    free(rd);
    free(nrd);
    free(wr);
    free(bp);
  }
  qsort(l.t, l.n, sizeof *l.t, triple_cmp);
  return l;
}

/* The label of edge from -> to: the first triple of the pair. */
static const triple *label_of(const tlist *l, uint32_t from, uint32_t to) {
  size_t lo = 0, hi = l->n;
  triple key = {from, to, 0, 0};
  while (lo < hi) {
    size_t m = lo + (hi - lo) / 2;
    if (triple_cmp(&l->t[m], &key) < 0)
      lo = m + 1;
    else
      hi = m;
  }
  return lo < l->n && l->t[lo].from == from && l->t[lo].to == to ? &l->t[lo]
                                                                 : NULL;
}

/* The stored edges equal TR(hazards + afters) + afters, exactly, and each
 * hazard edge carries the label label_of() gives. */
static void check_exact(const rp_graph *g, const char *what) {
  brute B;
  brute_build(&B, g);
  uint32_t n = B.n, W = B.words;
  uint64_t *want = calloc((size_t)n * W, 8), *got = calloc((size_t)n * W, 8);
  uint64_t *tmp = calloc(W, 8);
  size_t nwant = 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint64_t *d = ROW(B.direct, &B, i);
    memset(tmp, 0, W * 8);
    for (uint32_t k = i + 1; k < n; k++)
      if (BIT(d, k)) {
        const uint64_t *rk = ROW(B.reach, &B, k);
        for (uint32_t w = 0; w < W; w++)
          tmp[w] |= rk[w];
      }
    uint64_t *row = ROW(want, &B, i);
    const uint64_t *af = ROW(B.after, &B, i);
    for (uint32_t w = 0; w < W; w++) {
      row[w] = (d[w] & ~tmp[w]) | af[w];
      nwant += (size_t)__builtin_popcountll(row[w]);
    }
  }
  uint32_t m = rp_graph_num_edges(g);
  tlist seen = seen_as(&B);
  for (uint32_t e = 0; e < m; e++) {
    rp_edge ed;
    rp_graph_edge(g, e, &ed);
    cr_assert_lt(ed.from, ed.to, "%s", what);
    cr_assert(!BIT(ROW(got, &B, ed.from), ed.to),
              "%s: edge %u->%u stored twice", what, ed.from, ed.to);
    SET(ROW(got, &B, ed.from), ed.to);
    cr_assert(BIT(ROW(want, &B, ed.from), ed.to),
              "%s: edge %u->%u is not in the transitive reduction", what,
              ed.from, ed.to);
    if (BIT(ROW(B.after, &B, ed.from), ed.to)) {
      cr_assert_eq(ed.kind, RP_EDGE_AFTER, "%s", what);
      cr_assert_eq(ed.buf, RP_NONE, "%s", what);
    } else {
      cr_assert_neq(ed.kind, RP_EDGE_AFTER, "%s", what);
      unsigned k = pair_kinds(&B, ed.from, ed.to, ed.buf);
      cr_assert(k & (1u << ed.kind),
                "%s: edge %u->%u labelled %s on "
                "buffer %u, which has hazard kinds %#x there",
                what, ed.from, ed.to, rp_edge_kind_name(ed.kind), ed.buf, k);
      const triple *t = label_of(&seen, ed.from, ed.to);
      cr_assert(t && t->kind == (uint32_t)ed.kind && t->buf == ed.buf,
                "%s: edge %u->%u labelled %s on buffer %u, expected %s on "
                "buffer %u",
                what, ed.from, ed.to, rp_edge_kind_name(ed.kind), ed.buf,
                t ? rp_edge_kind_name((rp_edge_kind)t->kind) : "-",
                t ? t->buf : RP_NONE);
    }
  }
  cr_assert_eq(m, nwant, "%s: %u edges stored, the reduction has %zu", what, m,
               nwant);
  free(seen.t);
  free(want);
  free(got);
  free(tmp);
  brute_free(&B);
}

/* ---- shapes -------------------------------------------------------------- */

static void nop_host(void *user, void *const *ptrs) { (void)user, (void)ptrs; }

static rp_graph *new_graph(unsigned flags, uint32_t window) {
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, flags));
  if (window)
    rp__hazard_window(g, window);
  return g;
}

/* The blocked-solver shape: nbuf buffers of bytes; each op reads one whole
 * buffer and updates a piece of another (an after edge now and then). */
static rp_graph *solver_shape(uint64_t seed, uint32_t window, unsigned nbuf,
                              uint64_t bytes, uint64_t piece, unsigned nops,
                              unsigned ndev) {
  static char host[1];
  rp_graph *g = new_graph(RP_GRAPH_NO_COHERENCE, window);
  for (unsigned b = 0; b < nbuf; b++) {
    char name[16];
    snprintf(name, sizeof name, "v%u", b);
    rp_buffer_desc d = {name, host, bytes, 1, 0, {0, 0, 0}};
    TU_OK(g, rp_buffer_add(g, &d, NULL));
  }
  static const rp_param ps[] = {{"x", RP_IN}, {"y", RP_INOUT}};
  static const rp_kernel k =
      RP_KERNEL_WITH(.name = "upd", .nparams = 2, .params = ps);
  uint64_t s = seed * 7919 + 1;
  for (unsigned i = 0; i < nops; i++) {
    rp_buf a = (rp_buf)(tu_rand(&s) % nbuf), b = (rp_buf)(tu_rand(&s) % nbuf);
    if (a == b)
      b = (b + 1) % nbuf;
    uint64_t off = (tu_rand(&s) % (bytes / piece)) * piece;
    rp_arg args[2] = {rp_arg_buf(rp_whole(a)),
                      rp_arg_buf(rp_bytes(b, off, piece))};
    rp_node after = (rp_node)(i ? tu_rand(&s) % i : 0);
    rp_op_opts o =
        RP_OP_OPTS_WITH(.after = &after, .nafter = i && tu_rand(&s) % 16 == 0);
    int dev = (int)(tu_rand(&s) % ndev);
    TU_OK(g, rp_record_kernel(g, &k, dev, rp_dims3(1, 1, 1), args, &o, NULL));
  }
  TU_OK(g, rp_graph_end(g));
  return g;
}

/* A tiled Cholesky factorization over one matrix of t x t tiles of e x e
 * elements, every task a 2-d box of tiles. */
static rp_graph *cholesky_shape(unsigned t, unsigned e, uint32_t window) {
  static double host[1];
  rp_graph *g = new_graph(RP_GRAPH_NO_COHERENCE, window);
  rp_buf A;
  rp_buffer_desc d = {"A", host, (uint64_t)t * e * t * e * 8,
                      8,   2,    {(uint64_t)t * e, (uint64_t)t * e, 0}};
  TU_OK(g, rp_buffer_add(g, &d, &A));
#define TILE(i, j) rp_box2(A, (i)*e, (i)*e + e, (j)*e, (j)*e + e)
  for (unsigned k = 0; k < t; k++) {
    rp_access a1[1] = {{TILE(k, k), RP_INOUT}};
    TU_OK(g, rp_record_host(g, nop_host, NULL, a1, 1, NULL, NULL));
    for (unsigned i = k + 1; i < t; i++) {
      rp_access a2[2] = {{TILE(k, k), RP_IN}, {TILE(i, k), RP_INOUT}};
      TU_OK(g, rp_record_host(g, nop_host, NULL, a2, 2, NULL, NULL));
    }
    for (unsigned i = k + 1; i < t; i++) {
      rp_access a3[2] = {{TILE(i, k), RP_IN}, {TILE(i, i), RP_INOUT}};
      TU_OK(g, rp_record_host(g, nop_host, NULL, a3, 2, NULL, NULL));
      for (unsigned j = k + 1; j < i; j++) {
        rp_access a4[3] = {
            {TILE(i, k), RP_IN}, {TILE(j, k), RP_IN}, {TILE(i, j), RP_INOUT}};
        TU_OK(g, rp_record_host(g, nop_host, NULL, a4, 3, NULL, NULL));
      }
    }
  }
#undef TILE
  TU_OK(g, rp_graph_end(g));
  return g;
}

static const uint32_t windows[] = {64, 0};

Test(reduce, blocked_solver_whole_read_partial_update) {
  char what[96];
  for (unsigned w = 0; w < 2; w++)
    for (uint64_t seed = 1; seed <= SAN(3, 1); seed++) {
      /* 64 buffers of 1 MiB, 4 KiB updates: most pieces written once. */
      rp_graph *g = solver_shape(seed, windows[w], 64, 1 << 20, 4096, 2500, 1);
      snprintf(what, sizeof what, "solver 1MiB seed %llu window %u",
               (unsigned long long)seed, windows[w]);
      check_exact(g, what);
      rp_graph_destroy(g);
      /* Few pieces per buffer, so that pieces are rewritten often; two
       * devices (spaces never conflict). */
      g = solver_shape(seed, windows[w], 16, 1 << 14, 4096, 2500, 2);
      snprintf(what, sizeof what, "solver 16KiB seed %llu window %u",
               (unsigned long long)seed, windows[w]);
      check_exact(g, what);
      rp_graph_destroy(g);
    }
}

Test(reduce, tiled_cholesky_boxes) {
  for (unsigned w = 0; w < 2; w++) {
    rp_graph *g = cholesky_shape(16, 4, windows[w]);
    cr_assert_eq(rp_graph_num_nodes(g), 16 * 17 * 18 / 6);
    check_exact(g, windows[w] ? "cholesky window 64" : "cholesky");
    rp_graph_destroy(g);
  }
}

Test(reduce, random_partial_regions_several_devices) {
  char what[96];
  for (unsigned w = 0; w < 2; w++)
    for (uint64_t seed = 1; seed <= SAN(6, 3); seed++) {
      tu_random r;
      unsigned flags = seed % 2 ? RP_GRAPH_NO_COHERENCE : 0;
      /* The window is set on a graph before anything is recorded. */
      memset(&r, 0, sizeof r);
      cr_assert_eq(
          tu_random_graph_w(&r, seed, 6, 256, 1500, 3, flags, 1, windows[w]), 0,
          "%s", rp_graph_error(r.g));
      TU_OK(r.g, rp_graph_end(r.g));
      snprintf(what, sizeof what, "random seed %llu flags %u window %u",
               (unsigned long long)seed, flags, windows[w]);
      check_exact(r.g, what);
      tu_random_free(&r);
    }
}

/* Boxes and byte ranges mixed over 2-d and 3-d buffers: rows split into
 * bands at arbitrary places, partial rows, boxes of rows of rows. */
Test(reduce, random_boxes_and_byte_ranges_2d_3d) {
  static char host[1];
  char what[96];
  for (unsigned w = 0; w < 2; w++)
    for (uint64_t seed = 1; seed <= SAN(8, 4); seed++) {
      rp_graph *g = new_graph(seed % 2 ? RP_GRAPH_NO_COHERENCE : 0, windows[w]);
      rp_buf b2, b3;
      rp_buffer_desc d2 = {"M", host, 12 * 10 * 2, 2, 2, {12, 10, 0}};
      rp_buffer_desc d3 = {"C", host, 4 * 5 * 6 * 4, 4, 3, {4, 5, 6}};
      TU_OK(g, rp_buffer_add(g, &d2, &b2));
      TU_OK(g, rp_buffer_add(g, &d3, &b3));
      uint64_t s = seed * 104729;
      for (unsigned i = 0; i < 1200; i++) {
        rp_access acc[2];
        unsigned n = 1 + (unsigned)(tu_rand(&s) % 2);
        for (unsigned k = 0; k < n; k++) {
          int three = (int)(tu_rand(&s) % 2);
          rp_buf b = three ? b3 : b2;
          const rp_buffer_desc *d = three ? &d3 : &d2;
          if (tu_rand(&s) % 3 == 0) {
            uint64_t len = 1 + tu_rand(&s) % (d->bytes / 3);
            uint64_t off = tu_rand(&s) % (d->bytes - len + 1);
            acc[k].region = rp_bytes(b, off, len);
          } else {
            uint64_t lo[3], hi[3];
            for (unsigned x = 0; x < d->ndims; x++) {
              lo[x] = tu_rand(&s) % d->dims[x];
              hi[x] = lo[x] + 1 + tu_rand(&s) % (d->dims[x] - lo[x]);
            }
            acc[k].region = rp_box(b, d->ndims, lo, hi);
          }
          acc[k].mode = (rp_mode)(1 + tu_rand(&s) % 3);
        }
        if (n == 2 && acc[0].region.buf == acc[1].region.buf)
          n = 1; /* one access per buffer: no overlap within an op */
        TU_OK(g, rp_record_host(g, nop_host, NULL, acc, n, NULL, NULL));
      }
      TU_OK(g, rp_graph_end(g));
      snprintf(what, sizeof what, "boxes seed %llu window %u",
               (unsigned long long)seed, windows[w]);
      check_exact(g, what);
      rp_graph_destroy(g);
    }
}

/* Automatic coherence over boxes: kernels on two devices and host tasks
 * bump random boxes of one 2-d buffer; the reference replay must give
 * what program order gives. */
RP_KERNEL(box_bump_k, {
  uint8_t *a = RP_PTR(uint8_t, 0);
  uint64_t r0 = RP_VAL(uint64_t, 1), c0 = RP_VAL(uint64_t, 2);
  uint64_t i = (r0 + RP_Y) * 10 + c0 + RP_X;
  a[i] = (uint8_t)(a[i] * 5 + 7);
})
static const rp_param box_bump_p[] = {
    {"a", RP_INOUT}, {"r0", RP_SCALAR}, {"c0", RP_SCALAR}};
static const rp_kernel box_bump = RP_KERNEL_DESC(box_bump_k, box_bump_p);

typedef struct hbox {
  uint64_t r0, r1, c0, c1;
} hbox;

static void host_box(void *user, void *const *ptrs) {
  const hbox *h = user;
  uint8_t *a = ptrs[0];
  for (uint64_t r = h->r0; r < h->r1; r++)
    for (uint64_t c = h->c0; c < h->c1; c++)
      a[r * 10 + c] = (uint8_t)(a[r * 10 + c] * 5 + 7);
}

Test(reduce, coherence_over_boxes_matches_program_order) {
  for (uint64_t seed = 1; seed <= 20; seed++) {
    uint8_t M[120], want[120];
    hbox hb[200];
    for (int i = 0; i < 120; i++)
      M[i] = want[i] = (uint8_t)(i * 7 + seed);
    rp_graph *g;
    rp_buf m;
    TU_OK(NULL, rp_graph_create(&g, 0));
    TU_OK(g, rp_buffer_register_2d(g, "M", M, 12, 10, 1, &m));
    uint64_t s = seed * 31337;
    for (unsigned i = 0; i < 200; i++) {
      hbox *h = &hb[i];
      h->r0 = tu_rand(&s) % 12;
      h->r1 = h->r0 + 1 + tu_rand(&s) % (12 - h->r0);
      h->c0 = tu_rand(&s) % 10;
      h->c1 = h->c0 + 1 + tu_rand(&s) % (10 - h->c0);
      rp_region r = rp_box2(m, h->r0, h->r1, h->c0, h->c1);
      unsigned kind = (unsigned)(tu_rand(&s) % 3);
      if (kind < 2) {
        rp_arg args[3] = {rp_arg_buf(r), rp_arg_i64((int64_t)h->r0),
                          rp_arg_i64((int64_t)h->c0)};
        TU_OK(g, rp_record_kernel(g, &box_bump, (int)kind,
                                  rp_dims3(h->c1 - h->c0, h->r1 - h->r0, 1),
                                  args, NULL, NULL));
      } else {
        rp_access acc = {r, RP_INOUT};
        TU_OK(g, rp_record_host(g, host_box, h, &acc, 1, NULL, NULL));
      }
      host_box(h, (void *const[]){want});
    }
    TU_OK(g, rp_record_sync_host(g, rp_whole(m), NULL));
    TU_OK(g, rp_graph_end(g));
    check_exact(g, "coherence over boxes");
    TU_OK(g, rp_replay_reference(g, 1));
    cr_assert_arr_eq(M, want, 120, "seed %llu", (unsigned long long)seed);
    rp_graph_destroy(g);
  }
}

/* Larger: 6 000 operations (3 000 sanitized) of the solver shape and of
 * random regions on three devices, window 64 (nearly every decision
 * beyond it). */
Test(reduce, large_graphs_window_64) {
  const unsigned n = SAN(6000, 3000);
  rp_graph *g = solver_shape(11, 64, 64, 1 << 20, 4096, n, 1);
  check_exact(g, "solver large");
  rp_graph_destroy(g);
  g = solver_shape(12, 64, 24, 1 << 15, 4096, n, 3);
  check_exact(g, "solver 32KiB large");
  rp_graph_destroy(g);
  tu_random r;
  cr_assert_eq(tu_random_graph_w(&r, 13, 8, 512, n, 3, 0, 1, 64), 0, "%s",
               rp_graph_error(r.g));
  TU_OK(r.g, rp_graph_end(r.g));
  check_exact(r.g, "random large");
  tu_random_free(&r);
}

/* ---- far candidates: lists, frontiers, pending edges settled --------- */

static rp_graph *tuned_graph(unsigned flags, uint32_t window, uint32_t list,
                             uint32_t search) {
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, flags));
  rp__hazard_tune(g, window, list, search);
  return g;
}

/* The shapes of tools/bench/bench_record.c over nbuf buffers: uniform
 * (a random chunk of one buffer read, one of another updated; one op in
 * 8 a copy to the host when coherence is off), sweep (the two buffers
 * neighbours in a sweep), solver (a whole buffer read, a 4 KiB piece of
 * another updated) and gather (the same over 4 buffers). */
enum { SH_UNIFORM, SH_SWEEP, SH_SOLVER, SH_GATHER };

static rp_graph *bench_shape(int shape, int coherence, unsigned nops,
                             unsigned nbuf, uint32_t window, uint32_t list,
                             uint32_t search) {
  static char mem[1];
  static const rp_param ps[] = {{"src", RP_IN}, {"dst", RP_INOUT}};
  static const rp_kernel k =
      RP_KERNEL_WITH(.name = "k", .nparams = 2, .params = ps);
  rp_graph *g =
      tuned_graph(coherence ? 0 : RP_GRAPH_NO_COHERENCE, window, list, search);
  int whole = shape == SH_SOLVER || shape == SH_GATHER;
  if (shape == SH_GATHER)
    nbuf = 4;
  uint64_t bytes = whole ? 1 << 20 : 1 << 16, cs = 4096;
  for (unsigned b = 0; b < nbuf; b++) {
    char name[16];
    snprintf(name, sizeof name, "b%u", b);
    rp_buffer_desc d = {name, mem, bytes, 1, 0, {0, 0, 0}};
    TU_OK(g, rp_buffer_add(g, &d, NULL));
  }
  uint64_t s = 88172645463325252ull;
  for (unsigned i = 0; i < nops; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    if (whole) {
      rp_buf a = (rp_buf)(s % nbuf);
      rp_buf b = (rp_buf)((a + 1 + (s >> 8) % (nbuf - 1)) % nbuf);
      uint64_t pc = (s >> 20) % (bytes / cs);
      rp_arg args[2] = {rp_arg_buf(rp_whole(a)),
                        rp_arg_buf(rp_bytes(b, pc * cs, cs))};
      TU_OK(g, rp_record_kernel(g, &k, 0, rp_dims3(1, 1, 1), args, NULL, NULL));
      continue;
    }
    rp_buf a = (rp_buf)(s % nbuf), b = (rp_buf)((s >> 20) % nbuf);
    if (shape == SH_SWEEP) {
      b = (rp_buf)(i % nbuf);
      a = (rp_buf)((b + 1 + (s % 2)) % nbuf);
    }
    uint64_t ca = (s >> 40) % 16, cb = (s >> 50) % 16;
    if ((s >> 60) % 8 == 0 && !coherence) {
      TU_OK(g,
            rp_record_copy_to_host(g, rp_bytes(a, ca * cs, cs), 0, NULL, NULL));
    } else {
      rp_arg args[2] = {rp_arg_buf(rp_bytes(a, ca * cs, cs)),
                        rp_arg_buf(rp_bytes(b, cb * cs, cs))};
      TU_OK(g, rp_record_kernel(g, &k, 0, rp_dims3(1, 1, 1), args, NULL, NULL));
    }
  }
  return g;
}

#ifdef RP_TEST_SANITIZED
#define SHAPE_OPS 2500u
#else
#define SHAPE_OPS 10000u
#endif

/* Every bench_record shape, coherence on and off, with the default sizes
 * and with tiny ones (a 64-op window, 2-entry lists, no search: nearly
 * every far candidate goes through the frontiers or is left pending and
 * settled at the end). */
Test(reduce, bench_shapes_exact) {
  static const char *const names[] = {"uniform", "sweep", "solver", "gather"};
  static const uint32_t tune[2][3] = {{0, 0, 0}, {64, 2, 1}};
  char what[96];
  for (int shape = 0; shape < 4; shape++)
    for (int coh = 0; coh < 2; coh++)
      for (int t = 0; t < 2; t++) {
        if (coh && shape >= SH_SOLVER && t)
          continue; /* the same graph as without coherence, copies apart */
        /* Whole reads make the brute force quadratic: fewer of them. */
        unsigned n = shape >= SH_SOLVER ? SHAPE_OPS / 4 : SHAPE_OPS;
        rp_graph *g = bench_shape(shape, coh, n, shape == SH_SOLVER ? 16 : 64,
                                  tune[t][0], tune[t][1], tune[t][2]);
        TU_OK(g, rp_graph_end(g));
        snprintf(what, sizeof what, "%s coherence %s %s", names[shape],
                 coh ? "on" : "off", t ? "tiny" : "default");
        check_exact(g, what);
        rp_graph_destroy(g);
      }
}

/* Edges read while recording (the pending ones settled first) are the
 * reduction of what is recorded so far; recording then goes on. */
Test(reduce, edges_read_while_recording) {
  rp_graph *g = tuned_graph(RP_GRAPH_NO_COHERENCE, 64, 2, 1);
  static char host[1];
  for (unsigned b = 0; b < 24; b++) {
    char name[16];
    snprintf(name, sizeof name, "v%u", b);
    rp_buffer_desc d = {name, host, 1 << 14, 1, 0, {0, 0, 0}};
    TU_OK(g, rp_buffer_add(g, &d, NULL));
  }
  static const rp_param ps[] = {{"x", RP_IN}, {"y", RP_INOUT}};
  static const rp_kernel k =
      RP_KERNEL_WITH(.name = "upd", .nparams = 2, .params = ps);
  uint64_t s = 99;
  char what[64];
  for (unsigned i = 0; i < 3000; i++) {
    rp_buf a = (rp_buf)(tu_rand(&s) % 24), b = (rp_buf)(tu_rand(&s) % 24);
    if (a == b)
      b = (b + 1) % 24;
    uint64_t off = (tu_rand(&s) % 4) * 4096;
    rp_arg args[2] = {
        rp_arg_buf(tu_rand(&s) % 2 ? rp_whole(a) : rp_bytes(a, off, 4096)),
        rp_arg_buf(rp_bytes(b, off, 4096))};
    TU_OK(g, rp_record_kernel(g, &k, 0, rp_dims3(1, 1, 1), args, NULL, NULL));
    if (i % 1000 == 999) {
      snprintf(what, sizeof what, "while recording, %u ops", i + 1);
      check_exact(g, what);
    }
  }
  TU_OK(g, rp_graph_end(g));
  check_exact(g, "ended");
  rp_graph_destroy(g);
}

/* A larger graph of the uniform shape over few buffers: dependencies far
 * back, lists that cannot cover them all. */
Test(reduce, uniform_large) {
  rp_graph *g = bench_shape(SH_UNIFORM, 0, 2 * SHAPE_OPS, 100, 0, 0, 0);
  TU_OK(g, rp_graph_end(g));
  check_exact(g, "uniform, 100 buffers");
  rp_graph_destroy(g);
}

/* ---- the recorder's common cases (issue 36) ------------------------------ */

/* Shapes where the tracker's common cases meet: whole-matrix accesses
 * mixed with row writes and partial reads; a few identical regions used
 * over and over; appends (each write right after the previous one, reads
 * of the prefix written so far); disjoint blocks of rows. Six 32 x 16
 * matrices of 4-byte elements, one or two accesses per op on distinct
 * buffers, modes drawn at random, an explicit dependency now and then. */
enum { MIX_WHOLE, MIX_REPEAT, MIX_APPEND, MIX_BLOCKS, MIX_N };
enum { MIX_BUF = 6, MIX_ROWS = 32, MIX_COLS = 16, MIX_BYTES = 32 * 16 * 4 };

static rp_region mix_region(int kind, rp_buf b, int write, uint64_t *s,
                            uint64_t *cursor) {
  uint64_t r = tu_rand(s) % MIX_ROWS, x = tu_rand(s);
  switch (kind) {
  case MIX_WHOLE:
    if (write ? x % 4 == 0 : x % 2 == 0)
      return rp_whole(b);
    if (x % 3 == 0) /* a byte range over parts of rows */
      return rp_bytes(b, (x >> 8) % (MIX_BYTES / 2), MIX_BYTES / 4);
    return rp_box2(b, r, r + 1, 0, MIX_COLS);
  case MIX_REPEAT: {
    const rp_region fixed[5] = {rp_whole(b), rp_box2(b, 0, 8, 0, MIX_COLS),
                                rp_box2(b, 8, 16, 0, MIX_COLS),
                                rp_bytes(b, 100, 800),
                                rp_box2(b, 4, 12, 2, 10)};
    return fixed[x % 5];
  }
  case MIX_APPEND: {
    if (write) {
      uint64_t len = 8 + x % 200;
      if (cursor[b] + len > MIX_BYTES)
        cursor[b] = 0; /* the log starts over */
      rp_region w = rp_bytes(b, cursor[b], len);
      cursor[b] += len;
      return w;
    }
    if (x % 4 == 0 || !cursor[b])
      return rp_whole(b);
    return rp_bytes(b, 0, cursor[b]); /* what was appended so far */
  }
  default: { /* blocks of 4 rows, now and then the whole matrix */
    uint64_t k = (x >> 4) % (MIX_ROWS / 4);
    if (x % 8 == 0)
      return rp_whole(b);
    return rp_box2(b, 4 * k, 4 * k + 4, 0, MIX_COLS);
  }
  }
}

/* One or two accesses (the count returned) on two distinct buffers of
 * nbuf, drawn from *s. */
static unsigned two_bufs(uint64_t *s, unsigned nbuf, rp_buf *b0, rp_buf *b1) {
  unsigned n = 1 + (unsigned)(tu_rand(s) % 2);
  *b0 = (rp_buf)(tu_rand(s) % nbuf);
  *b1 = (rp_buf)((*b0 + 1 + tu_rand(s) % (nbuf - 1)) % nbuf);
  return n;
}

static rp_graph *mix_shape(int kind, uint64_t seed, unsigned nops,
                           unsigned flags, const uint32_t tune[3]) {
  static char host[1];
  rp_graph *g = tuned_graph(flags, tune[0], tune[1], tune[2]);
  for (unsigned b = 0; b < MIX_BUF; b++) {
    char name[16];
    snprintf(name, sizeof name, "m%u", b);
    rp_buffer_desc d = {name, host, MIX_BYTES, 4, 2, {MIX_ROWS, MIX_COLS, 0}};
    TU_OK(g, rp_buffer_add(g, &d, NULL));
  }
  uint64_t s = seed * 6700417 + (uint64_t)kind, cursor[MIX_BUF] = {0};
  for (unsigned i = 0; i < nops; i++) {
    rp_access acc[2];
    rp_buf b0, b1;
    unsigned n = two_bufs(&s, MIX_BUF, &b0, &b1);
    for (unsigned k = 0; k < n; k++) {
      /* Appends: the first access reads, the second writes. */
      rp_mode m = kind == MIX_APPEND ? (k || n == 1 ? RP_OUT : RP_IN)
                                     : (rp_mode)(1 + tu_rand(&s) % 3);
      acc[k].mode = m;
      acc[k].region =
          mix_region(kind, k ? b1 : b0, (m & RP_OUT) != 0, &s, cursor);
    }
    rp_node after = (rp_node)(i ? tu_rand(&s) % i : 0);
    rp_op_opts o =
        RP_OP_OPTS_WITH(.after = &after, .nafter = i && tu_rand(&s) % 32 == 0);
    TU_OK(g, rp_record_host(g, nop_host, NULL, acc, n, &o, NULL));
  }
  TU_OK(g, rp_graph_end(g));
  return g;
}

Test(reduce, common_cases_exact) {
  static const char *const names[] = {"whole+rows", "repeated regions",
                                      "appends", "row blocks"};
  static const uint32_t tune[3][3] = {{0, 0, 0}, {64, 2, 1}, {64, 32, 0}};
  char what[96];
  for (int kind = 0; kind < MIX_N; kind++)
    for (uint64_t seed = 1; seed <= SAN(2, 1); seed++)
      for (int t = 0; t < 3; t++) {
        unsigned flags = (seed + (uint64_t)t) % 2 ? RP_GRAPH_NO_COHERENCE : 0;
        rp_graph *g = mix_shape(kind, seed, 1500, flags, tune[t]);
        cr_assert_eq(rp_graph_num_nodes(g), 1500);
        snprintf(what, sizeof what, "%s seed %llu tuning %d", names[kind],
                 (unsigned long long)seed, t);
        check_exact(g, what);
        rp_graph_destroy(g);
      }
}

/* Whole matrices read mixed with row writes, default sizes: the rows'
 * writers lie one to a few thousand operations back, so the ancestor
 * window widens past 1 024 while recording (its bitsets moved to their
 * wider positions, trusted to say "no" only above where they were
 * complete); the edges stay exact through it. */
Test(reduce, window_widens_exact) {
  static char host[1];
  static const rp_param ps[] = {{"src", RP_IN}, {"dst", RP_OUT}};
  static const rp_kernel k =
      RP_KERNEL_WITH(.name = "row", .nparams = 2, .params = ps);
  rp_graph *g = tuned_graph(RP_GRAPH_NO_COHERENCE, 0, 0, 0);
  for (unsigned b = 0; b < 8; b++) {
    char name[16];
    snprintf(name, sizeof name, "m%u", b);
    rp_buffer_desc d = {name, host, 192 * 16 * 4, 4, 2, {192, 16, 0}};
    TU_OK(g, rp_buffer_add(g, &d, NULL));
  }
  uint64_t s = 4242;
  for (unsigned i = 0; i < 6000; i++) {
    rp_buf a = (rp_buf)(tu_rand(&s) % 8);
    rp_buf b = (rp_buf)((a + 1 + tu_rand(&s) % 7) % 8);
    uint64_t ra = tu_rand(&s) % 192, rb = tu_rand(&s) % 192;
    rp_region src =
        tu_rand(&s) % 8 == 0 ? rp_whole(a) : rp_box2(a, ra, ra + 1, 0, 16);
    rp_arg args[2] = {rp_arg_buf(src),
                      rp_arg_buf(rp_box2(b, rb, rb + 1, 0, 16))};
    TU_OK(g, rp_record_kernel(g, &k, 0, rp_dims3(1, 1, 1), args, NULL, NULL));
  }
  cr_assert_gt(rp__hazard_window_now(g), 1024u);
  TU_OK(g, rp_graph_end(g));
  check_exact(g, "rows, window widened");
  rp_graph_destroy(g);
}

/* ---- regular grids (issue 36) ------------------------------------------- */

/* The tracker keeps a (buffer, space) whose accesses all fall on one grid
 * of tiles as an array of tiles, and turns it into its band map at the
 * first access off the grid. Four buffers: 32 x 16 and 30 x 12 matrices
 * (tiles of 4 x 4 and 5 x 3 elements: widths a power of two or not), a
 * 4 KiB vector (256-byte pieces) and a 4 x 6 x 8 array (planes or half
 * planes); every buffer written whole first; then single tiles, blocks of
 * tiles, byte ranges of whole rows of tiles, whole reads and writes, and,
 * from a point drawn per buffer on (or never), reads off the grid (kept on
 * the grid, with the exact state in a shadow map and a log replayed into
 * it), then a third of the ops later writes off the grid too (the grid
 * becomes the map). */
enum { GR_BUF = 4 };

static rp_region grid_region(rp_buf b, uint64_t x, int off_grid) {
  uint64_t y = x >> 8;
  if (x % 10 == 0)
    return rp_whole(b);
  if (off_grid && x % 10 == 1) {
    static const uint64_t lo3[3] = {1, 1, 2}, hi3[3] = {2, 4, 5};
    return b == 0   ? rp_box2_elems(b, 1, 4, 1, 6)
           : b == 1 ? rp_box2_elems(b, 1, 4, 2, 7)
           : b == 2 ? rp_range_bytes(b, 100, 300)
                    : rp_box_elems(b, 3, lo3, hi3);
  }
  int multi = x % 10 < 4;
  if (b == 0) {
    uint64_t r = 4 * (y % (multi ? 7 : 8)),
             c = 4 * ((y >> 4) % (multi ? 3 : 4));
    if (x % 10 == 4) /* rows r .. r + 4, every column, as bytes */
      return rp_range_bytes(b, r * 64, 4 * 64);
    return rp_box2_elems(b, r, r + (multi ? 8 : 4), c, c + (multi ? 8 : 4));
  }
  if (b == 1) {
    uint64_t r = 5 * (y % (multi ? 5 : 6)),
             c = 3 * ((y >> 4) % (multi ? 3 : 4));
    return rp_box2_elems(b, r, r + (multi ? 10 : 5), c, c + (multi ? 6 : 3));
  }
  if (b == 2) {
    uint64_t k = y % (multi ? 15 : 16);
    return rp_range_bytes(b, 256 * k, multi ? 512 : 256);
  }
  uint64_t i = y % 4, h = (y >> 4) % 2;
  uint64_t lo[3] = {i, multi ? 0 : 3 * h, 0},
           hi[3] = {i + 1, multi ? 6 : 3 * h + 3, 8};
  return rp_box_elems(b, 3, lo, hi);
}

static rp_graph *grid_shape(uint64_t seed, unsigned nops, unsigned flags,
                            const uint32_t tune[3]) {
  static char host[1];
  static const rp_buffer_desc ds[GR_BUF] = {
      {"g0", host, 32 * 16 * 4, 4, 2, {32, 16, 0}},
      {"g1", host, 30 * 12 * 4, 4, 2, {30, 12, 0}},
      {"g2", host, 4096, 1, 0, {0, 0, 0}},
      {"g3", host, 4 * 6 * 8 * 4, 4, 3, {4, 6, 8}}};
  rp_graph *g = tuned_graph(flags, tune[0], tune[1], tune[2]);
  for (unsigned b = 0; b < GR_BUF; b++)
    TU_OK(g, rp_buffer_add(g, &ds[b], NULL));
  rp_access init[GR_BUF];
  for (unsigned b = 0; b < GR_BUF; b++)
    init[b] = (rp_access){rp_whole(b), RP_OUT};
  TU_OK(g, rp_record_host(g, nop_host, NULL, init, GR_BUF, NULL, NULL));
  /* Reads off the grid from op from[b] on, writes from wfrom[b] on. */
  uint64_t s = seed * 2654435761u + 7, from[GR_BUF], wfrom[GR_BUF];
  for (unsigned b = 0; b < GR_BUF; b++) {
    from[b] = tu_rand(&s) % 3 == 0 ? UINT64_MAX : tu_rand(&s) % nops;
    wfrom[b] = from[b] == UINT64_MAX ? from[b] : from[b] + nops / 3;
  }
  for (unsigned i = 1; i < nops; i++) {
    rp_access acc[2];
    rp_buf b0, b1;
    unsigned n = two_bufs(&s, GR_BUF, &b0, &b1);
    for (unsigned k = 0; k < n; k++) {
      rp_buf b = k ? b1 : b0;
      acc[k].mode = (rp_mode)(1 + tu_rand(&s) % 3);
      acc[k].region = grid_region(
          b, tu_rand(&s), i >= (acc[k].mode & RP_OUT ? wfrom[b] : from[b]));
    }
    rp_node after = (rp_node)(tu_rand(&s) % i);
    rp_op_opts o =
        RP_OP_OPTS_WITH(.after = &after, .nafter = tu_rand(&s) % 64 == 0);
    TU_OK(g, rp_record_host(g, nop_host, NULL, acc, n, &o, NULL));
  }
  TU_OK(g, rp_graph_end(g));
  return g;
}

Test(reduce, grids_exact) {
  static const uint32_t tune[2][3] = {{0, 0, 0}, {64, 2, 1}};
  char what[96];
  for (uint64_t seed = 1; seed <= 3; seed++)
    for (int t = 0; t < 2; t++) {
      unsigned flags = (seed + (uint64_t)t) % 2 ? RP_GRAPH_NO_COHERENCE : 0;
      rp_graph *g = grid_shape(seed, 1500, flags, tune[t]);
      snprintf(what, sizeof what, "grids seed %llu tuning %d",
               (unsigned long long)seed, t);
      check_exact(g, what);
      rp_graph_destroy(g);
    }
}

/* Reads off the grid of one tile, by independent ops, more than twice
 * what the log of the shadow map holds before it is replayed; then a
 * write off the grid over what they read: each of them is a WAR
 * predecessor of it. */
Test(reduce, grid_log_replayed) {
  static char host[1];
  rp_graph *g = tuned_graph(RP_GRAPH_NO_COHERENCE, 0, 0, 0);
  rp_buffer_desc dm = {"m", host, 16 * 16 * 4, 4, 2, {16, 16, 0}};
  rp_buffer_desc dx = {"x", host, 600 * 4 * 4, 4, 2, {600, 4, 0}};
  TU_OK(g, rp_buffer_add(g, &dm, NULL));
  TU_OK(g, rp_buffer_add(g, &dx, NULL));
  rp_access a[2] = {{rp_box2_elems(0, 0, 4, 0, 4), RP_OUT}};
  TU_OK(g, rp_record_host(g, nop_host, NULL, a, 1, NULL, NULL));
  for (unsigned i = 0; i < 600; i++) {
    a[0] = (rp_access){rp_box2_elems(0, 5, 7, 5, 7), RP_IN};
    a[1] = (rp_access){rp_box2_elems(1, i, i + 1, 0, 4), RP_OUT};
    TU_OK(g, rp_record_host(g, nop_host, NULL, a, 2, NULL, NULL));
  }
  a[0] = (rp_access){rp_box2_elems(0, 5, 6, 5, 6), RP_OUT};
  rp_node last;
  TU_OK(g, rp_record_host(g, nop_host, NULL, a, 1, NULL, &last));
  TU_OK(g, rp_graph_end(g));
  check_exact(g, "grid log replayed");
  uint32_t np = 0;
  cr_assert(rp_graph_preds(g, last, &np));
  cr_assert_eq(np, 600u);
  rp_graph_destroy(g);
}

/* Many pending edges of one length class: with tiny sizes (a 64-op
 * window, 2-entry lists, no search) the uniform shape over 8 buffers
 * leaves thousands of far candidates pending. Their lengths lie in
 * [64, n), floor(log2(n - 1)) - 5 classes of floor(log2(length)) at
 * most (8 for 10 000 ops, 7 for the sanitizer's 7 000), so more than
 * that many times 256 of them put over 256 into one class: the bulk
 * settle fills a word of four 64-bit lanes (256 edges), every lane in
 * use, and the edges must still be exactly the reduction. */
Test(reduce, settle_wide_words_exact) {
  const unsigned n = SAN(10000, 7000);
  const unsigned classes = 31u - (unsigned)__builtin_clz(n - 1) - 5;
  rp_graph *g = bench_shape(SH_UNIFORM, 0, n, 8, 64, 2, 1);
  uint32_t pending = rp__hazard_pending(g);
  cr_assert_gt(pending, classes * 256, "only %u pending for %u classes",
               pending, classes);
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp__hazard_pending(g), 0);
  check_exact(g, "uniform tiny, wide settle words");
  rp_graph_destroy(g);
}
