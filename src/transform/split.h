/* Automatic chunked pipelining (transform/split.c): a graph rewritten with
 * each splittable kernel, and the copies of its following regions, cut
 * into k chunks; the recording again that the split and reshape passes
 * share (transform/pass.h). */
#ifndef RP_SPLIT_H
#define RP_SPLIT_H

#include "transform/pass.h"

/* Whether kernel op n of g may be split: 1 and its axis (0..2) in *axis,
 * else 0 and why in why[] (may be NULL). */
int rp__split_eligible(const rp_graph *g, rp_node n, unsigned *axis, char *why,
                       size_t whylen);

/* Rewrite g with every eligible kernel (and the h2d/d2h copies of exactly
 * its following regions on its device) cut into k chunks (fewer where the
 * axis is shorter); with reshape > 0 and nothing cut, its host<->device
 * copies reshaped for threshold `reshape` bytes (transform/reshape.h).
 * Nothing to change: RP_OK with out->g NULL. RP_ENOTSUP when g cannot be
 * recorded again (a kernel without its descriptor: loaded from a file). */
rp_status rp__split_build(const rp_graph *g, unsigned k, uint64_t reshape,
                          rp__rewrite *out, char *err, size_t errlen);
/* As rp__split_build, the reshape merging also runs of larger copies up to
 * `run` bytes that feed no pipeline (transform/reshape.h). */
rp_status rp__split_build_run(const rp_graph *g, unsigned k, uint64_t reshape,
                              uint64_t run, rp__rewrite *out, char *err,
                              size_t errlen);

#endif
