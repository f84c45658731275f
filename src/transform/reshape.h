/* Copies reshaped for devices with a cost per transfer (transform/reshape.c):
 * which regions each host<->device copy of a recorded graph becomes when
 * the graph is recorded again (transform/split.c does the recording). */
#ifndef RP_RESHAPE_H
#define RP_RESHAPE_H

#include "reprise/record.h"

typedef struct rp__reshape {
  uint32_t *off; /* per op (nop + 1): its regions reg[off[n] .. off[n+1]);
                        a copy kept as recorded has its own region, a copy
                        merged into an earlier one none */
  rp_region *reg;
  uint32_t merged; /* host->device copies merged into an earlier one */
  uint32_t split;  /* device->host copies split per writer */
} rp__reshape;

/* Plans the copies of ended graph g for threshold `bytes` (> 0):
 *
 * - merge: host->device copies of one buffer to one device that could all
 *   run where the first of them runs (none of their ancestors comes after
 *   it, and no explicit dependency names them) form a group; each run of
 *   them that covers one contiguous byte range without a gap becomes one
 *   copy at the first one's place when its copies average fewer than
 *   `bytes` bytes;
 * - split: a device->host copy whose bytes were last written on the device
 *   by several of its direct predecessors, each a disjoint part, becomes
 *   one copy per part (and per part between them) when every part has at
 *   least `bytes` bytes and the writers are independent chains (no
 *   ancestor in common, none an ancestor of another), so each part leaves
 *   when its writer ends.
 *
 * Every region the plan gives is a byte range, recorded at the place of
 * the operation that carries it; the graph recorded again computes what
 * the recorded graph computes. out->merged + out->split == 0: nothing to
 * change. */
rp_status rp__reshape_plan(const rp_graph *g, uint64_t bytes, uint64_t run,
                           rp__reshape *out);

void rp__reshape_free(rp__reshape *r);

#endif
