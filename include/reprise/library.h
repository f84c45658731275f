/* reprise: kernel libraries, and binding a graph file to code and memory. */
#ifndef REPRISE_LIBRARY_H
#define REPRISE_LIBRARY_H

#include "reprise/record.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup rp_kernel_library Kernel libraries
 * A graph file holds no code: its kernel operations name their kernel
 * ("kernel") and keep their scalar values ("scalars"), its host tasks have
 * a name. A **kernel library** is a shared object that the user builds
 * from the same kernel sources as the program; it exports its kernel
 * descriptors (and, optionally, host tasks) by name, so that a saved graph
 * replays elsewhere: `reprise run --kernels libmy_kernels.so graph.json`,
 * or a program calling rp_kernels_load() and rp_graph_bind().
 *
 * The convention: the library defines one function,
 * ::RP_KERNEL_LIBRARY_ENTRY_NAME, returning an ::rp_kernel_table (two
 * NULL-terminated lists). Write it with the macro:
 * @code
 * #include <reprise/kernel.h>
 * #include <reprise/library.h>
 * RP_KERNEL(saxpy, { ... })
 * static const rp_param saxpy_params[] = {...};
 * static const rp_kernel saxpy_k = RP_KERNEL_DESC(saxpy, saxpy_params);
 * static const rp_kernel *const my_kernels[] = {&saxpy_k, NULL};
 * RP_KERNEL_LIBRARY(my_kernels, NULL)
 * @endcode
 * and build it as a shared object (`cc -shared -fPIC`, CMake
 * `add_library(my_kernels MODULE ...)`); under nvcc the same source also
 * gives the kernels' CUDA bodies. examples/CMakeLists.txt builds one per
 * example (`libjacobi2d_kernels.so`, ...).
 *
 * Names are matched exactly: a kernel operation runs the descriptor whose
 * `name` equals its kernel name (the descriptor's name at recording), a
 * host task the ::rp_host_task whose `name` equals the operation's name
 * (give host tasks a name with rp_op_opts.name). Several libraries may be
 * loaded; the first one loaded that has a name wins.
 * Thread safety: a loaded kernel set is read-only; several threads may
 * bind graphs with one set at once. rp_kernels_load() may be called from
 * any thread.
 * @{ */

/** A host task a kernel library exports. A host task replayed from a file
 * has no user pointer of its own: @c fn is called with @c user pointing to
 * an ::rp_host_site naming its operation, from which it reads its
 * accesses (rp_node_access()) and buffers (rp_buffer_info()). */
typedef struct rp_host_task {
  const char *name; /**< matched against host-task operations' names */
  rp_host_fn fn;    /**< called with user = const rp_host_site * */
} rp_host_task;

/** What a host task from a kernel library receives as its user pointer. */
typedef struct rp_host_site {
  const rp_graph *graph; /**< the graph being replayed (rp_graph_bind()'s) */
  rp_node node;          /**< the operation */
} rp_host_site;

/** Bumped when ::rp_kernel_table changes; a library built for another
 * value is refused. */
#define RP_KERNEL_TABLE_ABI 1

/** What a kernel library's entry point returns. */
typedef struct rp_kernel_table {
  unsigned abi;                          /**< RP_KERNEL_TABLE_ABI */
  const rp_kernel *const *kernels;       /**< NULL-terminated, or NULL */
  const rp_host_task *const *host_tasks; /**< NULL-terminated, or NULL */
} rp_kernel_table;

/** The name of the function a kernel library exports. */
#define RP_KERNEL_LIBRARY_ENTRY_NAME "reprise_kernel_library"

/** The type of that function. */
typedef const rp_kernel_table *(*rp_kernel_library_fn)(void);

#if defined(__cplusplus)
#define RP__KLIB_LINKAGE extern "C"
#else
#define RP__KLIB_LINKAGE
#endif
#if defined(__GNUC__)
#define RP__KLIB_VISIBLE __attribute__((visibility("default")))
#else
#define RP__KLIB_VISIBLE
#endif

/** Defines the entry point of a kernel library exporting the
 * NULL-terminated arrays @p kernel_list (of const rp_kernel *) and
 * @p host_task_list (of const rp_host_task *, or NULL); write it once in
 * the library's sources. */
#define RP_KERNEL_LIBRARY(kernel_list, host_task_list)                         \
  RP__KLIB_LINKAGE RP__KLIB_VISIBLE const rp_kernel_table *                    \
  reprise_kernel_library(void);                                                \
  RP__KLIB_LINKAGE RP__KLIB_VISIBLE const rp_kernel_table *                    \
  reprise_kernel_library(void) {                                               \
    static const rp_kernel_table t = {RP_KERNEL_TABLE_ABI, (kernel_list),      \
                                      (host_task_list)};                       \
    return &t;                                                                 \
  }

/** A set of loaded kernel libraries. */
typedef struct rp_kernels rp_kernels;

/** @brief Load the kernel library at @p path into the set @p *set
 * (created when @p *set is NULL). @p path is a file's path: a bare name
 * ("libk.so") is the file in the current folder (dlopen would search the
 * library path instead).
 * @return RP_OK; RP_EINVAL (NULL argument); RP_EIO (cannot be loaded:
 *   rp_last_error() says why); RP_ENOTSUP (no entry point
 *   ::RP_KERNEL_LIBRARY_ENTRY_NAME, or built for another
 *   ::RP_KERNEL_TABLE_ABI); RP_ENOMEM. */
RP_API rp_status rp_kernels_load(rp_kernels **set, const char *path);

/** @brief The kernel named @p name in the set (the first library loaded
 * that has one), or NULL. */
RP_API const rp_kernel *rp_kernels_find(const rp_kernels *set,
                                        const char *name);

/** @brief The host task named @p name in the set, or NULL. */
RP_API const rp_host_task *rp_kernels_find_host_task(const rp_kernels *set,
                                                     const char *name);

/** @brief The paths loaded into the set, separated by ", " (for messages;
 * valid until the set changes). "" for an empty or NULL set. */
RP_API const char *rp_kernels_paths(const rp_kernels *set);

/** @brief Close the libraries and free the set; NULL is a no-op. Graphs
 * bound with it (rp_graph_bind()) must be destroyed first: they point into
 * the libraries. */
RP_API void rp_kernels_destroy(rp_kernels *set);

/** @brief A graph to replay made from ended graph @p g (typically read
 * from a file): the same buffers, over the host arrays @p host (one per
 * buffer, rp_graph_num_buffers(g) entries, each at least the buffer's
 * size; a NULL entry, or @p host NULL: the buffer is internal), and the
 * same operations in the same order with the same names, costs, devices,
 * accesses and `after` lists, recorded as given (RP_GRAPH_NO_COHERENCE:
 * the copies automatic coherence inserted are in @p g already). Each
 * kernel operation gets the descriptor of its kernel name from @p set and
 * its saved scalar values; each host task the host task of its name. The
 * result is ended; it keeps pointers into @p g's graph-independent data
 * only, so @p g may be destroyed first.
 * @return RP_OK; RP_ENOTFOUND when a kernel or host task is missing from
 *   the set, RP_EINVAL when a descriptor does not fit its operation (a
 *   different number or role of parameters, scalar values missing from
 *   the file), with rp_last_error() naming the operation, e.g.
 *   `op 3 ("jac_sten"): no kernel named "jac_sten" in libmatpow_kernels.so`;
 *   RP_ESTATE (@p g not ended), RP_ENOMEM. */
RP_API rp_status rp_graph_bind(const rp_graph *g, const rp_kernels *set,
                               void *const *host, rp_graph **out);

/** @} */

#ifdef __cplusplus
}
#endif
#endif
