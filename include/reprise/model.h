/* reprise: the machine model as data: what a backend on one machine costs
 * beyond the operations' own work, and its file format. Measuring one
 * (calibration, the cache of calibrated models) is reprise/measure.h. */
#ifndef REPRISE_MODEL_H
#define REPRISE_MODEL_H

#include <stdio.h>
#include "reprise/record.h"

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
 *
 * A model is plain data: it is measured by rp_model_calibrate() and
 * cached by rp_model_get_opts() (reprise/measure.h); docs/model.md
 * describes the measurements, the prediction and the file format.
 * Thread safety: an rp_model is a value; the functions here may be called
 * from several threads at once on different models, and on one model
 * from several threads that only read it.
 * @{ */

/** Most replay modes a model describes. */
#define RP_MODEL_MAX_MODES 4

/** Overhead of one replay mode. */
typedef struct rp_model_mode {
  char name[16];  /**< "graph", "streams", "serial", "parallel" */
  double op_us;   /**< overhead per operation */
  double run_us;  /**< overhead per replay (launch and wait) */
  int host_issue; /**< 1: the host issues operations one after the
                             other, each taking op_us of host time before
                             it can start (streams, serial); 0: op_us is a
                             delay of each node on its device (graph,
                             OpenMP tasks) */
} rp_model_mode;

/** One copy direction: time = latency_us + bytes / (gbps * 1e3). */
typedef struct rp_model_link {
  double gbps; /**< GB/s (1e9 B/s); 0: copies of this kind cost 0
                             (host and device share memory) */
  double latency_us;
} rp_model_link;

/** A calibrated machine model. Initialise with rp_model_init(). */
typedef struct rp_model {
  char backend[32]; /**< "openmp", "cuda", ... */
  char machine[64]; /**< host name of the calibration */
  int calibrated;   /**< 1 if measured (loaded or calibrated) */
  rp_model_mode mode[RP_MODEL_MAX_MODES];
  unsigned nmode;
  rp_model_link h2d, d2h, p2p;
  double duplex_h2d_gbps; /**< h2d bandwidth while a d2h runs on the same
                                link (0: as alone) */
  double duplex_d2h_gbps; /**< d2h bandwidth while an h2d runs */
  double host_task_us;    /**< overhead of a host task */
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
  uint64_t split_min;        /**< kernels of at least this many points are
                                split over the units (openmp: 8192) */
  double split_efficiency;   /**< share of a core each thread of a team of
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
  char cpu[64];        /**< CPU model name ("" unknown) */
  char gpu[64];        /**< cuda: GPU 0's name; "" elsewhere */
  char version[32];    /**< library version and model revision of the
                                calibration ("0.1.0/m2") */
  unsigned threads;    /**< team size calibrated (openmp); 0: the
                                backend has no team */
  char device_map[64]; /**< device map calibrated with ("0,0,1");
                                "": none (the backend's default) */
  double load;         /**< the machine's load average (1 minute) when
                                calibrated; a model calibrated on a busy
                                machine (load above its cores) is
                                calibrated again once the load is below
                                half of it. 0: unknown */
  unsigned cpus;       /**< online cores when calibrated */

  /* A team of CPU threads (openmp): host tasks, kernels and copies share
   * one pool of threads. */
  unsigned host_units; /**< threads that run host tasks: with > 0,
                                host tasks and the copies that move bytes
                                are tasks of the pool like kernels (host
                                tasks on any group's threads); 0: host
                                tasks hold one "host" lane (cuda) */
  double task_us;      /**< thread time per task beyond its work (the
                                engine's claim, hand-off and bookkeeping),
                                measured with independent empty tasks at
                                the calibrated thread count */
  double split_us;     /**< time a kernel split over the team takes
                                beyond its share of work (publishing its
                                chunks, waiting for the last) */
  double edge_us;      /**< wait of an operation whose input comes
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
  int in_order;         /**< the backend replays one operation at a
                                time in program order (reference): the
                                overlapped replay is the serial one, 1.00x */
  int shared_memory;    /**< a CPU backend: host and device images share
                                memory, so a copy the plan elides costs
                                nothing and holds no lane, and a copy
                                without a measured cost is taken for
                                elided */
  int load_measured;    /**< runnable and usable_cpus were measured */
  double runnable;      /**< tasks runnable on the machine besides the
                                caller's own threads (/proc/stat
                                procs_running, median of 7 samples 5 ms
                                apart; confined to some of the machine's
                                CPUs, their share) */
  unsigned usable_cpus; /**< CPUs the process may run on (its affinity
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

/** @} */

#ifdef __cplusplus
}
#endif
#endif
