/* Graph -> graph passes (src/transform): rewrites of an ended graph that
 * rp_exec_create runs, in one pipeline, before the plan is built, and that
 * the analysis can run to describe the graph that really runs. Each pass
 * has one signature (rp__pass_fn); rp__transform runs the enabled ones in
 * order, each on the previous one's output, and composes their maps, so
 * that node indices, profiles and timelines map back to the recorded
 * graph. Passes record the graph again through the recorder (kernels need
 * their descriptors: a graph loaded from a file cannot be rewritten). */
#ifndef RP_PASS_H
#define RP_PASS_H

#include <stdint.h>
#include "reprise/record.h"

/* A rewritten graph and its map back to the graph it came from. */
typedef struct rp__rewrite {
  rp_graph *g;       /* the rewritten graph, ended; NULL: nothing changed */
  uint32_t nop;      /* operations of the original graph */
  uint32_t *first;   /* per original op (nop + 1): its first op in g */
  uint32_t *orig;    /* per op of g: the original op */
  int8_t *axis;      /* per op of g: a kernel chunk's axis (0..2), or -1 */
  uint64_t *origin;  /* per op of g: a kernel chunk's first point on it */
  uint32_t nkernels; /* kernels split */
  uint32_t ncopies;  /* copies split */
  uint32_t nmerged;  /* reshaped: copies in merged into an earlier one */
  uint32_t nsplit;   /* reshaped: copies back split per writer */
} rp__rewrite;

/* What the passes are asked to do. */
typedef struct rp__pass_opts {
  unsigned split;         /* chunks per splittable kernel (<= 1: none) */
  uint64_t reshape_bytes; /* reshape copies for this threshold (0: none) */
  uint64_t reshape_run;   /* and merge runs of larger copies up to this
                             total that feed no pipeline (0: never) */
} rp__pass_opts;

/* A pass: rewrites ended graph @p in into out->g with its maps; nothing
 * to change: RP_OK with out->g NULL. On failure out is empty and err
 * (may be NULL) says why. */
typedef rp_status (*rp__pass_fn)(const rp_graph *in, const rp__pass_opts *o,
                                 rp__rewrite *out, char *err, size_t errlen);

/* The passes (transform/passes.c). */
rp_status rp__pass_split(const rp_graph *in, const rp__pass_opts *o,
                         rp__rewrite *out, char *err, size_t errlen);
rp_status rp__pass_reshape(const rp_graph *in, const rp__pass_opts *o,
                           rp__rewrite *out, char *err, size_t errlen);

/* Runs every pass @p o enables, in order, on ended graph @p g: out->g is
 * the graph to replay (NULL: g unchanged) with maps back to g. */
rp_status rp__transform(const rp_graph *g, const rp__pass_opts *o,
                        rp__rewrite *out, char *err, size_t errlen);

void rp__rewrite_free(rp__rewrite *r);

#endif
