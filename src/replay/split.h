/* Automatic chunked pipelining (replay/split.c): a graph rewritten with
 * each splittable kernel, and the copies of its following regions, cut
 * into k chunks. */
#ifndef RP_SPLIT_H
#define RP_SPLIT_H

#include "reprise/record.h"

typedef struct rp__split {
  rp_graph *g;        /* the rewritten graph, ended; NULL: nothing split */
  uint32_t nop;       /* operations of the original graph */
  uint32_t *first;    /* per original op (nop + 1): its first op in g */
  uint32_t *orig;     /* per op of g: the original op */
  int8_t *axis;       /* per op of g: a kernel chunk's axis (0..2), or -1 */
  uint64_t *origin;   /* per op of g: a kernel chunk's first point on it */
  uint32_t nkernels;  /* kernels split */
  uint32_t ncopies;   /* copies split */
  uint32_t nmerged;   /* reshaped: copies in merged into an earlier one */
  uint32_t nsplit;    /* reshaped: copies back split per writer */
} rp__split;

/* Whether kernel op n of g may be split: 1 and its axis (0..2) in *axis,
 * else 0 and why in why[] (may be NULL). */
int rp__split_eligible(const rp_graph *g, rp_node n, unsigned *axis,
                       char *why, size_t whylen);

/* Rewrite g with every eligible kernel (and the h2d/d2h copies of exactly
 * its following regions on its device) cut into k chunks (fewer where the
 * axis is shorter); with reshape > 0 and nothing cut, its host<->device
 * copies reshaped for threshold `reshape` bytes (replay/reshape.h).
 * Nothing to change: RP_OK with out->g NULL. RP_ENOTSUP when g cannot be
 * recorded again (a kernel without its descriptor: loaded from a file). */
rp_status rp__split_build(const rp_graph *g, unsigned k, uint64_t reshape,
                          rp__split *out, char *err, size_t errlen);

void rp__split_free(rp__split *s);

#endif
