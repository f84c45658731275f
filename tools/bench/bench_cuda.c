/* CUDA backend benchmark: replay, overlap, instantiate and rebind costs,
 * each against hand-written CUDA runtime code in the same run; with the
 * examples library, the device loop (rp_exec_run_until) against the same
 * kernels in a WHILE graph built by hand. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda_runtime.h>
#include "bench_cuda_kernels.h"
#include "reprise.h"
#include "reprise/backend.h"
#include "bench_cuda_check.h"
#ifdef RP_BENCH_EXAMPLES
#include "examples.h"
#endif

enum { REPS = 15 };

static const char *verdict(int ok) { return ok ? "met" : "MISSED"; }

static rp_exec *mkexec(const rp_graph *g, const rp_backend *be,
                       const char *mode, double *us) {
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.mode = mode;
  rp_exec *x;
  double t0 = now_us();
  RK(rp_exec_create(&x, g, be, &o));
  if (us)
    *us = now_us() - t0;
  return x;
}

static double time_runs(rp_exec *x) {
  double v[REPS];
  RK(rp_exec_run(x, 1));
  for (int r = 0; r < REPS; r++) {
    double t0 = now_us();
    RK(rp_exec_run(x, 1));
    v[r] = now_us() - t0;
  }
  return median(v, REPS);
}

static double time_graph(cudaGraphExec_t ge, cudaStream_t s) {
  double v[REPS];
  CK(cudaGraphLaunch(ge, s));
  CK(cudaStreamSynchronize(s));
  for (int r = 0; r < REPS; r++) {
    double t0 = now_us();
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    v[r] = now_us() - t0;
  }
  return median(v, REPS);
}

/* Where rp_exec_create's time goes (RP_CUDA_TIMES=1: the backend notes
 * its split in rp_exec_error(), timed by phase), the median of 3
 * creations with cuda_update @p upd, microseconds: [0] rp_exec_create,
 * [1] the backend's instantiate, [2] its setup of the nodes, [3] the loop
 * adding the nodes (CUDA's adds and the backend's work per node), [4]
 * cudaGraphInstantiate, [5] CUDA's memory calls, [6] its attribute
 * queries, [7] the rest. 0: no note. */
static int create_times(const rp_graph *g, const rp_backend *be,
                        const char *upd, double out[8]) {
  double v[8][3];
  setenv("RP_CUDA_TIMES", "1", 1);
  if (upd)
    setenv("RP_CUDA_UPDATE", upd, 1);
  int ok = 1;
  for (int r = 0; r < 3 && ok; r++) {
    double wall;
    rp_exec *x = mkexec(g, be, NULL, &wall);
    unsigned nn = 0;
    v[0][r] = wall;
    ok = sscanf(rp_exec_error(x),
                "cuda: times: nodes %u total %lf setup %lf "
                "add %lf inst %lf mem %lf attr %lf other %lf",
                &nn, &v[1][r], &v[2][r], &v[3][r], &v[4][r], &v[5][r], &v[6][r],
                &v[7][r]) == 8;
    rp_exec_destroy(x);
  }
  unsetenv("RP_CUDA_TIMES");
  unsetenv("RP_CUDA_UPDATE");
  for (int i = 0; ok && i < 8; i++)
    out[i] = median(v[i], 3);
  return ok;
}

/* The chain of n bc_tiny kernels built by hand with
 * cudaGraphAddKernelNode: each node's parameter its block by value (tab
 * NULL), or the address of its entry in the device table tab (the
 * kernel's by-pointer entry, the argument table's); with batch, the nodes
 * added without edges and the edges in one cudaGraphAddDependencies call.
 * Medians of 3 of the adds and of cudaGraphInstantiate, microseconds; the
 * last executable graph in *out. */
static void hand_chain(int n, rp_kargs *ka, rp_kargs *tab, int batch,
                       double *add_us, double *inst_us, cudaGraphExec_t *out) {
  double va[3], vi[3];
  dim3 gr = {1, 1, 1}, bl = {256, 1, 1};
  const void *fn = tab ? bc_tiny.cuda_args->cuda_args : bc_tiny.cuda;
  cudaGraphNode_t *all = malloc(sizeof *all * (size_t)n);
  for (int r = 0; r < 3; r++) {
    cudaGraph_t eg;
    cudaGraphExec_t ee;
    cudaGraphNode_t prev = NULL;
    double t0 = now_us();
    CK(cudaGraphCreate(&eg, 0));
    for (int i = 0; i < n; i++) {
      void *ent = tab ? (void *)&tab[i] : NULL;
      void *kp[1] = {tab ? (void *)&ent : (void *)ka};
      struct cudaKernelNodeParams kn = {(void *)fn, gr, bl, 0, kp, NULL};
      int dep = prev && !batch;
      CK(cudaGraphAddKernelNode(&all[i], eg, dep ? &prev : NULL, (size_t)dep,
                                &kn));
      prev = all[i];
    }
    if (batch && n > 1)
#if CUDART_VERSION >= 13000
      CK(cudaGraphAddDependencies(eg, all, all + 1, NULL, (size_t)n - 1));
#else
      CK(cudaGraphAddDependencies(eg, all, all + 1, (size_t)n - 1));
#endif
    double t1 = now_us();
    CK(cudaGraphInstantiate(&ee, eg, 0));
    double t2 = now_us();
    va[r] = t1 - t0;
    vi[r] = t2 - t1;
    CK(cudaGraphDestroy(eg));
    if (r < 2)
      CK(cudaGraphExecDestroy(ee));
    else
      *out = ee;
  }
  free(all);
  *add_us = median(va, 3);
  *inst_us = median(vi, 3);
}

/* What one read of the clock costs here, microseconds (where the clock is
 * not in the vDSO it is a system call: timing every CUDA call then costs
 * more than some of the calls). */
static double clock_cost(void) {
  double t0 = now_us(), last = t0;
  for (int i = 0; i < 10000; i++)
    last = now_us();
  return (last - t0) / 10000;
}

/* (a), (c), and the kernel half of (d): a chain of N tiny kernels. */
static void chain(const rp_backend *be, cudaStream_t s) {
  enum { N = 2000 };
  rp_graph *g;
  rp_buf p;
  RK(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  rp_buffer_desc d = {"p", NULL, 4, 4, 1, {1, 0, 0}};
  RK(rp_buffer_add(g, &d, &p));
  rp_arg args[2] = {rp_arg_buf(rp_whole(p)), rp_arg_f32(1.0f)};
  for (int i = 0; i < N; i++)
    RK(rp_record_kernel(g, &bc_tiny, 0, rp_dims3(1, 1, 1), args, NULL, NULL));
  RK(rp_graph_end(g));
  double inst_warm;
  rp_exec *x0 = mkexec(g, be, NULL, &inst_warm); /* loads the module */
  rp_exec_destroy(x0);
  /* reprise as a user gets it (nodes by value, their blocks packed to the
   * kernel's 2 parameters: 184 bytes), then with every node in the
   * argument table from instantiate (cuda_update "table"), then by value
   * with the whole 856-byte block (RP_CUDA_PACK=0, as before issue 38),
   * alternated */
  double inst[3], inst_tab[3], inst_whole[3];
  for (int r = 0; r < 3; r++) {
    x0 = mkexec(g, be, NULL, &inst[r]);
    rp_exec_destroy(x0);
    setenv("RP_CUDA_UPDATE", "table", 1);
    x0 = mkexec(g, be, NULL, &inst_tab[r]);
    unsetenv("RP_CUDA_UPDATE");
    rp_exec_destroy(x0);
    setenv("RP_CUDA_PACK", "0", 1);
    x0 = mkexec(g, be, NULL, &inst_whole[r]);
    unsetenv("RP_CUDA_PACK");
    rp_exec_destroy(x0);
  }
  double our_inst = median(inst, 3), our_tab = median(inst_tab, 3);
  double our_whole = median(inst_whole, 3);
  rp_exec *x = mkexec(g, be, NULL, NULL);
  double ours = time_runs(x);

  /* Hand-written: the same kernel captured N times, instantiated. */
  float *dp;
  rp_kargs ka;
  bc_tiny_block(&ka, &dp);
  void *kp[1] = {&ka};
  dim3 gr = {1, 1, 1}, bl = {256, 1, 1};
  cudaGraph_t cg;
  cudaGraphExec_t ce;
  double tc0 = now_us();
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < N; i++)
    CK(cudaLaunchKernel(bc_tiny.cuda, gr, bl, kp, 0, s));
  CK(cudaStreamEndCapture(s, &cg));
  double tc1 = now_us();
  double cinst[3];
  for (int r = 0; r < 3; r++) {
    double t0 = now_us();
    CK(cudaGraphInstantiate(&ce, cg, 0));
    cinst[r] = now_us() - t0;
    if (r < 2)
      CK(cudaGraphExecDestroy(ce));
  }
  double cuda_inst = median(cinst, 3);
  /* CUDA's own explicit node API for the same chain, then instantiate:
   * the blocks by value, and by pointer into a table (8-byte parameters,
   * the by-pointer entry) */
  rp_kargs *tab, *htab = malloc(sizeof *htab * N);
  for (int i = 0; i < N; i++)
    htab[i] = ka;
  CK(cudaMalloc((void **)&tab, sizeof *tab * N));
  CK(cudaMemcpy(tab, htab, sizeof *tab * N, cudaMemcpyHostToDevice));
  free(htab);
  double hv_add, hv_inst, hp_add, hp_inst, hb_add, hb_inst;
  cudaGraphExec_t hv, hpx, hb;
  hand_chain(N, &ka, NULL, 0, &hv_add, &hv_inst, &hv);
  hand_chain(N, &ka, tab, 0, &hp_add, &hp_inst, &hpx);
  hand_chain(N, &ka, NULL, 1, &hb_add, &hb_inst, &hb);
  CK(cudaGraphExecDestroy(hb));
  double cuda_explicit = hv_add + hv_inst;
  double hand = time_graph(ce, s), hand_ptr = time_graph(hpx, s);
  printf("(a) chain of %d tiny kernels: reprise %.3f us/kernel, captured "
         "graph %.3f us/kernel: ratio %.3f (goal <= 1.05: %s)\n",
         N, ours / N, hand / N, ours / hand, verdict(ours / hand <= 1.05));
  printf("(c) instantiate: reprise %.2f us/node (first, with module load "
         "%.2f), cudaGraphInstantiate %.2f us/node (capture %.2f more): "
         "ratio %.3f (goal <= 1.2: %s); vs capture+instantiate %.3f\n",
         our_inst / N, inst_warm / N, cuda_inst / N, (tc1 - tc0) / N,
         our_inst / cuda_inst, verdict(our_inst / cuda_inst <= 1.2),
         our_inst / (cuda_inst + tc1 - tc0));
  printf("(c) packed 184-byte blocks (the default) against the whole "
         "856-byte block by value (RP_CUDA_PACK=0): %.2f against %.2f "
         "us/node: %.3f; whole blocks / cudaGraphInstantiate %.3f\n",
         our_inst / N, our_whole / N, our_inst / our_whole,
         our_whole / cuda_inst);
  printf("(c) vs the same chain built with cudaGraphAddKernelNode and "
         "instantiated by hand: %.2f us/node: ratio %.3f (goal <= 1.2: "
         "%s)\n",
         cuda_explicit / N, our_inst / cuda_explicit,
         verdict(our_inst / cuda_explicit <= 1.2));
  printf("(c) 8-byte parameters (the by-pointer entry): reprise with "
         "cuda_update \"table\" %.2f us/node, by hand %.2f (adds %.2f, "
         "instantiate %.2f); blocks by value by hand %.2f (adds %.2f, "
         "instantiate %.2f), with the edges added in one call %.2f (adds "
         "%.2f, instantiate %.2f)\n",
         our_tab / N, (hp_add + hp_inst) / N, hp_add / N, hp_inst / N,
         cuda_explicit / N, hv_add / N, hv_inst / N, (hb_add + hb_inst) / N,
         hb_add / N, hb_inst / N);
  /* Per node, where reprise's time goes: the core (passes, plan,
   * argument blocks: rp_exec_create minus the backend), the backend's
   * setup and its node loop (CUDA's adds with its own work per node: the
   * loop minus the adds by hand is that work), CUDA's instantiate, memory
   * and attribute calls. */
  double ct[8];
  if (create_times(g, be, NULL, ct))
    printf("(c) per node (us): rp_exec_create %.3f = core %.3f + backend "
           "[setup %.3f, node loop %.3f (by hand the adds alone %.3f), "
           "cudaGraphInstantiate %.3f (by hand %.3f), memory %.3f, "
           "attribute queries %.3f, other %.3f]; a clock read costs "
           "%.3f us here\n",
           ct[0] / N, (ct[0] - ct[1]) / N, ct[2] / N, ct[3] / N, hv_add / N,
           ct[4] / N, hv_inst / N, ct[5] / N, ct[6] / N, ct[7] / N,
           clock_cost());
  else
    printf("(c) per node: no breakdown (the backend gave no times note)\n");
  printf("(a) the by-pointer entry by hand (the chain's nodes reading their "
         "blocks from a table): %.3f us/kernel, %.3f of the captured "
         "graph\n",
         hand_ptr / N, hand_ptr / hand);

  /* (d), kernels: a new scalar in every node, REPS + 1 rounds. "auto"
   * (the default): the first round moves every node to the argument
   * table (one CUDA setter per node, once), later rounds are one copy of
   * the table before the launch; "table": the nodes in the table from
   * instantiate; "node" and "whole" (retired for set_scalar, issue 38):
   * as auto, the first round's moves through CUDA's setter per node or
   * the template's setters and one cudaGraphExecUpdate. Host cost: (N set_scalar + launch) - launch; with the device:
   * (N set_scalar + launch + wait) - (launch + wait), which counts the
   * table's copy too. */
  const char *modes[] = {"auto", "table", "node", "whole"};
  /* Reference: every template node set, then one cudaGraphExecUpdate. */
  size_t nn = 0;
  CK(cudaGraphGetNodes(cg, NULL, &nn));
  cudaGraphNode_t *nodes = malloc(nn * sizeof *nodes);
  CK(cudaGraphGetNodes(cg, nodes, &nn));
  for (int m = 0; m < 4; m++) {
    setenv("RP_CUDA_UPDATE", modes[m], 1);
    rp_exec *y = mkexec(g, be, NULL, NULL);
    unsetenv("RP_CUDA_UPDATE");
    RK(rp_exec_run(y, 1));
    double v[REPS + 1], l[REPS + 1], vw[REPS + 1], lw[REPS + 1];
    for (int r = 0; r <= REPS; r++) {
      double t0 = now_us();
      RK(rp_exec_launch(y, 1));
      l[r] = now_us() - t0;
      RK(rp_exec_wait(y));
      lw[r] = now_us() - t0;
      rp_slot val = {.f32 = (float)(r + 2)};
      t0 = now_us();
      for (rp_node n = 0; n < N; n++)
        RK(rp_exec_set_scalar(y, n, 1, val));
      RK(rp_exec_launch(y, 1));
      v[r] = now_us() - t0;
      RK(rp_exec_wait(y));
      vw[r] = now_us() - t0;
    }
    double first = v[0] - l[0], all = 0;
    for (int r = 0; r <= REPS; r++)
      all += v[r] - l[r];
    /* the steady rounds: 1 .. REPS */
    double cost = median(v + 1, REPS) - median(l + 1, REPS);
    double costw = median(vw + 1, REPS) - median(lw + 1, REPS);
    /* Medians of REPS rounds, a new value each (one round alone varied
     * 0.4-1.7 us per node between runs). */
    double vs[REPS], vu[REPS];
    for (int r = 0; r < REPS; r++) {
      ka.a[1].f32 = (float)(r + 3);
      struct cudaKernelNodeParams kn = {
          (void *)bc_tiny.cuda, gr, bl, 0, kp, NULL};
      double a0 = now_us();
      for (size_t i = 0; i < nn; i++)
        CK(cudaGraphKernelNodeSetParams(nodes[i], &kn));
      double a1 = now_us();
      cudaGraphExecUpdateResultInfo info;
      CK(cudaGraphExecUpdate(ce, cg, &info));
      vu[r] = now_us() - a1;
      vs[r] = a1 - a0;
    }
    double t1 = median(vs, REPS), t2 = t1 + median(vu, REPS);
    printf("(d) set_scalar on %d kernel nodes [%s]: reprise %.3f us/node, "
           "cudaGraphExecUpdate %.3f: ratio %.3f (goal <= 1: %s); first "
           "update %.3f us/node, mean of %d updates %.3f (ratio %.3f); with "
           "the device's part %.3f (ratio %.3f); template set %.3f, vs "
           "template setters + ExecUpdate %.3f\n",
           N, modes[m], cost / N, (t2 - t1) / N, cost / (t2 - t1),
           verdict(cost / (t2 - t1) <= 1.0), first / N, REPS + 1,
           all / (REPS + 1) / N, all / (REPS + 1) / (t2 - t1), costw / N,
           costw / (t2 - t1), t1 / N, cost / t2);
    if (m == 0) {
      double moved = time_runs(y);
      printf("(a) the same chain after set_scalar moved every node to the "
             "argument table: reprise %.3f us/kernel, %.3f of the captured "
             "graph, %.3f of the by-pointer entry by hand\n",
             moved / N, moved / hand, moved / hand_ptr);
    }
    rp_exec_destroy(y);
  }
  free(nodes);
  CK(cudaGraphExecDestroy(ce));
  CK(cudaGraphExecDestroy(hv));
  CK(cudaGraphExecDestroy(hpx));
  CK(cudaGraphDestroy(cg));
  CK(cudaFree(dp));
  CK(cudaFree(tab));
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* (d), copies: rebinding a buffer behind N h2d copies of 64 bytes. By
 * default (copies reshaped) the N copies of adjacent slices merge into
 * one memcpy node; as recorded (RP_EXEC_RESHAPE_NONE) they are N memcpy
 * nodes, all changed: "auto" takes the template's setters and one
 * cudaGraphExecUpdate (many nodes changed, issue 38), as "whole" does
 * always; "node" CUDA's setter per memcpy node. */
static void rebind_copies(const rp_backend *be, cudaStream_t s) {
  enum { N = 2000, SL = 64 };
  char *h1 = malloc(N * SL), *h2 = malloc(N * SL);
  memset(h1, 1, N * SL);
  memset(h2, 2, N * SL);
  CK(cudaHostRegister(h1, N * SL, 0)); /* the user pins both images */
  CK(cudaHostRegister(h2, N * SL, 0));
  rp_graph *g;
  rp_buf b;
  RK(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  RK(rp_buffer_register(g, "H", h1, N * SL, &b));
  for (int i = 0; i < N; i++)
    RK(rp_record_copy_to_device(g, rp_range_bytes(b, (uint64_t)i * SL, SL), 0,
                                NULL, NULL));
  RK(rp_graph_end(g));
  char *dd;
  CK(cudaMalloc((void **)&dd, N * SL));
  cudaGraph_t cg;
  cudaGraphExec_t ce;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < N; i++)
    CK(cudaMemcpyAsync(dd + i * SL, h1 + i * SL, SL, cudaMemcpyDefault, s));
  CK(cudaStreamEndCapture(s, &cg));
  CK(cudaGraphInstantiate(&ce, cg, 0));
  size_t nn = 0;
  CK(cudaGraphGetNodes(cg, NULL, &nn));
  cudaGraphNode_t *nodes = malloc(nn * sizeof *nodes);
  CK(cudaGraphGetNodes(cg, nodes, &nn));
  /* Reference: every template memcpy node moved to the other array
   * (medians of REPS rounds), then one cudaGraphExecUpdate. */
  double vs[REPS], vu[REPS];
  cudaError_t ue = cudaSuccess;
  for (int r = 0, at = 0; r < REPS; r++, at ^= 1) {
    char *from = at ? h2 : h1, *to = at ? h1 : h2;
    double a0 = now_us();
    for (size_t i = 0; i < nn; i++) {
      struct cudaMemcpy3DParms p;
      CK(cudaGraphMemcpyNodeGetParams(nodes[i], &p));
      p.srcPtr.ptr = to + ((char *)p.srcPtr.ptr - from);
      CK(cudaGraphMemcpyNodeSetParams(nodes[i], &p));
    }
    double a1 = now_us();
    cudaGraphExecUpdateResultInfo info;
    cudaError_t e1 = cudaGraphExecUpdate(ce, cg, &info);
    vu[r] = now_us() - a1;
    vs[r] = a1 - a0;
    if (e1 != cudaSuccess)
      ue = e1;
  }
  (void)cudaGetLastError();
  double t1 = median(vs, REPS), t2 = t1 + median(vu, REPS);
  const char *modes[] = {"auto", "whole", "node"};
  for (int shape = 0; shape < 2; shape++)
    for (int m = 0; m < 3; m++) {
      rp_exec_opts o = RP_EXEC_OPTS_INIT;
      o.cuda_update = modes[m];
      if (shape)
        o.reshape_copies = RP_EXEC_RESHAPE_NONE;
      rp_exec *x;
      RK(rp_exec_create(&x, g, be, &o));
      uint32_t copies = rp_exec_plan(x)->nnode;
      RK(rp_exec_run(x, 1));
      double v[REPS], l[REPS];
      for (int r = 0; r < REPS; r++) {
        double t0 = now_us();
        RK(rp_exec_launch(x, 1));
        l[r] = now_us() - t0;
        RK(rp_exec_wait(x));
        t0 = now_us();
        RK(rp_exec_rebind(x, b, r % 2 ? h1 : h2, (uint64_t)N * SL));
        RK(rp_exec_launch(x, 1));
        v[r] = now_us() - t0;
        RK(rp_exec_wait(x));
      }
      double cost = median(v, REPS) - median(l, REPS);
      printf("(d) rebind behind %d copies [%s, %s: %u memcpy node%s]: "
             "reprise %.3f us per recorded copy (%.3f per memcpy node), "
             "cudaGraphExecUpdate %.3f%s: ratio %.3f (goal <= 1: %s); "
             "template set %.3f, vs template setters + ExecUpdate %.3f\n",
             N, shape ? "as recorded" : "reshaped, the default", modes[m],
             copies, copies == 1 ? "" : "s", cost / N,
             cost / (copies ? copies : 1), (t2 - t1) / N, ue ? " (failed)" : "",
             cost / (t2 - t1), verdict(cost / (t2 - t1) <= 1.0), t1 / N,
             cost / t2);
      rp_exec_destroy(x);
    }
  free(nodes);
  CK(cudaGraphExecDestroy(ce));
  CK(cudaGraphDestroy(cg));
  CK(cudaFree(dd));
  rp_graph_destroy(g);
  CK(cudaHostUnregister(h1));
  CK(cudaHostUnregister(h2));
  free(h1);
  free(h2);
}

/* The hand-written pipeline, one run, wall time in microseconds.
 * which: 0 h2d only, 1 kernels only, 2 d2h only (one stream each: the
 * lanes alone), 3 all on one stream, 4 chunks round robin over 4 streams
 * (the anchor's hand-tuned version), 5 every h2d on one stream and every
 * d2h on another at once (both copy directions together, no kernel). */
enum { HAND_MAX_K = 16 };
typedef struct hp {
  cudaStream_t s0, ss[4];
  cudaEvent_t fork, join[4];
  float *h, *d;
  size_t n;
  int K;
  dim3 gr, bl;
  void *(*kp)[1];
  rp_kargs ka[HAND_MAX_K];
  void *kpv[HAND_MAX_K][1];
} hp;

/* The hand-written pipeline's state: K chunks of n floats on the device,
 * chunk k's kernel arguments, a fork event and 4 streams with a join
 * event each. */
static void hand_open(hp *p, cudaStream_t s0, float *h, size_t n, int K,
                      int iters) {
  memset(p, 0, sizeof *p);
  p->s0 = s0, p->h = h, p->n = n, p->K = K, p->kp = p->kpv;
  CK(cudaMalloc((void **)&p->d, n * sizeof(float) * (size_t)K));
  for (int k = 0; k < K; k++) {
    p->ka[k].n[0] = n;
    p->ka[k].n[1] = p->ka[k].n[2] = 1;
    p->ka[k].a[0].p = p->d;
    p->ka[k].a[1].u64 = k * n;
    p->ka[k].a[2].i32 = iters;
    p->kpv[k][0] = &p->ka[k];
  }
  p->gr.x = (unsigned)((n + 255) / 256);
  p->gr.y = p->gr.z = p->bl.y = p->bl.z = 1;
  p->bl.x = 256;
  CK(cudaEventCreateWithFlags(&p->fork, cudaEventDisableTiming));
  for (int i = 0; i < 4; i++) {
    CK(cudaStreamCreateWithFlags(&p->ss[i], cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&p->join[i], cudaEventDisableTiming));
  }
}

static void hand_close(hp *p) {
  for (int i = 0; i < 4; i++) {
    CK(cudaStreamDestroy(p->ss[i]));
    CK(cudaEventDestroy(p->join[i]));
  }
  CK(cudaEventDestroy(p->fork));
  CK(cudaFree(p->d));
}

static double hand_run(hp *p, int which) {
  int S = which == 4 ? 4 : which == 5 ? 2 : 1;
  size_t n = p->n, bytes = n * sizeof(float);
  double t0 = now_us();
  CK(cudaEventRecord(p->fork, p->s0));
  for (int i = 0; i < S; i++)
    CK(cudaStreamWaitEvent(p->ss[i], p->fork, 0));
  for (int k = 0; k < p->K; k++) {
    cudaStream_t st = p->ss[k % S];
    if (which == 5) {
      CK(cudaMemcpyAsync(p->d + k * n, p->h + k * n, bytes,
                         cudaMemcpyHostToDevice, p->ss[0]));
      CK(cudaMemcpyAsync(p->h + k * n, p->d + k * n, bytes,
                         cudaMemcpyDeviceToHost, p->ss[1]));
      continue;
    }
    if (which == 0 || which >= 3)
      CK(cudaMemcpyAsync(p->d + k * n, p->h + k * n, bytes,
                         cudaMemcpyHostToDevice, st));
    if (which == 1 || which >= 3)
      CK(cudaLaunchKernel(bc_burn.cuda, p->gr, p->bl, p->kp[k], 0, st));
    if (which == 2 || which >= 3)
      CK(cudaMemcpyAsync(p->h + k * n, p->d + k * n, bytes,
                         cudaMemcpyDeviceToHost, st));
  }
  for (int i = 0; i < S; i++) {
    CK(cudaEventRecord(p->join[i], p->ss[i]));
    CK(cudaStreamWaitEvent(p->s0, p->join[i], 0));
  }
  CK(cudaStreamSynchronize(p->s0));
  return now_us() - t0;
}

static double run_once(rp_exec *x) {
  double t0 = now_us();
  RK(rp_exec_run(x, 1));
  return now_us() - t0;
}

/* (b): K chunks h2d -> burn -> d2h, recorded in program order. */
static void pipeline(const rp_backend *be, cudaStream_t s0, int iters) {
  enum { K = 16 };
  const size_t n = (size_t)16 << 20, bytes = n * sizeof(float);
  float *h = malloc(bytes * K);
  for (size_t i = 0; i < n * K; i++)
    h[i] = (float)(i % 1000) * 1e-3f;
  CK(cudaHostRegister(h, bytes * K, 0));
  rp_graph *g;
  rp_buf b;
  RK(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  RK(rp_buffer_register(g, "data", h, bytes * K, &b));
  for (int k = 0; k < K; k++) {
    rp_region r = rp_range_bytes(b, k * bytes, bytes);
    rp_arg a[3] = {rp_arg_buf(r), rp_arg_i64((int64_t)(k * n)),
                   rp_arg_i32(iters)};
    RK(rp_record_copy_to_device(g, r, 0, NULL, NULL));
    RK(rp_record_kernel(g, &bc_burn, 0, rp_dims3(n, 1, 1), a, NULL, NULL));
    RK(rp_record_copy_to_host(g, r, 0, NULL, NULL));
  }
  RK(rp_graph_end(g));
  rp_exec *xg = mkexec(g, be, "graph", NULL);
  rp_exec *xs = mkexec(g, be, "streams", NULL);
  rp_exec *x1 = mkexec(g, be, "serial", NULL);
  double tg = time_runs(xg), ts = time_runs(xs), t1 = time_runs(x1);
  uint32_t nn = rp_graph_num_nodes(g);
  double *op_us = calloc(nn, sizeof *op_us);
  RK(rp_exec_profile(xg, op_us));
  /* The prediction as the examples make it: the exec's own graph and
   * options, the cuda model calibrated on this machine when cached (its
   * copy bandwidths, both directions at once included). */
  rp_analysis_opts ao;
  rp_model model;
  unsigned units[RP_MAX_DEVICES];
  if (rp_model_get(&model, be, NULL, 0) != RP_OK)
    rp_model_init(&model);
  rp_analysis_opts_init(&ao);
  ao.measured_us = op_us;
  RK(rp_analysis_opts_from_exec(&ao, &model, units, xg));
  rp_analysis *an;
  RK(rp_analyze_exec(xg, &ao, &an));
  rp_summary sm;
  rp_analysis_summary(an, &sm);
  double pred = sm.modelled ? sm.model_speedup : sm.predicted_speedup;

  /* Hand-written: one stream, and chunks round robin over 4 streams. */
  static hp p; /* ~13 KB of kernel arguments: not on the stack */
  hand_open(&p, s0, h, n, K, iters);
  double hv[6], v[REPS], vg[REPS], vh[REPS];
  for (int which = 0; which < 6; which++) {
    hand_run(&p, which);
    for (int r = 0; r < REPS; r++)
      v[r] = hand_run(&p, which);
    hv[which] = median(v, REPS);
  }
  /* The headline pair, interleaved so that drift hits both alike. */
  double vs[REPS];
  for (int r = 0; r < REPS; r++) {
    vg[r] = run_once(xg);
    vh[r] = hand_run(&p, 4);
    vs[r] = run_once(xs);
  }
  tg = median(vg, REPS);
  ts = median(vs, REPS);
  double hand4 = median(vh, REPS), sum = hv[0] + hv[1] + hv[2];
  double mx = hv[0] > hv[1] ? hv[0] : hv[1];
  mx = mx > hv[2] ? mx : hv[2];
  double achieved = t1 / tg, pred_err = pred / achieved;
  printf("(b) lanes alone: h2d %.2f ms, kernel %.2f ms, d2h %.2f ms; "
         "3-lane bound %.2f; h2d and d2h at once %.2f ms (%.2f with that)\n",
         hv[0] / 1e3, hv[1] / 1e3, hv[2] / 1e3, sum / mx, hv[5] / 1e3,
         sum / (hv[5] > hv[1] ? hv[5] : hv[1]));
  printf("(b) %d chunks of %zu MiB, iters %d: reprise graph %.2f ms, "
         "streams %.2f ms, serial %.2f ms; hand 4 streams %.2f ms, hand 1 "
         "stream %.2f ms\n",
         K, bytes >> 20, iters, tg / 1e3, ts / 1e3, t1 / 1e3, hand4 / 1e3,
         hv[3] / 1e3);
  /* Both copy directions at once run slower than each alone here, so
   * the bound that knows it divides by that time, not the lane sums. */
  double dux = t1 / (hv[5] > hv[1] ? hv[5] : hv[1]);
  printf("(b) streams mode vs hand 4 streams: %.3f; duplex-aware bound "
         "%.2f, reached %.1f%% by graph (goal >= 90%%: %s), %.1f%% by "
         "streams\n",
         ts / hand4, dux, 100 * (t1 / tg) / dux, verdict(t1 / tg >= 0.9 * dux),
         100 * (t1 / ts) / dux);
  printf("(b) graph vs hand 4 streams: %.3f (goal <= 1: %s); achieved "
         "speedup %.2f (serial/graph), analysis bound %.2f, %.1f%% of "
         "it; lane bound %.2f, %.1f%% of it\n",
         tg / hand4, verdict(tg <= hand4), achieved, sm.bound,
         100 * achieved / sm.bound, sum / mx, 100 * achieved / (sum / mx));
  printf("(b) predicted speedup %.2f (%s; list schedule %.2f) vs achieved "
         "%.2f: ratio %.3f (goal within 5%%: %s); makespan %.2f ms, "
         "limited by %s\n",
         pred, sm.modelled ? "calibrated model" : "no calibration cached",
         sm.predicted_speedup, achieved, pred_err,
         verdict(pred_err > 0.95 && pred_err < 1.05), sm.makespan_us / 1e3,
         sm.limited_by);
  hand_close(&p);
  rp_analysis_destroy(an);
  free(op_us);
  rp_exec_destroy(xg);
  rp_exec_destroy(xs);
  rp_exec_destroy(x1);
  rp_graph_destroy(g);
  CK(cudaHostUnregister(h));
  free(h);
}

/* (e): the pipeline recorded naively (one whole copy in, one kernel, one
 * whole copy out of one K x 64 MiB buffer): its unsplit replay, its
 * automatic split (rp_exec_opts.split = RP_EXEC_SPLIT_AUTO) and the
 * hand-chunked K-chunk 4-stream version, interleaved in one run; the
 * split's results checked byte for byte against the unsplit replay's. */
static void autosplit(const rp_backend *be, cudaStream_t s0, int iters) {
  enum { K = 16 };
  const size_t n = (size_t)16 << 20, bytes = n * sizeof(float);
  const size_t all = n * K;
  float *h = malloc(bytes * K), *h0 = malloc(bytes * K);
  float *want = malloc(bytes * K);
  for (size_t i = 0; i < all; i++)
    h0[i] = (float)(i % 1000) * 1e-3f;
  memcpy(h, h0, bytes * K);
  CK(cudaHostRegister(h, bytes * K, 0));
  rp_graph *g;
  rp_buf b;
  RK(rp_graph_create(&g, 0));
  RK(rp_buffer_register(g, "data", h, bytes * K, &b));
  rp_arg a[3] = {rp_arg_buf(rp_whole(b)), rp_arg_i64(0), rp_arg_i32(iters)};
  RK(rp_record_copy_to_device(g, rp_whole(b), 0, NULL, NULL));
  RK(rp_record_kernel(g, &bc_burn_split, 0, rp_dims3(all, 1, 1), a, NULL,
                      NULL));
  RK(rp_record_copy_to_host(g, rp_whole(b), 0, NULL, NULL));
  RK(rp_graph_end(g));
  rp_exec *xu = mkexec(g, be, "graph", NULL);
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.mode = "graph";
  o.split = RP_EXEC_SPLIT_AUTO;
  rp_exec *xa;
  RK(rp_exec_create(&xa, g, be, &o));
  uint32_t nk, nc;
  unsigned k = rp_exec_split_chunks(xa, &nk, &nc);

  /* Results: one replay of each from the same data, byte for byte. */
  RK(rp_exec_run(xu, 1));
  memcpy(want, h, bytes * K);
  memcpy(h, h0, bytes * K);
  RK(rp_exec_run(xa, 1));
  int same = !memcmp(want, h, bytes * K);

  /* The advice: from the default model (what the exec used here when no
   * calibration is saved), and from the unsplit replay's measured costs. */
  rp_analysis_opts ao;
  rp_analysis_opts_init(&ao);
  rp_model m;
  int cal = rp_model_get(&m, be, &o, 0) == RP_OK;
  if (cal)
    ao.model = &m;
  ao.mode = "graph";
  rp_split_advice adv, advm;
  RK(rp_split_advise(g, &ao, 0, &adv));
  double op_us[3];
  RK(rp_exec_profile(xu, op_us));
  ao.measured_us = op_us;
  RK(rp_split_advise(g, &ao, 0, &advm));
  printf("(e) advice (%s model): ", cal ? "calibrated" : "default");
  rp_split_write_text(g, &adv, stdout);
  printf("(e) advice (measured costs, %.2f / %.2f / %.2f ms): ", op_us[0] / 1e3,
         op_us[1] / 1e3, op_us[2] / 1e3);
  rp_split_write_text(g, &advm, stdout);

  /* Hand-chunked: K chunks round robin over 4 streams (the anchor). */
  static hp p; /* ~13 KB of kernel arguments: not on the stack */
  hand_open(&p, s0, h, n, K, iters);
  double vu[REPS], va[REPS], vh[REPS];
  run_once(xu);
  run_once(xa);
  hand_run(&p, 4);
  for (int r = 0; r < REPS; r++) {
    vu[r] = run_once(xu);
    va[r] = run_once(xa);
    vh[r] = hand_run(&p, 4);
  }
  double tu = median(vu, REPS), ta = median(va, REPS), th = median(vh, REPS);
  printf("(e) naive %d x %zu MiB, iters %d: unsplit %.2f ms, auto-split "
         "(k %u, %u kernel, %u copies) %.2f ms, hand %d chunks 4 streams "
         "%.2f ms; results identical: %s\n",
         K, bytes >> 20, iters, tu / 1e3, k, nk, nc, ta / 1e3, K, th / 1e3,
         same ? "yes" : "NO");
  printf("(e) auto-split vs unsplit %.2fx (goal >= 1.8: %s); vs hand %.3f "
         "(goal <= 1.05: %s)\n",
         tu / ta, verdict(tu / ta >= 1.8), ta / th, verdict(ta / th <= 1.05));
  /* Fixed k beside the automatic one. */
  static const unsigned ks[] = {2, 4, 8, 16, 32};
  printf("(e) fixed k:");
  for (unsigned i = 0; i < sizeof ks / sizeof ks[0]; i++) {
    o.split = ks[i];
    rp_exec *xk;
    RK(rp_exec_create(&xk, g, be, &o));
    printf(" k %u %.2f ms%s", ks[i], time_runs(xk) / 1e3,
           i + 1 < sizeof ks / sizeof ks[0] ? ";" : "\n");
    rp_exec_destroy(xk);
  }
  hand_close(&p);
  rp_exec_destroy(xu);
  rp_exec_destroy(xa);
  rp_graph_destroy(g);
  CK(cudaHostUnregister(h));
  free(h);
  free(h0);
  free(want);
}

#ifdef RP_BENCH_EXAMPLES
/* (f): the device loop. examples/converge's graph (64^2 grid, 4 row
 * blocks: 8 Jacobi step kernels, 4 row residuals, 1 max per pass) replayed
 * by rp_exec_run_until (one conditional WHILE node), against the same
 * kernels, with the same launch shapes, in a WHILE graph built by hand:
 * the dependencies written from the algorithm, a test kernel reading the
 * residual in device memory, the grid copied home once after the loop.
 * Both start from the same grid and must stop after the same passes with
 * the same grid. */
typedef struct lk {
  const rp_kernel *k;
  rp_kargs a;
  rp_kernel_block kb;
} lk;

static void loop_hand(const rp_graph *g, rp_exec *x, const ex_converge *p,
                      double tol, unsigned max, cudaStream_t s, double *us_per,
                      unsigned *done, double *grid) {
  uint64_t n = p->n, nb = p->blocks;
  size_t bytes = n * n * 8;
  double *dU, *dV, *dR, *dS;
  CK(cudaMalloc((void **)&dU, bytes));
  CK(cudaMalloc((void **)&dV, bytes));
  CK(cudaMalloc((void **)&dR, n * 8));
  CK(cudaMalloc((void **)&dS, 8));
  /* The kernels in the recorded order, their arguments pointing at our
   * arrays by buffer name. */
  /* The exec's graph (its copies reshaped): its kernels are the recorded
   * ones, in the same order. */
  const rp_graph *eg = rp_exec_graph(x);
  uint32_t nk = 0, nn = rp_graph_num_nodes(eg);
  lk *ks = calloc(nn, sizeof *ks);
  (void)g;
  for (rp_node v = 0; v < nn; v++) {
    rp_node_info ni;
    RK(rp_node_info_get(eg, v, &ni));
    if (ni.type != RP_OP_KERNEL)
      continue;
    lk *k = &ks[nk++];
    k->k = ni.kernel;
    k->a = *rp_exec_args(x, v);
    RK(rp_exec_kernel_block(x, rp_exec_op_origin(x, v), &k->kb));
    for (unsigned q = 0, acc = 0; q < ni.kernel->nparams; q++) {
      if (ni.kernel->params[q].mode == RP_SCALAR)
        continue;
      rp_access_info ai;
      rp_buffer_desc d;
      RK(rp_node_access(eg, v, acc++, &ai));
      RK(rp_buffer_info(eg, ai.region.buf, &d));
      k->a.a[q].p = !strcmp(d.name, "U")        ? (void *)dU
                    : !strcmp(d.name, "V")      ? (void *)dV
                    : !strcmp(d.name, "rowres") ? (void *)dR
                                                : (void *)dS;
    }
  }
  if (nk != 3 * nb + 1) {
    fprintf(stderr, "(f) unexpected converge graph: %u kernels\n", nk);
    exit(2);
  }
  /* Dependencies by hand: step 1 block b (U -> V) after nothing in the
   * pass; step 2 block b (V -> U) after step 1 blocks b-1..b+1; rowres b
   * after step 2 block b; max after every rowres; the test after max. */
  cudaGraph_t lg, body;
  cudaGraphExec_t le;
  CK(cudaGraphCreate(&lg, 0));
  cudaGraphConditionalHandle h;
  CK(cudaGraphConditionalHandleCreate(&h, lg, 1, cudaGraphCondAssignDefault));
  struct cudaGraphNodeParams np;
  memset(&np, 0, sizeof np);
  np.type = cudaGraphNodeTypeConditional;
  np.conditional.handle = h;
  np.conditional.type = cudaGraphCondTypeWhile;
  np.conditional.size = 1;
  cudaGraphNode_t cn;
#if CUDART_VERSION >= 13000
  CK(cudaGraphAddNode(&cn, lg, NULL, NULL, 0, &np));
#else
  CK(cudaGraphAddNode(&cn, lg, NULL, 0, &np));
#endif
  body = np.conditional.phGraph_out[0];
  cudaGraphNode_t *kn = calloc(nk + 1, sizeof *kn);
  for (uint32_t i = 0; i < nk; i++) {
    cudaGraphNode_t dep[8];
    size_t nd = 0;
    if (i >= nb && i < 2 * nb) { /* step 2 block b */
      uint64_t b = i - nb;
      for (uint64_t c = b ? b - 1 : 0; c <= b + 1 && c < nb; c++)
        dep[nd++] = kn[c];
    } else if (i >= 2 * nb && i < 3 * nb) { /* rowres b */
      dep[nd++] = kn[i - nb];
    }
    void *args[1] = {&ks[i].a};
    dim3 bl = {ks[i].kb.block[0], ks[i].kb.block[1], ks[i].kb.block[2]};
    dim3 gr = {ks[i].kb.grid[0], ks[i].kb.grid[1], ks[i].kb.grid[2]};
    struct cudaKernelNodeParams kp = {
        (void *)ks[i].k->cuda, gr, bl, 0, args, NULL};
    if (i == nk - 1) { /* max: after every rowres */
      cudaGraphNode_t *rd = kn + 2 * nb;
      CK(cudaGraphAddKernelNode(&kn[i], body, rd, nb, &kp));
    } else {
      CK(cudaGraphAddKernelNode(&kn[i], body, nd ? dep : NULL, nd, &kp));
    }
  }
  bc_while_state hs = {dS, tol, max, 0}, *ds;
  CK(cudaMalloc((void **)&ds, sizeof *ds));
  void *targs[2] = {&h, &ds};
  struct cudaKernelNodeParams tp = {
      (void *)bc_while_kernel(), {1, 1, 1}, {1, 1, 1}, 0, targs, NULL};
  cudaGraphNode_t tn;
  CK(cudaGraphAddKernelNode(&tn, body, &kn[nk - 1], 1, &tp));
  cudaGraphNode_t home;
  CK(cudaGraphAddMemcpyNode1D(&home, lg, &cn, 1, grid, dU, bytes,
                              cudaMemcpyDeviceToHost));
  CK(cudaGraphInstantiate(&le, lg, 0));
  double v[5];
  for (int r = 0; r < 5; r++) {
    double one = 1e300;
    CK(cudaMemset(dU, 0, bytes));
    CK(cudaMemset(dV, 0, bytes));
    CK(cudaMemcpy(dS, &one, 8, cudaMemcpyHostToDevice));
    hs.count = 0;
    CK(cudaDeviceSynchronize());
    double t0 = now_us();
    CK(cudaMemcpyAsync(ds, &hs, sizeof hs, cudaMemcpyHostToDevice, s));
    CK(cudaGraphLaunch(le, s));
    bc_while_state back;
    CK(cudaMemcpyAsync(&back, ds, sizeof back, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    v[r] = now_us() - t0;
    *done = back.count;
    v[r] /= back.count ? back.count : 1;
  }
  *us_per = median(v, 5);
  CK(cudaGraphExecDestroy(le));
  CK(cudaGraphDestroy(lg));
  CK(cudaFree(ds));
  CK(cudaFree(dU));
  CK(cudaFree(dV));
  CK(cudaFree(dR));
  CK(cudaFree(dS));
  free(kn);
  free(ks);
}

static void device_loop(const rp_backend *be, cudaStream_t s) {
  ex_converge p = {64, 4, 0};
  const double tol = 1e-6;
  const unsigned max = 20000;
  size_t bytes = p.n * p.n * 8;
  double *u = malloc(bytes), *hu = malloc(bytes), res = 0;
  rp_graph *g;
  rp_buf rb;
  RK(rp_graph_create(&g, 0));
  RK(ex_converge_record(g, &p, u, &res, &rb));
  RK(rp_graph_end(g));
  rp_exec *x = mkexec(g, be, NULL, NULL);
  rp_until un = {rb, 0, RP_UNTIL_F64, RP_UNTIL_LT, tol};
  double v[5];
  unsigned done = 0;
  for (int r = 0; r < 5; r++) {
    ex_converge_init(&p, u, &res);
    double t0 = now_us();
    RK(rp_exec_run_until(x, &un, max, 1, &done));
    v[r] = (now_us() - t0) / (done ? done : 1);
  }
  const char *note = rp_exec_error(x);
  double ours = median(v, 5), hand = 0;
  unsigned hdone = 0;
  if (!bc_while_kernel()) {
    printf("(f) device loop: the toolkit has no conditional nodes\n");
  } else {
    loop_hand(g, x, &p, tol, max, s, &hand, &hdone, hu);
    int same = hdone == done && !memcmp(hu, u, bytes);
    printf("(f) device loop, converge %llu^2, %u blocks (%u kernels per "
           "pass): reprise run_until %.2f us/pass (%u passes%s%s), hand-built "
           "WHILE graph %.2f us/pass (%u passes): ratio %.3f (goal <= 1.1: "
           "%s); grid and passes identical: %s\n",
           (unsigned long long)p.n, p.blocks, 3 * p.blocks + 1, ours, done,
           note[0] ? "; " : "", note, hand, hdone, ours / hand,
           verdict(ours / hand <= 1.1), same ? "yes" : "NO");
  }
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(u);
  free(hu);
}
#endif

int main(int argc, char **argv) {
  const rp_backend *be;
  if (rp_backend_find("cuda", &be) != RP_OK || rp_backend_probe(be) != RP_OK) {
    printf("bench_cuda: no CUDA device, nothing measured\n");
    return 0;
  }
  struct cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("device: %s, %d SMs, %d copy engines\n", p.name, p.multiProcessorCount,
         p.asyncEngineCount);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  /* "split [iters]": only the automatic split case (e). */
  if (argc > 1 && !strcmp(argv[1], "split")) {
    autosplit(be, s, argc > 2 ? atoi(argv[2]) : 400);
    CK(cudaStreamDestroy(s));
    return 0;
  }
  /* "loop": only the device loop (f). */
  if (argc > 1 && !strcmp(argv[1], "loop")) {
#ifdef RP_BENCH_EXAMPLES
    device_loop(be, s);
#endif
    CK(cudaStreamDestroy(s));
    return 0;
  }
  chain(be, s);
  rebind_copies(be, s);
  pipeline(be, s, argc > 1 ? atoi(argv[1]) : 400);
  autosplit(be, s, argc > 1 ? atoi(argv[1]) : 400);
#ifdef RP_BENCH_EXAMPLES
  device_loop(be, s);
#else
  printf("(f) device loop: not built (needs the examples)\n");
#endif
  CK(cudaStreamDestroy(s));
  return 0;
}
