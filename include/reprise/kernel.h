/* reprise: generic kernels, one body for the CPU and, under nvcc, CUDA. */
#ifndef REPRISE_KERNEL_H
#define REPRISE_KERNEL_H

#include "reprise/record.h"

/** @defgroup rp_kernel_macros Generic kernels
 * Declare a kernel once:
 * @code
 * RP_KERNEL(saxpy, {
 *   float *y = RP_PTR(float, 1);
 *   const float *x = RP_PTR(const float, 0);
 *   y[RP_X] += RP_VAL(float, 2) * x[RP_X];
 * })
 * static const rp_param saxpy_params[] = {
 *   {"x", RP_IN}, {"y", RP_INOUT}, {"a", RP_SCALAR}};
 * static const rp_kernel saxpy_k = RP_KERNEL_DESC(saxpy, saxpy_params);
 * @endcode
 * The body runs once per point (RP_X, RP_Y, RP_Z) of the index space
 * (RP_NX, RP_NY, RP_NZ). Compiled by a C compiler this gives the CPU body
 * (saxpy_rp_cpu: the box [lo, hi) in a loop); compiled by nvcc it also
 * gives the __global__ wrapper saxpy_rp_cuda, which clips the threads
 * outside the index space, and saxpy_rp_cudai, the same taking its
 * argument block from device memory (rp_kernel.cuda_args: the cuda
 * backend's argument table, which a node takes once its scalars change,
 * so that later rp_exec_set_scalar() calls are one copy of a table
 * instead of one CUDA setter per node), and saxpy_rp_cudap<NP>, taking
 * its block by value packed to the descriptor's NP parameters
 * (rp_cuda_args.cuda_packed, named by RP_KERNEL_DESC: a graph node then
 * holds RP_KARGS_PACKED_BYTES(NP) bytes, not the whole rp_kargs). Under
 * nvcc the body is a template over the block's type: use rp__a only
 * through the RP_ accessors. Replace a slot of the
 * descriptor to give a backend-specific body (replacing .cuda makes the
 * backend pass the block by value: .cuda_args belongs to the entry it
 * names).
 *
 * On CPU cores (openmp) a kernel of 8 192 index points or more is split
 * along its slowest non-trivial axis (z, else y, else x) into chunks that
 * idle threads of its device's group run at once; each chunk calls the CPU
 * body with its own box [lo, hi). Smaller kernels run whole on one thread.
 * A body must therefore not assume it sees the whole index space, nor that
 * points run in any order. A CPU body may report failure with
 * rp_task_fail().
 *
 * A kernel declared splittable (RP_KERNEL_DESC_SPLIT) may also run as
 * chunks of its index space when an exec is created with the split option
 * (docs/split.md): each chunk's launch covers [origin, origin + n) of the
 * whole space (rp_kargs.origin, .n); RP_X, RP_Y, RP_Z stay indices of the
 * whole space, RP_NX, RP_NY, RP_NZ its whole extent, and the region
 * accessors the regions as recorded. A body written with the RP_ macros
 * needs nothing more; a hand-written CPU body or CUDA wrapper of a
 * splittable kernel must add rp_kargs.origin to the points it is given.
 *
 * Thread safety: a descriptor is read-only once made and may be shared
 * by any number of graphs and threads; a body runs on several threads at
 * once (chunks of one kernel, kernels of one replay), so it may write only
 * its own points of its regions.
 * @{ */

#if defined(__CUDACC__)
#define RP_HD __host__ __device__
/* This thread's point of argument block A, clipped to its index space
 * (one test of the three extents, not three branches: read from device
 * memory, their loads then go out together). */
#define RP__KERNEL_POINT(kname, A)                                             \
  uint64_t x = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;                \
  uint64_t y = (uint64_t)blockIdx.y * blockDim.y + threadIdx.y;                \
  uint64_t z = (uint64_t)blockIdx.z * blockDim.z + threadIdx.z;                \
  if ((x < (A).n[0]) & (y < (A).n[1]) & (z < (A).n[2]))                        \
    kname##_rp_body(&(A), (A).origin[0] + x, (A).origin[1] + y,                \
                    (A).origin[2] + z);
#define RP_KERNEL_CUDA(kname)                                                  \
  __global__ void kname##_rp_cuda(rp_kargs a) { RP__KERNEL_POINT(kname, a) }
#define RP_KERNEL_CUDA_FN(kname) ((const void *)kname##_rp_cuda)
/* The same kernel taking its argument block from device memory (the cuda
 * backend's argument table, for nodes whose scalars changed): the body
 * reads the block through a const __restrict__ pointer (read-only loads,
 * which the compiler may keep in registers and hoist out of loops), with
 * no shared memory and no barrier, so that the kernel occupies an SM as
 * the by-value entry does. */
#define RP_KERNEL_CUDA_ARGS(kname)                                             \
  __global__ void kname##_rp_cudai(const rp_kargs *__restrict__ rp__g) {       \
    RP__KERNEL_POINT(kname, *rp__g)                                            \
  }                                                                            \
  static const rp_cuda_args kname##_rp_cuda_pair __attribute__((unused)) = {   \
      (const void *)kname##_rp_cuda, (const void *)kname##_rp_cudai};
#define RP_KERNEL_CUDA_ARGS_OF(kname) (&kname##_rp_cuda_pair)
/* The block packed to NP parameters (rp_cuda_args.cuda_packed): rp_kargs'
 * layout with RP_MAX_PARAMS replaced by NP, so that a kernel of two
 * parameters takes 184 bytes by value, not 856. */
template <unsigned RP__NP>
struct rp__kargs_packed {
  uint64_t n[3];
  rp_slot a[RP__NP];
  rp_pregion r[RP__NP];
  uint64_t origin[3];
  uint64_t whole[3];
};
static_assert(sizeof(rp__kargs_packed<RP_MAX_PARAMS>) == sizeof(rp_kargs),
              "the packed block of RP_MAX_PARAMS is rp_kargs");
static_assert(sizeof(rp__kargs_packed<2>) == RP_KARGS_PACKED_BYTES(2),
              "RP_KARGS_PACKED_BYTES is the packed block's size");
/* The packed entry of NP parameters and the descriptor's rp_cuda_args
 * naming all three entries (instantiated by RP_KERNEL_DESC for its
 * parameter count). */
#define RP_KERNEL_CUDA_PACKED(kname)                                           \
  template <unsigned RP__NP>                                                   \
  __global__ void kname##_rp_cudap(const rp__kargs_packed<RP__NP> rp__p) {     \
    RP__KERNEL_POINT(kname, rp__p)                                             \
  }                                                                            \
  template <unsigned RP__NP>                                                   \
  struct kname##_rp_cuda_packs {                                               \
    static const rp_cuda_args pair;                                            \
  };                                                                           \
  template <unsigned RP__NP>                                                   \
  const rp_cuda_args kname##_rp_cuda_packs<RP__NP>::pair = {                   \
      (const void *)kname##_rp_cuda, (const void *)kname##_rp_cudai,           \
      (const void *)kname##_rp_cudap<RP__NP>, RP__NP};
#define RP_KERNEL_CUDA_ARGS_OF_NP(kname, np)                                   \
  (&kname##_rp_cuda_packs<(np)>::pair)
/* Under nvcc the body takes any block type with rp_kargs' members (the
 * whole block, or a packed one). */
#define RP__KERNEL_BODY_HEAD(kname)                                            \
  template <class RP__A>                                                       \
  static RP_HD inline void kname##_rp_body(const RP__A *rp__a, uint64_t rp__x, \
                                           uint64_t rp__y, uint64_t rp__z)
#else
#define RP_HD
#define RP_KERNEL_CUDA(kname)
#define RP_KERNEL_CUDA_FN(kname) NULL
#define RP_KERNEL_CUDA_ARGS(kname)
#define RP_KERNEL_CUDA_ARGS_OF(kname) NULL
#define RP_KERNEL_CUDA_PACKED(kname)
#define RP_KERNEL_CUDA_ARGS_OF_NP(kname, np) NULL
#define RP__KERNEL_BODY_HEAD(kname)                                            \
  static RP_HD inline void kname##_rp_body(                                    \
      const rp_kargs *rp__a, uint64_t rp__x, uint64_t rp__y, uint64_t rp__z)
#endif

/** Pointer to the buffer of parameter @p i, as type T*. */
#define RP_PTR(T, i) ((T *)rp__a->a[i].p)
/** Start of the region recorded for buffer parameter @p i, as T*: the
 * first byte the region covers (RP_PTR gives the buffer's base). */
#define RP_REGION_PTR(T, i)                                                    \
  ((T *)(void *)((char *)rp__a->a[i].p + rp__a->r[i].offset))
/** Bytes the region of parameter @p i spans (first to last byte). */
#define RP_REGION_SIZE(i) (rp__a->r[i].bytes)
/** A box parameter @p i: its first element in buffer dim @p d (0 the
 * slowest), its extent in dim @p d, and the buffer's row length in
 * elements (the leading dimension): element (r, c) of a 2-d box is
 * RP_REGION_PTR(T, i)[r * RP_BOX_LD(i) + c]. */
#define RP_BOX_LO(i, d) ((uint64_t)rp__a->r[i].lo[d])
#define RP_BOX_N(i, d) ((uint64_t)rp__a->r[i].n[d])
#define RP_BOX_LD(i) (rp__a->r[i].ld)
/** Value of scalar parameter @p i, of type T (8 bytes at most). */
#define RP_VAL(T, i) (*(const T *)(const void *)&rp__a->a[i])
/** The point of the index space. */
#define RP_X rp__x
#define RP_Y rp__y
#define RP_Z rp__z
/** The extent of the index space (the whole space as recorded, also in a
 * chunk of a split kernel, which runs only part of it). */
#define RP_NX (rp__a->whole[0] ? rp__a->whole[0] : rp__a->n[0])
#define RP_NY (rp__a->whole[1] ? rp__a->whole[1] : rp__a->n[1])
#define RP_NZ (rp__a->whole[2] ? rp__a->whole[2] : rp__a->n[2])

/** Define kernel @p kname with the body given as the remaining argument. */
#define RP_KERNEL(kname, ...)                                                  \
  RP__KERNEL_BODY_HEAD(kname) {                                                \
    (void)rp__a;                                                               \
    (void)rp__x;                                                               \
    (void)rp__y;                                                               \
    (void)rp__z;                                                               \
    __VA_ARGS__                                                                \
  }                                                                            \
  static void kname##_rp_cpu(const rp_kargs *a, const uint64_t lo[3],          \
                             const uint64_t hi[3]) {                           \
    for (uint64_t z = lo[2]; z < hi[2]; z++)                                   \
      for (uint64_t y = lo[1]; y < hi[1]; y++)                                 \
        for (uint64_t x = lo[0]; x < hi[0]; x++)                               \
          kname##_rp_body(a, a->origin[0] + x, a->origin[1] + y,               \
                          a->origin[2] + z);                                   \
  }                                                                            \
  RP_KERNEL_CUDA(kname)                                                        \
  RP_KERNEL_CUDA_ARGS(kname)                                                   \
  RP_KERNEL_CUDA_PACKED(kname)

/** A descriptor for kernel @p kname with parameter array @p params
 * (a true array, not a pointer). */
/* Positional inside the header only (it changes with the struct); C++
 * before C++20 has no designated initialisers. */
#define RP_KERNEL_DESC(kname, params)                                          \
  RP__KERNEL_DESC(kname, params, RP_SPLIT_NONE, 0)

/** A descriptor as RP_KERNEL_DESC() for a kernel whose index space may be
 * split along @p axis (RP_SPLIT_X, _Y, _Z) into chunks, the buffer
 * parameters of bit mask @p follow having regions that follow the cut
 * (see rp_kernel.split_axis and docs/split.md). */
#define RP_KERNEL_DESC_SPLIT(kname, params, axis, follow)                      \
  RP__KERNEL_DESC(kname, params, axis, follow)

/** A descriptor as RP_KERNEL_DESC() for a stencil whose index point
 * reads units within @p hx, @p hy, @p hz of the ones it writes along x, y,
 * z (rp_kernel.halo; docs/mpi.md): a 5-point stencil over rows with y the
 * row has RP_KERNEL_DESC_HALO(k, params, 0, 1, 0). */
#define RP_KERNEL_DESC_HALO(kname, params, hx, hy, hz)                         \
  RP__KERNEL_DESC_H(kname, params, RP_SPLIT_NONE, 0, hx, hy, hz)

#define RP__KERNEL_NPARAMS(params)                                             \
  ((unsigned)(sizeof(params) / sizeof((params)[0])))
#define RP__KERNEL_DESC(kname, params, axis, follow)                           \
  RP__KERNEL_DESC_H(kname, params, axis, follow, 0, 0, 0)
#define RP__KERNEL_DESC_H(kname, params, axis, follow, hx, hy, hz)             \
  {                                                                            \
    sizeof(rp_kernel), RP__KERNEL_NAME(kname), RP__KERNEL_NPARAMS(params),     \
        (params), kname##_rp_cpu, RP_KERNEL_CUDA_FN(kname), NULL, {0, 0, 0},   \
        NULL, NULL, 0, (axis), (follow), 0,                                    \
        RP_KERNEL_CUDA_ARGS_OF_NP(kname, RP__KERNEL_NPARAMS(params)), {        \
      (hx), (hy), (hz)                                                         \
    }                                                                          \
  }
#define RP__KERNEL_NAME(kname) #kname

/** @} */
#endif
