/* reprise: lanes, costs, critical path, schedule, bounds and reports. */
#ifndef REPRISE_ANALYZE_H
#define REPRISE_ANALYZE_H

#include <stdio.h>
#include "reprise/record.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup rp_analysis_fn Analysis
 * An analysis puts every operation of an ended graph on a lane
 * (compute:N, h2d:N, d2h:N or copy:N, p2p:N, host), gives it a cost (given,
 * measured or modelled), and computes the serial time, the critical path,
 * the lane loads, the bound, the Amdahl form of the overlap bound and a list
 * schedule with its makespan. See DESIGN.md, "Lanes, costs and bounds".
 * @{ */

typedef struct rp_analysis rp_analysis;

/** Options of an analysis. Initialise with rp_analysis_opts_init(). */
typedef struct rp_analysis_opts {
  unsigned copy_engines;    /**< 2 (h2d and d2h lanes) or 1 (copy lane) */
  double h2d_gbps;          /**< modelled bandwidths, GB/s (1e9 B/s) */
  double d2h_gbps;
  double p2p_gbps;
  double kernel_us;         /**< cost of a kernel with none given */
  double host_us;           /**< cost of a host task with none given */
  const double *measured_us;/**< per node (one entry for each), from a
                                 profiled replay; NULL, or negative
                                 entries: not measured */
  const unsigned *compute_units; /**< per device: kernels of device d run
                                 on compute_units[d] lanes "compute:d.u",
                                 taken in turn in program order (an FPGA's
                                 compute units); NULL, 0 or 1: one lane
                                 "compute:d" */
  unsigned ncompute_units;  /**< entries in compute_units */
  /** > 1: the graph runs over MPI ranks as the starpu backend's mode
   * "mpi" places it (the host on rank 0, device d on rank d % nranks): a
   * copy between spaces of two ranks runs on the lane "net:a-b" (a < b)
   * of that pair of ranks and costs net_latency_us + bytes / net_gbps,
   * whatever was measured or given for it (calibrate both with
   * tools/bench/bench_mpi_pingpong). 0 or 1: one
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
  double bound;                 /**< serial / max(critical, max lane) */
  const char *limited_by;       /**< "critical_path" or a lane name */
  double amdahl_compute_us, amdahl_copy_us, amdahl_speedup;
  double predicted_speedup;     /**< serial / makespan */
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

/** @brief Number of lanes. */
RP_API uint32_t rp_analysis_num_lanes(const rp_analysis *a);

/** @brief Lane @p i: its name and busy time. @return RP_OK or RP_EINVAL. */
RP_API rp_status rp_analysis_lane(const rp_analysis *a, uint32_t i,
                                  const char **name, double *busy_us);

/** @brief Human report: lanes with busy %, critical path, bound,
 * prediction and what limits it. */
RP_API rp_status rp_analysis_write_text(const rp_analysis *a, FILE *fp);
/** @brief The "reprise-analysis" JSON of DESIGN.md. */
RP_API rp_status rp_analysis_write_json(const rp_analysis *a, FILE *fp);
/** @brief Graphviz with the schedule: lanes as clusters, critical path bold,
 * edges labelled with kind and buffer. */
RP_API rp_status rp_analysis_write_dot(const rp_analysis *a, FILE *fp);
/** @brief Chrome trace-event JSON (opens in Perfetto), a track per lane. */
RP_API rp_status rp_analysis_write_trace(const rp_analysis *a, FILE *fp);
/** @brief SVG Gantt chart of the schedule. */
RP_API rp_status rp_analysis_write_svg(const rp_analysis *a, FILE *fp);

/** @} */

#ifdef __cplusplus
}
#endif
#endif
