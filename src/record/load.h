/* Loading a graph file with trusted edges (record/load.c). */
#ifndef RP_LOAD_H
#define RP_LOAD_H

#include "record/graph.h"

/* Appends an operation as rp__record_op() would, but derives no hazards:
 * its accesses (checked, never WHOLE) and explicit dependencies are
 * stored as given; name NULL: the name rp__record_op() would derive. The
 * graph must have no edges yet. */
rp_status rp__load_op(rp_graph *g, const rp__proto *proto,
                      const rp__access *acc, uint32_t nacc,
                      const rp_node *after, uint32_t nafter, const char *name,
                      rp_node *out);

/* Installs the m edges e, sorted by (from, to) with from < to < nop and
 * valid kinds and buffers (the caller checks), into a graph of loaded
 * operations; rp_graph_end() then builds the CSRs. */
rp_status rp__load_edges(rp_graph *g, const rp_edge *e, uint32_t m);

#endif
