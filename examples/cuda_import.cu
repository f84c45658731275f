/* A CUDA program reprise never saw, analysed and replayed
 * (docs/cuda_import.md): a pipeline over two streams (per chunk: two
 * copies in, two kernels, one copy out; chunks alternate streams), joined
 * by an event, then a memset and a checksum kernel on the first stream.
 * It runs once on its streams (the reference result), is captured into a
 * cudaGraph_t, imported with rp_cuda_graph_import (each node profiled on
 * the GPU), analysed (lanes, critical path, bound, predicted speedup),
 * replayed on the cuda backend and compared byte for byte with the
 * streams' result; then its serial and overlapped replays are timed
 * against the prediction.
 *   cuda_import [--n FLOATS] [--chunks C] [--dot FILE] [--json FILE]
 *               [--trace FILE] [--no-model]
 * --no-model: the analysis without the machine model (no calibration:
 * under compute-sanitizer, say).
 * Exit status: 0 identical, 1 a difference, 2 an error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>
#include "reprise.h"
#include "rp_cuda_import.h"

extern "C" const rp_backend rp_backend_cuda;

__global__ void ci_scale(float *p, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    for (int k = 0; k < 64; k++) /* some work: the copies overlap it */
      p[i] = p[i] * a + 0.5f;
}

__global__ void ci_axpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] += a * x[i];
}

/* An order-free checksum: the sum of the values' bit patterns. */
__global__ void ci_sum(const float *y, int n, unsigned long long *sum) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(sum, (unsigned long long)__float_as_uint(y[i]));
}

#define CK(call)                                                               \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));              \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

struct prog {
  int n, chunks;
  float *hx, *hy, *hz, *dx, *dy;
  unsigned long long *dsum, *hsum;
  cudaStream_t st[2];
  cudaEvent_t fork, join;
};

/* The program, on its two streams (captured when st[0] is capturing). */
static void program(prog *p) {
  int m = p->n / p->chunks;
  size_t b = (size_t)m * sizeof(float);
  CK(cudaEventRecord(p->fork, p->st[0]));
  CK(cudaStreamWaitEvent(p->st[1], p->fork, 0));
  for (int c = 0; c < p->chunks; c++) {
    cudaStream_t s = p->st[c % 2];
    size_t o = (size_t)c * m;
    CK(cudaMemcpyAsync(p->dx + o, p->hx + o, b, cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(p->dy + o, p->hy + o, b, cudaMemcpyHostToDevice, s));
    ci_scale<<<(m + 255) / 256, 256, 0, s>>>(p->dx + o, 1.0001f, m);
    ci_axpy<<<(m + 255) / 256, 256, 0, s>>>(p->dy + o, p->dx + o, 3.0f, m);
    CK(cudaMemcpyAsync(p->hz + o, p->dy + o, b, cudaMemcpyDeviceToHost, s));
  }
  CK(cudaEventRecord(p->join, p->st[1]));
  CK(cudaStreamWaitEvent(p->st[0], p->join, 0));
  CK(cudaMemsetAsync(p->dsum, 0, sizeof *p->dsum, p->st[0]));
  ci_sum<<<(p->n + 255) / 256, 256, 0, p->st[0]>>>(p->dy, p->n, p->dsum);
  CK(cudaMemcpyAsync(p->hsum, p->dsum, sizeof *p->dsum, cudaMemcpyDeviceToHost,
                     p->st[0]));
}

static void clear_outputs(prog *p) {
  memset(p->hz, 0, (size_t)p->n * sizeof(float));
  *p->hsum = 0;
}

/* 0 when hz and the checksum equal the reference's. */
static int differs(const prog *p, const float *zref, unsigned long long sref,
                   const char *what) {
  if (memcmp(p->hz, zref, (size_t)p->n * sizeof(float)) || *p->hsum != sref) {
    printf("%s: DIFFERS from the streams' run\n", what);
    return 1;
  }
  printf("%s: identical to the streams' run\n", what);
  return 0;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
  prog p;
  memset(&p, 0, sizeof p);
  p.n = 1 << 22;
  p.chunks = 8;
  const char *dot = NULL, *json = NULL, *trace = NULL;
  int model_on = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc)
      p.n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--chunks") && i + 1 < argc)
      p.chunks = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dot") && i + 1 < argc)
      dot = argv[++i];
    else if (!strcmp(argv[i], "--json") && i + 1 < argc)
      json = argv[++i];
    else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
      trace = argv[++i];
    else if (!strcmp(argv[i], "--no-model"))
      model_on = 0;
    else {
      fprintf(stderr,
              "usage: %s [--n FLOATS] [--chunks C] [--dot FILE] "
              "[--json FILE] [--trace FILE] [--no-model]\n",
              argv[0]);
      return 2;
    }
  }
  if (p.chunks < 1 || p.n < p.chunks || p.n % p.chunks) {
    fprintf(stderr, "--n must be a positive multiple of --chunks\n");
    return 2;
  }
  size_t bytes = (size_t)p.n * sizeof(float);
  CK(cudaMallocHost((void **)&p.hx, bytes));
  CK(cudaMallocHost((void **)&p.hy, bytes));
  CK(cudaMallocHost((void **)&p.hz, bytes));
  CK(cudaMallocHost((void **)&p.hsum, sizeof *p.hsum));
  CK(cudaMalloc((void **)&p.dx, bytes));
  CK(cudaMalloc((void **)&p.dy, bytes));
  CK(cudaMalloc((void **)&p.dsum, sizeof *p.dsum));
  for (int k = 0; k < 2; k++)
    CK(cudaStreamCreateWithFlags(&p.st[k], cudaStreamNonBlocking));
  CK(cudaEventCreateWithFlags(&p.fork, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&p.join, cudaEventDisableTiming));
  for (int i = 0; i < p.n; i++) {
    p.hx[i] = (float)(i % 1000) * 0.001f;
    p.hy[i] = (float)(i % 77);
  }
  float *zref = (float *)malloc(bytes);
  if (!zref)
    return 2;

  /* 1. the program on its streams: the reference */
  clear_outputs(&p);
  program(&p);
  CK(cudaDeviceSynchronize());
  memcpy(zref, p.hz, bytes);
  unsigned long long sref = *p.hsum;

  /* 2. captured as a CUDA graph */
  cudaGraph_t cg;
  CK(cudaStreamBeginCapture(p.st[0], cudaStreamCaptureModeGlobal));
  program(&p);
  CK(cudaStreamEndCapture(p.st[0], &cg));
  size_t ncu = 0;
  CK(cudaGraphGetNodes(cg, NULL, &ncu));

  /* 3. imported, each node profiled on the GPU (5 runs) */
  rp_cuda_import *im;
  char err[512];
  double t0 = rp_clock_us();
  rp_status s = rp_cuda_graph_import(cg, 5, &im, err, sizeof err);
  if (s != RP_OK) {
    fprintf(stderr, "import: %s: %s\n", rp_status_name(s), err);
    return 2;
  }
  rp_graph *g = rp_cuda_import_graph(im);
  printf("imported %zu CUDA nodes as %u operations and %u edges "
         "(%.1f ms with profiling)\n",
         ncu, rp_graph_num_nodes(g), rp_graph_num_edges(g),
         (rp_clock_us() - t0) / 1e3);

  /* The structure: per chunk 2 copies in, 2 kernels, 1 copy out; then
   * the memset, the checksum kernel and its copy out (the events are
   * edges). Stream order chains each stream's operations: each has one
   * predecessor but the first on each stream (none) and the memset (the
   * last of both streams, through the join event). */
  int ret = 0, two = p.chunks > 1 ? 2 : 1;
  unsigned cnt[8] = {0}, roots = 0;
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    cnt[ni.type < 8 ? ni.type : 7]++;
    uint32_t np;
    rp_graph_preds(g, n, &np);
    roots += np == 0;
    unsigned want = strstr(ni.name, "memset") ? two : 1;
    if (np != want && np != 0) {
      printf("structure: %s (op %u) has %u predecessors, expected %u\n",
             ni.name, n, np, want);
      ret = 1;
    }
  }
  if (roots != (unsigned)two) {
    printf("structure: %u operations start a stream, expected %d\n", roots,
           two);
    ret = 1;
  }
  if (rp_graph_num_nodes(g) != 5u * p.chunks + 3 ||
      cnt[RP_OP_COPY_H2D] != 2u * p.chunks ||
      cnt[RP_OP_COPY_D2H] != p.chunks + 1u) {
    printf("structure: %u operations (%u copies in, %u out), expected %d "
           "(%d, %d)\n",
           rp_graph_num_nodes(g), cnt[RP_OP_COPY_H2D], cnt[RP_OP_COPY_D2H],
           5 * p.chunks + 3, 2 * p.chunks, p.chunks + 1);
    ret = 1;
  } else if (!ret) {
    printf("structure: as the program wrote it, node for node\n");
  }

  /* 4. replayed on cuda (graph mode), and the CUDA graph itself */
  rp_exec *x = NULL, *xs = NULL;
  rp_exec_opts so = RP_EXEC_OPTS_INIT;
  so.mode = "serial";
  if ((s = rp_exec_create(&x, g, &rp_backend_cuda, NULL)) != RP_OK ||
      (s = rp_exec_create(&xs, g, &rp_backend_cuda, &so)) != RP_OK) {
    fprintf(stderr, "exec: %s: %s\n", rp_status_name(s), rp_last_error());
    return 2;
  }
  clear_outputs(&p);
  if ((s = rp_exec_run(x, 1)) != RP_OK) {
    fprintf(stderr, "replay: %s: %s\n", rp_status_name(s), rp_exec_error(x));
    return 2;
  }
  ret |= differs(&p, zref, sref, "reprise replay of the import (cuda)");
  clear_outputs(&p);
  if ((s = rp_exec_run(xs, 1)) != RP_OK)
    return 2;
  ret |= differs(&p, zref, sref, "reprise serial replay of the import");
  cudaGraphExec_t ge;
  CK(cudaGraphInstantiate(&ge, cg, 0));
  clear_outputs(&p);
  CK(cudaGraphLaunch(ge, p.st[0]));
  CK(cudaStreamSynchronize(p.st[0]));
  ret |= differs(&p, zref, sref, "the captured CUDA graph");

  /* 5. the analysis: measured costs, the calibrated model of x */
  rp_analysis_opts ao;
  rp_analysis_opts_init(&ao);
  rp_model model;
  rp_model_opts mo;
  memset(&mo, 0, sizeof mo);
  unsigned units[RP_MAX_DEVICES];
  if (model_on &&
      rp_analysis_opts_calibrated(&ao, &model, units, x, &mo) != RP_OK)
    fprintf(stderr, "calibration failed: the model stays uncalibrated\n");
  rp_analysis *an = NULL;
  if ((s = rp_analyze_exec(x, &ao, &an)) != RP_OK) {
    fprintf(stderr, "analysis: %s\n", rp_status_name(s));
    return 2;
  }
  printf("\n");
  rp_analysis_write_text(an, stdout);
  FILE *fp;
  if (dot && (fp = fopen(dot, "w"))) {
    rp_analysis_write_dot(an, fp);
    fclose(fp);
  }
  if (json && (fp = fopen(json, "w"))) { /* for `reprise analyze` */
    rp_graph_write_json(g, fp);
    fclose(fp);
  }

  /* the achieved timeline of one replay beside the prediction (a
   * chrome://tracing file) and the largest departures */
  uint32_t nn = rp_graph_num_nodes(g);
  double *t_s = (double *)calloc(nn + 1, sizeof(double));
  double *t_e = (double *)calloc(nn + 1, sizeof(double));
  if (trace && t_s && t_e && rp_exec_timeline(x, t_s, t_e) == RP_OK &&
      (fp = fopen(trace, "w"))) {
    rp_analysis_write_trace_achieved(an, t_s, t_e, fp);
    fclose(fp);
    rp_analysis_write_departures(an, t_s, t_e, 5, stdout);
  }
  free(t_s);
  free(t_e);

  /* 6. achieved against predicted: serial and overlapped replays timed
   * in alternating pairs (10 replays each) */
  enum { PAIRS = 7, ITERS = 10 };
  double ts[PAIRS], tp[PAIRS], tc[PAIRS];
  for (int k = 0; k < PAIRS; k++) {
    if (rp_exec_run(xs, ITERS) || rp_exec_run(x, ITERS))
      return 2;
    ts[k] = rp_exec_last_us(xs);
    tp[k] = rp_exec_last_us(x);
    double c0 = rp_clock_us();
    for (int i = 0; i < ITERS; i++)
      CK(cudaGraphLaunch(ge, p.st[0]));
    CK(cudaStreamSynchronize(p.st[0]));
    tc[k] = rp_clock_us() - c0;
  }
  rp_achieved ach;
  if (rp_achieved_compute(an, ts, tp, PAIRS, &ach) == RP_OK)
    rp_analysis_write_achieved(an, &ach, stdout);
  double mp = median(tp, PAIRS), mc = median(tc, PAIRS);
  printf("replay of the import %.3f ms, the CUDA graph %.3f ms per %d "
         "launches: %.3fx\n",
         mp / 1e3, mc / 1e3, ITERS, mp / mc);
  clear_outputs(&p);
  if (rp_exec_run(x, 1) != RP_OK)
    return 2;
  ret |= differs(&p, zref, sref, "after the timed replays");

  rp_analysis_destroy(an);
  rp_exec_destroy(x);
  rp_exec_destroy(xs);
  rp_cuda_import_free(im);
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(cg));
  free(zref);
  cudaFreeHost(p.hx);
  cudaFreeHost(p.hy);
  cudaFreeHost(p.hz);
  cudaFreeHost(p.hsum);
  cudaFree(p.dx);
  cudaFree(p.dy);
  cudaFree(p.dsum);
  cudaStreamDestroy(p.st[0]);
  cudaStreamDestroy(p.st[1]);
  cudaEventDestroy(p.fork);
  cudaEventDestroy(p.join);
  return ret;
}
