/* A fake CUDA runtime for the cuda backend's logic tests without a GPU
 * (tests/backends/cuda_logic.c): the runtime calls the backend makes,
 * implemented on the host. Device memory is host memory; a graph's nodes
 * are kept with their parameters, an executable graph copies them, and a
 * launch runs its nodes on the host in a random order their edges allow
 * (kernels through CPU bodies registered per entry, memcpy nodes with
 * memmove, host nodes by calling them); streams run what they are given
 * at once. Counters say which calls the backend made. */
#ifndef RP_TEST_FAKE_CUDART_H
#define RP_TEST_FAKE_CUDART_H

#include <stddef.h>
#include <cuda_runtime_api.h>
#include "reprise.h"

/* Calls made since fk_reset() (or since the start). */
typedef struct fk_counts {
  unsigned add_kernel, add_copy, add_empty, add_host, add_event;
  unsigned add_copy3d;      /* of add_copy, 3-d ones (cudaGraphAddMemcpyNode) */
  unsigned exec_kernel_set; /* cudaGraphExecKernelNodeSetParams */
  unsigned tmpl_kernel_set; /* cudaGraphKernelNodeSetParams */
  unsigned exec_copy_set;   /* cudaGraphExecMemcpyNodeSetParams(1D) */
  unsigned tmpl_copy_set;   /* cudaGraphMemcpyNodeSetParams(1D) */
  unsigned exec_update, instantiate, graph_launch;
  unsigned memcpy_async; /* cudaMemcpyAsync */
  size_t memcpy_async_bytes;
  unsigned memcpy_sync; /* cudaMemcpy */
  unsigned dev_malloc;  /* cudaMalloc */
  size_t dev_malloc_bytes;
  unsigned launch_kernel; /* cudaLaunchKernel (streams modes) */
  unsigned bad_shape;     /* kernels whose grid x block misses points */
} fk_counts;

extern fk_counts fk;

enum { FK_MAX_PARAMS = 8 };
/* A kernel of plain parameters (CUDA C's own, not an rp_kargs): body runs
 * it over args[i], parameter i of sizes[i] bytes. */
typedef void (*fk_raw_fn)(void **args, dim3 grid, dim3 block);
void fk_kernel_raw(const void *fn, const char *name, fk_raw_fn body,
                   unsigned nparam, const size_t *sizes);
/* Whether cudaGraphAddChildGraphNode works (0 at the start: the backend
 * never sees child graphs here). The node keeps the child, not a clone. */
void fk_child_ok(int ok);
/* A node of any type (a conditional one, say) that does nothing. */
cudaError_t fk_add_node(cudaGraphNode_t *out, cudaGraph_t graph,
                        const cudaGraphNode_t *deps, size_t nd,
                        enum cudaGraphNodeType type);

/* Zeroes the counters. */
void fk_reset(void);
/* The kernel entry fn runs as cpu over its argument block: by value (its
 * one parameter an rp_kargs) or by pointer (its one parameter a const
 * rp_kargs * in device memory). */
void fk_kernel(const void *fn, rp_cpu_fn cpu, int by_pointer);
/* The kernel entry fn runs as cpu over an argument block packed to np
 * parameters (rp_cuda_args.cuda_packed): n, np slots, np regions,
 * origin, whole, by value. */
void fk_kernel_packed(const void *fn, rp_cpu_fn cpu, unsigned np);
/* *k: base with pair's entries (its .cuda and .cuda_args), each
 * registered to run base's CPU body: by value, by pointer, packed. */
void fk_kernel_pair(rp_kernel *k, const rp_kernel *base,
                    const rp_cuda_args *pair);
/* cudaMalloc of @p bytes or more fails (0: never). */
void fk_fail_malloc_from(size_t bytes);
/* How many GPUs cudaGetDeviceCount reports (1 at the start). */
void fk_devices(int n);
/* Live objects: allocations, registrations, streams, events, graphs and
 * executable graphs not yet freed (0 once everything is released). */
long fk_live(void);
/* In the executable graph instantiated last (and still alive): the kernel
 * nodes whose entry is fn. */
unsigned fk_exec_kernels(const void *fn);
/* In the same: the parameter bytes the kernel nodes of entry fn hold, all
 * together (what CUDA copied from kernelParams: the entry's declared
 * size), and their number in *nodes (may be NULL). */
size_t fk_exec_param_bytes(const void *fn, unsigned *nodes);
/* In the same: memcpy nodes moving bytes, their bytes in *bytes (may be
 * NULL), and empty nodes in *empty (may be NULL). */
unsigned fk_exec_copies(size_t *bytes, unsigned *empty);

#endif
