/* The backend registry: the backends built in, those linked in (static
 * library) and the plugins loaded so far; finding one by name (loading its
 * plugin on first use) or choosing one automatically. Compiled once per
 * library: RP_LINKED_PLUGINS for the static one. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "replay/registry.h"
#include "reprise/plugin.h"
#include "backends_table.h"

extern const rp_backend rp_backend_reference;

enum { MAX_BACKENDS = 32 };

/* NULL-terminated; only ever appended to, under mu, so a reader of
 * rp_backend_list() sees a consistent prefix. */
static const rp_backend *list[MAX_BACKENDS + 1] = {
    &rp_backend_reference, RP_BUILTIN_BACKENDS RP_LINKED_BACKENDS NULL};
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

#ifdef RP_LINKED_PLUGINS
/* The static library: the plugins' backends are those linked in (weak
 * references, NULL when the program did not link their archive), dropped
 * from the list before main. Their plugins are never loaded: a plugin
 * needs the shared library, a second core beside this one. */
static const char *const plugins[] = {NULL};
static const char *const unlinked[] = {RP_PLUGIN_NAMES NULL};

__attribute__((constructor)) static void drop_unlinked(void) {
  size_t k = 0;
  for (size_t i = 0; i < MAX_BACKENDS; i++)
    if (list[i])
      list[k++] = list[i];
  while (k < MAX_BACKENDS)
    list[k++] = NULL;
}
#else
/* Plugins of this build, tried for "auto". */
static const char *const plugins[] = {RP_PLUGIN_NAMES NULL};
static const char *const unlinked[] = {NULL};
#endif
/* Names this project knows, for a clearer message when one is not
 * installed. */
static const char *const known[] = {"reference", "openmp", "cuda", "xrt",
                                    "starpu"};

static const rp_backend *get_locked(const char *name) {
  for (const rp_backend *const *b = list; *b; b++)
    if (!strcmp((*b)->name, name))
      return *b;
  return NULL;
}

const rp_backend *rp__registry_get(const char *name) {
  pthread_mutex_lock(&mu);
  const rp_backend *be = get_locked(name);
  pthread_mutex_unlock(&mu);
  return be;
}

rp_status rp__registry_add(const rp_backend *be) {
  rp_status s = RP_OK;
  char msg[160];
  pthread_mutex_lock(&mu);
  const rp_backend *old = get_locked(be->name);
  size_t n = 0;
  while (list[n])
    n++;
  if (old && old != be) {
    snprintf(msg, sizeof msg,
             "a backend named \"%.64s\" is already "
             "registered",
             be->name);
    s = RP_ESTATE;
  } else if (!old && n == MAX_BACKENDS) {
    snprintf(msg, sizeof msg, "too many backends (%d)", MAX_BACKENDS);
    s = RP_ENOMEM;
  } else if (!old) {
    list[n] = be;
  }
  pthread_mutex_unlock(&mu);
  if (s != RP_OK)
    rp__set_last_error(msg);
  return s;
}

/* Loads every plugin of this build not loaded yet, ignoring failures. */
static void load_plugins(void) {
  for (const char *const *p = plugins; *p; p++)
    if (!rp__registry_get(*p)) {
      const rp_backend *be;
      rp__plugin_load_name(*p, &be);
    }
}

const rp_backend *const *rp_backend_list(void) {
  load_plugins();
  return list;
}

const char *rp_backend_name(const rp_backend *be) {
  return be ? be->name : "none";
}

rp_status rp_backend_probe(const rp_backend *be) {
  RP_ENTER();
  if (!be) {
    rp__set_last_error("rp_backend_probe: no backend");
    return RP_EINVAL;
  }
  rp__set_last_error("");
  rp_status s = be->probe ? be->probe() : RP_OK;
  if (s != RP_OK && !rp_last_error()[0]) {
    char msg[160];
    snprintf(msg, sizeof msg, "backend \"%.64s\" cannot run here: %s", be->name,
             rp_strerror(s));
    rp__set_last_error(msg);
  }
  return s;
}

/* A name a plugin file may carry: [a-z0-9_-], 1 to 32 characters. */
static int plugin_name_ok(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n > 32)
    return 0;
  for (const char *c = name; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' ||
          *c == '-'))
      return 0;
  return 1;
}

static rp_status find_named(const char *name, const rp_backend **out) {
  const rp_backend *be = rp__registry_get(name);
  if (be) {
    *out = be;
    return RP_OK;
  }
  char msg[512];
  for (const char *const *p = unlinked; *p; p++)
    if (!strcmp(*p, name)) {
      snprintf(msg, sizeof msg,
               "backend \"%s\" is not linked into this "
               "program: link libreprise-%s.a (CMake: reprise::static_%s) "
               "or use the shared library, which loads its plugin",
               name, name, name);
      rp__set_last_error(msg);
      return RP_ENOTSUP;
    }
  rp_status s =
      plugin_name_ok(name) ? rp__plugin_load_name(name, out) : RP_ENOTFOUND;
  if (s != RP_ENOTFOUND)
    return s; /* loaded, or found and failed: message set */
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (!strcmp(known[i], name)) {
      snprintf(msg, sizeof msg,
               "backend \"%s\" is not available: not "
               "built into this library and no plugin libreprise-%s.so in "
               "%.300s (REPRISE_PLUGIN_PATH adds folders)",
               name, name, rp_plugin_path());
      rp__set_last_error(msg);
      return RP_ENOTSUP;
    }
  snprintf(msg, sizeof msg, "no backend named \"%.100s\"", name);
  rp__set_last_error(msg);
  return RP_ENOTFOUND;
}

/* Whether backend @p be has a body for every kernel of graph @p g: its
 * own (cuda: .cuda or .cuda_host; xrt: .xrt) on devices of its kind or of
 * none, the CPU body elsewhere (the plan's rule, replay/plan.c). A kernel
 * loaded without a descriptor counts as runnable. */
static int runs_graph(const rp_backend *be, const rp_graph *g) {
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
    rp_node_info ni;
    if (rp_node_info_get(g, n, &ni) != RP_OK || ni.type != RP_OP_KERNEL ||
        !ni.kernel)
      continue;
    const rp_kernel *k = ni.kernel;
    rp_device_kind kind =
        ni.device < 0 ? RP_DEVICE_CPU : rp_graph_device_kind(g, ni.device);
    if (kind == RP_DEVICE_DEFAULT)
      kind = be->owns;
    int body = kind != be->owns || kind == RP_DEVICE_CPU ? k->cpu != NULL
               : kind == RP_DEVICE_CUDA ? k->cuda || k->cuda_host
               : kind == RP_DEVICE_FPGA ? k->xrt != NULL
                                        : 1;
    if (!body)
      return 0;
  }
  return 1;
}

/* The best usable backend (the CPU ones only with @p cpu); with a graph,
 * the best that runs every kernel of it if one does, else the best. */
static const rp_backend *best_of(int cpu, const rp_graph *g) {
  const rp_backend *best = NULL, *runs = NULL;
  for (const rp_backend *const *b = rp_backend_list(); *b; b++) {
    if (cpu && (*b)->owns != RP_DEVICE_CPU)
      continue;
    int over_best = !best || (*b)->priority > best->priority;
    int over_runs =
        (!runs || (*b)->priority > runs->priority) && g && runs_graph(*b, g);
    if ((!over_best && !over_runs) || rp_backend_probe(*b) != RP_OK)
      continue;
    if (over_best)
      best = *b;
    if (over_runs)
      runs = *b;
  }
  return runs ? runs : best;
}

static rp_status find_any(const char *name, const rp_graph *g,
                          const rp_backend **out) {
  if (!out) {
    rp__set_last_error("rp_backend_find: out is NULL");
    return RP_EINVAL;
  }
  *out = NULL;
  int cpu = name && !strcmp(name, "cpu");
  if (name && strcmp(name, "auto") && !cpu)
    return find_named(name, out);
  const char *env = getenv("RP_BACKEND");
  if (!cpu && env && env[0] && strcmp(env, "auto"))
    return find_named(env, out);
  const rp_backend *best = best_of(cpu, g);
  if (!best) {
    rp__set_last_error(cpu ? "no CPU backend is usable"
                           : "no backend found a usable device");
    return RP_ENODEV;
  }
  *out = best;
  return RP_OK;
}

rp_status rp__backend_find_for(const rp_graph *g, const char *name,
                               const rp_backend **out) {
  rp_status s = find_any(name, g, out);
  if (s == RP_OK)
    rp__set_last_error("");
  return s;
}

rp_status rp_backend_find(const char *name, const rp_backend **out) {
  RP_ENTER();
  return rp__backend_find_for(NULL, name, out);
}
