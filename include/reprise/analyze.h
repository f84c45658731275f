/* reprise: lanes, costs, critical path, schedule, bounds and reports. */
#ifndef REPRISE_ANALYZE_H
#define REPRISE_ANALYZE_H

#include <stdio.h>
#include "reprise/record.h"
#include "reprise/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup rp_model_fn Machine model
 * A machine model says what a backend on one machine costs beyond the
 * operations' own work: the overhead of each operation in each replay mode
 * (a node of a CUDA graph, a launch on a stream, a launch followed by a
 * synchronisation, an OpenMP task), copy bandwidth and latency in each
 * direction alone and with both directions at once on one link, peer
 * copies, host tasks, how many compute units each device has and which
 * logical devices share one physical device, and, for a team of CPU
 * threads, the share of a core each thread gets, what a task and a split
 * kernel cost the team, and the memory bandwidth the team shares.
 *
 * The model is calibrated on first use: rp_model_get_opts() (and
 * rp_analysis_opts_calibrated(), which the examples use) load it from the
 * user's cache directory, or, when the cache has none for this machine
 * (host name, CPU model, GPU name), backend, configuration (thread count,
 * device map) and library version, measure it by replaying small graphs
 * (a few seconds), save it and report one progress line through a
 * callback. `reprise calibrate` refreshes it; RP_MODEL_NO_AUTO and the
 * environment variable RP_NO_AUTOCALIBRATE=1 turn automatic calibration
 * off. docs/model.md describes the measurements, the prediction and the
 * file format.
 * @{ */

/** Most replay modes a model describes. */
#define RP_MODEL_MAX_MODES 4

/** Overhead of one replay mode. */
typedef struct rp_model_mode {
  char name[16];        /**< "graph", "streams", "serial", "parallel" */
  double op_us;         /**< overhead per operation */
  double run_us;        /**< overhead per replay (launch and wait) */
  int host_issue;       /**< 1: the host issues operations one after the
                             other, each taking op_us of host time before
                             it can start (streams, serial); 0: op_us is a
                             delay of each node on its device (graph,
                             OpenMP tasks) */
} rp_model_mode;

/** One copy direction: time = latency_us + bytes / (gbps * 1e3). */
typedef struct rp_model_link {
  double gbps;          /**< GB/s (1e9 B/s); 0: copies of this kind cost 0
                             (host and device share memory) */
  double latency_us;
} rp_model_link;

/** A calibrated machine model. Initialise with rp_model_init(). */
typedef struct rp_model {
  char backend[32];     /**< "openmp", "cuda", ... */
  char machine[64];     /**< host name of the calibration */
  int calibrated;       /**< 1 if measured (loaded or calibrated) */
  rp_model_mode mode[RP_MODEL_MAX_MODES];
  unsigned nmode;
  rp_model_link h2d, d2h, p2p;
  double duplex_h2d_gbps;  /**< h2d bandwidth while a d2h runs on the same
                                link (0: as alone) */
  double duplex_d2h_gbps;  /**< d2h bandwidth while an h2d runs */
  double host_task_us;     /**< overhead of a host task */
  /** Compute units of each logical device: a kernel that its backend
   * splits over them occupies all of them (CPU threads of the device's
   * group), one that it does not split occupies one; 0 or 1: the device
   * runs one kernel at full speed, concurrent kernels share it. */
  unsigned units[RP_MAX_DEVICES];
  /** Physical device of each logical device: logical devices with the
   * same physical device share its compute. -1: its own. */
  int phys[RP_MAX_DEVICES];
  unsigned physical_devices; /**< devices the backend found (cuda: GPUs),
                                as calibrated; 0: unknown */
  uint64_t split_min;      /**< kernels of at least this many points are
                                split over the units (openmp: 8192) */
  double split_efficiency; /**< share of a core each thread of a team of
                                several gets, as calibrated (a
                                compute-bound kernel split over the team
                                against one thread, divided by the team
                                size): every unit of a team runs at e; the
                                serial replay's one thread at 1. 0: 1 */
  /** GPU multiprocessors (cuda: SMs, as calibrated) of each physical
   * device with one compute unit; 0: not a GPU model. Kernels on such a
   * device run side by side, each occupying min(1, thread blocks /
   * multiprocessors) of it, sharing it out beyond (docs/model.md). */
  unsigned multiprocessors;
  /** Threads one multiprocessor holds at once (cuda: 2048 on Hopper, as
   * calibrated): with it, a kernel occupies min(1, threads /
   * (multiprocessors * threads_per_mp)) of its GPU instead of blocks /
   * multiprocessors. 0: unknown. */
  unsigned threads_per_mp;

  /* What the calibration was made for: the cache key (docs/model.md). */
  char cpu[64];            /**< CPU model name ("" unknown) */
  char gpu[64];            /**< cuda: GPU 0's name; "" elsewhere */
  char version[32];        /**< library version and model revision of the
                                calibration ("0.1.0/m2") */
  unsigned threads;        /**< team size calibrated (openmp); 0: the
                                backend has no team */
  char device_map[64];     /**< device map calibrated with ("0,0,1");
                                "": none (the backend's default) */
  double load;             /**< the machine's load average (1 minute) when
                                calibrated; a model calibrated on a busy
                                machine (load above its cores) is
                                calibrated again once the load is below
                                half of it. 0: unknown */
  unsigned cpus;           /**< online cores when calibrated */

  /* A team of CPU threads (openmp): host tasks, kernels and copies share
   * one pool of threads. */
  unsigned host_units;     /**< threads that run host tasks: with > 0,
                                host tasks and the copies that move bytes
                                are tasks of the pool like kernels (host
                                tasks on any group's threads); 0: host
                                tasks hold one "host" lane (cuda) */
  double task_us;          /**< thread time per task beyond its work (the
                                engine's claim, hand-off and bookkeeping),
                                measured with independent empty tasks at
                                the calibrated thread count */
  double split_us;         /**< time a kernel split over the team takes
                                beyond its share of work (publishing its
                                chunks, waiting for the last) */
  double edge_us;          /**< wait of an operation whose input comes
                                from another thread (a hand-off between
                                cores; on a busy machine, a preempted
                                thread): paid by operations with several
                                predecessors and by all but the first
                                successor of an operation with several */
  /** Streaming bandwidths (GB/s) of a triad kernel (bytes counted as the
   * analysis counts them: reads once, writes and read-writes twice, as
   * write-allocate moves them),
   * out of cache (mem_*) and within cache (cache_*), by one thread
   * (*1_gbps) and by the whole team split over it: operations of the
   * pool that run at once share the team's bandwidth of their regime (a
   * roofline cap: each draws its bytes / its cost at one thread). 0: no
   * cap. */
  double mem1_gbps, mem_gbps, cache1_gbps, cache_gbps;

  /* What the backend is and what the machine does now: filled from the
   * exec or the backend (rp_analysis_opts_from_exec(),
   * rp_analysis_opts_for(), rp_analysis_opts_calibrated()), not saved. */
  int in_order;            /**< the backend replays one operation at a
                                time in program order (reference): the
                                overlapped replay is the serial one, 1.00x */
  int shared_memory;       /**< a CPU backend: host and device images share
                                memory, so a copy the plan elides costs
                                nothing and holds no lane, and a copy
                                without a measured cost is taken for
                                elided */
  int load_measured;       /**< runnable and usable_cpus were measured */
  double runnable;         /**< tasks runnable on the machine besides the
                                caller's own threads (/proc/stat
                                procs_running, median of 7 samples 5 ms
                                apart; confined to some of the machine's
                                CPUs, their share) */
  unsigned usable_cpus;    /**< CPUs the process may run on (its affinity
                                mask) */
} rp_model;

/** Revision of what the calibration measures; part of the cache key, so
 * that a library measuring differently recalibrates. */
#define RP_MODEL_REVISION 2

/** @brief An uncalibrated model: no overheads, copies at 25 GB/s, one
 * compute unit per device, every logical device its own. */
RP_API void rp_model_init(rp_model *m);

/** @brief The mode named @p name, or NULL. */
RP_API const rp_model_mode *rp_model_find_mode(const rp_model *m,
                                               const char *name);

/** @brief Path of the default calibration file of @p backend on this
 * machine: $XDG_CACHE_HOME/reprise/<backend>-<hostname>.json, else
 * $HOME/.cache/reprise/... (the cache of rp_model_get_opts() adds the
 * configuration: rp_model_cache_path()). @return RP_OK, RP_EINVAL (no
 * room, no $HOME), RP_ENOTFOUND. */
RP_API rp_status rp_model_path(const char *backend, char *path, size_t size);

/** @brief Read a model ("reprise-model" JSON, docs/model.md).
 * @return RP_OK, RP_EIO (cannot open), RP_EPARSE (malformed, with the
 *   reason in rp_last_error()). */
RP_API rp_status rp_model_load(rp_model *m, const char *path);

/** @brief Write a model as JSON; creates the parent directory, writes a
 * temporary file and renames it (a reader never sees half a file).
 * @return RP_OK, RP_EIO. */
RP_API rp_status rp_model_save(const rp_model *m, const char *path);

/** @brief Write a model as JSON to @p fp. */
RP_API rp_status rp_model_write_json(const rp_model *m, FILE *fp);

/** @brief Measure the model of backend @p be (NULL: auto) by building and
 * replaying small graphs (chains of empty kernels, host tasks and tiny
 * copies in every mode; copies of two sizes, alone and both directions at
 * once; a peer copy where the backend has two devices; on a team of
 * threads: independent and split tasks, a compute-bound and a streaming
 * kernel in and out of cache against one thread). Each figure is the
 * median of @p runs timed replays (0: 5). @p xo: exec options (threads,
 * cores, device map) or NULL. Fills the key fields (machine, cpu, gpu,
 * version, threads, device_map). Takes a few seconds.
 * @return RP_OK or the failure of a replay. */
RP_API rp_status rp_model_calibrate(rp_model *m, const rp_backend *be,
                                    const rp_exec_opts *xo, unsigned runs);

/** Flags of rp_model_get() and rp_model_opts.flags. */
enum {
  RP_MODEL_CALIBRATE = 1u << 0, /**< calibrate and save when the cache has
                                     no model for this key, even with
                                     RP_NO_AUTOCALIBRATE=1 */
  RP_MODEL_REFRESH = 1u << 1,   /**< calibrate and save even when cached
                                     (`reprise calibrate`) */
  RP_MODEL_NO_AUTO = 1u << 2,   /**< rp_model_get_opts(): never calibrate
                                     unasked: the cache only */
  RP_MODEL_NO_PROBE = 1u << 3   /**< rp_analysis_opts_calibrated(): do
                                     not measure the machine's load now
                                     (never withhold the prediction) */
};

/** Progress of an automatic calibration: one line of text without a
 * newline ("calibrating the openmp model of host (2 threads), once: ..."),
 * given before it starts. The library never prints; a program prints
 * it. */
typedef void (*rp_model_progress_fn)(void *user, const char *line);

/** Options of rp_model_get_opts(). Zero-initialise, then set what you
 * need: zero means calibrate on first use, cache in the user's cache
 * directory. */
typedef struct rp_model_opts {
  unsigned flags;        /**< RP_MODEL_* */
  unsigned runs;         /**< timed replays per figure (0: 5) */
  rp_model_progress_fn progress; /**< told before a calibration; NULL */
  void *user;            /**< passed to progress */
  const char *cache_dir; /**< folder of the cached models; NULL:
                              $XDG_CACHE_HOME/reprise, else
                              $HOME/.cache/reprise */
  const char *version;   /**< the library version the key holds; NULL:
                              rp_version() (a test can change it) */
} rp_model_opts;

/** @brief Path of the cached model of backend @p be (NULL: auto) run
 * with exec options @p xo (threads, device map; NULL: defaults) on this
 * machine: <cache>/<backend>-<host>[-t<threads>][-m<map>].json, the cache
 * being @p o's cache_dir, else $XDG_CACHE_HOME/reprise, else
 * $HOME/.cache/reprise. @return RP_OK, RP_EINVAL, RP_ENOTFOUND (no cache
 * folder). */
RP_API rp_status rp_model_cache_path(const rp_backend *be,
                                     const rp_exec_opts *xo,
                                     const rp_model_opts *o, char *path,
                                     size_t size);

/** @brief The model of backend @p be (NULL: auto) on this machine for
 * exec options @p xo: loaded from the cache (rp_model_cache_path()) when
 * its key (host name, CPU model, GPU name, thread count, device map,
 * library version and model revision) is this one; else calibrated
 * (rp_model_calibrate(), after telling o->progress), saved and returned,
 * unless RP_MODEL_NO_AUTO is set or the environment has
 * RP_NO_AUTOCALIBRATE=1 (then RP_ENOTFOUND) and RP_MODEL_CALIBRATE is
 * not set. RP_MODEL_REFRESH calibrates in any case. A model that cannot
 * be saved (no cache folder, read-only) is still returned.
 * @param o options or NULL (calibrate on first use).
 * @return RP_OK, RP_ENOTFOUND (not cached and not calibrated), RP_EINVAL,
 *   or the failure of the calibration. */
RP_API rp_status rp_model_get_opts(rp_model *m, const rp_backend *be,
                                   const rp_exec_opts *xo,
                                   const rp_model_opts *o);

/** @brief rp_model_get_opts() with the cache only (@p flags 0) or
 * RP_MODEL_CALIBRATE / RP_MODEL_REFRESH in @p flags, and no progress.
 * @return as rp_model_get_opts(). */
RP_API rp_status rp_model_get(rp_model *m, const rp_backend *be,
                              const rp_exec_opts *xo, unsigned flags);

/** @brief Calibrations this process has run (rp_model_calibrate()
 * calls), for tests and tools. */
RP_API unsigned long rp_model_calibrations(void);

/** @} */

/** @defgroup rp_analysis_fn Analysis
 * An analysis puts every operation of an ended graph on a lane
 * (compute:N, h2d:N, d2h:N or copy:N, p2p:N, host), gives it a cost (given,
 * measured or modelled), and computes the serial time, the critical path,
 * the lane loads, the bound, the Amdahl form of the overlap bound and a list
 * schedule with its makespan. See docs/design.md, "Lanes, costs and bounds".
 * @{ */

typedef struct rp_analysis rp_analysis;

/** Options of an analysis. Initialise with rp_analysis_opts_init(), also
 * before a function that fills it in (it reads the size). */
typedef struct rp_analysis_opts {
  size_t size;              /**< sizeof the struct as the caller was
                                 compiled with, set by
                                 rp_analysis_opts_init(): members past it
                                 keep their defaults; 0 is refused with
                                 RP_EINVAL (docs/design.md, "Versioned
                                 structs") */
  unsigned copy_engines;    /**< 2 (h2d and d2h lanes) or 1 (copy lane) */
  double h2d_gbps;          /**< modelled bandwidths, GB/s (1e9 B/s) */
  double d2h_gbps;
  double p2p_gbps;
  double kernel_us;         /**< cost of a kernel with none given */
  double host_us;           /**< cost of a host task with none given */
  const double *measured_us;/**< per node (one entry for each), from a
                                 profiled replay; NULL, or negative
                                 entries: not measured (the graph's own
                                 measured costs are used then) */
  const unsigned *compute_units; /**< per device: kernels of device d run
                                 on compute_units[d] lanes "compute:d.u",
                                 taken in turn in program order (an FPGA's
                                 compute units); NULL, 0 or 1: one lane
                                 "compute:d" */
  unsigned ncompute_units;  /**< entries in compute_units */
  const rp_model *model;    /**< calibrated model for the prediction beside
                                 the bounds; NULL: none (the prediction is
                                 then the schedule's) */
  const char *mode;         /**< overlapped mode predicted ("graph",
                                 "streams", "parallel"); NULL: the model's
                                 first mode that is not "serial" */
  const char *serial_mode;  /**< baseline mode; NULL: "serial" */
  /** > 1: the graph runs over MPI ranks as the starpu backend's mode
   * "mpi" places it (the host on rank 0, device d on rank d % nranks, the
   * rows of a distributed buffer's part p on rank p % nranks): a copy
   * between spaces of two ranks runs on the lane "net:a-b" (a < b) of
   * that pair of ranks and costs net_latency_us + bytes / net_gbps
   * (calibrate both with tools/bench/bench_mpi_pingpong), plus twice its
   * measured cost when it was measured (the pack and the unpack at its
   * ends, each a copy in memory), whatever was given for it; a copy
   * within one rank whose ends that rank keeps in one memory (as the
   * backend does when the coherence model allows it) costs 0. 0 or 1: one
   * process, no net lanes. */
  unsigned nranks;
  double net_latency_us;    /**< one-way latency of a message, us */
  double net_gbps;          /**< bandwidth between two ranks, GB/s */
} rp_analysis_opts;

/** Where a cost came from. */
typedef enum {
  RP_COST_GIVEN = 0,
  RP_COST_MEASURED = 1,
  RP_COST_MODELLED = 2,   /**< copies: bytes / bandwidth */
  RP_COST_DEFAULT = 3     /**< kernels and host tasks: the default */
} rp_cost_source;

/** Schedule of one operation. */
typedef struct rp_op_sched {
  uint32_t lane;          /**< index into the lanes */
  double cost_us, start_us, end_us, slack_us;
  int critical;           /**< on the critical path */
  rp_cost_source source;
} rp_op_sched;

/** Headline figures. */
typedef struct rp_summary {
  double serial_us, critical_path_us, max_lane_us, makespan_us;
  double bound;                 /**< the upper bound: serial / max(critical
                                     path, max lane); with a model of a team
                                     of threads (host_units > 0): serial /
                                     max(longest path, a split kernel
                                     costing its work over its group's
                                     threads; the work over the threads) */
  const char *limited_by;       /**< "critical_path", a lane name, or
                                     "threads" (the work over a team) */
  double amdahl_compute_us, amdahl_copy_us, amdahl_speedup;
  double predicted_speedup;     /**< the headline prediction: the machine
                                     model's (model_speedup) when the
                                     analysis has one; without one the list
                                     schedule's (schedule_speedup), which
                                     knows of no overhead and which the
                                     reports call a bound only */
  int modelled;                 /**< a model was given */
  double model_serial_us;       /**< predicted serial replay, overheads in */
  double model_overlap_us;      /**< predicted overlapped replay */
  double model_speedup;         /**< model_serial_us / model_overlap_us */
  double schedule_speedup;      /**< serial / makespan of the list schedule
                                     (a diagnostic) */
  int calibrated;               /**< the model was calibrated (measured) */
  int withheld;                 /**< the machine is busy: the team of T
                                     threads could count on less than 85 %
                                     of its cores (usable_cpus / (runnable
                                     + T) < 0.85); predicted_speedup is the
                                     quiet machine's, which this replay
                                     will not see, and the reports print
                                     "withheld" with the load instead */
  double runnable;              /**< other runnable tasks measured (when
                                     the model measured the load) */
  unsigned usable_cpus;         /**< CPUs the process may use, then */
} rp_summary;

/** @brief Default options: 2 copy engines, 25 GB/s each way and peer,
 * 10 us per kernel and host task without a cost. */
RP_API void rp_analysis_opts_init(rp_analysis_opts *o);

/** @brief Analyse an ended graph. The analysis keeps a pointer to the
 * graph, which must outlive it. Slack is measured against the schedule:
 * how late an operation can start without the makespan growing, with the
 * order on each lane kept.
 * @param o options or NULL for defaults.
 * @return RP_OK, RP_ESTATE (graph not ended), RP_EINVAL (bad options, or
 *   costs that sum past what a double holds), RP_ENOMEM. */
RP_API rp_status rp_analyze(const rp_graph *g, const rp_analysis_opts *o,
                            rp_analysis **out);

/** @brief Destroy an analysis. NULL is a no-op. */
RP_API void rp_analysis_destroy(rp_analysis *a);

/** @brief The headline figures; limited_by points into the analysis and
 * lives as long as it. */
RP_API void rp_analysis_summary(const rp_analysis *a, rp_summary *out);

/** @brief Schedule of node @p n. @return RP_OK or RP_EINVAL. */
RP_API rp_status rp_analysis_op(const rp_analysis *a, rp_node n,
                                rp_op_sched *out);

/** @brief Start and end of node @p n in the model's prediction of the
 * overlapped replay (µs from its start, per-replay overhead excluded).
 * @return RP_OK, RP_EINVAL, RP_ENOTFOUND (analysis without a model). */
RP_API rp_status rp_analysis_op_model(const rp_analysis *a, rp_node n,
                                      double *start_us, double *end_us);

/** @brief Fill analysis options from what exec @p x really runs: its
 * backend's mode (the overlapped mode predicted), and in @p m (which the
 * options then point to) the compute units of each device (openmp: the
 * threads of the device's group), the pool of threads that runs host
 * tasks (openmp: m->host_units, the team) and which logical devices share
 * a physical device (the exec's device map). The model's calibrated
 * figures are left as they are (rp_analysis_opts_calibrated() loads or
 * calibrates them first). @p m should hold the
 * calibration (rp_model_get()) or rp_model_init(); @p o is initialised
 * with rp_analysis_opts_init() first. @p units receives RP_MAX_DEVICES
 * entries for o->compute_units (the bound's lanes), may be NULL. It also
 * says what the backend is (m->in_order: the reference; m->shared_memory
 * and free copy links: a CPU backend) and measures the load now
 * (m->runnable, m->usable_cpus: about 30 ms; docs/model.md).
 * @return RP_OK, RP_EINVAL. */
RP_API rp_status rp_analysis_opts_from_exec(rp_analysis_opts *o, rp_model *m,
                                            unsigned *units,
                                            const rp_exec *x);

/** @brief Analysis options for what exec @p x runs (as
 * rp_analysis_opts_from_exec()), with the machine model of its backend on
 * this machine for its configuration: loaded from the cache, or
 * calibrated on first use and cached (rp_model_get_opts() with @p mo, or
 * NULL: defaults). When the cache has no model and automatic calibration
 * is off (RP_MODEL_NO_AUTO, RP_NO_AUTOCALIBRATE=1), @p m is an
 * uncalibrated model (m->calibrated 0; the report says "uncalibrated")
 * and the call succeeds. The machine's load is measured now (m->runnable,
 * m->usable_cpus, about 30 ms; RP_MODEL_NO_PROBE does not): on a busy
 * machine the analysis withholds its prediction (rp_summary.withheld).
 * @p o must have
 * its size set (rp_analysis_opts_init()); it is reset to the defaults
 * first; @p m and @p units must outlive the options' use.
 * @return RP_OK, RP_EINVAL, or the failure of a calibration (the options
 *   are then filled with an uncalibrated model all the same). */
RP_API rp_status rp_analysis_opts_calibrated(rp_analysis_opts *o,
                                             rp_model *m, unsigned *units,
                                             const rp_exec *x,
                                             const rp_model_opts *mo);

/** @brief Analysis options for backend @p be (NULL: auto) run with exec
 * options @p xo (NULL: defaults) on ended graph @p g, without an exec (a
 * graph loaded from a file): the units and physical devices that
 * rp_analysis_opts_from_exec() would find, put in @p m, and the mode;
 * like it, what the backend is (m->in_order, m->shared_memory, copy
 * links free on a CPU backend) and the load now (m->runnable,
 * m->usable_cpus: about 30 ms), so that both give one answer.
 * @p o must have its size set (rp_analysis_opts_init()); it is reset to
 * the defaults first. @return RP_OK, RP_EINVAL (also for a size of 0). */
RP_API rp_status rp_analysis_opts_for(rp_analysis_opts *o, rp_model *m,
                                      unsigned *units, const rp_graph *g,
                                      const rp_backend *be,
                                      const rp_exec_opts *xo);

/** Achieved speedup from timed replays, against the prediction. */
typedef struct rp_achieved {
  double speedup;       /**< median of serial[i] / overlapped[i] */
  double min, max;      /**< smallest and largest of the ratios */
  unsigned runs;        /**< timed pairs */
  double pred_lo, pred_hi; /**< the predicted range: the headline
                                prediction within RP_PREDICT_TOLERANCE */
  int below_one;        /**< speedup < 1: overlapping made it slower */
  int outside;          /**< speedup outside [pred_lo, pred_hi] */
  double serial_ratio;  /**< the serial replay measured over the predicted
                             one (the profiled costs plus the model's
                             overheads; rp_achieved_check_serial()), 0:
                             not checked */
  int serial_off;       /**< serial_ratio is off by more than
                             RP_SERIAL_TOLERANCE: the profile does not
                             describe the replays timed */
} rp_achieved;

/** Relative difference between the timed serial replay and the predicted
 * one beyond which the reports warn. */
#define RP_SERIAL_TOLERANCE 0.20

/** Relative accuracy the prediction claims: the predicted range is
 * predicted_speedup * (1 -/+ RP_PREDICT_TOLERANCE). */
#define RP_PREDICT_TOLERANCE 0.15

/** @brief Achieved speedup of @p runs timed pairs, @p serial_us[i] (a
 * serial replay) and @p overlap_us[i] (the overlapped one, timed right
 * after or before it: pairs alternate, so that a change of the machine's
 * load moves one pair, not the result), against analysis @p a's
 * prediction (NULL: no range). @return RP_OK, RP_EINVAL (no runs, a
 * time that is not finite and > 0). */
RP_API rp_status rp_achieved_compute(const rp_analysis *a,
                                     const double *serial_us,
                                     const double *overlap_us,
                                     unsigned runs, rp_achieved *out);

/** @brief Hold the serial replay timed, @p serial_us per replay (the
 * median of the timed serial replays over their iterations), against
 * analysis @p a's serial replay (the model's when it has one, else the
 * sum of the costs): sets @p ach->serial_ratio and serial_off, which
 * rp_analysis_write_achieved() warns of. @return RP_OK, RP_EINVAL. */
RP_API rp_status rp_achieved_check_serial(rp_achieved *ach,
                                          const rp_analysis *a,
                                          double serial_us);

/** @brief Two lines and the warnings: "predicted speedup ..." (the
 * headline, with what it comes from, or that the analysis gives a bound
 * only), "achieved speedup X (median of N; min-max)", then "warning:"
 * lines when it is below 1 or outside the predicted range.
 * @return RP_OK, RP_EINVAL, RP_EIO. */
RP_API rp_status rp_analysis_write_achieved(const rp_analysis *a,
                                            const rp_achieved *ach,
                                            FILE *fp);

/** @brief Analyse the graph exec @p x really replays (rp_exec_graph():
 * its copies reshaped, its kernels split; the graph given to
 * rp_exec_create() when no pass changed it), with options @p o (may be
 * NULL; typically from rp_analysis_opts_from_exec()). @p o->measured_us,
 * when given, is indexed by the operations of the graph given to
 * rp_exec_create(), as rp_exec_profile() fills it for an exec created
 * with the same options (a serial one, say): an operation that became one
 * keeps its cost, one cut into pieces shares it among them by the bytes
 * they move (kernels: by index points), and one merged into an earlier
 * copy has none (the merged copy's profile holds it). The analysis reads
 * the exec's graph: @p x must outlive it.
 * @return RP_OK, RP_EINVAL, RP_ENOMEM, or rp_analyze()'s failure. */
RP_API rp_status rp_analyze_exec(const rp_exec *x, const rp_analysis_opts *o,
                                 rp_analysis **out);

/** One operation whose achieved time departs from the prediction. */
typedef struct rp_departure {
  rp_node node;
  double pred_start_us, pred_end_us;  /**< predicted (the model's when the
                                           analysis has one, else the list
                                           schedule's) */
  double start_us, end_us;            /**< achieved */
  double own_us;      /**< what the op itself adds: (achieved - predicted)
                           duration plus (achieved - predicted) wait between
                           its last predecessor's end and its start */
  double late_us;     /**< achieved end - predicted end */
  const char *cause;  /**< "ran longer", "ran shorter", "shared link",
                           "shared compute", "waited on a lane", "launch",
                           "waited on a copy", "waited on an op" */
  rp_node blame;      /**< the lane's op or the predecessor waited on, or
                           RP_NONE */
} rp_departure;

/** @brief The operations whose achieved times (@p start_us, @p end_us:
 * one entry per node, µs from the replay's start, as rp_exec_timeline()
 * gives them) depart most from the prediction, largest |own_us| first (ties
 * by |late_us|, then node), with the cause the model can name: its own
 * duration (and whether a copy shared its link with the other direction or
 * a kernel its device with another kernel), its start after its inputs
 * were ready (another op held its lane, or nothing did: launch overhead),
 * or a predecessor that ended late (a copy or another op).
 * @param out up to @p max entries. @param count receives how many were
 *   written. @return RP_OK, RP_EINVAL. */
RP_API rp_status rp_analysis_departures(const rp_analysis *a,
                                        const double *start_us,
                                        const double *end_us,
                                        rp_departure *out, uint32_t max,
                                        uint32_t *count);

/** @brief Chrome/Perfetto trace with two tracks groups: "predicted" (the
 * model's prediction when the analysis has one, else the list schedule)
 * and "achieved" (@p start_us / @p end_us per node), one thread per lane
 * in each, and flow arrows along the hazard edges in both.
 * @return RP_OK, RP_EINVAL, RP_EIO. */
RP_API rp_status rp_analysis_write_trace2(const rp_analysis *a,
                                          const double *start_us,
                                          const double *end_us, FILE *fp);

/** @brief Text list of the @p top largest departures (rp_analysis_departures)
 * with their causes, and the achieved against predicted makespan. */
RP_API rp_status rp_analysis_write_departures(const rp_analysis *a,
                                              const double *start_us,
                                              const double *end_us,
                                              unsigned top, FILE *fp);

/** @brief Number of lanes. */
RP_API uint32_t rp_analysis_num_lanes(const rp_analysis *a);

/** @brief Lane @p i: its name and busy time. @return RP_OK or RP_EINVAL. */
RP_API rp_status rp_analysis_lane(const rp_analysis *a, uint32_t i,
                                  const char **name, double *busy_us);

/** @brief Human report: lanes with busy %, critical path, bound,
 * prediction and what limits it. */
RP_API rp_status rp_analysis_write_text(const rp_analysis *a, FILE *fp);
/** @brief The "reprise-analysis" JSON (docs/format.md). */
RP_API rp_status rp_analysis_write_json(const rp_analysis *a, FILE *fp);
/** @brief Graphviz with the schedule: lanes as clusters, critical path bold,
 * edges labelled with kind and buffer. */
RP_API rp_status rp_analysis_write_dot(const rp_analysis *a, FILE *fp);
/** @brief Chrome trace-event JSON (opens in Perfetto), a track per lane.
 * Always complete: one event per operation. The trace viewers stop loading
 * JSON traces of about 1 M events or 256 MB: for bigger graphs write it in
 * parts (rp_analysis_write_trace_part(), `reprise analyze --trace`, which
 * splits beyond RP_TRACE_PART_EVENTS), or draw the SVG, which merges. */
RP_API rp_status rp_analysis_write_trace(const rp_analysis *a, FILE *fp);

/** Operations per trace file that `reprise analyze --trace` writes before
 * it splits the trace into numbered files (about 100 MB each). */
#define RP_TRACE_PART_EVENTS 500000u

/** @brief How many parts a trace of at most @p max_events operations each
 * takes: ceil(operations / max_events), at least 1 (0: 1). */
RP_API uint32_t rp_analysis_trace_parts(const rp_analysis *a,
                                        uint32_t max_events);

/** @brief One part of the trace: the operations @p first to
 * @p first + @p count - 1 in start order (the schedule's), with the lane
 * tracks, as a trace file of its own that opens alone; the process is
 * named after the range. Parts k * max_events, k = 0, 1, ... cover every
 * operation once. @return RP_OK, RP_EINVAL (first past the operations),
 * RP_ENOMEM, RP_EIO. */
RP_API rp_status rp_analysis_write_trace_part(const rp_analysis *a, FILE *fp,
                                              uint32_t first, uint32_t count);
/** @brief SVG Gantt chart of the schedule. */
RP_API rp_status rp_analysis_write_svg(const rp_analysis *a, FILE *fp);

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

/** @defgroup rp_plot_fn Speedup against the thread count
 * The predicted and the achieved speedup of one graph at several thread
 * counts (or streams, or devices), drawn as an SVG with no dependency:
 * one curve each, the achieved points with their spread (min-max) as
 * error bars, and the band from 1 (no gain) up to the upper bound.
 * `reprise plot` draws it for a saved graph.
 * @{ */

/** One abscissa of the picture. A figure <= 0 (or NaN) is not drawn. */
typedef struct rp_speedup_point {
  double x;             /**< threads, streams or devices (> 0) */
  double predicted;     /**< the headline prediction */
  double bound;         /**< the upper bound */
  double achieved;      /**< achieved (median) */
  double achieved_min, achieved_max; /**< its spread */
} rp_speedup_point;

/** @brief Write the picture of @p n points (any order; sorted by x) as
 * SVG: a polyline and a circle per point of class "predicted", a square
 * of class "achieved" and an error bar (group of class "errorbar") per
 * achieved point, a polygon of class "bound". The x axis is logarithmic
 * (base 2) when the largest x is at least 4 times the smallest.
 * @param title, xlabel text (NULL: "speedup", "threads").
 * @return RP_OK, RP_EINVAL (no points, an x that is not > 0), RP_ENOMEM,
 *   RP_EIO. */
RP_API rp_status rp_speedup_write_svg(const rp_speedup_point *pts,
                                      unsigned n, const char *title,
                                      const char *xlabel, FILE *fp);

/** @} */

/** @defgroup rp_split_fn Chunked pipelining advice
 * What splitting the graph's splittable kernels (rp_kernel.split_axis)
 * into chunks would gain: the split rewrite of rp_exec_opts.split is
 * analysed for k = 1 .. max_k chunks, each chunk costing its share of the
 * operation's cost (given, measured or the default; copies the model's
 * latency plus their bytes), and the smallest k whose predicted time is
 * within 3 % of the best is chosen (the model knows of the per-operation
 * overheads of its calibration, not of every per-chunk cost). docs/split.md.
 * @{ */

/** Advice for one graph. */
typedef struct rp_split_advice {
  unsigned k;            /**< chunks chosen; 1: nothing to split, or no
                              gain */
  uint32_t nkernels;     /**< kernels the split cuts */
  uint32_t ncopies;      /**< copies cut with them */
  rp_node first_kernel;  /**< the first kernel cut (RP_NONE: none) */
  double unsplit_us;     /**< predicted replay as recorded: the model's
                              overlapped time with a model, else the
                              schedule's makespan */
  double split_us;       /**< the same, split in k */
  double speedup;        /**< unsplit_us / split_us */
} rp_split_advice;

/** @brief Advise how many chunks to split ended graph @p g's splittable
 * kernels into. @p o: analysis options (a model, measured costs) or NULL.
 * @p max_k: the most chunks tried (0: 16).
 * @return RP_OK (out->k 1 when nothing is splittable), RP_ESTATE (not
 *   ended), RP_ENOTSUP (a kernel without its descriptor: loaded from a
 *   file), RP_EINVAL, RP_ENOMEM. */
RP_API rp_status rp_split_advise(const rp_graph *g,
                                 const rp_analysis_opts *o, unsigned max_k,
                                 rp_split_advice *out);

/** @brief One line per advice: `split "NAME" in K: predicted S.SSx
 * (A ms -> B ms)`, naming the first kernel cut and how many others and
 * copies go with it, or why nothing is split. */
RP_API rp_status rp_split_write_text(const rp_graph *g,
                                     const rp_split_advice *a, FILE *fp);

/** @} */

/** @defgroup rp_check_fn Checking hand-written dependencies
 * A program that orders its operations by hand (streams and events, or
 * any explicit ordering) is transcribed as a graph whose operations carry
 * their accesses and their explicit `after` dependencies (record with
 * RP_GRAPH_NO_COHERENCE so that copies are as written). The check looks
 * only at the accesses and the `after` lists, never at the edges the
 * recorder derives: every pair of conflicting operations (same buffer, same
 * memory space, intersecting regions, one writes) that the `after` edges
 * do not order is a missing order, a race; every `after` edge whose removal
 * leaves every conflicting pair ordered is superfluous, and the check
 * predicts what dropping it gains (the schedule over the `after` edges,
 * with and without it). A graph with no `after` edge has no hand-written
 * order to check (a program recorded with the library: its orders are
 * the ones reprise derives): the check then finds nothing, and
 * rp_check_num_orders() says 0. Copies inserted by automatic coherence are
 * the recorder's, ordered by it: pairs with one are never races.
 * Quadratic in the operations (it compares every
 * conflicting pair and keeps reachability as bit sets): meant for
 * transcribed programs of up to some thousands of operations.
 * @{ */

typedef struct rp_check rp_check;

/** One finding. */
typedef struct rp_check_item {
  rp_node from, to;     /**< the two operations, from before to */
  rp_edge_kind kind;    /**< races: RP_EDGE_RAW/WAR/WAW; superfluous:
                             RP_EDGE_AFTER */
  rp_buf buf;           /**< races: the buffer; else RP_NONE */
  int space;            /**< races: RP_SPACE_HOST or the device */
  uint64_t offset, bytes; /**< races: the first intersecting byte range */
  int implied;          /**< superfluous: other `after` edges order the
                             two operations anyway (no gain) */
  double gain_us;       /**< superfluous: predicted time saved by dropping
                             the edge (schedule makespan, or the model's
                             overlapped time when a model is given) */
} rp_check_item;

/** Most operations rp_check_deps() takes (reachability is kept as bit
 * sets, nop^2 / 8 bytes). */
#define RP_CHECK_MAX_OPS 32768u

/** @brief Check the `after` dependencies of ended graph @p g against its
 * accesses. @p o: analysis options for the predicted gains, or NULL.
 * @return RP_OK, RP_ESTATE (not ended), RP_EINVAL (more than
 *   RP_CHECK_MAX_OPS operations, bad options), RP_ENOMEM. */
RP_API rp_status rp_check_deps(const rp_graph *g, const rp_analysis_opts *o,
                               rp_check **out);
/** @brief Destroy a check. NULL is a no-op. */
RP_API void rp_check_destroy(rp_check *c);
/** @brief Number of distinct `after` edges the check read: 0 when the
 * graph has no hand-written order (nothing checked, no race). */
RP_API uint32_t rp_check_num_orders(const rp_check *c);
/** @brief Number of races (missing orders), in (to, from) order. */
RP_API uint32_t rp_check_num_races(const rp_check *c);
/** @brief Race @p i. @return RP_OK or RP_EINVAL. */
RP_API rp_status rp_check_race(const rp_check *c, uint32_t i,
                               rp_check_item *out);
/** @brief Number of superfluous `after` edges, in (to, from) order. */
RP_API uint32_t rp_check_num_superfluous(const rp_check *c);
/** @brief Superfluous edge @p i. @return RP_OK or RP_EINVAL. */
RP_API rp_status rp_check_superfluous(const rp_check *c, uint32_t i,
                                      rp_check_item *out);
/** @brief Predicted time of the graph ordered by its `after` edges, and
 * with every superfluous edge dropped. */
RP_API void rp_check_times(const rp_check *c, double *as_written_us,
                           double *minimal_us);
/** @brief Human report: each race with its operations, buffer, byte range
 * and kind; each superfluous edge with its predicted gain. */
RP_API rp_status rp_check_write_text(const rp_check *c, FILE *fp);
/** @brief The same as JSON ("reprise-check", version 1). */
RP_API rp_status rp_check_write_json(const rp_check *c, FILE *fp);

/** @} */

#ifdef __cplusplus
}
#endif
#endif
