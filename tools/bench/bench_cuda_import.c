/* (g) A CUDA graph imported (rp_cuda_graph_import, docs/cuda_import.md):
 * a captured chain of N tiny kernels, each adding 1 to one float. The
 * import's cost per node (without profiling, then with 3 profiled runs),
 * its exec's instantiate per node against cudaGraphInstantiate of the
 * capture, and its replay per kernel against the captured graph's, in the
 * same run (medians of REPS); both must leave the same value. Prints
 * nothing measured without a GPU. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include "bench_cuda_kernels.h"
#include "reprise.h"
#include "rp_cuda_import.h"
#include "bench_cuda_check.h"

enum { N = 2000, REPS = 15 };

static const char *verdict(int ok) { return ok ? "met" : "MISSED"; }

/* Median of 3 cudaGraphInstantiate of g, microseconds. */
static double inst_us(cudaGraph_t g) {
  double v[3];
  for (int r = 0; r < 3; r++) {
    cudaGraphExec_t e;
    double t0 = now_us();
    CK(cudaGraphInstantiate(&e, g, 0));
    v[r] = now_us() - t0;
    CK(cudaGraphExecDestroy(e));
  }
  return median(v, 3);
}

/* Where instantiate's time goes (a diagnosis, all by hand): the captured
 * chain cloned, and the chain built with cudaGraphAddKernelNode from the
 * captured nodes' own parameters, against the capture itself. */
static void inst_paths(cudaGraph_t cg) {
  cudaGraph_t cl, ad;
  CK(cudaGraphClone(&cl, cg));
  CK(cudaGraphCreate(&ad, 0));
  size_t n = 0;
  CK(cudaGraphGetNodes(cg, NULL, &n));
  cudaGraphNode_t *nodes = malloc(n * sizeof *nodes), prev = NULL;
  CK(cudaGraphGetNodes(cg, nodes, &n));
  /* a chain: the captured nodes come in order of capture */
  for (size_t i = 0; i < n; i++) {
    struct cudaKernelNodeParams kp;
    CK(cudaGraphKernelNodeGetParams(nodes[i], &kp));
    cudaGraphNode_t x;
    CK(cudaGraphAddKernelNode(&x, ad, prev ? &prev : NULL, prev ? 1 : 0, &kp));
    prev = x;
  }
  double c = inst_us(cg), k = inst_us(cl), a = inst_us(ad);
  printf("(g) instantiate per node, by hand: captured %.3f us, its clone "
         "%.3f (%.2fx), rebuilt with cudaGraphAddKernelNode from its own "
         "parameters %.3f (%.2fx)\n",
         c / (double)n, k / (double)n, k / c, a / (double)n, a / c);
  free(nodes);
  CK(cudaGraphDestroy(cl));
  CK(cudaGraphDestroy(ad));
}

/* One launch of the import's exec or of the graph exec, synchronised. */
static double once(rp_exec *x, cudaGraphExec_t ge, cudaStream_t s) {
  double t0 = now_us();
  if (x) {
    RK(rp_exec_run(x, 1));
  } else {
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
  }
  return now_us() - t0;
}

int main(void) {
  const rp_backend *be;
  if (rp_backend_find("cuda", &be) != RP_OK || rp_backend_probe(be) != RP_OK) {
    printf("bench_cuda_import: no CUDA device, nothing measured\n");
    return 0;
  }
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *dp, h = 0;
  rp_kargs ka;
  bc_tiny_block(&ka, &dp);
  void *kp[1] = {&ka};
  dim3 gr = {1, 1, 1}, bl = {32, 1, 1};
  cudaGraph_t cg;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < N; i++)
    CK(cudaLaunchKernel(bc_tiny.cuda, gr, bl, kp, 0, s));
  CK(cudaStreamEndCapture(s, &cg));
  /* CUDA's instantiate of the capture (the first loads the module) */
  cudaGraphExec_t ce;
  double ci[3];
  for (int r = 0; r < 4; r++) {
    double t0 = now_us();
    CK(cudaGraphInstantiate(&ce, cg, 0));
    if (r)
      ci[r - 1] = now_us() - t0;
    if (r < 3)
      CK(cudaGraphExecDestroy(ce));
  }
  /* the import, without and with profiling; its exec's creation */
  char err[256];
  rp_cuda_import *im;
  double ti[3], tx[3];
  for (int r = 0; r < 3; r++) {
    double t0 = now_us();
    if (rp_cuda_graph_import(cg, 0, &im, err, sizeof err) != RP_OK) {
      printf("(g) import failed: %s\n", err);
      return 1;
    }
    ti[r] = now_us() - t0;
    rp_exec *x;
    t0 = now_us();
    RK(rp_exec_create(&x, rp_cuda_import_graph(im), be, NULL));
    tx[r] = now_us() - t0;
    rp_exec_destroy(x);
    rp_cuda_import_free(im);
  }
  double t0 = now_us();
  if (rp_cuda_graph_import(cg, 3, &im, err, sizeof err) != RP_OK) {
    printf("(g) import with profiling failed: %s\n", err);
    return 1;
  }
  double tprof = now_us() - t0;
  rp_exec *x;
  RK(rp_exec_create(&x, rp_cuda_import_graph(im), be, NULL));
  /* replays, alternated with the captured graph's */
  double vr[REPS], vc[REPS];
  once(x, NULL, s);
  once(NULL, ce, s);
  for (int r = 0; r < REPS; r++) {
    vr[r] = once(x, NULL, s);
    vc[r] = once(NULL, ce, s);
  }
  /* the result: one launch of each adds N to the float */
  float a, b, c;
  CK(cudaMemcpy(&a, dp, 4, cudaMemcpyDeviceToHost));
  once(x, NULL, s);
  CK(cudaMemcpy(&b, dp, 4, cudaMemcpyDeviceToHost));
  once(NULL, ce, s);
  CK(cudaMemcpy(&c, dp, 4, cudaMemcpyDeviceToHost));
  h = b - a;
  double rep = median(vr, REPS), cap = median(vc, REPS);
  double inst = median(tx, 3), cinst = median(ci, 3);
  printf("(g) import of a captured chain of %d kernels: %.3f us/node "
         "(%.1f ms with 3 profiled runs); the import's exec %.3f us/node "
         "against cudaGraphInstantiate %.3f: %.2fx\n",
         N, median(ti, 3) / N, tprof / 1e3, inst / N, cinst / N, inst / cinst);
  printf("(g) replay of the import %.3f us/kernel, the captured graph "
         "%.3f: ratio %.3f (goal <= 1.05: %s); one launch adds %g and %g "
         "(%s)\n",
         rep / N, cap / N, rep / cap, verdict(rep / cap <= 1.05), (double)h,
         (double)(c - b),
         h == (float)N && c - b == (float)N ? "identical" : "DIFFERENT");
  inst_paths(cg);
  rp_exec_destroy(x);
  rp_cuda_import_free(im);
  CK(cudaGraphExecDestroy(ce));
  CK(cudaGraphDestroy(cg));
  CK(cudaFree(dp));
  CK(cudaStreamDestroy(s));
  return h == (float)N && c - b == (float)N ? 0 : 1;
}
