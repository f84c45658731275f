/* reprise: instantiating a graph for a backend and replaying it. */
#ifndef REPRISE_REPLAY_H
#define REPRISE_REPLAY_H

#include "reprise/record.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup rp_exec_fn Backends and executable graphs
 * A backend (openmp, cuda, xrt, and "reference", the sequential oracle)
 * instantiates an ended graph once into an ::rp_exec, which then runs it
 * any number of times. Device images persist across runs of one exec.
 * Thread safety: one exec is driven from one thread at a time (run,
 * launch, wait, rebind, profile: the caller serialises them); distinct
 * execs, of one graph or of several, may run in distinct threads at once.
 * The backend registry and the plugin loader (rp_backend_find(),
 * rp_plugin_load()) may be called from any thread: they lock.
 * @{ */

typedef struct rp_backend rp_backend;
typedef struct rp_exec rp_exec;

/** Options of rp_exec_create(). Initialise with rp_exec_opts_init(&o) or
 * `rp_exec_opts o = RP_EXEC_OPTS_INIT;` (a zero-filled struct, size 0, is
 * refused with RP_EINVAL), then set what you need. */
typedef struct rp_exec_opts {
  size_t size;      /**< sizeof the struct as the caller was compiled
                              with, set by rp_exec_opts_init() or
                              RP_EXEC_OPTS_INIT, so that the struct can
                              grow: members past it keep their defaults.
                              0 (zero-filled without init) is refused
                              with RP_EINVAL (docs/design.md, "Versioned
                              structs") */
  const char *mode; /**< backend mode: cuda "graph" (default),
                              "streams", "serial"; openmp "parallel"
                              (default) and "dynamic" (the same): the
                              stealing engine (docs/openmp.md), "owner"
                              (the first launch times every task, later
                              ones run each task on an owner thread
                              chosen from those times: for tiny tasks on
                              an idle machine), "serial"; mpi "mpi"
                              (default) and "whole" (stencils with a
                              halo not cut, docs/mpi.md); NULL: default */
  int nthreads;     /**< openmp: threads; 0: all cores given */
  const int *cores; /**< openmp: the cores to use; NULL: all */
  unsigned ncores;
  const char *xclbin;    /**< xrt: path to the xclbin */
  const int *device_map; /**< logical device -> physical device; NULL:
                              identity (cuda) / core subsets (openmp) */
  unsigned ndevice_map;
  int xrt_emulate;         /**< xrt: 1 runs on XRT's noop shim, CPU bodies
                              computing (as RP_XRT_EMULATE=1); 0: the
                              environment decides */
  unsigned xrt_emu_cus;    /**< xrt emulation: compute units per kernel of
                              the generated xclbin (as RP_XRT_EMU_CUS);
                              0: the environment or 1 */
  const char *cuda_update; /**< cuda: how rebind and set_scalar reach the
                              executable graph (as RP_CUDA_UPDATE): "auto"
                              (NULL) a kernel node's first set_scalar
                              moves it to the argument table (one CUDA
                              setter), its later ones are one copy of the
                              table before the next launch; "table" every
                              kernel that can in the table from
                              instantiate. Nodes outside the table and
                              copies (rebind): CUDA's setter per changed
                              node, or the template's setters and one
                              cudaGraphExecUpdate when many changed;
                              "node" the setters always, "graph" the one
                              update always (their own set_scalar paths
                              are retired: docs/cuda.md) */
  int device_fold;         /**< cuda, without device_map: 1 folds logical
                              GPU devices past the machine's GPUs onto
                              the GPUs present (logical d on GPU d mod
                              count), and rp_exec_notice() says so after
                              rp_exec_create(); 0: rp_exec_create() fails
                              with RP_ENODEV when the graph names more
                              GPUs than the machine has */
  unsigned split;          /**< automatic chunked pipelining (docs/split.md):
                              0: off; k >= 2: every kernel declared
                              splittable (rp_kernel.split_axis) runs as k
                              chunks, and the host<->device copies of
                              exactly its following regions as k copies,
                              so that chunk i's copy in, kernel and copy
                              out overlap other chunks'; RP_EXEC_SPLIT_AUTO:
                              k chosen from the lane model
                              (rp_split_advise() with the backend's
                              calibrated model when saved). Results are
                              those of the graph as recorded. */
  size_t reshape_copies;   /**< copies reshaped for devices that pay a cost
                              per transfer (docs/plan.md, "Reshaped
                              copies"): 0: the backend's default (cuda:
                              RP_EXEC_RESHAPE_AUTO; the others: as
                              recorded); RP_EXEC_RESHAPE_NONE: as
                              recorded; T bytes: the
                              host->device copies of one buffer and
                              device that could all run where the first
                              of them runs merge into one copy per run
                              without a gap when they average fewer than
                              T bytes, and a device->host copy whose
                              bytes several independent operations (no
                              ancestor in common) wrote last splits into
                              one copy per writer when every piece has at
                              least T bytes;
                              RP_EXEC_RESHAPE_AUTO: T = 256 KiB, and a
                              run of larger copies in merges too when it
                              totals at most 16 MiB and none of its
                              copies but the last feeds a pipeline (a
                              kernel reading it directly followed by a
                              copy back). Not with a split that cuts
                              anything. Results are those of the graph as
                              recorded. */
  /** Checking mode, for the CPU backends (openmp, starpu, reference),
   * like compute-sanitizer for CUDA (docs/checking.md): 1: each kernel's
   * CPU body and each host task runs on shadow images of its buffers,
   * where the bytes it did not declare hold a canary pattern and pages
   * with no declared byte are inaccessible, twice (the canaries changed);
   * a read of such a page, a write outside the out/inout regions (a
   * canary changed, or an `in` region written), or a result that depends
   * on undeclared bytes fails the replay with RP_EACCESS, rp_exec_error()
   * naming the operation, the parameter and the byte. The replay then
   * runs one operation at a time on the calling side, in program order,
   * as the reference does (results are the same), ignoring the options
   * of parallelism (mode, nthreads, cores, device_map). 0: the
   * environment decides (RP_CHECK=1: on); -1: off. On a backend that runs
   * devices of its own (cuda, xrt, starpu mode "mpi") 1 fails with
   * RP_ENOTSUP and RP_CHECK=1 is ignored. */
  int check;
  /** Called after each batch of replays that rp_exec_run() or
   * rp_exec_wait() completes, with the number of replays in it, from the
   * calling thread: a caller showing progress (the library never prints)
   * counts them. NULL: none. */
  void (*progress)(void *user, unsigned replays);
  void *progress_user; /**< passed to progress */
} rp_exec_opts;

/** rp_exec_opts.split: choose the number of chunks from the lane model. */
#define RP_EXEC_SPLIT_AUTO 0xFFFFFFFFu
/** rp_exec_opts.reshape_copies: the default threshold, 256 KiB. */
#define RP_EXEC_RESHAPE_AUTO ((size_t)-1)
/** rp_exec_opts.reshape_copies: the copies as recorded, on every backend
 * (0 asks for the backend's default, which reshapes on cuda). */
#define RP_EXEC_RESHAPE_NONE ((size_t)-2)

/** An rp_exec_opts with its size set and every option at its default. */
#define RP_EXEC_OPTS_INIT                                                      \
  {                                                                            \
    sizeof(rp_exec_opts), NULL, 0, NULL, 0, NULL, NULL, 0, 0, 0, NULL, 0, 0,   \
        0, 0, NULL, NULL                                                       \
  }

/** The backend-specific members of rp_exec_opts, as bits of
 * rp_backend_options(): each backend reads those it declares, and
 * rp_exec_create() refuses with RP_EINVAL any other that is set (not at
 * its default), naming it and the ones the backend takes. mode is each
 * backend's own (its values are checked by it); device_fold, split,
 * reshape_copies, check and progress apply to every backend. */
enum {
  RP_EXEC_OPT_NTHREADS = 1u << 0,    /**< nthreads > 1 (openmp) */
  RP_EXEC_OPT_CORES = 1u << 1,       /**< cores, ncores (openmp) */
  RP_EXEC_OPT_DEVICE_MAP = 1u << 2,  /**< device_map (openmp, cuda, xrt) */
  RP_EXEC_OPT_XCLBIN = 1u << 3,      /**< xclbin (xrt) */
  RP_EXEC_OPT_XRT_EMULATE = 1u << 4, /**< xrt_emulate, xrt_emu_cus (xrt) */
  RP_EXEC_OPT_CUDA_UPDATE = 1u << 5  /**< cuda_update (cuda) */
};

/** @brief Set every option of @p o to its default and its size to this
 * header's (as RP_EXEC_OPTS_INIT): what every caller starts from. */
RP_API void rp_exec_opts_init(rp_exec_opts *o);

/** @brief Find a backend by name ("openmp", "cuda", "xrt", "reference").
 * NULL or "auto" picks the best one present (cuda with a GPU, else openmp,
 * else reference); the RP_BACKEND environment variable overrides "auto".
 * "cpu" picks the best CPU backend present (openmp, else reference; not
 * overridden by RP_BACKEND): checking mode's choice when none is named.
 * @return RP_OK, RP_ENOTSUP (not built in), RP_ENODEV (auto: none
 *   usable), RP_ENOTFOUND (no such name). */
RP_API rp_status rp_backend_find(const char *name, const rp_backend **out);

/** @brief The member name of RP_EXEC_OPT_* bit @p bit ("nthreads"), as
 * rp_exec_create()'s refusals name it; NULL for anything else. */
RP_API const char *rp_exec_option_name(unsigned bit);

/** @brief The RP_EXEC_OPT_* options backend @p be reads (0 for NULL). */
RP_API unsigned rp_backend_options(const rp_backend *be);

/** @brief The backend's name ("openmp"). */
RP_API const char *rp_backend_name(const rp_backend *be);

/** @brief Whether the backend can run here: RP_OK, RP_ENODEV. */
RP_API rp_status rp_backend_probe(const rp_backend *be);

/** @brief The backends built into the library, NULL-terminated. */
RP_API const rp_backend *const *rp_backend_list(void);

/** @brief Instantiate ended graph @p g for backend @p be (NULL: auto,
 * the best usable backend with a body for every kernel of @p g: a kernel
 * without a CUDA body keeps the graph off cuda; RP_BACKEND overrides).
 * @param o options or NULL. The graph must outlive the exec. With
 * o->split, the exec replays a rewritten graph that it owns (see
 * rp_exec_split_chunks()), and with o->reshape_copies one with its
 * copies reshaped (rp_exec_copies_reshaped()); node indices given to and
 * returned by the exec
 * (rp_exec_set_scalar(), rp_exec_profile(), rp_exec_timeline()) stay those
 * of @p g: a split operation's profile is the sum of its chunks' times,
 * its timeline entry their span.
 * @return RP_OK, RP_ESTATE (graph not ended), RP_ENODEV, RP_ENOKERNEL, ... */
RP_API rp_status rp_exec_create(rp_exec **out, const rp_graph *g,
                                const rp_backend *be, const rp_exec_opts *o);

/** @brief Run the graph @p iterations times back to back, then wait.
 * @return RP_OK or the first failure (rp_exec_error() names the op). */
RP_API rp_status rp_exec_run(rp_exec *x, unsigned iterations);

/** @brief Start @p iterations runs and return at once, on every backend
 * (the host may work meanwhile). A launch while runs are in flight first
 * waits for them. Don't touch the buffers' host arrays until
 * rp_exec_wait() or rp_exec_wait_buffer() says they are ready.
 * @return RP_OK, or a failure to start (the runs' own failures come from
 *   rp_exec_wait()). */
RP_API rp_status rp_exec_launch(rp_exec *x, unsigned iterations);

/** @brief Wait for launched runs.
 * @return RP_OK or the first failure of the runs. */
RP_API rp_status rp_exec_wait(rp_exec *x);

/** @brief Wait until the host array of buffer @p b holds its final value
 * of the last launched run, while the rest of the graph may still run:
 * the operations that write it in that run are done. The host may then
 * read the array (not write it: later operations may still read it) until
 * rp_exec_wait(). Without runs in flight it returns at once.
 * @return RP_OK, RP_EINVAL (no such buffer, or an internal one), or the
 *   first failure of the runs. */
RP_API rp_status rp_exec_wait_buffer(rp_exec *x, rp_buf b);

/** @brief Wall time in microseconds of the last rp_exec_run() (all its
 * iterations), or of the last launch + wait. */
RP_API double rp_exec_last_us(const rp_exec *x);

/** Type of the value rp_exec_run_until() tests. */
typedef enum {
  RP_UNTIL_F64 = 0,
  RP_UNTIL_F32 = 1,
  RP_UNTIL_I64 = 2,
  RP_UNTIL_I32 = 3
} rp_until_type;

/** How the value compares with the threshold for the loop to stop. */
typedef enum {
  RP_UNTIL_LT = 0,
  RP_UNTIL_LE = 1,
  RP_UNTIL_GT = 2,
  RP_UNTIL_GE = 3
} rp_until_cmp;

/** The predicate of rp_exec_run_until(): one value in a buffer that the
 * graph writes every replay (a residual a kernel reduces, say). */
typedef struct rp_until {
  rp_buf buf;      /**< a buffer with a host array that the graph
                              brings home each replay */
  uint64_t offset; /**< byte offset of the value in it */
  rp_until_type type;
  rp_until_cmp cmp; /**< stop once value cmp threshold holds */
  double threshold;
} rp_until;

/** @brief Replay until a value the graph computes says to stop: after each
 * replay (or each @p check_every replays) the value is read, and the loop
 * ends once it satisfies the predicate or @p max_replays have run. Results
 * equal those of the same number of replays one by one. A backend may test
 * the value itself between replays (cuda, graph mode: one conditional
 * WHILE node, no host round trip); where it cannot, the host tests it and,
 * once the call succeeded, rp_exec_notice() says why ("cuda: run_until
 * checks on the host: ..."; empty when nothing was refused).
 * @param done receives the number of replays run (may be NULL).
 * @return RP_OK (converged or not: compare *done with max_replays),
 *   RP_EINVAL (bad predicate: no such buffer, internal, value past its
 *   end), or the replays' failure. */
RP_API rp_status rp_exec_run_until(rp_exec *x, const rp_until *u,
                                   unsigned max_replays, unsigned check_every,
                                   unsigned *done);

/** @brief Point buffer @p b's host array at @p host for the next runs,
 * without instantiating again (waits for launched runs first).
 * @param bytes the size of the new array: at least the buffer's size.
 * @return RP_OK, RP_EINVAL (no such buffer, an internal one, NULL, or an
 *   array smaller than the buffer), or the backend's failure. */
RP_API rp_status rp_exec_rebind(rp_exec *x, rp_buf b, void *host,
                                uint64_t bytes);

/** The launch geometry a backend chose for one kernel node. */
typedef struct rp_kernel_block {
  unsigned block[3];  /**< threads per block along x, y, z */
  unsigned grid[3];   /**< blocks along x, y, z */
  double occupancy;   /**< resident threads per multiprocessor over its
                           limit, in [0, 1]; < 0: not known */
  const char *reason; /**< where the shape comes from: "occupancy" (and
                           the hint), "kernel's own", "RP_CUDA_BLOCK",
                           "default"; static storage */
} rp_kernel_block;

/** @brief The launch geometry (block shape, grid, occupancy, reason) that
 * the backend chose for kernel node @p n of the graph given to
 * rp_exec_create() (docs/cuda.md, "Launch geometry"), also when the exec
 * replays a rewrite of it (copies reshaped; with the split option, the
 * first chunk's).
 * @return RP_OK, RP_EINVAL (not a kernel node, NULL @p out), RP_ENOTSUP
 *   (the backend has no launch geometry: openmp, xrt, starpu, or a kernel
 *   run by a host wrapper). */
RP_API rp_status rp_exec_kernel_block(rp_exec *x, rp_node n,
                                      rp_kernel_block *out);

/** One named figure a backend keeps about an exec (rp_exec_stats()). */
typedef struct rp_exec_stat {
  const char *name; /**< "tasks", "sends", ...; static storage */
  double value;
} rp_exec_stat;

/** @brief The figures the exec's backend keeps about @p x, by name: up
 * to @p max of them into @p out (may be NULL with @p max 0); @p count
 * (may be NULL) receives how many there are. The starpu backend gives
 * what one rank lowered at instantiate ("rank", "nranks", "nodes",
 * "tasks", "sends", "recvs", "scanned", "visited", "accesses", "images",
 * "handles", "aliased", "user_arrays", "image_bytes", "pieces",
 * "lower_us", "register_us"), the CPU time its task bodies took over
 * all launches so far ("body_cpu_us") and the handles its part needs
 * ("part_handles"), in modes "mpi" and "implicit" its trace's totals
 * ("trace_*": rp_exec_trace()), in mode "mpi" where its threads run
 * ("local_ranks", "local_rank", "cores", "bound", "workers",
 * "first_cpu", "mpi_cpu"); the mpi backend its rank's lowering and team
 * ("rank", "nranks", "nthreads", "bound", "ncores", "core_first",
 * "core_last", "tasks", "sends", "recvs", "edges", "image_bytes") and
 * what the placement gives the rank ("part_tasks", "part_sends",
 * "part_recvs"), and its stencils cut into interior and boundary
 * slices ("cut", "interior", "boundary", "interior_waits",
 * "boundary_waits", "engine_tasks"): docs/mpi.md. The openmp backend
 * gives its idle threads' policy ("idle_yield": 1 when the last launch's
 * idle threads yielded their CPUs, "usable_cpus", "others_runnable") and
 * how they waited ("spin_max": the most looks for work in a row without
 * sleeping, "naps"): docs/openmp.md. Safe to call while replays run.
 * @return RP_OK, RP_EINVAL (NULL @p x, NULL @p out with @p max > 0),
 *   RP_ENOTSUP (the backend keeps none: reference, xrt, cuda). */
RP_API rp_status rp_exec_stats(const rp_exec *x, rp_exec_stat *out,
                               unsigned max, unsigned *count);

/** @brief The figure named @p name of rp_exec_stats().
 * @return RP_OK, RP_EINVAL (a NULL argument), RP_ENOTSUP (the backend
 *   keeps none), RP_ENOTFOUND (not one of its names). */
RP_API rp_status rp_exec_stat_get(const rp_exec *x, const char *name,
                                  double *value);

/** @brief Start (@p on nonzero: the totals zeroed first) or stop tracing
 * the launches of @p x: while on, the backend stamps the tasks of each
 * launch and adds where the rank's time went to its figures, named
 * "trace_*" in rp_exec_stats(). The starpu backend traces in modes "mpi"
 * and "implicit": "trace_launches", "trace_replays", "trace_tasks",
 * "trace_recvs", and in microseconds "trace_wall_us" cut into
 * "trace_body_us", "trace_halo_us", "trace_host_us", "trace_sched_us",
 * "trace_recv_us", "trace_host_recv_us", "trace_submit_wait_us",
 * "trace_other_us", besides "trace_submit_us", "trace_ready_lat_us",
 * "trace_done_lat_us" (docs/mpi.md, "Where the time goes, per rank").
 * Call it between launches.
 * @return RP_OK, RP_EINVAL (NULL @p x), RP_ENOTSUP (the backend, or its
 *   mode, does not trace: every backend but starpu; starpu's "explicit"). */
RP_API rp_status rp_exec_trace(rp_exec *x, int on);

/** @brief The backend's own prediction of one replay of @p x per rank
 * (microseconds into @p rank_us, @p nranks entries), from the tasks and
 * messages its lowering gives every rank, simulated with the model
 * parameters @p model (@p nmodel (name, value) pairs; a parameter left
 * out takes its default) and the operations' costs @p op_us (one entry
 * per node, as rp_exec_profile() fills it; NULL: the backend's own
 * profile of its tasks, where it keeps one: the mpi backend). The overall
 * prediction is the largest entry. The starpu backend predicts mode "mpi" on @p nranks
 * ranks, whatever its mode (docs/mpi.md, "Predicting a replay per rank"):
 * "latency_us" and "gbps" (a message of b bytes arrives latency_us +
 * b / (gbps * 1e3) us after its send), "task_us" (a task's cost besides
 * its body), "msg_us" (each send and receive's), "launch_us" (a launch's,
 * before its first task), "workers" (per rank; default 1), "body_scale"
 * (the bodies' slowdown; default 1), "whole" (1: order the tasks as
 * whole-image data dependencies would); every other default 0 (gbps 0:
 * bytes cost nothing). It simulates x's plan: that of mode "mpi" in that
 * mode (spaces on different ranks keep images of their own); @p op_us
 * must not be NULL. The mpi backend predicts what it lowered on each of
 * its ranks (@p nranks: the exec's), collective over them (every rank
 * calls it with the same model; the figures on every rank; docs/mpi.md,
 * "Predicting the mpi backend's replay"): "latency_us", "gbps",
 * "task_us", "launch_us" as above (default 0), and "measure_reps" (> 0:
 * first measure latency and bandwidth by that many ping-pong round trips
 * of 8 bytes and of "measure_bytes", default 1 MiB, between rank 0 and
 * every other rank, which replace "latency_us" and "gbps" and are kept as
 * the figures "net_latency_us" and "net_gbps" of rp_exec_stats()); with
 * @p op_us NULL each task's median time over the exec's last 5
 * rp_exec_profile() calls.
 * @return RP_OK, RP_EINVAL (a NULL argument, @p nranks 0, a parameter
 *   the backend does not know, a negative or non-finite value; mpi:
 *   @p nranks not the exec's, @p op_us NULL before any profile),
 *   RP_ENOMEM, RP_ENODEV (mpi: an MPI call failed), RP_ENOTSUP (the
 *   backend does not predict: every backend but starpu and mpi; a host
 *   task whose rows lie on several ranks). */
RP_API rp_status rp_exec_predict(const rp_exec *x, const rp_exec_stat *model,
                                 unsigned nmodel, const double *op_us,
                                 unsigned nranks, double *rank_us);

/** @brief Change scalar parameter @p param of kernel node @p n. */
RP_API rp_status rp_exec_set_scalar(rp_exec *x, rp_node n, unsigned param,
                                    rp_slot value);

/** @brief Run once, timing every operation; @p op_us (one entry per node)
 * receives microseconds, fit for rp_analysis_opts.measured_us. It runs in
 * place: the buffers' host arrays (and the exec's device images) advance
 * by one replay, as with rp_exec_run(); rp_exec_profile_opts() does not. */
RP_API rp_status rp_exec_profile(rp_exec *x, double *op_us);

/** Flags of rp_profile_opts.flags. */
enum {
  RP_PROFILE_IN_PLACE = 1u << 0 /**< profile x itself: the host arrays and
                                     device images advance by the runs, as
                                     with rp_exec_run() (no second
                                     instance, no scratch copies) */
};

/** Options of rp_exec_profile_opts(); start from RP_PROFILE_OPTS_INIT or
 * rp_profile_opts_init(). */
typedef struct rp_profile_opts {
  size_t size;    /**< sizeof(rp_profile_opts) as the caller was compiled
                       (set by the INIT macro and the init function); 0
                       and unknown sizes are refused (docs/design.md,
                       "Versioned structs") */
  unsigned runs;  /**< profiled replays, at most 1000; 0: 5 */
  unsigned flags; /**< RP_PROFILE_* */
} rp_profile_opts;

/** An rp_profile_opts with its size set and every option at its default. */
#define RP_PROFILE_OPTS_INIT                                                   \
  { sizeof(rp_profile_opts), 0, 0 }

/** @brief Set @p o to RP_PROFILE_OPTS_INIT. NULL is a no-op. */
RP_API void rp_profile_opts_init(rp_profile_opts *o);

/** @brief Profile @p o->runs times (@p o NULL: the defaults, 5 runs) and
 * keep, per node, the median, the smallest and the largest time
 * (microseconds); any of the three arrays (one entry per node) may be
 * NULL. Fit for rp_graph_set_measured_all() and
 * rp_analysis_opts.measured_us. The user's data stays as it was: the runs
 * replay a second instance of the exec (same graph, backend and options,
 * its scalars) on scratch copies of the host arrays, so that for its
 * duration the graph's memory is needed twice; where the backend cannot
 * build one (no rebind, no room), x runs and its host arrays are put back
 * afterwards (its device images advance, and rp_exec_notice() says so).
 * With RP_PROFILE_IN_PLACE in @p o->flags x runs and its data advances.
 * @return RP_OK, RP_EINVAL (runs > 1000, unknown flags, options of an
 *   unknown size), RP_ENOMEM, RP_ENOTSUP (the backend cannot profile), or
 *   the failure of a run. */
RP_API rp_status rp_exec_profile_opts(rp_exec *x, const rp_profile_opts *o,
                                      double *median_us, double *min_us,
                                      double *max_us);

/** @brief Deprecated: rp_exec_profile_opts() with runs and flags. */
RP_DEPRECATED("call it rp_exec_profile_opts (options, not _ex)")
static inline rp_status rp_exec_profile_ex(rp_exec *x, unsigned runs,
                                           unsigned flags, double *median_us,
                                           double *min_us, double *max_us) {
  rp_profile_opts o = {sizeof(rp_profile_opts), runs, flags};
  return rp_exec_profile_opts(x, &o, median_us, min_us, max_us);
}

/** @brief Deprecated: rp_exec_profile_opts() with runs. */
RP_DEPRECATED("call it rp_exec_profile_opts (options, not _n)")
static inline rp_status rp_exec_profile_n(rp_exec *x, unsigned runs,
                                          double *median_us, double *min_us,
                                          double *max_us) {
  rp_profile_opts o = {sizeof(rp_profile_opts), runs, 0};
  return rp_exec_profile_opts(x, &o, median_us, min_us, max_us);
}

/** @brief One overlapped run recording when each operation started and
 * ended (µs since the run's start, one entry per node), for
 * rp_analysis_write_trace_achieved() and rp_analysis_departures(). The reference
 * backend runs one operation at a time: its timeline is its profile laid
 * end to end. Other backends need the backend table's timeline hook.
 * @return RP_OK, RP_ENOTSUP (the backend cannot), or the run's failure. */
RP_API rp_status rp_exec_timeline(rp_exec *x, double *start_us, double *end_us);

/** @brief How exec @p x was split (rp_exec_opts.split): the number of
 * chunks (1 when nothing was split), and in @p nkernels / @p ncopies (may
 * be NULL) the kernels and copies cut. */
RP_API unsigned rp_exec_split_chunks(const rp_exec *x, uint32_t *nkernels,
                                     uint32_t *ncopies);

/** @brief The operation of the graph given to rp_exec_create() that
 * operation @p m of rp_exec_graph(x) comes from (its chunk or reshaped
 * copy); @p m itself when the exec replays that graph unchanged; RP_NONE
 * when @p m is past the end. */
RP_API rp_node rp_exec_op_origin(const rp_exec *x, rp_node m);

/** @brief How exec @p x reshaped its copies (rp_exec_opts.reshape_copies):
 * in @p merged the host->device copies merged into an earlier one, in
 * @p split the device->host copies split per writer (either may be NULL).
 * @return 1 when the exec replays the reshaped graph, 0 when the copies
 *   are as recorded. */
RP_API int rp_exec_copies_reshaped(const rp_exec *x, uint32_t *merged,
                                   uint32_t *split);

/** @brief The backend of @p x. */
RP_API const rp_backend *rp_exec_backend(const rp_exec *x);

/** @brief Why the last call on @p x failed ("" when it succeeded). The
 * same text is the thread's rp_last_error() after that call. */
RP_API const char *rp_exec_error(const rp_exec *x);

/** @brief What the last call on @p x noted while succeeding ("" if
 * nothing): logical devices folded onto the GPUs present (after
 * rp_exec_create()), an executable graph instantiated again after a
 * refused update, a backend that could not loop on the device so that the
 * host checked the predicate (after rp_exec_run_until()). Never an error. */
RP_API const char *rp_exec_notice(const rp_exec *x);

/** @brief Destroy; waits for launched runs first. NULL is a no-op. */
RP_API void rp_exec_destroy(rp_exec *x);

/** @brief Sequential reference replay: @p iterations runs of @p g, one
 * operation at a time in program order on the host (the oracle). */
RP_API rp_status rp_replay_reference(const rp_graph *g, unsigned iterations);

/** @} */

#ifdef __cplusplus
}
#endif
#endif
