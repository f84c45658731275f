/* reprise: checking the hand-written dependencies of a transcribed
 * program against its accesses. */
#ifndef REPRISE_CHECK_H
#define REPRISE_CHECK_H

#include <stdio.h>
#include "reprise/analyze.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup rp_check_fn Checking hand-written dependencies
 * A program that orders its operations by hand (streams and events, or
 * any explicit ordering) is transcribed as a graph whose operations carry
 * their accesses and their explicit `after` dependencies (record with
 * RP_GRAPH_NO_COHERENCE so that copies are as written). The check looks
 * only at the accesses and the `after` lists, never at the edges the
 * recorder derives: every pair of conflicting operations (same buffer, same
 * memory space, intersecting regions, one writes) that the `after` edges
 * do not order is a missing order, a race; every `after` edge whose removal
 * leaves every conflicting pair ordered is superfluous, and the check
 * predicts what dropping it gains (the schedule over the `after` edges,
 * with and without it). A graph with no `after` edge has no hand-written
 * order to check (a program recorded with the library: its orders are
 * the ones reprise derives): the check then finds nothing, and
 * rp_check_num_orders() says 0. Copies inserted by automatic coherence are
 * the recorder's, ordered by it: pairs with one are never races.
 * Quadratic in the operations (it compares every
 * conflicting pair and keeps reachability as bit sets): meant for
 * transcribed programs of up to some thousands of operations.
 * Thread safety: a check is read-only once made; several threads may
 * read one check at once. rp_check_deps() may run in several threads at
 * once on the same ended graph.
 * @{ */

typedef struct rp_check rp_check;

/** One finding. */
typedef struct rp_check_item {
  rp_node from, to;       /**< the two operations, from before to */
  rp_edge_kind kind;      /**< races: RP_EDGE_RAW/WAR/WAW; superfluous:
                             RP_EDGE_AFTER */
  rp_buf buf;             /**< races: the buffer; else RP_NONE */
  int space;              /**< races: RP_SPACE_HOST or the device */
  uint64_t offset, bytes; /**< races: the first intersecting byte range */
  int implied;            /**< superfluous: other `after` edges order the
                             two operations anyway (no gain) */
  double gain_us;         /**< superfluous: predicted time saved by dropping
                             the edge (schedule makespan, or the model's
                             overlapped time when a model is given) */
} rp_check_item;

/** Most operations rp_check_deps() takes (reachability is kept as bit
 * sets, nop^2 / 8 bytes). */
#define RP_CHECK_MAX_OPS 32768u

/** @brief Check the `after` dependencies of ended graph @p g against its
 * accesses. @p o: analysis options for the predicted gains, or NULL.
 * @return RP_OK, RP_ESTATE (not ended), RP_EINVAL (more than
 *   RP_CHECK_MAX_OPS operations, bad options), RP_ENOMEM. */
RP_API rp_status rp_check_deps(const rp_graph *g, const rp_analysis_opts *o,
                               rp_check **out);
/** @brief Destroy a check. NULL is a no-op. */
RP_API void rp_check_destroy(rp_check *c);
/** @brief Number of distinct `after` edges the check read: 0 when the
 * graph has no hand-written order (nothing checked, no race). */
RP_API uint32_t rp_check_num_orders(const rp_check *c);
/** @brief Number of races (missing orders), in (to, from) order. */
RP_API uint32_t rp_check_num_races(const rp_check *c);
/** @brief Race @p i. @return RP_OK or RP_EINVAL. */
RP_API rp_status rp_check_race(const rp_check *c, uint32_t i,
                               rp_check_item *out);
/** @brief Number of superfluous `after` edges, in (to, from) order. */
RP_API uint32_t rp_check_num_superfluous(const rp_check *c);
/** @brief Superfluous edge @p i. @return RP_OK or RP_EINVAL. */
RP_API rp_status rp_check_superfluous(const rp_check *c, uint32_t i,
                                      rp_check_item *out);
/** @brief Predicted time of the graph ordered by its `after` edges, and
 * with every superfluous edge dropped. */
RP_API void rp_check_times(const rp_check *c, double *as_written_us,
                           double *minimal_us);
/** @brief Human report: each race with its operations, buffer, byte range
 * and kind; each superfluous edge with its predicted gain. */
RP_API rp_status rp_check_write_text(const rp_check *c, FILE *fp);
/** @brief The same as JSON ("reprise-check", version 1). */
RP_API rp_status rp_check_write_json(const rp_check *c, FILE *fp);

/** @} */

#ifdef __cplusplus
}
#endif
#endif
