/* The seed examples on the GPU: reprise's replay against the same kernels
 * launched by hand through the CUDA runtime, in one process, same sizes as
 * the examples. Each workload is written here by hand from the algorithm
 * (its operations and their dependencies, not derived from the recorded
 * graph) and run the six ways of hand_cuda.cuh (blocking, stream, streams,
 * events, graph, dag) with the block shapes reprise chose for the same
 * kernels, so that both run the same launches. reprise: the example's
 * recorded graph, cuda backend, graph mode (logical devices folded onto
 * the one GPU where the example names several). Every version's results
 * are compared byte for byte with reprise's. Prints per example the median
 * time per replay (of 7 runs of R replays), reprise / best hand-written
 * (of stream, streams, events, graph, dag), blocking / reprise beside the
 * overlap the analysis predicts (serial / overlapped replay), reprise
 * as a user gets it (the cuda default: copies reshaped) against the
 * hand-built dag (goal <= 1.02: met / MISSED per example), and with
 * --no-reshape's shape (rp_exec_opts.reshape_copies = RP_EXEC_RESHAPE_NONE)
 * against it; then, as diagnostics, the recorded graph built by hand
 * (as_recorded) and reprise as recorded / it, and reprise with every
 * kernel node reading its arguments from the argument table
 * (cuda_update "table"; by default a node does only once its scalars
 * change) / reprise by default. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <map>
#include <algorithm>
#include <functional>
#include <initializer_list>
#include "examples.h"
#include "multidev.h"
#include "reprise/measure.h"
#include "reprise/backend.h"
#include "hand_cuda.cuh"

/* The kernel descriptor named kname in a recorded graph (NULL: the first
 * kernel). */
static const rp_kernel *kernel_named(const rp_graph *g, const char *kname) {
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    if (ni.kernel && (!kname || !strcmp(ni.kernel->name, kname)))
      return ni.kernel;
  }
  fprintf(stderr, "no kernel %s in the graph\n", kname ? kname : "at all");
  exit(2);
}

static item kern(const rp_kernel *k, int phase, uint64_t nx, uint64_t ny,
                 std::initializer_list<rp_slot> a) {
  item x{};
  x.kind = OP_KERNEL;
  x.phase = phase;
  x.k = k;
  x.a.n[0] = nx;
  x.a.n[1] = ny;
  x.a.n[2] = 1;
  int i = 0;
  for (rp_slot s : a)
    x.a.a[i++] = s;
  return x;
}

static item copy(int kind, int phase, void *dst, const void *src,
                 size_t bytes) {
  item x{};
  x.kind = kind;
  x.phase = phase;
  x.dst = dst;
  x.src = src;
  x.bytes = bytes;
  return x;
}

static rp_slot P(void *p) {
  rp_slot s;
  s.p = p;
  return s;
}
static rp_slot I(int64_t v) {
  rp_slot s;
  s.i64 = v;
  return s;
}
static rp_slot F(double v) {
  rp_slot s;
  s.f64 = v;
  return s;
}

/* [a0, a1) and [b0, b1) share a row. */
static bool overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) {
  return a0 < b1 && b0 < a1;
}

/* A workload: its graph (for reprise), its hand-written program, the host
 * arrays to compare. */
struct work {
  const char *name;
  rp_graph *g = nullptr;
  hand h;
  std::vector<std::pair<void *, size_t>> out; /* host results */
  std::vector<void *> dev, host;
  std::map<const void *, void *> twin; /* host array -> its device copy */
  std::function<void()> init;
};

/* Appends x after the operations in dep; its index. */
static int add(work &w, item x, std::vector<int> dep) {
  x.dep = std::move(dep);
  w.h.it.push_back(x);
  return (int)w.h.it.size() - 1;
}

/* The device copy of host array h, by hand. */
static void *dalloc(work &w, size_t bytes, const void *h) {
  void *p;
  CK(cudaMalloc(&p, bytes));
  w.dev.push_back(p);
  w.twin[h] = p;
  return p;
}

static void *halloc(work &w, size_t bytes) {
  void *p;
  CK(cudaMallocHost(&p, bytes));
  w.host.push_back(p);
  return p;
}

static void record(work &w, rp_status rc) {
  RK(rc);
  RK(rp_graph_end(w.g));
}

/* jac_copy block i copies rows [r0, r1) of a into b; jac_sten block j
 * reads rows [s0 - 1, s1 + 1) of b and writes rows [s0, s1) of a. A copy
 * block follows the previous step's stencil blocks that read or write its
 * rows; a stencil block follows the copy blocks of its step whose rows it
 * reads. */
static void jacobi(work &w) {
  static ex_jacobi2d p = {1024, 8, 0, 8, 0, 0};
  uint64_t n = p.n, nn = n * n, nb = p.blocks;
  double *a = (double *)halloc(w, nn * 8), *b = (double *)halloc(w, nn * 8);
  double *s = (double *)halloc(w, 8);
  w.name = "jacobi2d 1024^2, 8 steps x 8 blocks";
  w.init = [=]() { ex_jacobi2d_init(&p, a, b, s); };
  w.init();
  RK(rp_graph_create(&w.g, 0));
  record(w, ex_jacobi2d_record(w.g, &p, a, b, s));
  const rp_kernel *kc = kernel_named(w.g, "jac_copy");
  const rp_kernel *ks = kernel_named(w.g, "jac_sten");
  double *da = (double *)dalloc(w, nn * 8, a);
  double *db = (double *)dalloc(w, nn * 8, b);
  auto crow = [&](uint64_t i) { return n * i / nb; };
  auto srow = [&](uint64_t j) { return 1 + (n - 2) * j / nb; };
  int ph = 0;
  int cin = add(w, copy(OP_H2D, ph++, da, a, nn * 8), {});
  std::vector<int> cp(nb), sn(nb);
  for (unsigned st = 0; st < p.steps; st++) {
    for (uint64_t i = 0; i < nb; i++) {
      std::vector<int> dep;
      for (uint64_t j = 0; j < nb && st; j++)
        if (overlap(crow(i), crow(i + 1), srow(j) - 1, srow(j + 1) + 1))
          dep.push_back(sn[j]);
      if (!st)
        dep.push_back(cin);
      cp[i] = add(w,
                  kern(kc, ph, n, crow(i + 1) - crow(i),
                       {P(da), P(db), I((int64_t)n), I((int64_t)crow(i))}),
                  dep);
    }
    ph++;
    for (uint64_t j = 0; j < nb; j++) {
      std::vector<int> dep;
      for (uint64_t i = 0; i < nb; i++)
        if (overlap(crow(i), crow(i + 1), srow(j) - 1, srow(j + 1) + 1))
          dep.push_back(cp[i]);
      sn[j] = add(w,
                  kern(ks, ph, n - 2, srow(j + 1) - srow(j),
                       {P(db), P(da), I((int64_t)n), I((int64_t)srow(j))}),
                  dep);
    }
    ph++;
  }
  add(w, copy(OP_D2H, ph, a, da, nn * 8), sn);
  add(w, copy(OP_D2H, ph, b, db, nn * 8), cp);
  w.out = {{a, nn * 8}, {b, nn * 8}};
}

/* Block i of a product reads row block i of the source and all of m and
 * writes row block i of the destination: it follows block i of the
 * previous product. */
static void matpow(work &w) {
  static ex_matpow p = {256, 6, 8, 0};
  uint64_t n = p.n, nn = n * n, nb = p.blocks;
  double *m = (double *)halloc(w, nn * 8), *x = (double *)halloc(w, nn * 8),
         *y = (double *)halloc(w, nn * 8);
  w.name = "matpow 256^2, 6 products x 8 blocks";
  w.init = [=]() { ex_matpow_init(&p, m, x, y); };
  w.init();
  RK(rp_graph_create(&w.g, 0));
  record(w, ex_matpow_record(w.g, &p, m, x, y));
  const rp_kernel *k = &ex_matmul_rows_k;
  double *dm = (double *)dalloc(w, nn * 8, m);
  double *dx = (double *)dalloc(w, nn * 8, x);
  double *dy = (double *)dalloc(w, nn * 8, y);
  int ph = 0;
  int cx = add(w, copy(OP_H2D, ph, dx, x, nn * 8), {});
  int cm = add(w, copy(OP_H2D, ph++, dm, m, nn * 8), {});
  std::vector<int> blk(nb), lastw[2] = {{cx}, {}}; /* dx's, dy's writers */
  for (unsigned st = 0; st < p.steps; st++) {
    double *src = st % 2 ? dy : dx, *dst = st % 2 ? dx : dy;
    for (uint64_t i = 0; i < nb; i++) {
      uint64_t r0 = n * i / nb, r1 = n * (i + 1) / nb;
      blk[i] = add(w,
                   kern(k, ph, n, r1 - r0,
                        {P(src), P(dm), P(dst), I((int64_t)n), I((int64_t)r0)}),
                   st ? std::vector<int>{blk[i]} : std::vector<int>{cx, cm});
    }
    lastw[st % 2 ? 0 : 1] = blk;
    ph++;
  }
  add(w, copy(OP_D2H, ph, x, dx, nn * 8), lastw[0]);
  add(w, copy(OP_D2H, ph, y, dy, nn * 8), lastw[1]);
  w.out = {{x, nn * 8}, {y, nn * 8}};
}

/* Elementwise in place: block i of a round follows block i of the one
 * before. */
static void recurrence(work &w) {
  static ex_recurrence p = {512, 512, 20, 4, 16, 3.7, 0.001, 0};
  uint64_t nn = p.rows * p.cols, nb = p.blocks;
  double *u = (double *)halloc(w, nn * 8);
  w.name = "recurrence 512^2, 4 rounds x 16 blocks";
  w.init = [=]() { ex_recurrence_init(&p, u); };
  w.init();
  RK(rp_graph_create(&w.g, 0));
  record(w, ex_recurrence_record(w.g, &p, u, NULL));
  const rp_kernel *k = kernel_named(w.g, NULL);
  double *du = (double *)dalloc(w, nn * 8, u);
  int ph = 0;
  int cin = add(w, copy(OP_H2D, ph++, du, u, nn * 8), {});
  std::vector<int> blk(nb, cin);
  for (unsigned r = 0; r < p.rounds; r++) {
    for (uint64_t i = 0; i < nb; i++) {
      uint64_t r0 = p.rows * i / nb, r1 = p.rows * (i + 1) / nb;
      blk[i] = add(w,
                   kern(k, ph, p.cols, r1 - r0,
                        {P(du), I((int64_t)p.inner), F(p.r), F(p.c),
                         I((int64_t)p.cols), I((int64_t)r0)}),
                   {blk[i]});
    }
    ph++;
  }
  add(w, copy(OP_D2H, ph, u, du, nn * 8), blk);
  w.out = {{u, nn * 8}};
}

/* Per block: its three inputs in, the kernel after them, its two outputs
 * back after the kernel; the graph's copies follow the blocks' regions the
 * same way. */
static void blackscholes(work &w) {
  static ex_blackscholes p = {1000000, 16, 0.02, 0.30, 0};
  uint64_t n = p.n, nb = p.blocks;
  double *s = (double *)halloc(w, n * 8), *k = (double *)halloc(w, n * 8),
         *t = (double *)halloc(w, n * 8), *c = (double *)halloc(w, n * 8),
         *q = (double *)halloc(w, n * 8);
  w.name = "blackscholes 1M options, 16 blocks";
  w.init = [=]() { ex_blackscholes_init(&p, s, k, t); };
  w.init();
  RK(rp_graph_create(&w.g, 0));
  record(w, ex_blackscholes_record(w.g, &p, s, k, t, c, q));
  const rp_kernel *kb = kernel_named(w.g, NULL);
  double *ds = (double *)dalloc(w, n * 8, s);
  double *dk = (double *)dalloc(w, n * 8, k);
  double *dt = (double *)dalloc(w, n * 8, t);
  double *dc = (double *)dalloc(w, n * 8, c);
  double *dq = (double *)dalloc(w, n * 8, q);
  auto o = [&](uint64_t i) { return n * i / nb; };
  std::vector<std::vector<int>> in(nb);
  std::vector<int> kn(nb);
  for (uint64_t i = 0; i < nb; i++) {
    size_t l = (o(i + 1) - o(i)) * 8;
    in[i] = {add(w, copy(OP_H2D, 0, ds + o(i), s + o(i), l), {}),
             add(w, copy(OP_H2D, 0, dk + o(i), k + o(i), l), {}),
             add(w, copy(OP_H2D, 0, dt + o(i), t + o(i), l), {})};
  }
  for (uint64_t i = 0; i < nb; i++)
    kn[i] = add(w,
                kern(kb, 1, o(i + 1) - o(i), 1,
                     {P(ds), P(dk), P(dt), P(dc), P(dq), F(p.r), F(p.v),
                      I((int64_t)o(i))}),
                in[i]);
  for (uint64_t i = 0; i < nb; i++) {
    size_t l = (o(i + 1) - o(i)) * 8;
    add(w, copy(OP_D2H, 2, c + o(i), dc + o(i), l), {kn[i]});
    add(w, copy(OP_D2H, 2, q + o(i), dq + o(i), l), {kn[i]});
  }
  w.out = {{c, n * 8}, {q, n * 8}};
}

/* C = A B by row blocks, one per logical device of the example (folded
 * onto the one GPU for reprise; one device image of each matrix by hand):
 * A and B in, each row block's product after both, its rows of C back
 * after it. */
static void matmul_rows(work &w) {
  static ex_mmrows p = {512, 2};
  uint64_t n = p.n, nn = n * n, nd = p.devices;
  double *a = (double *)halloc(w, nn * 8), *b = (double *)halloc(w, nn * 8),
         *c = (double *)halloc(w, nn * 8);
  w.name = "matmul_rows 512^2, 2 devices on 1 GPU";
  w.init = [=]() { ex_mmrows_init(&p, a, b, c); };
  w.init();
  RK(rp_graph_create(&w.g, 0));
  record(w, ex_mmrows_record(w.g, &p, a, b, c));
  double *da = (double *)dalloc(w, nn * 8, a);
  double *db = (double *)dalloc(w, nn * 8, b);
  double *dc = (double *)dalloc(w, nn * 8, c);
  std::vector<int> in = {add(w, copy(OP_H2D, 0, da, a, nn * 8), {}),
                         add(w, copy(OP_H2D, 0, db, b, nn * 8), {})};
  std::vector<int> kn(nd);
  for (uint64_t d = 0; d < nd; d++) {
    uint64_t r0 = n * d / nd, r1 = n * (d + 1) / nd;
    kn[d] = add(w,
                kern(&ex_matmul_rows_k, 1, n, r1 - r0,
                     {P(da), P(db), P(dc), I((int64_t)n), I((int64_t)r0)}),
                in);
  }
  for (uint64_t d = 0; d < nd; d++) {
    uint64_t r0 = n * d / nd, r1 = n * (d + 1) / nd;
    add(w, copy(OP_D2H, 2, c + r0 * n, dc + r0 * n, (r1 - r0) * n * 8),
        {kn[d]});
  }
  w.out = {{c, nn * 8}};
}

/* The region of a T x T tile at (row0, col0) of an n x n matrix. */
static rp_pregion tile_region(uint64_t n, uint64_t t, uint64_t row0,
                              uint64_t col0) {
  rp_pregion r{};
  r.offset = (row0 * n + col0) * 8;
  r.bytes = ((t - 1) * n + t) * 8;
  r.ld = n;
  r.lo[0] = (uint32_t)row0;
  r.lo[1] = (uint32_t)col0;
  r.n[0] = r.n[1] = (uint32_t)t;
  r.n[2] = 1;
  return r;
}

/* C += A B over T x T tiles with the example's library kernel (cuBLAS
 * dgemm on the operation's stream when built with cuBLAS): A, B and C in,
 * tile product (k, i, j) after (k - 1, i, j), C back after the last k. */
static void gemm(work &w) {
  static ex_gemm p = {512, 128, 0};
  uint64_t n = p.n, nn = n * n, t = p.tile, nt = n / t;
  double *a = (double *)halloc(w, nn * 8), *b = (double *)halloc(w, nn * 8),
         *c = (double *)halloc(w, nn * 8);
  w.name = ex_gemm_uses_library ? "gemm cuBLAS 512^2, 128^2 tiles"
                                : "gemm kernel 512^2, 128^2 tiles";
  if (ex_gemm_library_init()) {
    fprintf(stderr, "gemm: cuBLAS failed to start\n");
    exit(2);
  }
  w.init = [=]() { ex_gemm_init(&p, a, b, c); };
  w.init();
  RK(rp_graph_create(&w.g, 0));
  record(w, ex_gemm_record(w.g, &p, a, b, c));
  double *da = (double *)dalloc(w, nn * 8, a);
  double *db = (double *)dalloc(w, nn * 8, b);
  double *dc = (double *)dalloc(w, nn * 8, c);
  std::vector<int> in = {add(w, copy(OP_H2D, 0, da, a, nn * 8), {}),
                         add(w, copy(OP_H2D, 0, db, b, nn * 8), {}),
                         add(w, copy(OP_H2D, 0, dc, c, nn * 8), {})};
  std::vector<int> tile(nt * nt);
  for (uint64_t k = 0; k < nt; k++)
    for (uint64_t i = 0; i < nt; i++)
      for (uint64_t j = 0; j < nt; j++) {
        item x = kern(&ex_gemm_tile_k, (int)k + 1, t, t, {P(da), P(db), P(dc)});
        x.a.r[0] = tile_region(n, t, i * t, k * t);
        x.a.r[1] = tile_region(n, t, k * t, j * t);
        x.a.r[2] = tile_region(n, t, i * t, j * t);
        int &prev = tile[i * nt + j];
        prev = add(w, x, k ? std::vector<int>{prev} : in);
      }
  add(w, copy(OP_D2H, (int)nt + 1, c, dc, nn * 8), tile);
  w.out = {{c, nn * 8}};
}

/* A diagnostic, not a hand-written version: the recorded graph itself
 * (reprise's operations, with the copies its coherence inserted, and its
 * edges) built node by node with the hand-written launches and one device
 * array per buffer (logical devices share it: a buffer copied to two of
 * them is copied twice into the same array, the same bytes). Against the
 * dag version it measures what the recorded copies cost; against reprise,
 * what reprise's replay adds to the same graph. False when the graph holds
 * an operation it does not build (host tasks, boxes, peer copies). */
static bool as_recorded(work &w, hand &h) {
  size_t nk = 0;
  for (rp_node n = 0; n < rp_graph_num_nodes(w.g); n++) {
    rp_node_info ni;
    rp_access_info ai;
    rp_buffer_desc bd;
    rp_node_info_get(w.g, n, &ni);
    if (ni.type == RP_OP_KERNEL) {
      while (nk < w.h.it.size() && w.h.it[nk].kind != OP_KERNEL)
        nk++;
      if (nk == w.h.it.size())
        return false;
      h.it.push_back(w.h.it[nk++]);
      h.it.back().dep.clear();
      continue;
    }
    if ((ni.type != RP_OP_COPY_H2D && ni.type != RP_OP_COPY_D2H) ||
        rp_node_access(w.g, n, 0, &ai) != RP_OK ||
        rp_buffer_info(w.g, ai.region.buf, &bd) != RP_OK ||
        !w.twin.count(bd.host) || ai.region.kind == RP_REGION_BOX)
      return false;
    uint64_t off = ai.region.offset, len = ai.region.bytes;
    if (ai.region.kind == RP_REGION_WHOLE)
      off = 0, len = bd.bytes;
    char *hp = (char *)bd.host + off, *dp = (char *)w.twin[bd.host] + off;
    h.it.push_back(ni.type == RP_OP_COPY_H2D ? copy(OP_H2D, 0, dp, hp, len)
                                             : copy(OP_D2H, 0, hp, dp, len));
  }
  for (uint32_t i = 0; i < rp_graph_num_edges(w.g); i++) {
    rp_edge e;
    rp_graph_edge(w.g, i, &e);
    h.it[e.to].dep.push_back((int)e.from);
  }
  return true;
}

/* The hand-written launches take the block shape reprise chose for the
 * same kernel (the first node of each kernel). */
static void same_blocks(work &w, rp_exec *x) {
  std::map<const rp_kernel *, dim3> chosen;
  for (rp_node n = 0; n < rp_graph_num_nodes(w.g); n++) {
    rp_node_info ni;
    rp_kernel_block kb;
    if (rp_node_info_get(w.g, n, &ni) == RP_OK && ni.kernel &&
        !chosen.count(ni.kernel) && rp_exec_kernel_block(x, n, &kb) == RP_OK)
      chosen[ni.kernel] = dim3(kb.block[0], kb.block[1], kb.block[2]);
  }
  for (item &it : w.h.it)
    if (it.kind == OP_KERNEL && it.k->cuda) {
      if (!chosen.count(it.k)) {
        fprintf(stderr, "%s: no block shape for %s\n", w.name, it.k->name);
        exit(2);
      }
      it.blk = chosen[it.k];
    }
}

/* The overlap the analysis predicts for exec x: its serial replay
 * profiled (median of 5), the machine model m, serial over overlapped
 * (the model's when calibrated, else the list schedule's). */
static double predicted(work &w, rp_exec *x, const rp_backend *be,
                        rp_model *m) {
  rp_exec *xs;
  rp_exec_opts eo = RP_EXEC_OPTS_INIT;
  eo.mode = "serial";
  eo.device_fold = 1; /* reshaped as x is (the backend's default) */
  RK(rp_exec_create(&xs, w.g, be, &eo));
  std::vector<double> op(rp_graph_num_nodes(w.g) + 1);
  RK(rp_exec_profile_opts(xs, nullptr, op.data(), NULL, NULL));
  rp_exec_destroy(xs);
  rp_analysis_opts ao;
  unsigned units[RP_MAX_DEVICES];
  rp_analysis *an;
  rp_summary sm;
  rp_analysis_opts_init(&ao);
  ao.measured_us = op.data();
  RK(rp_analysis_opts_from_exec(&ao, m, units, x));
  RK(rp_analyze_exec(x, &ao, &an)); /* the graph x really replays */
  rp_analysis_summary(an, &sm);
  rp_analysis_destroy(an);
  return sm.modelled ? sm.model_speedup : sm.predicted_speedup;
}

static void print_blocks(work &w, rp_exec *x) {
  std::vector<const rp_kernel *> seen;
  printf(" blocks:");
  for (rp_node n = 0; n < rp_graph_num_nodes(w.g); n++) {
    rp_node_info ni;
    rp_kernel_block kb;
    if (rp_node_info_get(w.g, n, &ni) != RP_OK || !ni.kernel ||
        std::find(seen.begin(), seen.end(), ni.kernel) != seen.end())
      continue;
    seen.push_back(ni.kernel);
    if (rp_exec_kernel_block(x, n, &kb) != RP_OK)
      printf(" %s (library call)", ni.kernel->name);
    else
      printf(" %s %ux%ux%u (%.0f%%, %s)", ni.kernel->name, kb.block[0],
             kb.block[1], kb.block[2], kb.occupancy * 100, kb.reason);
  }
  printf("\n");
}

static void work_free(work &w, rp_exec *x) {
  rp_exec_destroy(x);
  rp_graph_destroy(w.g);
  for (void *p : w.dev)
    cudaFree(p);
  for (void *p : w.host)
    cudaFreeHost(p);
  hand_free(w.h);
}

int main(int argc, char **argv) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
    printf("bench_cuda_examples: no CUDA device, nothing measured\n");
    return 0;
  }
  unsigned R = argc > 1 ? (unsigned)atoi(argv[1]) : 20;
  /* "rp": time reprise only (block sweeps) and print its block shapes */
  bool rp_only = argc > 2 && !strcmp(argv[2], "rp");
  if (!R) {
    fprintf(stderr, "usage: bench_cuda_examples [R replays (20)] [rp]\n");
    return 2;
  }
  const rp_backend *be;
  RK(rp_backend_find("cuda", &be));
  /* the machine model of the cuda backend, calibrated once if not cached */
  rp_model model;
  if (rp_model_get(&model, be, NULL, RP_MODEL_CALIBRATE) != RP_OK)
    rp_model_init(&model);
  void (*mk[])(work &) = {jacobi,       matpow,      recurrence,
                          blackscholes, matmul_rows, gemm};
  /* Versions after the hand-written ones: reprise by default (copies
   * reshaped on cuda), reprise with the copies as recorded (--no-reshape),
   * the recorded graph built by hand, reprise with its kernels reading
   * their arguments from the table. */
  enum { V_RP = HAND_VERSIONS, V_RS, V_REC, V_TAB, V_ALL };
  const char *vname[V_ALL] = {0};
  for (int v = 0; v < HAND_VERSIONS; v++)
    vname[v] = hand_name[v];
  vname[V_RP] = "reprise";
  vname[V_RS] = "reprise, copies as recorded";
  vname[V_REC] = "as recorded";
  vname[V_TAB] = "reprise, arguments from the table";
  int met = 0, nex = 0;
  printf("%-38s", "example (us/replay)");
  for (int v = 0; v < HAND_VERSIONS && !rp_only; v++)
    printf(" %9s", hand_name[v]);
  printf(" %9s", "reprise");
  if (!rp_only)
    printf(" %7s %7s %7s %5s %9s %7s %9s %7s %9s %7s", "rp/dag", "rp/best",
           "blk/rp", "pred", "no-resh", "nr/dag", "recorded", "nr/rec", "table",
           "tab/rp");
  printf("\n");
  for (auto f : mk) {
    work w;
    hand_init(w.h);
    f(w);
    /* reprise: results of R replays are the reference for the others. */
    rp_exec *x, *xs = nullptr, *xt = nullptr;
    rp_exec_opts eo = RP_EXEC_OPTS_INIT;
    eo.device_fold = 1;
    RK(rp_exec_create(&x, w.g, be, &eo));
    uint32_t merged = 0, split = 0;
    rp_exec_copies_reshaped(x, &merged, &split);
    same_blocks(w, x);
    std::vector<std::vector<unsigned char>> want;
    w.init();
    RK(rp_exec_run(x, R));
    for (auto &o : w.out)
      want.emplace_back((unsigned char *)o.first,
                        (unsigned char *)o.first + o.second);
    double pred = 0;
    if (!rp_only) {
      pred = predicted(w, x, be, &model);
      eo.cuda_update = "table";
      RK(rp_exec_create(&xt, w.g, be, &eo));
      eo.cuda_update = NULL;
      eo.reshape_copies = RP_EXEC_RESHAPE_NONE;
      RK(rp_exec_create(&xs, w.g, be, &eo));
    }
    double t[V_ALL] = {0};
    hand rec;
    hand_init(rec);
    bool has_rec = !rp_only && as_recorded(w, rec);
    for (int v = rp_only ? V_RP : 0; v < (rp_only ? V_RS : V_ALL); v++) {
      std::vector<double> runs;
      if (v == V_REC && !has_rec)
        continue;
      for (int rep = 0; rep < 7; rep++) {
        w.init();
        if (v < HAND_VERSIONS) {
          runs.push_back(time_version(w.h, v, R));
        } else if (v == V_REC) {
          runs.push_back(time_version(rec, HAND_DAG, R));
        } else {
          double t0 = now_us();
          RK(rp_exec_run(v == V_RP ? x : v == V_TAB ? xt : xs, R));
          runs.push_back((now_us() - t0) / R);
        }
        for (size_t i = 0; i < w.out.size(); i++)
          if (memcmp(w.out[i].first, want[i].data(), w.out[i].second)) {
            printf("%s: %s results differ from reprise's\n", w.name, vname[v]);
            return 1;
          }
      }
      t[v] = median(runs.data(), (int)runs.size());
    }
    printf("%-38s", w.name);
    if (rp_only) {
      printf(" %9.1f\n", t[V_RP]);
    } else {
      double best = t[HAND_STREAM];
      for (int v = HAND_STREAM; v < HAND_VERSIONS; v++)
        best = std::min(best, t[v]);
      for (int v = 0; v < HAND_VERSIONS; v++)
        printf(" %9.1f", t[v]);
      double rd = t[V_RP] / t[HAND_DAG];
      printf(" %9.1f %7.3f %7.3f %7.2f %5.2f %9.1f %7.3f", t[V_RP], rd,
             t[V_RP] / best, t[HAND_BLOCKING] / t[V_RP], pred, t[V_RS],
             t[V_RS] / t[HAND_DAG]);
      if (has_rec)
        printf(" %9.1f %7.3f", t[V_REC], t[V_RS] / t[V_REC]);
      else
        printf(" %9s %7s", "-", "-");
      printf(" %9.1f %7.3f", t[V_TAB], t[V_TAB] / t[V_RP]);
      nex++;
      met += rd <= 1.02;
      printf("\n  %s: vs dag %.3f (goal <= 1.02: %s); every kernel "
             "reading the table %.3f of by value; copies reshaped: "
             "%u merged, %u split;",
             w.name, rd, rd <= 1.02 ? "met" : "MISSED", t[V_TAB] / t[V_RP],
             merged, split);
    }
    hand_free(rec);
    print_blocks(w, x);
    rp_exec_destroy(xs);
    rp_exec_destroy(xt);
    work_free(w, x);
    if (f == gemm)
      ex_gemm_library_fini(); /* its execs and graphs are gone */
  }
  printf("results: every version of every run byte-identical to reprise's\n");
  if (nex)
    printf("summary: %d of %d examples within 1.02x of the hand-built dag "
           "by default (%s)\n",
           met, nex, met == nex ? "met" : "MISSED");
  return 0;
}
