/* reprise: the interface a backend implements (for backend authors). */
#ifndef REPRISE_BACKEND_H
#define REPRISE_BACKEND_H

#include <pthread.h>
#include "reprise/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup rp_plan_if Execution plan
 * The plan is what a backend executes. The core builds it once per exec
 * (rp_exec_create()) from the ended graph and the backend's description of
 * its memory (::rp_backend.owns), before calling the backend's instantiate.
 * It is backend-neutral and flat:
 *
 * - **images**: the memory a replay touches, one per (buffer, class of
 *   spaces that share one memory). On a backend whose device spaces are
 *   host memory (openmp, or a CPU-kind device on any backend), the spaces of
 *   a buffer share one image when that cannot change any result over any
 *   number of replays (checked once, by the recorder's coherence model);
 *   otherwise each space has its own image and the copies between them move
 *   bytes, exactly as the sequential reference does.
 * - **nodes**: the recorded operations that do work, in program order. A
 *   copy between two spaces of one image is no node: its ordering is kept
 *   by contracting its edges (every predecessor gets every successor).
 * - **edges**: successor and predecessor lists (CSR) over nodes: the
 *   graph's hazard edges (contracted) plus the orderings that sharing an
 *   image needs between accesses the recorder saw in different spaces.
 * - **accesses**: per node, its resolved parameters: the image, the byte
 *   offset and span of the region, the mode.
 *
 * Replay k+1 starts from exactly the state program order leaves after
 * replay k: images persist across replays, device images start zeroed
 * (::RP_IMAGE_ZERO) and user images hold the user's array. Because sharing
 * is only chosen when it is invisible at every read and at the end of every
 * replay (the user's host array must hold what the reference leaves there),
 * nothing has to be done between replays.
 *
 * Thread safety: a plan is read-only while its exec lives; any thread of
 * the backend may read it. The core calls one exec's table entries from
 * one thread at a time, except wait_buffer, which may run while launch
 * runs on another thread; the helpers below may be called from any of
 * the backend's threads (rp_exec_set_error() and rp_exec_fail_task()
 * once per batch, as they say).
 * @{ */

/** Image flags. */
enum {
  RP_IMAGE_HOST_MEMORY = 1u << 0, /**< lives in host memory */
  RP_IMAGE_USER = 1u << 1,        /**< is the user's array of its buffer:
                                       rp_exec_host(x)[buf] (rebindable) */
  RP_IMAGE_ZERO = 1u << 2         /**< the backend allocates it and fills
                                       it with zeros at instantiate */
};

/** One image: the memory of one buffer in one class of spaces. */
typedef struct rp_plan_image {
  rp_buf buf;
  int space;       /**< the space it serves (RP_SPACE_HOST or a device;
                           the smallest of its class) */
  uint64_t spaces; /**< the spaces it serves: bit 63 the host, bit d
                           device d */
  unsigned flags;  /**< RP_IMAGE_* */
  uint64_t bytes;  /**< the buffer's size */
  uint64_t lo, hi; /**< the bytes [lo, hi) that accesses of this image
                           touch: a backend may allocate only those (and
                           hand out base pointers moved back by lo); the
                           whole buffer for user images; lo == hi when no
                           node touches it */
} rp_plan_image;

/** One resolved parameter of a node. */
typedef struct rp_plan_access {
  uint32_t image;    /**< index into rp_plan.image; RP_NONE for a kernel's
                           scalar parameter (its value is in the exec's
                           argument block, rp_exec_args()) */
  rp_mode mode;      /**< RP_IN, RP_OUT, RP_INOUT (RP_SCALAR for scalars) */
  int space;         /**< the space the recorder gave it */
  uint64_t offset;   /**< first byte of the region */
  uint64_t bytes;    /**< span of the region: last byte + 1 - offset */
  uint32_t iv0, niv; /**< the region as contiguous byte runs: niv pairs
                           (offset, length) at rp_plan.iv[2 * iv0] */
} rp_plan_access;

/** Node flags. */
enum {
  RP_PLAN_ON_HOST = 1u << 0 /**< a kernel of a device the backend does not
                                  run itself: run its CPU body on the host */
};

/** One node: a recorded operation that does work. */
typedef struct rp_plan_node {
  rp_op_type type;
  rp_node op;            /**< the recorded operation (rp_node_info_get()) */
  int device;            /**< kernels and copies: device; src of peer copies */
  int dst_device;        /**< peer copies; else equal to device */
  unsigned flags;        /**< RP_PLAN_* */
  uint32_t acc0, nacc;   /**< accesses at rp_plan.acc[acc0 ..]: kernels one
                             per parameter in order, host tasks one per
                             access in order, copies [0] source [1] dest */
  uint32_t succ0, nsucc; /**< successors at rp_plan.succ[succ0 ..] */
  uint32_t pred0, npred; /**< predecessors at rp_plan.pred[pred0 ..] */
  const char *name;      /**< the operation's name (valid while the
                              graph lives) */
  /** Kernels: the descriptor, of this library's size (NULL for a graph
   * read from a file whose kernels were not bound). */
  const rp_kernel *kernel;
  /** Host tasks: the function and its user pointer (fn NULL for a graph
   * read from a file whose tasks were not bound). */
  rp_host_fn host_fn;
  void *host_user;
} rp_plan_node;

/** One buffer as the plan sees it (rp_plan.buf, indexed by rp_buf). */
typedef struct rp_plan_buffer {
  /** Its description (rp_buffer_info()): name, size, element size, dims;
   * host is the array given at recording (a replay uses
   * rp_exec_host(x)[b], which rp_exec_rebind() changes). */
  rp_buffer_desc desc;
  /** Parts of a buffer distributed over ranks (rp_buffer_distribute()):
   * part p is rows [part_rows[p], part_rows[p + 1]); 0 and NULL when it
   * is not distributed (one part, all its rows). */
  unsigned nparts;
  const uint64_t *part_rows;
} rp_plan_buffer;

/** One device as the plan sees it. */
typedef struct rp_plan_device {
  rp_device_kind kind; /**< resolved (never RP_DEVICE_DEFAULT) */
  int native;          /**< 1: run by the backend's own engine */
  int host_memory;     /**< 1: its space is host memory */
} rp_plan_device;

/** The execution plan. Every array is owned by the exec and valid while
 * it lives; nodes are in program order (a topological order). */
typedef struct rp_plan {
  const rp_graph *graph;
  uint32_t nnode, nacc, nimage, nedge;
  uint64_t niv;
  unsigned ndev;
  const rp_plan_node *node;
  const rp_plan_access *acc;
  const rp_plan_image *image;
  const uint32_t *succ, *pred; /**< nedge entries each */
  const uint64_t *iv;          /**< byte runs, pairs (offset, length) */
  const rp_plan_device *dev;   /**< ndev entries */
  /** Per recorded operation: its node, or RP_NONE when it is elided. */
  const uint32_t *node_of;
  /** Per buffer b: the nodes that write memory the user's array of b is
   * (its host image and spaces sharing it), at host_writers[hw_off[b] ..
   * hw_off[b + 1]); after they are done in a replay the array holds its
   * final value of that replay. Empty for internal buffers. */
  const uint32_t *hw_off, *host_writers;
  uint32_t nelided;          /**< copies that are no node */
  uint32_t nbuf;             /**< buffers of the graph */
  const rp_plan_buffer *buf; /**< nbuf entries, indexed by rp_buf */
} rp_plan;

/** @} */

/** @defgroup rp_backend_if Backend interface
 * A backend is one const table of function pointers. The core builds the
 * plan, calls instantiate once per exec, then launch/wait any number of
 * times, rebind and set_scalar between runs, destroy last. A backend reads
 * the plan (which carries the kernels, host functions, names and buffer
 * descriptions it needs) and the exec through the accessors below, not
 * the recorded graph; it never includes anything but public headers
 * (tests/test_backend_plan_only.c checks both for every backend: the
 * reference, openmp, xrt, cuda, starpu and mpi).
 * @{ */

/** Bumped when this table or the plan changes; a backend built for another
 * value is refused. */
#define RP_BACKEND_ABI 7

/** Backend flags. */
enum {
  /** launch runs the replays before returning: the core then calls it on a
   * thread of its own so that rp_exec_launch() returns at once. */
  RP_BACKEND_BLOCKING_LAUNCH = 1u << 0,
  /** Never share an image between spaces, even in host memory: every
   * space keeps its own and every copy moves bytes (the reference). */
  RP_BACKEND_SEPARATE_IMAGES = 1u << 1,
  /** Each transfer pays a fixed cost: rp_exec_opts.reshape_copies = 0
   * reshapes the copies (RP_EXEC_RESHAPE_AUTO) on this backend. */
  RP_BACKEND_RESHAPE_COPIES = 1u << 2
};

struct rp_backend {
  unsigned abi; /**< RP_BACKEND_ABI */
  const char *name;
  int priority; /**< higher wins for "auto" */
  /** The device kind this backend runs with its own engine, in memory of
   * its own (RP_DEVICE_CUDA, RP_DEVICE_FPGA); RP_DEVICE_CPU for backends
   * that run everything on host cores in host memory. Devices of other
   * kinds run on the host (RP_PLAN_ON_HOST) over host memory. */
  rp_device_kind owns;
  unsigned flags; /**< RP_BACKEND_* */
  rp_status (*probe)(void);
  rp_status (*instantiate)(rp_exec *x, const rp_plan *p, void **state);
  /** Start @p iterations replays. Returns at once unless the backend sets
   * RP_BACKEND_BLOCKING_LAUNCH. */
  rp_status (*launch)(void *state, unsigned iterations);
  /** Wait for launched replays; returns the first failure. */
  rp_status (*wait)(void *state);
  /** Optional: wait until the user's array of buffer @p b holds its final
   * value of the last launched replay (rp_plan.host_writers done), while
   * the rest may still run. May be called while launch runs on another
   * thread. NULL: the core waits for everything. An engine that publishes
   * its progress under a mutex waits with rp_backend_wait_progress(). */
  rp_status (*wait_buffer)(void *state, rp_buf b);
  /** Buffer @p b's user array is now rp_exec_host(x)[b]. */
  rp_status (*rebind)(void *state, rp_buf b);
  /** Plan node @p n's argument block rp_exec_args(x, op) changed. */
  rp_status (*set_scalar)(void *state, uint32_t n, unsigned param);
  /** One replay, one node at a time in program order, timing each
   * (microseconds, one entry per plan node). NULL: RP_ENOTSUP. */
  rp_status (*profile)(void *state, double *node_us);
  /** Optional: one replay in the backend's normal overlapped mode,
   * recording when each plan node started and ended (microseconds since
   * the replay began). NULL: RP_ENOTSUP. */
  rp_status (*timeline)(void *state, double *start_us, double *end_us);
  void (*destroy)(void *state);
  /** Optional: RP_BACKEND_* flags this one exec adds to .flags, from its
   * options (read before the plan is built): a distributed mode whose
   * spaces live in different processes needs RP_BACKEND_SEPARATE_IMAGES,
   * say. NULL: none. */
  unsigned (*exec_flags)(const rp_exec_opts *o);
  /** Optional: replay until predicate @p u holds (tested after every
   * @p check_every replays, >= 1) or @p max_replays have run, without the
   * host between replays (a CUDA conditional WHILE node, say); *done
   * receives the replays run. The core has checked @p u and waited for
   * launched replays; @p max_replays > 0. RP_ENOTSUP, before running
   * anything (with rp_exec_set_error() saying why): the core checks on the
   * host instead. NULL: always the host. */
  rp_status (*run_until)(void *state, const rp_until *u, unsigned max_replays,
                         unsigned check_every, unsigned *done);
  /** Optional: the launch geometry chosen for kernel plan node @p n
   * (rp_exec_kernel_block()). NULL: RP_ENOTSUP. */
  rp_status (*kernel_block)(void *state, uint32_t n, rp_kernel_block *out);
  /** The backend-specific members of rp_exec_opts it reads
   * (RP_EXEC_OPT_*): rp_exec_create() refuses, in one place and before
   * instantiate, any other that is set. 0: none. */
  unsigned options;
  /** Optional: the backend's figures about this exec, named
   * (rp_exec_stats(): up to @p max into @p out, how many in @p count).
   * NULL: RP_ENOTSUP. */
  rp_status (*stats)(void *state, rp_exec_stat *out, unsigned max,
                     unsigned *count);
  /** Optional: start (@p on nonzero, the totals zeroed) or stop tracing
   * this exec's launches (rp_exec_trace()); the totals go to stats. Called
   * between launches. NULL: RP_ENOTSUP. */
  rp_status (*trace)(void *state, int on);
  /** Optional: the backend's prediction of one replay per rank
   * (rp_exec_predict(): the core has checked the pointers and
   * @p nranks > 0). NULL: RP_ENOTSUP. */
  rp_status (*predict)(void *state, const rp_exec_stat *model, unsigned nmodel,
                       const double *op_us, unsigned nranks, double *rank_us);
};

/** @brief The graph being executed: the one given to rp_exec_create(), or
 * with rp_exec_opts.split the exec's own rewrite of it into chunks
 * (docs/split.md), whose node numbers the plan and rp_exec_args() use. */
RP_API const rp_graph *rp_exec_graph(const rp_exec *x);
/** @brief The exec's plan (never NULL once the backend is instantiated). */
RP_API const rp_plan *rp_exec_plan(const rp_exec *x);
/** @brief The options given at creation (never NULL; zeroed if none). */
RP_API const rp_exec_opts *rp_exec_opts_get(const rp_exec *x);
/** @brief Current user array of every buffer, indexed by rp_buf (NULL for
 * internal buffers). */
RP_API void *const *rp_exec_host(const rp_exec *x);
/** @brief The exec's argument block template of recorded kernel @p op:
 * index space and scalars filled, buffer slots NULL (each backend fills
 * them with its own images). NULL for other operations. A chunk of a split
 * kernel has n its chunk's extent, origin its first point, whole the
 * kernel's whole extent (docs/split.md): a backend launches n points and
 * the body adds origin. */
RP_API const rp_kargs *rp_exec_args(const rp_exec *x, rp_node op);
/** @brief The current batch: how many launches the exec has had (1 for
 * the first), and in @p iterations (may be NULL) how many replays the last
 * one asked for. A backend's wait_buffer compares it with the batch its
 * engine is running, since a launch of a blocking-launch backend may not
 * have reached the engine yet. */
RP_API uint64_t rp_exec_batch(const rp_exec *x, unsigned *iterations);
/** @brief The wait of a backend's wait_buffer, written once: lock @p mu,
 * wait on @p cv until @p done(@p ctx) returns nonzero, unlock. @p done is
 * called with @p mu held, first before any wait, and decides from the
 * progress the engine publishes under @p mu (the batch it runs, compared
 * with rp_exec_batch(); which replays and nodes have run; whether it
 * stopped); the engine broadcasts @p cv after publishing. @p poll_us > 0
 * also wakes every @p poll_us microseconds, for an engine that publishes
 * some progress without @p mu (atomics); 0 waits for the signal only. */
RP_API void rp_backend_wait_progress(pthread_mutex_t *mu, pthread_cond_t *cv,
                                     int (*done)(void *ctx), void *ctx,
                                     unsigned poll_us);
/** @brief After running a CPU body or a host task on the calling thread:
 * the code it gave rp_task_fail() (0 if it did not fail), clearing it;
 * @p msg (may be NULL) receives its message. */
RP_API int rp_task_take_failure(char *msg, size_t n);
/** @brief Report plan node @p node's failure (code and message from
 * rp_task_take_failure) in replay @p replay (0 the first of the batch):
 * sets rp_exec_error() and returns RP_ETASK. Call it once per batch, for
 * the first failure seen. */
RP_API rp_status rp_exec_fail_task(rp_exec *x, uint32_t node, unsigned replay,
                                   int code, const char *msg);
/** @brief Record a failure message for rp_exec_error(); printf-style. */
RP_API void rp_exec_set_error(rp_exec *x, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** @brief Record a notice for rp_exec_notice(): what the current call did
 * differently while succeeding (never a failure); printf-style. */
RP_API void rp_exec_set_notice(rp_exec *x, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** @brief Record the failure message of a call that has no exec to put it
 * in (a backend's probe, say) for rp_last_error() of this thread;
 * printf-style. */
RP_API void rp_backend_set_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/** @brief A zeroed image of @p bytes for a backend to own, 64-byte
 * aligned, between guard zones (64 bytes before, 64 to 127 after) that
 * the core checks after every replay and at rp_exec_destroy() once the
 * image is given to rp_exec_guard_image(): a write past either end then
 * fails the run with RP_EACCESS, naming the buffer and the operations
 * that write the image, instead of damaging the heap. NULL: out of
 * memory. Free it with rp_image_free(). */
RP_API void *rp_image_alloc(uint64_t bytes);
/** @brief Free an image of rp_image_alloc() (NULL: nothing). */
RP_API void rp_image_free(void *img);
/** @brief Whether the guard zones of an image of rp_image_alloc() are
 * intact: 1 yes (or @p img NULL), 0 damaged. */
RP_API int rp_image_guard_ok(const void *img);
/** @brief Have the core check the guards of plan image @p image, an
 * image of rp_image_alloc() (NULL: no longer), after every replay of
 * @p x and when it is destroyed (the core checks before calling the
 * backend's destroy, which still frees its images). RP_OK, RP_EINVAL,
 * RP_ENOMEM. */
RP_API rp_status rp_exec_guard_image(rp_exec *x, uint32_t image, void *img);

/** Address of plan image @p image, as a backend keeps it (the user's
 * current array for RP_IMAGE_USER images). */
typedef void *(*rp_image_addr_fn)(void *ctx, uint32_t image);

/** @brief Run plan node @p node whole on the calling thread, its images in
 * host memory at addr(ctx, image): a kernel's CPU body over its whole index
 * space, a host task's function (its pointer array built in @p scratch, at
 * least the node's nacc entries), a copy's byte runs. Failures the body
 * reports stay for rp_task_take_failure().
 * @return RP_OK, RP_ENOKERNEL (no CPU body or function), RP_EINVAL. */
RP_API rp_status rp_plan_run_on_host(rp_exec *x, uint32_t node,
                                     rp_image_addr_fn addr, void *ctx,
                                     void **scratch);
/** @brief Whether the spaces @p spaces of buffer @p b (bit 63 the host,
 * bit d device d) could be one memory in plan @p p's graph without any
 * read, or the user's array at the end of a replay, seeing another value
 * than the reference replay sees, over every replay: the test the core
 * makes before it shares an image between host-memory spaces, for a
 * backend that places images itself (the starpu backend's mode "mpi"
 * keeps the spaces of one rank in one memory when this holds).
 * @param ok receives 1 (they may share) or 0.
 * @return RP_OK, RP_EINVAL (bad argument), RP_ENOMEM. */
RP_API rp_status rp_plan_may_share(const rp_plan *p, rp_buf b, uint64_t spaces,
                                   int *ok);
/** @} */

#ifdef __cplusplus
}
#endif
#endif
