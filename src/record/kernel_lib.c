/* Kernel libraries: shared objects exporting kernel descriptors and host
 * tasks by name (reprise/library.h), loaded with dlopen. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "reprise/library.h"

typedef struct klib {
  void *handle;
  const rp_kernel_table *table;
} klib;

struct rp_kernels {
  klib *lib;
  uint32_t n, cap;
  char *paths; /* "a.so, b.so" */
};

rp_status rp_kernels_load(rp_kernels **set, const char *path) {
  RP_ENTER();
  if (!set || !path) {
    rp__set_last_error("rp_kernels_load: NULL argument");
    return RP_EINVAL;
  }
  /* A path is a path: "NAME.so" is the file in the current folder, not
   * a name for dlopen to search the library path for. */
  char here[4096];
  const char *open_as = path;
  if (!strchr(path, '/') && strlen(path) + 3 <= sizeof here) {
    snprintf(here, sizeof here, "./%s", path);
    open_as = here;
  }
  void *h = dlopen(open_as, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    rp__set_last_errorf("kernel library %.300s cannot be loaded: %.400s", path,
                        e ? e : "unknown error");
    return RP_EIO;
  }
  rp_kernel_library_fn entry;
  void *sym = dlsym(h, RP_KERNEL_LIBRARY_ENTRY_NAME);
  memcpy(&entry, &sym, sizeof entry);
  const rp_kernel_table *t = sym ? entry() : NULL;
  if (!t || t->abi != RP_KERNEL_TABLE_ABI) {
    if (!t)
      rp__set_last_errorf("%.300s is no kernel library: it exports no "
                          "function %s (write RP_KERNEL_LIBRARY(kernels, "
                          "host_tasks) in it, reprise/library.h)",
                          path, RP_KERNEL_LIBRARY_ENTRY_NAME);
    else
      rp__set_last_errorf("kernel library %.300s was built for kernel "
                          "table version %u, this library reads %u: "
                          "rebuild it",
                          path, t->abi, (unsigned)RP_KERNEL_TABLE_ABI);
    dlclose(h);
    return RP_ENOTSUP;
  }
  rp_kernels *s = *set ? *set : calloc(1, sizeof *s);
  size_t plen = s && s->paths ? strlen(s->paths) : 0;
  char *np = s ? realloc(s->paths, plen + strlen(path) + 3) : NULL;
  if (np)
    s->paths = np;
  if (!s || !np ||
      rp__grow((void **)&s->lib, &s->cap, s->n + 1, sizeof *s->lib)) {
    dlclose(h);
    if (!*set)
      rp_kernels_destroy(s);
    rp__set_last_error("out of memory loading a kernel library");
    return RP_ENOMEM;
  }
  snprintf(np + plen, strlen(path) + 3, "%s%s", plen ? ", " : "", path);
  s->lib[s->n].handle = h;
  s->lib[s->n++].table = t;
  *set = s;
  rp__set_last_error("");
  return RP_OK;
}

const rp_kernel *rp_kernels_find(const rp_kernels *set, const char *name) {
  for (uint32_t i = 0; set && name && i < set->n; i++)
    for (const rp_kernel *const *k = set->lib[i].table->kernels; k && *k; k++)
      if ((*k)->name && !strcmp((*k)->name, name))
        return *k;
  return NULL;
}

const rp_host_task *rp_kernels_find_host_task(const rp_kernels *set,
                                              const char *name) {
  for (uint32_t i = 0; set && name && i < set->n; i++)
    for (const rp_host_task *const *t = set->lib[i].table->host_tasks; t && *t;
         t++)
      if ((*t)->name && (*t)->fn && !strcmp((*t)->name, name))
        return *t;
  return NULL;
}

const char *rp_kernels_paths(const rp_kernels *set) {
  return set && set->paths ? set->paths : "";
}

void rp_kernels_destroy(rp_kernels *set) {
  if (!set)
    return;
  for (uint32_t i = 0; i < set->n; i++)
    dlclose(set->lib[i].handle);
  free(set->lib);
  free(set->paths);
  free(set);
}
