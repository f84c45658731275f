/* CUDA backend: rp_exec_run_until() on the device. The replay's nodes go
 * into the body of one conditional WHILE node, followed by a kernel that
 * counts the replay and tests the predicate (rp_cuda_cond.cu): one graph
 * launch runs every replay, with no host round trip between them. Needs
 * CUDA 12.4+ in the toolkit and the driver; a graph with nodes that a
 * conditional body cannot hold (host tasks, CPU-kind kernels, copies run
 * by the host) or on several GPUs is refused: the core then checks on the
 * host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rp_cuda.h"
#include "rp_cuda_cond.h"

void rp__cu_until_free(cu_state *s) {
  if (s->lexec)
    cudaGraphExecDestroy(s->lexec);
  if (s->lgraph)
    cudaGraphDestroy(s->lgraph);
  if (s->ldev)
    cudaFree(s->ldev);
  s->lexec = NULL;
  s->lgraph = NULL;
  s->ldev = NULL;
}

static rp_status refuse(cu_state *s, const char *why) {
  rp_exec_set_error(s->x, "cuda: run_until checks on the host: %s", why);
  return RP_ENOTSUP;
}

/* What keeps this exec's replay out of a conditional body, or NULL. */
static const char *unfit(const cu_state *s) {
  int drv = 0;
  if (!rp__cu_until_kernel())
    return "the CUDA toolkit it was built with has no conditional nodes "
           "(12.4+)";
  if (cudaDriverGetVersion(&drv) != cudaSuccess || drv < 12040)
    return "the driver has no conditional nodes (needs CUDA 12.4+)";
  if (s->mode != CU_GRAPH)
    return "not in graph mode";
  if (s->multi)
    return "the graph runs on several GPUs";
  for (uint32_t v = 0; v < s->nn; v++) {
    cu_kind k = s->op[v].kind;
    if (k == CU_CPU || k == CU_HOSTTASK || k == CU_HOSTCOPY)
      return "the replay has host nodes (host tasks, CPU-kind kernels or "
             "host-side copies), which a conditional body cannot hold";
  }
  return NULL;
}

/* The loop graph: WHILE(handle) { replay; test }. The op's node handles
 * are the main graph's again afterwards. */
static cudaError_t build_loop(cu_state *s) {
  cudaError_t e;
  cudaGraphNode_t *saved = malloc(sizeof *saved * 2 * (s->nn + 1));
  uint32_t maxd = 1;
  for (uint32_t v = 0; v < s->nn; v++)
    if (s->p->node[v].npred > maxd)
      maxd = s->p->node[v].npred;
  if (maxd < s->nn)
    maxd = s->nn;
  cudaGraphNode_t *deps = malloc(sizeof *deps * maxd);
  if (!saved || !deps) {
    free(saved);
    free(deps);
    return cudaErrorMemoryAllocation;
  }
  for (uint32_t v = 0; v < s->nn; v++)
    memcpy(&saved[2 * v], s->op[v].node, sizeof s->op[v].node);
  if (!s->ldev && (e = cudaMalloc((void **)&s->ldev, sizeof *s->ldev)))
    goto out;
  if ((e = cudaGraphCreate(&s->lgraph, 0)))
    goto out;
  cudaGraphConditionalHandle h;
  if ((e = cudaGraphConditionalHandleCreate(&h, s->lgraph, 1,
                                            cudaGraphCondAssignDefault)))
    goto out;
  struct cudaGraphNodeParams np;
  memset(&np, 0, sizeof np);
  np.type = cudaGraphNodeTypeConditional;
  np.conditional.handle = h;
  np.conditional.type = cudaGraphCondTypeWhile;
  np.conditional.size = 1;
  cudaGraphNode_t cn;
#if CUDART_VERSION >= 13000
  e = cudaGraphAddNode(&cn, s->lgraph, NULL, NULL, 0, &np);
#else
  e = cudaGraphAddNode(&cn, s->lgraph, NULL, 0, &np);
#endif
  if (e)
    goto out;
  cudaGraph_t body = np.conditional.phGraph_out[0];
  for (uint32_t v = 0; v < s->nn; v++)
    if (rp__cu_add_node(s, body, v, deps) != RP_OK) {
      e = cudaErrorNotSupported;
      goto out;
    }
  uint32_t nd = 0;
  for (uint32_t v = 0; v < s->nn; v++)
    if (s->p->node[v].nsucc == 0)
      deps[nd++] = s->op[v].node[s->op[v].cp.npc == 2];
  void *args[2] = {&h, &s->ldev};
  struct cudaKernelNodeParams kp = {(void *)rp__cu_until_kernel(),
                                    {1, 1, 1}, {1, 1, 1}, 0, args, NULL};
  cudaGraphNode_t kn;
  if ((e = cudaGraphAddKernelNode(&kn, body, deps, nd, &kp)))
    goto out;
  e = cudaGraphInstantiate(&s->lexec, s->lgraph, 0);
  if (e)
    s->lexec = NULL;
out:
  for (uint32_t v = 0; v < s->nn; v++)
    memcpy(s->op[v].node, &saved[2 * v], sizeof s->op[v].node);
  free(saved);
  free(deps);
  return e;
}

rp_status rp__cu_run_until(void *state, const rp_until *u,
                           unsigned max_replays, unsigned check_every,
                           unsigned *done) {
  cu_state *s = state;
  *done = 0;
  const char *why = unfit(s);
  if (why)
    return refuse(s, why);
  void *host = (char *)rp_exec_host(s->x)[u->buf] + u->offset, *val;
  cudaSetDevice(s->phys0);
  if (cudaHostGetDevicePointer(&val, host, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return refuse(s, "the predicate's host array is not mapped pinned "
                     "memory");
  }
  rp_status st = rp__cu_flush(s);
  if (st != RP_OK)
    return st;
  if (s->lexec && s->lgen != s->gen)
    rp__cu_until_free(s);
  if (!s->lexec) {
    cudaError_t e = build_loop(s);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      rp__cu_until_free(s);
      char m[160];
      snprintf(m, sizeof m, "building the conditional loop failed (%s)",
               cudaGetErrorString(e));
      return refuse(s, m);
    }
    s->lgen = s->gen;
  }
  rp_cu_until_dev d = {val, (int)u->type, (int)u->cmp, u->threshold,
                       max_replays, 0, check_every ? check_every : 1};
  cudaError_t e = cudaMemcpyAsync(s->ldev, &d, sizeof d,
                                  cudaMemcpyHostToDevice, s->main);
  if (e == cudaSuccess)
    e = cudaGraphLaunch(s->lexec, s->main);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(&d, s->ldev, sizeof d, cudaMemcpyDeviceToHost,
                        s->main);
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(s->main);
  if (e != cudaSuccess)
    return rp__cu_fail(s, e, RP_NONE, "running the conditional loop");
  *done = d.count;
  return RP_OK;
}
