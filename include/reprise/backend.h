/* reprise: the interface a backend implements (for backend authors). */
#ifndef REPRISE_BACKEND_H
#define REPRISE_BACKEND_H

#include "reprise/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup rp_backend_if Backend interface
 * A backend is one const table of function pointers. The core calls
 * instantiate once per exec, then run/wait any number of times, rebind and
 * set_scalar between runs, destroy last. A backend reads the graph through
 * the public inspection calls and the exec through the accessors below.
 * @{ */

/** Bumped when this table changes; a backend built for another value is
 * refused. */
#define RP_BACKEND_ABI 1

struct rp_backend {
  unsigned abi;
  const char *name;
  int priority;                     /**< higher wins for "auto" */
  rp_status (*probe)(void);
  rp_status (*instantiate)(rp_exec *x, void **state);
  /** Start @p iterations runs; may return before they finish. */
  rp_status (*launch)(void *state, unsigned iterations);
  rp_status (*wait)(void *state);
  /** Buffer @p b's host image is now rp_exec_host(x)[b]. */
  rp_status (*rebind)(void *state, rp_buf b);
  /** Kernel node @p n's argument block rp_exec_args(x, n) changed. */
  rp_status (*set_scalar)(void *state, rp_node n, unsigned param);
  /** One run timing each op (microseconds); NULL: timed by the core with
   * the reference's one-at-a-time order is not possible, RP_ENOTSUP. */
  rp_status (*profile)(void *state, double *op_us);
  void (*destroy)(void *state);
};

/** @brief The graph being executed. */
RP_API const rp_graph *rp_exec_graph(const rp_exec *x);
/** @brief The options given at creation (never NULL; zeroed if none). */
RP_API const rp_exec_opts *rp_exec_opts_get(const rp_exec *x);
/** @brief Current host image of every buffer, indexed by rp_buf (NULL for
 * internal buffers). */
RP_API void *const *rp_exec_host(const rp_exec *x);
/** @brief The exec's argument block template of kernel node @p n: index
 * space and scalars filled, buffer slots NULL (each backend fills them with
 * its own images). NULL for other nodes. */
RP_API const rp_kargs *rp_exec_args(const rp_exec *x, rp_node n);
/** @brief Record a failure message for rp_exec_error(); printf-style. */
RP_API void rp_exec_set_error(rp_exec *x, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** @brief Successors of node @p n (CSR over the graph's edges).
 * @param count receives how many. @return the array (valid while g lives). */
RP_API const rp_node *rp_graph_succs(const rp_graph *g, rp_node n,
                                     uint32_t *count);
/** @brief Predecessors of node @p n. */
RP_API const rp_node *rp_graph_preds(const rp_graph *g, rp_node n,
                                     uint32_t *count);
/** @brief Host task of node @p n: its function and user pointer. */
RP_API rp_status rp_node_host_fn(const rp_graph *g, rp_node n, rp_host_fn *fn,
                                 void **user);
/** @brief Byte intervals an access covers, for copies and coherence: fills
 * up to @p max pairs (offset, length) in @p iv and returns how many exist
 * in total. A box on a row-major buffer gives one interval per contiguous
 * run. */
RP_API uint64_t rp_region_intervals(const rp_graph *g, const rp_region *r,
                                    uint64_t *iv, uint64_t max);

/** @} */

#ifdef __cplusplus
}
#endif
#endif
