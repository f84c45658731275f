/* rp_cuda_graph_import against the fake CUDA runtime (part of cuda_logic):
 * a graph of copies, a memset, kernels with plain parameters, an event
 * node, a child graph, an empty node and a host node becomes the reprise
 * operations expected, node for node, with the graph's edges as their
 * dependencies; its replay on cuda (graph and streams modes) does what
 * launching the CUDA graph does; nodes that cannot be imported are
 * refused by name. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_cudart.h"
#include "rp_cuda_import.h"
#include "util.h"

extern const rp_backend rp_backend_cuda;

enum { N = 64 };
static char scale_fn, add_fn;

/* scale(float *p, float a, int n): p[i] *= a */
static void scale_body(void **args, dim3 grid, dim3 block) {
  (void)grid, (void)block;
  float *p = *(float **)args[0], a = *(float *)args[1];
  for (int i = 0; i < *(int *)args[2]; i++)
    p[i] *= a;
}
/* add(float *y, const float *x, int n): y[i] += x[i] */
static void add_body(void **args, dim3 grid, dim3 block) {
  (void)grid, (void)block;
  float *y = *(float **)args[0];
  const float *x = *(const float **)args[1];
  for (int i = 0; i < *(int *)args[2]; i++)
    y[i] += x[i];
}

static void host_count(void *user) { ++*(int *)user; }

static void setup(void) {
  static const size_t ss[3] = {sizeof(float *), sizeof(float), sizeof(int)};
  static const size_t as[3] = {sizeof(float *), sizeof(float *), sizeof(int)};
  fk_kernel_raw(&scale_fn, "scale", scale_body, 3, ss);
  fk_kernel_raw(&add_fn, "add", add_body, 3, as);
  fk_devices(1);
  fk_child_ok(1);
  fk_reset();
}

static void teardown(void) { fk_child_ok(0); }

TestSuite(cuda_import, .init = setup, .fini = teardown);

typedef struct prog {
  float hx[N], hy[N], *dx, *dy, *dz;
  int hosts;
  cudaGraph_t g, child;
} prog;

static cudaGraphNode_t kernel(cudaGraph_t g, const cudaGraphNode_t *d,
                              size_t nd, const void *fn, void *a0, void *a1,
                              void *a2) {
  void *args[3] = {a0, a1, a2};
  struct cudaKernelNodeParams kp = {(void *)fn, {1, 1, 1}, {N, 1, 1},
                                    0,          args,      NULL};
  cudaGraphNode_t x;
  cr_assert_eq(cudaGraphAddKernelNode(&x, g, d, nd, &kp), cudaSuccess);
  return x;
}

/* Two "streams": x in, x *= 2, y = 0 (memset), an event, y += x; a child
 * graph y *= 3; an empty node; y out; a host node counting. Beside them
 * z *= 5 with no dependency. hy ends as 6 hx. */
static void prog_make(prog *p) {
  static float two = 2, three = 3, five = 5;
  static int n = N;
  for (int i = 0; i < N; i++)
    p->hx[i] = (float)i + 1, p->hy[i] = -1;
  p->hosts = 0;
  cr_assert_eq(cudaMalloc((void **)&p->dx, sizeof p->hx), cudaSuccess);
  cr_assert_eq(cudaMalloc((void **)&p->dy, sizeof p->hx), cudaSuccess);
  cr_assert_eq(cudaMalloc((void **)&p->dz, sizeof p->hx), cudaSuccess);
  cudaGraph_t g;
  cr_assert_eq(cudaGraphCreate(&g, 0), cudaSuccess);
  cr_assert_eq(cudaGraphCreate(&p->child, 0), cudaSuccess);
  cudaGraphNode_t in, ms, sx, ev, add, ch, em, out, host;
  cr_assert_eq(cudaGraphAddMemcpyNode1D(&in, g, NULL, 0, p->dx, p->hx,
                                        sizeof p->hx, cudaMemcpyHostToDevice),
               cudaSuccess);
  struct cudaMemsetParams m = {p->dy, 0, 0, 4, N, 1};
  cr_assert_eq(cudaGraphAddMemsetNode(&ms, g, NULL, 0, &m), cudaSuccess);
  kernel(g, NULL, 0, &scale_fn, &p->dz, &five, &n);
  sx = kernel(g, &in, 1, &scale_fn, &p->dx, &two, &n);
  cr_assert_eq(cudaGraphAddEventRecordNode(&ev, g, &sx, 1, NULL), cudaSuccess);
  cudaGraphNode_t d2[2] = {ev, ms};
  add = kernel(g, d2, 2, &add_fn, &p->dy, &p->dx, &n);
  kernel(p->child, NULL, 0, &scale_fn, &p->dy, &three, &n);
  cr_assert_eq(cudaGraphAddChildGraphNode(&ch, g, &add, 1, p->child),
               cudaSuccess);
  cr_assert_eq(cudaGraphAddEmptyNode(&em, g, &ch, 1), cudaSuccess);
  cr_assert_eq(cudaGraphAddMemcpyNode1D(&out, g, &em, 1, p->hy, p->dy,
                                        sizeof p->hy, cudaMemcpyDeviceToHost),
               cudaSuccess);
  struct cudaHostNodeParams hp = {host_count, &p->hosts};
  cr_assert_eq(cudaGraphAddHostNode(&host, g, &out, 1, &hp), cudaSuccess);
  p->g = g;
}

static void prog_free(prog *p) {
  cudaGraphDestroy(p->g);
  cudaGraphDestroy(p->child);
  cudaFree(p->dx);
  cudaFree(p->dy);
  cudaFree(p->dz);
}

static rp_node by_name(const rp_graph *g, const char *name, unsigned nth) {
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    if (!strcmp(ni.name, name) && nth-- == 0)
      return n;
  }
  cr_assert_fail("no operation %s", name);
  return RP_NONE;
}

/* Node n's predecessors are exactly want[0..nw). */
static void preds_are(const rp_graph *g, rp_node n, const rp_node *want,
                      uint32_t nw) {
  uint32_t c;
  const rp_node *p = rp_graph_preds(g, n, &c);
  cr_expect_eq(c, nw, "op %u: %u predecessors, expected %u", n, c, nw);
  for (uint32_t i = 0; i < nw; i++) {
    int found = 0;
    for (uint32_t k = 0; k < c; k++)
      found |= p[k] == want[i];
    cr_expect(found, "op %u does not follow op %u", n, want[i]);
  }
}

static void check_result(const prog *p, int hosts) {
  for (int i = 0; i < N; i++)
    cr_assert_eq(p->hy[i], 6.0f * ((float)i + 1), "y[%d] = %g", i, p->hy[i]);
  cr_assert_eq(p->hosts, hosts);
}

Test(cuda_import, structure_node_for_node) {
  prog p;
  prog_make(&p);
  rp_cuda_import *im;
  char err[256];
  rp_status s = rp_cuda_graph_import(p.g, 0, &im, err, sizeof err);
  cr_assert_eq(s, RP_OK, "%s: %s", rp_status_name(s), err);
  const rp_graph *g = rp_cuda_import_graph(im);
  /* 8 operations: the event, child-graph and empty nodes are edges */
  cr_assert_eq(rp_graph_num_nodes(g), 8);
  /* each copy over a one-byte buffer of its own: a copy to the analysis */
  cr_assert_eq(rp_graph_num_buffers(g), 2);
  rp_node in = by_name(g, "memcpy HtoD 256 B", 0);
  rp_node ms = by_name(g, "memset 256 B", 0);
  rp_node sz = by_name(g, "scale", 0), sx = by_name(g, "scale", 1);
  rp_node add = by_name(g, "add", 0), sy = by_name(g, "scale", 2);
  rp_node out = by_name(g, "memcpy DtoH 256 B", 0);
  rp_node host = by_name(g, "host", 0);
  rp_node_info ni;
  TU_OK(NULL, rp_node_info_get(g, in, &ni));
  cr_expect_eq(ni.type, RP_OP_COPY_H2D);
  TU_OK(NULL, rp_node_info_get(g, out, &ni));
  cr_expect_eq(ni.type, RP_OP_COPY_D2H);
  TU_OK(NULL, rp_node_info_get(g, sx, &ni));
  cr_expect_eq(ni.type, RP_OP_KERNEL);
  rp_cuda_import_kind k;
  const void *fn;
  TU_OK(NULL, rp_cuda_import_node(im, sx, &k, &fn));
  cr_expect(k == RP_CUDA_IMPORT_KERNEL && fn == &scale_fn);
  TU_OK(NULL, rp_cuda_import_node(im, add, &k, &fn));
  cr_expect(k == RP_CUDA_IMPORT_KERNEL && fn == &add_fn);
  TU_OK(NULL, rp_cuda_import_node(im, in, &k, NULL));
  cr_expect_eq(k, RP_CUDA_IMPORT_MEMCPY);
  TU_OK(NULL, rp_cuda_import_node(im, ms, &k, NULL));
  cr_expect_eq(k, RP_CUDA_IMPORT_MEMSET);
  TU_OK(NULL, rp_cuda_import_node(im, host, &k, NULL));
  cr_expect_eq(k, RP_CUDA_IMPORT_HOST);
  preds_are(g, in, NULL, 0);
  preds_are(g, ms, NULL, 0);
  preds_are(g, sz, NULL, 0);
  preds_are(g, sx, &in, 1);
  rp_node w_add[2] = {sx, ms}; /* through the event node */
  preds_are(g, add, w_add, 2);
  preds_are(g, sy, &add, 1); /* the child's root after the node's pred */
  preds_are(g, out, &sy, 1); /* through the child and the empty node */
  preds_are(g, host, &out, 1);
  cr_expect_eq(rp_graph_num_edges(g), 6);
  /* The CUDA graph's launch, the reference result */
  cudaGraphExec_t ge;
  cr_assert_eq(cudaGraphInstantiate(&ge, p.g, 0), cudaSuccess);
  cr_assert_eq(cudaGraphLaunch(ge, NULL), cudaSuccess);
  cudaGraphExecDestroy(ge);
  check_result(&p, 1);
  /* The import's replay, graph mode then streams mode */
  for (int mode = 0; mode < 2; mode++) {
    memset(p.hy, 0, sizeof p.hy);
    rp_exec_opts o = RP_EXEC_OPTS_INIT;
    o.mode = mode ? "streams" : "graph";
    rp_exec *x = NULL;
    s = rp_exec_create(&x, g, &rp_backend_cuda, &o);
    cr_assert_eq(s, RP_OK, "%s", rp_last_error());
    fk_reset();
    cr_assert_eq(rp_exec_run(x, 1), RP_OK, "%s", rp_exec_error(x));
    if (!mode) /* every kernel added as it was, no capture */
      cr_expect_eq(fk.add_kernel, 0, "kernels added again at launch");
    check_result(&p, 2 + mode);
    rp_exec_destroy(x);
  }
  /* the analysis runs on it */
  rp_analysis *an = NULL;
  TU_OK(NULL, rp_analyze(g, NULL, &an));
  /* its lanes: the GPU's compute, each copy direction, the host */
  char lanes[256] = "";
  for (uint32_t i = 0; i < rp_analysis_num_lanes(an); i++) {
    const char *ln;
    double busy;
    TU_OK(NULL, rp_analysis_lane(an, i, &ln, &busy));
    strncat(lanes, ln, sizeof lanes - strlen(lanes) - 2);
    strcat(lanes, " ");
  }
  cr_expect_eq(rp_analysis_num_lanes(an), 4, "lanes: %s", lanes);
  cr_expect(strstr(lanes, "h2d") && strstr(lanes, "d2h"), "lanes: %s", lanes);
  rp_analysis_destroy(an);
  /* saved and read back (`reprise analyze FILE`): the same operations
   * and edges, analysed without the import */
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  TU_OK(NULL, rp_graph_write_json(g, fp));
  fclose(fp);
  fp = fmemopen(buf, len, "r");
  rp_graph *back = NULL;
  char rerr[256] = "";
  s = rp_graph_read_json(&back, fp, rerr, sizeof rerr);
  fclose(fp);
  free(buf);
  cr_assert_eq(s, RP_OK, "read back: %s", rerr);
  cr_expect_eq(rp_graph_num_nodes(back), 8);
  cr_expect_eq(rp_graph_num_edges(back), 6);
  TU_OK(NULL, rp_analyze(back, NULL, &an));
  rp_analysis_destroy(an);
  rp_graph_destroy(back);
  rp_cuda_import_free(im);
  prog_free(&p);
}

Test(cuda_import, refuses_what_it_cannot_import) {
  cudaGraph_t g;
  cudaGraphNode_t a, c;
  static float two = 2;
  static int n = N;
  float *d;
  cr_assert_eq(cudaMalloc((void **)&d, N * sizeof *d), cudaSuccess);
  cr_assert_eq(cudaGraphCreate(&g, 0), cudaSuccess);
  a = kernel(g, NULL, 0, &scale_fn, &d, &two, &n);
  cr_assert_eq(fk_add_node(&c, g, &a, 1, cudaGraphNodeTypeConditional),
               cudaSuccess);
  rp_cuda_import *im = NULL;
  char err[256];
  cr_expect_eq(rp_cuda_graph_import(g, 0, &im, err, sizeof err), RP_ENOTSUP);
  cr_expect(im == NULL);
  cr_expect(strstr(err, "conditional node"), "%s", err);
  cudaGraphDestroy(g);
  /* a memset of 4-byte elements to a value not one byte repeated */
  cr_assert_eq(cudaGraphCreate(&g, 0), cudaSuccess);
  struct cudaMemsetParams m = {d, 0, 0x3f800000u, 4, N, 1};
  cr_assert_eq(cudaGraphAddMemsetNode(&a, g, NULL, 0, &m), cudaSuccess);
  cr_expect_eq(rp_cuda_graph_import(g, 0, &im, err, sizeof err), RP_ENOTSUP);
  cr_expect(strstr(err, "not one byte repeated"), "%s", err);
  cudaGraphDestroy(g);
  cudaFree(d);
}

/* A random graph of 160 nodes (kernels, empty and event nodes, edges to
 * up to 3 earlier nodes): between any two kernels, the import orders
 * exactly the pairs the CUDA graph orders (through the nodes that became
 * edges). */
Test(cuda_import, random_graphs_keep_their_order) {
  enum { M = 160 };
  static float one = 1;
  static int n = 1;
  float *d;
  cr_assert_eq(cudaMalloc((void **)&d, sizeof *d), cudaSuccess);
  uint64_t rnd = 12345;
  for (int round = 0; round < 4; round++) {
    cudaGraph_t g;
    cudaGraphNode_t x[M];
    static uint8_t reach[M][M]; /* reach[j][i]: i before j */
    memset(reach, 0, sizeof reach);
    cr_assert_eq(cudaGraphCreate(&g, 0), cudaSuccess);
    for (int j = 0; j < M; j++) {
      cudaGraphNode_t dep[3];
      size_t nd = 0;
      rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
      int kind = (int)(rnd >> 60) % 10, want = j ? (int)(rnd >> 40) % 4 : 0;
      for (int k = 0; k < want; k++) {
        rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((rnd >> 33) % (uint64_t)j);
        int dup = 0;
        for (size_t q = 0; q < nd; q++)
          dup |= dep[q] == x[i];
        if (dup)
          continue;
        dep[nd++] = x[i];
        reach[j][i] = 1;
        for (int h = 0; h < j; h++)
          reach[j][h] |= reach[i][h];
      }
      if (kind < 7)
        x[j] = kernel(g, dep, nd, &scale_fn, &d, &one, &n);
      else if (kind < 9)
        cr_assert_eq(cudaGraphAddEmptyNode(&x[j], g, dep, nd), cudaSuccess);
      else
        cr_assert_eq(cudaGraphAddEventRecordNode(&x[j], g, dep, nd, NULL),
                     cudaSuccess);
    }
    rp_cuda_import *im;
    char err[256];
    rp_status s = rp_cuda_graph_import(g, 0, &im, err, sizeof err);
    cr_assert_eq(s, RP_OK, "%s", err);
    const rp_graph *rg = rp_cuda_import_graph(im);
    uint32_t no = rp_graph_num_nodes(rg);
    int of[M]; /* op -> CUDA node index */
    static uint8_t rr[M][M];
    memset(rr, 0, sizeof rr);
    for (uint32_t o = 0; o < no; o++) {
      cudaGraphNode_t src = rp_cuda_import_source(im, o);
      of[o] = -1;
      for (int j = 0; j < M; j++)
        if (x[j] == src)
          of[o] = j;
      cr_assert_geq(of[o], 0);
      uint32_t np;
      const rp_node *p = rp_graph_preds(rg, o, &np);
      for (uint32_t k = 0; k < np; k++) {
        cr_assert_lt(p[k], o, "ops out of order");
        rr[o][p[k]] = 1;
        for (uint32_t h = 0; h < o; h++)
          rr[o][h] |= rr[p[k]][h];
      }
    }
    unsigned kernels = 0;
    for (int j = 0; j < M; j++) {
      enum cudaGraphNodeType t;
      cudaGraphNodeGetType(x[j], &t);
      kernels += t == cudaGraphNodeTypeKernel;
    }
    cr_assert_eq(no, kernels);
    for (uint32_t a = 0; a < no; a++)
      for (uint32_t b = 0; b < no; b++)
        if (a != b)
          cr_assert_eq(rr[a][b], reach[of[a]][of[b]],
                       "round %d: ops %u, %u (nodes %d, %d) ordered %d, "
                       "CUDA %d",
                       round, a, b, of[a], of[b], rr[a][b],
                       reach[of[a]][of[b]]);
    rp_cuda_import_free(im);
    cudaGraphDestroy(g);
  }
  cudaFree(d);
}
