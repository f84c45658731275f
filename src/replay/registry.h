/* The backend registry (replay/registry.c) and the plugin loader
 * (replay/plugin.c), shared between the two. */
#ifndef RP_REGISTRY_H
#define RP_REGISTRY_H

#include "reprise/backend.h"

/* Adds @p be (a loaded plugin's table, abi already checked) to the list;
 * RP_ESTATE with a message if another backend has its name, RP_ENOMEM
 * when the list is full. Thread-safe. */
rp_status rp__registry_add(const rp_backend *be);

/* The registered backend named @p name, or NULL. Thread-safe. */
const rp_backend *rp__registry_get(const char *name);

/* rp_backend_find() for graph @p g: "auto" (or NULL) takes the best usable
 * backend that has a body for every kernel of @p g (a CPU-only kernel on
 * a machine with a GPU runs on a CPU backend), the best one when none
 * has; a name (or RP_BACKEND) is taken as given. */
rp_status rp__backend_find_for(const struct rp_graph *g, const char *name,
                               const rp_backend **out);

/* Loads plugin libreprise-@p name.so from the search path and registers it.
 * RP_ENOTFOUND (no message set) when no folder has the file; otherwise as
 * rp_plugin_load(). */
rp_status rp__plugin_load_name(const char *name, const rp_backend **out);

#endif
