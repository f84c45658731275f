/* reprise: recording operations over buffers into a graph. */
#ifndef REPRISE_RECORD_H
#define REPRISE_RECORD_H

#include <stdio.h>
#include "reprise/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup rp_types Handles, enums and descriptors
 * A graph (::rp_graph) is the recording context: it owns its buffers
 * (descriptions only, never the memory behind them), its operations and the
 * edges derived between them. Buffers and operations are named by indices
 * (::rp_buf, ::rp_node) valid while their graph lives; operation indices are
 * program order.
 * @{ */

typedef struct rp_graph rp_graph;
/** Index of a buffer in its graph. */
typedef uint32_t rp_buf;
/** Index of an operation in its graph (its place in program order). */
typedef uint32_t rp_node;

/** No node / no buffer. */
#define RP_NONE UINT32_MAX
/** The memory space of the host; devices are 0, 1, 2, ... */
#define RP_SPACE_HOST (-1)
/** Most devices a graph may name. */
#define RP_MAX_DEVICES 62
/** Most parameters a kernel may take. */
#define RP_MAX_PARAMS 14

/** How an operation uses a buffer region or parameter. */
typedef enum {
  RP_IN = 1,    /**< read */
  RP_OUT = 2,   /**< written entirely, never read */
  RP_INOUT = 3, /**< read and written */
  RP_SCALAR = 4 /**< kernel parameter passed by value (8 bytes at most) */
} rp_mode;

/** Operation types, as named in graph files. */
typedef enum {
  RP_OP_KERNEL = 0,   /**< "kernel": a kernel on a device */
  RP_OP_COPY_H2D = 1, /**< "copy_h2d": host to device (MoveTo) */
  RP_OP_COPY_D2H = 2, /**< "copy_d2h": device to host (MoveFrom) */
  RP_OP_COPY_D2D = 3, /**< "copy_d2d": device to device (peer copy) */
  RP_OP_HOST = 4      /**< "host": a host task */
} rp_op_type;

/** Kinds of devices. A graph's device index has a kind; a kernel runs with
 * the body its device's kind calls for, on the backend that owns that kind,
 * or on the host with its CPU body on any other backend. */
typedef enum {
  RP_DEVICE_DEFAULT = 0, /**< the kind the exec's backend runs itself (a
                              GPU on cuda, an FPGA on xrt, CPU cores on
                              openmp) */
  RP_DEVICE_CPU = 1,     /**< host CPU cores, host memory */
  RP_DEVICE_CUDA = 2,    /**< a CUDA GPU */
  RP_DEVICE_FPGA = 3     /**< an FPGA run through XRT */
} rp_device_kind;

/** Kinds of edges. */
typedef enum {
  RP_EDGE_RAW = 0,  /**< read after write */
  RP_EDGE_WAR = 1,  /**< write after read */
  RP_EDGE_WAW = 2,  /**< write after write */
  RP_EDGE_AFTER = 3 /**< explicit dependency given by the program */
} rp_edge_kind;

/** Region shapes. The unit of each is in its name: a byte range counts
 * bytes, an element range and a box count elements (of the buffer's
 * element size, rp_buffer_desc.elem). */
typedef enum {
  RP_REGION_WHOLE = 0, /**< the whole buffer */
  RP_REGION_BYTES = 1, /**< bytes [offset, offset + bytes) */
  RP_REGION_BOX = 2,   /**< an n-d box in elements, lo[d] to hi[d]
                            exclusive per dimension */
  RP_REGION_ELEMS = 3  /**< elements [lo[0], hi[0]) of the buffer seen as
                            a flat array; recorded as its byte range */
} rp_region_kind;

/** A part of one buffer. Boxes index the buffer's dims, dimension 0 the
 * slowest (row-major: the last dimension is contiguous in memory). Build
 * one with the constructors below, whose names say their unit. */
typedef struct rp_region {
  rp_buf buf;
  rp_region_kind kind;
  unsigned ndims;         /**< box rank; equals the buffer's */
  uint64_t offset, bytes; /**< RP_REGION_BYTES: in bytes */
  uint64_t lo[3], hi[3];  /**< RP_REGION_BOX, RP_REGION_ELEMS: in
                              elements */
} rp_region;

/** One value slot of a kernel's argument block. */
typedef union rp_slot {
  void *p;
  int64_t i64;
  uint64_t u64;
  double f64;
  float f32;
  int32_t i32;
  uint32_t u32;
} rp_slot;

/** Where a buffer parameter's region lies in its buffer, as the kernel
 * was recorded with it (read it with RP_REGION_PTR and RP_BOX_* of
 * reprise/kernel.h). */
typedef struct rp_pregion {
  uint64_t offset; /**< first byte of the region */
  uint64_t bytes;  /**< span of the region: last byte + 1 - offset */
  uint64_t ld;     /**< elements per row of the buffer (its last dim;
                          for a buffer without dims: bytes / elem) */
  uint32_t lo[3];  /**< box: first element per dim, dim 0 slowest; byte
                          range: lo[0] its first element */
  uint32_t n[3];   /**< box: extents per dim (1 beyond its rank); byte
                          range: n[0] its elements */
} rp_pregion;

/** What a kernel body receives: the index space, one slot per parameter
 * (a buffer parameter's slot holds the base address of the buffer's image in
 * the kernel's memory space; a scalar's its value) and where each buffer
 * parameter's region lies. Passed by value to CUDA kernels. */
typedef struct rp_kargs {
  uint64_t n[3]; /**< extent of this launch (of the whole index
                              space unless the kernel runs in chunks) */
  rp_slot a[RP_MAX_PARAMS];
  rp_pregion r[RP_MAX_PARAMS];
  uint64_t origin[3]; /**< first point of this launch in the whole index
                              space: 0s unless the kernel was split into
                              chunks (docs/split.md); the RP_KERNEL bodies
                              add it to the points they run */
  uint64_t whole[3];  /**< extent of the whole index space (RP_NX ...);
                              0s: equal to n */
} rp_kargs;

/** A kernel parameter: its name and role. */
typedef struct rp_param {
  const char *name;
  rp_mode mode;
} rp_param;

/** CPU body: runs the kernel over the index box [lo, hi) (x fastest). */
typedef void (*rp_cpu_fn)(const rp_kargs *a, const uint64_t lo[3],
                          const uint64_t hi[3]);
/** Host-side CUDA wrapper: enqueues work on a cudaStream_t given as void*
 * (a vendor library call, say). Captured into the CUDA graph. */
typedef int (*rp_cuda_host_fn)(const rp_kargs *a, void *stream);

/** Axes along which a kernel's index space may be split (rp_kernel). */
typedef enum {
  RP_SPLIT_NONE = 0, /**< never split */
  RP_SPLIT_X = 1,
  RP_SPLIT_Y = 2,
  RP_SPLIT_Z = 3
} rp_split_axis;

/** The CUDA entry of a kernel that reads its argument block from device
 * memory (rp_kernel.cuda_args): @p cuda_args is a __global__ fn taking a
 * const rp_kargs * in device memory, running the same body as @p cuda, the
 * by-value entry it belongs to. RP_KERNEL() makes one under nvcc. */
typedef struct rp_cuda_args {
  const void *cuda;      /**< the by-value entry (rp_kernel.cuda) */
  const void *cuda_args; /**< the same kernel, arguments by pointer */
  /** Optional: the same kernel taking its block by value packed to its
   * @p packed_params parameters: n[3], a[packed_params],
   * r[packed_params], origin[3], whole[3], no padding
   * (RP_KARGS_PACKED_BYTES(packed_params) bytes, 856 for RP_MAX_PARAMS),
   * so that a graph node carries no more bytes than the kernel has
   * parameters (CUDA's instantiate and setters pay per parameter byte).
   * The cuda backend uses it for by-value launches when packed_params
   * covers the kernel's parameters and CUDA reports that size for it.
   * RP_KERNEL_DESC() fills both under nvcc. NULL: the whole rp_kargs. */
  const void *cuda_packed;
  unsigned packed_params; /**< parameters the packed entry holds */
} rp_cuda_args;

/** Bytes of an argument block packed to @p np parameters
 * (rp_cuda_args.cuda_packed): n, np slots, np regions, origin, whole. */
#define RP_KARGS_PACKED_BYTES(np)                                              \
  (6 * sizeof(uint64_t) + 3 * sizeof(uint64_t) +                               \
   (size_t)(np) * (sizeof(rp_slot) + sizeof(rp_pregion)))

/** A kernel descriptor: one slot per backend; NULL means "cannot run there".
 * Fill it with RP_KERNEL_DESC() (reprise/kernel.h), or by hand with
 * designated initialisers through RP_KERNEL_WITH() (which sets its size),
 * or rp_kernel_init() then the members: never positionally, so that a
 * member added later breaks nobody (docs/STYLE.md, "Structs a caller
 * fills in"). */
typedef struct rp_kernel {
  /** sizeof(rp_kernel) as the caller was compiled (RP_KERNEL_WITH(),
   * RP_KERNEL_DESC(), rp_kernel_init()): rp_record_kernel() refuses 0
   * and sizes this library does not know, and gives a descriptor of an
   * older, smaller size the defaults (0, NULL) of the members it lacks. */
  size_t size;
  const char *name;
  unsigned nparams;
  const rp_param *params;
  rp_cpu_fn cpu;              /**< CPU body (OpenMP, reference) */
  const void *cuda;           /**< __global__ fn taking (rp_kargs) */
  rp_cuda_host_fn cuda_host;  /**< or a host wrapper enqueuing work */
  unsigned block[3];          /**< CUDA block shape; 0s: chosen */
  const char *xrt;            /**< kernel name inside an xclbin */
  const unsigned *xrt_argmap; /**< XRT arg i is param xrt_argmap[i] */
  unsigned xrt_nargs;         /**< entries in xrt_argmap */
  /** RP_SPLIT_NONE (0): the kernel is never split. RP_SPLIT_X/_Y/_Z: its
   * index space may be cut along that axis into chunks that run as
   * separate launches (rp_exec_opts.split, docs/split.md): each index
   * point reads and writes only the slice of each following parameter's
   * region that its chunk covers, and nothing of another chunk's. */
  unsigned split_axis;
  /** Bit p set: buffer parameter p follows the cut: its region's slowest
   * dimension (a box's dim 0, a byte range's elements) spans m times the
   * axis' extent for a whole m >= 1 (m = 1: elementwise; m > 1 or a 2-d
   * box: row blocks), and the chunk [a, b) of the axis uses the slice
   * [a * m, b * m) of it. Buffer parameters not set must be RP_IN: each
   * chunk reads them whole. */
  uint32_t split_follow;
  /** RP_HINT_* flags: what the kernel is bound by, for backends choosing
   * its launch geometry (the cuda backend's block size, docs/cuda.md).
   * 0: no hint. The dimensionality comes from the index space. */
  unsigned hint;
  /** Optional: the kernel with its argument block read from device memory
   * (RP_KERNEL() under nvcc fills it). The cuda backend launches a node
   * with its block by value until the node's scalars change; the first
   * rp_exec_set_scalar() moves it to one table of blocks in device
   * memory, so that its later changes are one copy of the table before
   * the next launch, not one CUDA setter per node (docs/cuda.md). Used
   * only while cuda_args->cuda equals @ref cuda (a descriptor whose cuda
   * slot was replaced keeps its own entry). NULL: arguments by value. */
  const rp_cuda_args *cuda_args;
  /** The kernel's stencil radius along each axis of its index space (x,
   * y, z), for lowerings that overlap messages with computation (the mpi
   * backend computes a rank's rows that need no received halo while the
   * halo flies, docs/mpi.md). Only the first axis d with halo[d] = h > 0
   * is used, and it promises, S being that axis' extent: every written
   * buffer parameter's region spans m x S units of its slowest dimension
   * (a box's rows, a byte range's elements; m >= 1 whole, the same for
   * all), all starting at the same unit W0 of buffers with the same unit
   * size; the slice [a, b) of the axis writes units [W0 + a m, W0 + b m)
   * of them, and reads, of every buffer parameter, only units
   * [W0 + (a - h) m, W0 + (b + h) m) (a 5-point stencil over rows: h = 1
   * along the rows' axis); no buffer is both read and written, and the
   * slices may run in any order. reprise checks the shapes, not the
   * body. 0 (the default, and for descriptors of an older size):
   * unknown, the kernel is never cut so. */
  unsigned halo[3];
} rp_kernel;

/** A kernel descriptor by designated initialisers, its size set:
 * `static const rp_kernel k = RP_KERNEL_WITH(.name = "k", .nparams = 1,
 * .params = ps, .cpu = k_cpu);` (members not named are 0 / NULL). */
#define RP_KERNEL_WITH(...)                                                    \
  { .size = sizeof(rp_kernel), __VA_ARGS__ }

/** @brief Set @p k to an empty descriptor of this header's size (every
 * member 0 or NULL), to fill in member by member. NULL is a no-op. */
RP_API void rp_kernel_init(rp_kernel *k);

/** Hints of rp_kernel.hint. */
enum {
  /** Bound by memory bandwidth: larger blocks are preferred among those
   * of equal occupancy. */
  RP_HINT_MEMORY_BOUND = 1u << 0,
  /** Bound by arithmetic: smaller blocks are preferred among those of
   * equal occupancy (more blocks to spread over the multiprocessors). */
  RP_HINT_COMPUTE_BOUND = 1u << 1
};

/** Host task body. ptrs[i] is the base of the host image of the buffer of
 * access i, as recorded (rebinding a buffer changes it). */
typedef void (*rp_host_fn)(void *user, void *const *ptrs);

/** Options shared by every recording call; NULL means none. Start from
 * RP_OP_OPTS_INIT or rp_op_opts_init(), or name the members through
 * RP_OP_OPTS_WITH(): each sets the size. */
typedef struct rp_op_opts {
  size_t size;          /**< sizeof(rp_op_opts) as the caller was
                             compiled; 0 and sizes this library does not
                             know are refused (RP_EINVAL); an older,
                             smaller size keeps the defaults of the
                             members it lacks (docs/design.md, "Versioned
                             structs") */
  const char *name;     /**< copied; NULL: a name is derived */
  double cost_us;       /**< > 0: given cost; otherwise not given */
  const rp_node *after; /**< explicit dependencies on earlier nodes */
  unsigned nafter;
} rp_op_opts;

/** An rp_op_opts with its size set and every option at its default. */
#define RP_OP_OPTS_INIT                                                        \
  { sizeof(rp_op_opts), NULL, 0, NULL, 0 }
/** An rp_op_opts by designated initialisers, its size set:
 * `rp_op_opts o = RP_OP_OPTS_WITH(.name = "step", .cost_us = 10);`. */
#define RP_OP_OPTS_WITH(...)                                                   \
  { .size = sizeof(rp_op_opts), __VA_ARGS__ }

/** @brief Set @p o to RP_OP_OPTS_INIT. NULL is a no-op. */
RP_API void rp_op_opts_init(rp_op_opts *o);

/** An access of a host task: a region and how it is used (in/out/inout). */
typedef struct rp_access {
  rp_region region;
  rp_mode mode;
} rp_access;

/** One kernel argument: a region for a buffer parameter, a value for a
 * scalar one. */
typedef struct rp_arg {
  rp_region region;
  rp_slot value;
} rp_arg;

/** Index space of a kernel (x fastest); 0 counts as 1. */
typedef struct rp_dims {
  uint64_t x, y, z;
} rp_dims;

/** Graph creation flags. */
enum {
  RP_GRAPH_NO_COHERENCE = 1u << 0, /**< record copies only as given */
  /** rp_graph_end() fails with RP_ECOHERENCE instead of warning where the
   * results could surprise: a device operation reads an image that nothing
   * wrote or copied in, or the host array of a buffer never receives the
   * value last written on a device (see rp_graph_warning()). */
  RP_GRAPH_STRICT = 1u << 1
};

/** Description of a buffer for rp_buffer_add(). */
typedef struct rp_buffer_desc {
  const char *name; /**< copied; required */
  void *host;       /**< user memory (host image), NULL: internal */
  uint64_t bytes;   /**< size; with dims, must be elem * prod(dims) */
  uint64_t elem;    /**< element size; 0: none (bytes, and
                           rp_range_elems() is refused) without dims, 1
                           with dims */
  unsigned ndims;   /**< 0 to 3 */
  uint64_t dims[3];
} rp_buffer_desc;

/** Read-only view of an operation. */
typedef struct rp_node_info {
  rp_op_type type;
  int device;     /**< kernel / copy device; src for peer copies */
  int dst_device; /**< peer copies; else equal to device */
  const char *name;
  double cost_us; /**< given cost, or a negative value if none */
  int inserted;   /**< 1 if added by automatic coherence */
  unsigned naccess;
  const rp_kernel *kernel; /**< kernels only, may be NULL if loaded */
  rp_dims space;
} rp_node_info;

/** One edge of the graph. */
typedef struct rp_edge {
  rp_node from, to;
  rp_edge_kind kind;
  rp_buf buf; /**< buffer of the hazard; RP_NONE for after */
} rp_edge;

/** One access of an operation as stored (with its memory space). */
typedef struct rp_access_info {
  rp_region region;
  rp_mode mode;
  int space; /**< RP_SPACE_HOST or a device index */
} rp_access_info;

/** @} */

/** @defgroup rp_region_fn Regions
 * Constructors for the shapes of region. **One rule: a constructor's name
 * says its unit.** `_bytes` counts bytes; `_elems` counts elements of the
 * buffer's element size (rp_buffer_desc.elem; a 2-d buffer registered with
 * rp_buffer_register_2d() of doubles has 8-byte elements). The older
 * names rp_bytes(), rp_box() and rp_box2() remain for this release as
 * deprecated aliases of rp_range_bytes(), rp_box_elems() and
 * rp_box2_elems() (define RP_WARN_DEPRECATED to be warned of their use).
 * @{ */

#if defined(RP_WARN_DEPRECATED) && defined(__GNUC__)
#define RP_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define RP_DEPRECATED(msg)
#endif

/** @brief The whole buffer @p b. */
static inline rp_region rp_whole(rp_buf b) {
  rp_region r = {b, RP_REGION_WHOLE, 0, 0, 0, {0, 0, 0}, {0, 0, 0}};
  return r;
}
/** @brief Bytes [@p offset, @p offset + @p nbytes) of buffer @p b: both in
 * bytes, whatever the buffer's element size. */
static inline rp_region rp_range_bytes(rp_buf b, uint64_t offset,
                                       uint64_t nbytes) {
  rp_region r = {b, RP_REGION_BYTES, 0, offset, nbytes, {0, 0, 0}, {0, 0, 0}};
  return r;
}
/** @brief Elements [@p first, @p first + @p count) of buffer @p b, seen
 * as a flat array of its element size (row-major for a buffer with dims):
 * bytes [first * elem, (first + count) * elem). The buffer must have an
 * element size (rp_buffer_register_elems(), rp_buffer_register_2d(), a
 * desc with elem or dims): on one from rp_buffer_register() the access is
 * refused with RP_EINVAL. */
static inline rp_region rp_range_elems(rp_buf b, uint64_t first,
                                       uint64_t count) {
  rp_region r = {
      b, RP_REGION_ELEMS, 1, 0, 0, {first, 0, 0}, {first + count, 0, 0}};
  return r;
}
/** @brief An @p nd-d box of buffer @p b in elements: lo[d] to hi[d]
 * (exclusive) in dimension d, 0 the slowest; @p nd equals the buffer's
 * number of dims. */
static inline rp_region rp_box_elems(rp_buf b, unsigned nd, const uint64_t *lo,
                                     const uint64_t *hi) {
  rp_region r = {b, RP_REGION_BOX, nd, 0, 0, {0, 0, 0}, {0, 0, 0}};
  for (unsigned i = 0; i < nd && i < 3; i++) {
    r.lo[i] = lo[i];
    r.hi[i] = hi[i];
  }
  return r;
}
/** @brief Rows [@p r0, @p r1) and columns [@p c0, @p c1) of a 2-d buffer,
 * in elements (row r, column c is element r * cols + c). */
static inline rp_region rp_box2_elems(rp_buf b, uint64_t r0, uint64_t r1,
                                      uint64_t c0, uint64_t c1) {
  rp_region r = {b, RP_REGION_BOX, 2, 0, 0, {r0, c0, 0}, {r1, c1, 0}};
  return r;
}
/** @brief Deprecated: rp_range_bytes() (bytes [off, off + n)). */
RP_DEPRECATED("rp_bytes counts bytes: call it rp_range_bytes")
static inline rp_region rp_bytes(rp_buf b, uint64_t off, uint64_t n) {
  return rp_range_bytes(b, off, n);
}
/** @brief Deprecated: rp_box_elems() (a box in elements). */
RP_DEPRECATED("rp_box counts elements: call it rp_box_elems")
static inline rp_region rp_box(rp_buf b, unsigned nd, const uint64_t *lo,
                               const uint64_t *hi) {
  return rp_box_elems(b, nd, lo, hi);
}
/** @brief Deprecated: rp_box2_elems() (rows and columns, in elements). */
RP_DEPRECATED("rp_box2 counts elements: call it rp_box2_elems")
static inline rp_region rp_box2(rp_buf b, uint64_t r0, uint64_t r1, uint64_t c0,
                                uint64_t c1) {
  return rp_box2_elems(b, r0, r1, c0, c1);
}
/** @brief A kernel argument for a buffer parameter. */
static inline rp_arg rp_arg_buf(rp_region r) {
  rp_arg a;
  a.region = r;
  a.value.u64 = 0;
  return a;
}
/** @brief A kernel argument: a float scalar. */
static inline rp_arg rp_arg_f32(float v) {
  rp_arg a = {rp_whole(RP_NONE), {0}};
  a.value.f32 = v;
  return a;
}
/** @brief A kernel argument: a double scalar. */
static inline rp_arg rp_arg_f64(double v) {
  rp_arg a = {rp_whole(RP_NONE), {0}};
  a.value.f64 = v;
  return a;
}
/** @brief A kernel argument: a 64-bit integer scalar. */
static inline rp_arg rp_arg_i64(int64_t v) {
  rp_arg a = {rp_whole(RP_NONE), {0}};
  a.value.i64 = v;
  return a;
}
/** @brief A kernel argument: a 32-bit integer scalar. */
static inline rp_arg rp_arg_i32(int32_t v) {
  rp_arg a = {rp_whole(RP_NONE), {0}};
  a.value.i32 = v;
  return a;
}
/** @brief Index space helper. */
static inline rp_dims rp_dims3(uint64_t x, uint64_t y, uint64_t z) {
  rp_dims d = {x, y, z};
  return d;
}

/** @} */

/** @defgroup rp_graph_fn Graph
 * Create, finish, inspect and destroy graphs. Recording calls validate all
 * of their input before changing anything: a failed call leaves the graph as
 * it was, and rp_graph_error() says what was wrong.
 * Thread safety: a graph is recorded from one thread at a time (the
 * caller serialises recording calls on one graph); an ended graph is
 * read-only, and any number of threads may read it, analyse it and create
 * execs of it at once. Distinct graphs are independent.
 * @{ */

/** @brief Create an empty graph in the recording phase.
 * @param out receives the graph. @param flags 0 or RP_GRAPH_NO_COHERENCE.
 * @return RP_OK, RP_EINVAL (unknown flag), RP_ENOMEM. */
RP_API rp_status rp_graph_create(rp_graph **out, unsigned flags);

/** @brief Destroy a graph and everything it owns. NULL is a no-op. */
RP_API void rp_graph_destroy(rp_graph *g);

/** @brief End the recording: the graph becomes immutable and can be
 * analysed, saved and instantiated. @return RP_OK, RP_ESTATE if ended. */
RP_API rp_status rp_graph_end(rp_graph *g);

/** @brief 1 if rp_graph_end() was called, else 0. */
RP_API int rp_graph_ended(const rp_graph *g);

/** @brief Details of the last failure of a call on @p g ("" if none). */
RP_API const char *rp_graph_error(const rp_graph *g);

/** @brief Attach a user pointer. */
RP_API void rp_graph_set_data(rp_graph *g, void *data);
/** @brief The user pointer (NULL if none). */
RP_API void *rp_graph_get_data(const rp_graph *g);

/** @brief Number of coherence warnings rp_graph_end() found. */
RP_API unsigned rp_graph_num_warnings(const rp_graph *g);
/** @brief Warning @p i: which buffer, bytes and operation, and what the
 * replay will do ("" when out of range). */
RP_API const char *rp_graph_warning(const rp_graph *g, unsigned i);

/** @brief Give device @p device a kind (before rp_graph_end()). Devices
 * are RP_DEVICE_DEFAULT until given one.
 * @return RP_OK, RP_EINVAL (bad device or kind), RP_ESTATE (ended). */
RP_API rp_status rp_graph_set_device_kind(rp_graph *g, int device,
                                          rp_device_kind kind);
/** @brief The kind of device @p device (RP_DEVICE_DEFAULT if not set or
 * out of range). */
RP_API rp_device_kind rp_graph_device_kind(const rp_graph *g, int device);
/** @brief Name of a device kind ("default", "cpu", "cuda", "fpga"). */
RP_API const char *rp_device_kind_name(rp_device_kind k);

/** @brief Number of operations (0 for a NULL graph, like the three
 * counts below). */
RP_API uint32_t rp_graph_num_nodes(const rp_graph *g);
/** @brief Number of buffers. */
RP_API uint32_t rp_graph_num_buffers(const rp_graph *g);
/** @brief Number of edges (transitively reduced hazards plus afters). */
RP_API uint32_t rp_graph_num_edges(const rp_graph *g);
/** @brief Number of devices named (highest device index + 1, 0 if none). */
RP_API unsigned rp_graph_num_devices(const rp_graph *g);

/** @brief Edge @p i, edges sorted by (from, to).
 * @return RP_OK or RP_EINVAL when out of range. */
RP_API rp_status rp_graph_edge(const rp_graph *g, uint32_t i, rp_edge *out);

/** @brief Describe operation @p n. @return RP_OK or RP_EINVAL. */
RP_API rp_status rp_node_info_get(const rp_graph *g, rp_node n,
                                  rp_node_info *out);

/** @brief Access @p i of operation @p n. @return RP_OK or RP_EINVAL. */
RP_API rp_status rp_node_access(const rp_graph *g, rp_node n, unsigned i,
                                rp_access_info *out);

/** @brief Set the given cost of an operation (before rp_graph_end()).
 * @param us cost in microseconds, finite and >= 0. */
RP_API rp_status rp_node_set_cost(rp_graph *g, rp_node n, double us);

/** @brief Look a buffer up by name.
 * @return RP_OK, RP_ENOTFOUND, or RP_EINVAL for a NULL argument. */
RP_API rp_status rp_graph_find_buffer(const rp_graph *g, const char *name,
                                      rp_buf *out);

/** @brief Host task of operation @p n: its function and user pointer. */
RP_API rp_status rp_node_host_fn(const rp_graph *g, rp_node n, rp_host_fn *fn,
                                 void **user);
/** @brief The name of kernel operation @p n's kernel: its descriptor's, or
 * for a graph read from a file the name the file gives ("kernel").
 * @return the name (valid while g lives), or NULL when @p n is no kernel
 *   operation or has no kernel name. */
RP_API const char *rp_node_kernel_name(const rp_graph *g, rp_node n);

/** @brief The values of kernel operation @p n's scalar parameters, in
 * parameter order: up to @p max of them into @p out (may be NULL with
 * @p max 0). For a graph read from a file, the values the file saved
 * ("scalars"; none in files written before they were saved).
 * @param count receives how many the operation has (may be NULL).
 * @return RP_OK, RP_EINVAL (no kernel operation @p n). */
RP_API rp_status rp_node_scalars(const rp_graph *g, rp_node n, rp_slot *out,
                                 unsigned max, unsigned *count);

/** @brief Successors of operation @p n in the recorded graph (CSR over
 * the graph's edges). @param count receives how many.
 * @return the array (valid while g lives). */
RP_API const rp_node *rp_graph_succs(const rp_graph *g, rp_node n,
                                     uint32_t *count);
/** @brief Predecessors of operation @p n in the recorded graph. */
RP_API const rp_node *rp_graph_preds(const rp_graph *g, rp_node n,
                                     uint32_t *count);
/** @brief Byte intervals an access covers: fills up to @p max pairs
 * (offset, length) in @p iv and returns how many exist in total. A box on
 * a row-major buffer gives one interval per contiguous run. */
RP_API uint64_t rp_region_intervals(const rp_graph *g, const rp_region *r,
                                    uint64_t *iv, uint64_t max);
/** @brief Name of operation type @p t ("kernel", "copy_h2d", ...). */
RP_API const char *rp_op_type_name(rp_op_type t);
/** @brief Name of edge kind @p k ("raw", "war", "waw", "after"). */
RP_API const char *rp_edge_kind_name(rp_edge_kind k);

/** @} */

/** @defgroup rp_measured_fn Measured costs
 * A graph can carry the measured cost of each operation (the median of
 * several profiled replays, with min, max, the number of runs and where it
 * was measured). They are saved in the graph file as a `measured` object
 * per operation and read back; the analysis uses them before given costs.
 * @{ */

/** The measured cost of one operation. */
typedef struct rp_measured {
  double median_us, min_us, max_us;
  unsigned runs;
  char backend[32];
  char machine[64];
} rp_measured;

/** @brief Attach measured cost @p m to node @p n (also on an ended graph:
 * costs are not structure). NULL removes it.
 * @return RP_OK, RP_EINVAL (bad node; times negative, not finite, or not
 *   min <= median <= max), RP_ENOMEM. */
RP_API rp_status rp_graph_set_measured(rp_graph *g, rp_node n,
                                       const rp_measured *m);

/** @brief Attach to every node its figures from rp_exec_profile_opts(): the
 * arrays have one entry per node (@p min_us and @p max_us may be NULL:
 * the median is used); @p machine NULL: this host's name. */
RP_API rp_status rp_graph_set_measured_all(rp_graph *g, const double *median_us,
                                           const double *min_us,
                                           const double *max_us, unsigned runs,
                                           const char *backend,
                                           const char *machine);

/** @brief The measured cost of node @p n.
 * @return RP_OK, RP_ENOTFOUND (none), RP_EINVAL. */
RP_API rp_status rp_graph_get_measured(const rp_graph *g, rp_node n,
                                       rp_measured *out);

/** The time of one operation within overlapped replays of the team that
 * ran it (rp_exec_profile_team()): saved in the graph file as a `team`
 * object per operation beside `measured`, and used by the analysis of a
 * pool model (an openmp team) whose thread count and backend match
 * (docs/model.md, "Costs at the replay's thread count"). */
typedef struct rp_team_measured {
  double median_us, min_us, max_us;
  unsigned runs;    /**< profiled replays */
  unsigned threads; /**< the team's threads (>= 1) */
  double share;     /**< the team's share of its cores during those replays
                         (0: not measured; else in (0, 1]) */
  char backend[32];
  char machine[64];
} rp_team_measured;

/** @brief Attach the team time @p m to node @p n (also on an ended
 * graph). NULL removes it.
 * @return RP_OK, RP_EINVAL (bad node; times negative, not finite, or not
 *   min <= median <= max; threads 0; share outside [0, 1]), RP_ENOMEM. */
RP_API rp_status rp_graph_set_team_measured(rp_graph *g, rp_node n,
                                            const rp_team_measured *m);

/** @brief Attach to every node its figures from rp_exec_profile_team():
 * the arrays have one entry per node (@p min_us and @p max_us may be
 * NULL: the median is used), the team of @p threads threads got @p share
 * of its cores (0: not measured); @p machine NULL: this host's name.
 * @return RP_OK, RP_EINVAL, RP_ENOMEM. */
RP_API rp_status rp_graph_set_team_measured_all(
    rp_graph *g, const double *median_us, const double *min_us,
    const double *max_us, unsigned runs, unsigned threads, double share,
    const char *backend, const char *machine);

/** @brief The team time of node @p n.
 * @return RP_OK, RP_ENOTFOUND (none), RP_EINVAL. */
RP_API rp_status rp_graph_get_team_measured(const rp_graph *g, rp_node n,
                                            rp_team_measured *out);

/** @brief Apply the measured costs of graph @p src to graph @p dst by
 * operation name: the k-th operation named X in @p dst gets the costs of
 * the k-th one named X in @p src, or of its last one named X when @p src
 * has fewer. Operations of @p src without a measured cost give their given
 * cost_us, as a measured cost of 0 runs. @p matched receives how many
 * operations of @p dst got costs, may be NULL.
 * @return RP_OK, RP_EINVAL, RP_ENOMEM. */
RP_API rp_status rp_graph_apply_costs(rp_graph *dst, const rp_graph *src,
                                      uint32_t *matched);

/** @} */

/** @defgroup rp_buffer_fn Buffers
 * Buffers are registered from user memory (they then have a host image)
 * or created internal (device images only). The graph never owns the
 * memory behind a buffer.
 * @{ */

/** @brief Add a buffer described by @p d.
 * @return RP_OK, RP_EINVAL (no name, zero size, dims not matching bytes,
 *   duplicate name), RP_ESTATE (graph ended), RP_ENOMEM. */
RP_API rp_status rp_buffer_add(rp_graph *g, const rp_buffer_desc *d,
                               rp_buf *out);

/** @brief Register @p bytes of user memory @p host as a 1-d buffer
 * counted in bytes: it has no element size, so its regions are
 * rp_range_bytes() or rp_whole(); rp_range_elems() on it is refused with
 * RP_EINVAL (it would silently count bytes). For an array of elements use
 * rp_buffer_register_elems(). */
RP_API rp_status rp_buffer_register(rp_graph *g, const char *name, void *host,
                                    uint64_t bytes, rp_buf *out);

/** @brief Register @p count elements of @p elem bytes of user memory
 * @p host as a 1-d array (e.g. `rp_buffer_register_elems(g, "x", x, n,
 * sizeof *x, &X)`): rp_range_elems(X, first, count) then counts elements
 * of @p elem bytes. */
RP_API rp_status rp_buffer_register_elems(rp_graph *g, const char *name,
                                          void *host, uint64_t count,
                                          uint64_t elem, rp_buf *out);

/** @brief Register a 2-d row-major array of rows x cols elements. */
RP_API rp_status rp_buffer_register_2d(rp_graph *g, const char *name,
                                       void *host, uint64_t rows, uint64_t cols,
                                       uint64_t elem, rp_buf *out);

/** @brief Describe buffer @p b (name, host, bytes, elem, dims). */
RP_API rp_status rp_buffer_info(const rp_graph *g, rp_buf b,
                                rp_buffer_desc *out);

/** @brief Declare buffer @p b distributed by rows over the ranks of a
 * replay that spans several processes (the starpu backend's mode "mpi",
 * docs/mpi.md). Its rows (dimension 0 of a buffer with dims, else its
 * elements) are cut into @p nparts contiguous parts, part p being rows
 * [bounds[p], bounds[p + 1]), and part p's rows live in the host array of
 * the rank that runs device p (rank p % nranks, as devices are placed).
 * Each rank's host array then holds its own parts only: a replay reads
 * their rows there and leaves their final values there (a copy to the
 * host, rp_record_sync_host(), lands in each rank's part), and nothing
 * goes through rank 0. The graph stays one program: a replay in one
 * process (the reference, openmp, cuda, starpu's other modes) sees the
 * whole array as local and ignores the declaration; so does the analysis
 * without ranks. Graph files do not keep it. Declaring again replaces the
 * parts.
 * @param nparts 1 to 65536.
 * @param bounds nparts + 1 row numbers, nondecreasing, from 0 to the
 *   number of rows (a part may be empty); NULL: even parts, part p being
 *   rows [rows * p / nparts, rows * (p + 1) / nparts).
 * @return RP_OK, RP_EINVAL (unknown or internal buffer, bad parts),
 *   RP_ESTATE (graph ended), RP_ENOMEM. */
RP_API rp_status rp_buffer_distribute(rp_graph *g, rp_buf b, unsigned nparts,
                                      const uint64_t *bounds);

/** @brief The number of parts of buffer @p b (0: not distributed, or no
 * such buffer). */
RP_API unsigned rp_buffer_num_parts(const rp_graph *g, rp_buf b);

/** @brief Rows [*r0, *r1) of part @p part of buffer @p b; a buffer that
 * is not distributed has one part, all its rows.
 * @return RP_OK, RP_EINVAL (no such buffer or part, a NULL output). */
RP_API rp_status rp_buffer_part_rows(const rp_graph *g, rp_buf b, unsigned part,
                                     uint64_t *r0, uint64_t *r1);

/** @} */

/** @defgroup rp_record_fn Recording
 * Each call appends one operation (after any copies that automatic coherence
 * inserts before it) and returns its node. Hazard edges against every
 * earlier operation are derived as it is recorded.
 * @{ */

/** @brief Record a kernel launch.
 * @param k kernel descriptor (must outlive the graph).
 * @param device device index, 0..RP_MAX_DEVICES-1.
 * @param space logical index space.
 * @param args k->nparams arguments (regions for buffer parameters).
 * @param o options or NULL. @param out receives the node, may be NULL. */
RP_API rp_status rp_record_kernel(rp_graph *g, const rp_kernel *k, int device,
                                  rp_dims space, const rp_arg *args,
                                  const rp_op_opts *o, rp_node *out);

/** @brief Record a copy of region @p r from the host to @p device. */
RP_API rp_status rp_record_copy_to_device(rp_graph *g, rp_region r, int device,
                                          const rp_op_opts *o, rp_node *out);

/** @brief Record a copy of region @p r from @p device to the host. */
RP_API rp_status rp_record_copy_to_host(rp_graph *g, rp_region r, int device,
                                        const rp_op_opts *o, rp_node *out);

/** @brief Record a peer copy of region @p r from device @p src to @p dst. */
RP_API rp_status rp_record_copy_peer(rp_graph *g, rp_region r, int src, int dst,
                                     const rp_op_opts *o, rp_node *out);

/** @brief Record a host task @p fn over the host images of @p acc. */
RP_API rp_status rp_record_host(rp_graph *g, rp_host_fn fn, void *user,
                                const rp_access *acc, unsigned nacc,
                                const rp_op_opts *o, rp_node *out);

/** @brief Copy back to the host whatever part of @p r is stale there
 * (last written on a device). Records nothing when the host image is
 * valid. @param count receives the number of copies recorded, may be NULL. */
RP_API rp_status rp_record_sync_host(rp_graph *g, rp_region r, unsigned *count);

/** @brief Record a kernel that runs once (a one-point index space): a
 * task, as task runtimes call it. Same as rp_record_kernel() with
 * rp_dims3(1, 1, 1). */
RP_API rp_status rp_record_task(rp_graph *g, const rp_kernel *k, int device,
                                const rp_arg *args, const rp_op_opts *o,
                                rp_node *out);

/** @brief From a kernel's CPU body or a host task, while it runs: report
 * that the operation failed (a factorization step that meets a
 * non-positive pivot, say). The body should then return. The replay stops
 * at the next safe point: no operation starts once the failure is seen,
 * those already running finish. rp_exec_wait() (or rp_exec_run()) returns
 * RP_ETASK and rp_exec_error() names the operation, its replay and the
 * message. The buffers hold what the operations completed before the stop
 * wrote (and, for buffers the failing operation writes, whatever it wrote
 * before failing); the exec can be launched again. Device (CUDA, FPGA)
 * bodies cannot call it. Thread-safe; the first call of an operation wins.
 * @param code nonzero, the caller's own. @param fmt printf-style message. */
RP_API void rp_task_fail(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** @} */

/** @defgroup rp_io Graph files and dot
 * JSON graph files (format "reprise-graph", version 1) and Graphviz output.
 * @{ */

/** @brief Write @p g as JSON to @p fp, with the "edges_check" that lets a
 * reader load the edges as saved. @return RP_OK, RP_ENOMEM or RP_EIO. */
RP_API rp_status rp_graph_write_json(const rp_graph *g, FILE *fp);

/** @brief Read a graph file. The result is ended (immutable). Its edges are
 * the saved ones when the file's "edges_check" matches what was read (files
 * written by rp_graph_write_json()), else derived again from the accesses
 * (docs/format.md). The file is read in chunks, one element at a time. On
 * error nothing is returned and
 * @p err (if not NULL) receives where and what, e.g.
 * "ops[3].access[1]: region ends past buffer \"A\" (64 bytes)".
 * @return RP_OK, RP_EPARSE, RP_EIO, RP_ENOMEM. */
RP_API rp_status rp_graph_read_json(rp_graph **out, FILE *fp, char *err,
                                    size_t errlen);

/** Reading flags. */
enum {
  RP_READ_STRICT = 1u << 0, /**< an unknown key is an error (RP_EPARSE) */
  /** Derive the edges again from the accesses even when the file's
   * "edges_check" matches (by default the saved edges of a file whose check
   * matches are loaded as they are; docs/format.md). */
  RP_READ_DERIVE = 1u << 1
};

/** Options of rp_graph_read_json_opts(); start from RP_READ_OPTS_INIT. */
typedef struct rp_read_opts {
  size_t size;    /**< sizeof(rp_read_opts) as the caller was
                           compiled (RP_READ_OPTS_INIT, rp_read_opts_init()),
                           so that it can grow; 0 is refused */
  unsigned flags; /**< RP_READ_* */
  /** Called once per unknown key with a message naming it and where it is
   * ("ops[2].acess: unknown key"); NULL: unknown keys are ignored. */
  void (*warn)(void *user, const char *msg);
  void *user; /**< passed to warn and progress */
  /** Called as the file is read, about once per chunk (up to 1 MiB), with
   * the bytes read so far, from the calling thread: a caller that shows
   * progress draws it (the library never prints). NULL: none. Options of
   * the older size (without it) are still accepted. */
  void (*progress)(void *user, uint64_t bytes_read);
} rp_read_opts;

#define RP_READ_OPTS_INIT                                                      \
  { sizeof(rp_read_opts), 0, NULL, NULL, NULL }

/** @brief Set @p o to RP_READ_OPTS_INIT: this header's size, no flags, no
 * callbacks. A size of 0 is refused (docs/design.md, "Versioned
 * structs"). */
RP_API void rp_read_opts_init(rp_read_opts *o);

/** @brief rp_graph_read_json() with options: unknown keys reported through
 * @p o->warn, or refused with RP_READ_STRICT. @p o may be NULL (as
 * rp_graph_read_json()). @return as rp_graph_read_json(); RP_EINVAL for
 * options of an unknown size or flags. */
RP_API rp_status rp_graph_read_json_opts(rp_graph **out, FILE *fp,
                                         const rp_read_opts *o, char *err,
                                         size_t errlen);

/** @brief Write the graph in the Graphviz language: a node per operation
 * (name, type, device), edges labelled with kind and buffer, a colour per
 * lane. */
RP_API rp_status rp_graph_write_dot(const rp_graph *g, FILE *fp);

/** @brief Graphviz of a graph that stays drawable: with at most
 * @p max_nodes operations (or @p max_nodes 0) the same as
 * rp_graph_write_dot(); above, the critical path of rp_analyze() with
 * default options and the operations next to it, up to @p max_nodes
 * (every critical operation is drawn; when the path alone is longer,
 * consecutive critical operations of one name become one node), with a
 * note saying what was left out.
 * @return RP_OK, RP_EINVAL, RP_ENOMEM, RP_EIO or rp_analyze()'s error. */
RP_API rp_status rp_graph_write_dot_limited(const rp_graph *g, FILE *fp,
                                            uint32_t max_nodes);

/** @} */

#ifdef __cplusplus
}
#endif
#endif
