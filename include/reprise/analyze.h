/* reprise: lanes, costs, critical path, schedule, bounds and reports.
 * The machine model as data is reprise/model.h; the dependency check,
 * reprise/check.h (included at the end); calibration and the analysis of
 * an exec, reprise/measure.h (the umbrella reprise.h has them all). */
#ifndef REPRISE_ANALYZE_H
#define REPRISE_ANALYZE_H

#include <stdio.h>
#include "reprise/record.h"
#include "reprise/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup rp_analysis_fn Analysis
 * An analysis puts every operation of an ended graph on a lane
 * (compute:N, h2d:N, d2h:N or copy:N, p2p:N, host), gives it a cost (given,
 * measured or modelled), and computes the serial time, the critical path,
 * the lane loads, the bound, the Amdahl form of the overlap bound and a list
 * schedule with its makespan. See docs/design.md, "Lanes, costs and bounds".
 * Thread safety: an analysis is read-only once made; any number of
 * threads may read and write reports of one analysis at once, and
 * rp_analyze() may run in several threads at once on one ended graph.
 * @{ */

typedef struct rp_analysis rp_analysis;

/** Options of an analysis. Initialise with rp_analysis_opts_init(), also
 * before a function that fills it in (it reads the size). */
typedef struct rp_analysis_opts {
  size_t size;           /**< sizeof the struct as the caller was
                                 compiled with, set by
                                 rp_analysis_opts_init(): members past it
                                 keep their defaults; 0 is refused with
                                 RP_EINVAL (docs/design.md, "Versioned
                                 structs") */
  unsigned copy_engines; /**< 2 (h2d and d2h lanes) or 1 (copy lane) */
  double h2d_gbps;       /**< modelled bandwidths, GB/s (1e9 B/s) */
  double d2h_gbps;
  double p2p_gbps;
  double kernel_us;              /**< cost of a kernel with none given */
  double host_us;                /**< cost of a host task with none given */
  const double *measured_us;     /**< per node (one entry for each), from a
                                 profiled replay; NULL, or negative
                                 entries: not measured (the graph's own
                                 measured costs are used then) */
  const unsigned *compute_units; /**< per device: kernels of device d run
                                 on compute_units[d] lanes "compute:d.u",
                                 taken in turn in program order (an FPGA's
                                 compute units); NULL, 0 or 1: one lane
                                 "compute:d" */
  unsigned ncompute_units;       /**< entries in compute_units */
  const rp_model *model;         /**< calibrated model for the prediction beside
                                 the bounds; NULL: none (the prediction is
                                 then the schedule's) */
  const char *mode;              /**< overlapped mode predicted ("graph",
                                 "streams", "parallel"); NULL: the model's
                                 first mode that is not "serial" */
  const char *serial_mode;       /**< baseline mode; NULL: "serial" */
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
  double net_latency_us; /**< one-way latency of a message, us */
  double net_gbps;       /**< bandwidth between two ranks, GB/s */
  /** Per node (one entry for each, as measured_us): its time within
   * overlapped replays of the team that will run it
   * (rp_exec_profile_team()), the contention of that replay in (the
   * other threads' memory traffic, their share of the cores, a split's
   * own cost). A pool model (an openmp team) then takes it as the
   * operation's work in the overlapped replay, at a thread's full rate:
   * neither its share of a core nor the bandwidth cap is applied again,
   * no split_us is added, and a kernel the backend splits holds its
   * group's free threads for that time. The serial replay keeps the
   * serial costs. Negative entries: not profiled so. NULL: the graph's
   * team times (rp_graph_set_team_measured()) where their thread count
   * is the model's team's (host_units) and their backend the model's
   * (rp_summary.stored_team_used), else none. */
  const double *team_us;
  /** The team's share of its cores during those replays (its threads'
   * running time over running plus waiting for a core), from
   * rp_exec_profile_team(); 0: not measured. Below 0.85 the prediction is
   * withheld (rp_summary.withheld, team_share). */
  double team_share;
  /** Per node, as measured_us: the smallest and the largest time of the
   * serial profile (rp_exec_profile_opts()'s min_us and max_us); NULL:
   * the graph's measured min_us and max_us where it has them, else the
   * cost itself. They give the predicted range (rp_summary.profile_lo,
   * profile_hi), never the headline. */
  const double *measured_min_us, *measured_max_us;
  /** Per node, as team_us: the smallest and the largest time of the team
   * profile (rp_exec_profile_team()'s min_us and max_us); NULL: team_us
   * itself. */
  const double *team_min_us, *team_max_us;
} rp_analysis_opts;

/** Where a cost came from. */
typedef enum {
  RP_COST_GIVEN = 0,
  RP_COST_MEASURED = 1,
  RP_COST_MODELLED = 2, /**< copies: bytes / bandwidth */
  RP_COST_DEFAULT = 3   /**< kernels and host tasks: the default */
} rp_cost_source;

/** Schedule of one operation. */
typedef struct rp_op_sched {
  uint32_t lane; /**< index into the lanes */
  double cost_us, start_us, end_us, slack_us;
  int critical; /**< on the critical path */
  rp_cost_source source;
} rp_op_sched;

/** Headline figures. */
typedef struct rp_summary {
  double serial_us, critical_path_us, max_lane_us, makespan_us;
  double bound;           /**< the upper bound: serial / max(critical
                                     path, max lane); with a model of a team
                                     of threads (host_units > 0): serial /
                                     max(longest path, a split kernel
                                     costing its work over its group's
                                     threads; the work over the threads) */
  const char *limited_by; /**< "critical_path", a lane name, or
                                     "threads" (the work over a team) */
  double amdahl_compute_us, amdahl_copy_us, amdahl_speedup;
  double predicted_speedup; /**< the headline prediction: the machine
                                     model's (model_speedup) when the
                                     analysis has one; without one the list
                                     schedule's (schedule_speedup), which
                                     knows of no overhead and which the
                                     reports call a bound only */
  int modelled;             /**< a model was given */
  double model_serial_us;   /**< predicted serial replay, overheads in */
  double model_overlap_us;  /**< predicted overlapped replay */
  double model_speedup;     /**< model_serial_us / model_overlap_us */
  double schedule_speedup;  /**< serial / makespan of the list schedule
                                     (a diagnostic) */
  int calibrated;           /**< the model was calibrated (measured) */
  int withheld;             /**< the machine is busy: the team of T
                                     threads could count on less than 85 %
                                     of its cores (usable_cpus / (runnable
                                     + T) < 0.85), or it got less than
                                     that during the profiled team
                                     replays (team_share); predicted_speedup is the
                                     quiet machine's, which this replay
                                     will not see, and the reports print
                                     "withheld" with the load instead */
  double runnable;          /**< other runnable tasks measured (when
                                     the model measured the load) */
  unsigned usable_cpus;     /**< CPUs the process may use, then */
  double team_share;        /**< rp_analysis_opts.team_share as given
                                     (0: not measured); below 0.85 it
                                     withholds the prediction too */
  int team_costs;           /**< operations whose overlapped work came
                                     from rp_analysis_opts.team_us, or
                                     from the graph's team times */
  /** The predicted range: the model's prediction with every serial cost
   * at its profile's smallest and every team time at its largest (low),
   * and the reverse (high), the headline between them; both the headline
   * without a model, or without a profile's min and max. */
  double profile_lo, profile_hi;
  /** The graph's team times (rp_graph_set_team_measured()): the threads
   * of the team they were taken on, 0: the graph has none. */
  unsigned stored_team_threads;
  /** 1: the prediction took the graph's team times (no
   * rp_analysis_opts.team_us was given, and their thread count and
   * backend are the model's team's); 0: it did not, and an operation
   * without team_us costs its serial cost in the overlapped replay. */
  int stored_team_used;
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

/** Achieved speedup from timed replays, against the prediction. */
typedef struct rp_achieved {
  double speedup;          /**< median of serial[i] / overlapped[i] */
  double min, max;         /**< smallest and largest of the ratios */
  unsigned runs;           /**< timed pairs */
  double pred_lo, pred_hi; /**< the predicted range: the headline
                                prediction within RP_PREDICT_TOLERANCE */
  int below_one;           /**< speedup < 1: overlapping made it slower */
  int outside;             /**< speedup outside [pred_lo, pred_hi] */
  double serial_ratio;     /**< the serial replay measured over the predicted
                             one (the profiled costs plus the model's
                             overheads; rp_achieved_compare_serial()), 0:
                             not checked */
  int serial_off;          /**< serial_ratio is off by more than
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
                                     const double *overlap_us, unsigned runs,
                                     rp_achieved *out);

/** @brief Hold the serial replay timed, @p serial_us per replay (the
 * median of the timed serial replays over their iterations), against
 * analysis @p a's serial replay (the model's when it has one, else the
 * sum of the costs): sets @p ach->serial_ratio and serial_off, which
 * rp_analysis_write_achieved() warns of. @return RP_OK, RP_EINVAL. */
RP_API rp_status rp_achieved_compare_serial(rp_achieved *ach,
                                            const rp_analysis *a,
                                            double serial_us);
/** @brief Deprecated: rp_achieved_compare_serial() ("check" names the
 * dependency check only, rp_check_*). */
RP_DEPRECATED("call it rp_achieved_compare_serial (rp_check_* is the "
              "dependency check)")
static inline rp_status rp_achieved_check_serial(rp_achieved *ach,
                                                 const rp_analysis *a,
                                                 double serial_us) {
  return rp_achieved_compare_serial(ach, a, serial_us);
}

/** @brief Two lines and the warnings: "predicted speedup ..." (the
 * headline, with what it comes from, or that the analysis gives a bound
 * only), "achieved speedup X (median of N; min-max)", then "warning:"
 * lines when it is below 1 or outside the predicted range.
 * @return RP_OK, RP_EINVAL, RP_EIO. */
RP_API rp_status rp_analysis_write_achieved(const rp_analysis *a,
                                            const rp_achieved *ach, FILE *fp);

/** One operation whose achieved time departs from the prediction. */
typedef struct rp_departure {
  rp_node node;
  double pred_start_us, pred_end_us; /**< predicted (the model's when the
                                           analysis has one, else the list
                                           schedule's) */
  double start_us, end_us;           /**< achieved */
  double own_us;     /**< what the op itself adds: (achieved - predicted)
                           duration plus (achieved - predicted) wait between
                           its last predecessor's end and its start */
  double late_us;    /**< achieved end - predicted end */
  const char *cause; /**< "ran longer", "ran shorter", "shared link",
                           "shared compute", "waited on a lane", "launch",
                           "waited on a copy", "waited on an op" */
  rp_node blame;     /**< the lane's op or the predecessor waited on, or
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
                                        const double *end_us, rp_departure *out,
                                        uint32_t max, uint32_t *count);

/** @brief Chrome/Perfetto trace with two tracks groups: "predicted" (the
 * model's prediction when the analysis has one, else the list schedule)
 * and "achieved" (@p start_us / @p end_us per node), one thread per lane
 * in each, and flow arrows along the hazard edges in both.
 * @return RP_OK, RP_EINVAL, RP_EIO. */
RP_API rp_status rp_analysis_write_trace_achieved(const rp_analysis *a,
                                                  const double *start_us,
                                                  const double *end_us,
                                                  FILE *fp);
/** @brief Deprecated: rp_analysis_write_trace_achieved(). */
RP_DEPRECATED("call it rp_analysis_write_trace_achieved (no numbered names)")
static inline rp_status rp_analysis_write_trace2(const rp_analysis *a,
                                                 const double *start_us,
                                                 const double *end_us,
                                                 FILE *fp) {
  return rp_analysis_write_trace_achieved(a, start_us, end_us, fp);
}

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
  double x;                          /**< threads, streams or devices (> 0) */
  double predicted;                  /**< the headline prediction */
  double bound;                      /**< the upper bound */
  double achieved;                   /**< achieved (median) */
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
RP_API rp_status rp_speedup_write_svg(const rp_speedup_point *pts, unsigned n,
                                      const char *title, const char *xlabel,
                                      FILE *fp);

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
  unsigned k;           /**< chunks chosen; 1: nothing to split, or no
                              gain */
  uint32_t nkernels;    /**< kernels the split cuts */
  uint32_t ncopies;     /**< copies cut with them */
  rp_node first_kernel; /**< the first kernel cut (RP_NONE: none) */
  double unsplit_us;    /**< predicted replay as recorded: the model's
                              overlapped time with a model, else the
                              schedule's makespan */
  double split_us;      /**< the same, split in k */
  double speedup;       /**< unsplit_us / split_us */
} rp_split_advice;

/** @brief Advise how many chunks to split ended graph @p g's splittable
 * kernels into. @p o: analysis options (a model, measured costs) or NULL.
 * @p max_k: the most chunks tried (0: 16).
 * @return RP_OK (out->k 1 when nothing is splittable), RP_ESTATE (not
 *   ended), RP_ENOTSUP (a kernel without its descriptor: loaded from a
 *   file), RP_EINVAL, RP_ENOMEM. */
RP_API rp_status rp_split_advise(const rp_graph *g, const rp_analysis_opts *o,
                                 unsigned max_k, rp_split_advice *out);

/** @brief One line per advice: `split "NAME" in K: predicted S.SSx
 * (A ms -> B ms)`, naming the first kernel cut and how many others and
 * copies go with it, or why nothing is split. */
RP_API rp_status rp_split_write_text(const rp_graph *g,
                                     const rp_split_advice *a, FILE *fp);

/** @} */

#ifdef __cplusplus
}
#endif
#endif

/* The dependency check uses rp_analysis_opts: after the guard. */
#include "reprise/check.h"
