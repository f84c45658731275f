/* reprise: backends as run-time plugins. */
#ifndef REPRISE_PLUGIN_H
#define REPRISE_PLUGIN_H

#include "reprise/replay.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup rp_plugin Plugins
 * A backend that needs a vendor library (CUDA, XRT, ...) is a shared
 * object `libreprise-<name>.so`, so that the core library loads on any
 * machine. rp_backend_find() loads one on first use by name, searching in
 * order:
 *
 * 1. the folders of the environment variable `REPRISE_PLUGIN_PATH`
 *    (separated by `:`);
 * 2. the folder `reprise/` beside the library (`${libdir}/reprise` once
 *    installed, `<build>/reprise` in a build tree);
 * 3. the plugin folder chosen at configure time.
 *
 * rp_plugin_load() loads one from an explicit path. A plugin exports one
 * symbol, ::RP_PLUGIN_ENTRY_NAME, a function returning its backend table;
 * the table must start with `unsigned abi` and `const char *name` (in every
 * version of the interface) and is refused unless `abi` equals
 * ::RP_BACKEND_ABI. Plugins are never unloaded. A plugin needs the shared
 * library: a static program has the backends of this build's plugins only
 * when it links their archives (`libreprise-<name>.a`, CMake
 * `reprise::static_<name>`), and never loads those plugins (asking for one
 * not linked in gives ::RP_ENOTSUP, saying what to link).
 * Thread safety: loading is serialised inside the library; a loaded
 * plugin stays loaded for the life of the process.
 * @{ */

/** The name of the symbol a plugin exports. */
#define RP_PLUGIN_ENTRY_NAME "reprise_backend_entry"

/** The type of that symbol. */
typedef const rp_backend *(*rp_plugin_entry_fn)(void);

/** Defines the entry point of a plugin whose backend table is @p table;
 * write it once in the plugin's sources. */
#if defined(__GNUC__)
#define RP_PLUGIN_DEFINE(table)                                                \
  __attribute__((visibility("default"))) const rp_backend *                    \
  reprise_backend_entry(void);                                                 \
  __attribute__((visibility("default"))) const rp_backend *                    \
  reprise_backend_entry(void) {                                                \
    return &(table);                                                           \
  }
#else
#define RP_PLUGIN_DEFINE(table)                                                \
  const rp_backend *reprise_backend_entry(void);                               \
  const rp_backend *reprise_backend_entry(void) { return &(table); }
#endif

/** @brief Load the plugin at @p path and register its backend.
 * @param out receives the backend, may be NULL.
 * @return RP_OK (also when that file is already loaded); RP_EINVAL for a
 * NULL path; RP_EIO when it cannot be loaded (missing file or missing
 * vendor library: rp_last_error() says which); RP_ENOTSUP when it has no
 * entry point or was built for another ::RP_BACKEND_ABI; RP_ESTATE when a
 * different backend of that name is already registered. */
RP_API rp_status rp_plugin_load(const char *path, const rp_backend **out);

/** @brief The folders searched for plugins, in order, separated by `:`
 * (valid until the next call). */
RP_API const char *rp_plugin_path(void);

/** @} */

#ifdef __cplusplus
}
#endif
#endif
