/* The seed examples on the GPU: reprise's replay against the same kernels
 * launched by hand through the CUDA runtime, in one process, same sizes as
 * the examples. Hand-written versions of each workload, written here by
 * hand from the algorithm (not derived from the recorded graph):
 *   blocking  copies and kernels in program order on one stream, waiting
 *             after each operation (what the async thesis compares with);
 *   stream    the same on one stream, one wait at the end of a replay;
 *   streams   each phase's operations spread over 4 streams, an event join
 *             between phases;
 *   graph     the stream version captured once into a CUDA graph.
 * reprise: the example's recorded graph, cuda backend, graph mode.
 * Every version's results are compared byte for byte with reprise's.
 * Prints per example the median time per replay (of 7 runs of R replays)
 * and reprise / best hand-written. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>
#include <algorithm>
#include <functional>
#include <initializer_list>
#include "examples.h"
#include "reprise/backend.h"

#define CK(e)                                                               \
  do {                                                                      \
    cudaError_t err_ = (e);                                                 \
    if (err_ != cudaSuccess) {                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #e,            \
              cudaGetErrorString(err_));                                    \
      exit(2);                                                              \
    }                                                                       \
  } while (0)
#define RK(e)                                                               \
  do {                                                                      \
    rp_status s_ = (e);                                                     \
    if (s_ != RP_OK) {                                                      \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #e,        \
              rp_strerror(s_), rp_last_error());                            \
      exit(2);                                                              \
    }                                                                       \
  } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

/* One operation of a hand-written program. */
struct item {
  int kind;              /* 0 kernel, 1 h2d, 2 d2h */
  int phase;             /* operations of one phase are independent */
  const rp_kernel *k;
  rp_kargs a;
  void *dst;
  const void *src;
  size_t bytes;
};

struct hand {
  std::vector<item> it;
  cudaStream_t s[4];
  cudaEvent_t ev[4];
  cudaGraphExec_t exec = nullptr;
};

static dim3 grid_of(const rp_kargs &a, dim3 b) {
  return dim3((unsigned)((a.n[0] + b.x - 1) / b.x),
              (unsigned)((a.n[1] + b.y - 1) / b.y),
              (unsigned)((a.n[2] + b.z - 1) / b.z));
}

/* The block shape reprise's cuda backend picks, so both run the same
 * launches. */
static dim3 block_of(const rp_kargs &a) {
  if (a.n[2] > 1)
    return dim3(32, 4, 4);
  if (a.n[1] > 1)
    return dim3(32, 8, 1);
  return dim3(256, 1, 1);
}

static void issue(const item &x, cudaStream_t s) {
  if (x.kind == 0) {
    rp_kargs a = x.a;
    void *args[] = {&a};
    dim3 b = block_of(a);
    CK(cudaLaunchKernel(x.k->cuda, grid_of(a, b), b, args, 0, s));
  } else {
    CK(cudaMemcpyAsync(x.dst, x.src, x.bytes,
                       x.kind == 1 ? cudaMemcpyHostToDevice
                                   : cudaMemcpyDeviceToHost, s));
  }
}

static void run_stream(hand &h, int blocking) {
  for (const item &x : h.it) {
    issue(x, h.s[0]);
    if (blocking)
      CK(cudaStreamSynchronize(h.s[0]));
  }
}

/* Phases over 4 streams, an event join between phases. */
static void run_streams(hand &h) {
  int cur = -1, rr = 0;
  for (const item &x : h.it) {
    if (x.phase != cur) {
      if (cur >= 0) {
        for (int i = 0; i < 4; i++)
          CK(cudaEventRecord(h.ev[i], h.s[i]));
        for (int i = 0; i < 4; i++)
          for (int j = 0; j < 4; j++)
            if (i != j)
              CK(cudaStreamWaitEvent(h.s[i], h.ev[j], 0));
      }
      cur = x.phase;
      rr = 0;
    }
    issue(x, h.s[rr++ % 4]);
  }
  for (int i = 1; i < 4; i++) {
    CK(cudaEventRecord(h.ev[i], h.s[i]));
    CK(cudaStreamWaitEvent(h.s[0], h.ev[i], 0));
  }
}

static void hand_init(hand &h) {
  for (int i = 0; i < 4; i++) {
    CK(cudaStreamCreateWithFlags(&h.s[i], cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&h.ev[i], cudaEventDisableTiming));
  }
}

static void hand_free(hand &h) {
  if (h.exec)
    cudaGraphExecDestroy(h.exec);
  for (int i = 0; i < 4; i++) {
    cudaStreamDestroy(h.s[i]);
    cudaEventDestroy(h.ev[i]);
  }
}

/* One version, R replays: microseconds per replay. */
static double time_version(hand &h, int v, unsigned R) {
  if (v == 3 && !h.exec) {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(h.s[0], cudaStreamCaptureModeGlobal));
    run_stream(h, 0);
    CK(cudaStreamEndCapture(h.s[0], &g));
    CK(cudaGraphInstantiate(&h.exec, g, 0));
    CK(cudaGraphDestroy(g));
  }
  CK(cudaDeviceSynchronize());
  double t0 = now_us();
  for (unsigned r = 0; r < R; r++) {
    if (v == 0)
      run_stream(h, 1);
    else if (v == 1)
      run_stream(h, 0);
    else if (v == 2)
      run_streams(h);
    else
      CK(cudaGraphLaunch(h.exec, h.s[0]));
    if (v != 0)
      CK(cudaStreamSynchronize(h.s[0]));
  }
  return (now_us() - t0) / R;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/* The kernel descriptor named kname in a recorded graph. */
static const rp_kernel *kernel_named(const rp_graph *g, const char *kname) {
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    if (ni.kernel && !strcmp(ni.kernel->name, kname))
      return ni.kernel;
  }
  fprintf(stderr, "no kernel %s in the graph\n", kname);
  exit(2);
}

static item kern(const rp_kernel *k, int phase, uint64_t nx, uint64_t ny,
                 std::initializer_list<rp_slot> a) {
  item x;
  memset(&x, 0, sizeof x);
  x.kind = 0;
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
  item x;
  memset(&x, 0, sizeof x);
  x.kind = kind;
  x.phase = phase;
  x.dst = dst;
  x.src = src;
  x.bytes = bytes;
  return x;
}

static rp_slot P(void *p) { rp_slot s; s.p = p; return s; }
static rp_slot I(int64_t v) { rp_slot s; s.i64 = v; return s; }
static rp_slot F(double v) { rp_slot s; s.f64 = v; return s; }

/* A workload: its graph (for reprise), its hand-written program, the host
 * arrays to compare. */
struct work {
  const char *name;
  rp_graph *g = nullptr;
  hand h;
  std::vector<std::pair<void *, size_t>> out; /* host results */
  std::vector<void *> dev;
  std::function<void()> init;
};

static void *dalloc(work &w, size_t bytes) {
  void *p;
  CK(cudaMalloc(&p, bytes));
  w.dev.push_back(p);
  return p;
}

static void *halloc(size_t bytes) {
  void *p;
  CK(cudaMallocHost(&p, bytes));
  return p;
}

static void jacobi(work &w) {
  static ex_jacobi2d p = {1024, 8, 0, 8, 0, 0};
  uint64_t n = p.n, nn = n * n, nb = p.blocks;
  double *a = (double *)halloc(nn * 8), *b = (double *)halloc(nn * 8);
  double *s = (double *)halloc(8);
  w.name = "jacobi2d 1024^2, 8 steps x 8 blocks";
  w.init = [=]() { ex_jacobi2d_init(&p, a, b, s); };
  w.init();
  RK(rp_graph_create(&w.g, 0));
  RK(ex_jacobi2d_record(w.g, &p, a, b, s));
  RK(rp_graph_end(w.g));
  const rp_kernel *kc = kernel_named(w.g, "jac_copy");
  const rp_kernel *ks = kernel_named(w.g, "jac_sten");
  double *da = (double *)dalloc(w, nn * 8), *db = (double *)dalloc(w, nn * 8);
  int ph = 0;
  w.h.it.push_back(copy(1, ph++, da, a, nn * 8));
  for (unsigned st = 0; st < p.steps; st++) {
    for (uint64_t i = 0; i < nb; i++) {
      uint64_t r0 = n * i / nb, r1 = n * (i + 1) / nb;
      w.h.it.push_back(kern(kc, ph, n, r1 - r0,
                            {P(da), P(db), I((int64_t)n), I((int64_t)r0)}));
    }
    ph++;
    for (uint64_t i = 0; i < nb; i++) {
      uint64_t r0 = 1 + (n - 2) * i / nb, r1 = 1 + (n - 2) * (i + 1) / nb;
      w.h.it.push_back(kern(ks, ph, n - 2, r1 - r0,
                            {P(db), P(da), I((int64_t)n), I((int64_t)r0)}));
    }
    ph++;
  }
  w.h.it.push_back(copy(2, ph, a, da, nn * 8));
  w.h.it.push_back(copy(2, ph, b, db, nn * 8));
  w.out = {{a, nn * 8}, {b, nn * 8}};
}

static void matpow(work &w) {
  static ex_matpow p = {256, 6, 8, 0};
  uint64_t n = p.n, nn = n * n, nb = p.blocks;
  double *m = (double *)halloc(nn * 8), *x = (double *)halloc(nn * 8),
         *y = (double *)halloc(nn * 8);
  w.name = "matpow 256^2, 6 products x 8 blocks";
  w.init = [=]() { ex_matpow_init(&p, m, x, y); };
  w.init();
  RK(rp_graph_create(&w.g, 0));
  RK(ex_matpow_record(w.g, &p, m, x, y));
  RK(rp_graph_end(w.g));
  const rp_kernel *k = &ex_matmul_rows_k;
  double *dm = (double *)dalloc(w, nn * 8), *dx = (double *)dalloc(w, nn * 8),
         *dy = (double *)dalloc(w, nn * 8);
  int ph = 0;
  w.h.it.push_back(copy(1, ph, dx, x, nn * 8));
  w.h.it.push_back(copy(1, ph++, dm, m, nn * 8));
  for (unsigned st = 0; st < p.steps; st++) {
    double *src = st % 2 ? dy : dx, *dst = st % 2 ? dx : dy;
    for (uint64_t i = 0; i < nb; i++) {
      uint64_t r0 = n * i / nb, r1 = n * (i + 1) / nb;
      w.h.it.push_back(kern(k, ph, n, r1 - r0,
                            {P(src), P(dm), P(dst), I((int64_t)n),
                             I((int64_t)r0)}));
    }
    ph++;
  }
  w.h.it.push_back(copy(2, ph, x, dx, nn * 8));
  w.h.it.push_back(copy(2, ph, y, dy, nn * 8));
  w.out = {{x, nn * 8}, {y, nn * 8}};
}

static void recurrence(work &w) {
  static ex_recurrence p = {512, 512, 20, 4, 16, 3.7, 0.001, 0};
  uint64_t nn = p.rows * p.cols, nb = p.blocks;
  double *u = (double *)halloc(nn * 8);
  w.name = "recurrence 512^2, 4 rounds x 16 blocks";
  w.init = [=]() { ex_recurrence_init(&p, u); };
  w.init();
  RK(rp_graph_create(&w.g, 0));
  RK(ex_recurrence_record(w.g, &p, u, NULL));
  RK(rp_graph_end(w.g));
  const rp_kernel *k = nullptr;
  for (rp_node n = 0; n < rp_graph_num_nodes(w.g) && !k; n++) {
    rp_node_info ni;
    rp_node_info_get(w.g, n, &ni);
    k = ni.kernel;
  }
  double *du = (double *)dalloc(w, nn * 8);
  int ph = 0;
  w.h.it.push_back(copy(1, ph++, du, u, nn * 8));
  for (unsigned r = 0; r < p.rounds; r++) {
    for (uint64_t i = 0; i < nb; i++) {
      uint64_t r0 = p.rows * i / nb, r1 = p.rows * (i + 1) / nb;
      w.h.it.push_back(kern(k, ph, p.cols, r1 - r0,
                            {P(du), I((int64_t)p.inner), F(p.r), F(p.c),
                             I((int64_t)p.cols), I((int64_t)r0)}));
    }
    ph++;
  }
  w.h.it.push_back(copy(2, ph, u, du, nn * 8));
  w.out = {{u, nn * 8}};
}

static void blackscholes(work &w) {
  static ex_blackscholes p = {1000000, 16, 0.02, 0.30, 0};
  uint64_t n = p.n, nb = p.blocks;
  double *s = (double *)halloc(n * 8), *k = (double *)halloc(n * 8),
         *t = (double *)halloc(n * 8), *c = (double *)halloc(n * 8),
         *q = (double *)halloc(n * 8);
  w.name = "blackscholes 1M options, 16 blocks";
  w.init = [=]() { ex_blackscholes_init(&p, s, k, t); };
  w.init();
  RK(rp_graph_create(&w.g, 0));
  RK(ex_blackscholes_record(w.g, &p, s, k, t, c, q));
  RK(rp_graph_end(w.g));
  const rp_kernel *kb = nullptr;
  for (rp_node i = 0; i < rp_graph_num_nodes(w.g) && !kb; i++) {
    rp_node_info ni;
    rp_node_info_get(w.g, i, &ni);
    kb = ni.kernel;
  }
  double *ds = (double *)dalloc(w, n * 8), *dk = (double *)dalloc(w, n * 8),
         *dt = (double *)dalloc(w, n * 8), *dc = (double *)dalloc(w, n * 8),
         *dq = (double *)dalloc(w, n * 8);
  /* Per block: its three inputs in, the kernel, its two outputs back: the
   * graph's copies follow the blocks' regions the same way. */
  for (uint64_t i = 0; i < nb; i++) {
    uint64_t o0 = n * i / nb, o1 = n * (i + 1) / nb, l = (o1 - o0) * 8;
    w.h.it.push_back(copy(1, 0, ds + o0, s + o0, l));
    w.h.it.push_back(copy(1, 0, dk + o0, k + o0, l));
    w.h.it.push_back(copy(1, 0, dt + o0, t + o0, l));
  }
  for (uint64_t i = 0; i < nb; i++) {
    uint64_t o0 = n * i / nb, o1 = n * (i + 1) / nb;
    w.h.it.push_back(kern(kb, 1, o1 - o0, 1,
                          {P(ds), P(dk), P(dt), P(dc), P(dq), F(p.r),
                           F(p.v), I((int64_t)o0)}));
  }
  for (uint64_t i = 0; i < nb; i++) {
    uint64_t o0 = n * i / nb, o1 = n * (i + 1) / nb, l = (o1 - o0) * 8;
    w.h.it.push_back(copy(2, 2, c + o0, dc + o0, l));
    w.h.it.push_back(copy(2, 2, q + o0, dq + o0, l));
  }
  w.out = {{c, n * 8}, {q, n * 8}};
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
  const rp_backend *be;
  RK(rp_backend_find("cuda", &be));
  void (*mk[])(work &) = {jacobi, matpow, recurrence, blackscholes};
  const char *vname[] = {"blocking", "stream", "streams", "graph"};
  printf("%-40s %10s %10s %10s %10s %10s %8s %8s\n", "example (us/replay)",
         "blocking", "stream", "streams", "graph", "reprise", "rp/best",
         "blk/rp");
  for (auto f : mk) {
    work w;
    hand_init(w.h);
    f(w);
    /* reprise: results of R replays are the reference for the others. */
    rp_exec *x;
    RK(rp_exec_create(&x, w.g, be, NULL));
    std::vector<std::vector<unsigned char>> want;
    w.init();
    RK(rp_exec_run(x, R));
    for (auto &o : w.out)
      want.emplace_back((unsigned char *)o.first,
                        (unsigned char *)o.first + o.second);
    double t[5] = {0, 0, 0, 0, 0};
    for (int v = rp_only ? 4 : 0; v < 5; v++) {
      std::vector<double> runs;
      for (int rep = 0; rep < 7; rep++) {
        w.init();
        if (v < 4) {
          runs.push_back(time_version(w.h, v, R));
        } else {
          double t0 = now_us();
          RK(rp_exec_run(x, R));
          runs.push_back((now_us() - t0) / R);
        }
      }
      t[v] = median(runs);
      for (size_t i = 0; i < w.out.size(); i++)
        if (memcmp(w.out[i].first, want[i].data(), w.out[i].second)) {
          printf("%s: %s results differ from reprise's\n", w.name,
                 v < 4 ? vname[v] : "reprise");
          return 1;
        }
    }
    if (rp_only) {
      printf("%-40s reprise %10.1f us/replay; blocks:", w.name, t[4]);
      std::vector<const rp_kernel *> seen;
      for (rp_node n = 0; n < rp_graph_num_nodes(w.g); n++) {
        rp_node_info ni;
        rp_kernel_block kb;
        if (rp_node_info_get(w.g, n, &ni) != RP_OK || !ni.kernel ||
            std::find(seen.begin(), seen.end(), ni.kernel) != seen.end() ||
            rp_exec_kernel_block(x, n, &kb) != RP_OK)
          continue;
        seen.push_back(ni.kernel);
        printf(" %s %ux%ux%u (%.0f%%, %s)", ni.kernel->name, kb.block[0],
               kb.block[1], kb.block[2], kb.occupancy * 100, kb.reason);
      }
      printf("\n");
      rp_exec_destroy(x);
      rp_graph_destroy(w.g);
      for (void *p : w.dev)
        cudaFree(p);
      hand_free(w.h);
      continue;
    }
    double best = std::min(std::min(t[1], t[2]), t[3]);
    printf("%-40s %10.1f %10.1f %10.1f %10.1f %10.1f %8.3f %8.2f\n", w.name,
           t[0], t[1], t[2], t[3], t[4], t[4] / best, t[0] / t[4]);
    rp_exec_destroy(x);
    rp_graph_destroy(w.g);
    for (void *p : w.dev)
      cudaFree(p);
    hand_free(w.h);
  }
  printf("results: every version byte-identical to reprise's\n");
  return 0;
}
