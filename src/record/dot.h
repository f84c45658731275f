/* Graphviz drawings of graphs (record/dot.c), shared with the analysis'
 * drawing (analyze/dot.c). */
#ifndef RP_DOT_H
#define RP_DOT_H

#include <stdio.h>
#include "record/graph.h"

/* Graphs of up to this many operations are drawn one node per operation;
 * bigger ones grouped (rp__dot_grouped). */
#define RP__DOT_DETAIL 64

/* What a drawing shows beyond the graph: the analysis' lanes, times and
 * critical path. Every pointer may be NULL (the graph alone: lanes from
 * each operation's type and device, no times). */
typedef struct rp__dot_extra {
  const char *title;    /* the drawing's label */
  const uint32_t *lane; /* per op: index into the lanes below */
  const char *const *lane_name;
  const int *lane_kind; /* per lane: 0 compute, 1 h2d, 2 d2h, 3 copy,
                                  4 p2p, 5 host */
  uint32_t nlane;
  const double *start, *end; /* per op, us */
  const uint8_t *critical;   /* per op */
  const uint32_t *crit;      /* the critical path, in order */
  uint32_t ncrit;
} rp__dot_extra;

/* A fill colour for the k-th lane of a kind (shades of one hue per kind),
 * the graph's and the analysis' drawings alike. */
const char *rp__dot_colour(int kind, unsigned k);

/* The grouped drawing: operations in clusters by step (the repetitions of
 * the program's loop, found from the operations' names and their
 * dependencies), the operations of one name, type and lane within a step
 * drawn as one node, parallel edges merged into one with the hazards in
 * its tooltip, a colour per lane, and a legend. With many steps, the
 * middle ones are drawn as one node. */
rp_status rp__dot_grouped(const rp_graph *g, const rp__dot_extra *x, FILE *fp);

/* The legend of a detailed drawing (one node per operation): the colours
 * of the lanes of g (or of x's lanes) and what the edges mean, as one
 * node "legend". */
void rp__dot_legend(const rp_graph *g, const rp__dot_extra *x, FILE *fp);

#endif
