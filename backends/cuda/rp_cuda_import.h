/* Importing a CUDA graph the user already has (a cudaGraph_t from stream
 * capture or built by hand) as a reprise graph: its analysis, dot output,
 * lanes, bound and predicted speedup, and its replay on the cuda backend
 * (docs/cuda_import.md). Part of the cuda backend (libreprise-cuda); this
 * header needs the CUDA runtime's, the core library does not. */
#ifndef RP_CUDA_IMPORT_H
#define RP_CUDA_IMPORT_H

#include <stddef.h>
#include <cuda_runtime_api.h>
#include "reprise.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An imported CUDA graph: the reprise graph and what its operations
 * relaunch (copied kernel parameter blocks, copy and memset parameters). */
typedef struct rp_cuda_import rp_cuda_import;

/** What an imported operation was in the CUDA graph. */
typedef enum {
  RP_CUDA_IMPORT_KERNEL = 0,
  RP_CUDA_IMPORT_MEMCPY = 1,
  RP_CUDA_IMPORT_MEMSET = 2,
  RP_CUDA_IMPORT_HOST = 3
} rp_cuda_import_kind;

/** @brief Import CUDA graph @p cg as an ended reprise graph.
 * Kernel, memcpy, memset and host nodes become operations (on device 0,
 * RP_GRAPH_NO_COHERENCE, no buffers: each names what it depends on, the
 * graph's edges as explicit dependencies); empty, event record and event
 * wait nodes become edges only (their predecessors before their
 * successors); a child graph node is imported in place, its roots after
 * the node's predecessors and the node's successors after its leaves.
 * Kernels are relaunched by their function with a copy of their parameter
 * block (cudaFuncGetParamInfo), copies and memsets with their parameters,
 * host nodes by calling their function: replaying the graph on cuda does
 * what launching @p cg does, on the same memory. Operations are named
 * after the kernel (cudaFuncGetName) or "memcpy HtoD 4096 B", "memset
 * 4096 B", "host".
 * @param profile_runs > 0: every operation's cost measured on the GPU
 *   (rp_exec_profile_opts with that many runs, each operation alone; this
 *   runs the graph's work on its memory) and attached as its measured cost
 *   (rp_graph_set_measured_all), which the analysis uses; 0: none.
 * @param err receives a message on failure (may be NULL).
 * @return RP_OK; RP_ENOTSUP for a node that cannot be imported
 *   (conditional, memory alloc/free, external semaphore and any later
 *   kind; a kernel passing its parameters through `extra`; a memset whose
 *   value is not one byte repeated), naming it; RP_EINVAL, RP_ENOMEM, or
 *   RP_EBACKEND for a CUDA call that failed. */
RP_API rp_status rp_cuda_graph_import(cudaGraph_t cg, unsigned profile_runs,
                                      rp_cuda_import **out, char *err,
                                      size_t errlen);

/** @brief The imported reprise graph (owned by @p im). */
RP_API rp_graph *rp_cuda_import_graph(const rp_cuda_import *im);

/** @brief What operation @p n of the imported graph was, and for a kernel
 * its function (may be NULL). @return RP_OK or RP_EINVAL. */
RP_API rp_status rp_cuda_import_node(const rp_cuda_import *im, rp_node n,
                                     rp_cuda_import_kind *kind,
                                     const void **fn);

/** @brief The CUDA node operation @p n came from (a node of the imported
 * graph or of one of its child graphs; valid while they live), NULL when
 * out of range. */
RP_API cudaGraphNode_t rp_cuda_import_source(const rp_cuda_import *im,
                                             rp_node n);

/** @brief Free @p im and its graph (after every exec of the graph). */
RP_API void rp_cuda_import_free(rp_cuda_import *im);

#ifdef __cplusplus
}
#endif

#endif
