/* Hazard derivation and coherence tracking (record/hazard.c). */
#ifndef RP_HAZARD_H
#define RP_HAZARD_H

#include "record/graph.h"

/* Derives the edges into node j (appended to g->edge; g->pred_off[j] must
 * be set, the caller sets pred_off[j + 1]) and updates the hazard state. */
rp_status rp__hazards(rp_graph *g, rp_node j, const rp__access *acc,
                      uint32_t nacc, const rp_node *after, uint32_t nafter);

/* Makes g->edge exactly the transitive reduction again (record/reduce.c
 * leaves a few edges pending while recording): call before anything
 * reads the edges of a graph being recorded. RP_OK or RP_ENOMEM. */
rp_status rp__hazards_settle(rp_graph *g);

/* Tests: sets the ancestor window (a power of two >= 64), the length of
 * the ancestor lists (>= 1) and 1 + the nodes a search may enter (1: none,
 * every candidate the window and lists leave undecided is pending) of a
 * graph with nothing recorded yet (record/reduce.h); 0 keeps a default. */
void rp__hazard_tune(rp_graph *g, uint32_t window, uint32_t list,
                     uint32_t search);
/* The same with the default list length. */
void rp__hazard_window(rp_graph *g, uint32_t window);
/* Tests: the ancestor window now (0 before anything is recorded or once
 * the graph ended). */
uint32_t rp__hazard_window_now(const rp_graph *g);

/* Hazard edges recorded but not decided yet (rp__hazards_settle decides
 * them); 0 without a tracker. For tests. */
uint32_t rp__hazard_pending(const rp_graph *g);

/* Called for each part [off, off + len) of an access whose space holds no
 * valid copy; mask says which spaces do (bit 0 host, bit d+1 device d). */
typedef void (*rp__stale_fn)(void *ctx, uint64_t off, uint64_t len,
                             uint64_t mask);
rp_status rp__stale_each(rp_graph *g, const rp__access *a, rp__stale_fn fn,
                         void *ctx);

/* 1 if space holds a valid copy of every byte of [lo, hi) of buffer b. */
int rp__valid_over(rp_graph *g, rp_buf b, uint64_t lo, uint64_t hi, int space);

/* Applies an appended op's writes to the validity state. */
rp_status rp__coherence_update(rp_graph *g, const rp__op *op,
                               const rp__access *acc);

#endif
