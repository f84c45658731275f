/* Internal layout of an analysis, shared by the files of src/analyze. */
#ifndef RP_ANALYSIS_INTERNAL_H
#define RP_ANALYSIS_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include "reprise/analyze.h"
#include "core/core.h"
#include "record/graph.h"

/* Kinds of lanes, in the order their names are built. */
typedef enum {
  RP__LANE_COMPUTE = 0,
  RP__LANE_H2D,
  RP__LANE_D2H,
  RP__LANE_COPY,
  RP__LANE_P2P,
  RP__LANE_HOST,
  RP__LANE_KINDS
} rp__lane_kind;

typedef struct rp__lane {
  char name[24]; /* "compute:61.4095" at most */
  rp__lane_kind kind;
  int device; /* -1 for the host lane */
  double busy_us;
} rp__lane;

/* The analysis keeps a pointer to its graph (names, edges, accesses): the
 * graph must outlive it. Per-operation data is kept as arrays (structure of
 * arrays) so that a 2-million-operation graph stays compact. */
/* Where the starpu backend's mode "mpi" places a copy (net.c). */
typedef struct rp__net rp__net;
enum {
  RP__NET_LOCAL = 0,       /* within one rank, moving bytes */
  RP__NET_SAME_MEMORY = 1, /* within one rank, both ends in one memory */
  RP__NET_PAIR = 2         /* between ranks *lo < *hi */
};
rp_status rp__net_init(const rp_graph *g, unsigned nranks, rp__net **out);
void rp__net_free(rp__net *n);
/* Op's placement: RP__NET_*; for RP__NET_PAIR its two ranks. */
int rp__net_place(rp__net *n, uint32_t op, int *lo, int *hi);

struct rp_analysis {
  const rp_graph *g;
  rp_analysis_opts opts;
  int has_measured; /* opts.measured_us was given (not kept) */
  uint32_t nop;

  /* Lanes and costs (lanes.c). */
  uint32_t *lane;  /* per op */
  double *cost;    /* per op */
  uint8_t *source; /* per op: rp_cost_source */
  rp__lane *lanes;
  uint32_t nlane;
  uint32_t nsource[4]; /* operations per cost source */

  /* Critical path (critical.c). */
  double *bottom;    /* longest path from the op's start to the end */
  uint8_t *critical; /* per op */
  uint32_t *crit;    /* the critical path's ops, in order */
  uint32_t ncrit;

  /* Schedule (schedule.c). */
  double *start, *slack; /* per op; end = start + cost */
  uint32_t *order;       /* ops in the order the schedule started them */

  /* Calibrated prediction (predict.c), with a model only. */
  double *mstart, *mend; /* per op, in the predicted overlapped replay */
  double *tcost;         /* per op: opts.team_us (negative: none), or NULL */
  /* The predicted range (range.c): per op the serial cost's smallest and
   * largest (filled by the lanes), the team time's (negative: none). */
  double *clo, *chi, *tlo, *thi;
  char tbackend[32]; /* the graph's team times: their backend */
  char mbackend[32], mmachine[64], mmode[16], msmode[16];
  int mcalibrated;
  unsigned mthreads; /* the model's team (host_units), 0: none */
  double mload;      /* load average when calibrated, 0: unknown */
  uint8_t *elided;   /* per op: a copy the backend elides (a CPU
                              backend's model, no cost of its own): no
                              cost, no lane */
  uint32_t nelided;
  double meff;               /* the model's split_efficiency */
  unsigned mcpus;            /* online cores then */
  int mphys[RP_MAX_DEVICES]; /* the model's physical devices, else -1 */

  rp_summary sum;
};

/* Lanes and costs of every op: fills lane, cost, source, lanes, nlane,
 * nsource and the lane loads. */
rp_status rp__analysis_lanes(rp_analysis *a, const double *measured);
/* Bottom levels, the critical path and its ops. */
rp_status rp__analysis_critical(rp_analysis *a);
/* The list schedule: start, order, makespan and slack. */
rp_status rp__analysis_schedule(rp_analysis *a);

/* The calibrated prediction: model_* figures of the summary, mstart and
 * mend. RP_ENOTFOUND when the options name a mode the model lacks. */
rp_status rp__analysis_predict(rp_analysis *a, const rp_model *m);
/* The team times the prediction takes (range.c): opts.team_us @p team
 * (with @p tmin, @p tmax: may be NULL), else the graph's where their
 * threads and backend are model @p m's team's; tcost, tlo, thi and the
 * summary's stored_team_* set. RP_ENOMEM. */
rp_status rp__analysis_team(rp_analysis *a, const rp_model *m,
                            const double *team, const double *tmin,
                            const double *tmax);
/* Identical operations (type, device, name, kernel, index space, bytes)
 * with team times share the median of their team time over their serial
 * cost: each one's team time (and range) is its cost times it (pool.c).
 * Needs cost and elided (the lanes) and tcost; RP_ENOMEM. */
rp_status rp__analysis_pool_team(rp_analysis *a);
/* The predicted range into the summary (predicted_lo, predicted_hi):
 * the prediction again with the costs at clo / thi and at chi / tlo. */
rp_status rp__analysis_range(rp_analysis *a, const rp_model *m);
/* Bytes copy n moves (its written access). */
uint64_t rp__copy_bytes(const rp_graph *g, uint32_t n);
/* Bytes region r covers. */
uint64_t rp__region_bytes(const rp_graph *g, const rp_region *r);
/* Bytes op n moves through memory: each access once, read-write twice. */
double rp__op_bytes(const rp_graph *g, uint32_t n);
/* Whether a model holds only finite, non-negative figures. */
int rp__model_valid(const rp_model *m);
/* This host's name, '/' replaced, never empty (model.c). */
void rp__host_name(char *h, size_t n);
/* The versioning rule (core/versioned.c) at the analysis' public entries:
 * dst gets the defaults, then the caller's src (NULL: none) over them;
 * RP_EINVAL with rp_last_error() naming @p what for a size it refuses. */
rp_status rp__analysis_opts_in(rp_analysis_opts *dst,
                               const rp_analysis_opts *src, const char *what);
/* mkdir -p of the folder of path; 0 or -1 (model.c). */
int rp__make_parent(const char *path);
/* Writers' helpers (report.c). */
/* Prints a double as %.15g, or %.17g where that does not read back
 * exactly, in any locale (rp__num_text; JSON-safe: never inf or nan,
 * which costs are checked against). */
void rp__put_num(FILE *fp, double v);
/* Prints s as XML text (& < > " escaped, control characters as
 * spaces; svg.c). */
void rp__put_xml_str(FILE *fp, const char *s);
/* Prints s as a JSON string literal, quotes included. */
void rp__put_json_str(FILE *fp, const char *s);
/* The "predicted speedup" line of the reports: the headline, or that
 * the analysis gives a bound only. */
void rp__write_predicted(const rp_analysis *a, FILE *fp);
/* Name of op n, never NULL. */
const char *rp__op_name(const rp_analysis *a, uint32_t n);
/* Name of buffer b, or "" for RP_NONE. */
const char *rp__buf_name(const rp_analysis *a, uint32_t b);
/* Name of a cost source ("given", "measured", "modelled", "default"). */
const char *rp__source_name(rp_cost_source s);
/* A fill colour for a lane kind (dot and SVG agree). */
const char *rp__lane_colour(rp__lane_kind k);

static inline double rp__end(const rp_analysis *a, uint32_t n) {
  return a->start[n] + a->cost[n];
}

#endif
