/* reprise: measuring on this machine: the calibration of machine models
 * and their cache, and analysis options from what an exec really runs.
 * This layer replays small graphs to measure; it sits above the analysis
 * (reprise/analyze.h) and the replay (reprise/replay.h), which call
 * nothing of each other. */
#ifndef REPRISE_MEASURE_H
#define REPRISE_MEASURE_H

#include <stdio.h>
#include "reprise/analyze.h"
#include "reprise/model.h"
#include "reprise/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup rp_measure_fn Calibration and the model cache
 * A machine model (reprise/model.h) is calibrated on first use:
 * rp_model_get_opts() (and rp_analysis_opts_calibrated(), which the examples use) load it from the
 * user's cache directory, or, when the cache has none for this machine
 * (host name, CPU model, GPU name), backend, configuration (thread count,
 * device map) and library version, measure it by replaying small graphs
 * (a few seconds), save it and report one progress line through a
 * callback. `reprise calibrate` refreshes it; RP_MODEL_NO_AUTO and the
 * environment variable RP_NO_AUTOCALIBRATE=1 turn automatic calibration
 * off. docs/model.md describes the measurements, the prediction and the
 * file format.
 * Thread safety: calibrate (rp_model_calibrate(), and rp_model_get_opts()
 * or rp_analysis_opts_calibrated() when they calibrate) from one thread at
 * a time: a calibration times replays, which another one would disturb.
 * Loading from the cache may run in several threads; two processes saving
 * the same cache file leave one whole file (written beside it, renamed).
 * @{ */

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

/** Options of rp_model_get_opts(). Initialise with rp_model_opts_init()
 * or RP_MODEL_OPTS_INIT, then set what you need: the defaults calibrate
 * on first use and cache in the user's cache directory. */
typedef struct rp_model_opts {
  size_t size;    /**< sizeof the struct as the caller was compiled
                              with, set by rp_model_opts_init() or
                              RP_MODEL_OPTS_INIT; 0 is refused with
                              RP_EINVAL (docs/design.md, "Versioned
                              structs") */
  unsigned flags; /**< RP_MODEL_* */
  unsigned runs;  /**< timed replays per figure (0: 5) */
  rp_model_progress_fn progress; /**< told before a calibration; NULL */
  void *user;                    /**< passed to progress */
  const char *cache_dir;         /**< folder of the cached models; NULL:
                              $XDG_CACHE_HOME/reprise, else
                              $HOME/.cache/reprise */
  const char *version;           /**< the library version the key holds; NULL:
                              rp_version() (a test can change it) */
} rp_model_opts;

/** An rp_model_opts with its size set and every option at its default. */
#define RP_MODEL_OPTS_INIT                                                     \
  { sizeof(rp_model_opts), 0, 0, NULL, NULL, NULL, NULL }

/** @brief Set every option of @p o to its default and its size to this
 * header's (as RP_MODEL_OPTS_INIT). NULL is a no-op. */
RP_API void rp_model_opts_init(rp_model_opts *o);

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

/** @defgroup rp_measure_exec Analysis options from an exec
 * @{ */

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
                                            unsigned *units, const rp_exec *x);

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
RP_API rp_status rp_analysis_opts_calibrated(rp_analysis_opts *o, rp_model *m,
                                             unsigned *units, const rp_exec *x,
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

/** @brief This process's threads' time running and waiting for a core
 * so far, in nanoseconds, summed over its threads
 * (/proc/self/task/N/schedstat; either pointer may be NULL). Over an
 * interval, run / (run + wait) of the differences is the share of the
 * cores its threads got while they wanted one (rp_exec_profile_team()'s
 * share; 1: never kept waiting).
 * @return 1, or 0 when the kernel does not say (both set to 0). */
RP_API int rp_sched_times(double *run_ns, double *wait_ns);

/** @brief Operation costs at the replay's thread count: @p runs (0: 5)
 * overlapped replays of @p x (rp_exec_timeline()), each operation timed
 * from its start to its end within the team, so that the contention of
 * that replay is in the figure (the other threads' memory traffic, their
 * share of the cores; a split kernel's time over the threads that ran
 * it). Per node of the graph given to rp_exec_create() (one entry each;
 * any of the arrays may be NULL): the median, the smallest and the
 * largest time in microseconds, fit for rp_analysis_opts.team_us. In
 * @p share (may be NULL): the team's share of its cores during the runs,
 * its threads' running time over running plus waiting for a core
 * (/proc/self/task/N/schedstat; 1: never kept waiting; 0: the kernel
 * does not say), for rp_analysis_opts.team_share. The runs replay @p x
 * itself: its host arrays are put back afterwards (the backend's own
 * images advance, as after rp_exec_run()).
 * @return RP_OK, RP_EINVAL (runs > 1000), RP_ENOMEM, RP_ENOTSUP (the
 *   backend records no timeline, or the exec replays a rewrite of its
 *   graph that does not map back to it), or the failure of a run. */
RP_API rp_status rp_exec_profile_team(rp_exec *x, unsigned runs,
                                      double *median_us, double *min_us,
                                      double *max_us, double *share);

/** @} */

#ifdef __cplusplus
}
#endif
#endif
