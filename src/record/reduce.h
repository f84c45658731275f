/* Exact transitive reduction of hazard candidates while recording
 * (record/reduce.c). */
#ifndef RP_REDUCE_H
#define RP_REDUCE_H

#include "record/graph.h"

/* Default ancestor window, in operations (a power of two): the bitsets
 * start at 64 operations and double up to it as the graph grows, past
 * RP__ANC_WINDOW_SURE only while candidates in the far half of the
 * window are frequent (the wider window decides them for the price of
 * wider bitsets; rp__reduce_begin). */
#define RP__ANC_WINDOW 4096u
#define RP__ANC_WINDOW_SURE 1024u
/* Default length of an operation's list of latest ancestors. */
#define RP__ANC_LIST 32u

/* One candidate predecessor of the operation being recorded. */
typedef struct rp__cand {
  uint32_t from;
  uint8_t kind;
  uint8_t keep; /* explicit (after): stored even when implied */
  uint32_t buf;
} rp__cand;

typedef struct rp__reduce rp__reduce;

/* Nodes a search for a far candidate may enter before the candidate is
 * left pending (rp__reduce_settle decides it). */
#define RP__SEARCH_MAX 16u

/* A reducer with an ancestor window of up to `window` operations (a power
 * of two, >= 64), ancestor lists of up to `list` entries (>= 1) and
 * searches entering up to `search` nodes; NULL when out of memory or the
 * sizes are not allowed. */
rp__reduce *rp__reduce_new(uint32_t window, uint32_t list, uint32_t search);
void rp__reduce_free(rp__reduce *r);

/* Starts the candidates of node j (the next node, in order). -1: no memory. */
int rp__reduce_begin(rp__reduce *r, uint32_t j);

/* Adds a candidate edge from -> j. Several candidates from one source merge
 * into one: the explicit one, else RAW before WAR before WAW, then the
 * lowest buffer. */
void rp__reduce_add(rp__reduce *r, uint32_t from, int kind, int keep,
                    uint32_t buf);

/* Says that node from reaches another candidate of j (or will): if it is
 * a candidate too, its edge is implied (the tracker knows this of a
 * writer whose readers since are WAR candidates of j). */
void rp__reduce_implied(rp__reduce *r, uint32_t from);

/* Appends to g->edge the candidates of j that no other candidate reaches
 * (plus the explicit ones), sorted by source, and records what is known
 * of j's ancestors. Exact once settled (rp__reduce_settle): an edge is
 * stored if and only if it is in the transitive reduction of all hazards
 * (explicit edges always); before, a few may be pending. -1: no
 * memory. */
int rp__reduce_end(rp_graph *g, rp__reduce *r, uint32_t j);

/* Decides the edges rp__reduce_end left pending (stored, but maybe
 * implied: a search would have gone too far), all at once, and removes
 * the implied ones from g->edge. -1: no memory (nothing changed). */
int rp__reduce_settle(rp_graph *g, rp__reduce *r);

/* How many stored edges are pending. */
uint32_t rp__reduce_pending(const rp__reduce *r);

/* The ancestor window now, in operations (it widens as it pays). */
uint32_t rp__reduce_window(const rp__reduce *r);

/* 1 if node x is known, from the ancestor window or u's list, to be an
 * ancestor of node u (both ended); 0 means "not known", not "no". */
int rp__reduce_known_ancestor(const rp__reduce *r, uint32_t x, uint32_t u);

#endif
