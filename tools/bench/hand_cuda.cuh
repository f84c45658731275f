/* Hand-written CUDA programs for bench_cuda_examples: a workload written by
 * hand as a list of operations (kernel launches, library calls, copies),
 * each with the phase it belongs to and the earlier operations it depends
 * on (written by hand from the algorithm, never derived from a recorded
 * graph), run six ways through the CUDA runtime:
 *   blocking  in program order on one stream, waiting after each operation
 *             (what the async thesis compares with);
 *   stream    in program order on one stream, one wait at the end;
 *   streams   each phase's operations round robin over 4 streams, every
 *             stream joining every other between phases;
 *   events    over 4 streams, an operation continuing its first
 *             dependency's stream when it is that stream's last one, an
 *             event wait for each dependency on another stream;
 *   graph     the stream version captured once into a CUDA graph;
 *   dag       a CUDA graph built node by node with exactly the hand-written
 *             dependencies as edges (library calls as captured child
 *             graphs).
 * One translation unit includes it. */
#ifndef RP_BENCH_HAND_CUDA_CUH
#define RP_BENCH_HAND_CUDA_CUH

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include "reprise/record.h"
#include "bench_cuda_check.h"

enum {
  HAND_BLOCKING,
  HAND_STREAM,
  HAND_STREAMS,
  HAND_EVENTS,
  HAND_GRAPH,
  HAND_DAG,
  HAND_VERSIONS
};
static const char *const hand_name[HAND_VERSIONS] = {
    "blocking", "stream", "streams", "events", "graph", "dag"};

enum { OP_KERNEL, OP_H2D, OP_D2H };

/* One operation of a hand-written program. */
struct item {
  int kind;             /* OP_* */
  int phase;            /* operations of one phase are independent */
  std::vector<int> dep; /* earlier operations it must follow */
  const rp_kernel *k;   /* OP_KERNEL: its cuda body or its library call */
  rp_kargs a;
  dim3 blk; /* threads per block (the shape reprise chose) */
  void *dst;
  const void *src;
  size_t bytes;
};

struct hand {
  std::vector<item> it;
  cudaStream_t s[4];
  cudaEvent_t ev[4];
  std::vector<int> lane;         /* events: each operation's stream */
  std::vector<char> signal;      /* events: another stream waits on it */
  std::vector<cudaEvent_t> done; /* events: one per signalling op */
  cudaGraphExec_t graph = nullptr, dag = nullptr;
};

static dim3 grid_of(const rp_kargs &a, dim3 b) {
  return dim3((unsigned)((a.n[0] + b.x - 1) / b.x),
              (unsigned)((a.n[1] + b.y - 1) / b.y),
              (unsigned)((a.n[2] + b.z - 1) / b.z));
}

static void issue(const item &x, cudaStream_t s) {
  if (x.kind == OP_KERNEL && x.k->cuda) {
    rp_kargs a = x.a;
    void *args[] = {&a};
    CK(cudaLaunchKernel(x.k->cuda, grid_of(a, x.blk), x.blk, args, 0, s));
  } else if (x.kind == OP_KERNEL) {
    if (x.k->cuda_host(&x.a, s)) {
      fprintf(stderr, "%s: the library call failed\n", x.k->name);
      exit(2);
    }
  } else {
    CK(cudaMemcpyAsync(
        x.dst, x.src, x.bytes,
        x.kind == OP_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s));
  }
}

static void run_stream(hand &h, int blocking) {
  for (const item &x : h.it) {
    issue(x, h.s[0]);
    if (blocking)
      CK(cudaStreamSynchronize(h.s[0]));
  }
}

/* Streams 1..3 join stream 0. */
static void join_streams(hand &h) {
  for (int i = 1; i < 4; i++) {
    CK(cudaEventRecord(h.ev[i], h.s[i]));
    CK(cudaStreamWaitEvent(h.s[0], h.ev[i], 0));
  }
}

/* Phases over 4 streams, every stream joining every other between them. */
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
  join_streams(h);
}

/* Streams for the events version, chosen once: an operation continues the
 * stream of its first dependency when that one is the stream's last
 * operation, else takes the next stream round robin; an event is recorded
 * after an operation only when one on another stream depends on it. */
static void plan_events(hand &h) {
  size_t n = h.it.size();
  int last[4] = {-1, -1, -1, -1}, rr = 0;
  h.lane.assign(n, 0);
  h.signal.assign(n, 0);
  h.done.assign(n, nullptr);
  for (size_t j = 0; j < n; j++) {
    const item &x = h.it[j];
    int l = -1;
    if (!x.dep.empty() && last[h.lane[x.dep[0]]] == x.dep[0])
      l = h.lane[x.dep[0]];
    if (l < 0)
      l = rr++ % 4;
    h.lane[j] = l;
    last[l] = (int)j;
    for (int d : x.dep)
      if (h.lane[d] != l)
        h.signal[d] = 1;
  }
  for (size_t j = 0; j < n; j++)
    if (h.signal[j])
      CK(cudaEventCreateWithFlags(&h.done[j], cudaEventDisableTiming));
}

static void run_events(hand &h) {
  for (size_t j = 0; j < h.it.size(); j++) {
    const item &x = h.it[j];
    cudaStream_t s = h.s[h.lane[j]];
    for (int d : x.dep)
      if (h.lane[d] != h.lane[j])
        CK(cudaStreamWaitEvent(s, h.done[d], 0));
    issue(x, s);
    if (h.signal[j])
      CK(cudaEventRecord(h.done[j], s));
  }
  join_streams(h);
}

/* The dag version: one node per operation, the hand-written dependencies
 * as its edges. */
static void build_dag(hand &h) {
  cudaGraph_t g;
  std::vector<cudaGraphNode_t> node(h.it.size());
  CK(cudaGraphCreate(&g, 0));
  for (size_t j = 0; j < h.it.size(); j++) {
    const item &x = h.it[j];
    std::vector<cudaGraphNode_t> dn;
    for (int d : x.dep)
      dn.push_back(node[d]);
    if (x.kind == OP_KERNEL && x.k->cuda) {
      rp_kargs a = x.a;
      void *args[] = {&a};
      cudaKernelNodeParams kp = {};
      kp.func = (void *)x.k->cuda;
      kp.blockDim = x.blk;
      kp.gridDim = grid_of(a, x.blk);
      kp.kernelParams = args;
      CK(cudaGraphAddKernelNode(&node[j], g, dn.data(), dn.size(), &kp));
    } else if (x.kind == OP_KERNEL) {
      cudaGraph_t child;
      CK(cudaStreamBeginCapture(h.s[1], cudaStreamCaptureModeThreadLocal));
      issue(x, h.s[1]);
      CK(cudaStreamEndCapture(h.s[1], &child));
      CK(cudaGraphAddChildGraphNode(&node[j], g, dn.data(), dn.size(), child));
      CK(cudaGraphDestroy(child));
    } else {
      CK(cudaGraphAddMemcpyNode1D(
          &node[j], g, dn.data(), dn.size(), x.dst, x.src, x.bytes,
          x.kind == OP_H2D ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
    }
  }
  CK(cudaGraphInstantiate(&h.dag, g, 0));
  CK(cudaGraphDestroy(g));
}

static void capture_graph(hand &h) {
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(h.s[0], cudaStreamCaptureModeGlobal));
  run_stream(h, 0);
  CK(cudaStreamEndCapture(h.s[0], &g));
  CK(cudaGraphInstantiate(&h.graph, g, 0));
  CK(cudaGraphDestroy(g));
}

static void hand_init(hand &h) {
  for (int i = 0; i < 4; i++) {
    CK(cudaStreamCreateWithFlags(&h.s[i], cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&h.ev[i], cudaEventDisableTiming));
  }
}

static void hand_free(hand &h) {
  if (h.graph)
    cudaGraphExecDestroy(h.graph);
  if (h.dag)
    cudaGraphExecDestroy(h.dag);
  for (cudaEvent_t e : h.done)
    if (e)
      cudaEventDestroy(e);
  for (int i = 0; i < 4; i++) {
    cudaStreamDestroy(h.s[i]);
    cudaEventDestroy(h.ev[i]);
  }
}

/* One version, R replays: microseconds per replay. */
static double time_version(hand &h, int v, unsigned R) {
  if (v == HAND_GRAPH && !h.graph)
    capture_graph(h);
  if (v == HAND_DAG && !h.dag)
    build_dag(h);
  if (v == HAND_EVENTS && h.lane.empty())
    plan_events(h);
  CK(cudaDeviceSynchronize());
  double t0 = now_us();
  for (unsigned r = 0; r < R; r++) {
    switch (v) {
    case HAND_BLOCKING:
      run_stream(h, 1);
      break;
    case HAND_STREAM:
      run_stream(h, 0);
      break;
    case HAND_STREAMS:
      run_streams(h);
      break;
    case HAND_EVENTS:
      run_events(h);
      break;
    case HAND_GRAPH:
      CK(cudaGraphLaunch(h.graph, h.s[0]));
      break;
    default:
      CK(cudaGraphLaunch(h.dag, h.s[0]));
      break;
    }
    if (v != HAND_BLOCKING)
      CK(cudaStreamSynchronize(h.s[0]));
  }
  return (now_us() - t0) / R;
}

#endif
