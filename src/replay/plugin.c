/* The plugin loader: dlopen a libreprise-<name>.so, check its table's
 * interface version, register it. Reads only the first two fields of the
 * table (abi, name), which every version of the interface keeps. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "record/graph.h"
#include "replay/registry.h"
#include "reprise/plugin.h"

#ifndef RP_PLUGIN_DIR
#define RP_PLUGIN_DIR ""
#endif

/* Serialises loading, so that one plugin is not opened twice at once. */
static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local char path_buf[4096];

/* The folder "reprise" beside the object that holds this code (the shared
 * library; the program for the static one). */
static void beside_library(char *out, size_t cap) {
  Dl_info info;
  out[0] = 0;
  if (!dladdr((void *)&rp_plugin_path, &info) || !info.dli_fname)
    return;
  const char *slash = strrchr(info.dli_fname, '/');
  if (!slash)
    return;
  snprintf(out, cap, "%.*s/reprise", (int)(slash - info.dli_fname),
           info.dli_fname);
}

const char *rp_plugin_path(void) {
  char here[2048];
  beside_library(here, sizeof here);
  const char *env = getenv("REPRISE_PLUGIN_PATH");
  snprintf(path_buf, sizeof path_buf, "%s%s%s%s%s", env && env[0] ? env : "",
           env && env[0] ? ":" : "", here,
           RP_PLUGIN_DIR[0] && strcmp(here, RP_PLUGIN_DIR) ? ":" : "",
           strcmp(here, RP_PLUGIN_DIR) ? RP_PLUGIN_DIR : "");
  return path_buf;
}

static rp_status load_locked(const char *path, const rp_backend **out) {
  char msg[768];
  *out = NULL;
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(msg, sizeof msg, "plugin %.200s cannot be loaded: %.400s", path,
             e ? e : "unknown error");
    rp__set_last_error(msg);
    return RP_EIO;
  }
  rp_plugin_entry_fn entry;
  void *sym = dlsym(h, RP_PLUGIN_ENTRY_NAME);
  memcpy(&entry, &sym, sizeof entry);
  const rp_backend *be = sym ? entry() : NULL;
  if (!be || !be->name) {
    snprintf(msg, sizeof msg,
             "plugin %.300s is no reprise backend (no %s "
             "returning a named table)",
             path, RP_PLUGIN_ENTRY_NAME);
    rp__set_last_error(msg);
    dlclose(h);
    return RP_ENOTSUP;
  }
  if (be->abi != RP_BACKEND_ABI) {
    snprintf(msg, sizeof msg,
             "plugin %.300s (backend \"%.64s\") was built "
             "for backend interface %u, this library has %u: rebuild it",
             path, be->name, be->abi, (unsigned)RP_BACKEND_ABI);
    rp__set_last_error(msg);
    dlclose(h);
    return RP_ENOTSUP;
  }
  rp_status s = rp__registry_add(be);
  if (s != RP_OK) {
    dlclose(h);
    return s;
  }
  *out = be; /* the handle stays open: tables must outlive every use */
  return RP_OK;
}

rp_status rp_plugin_load(const char *path, const rp_backend **out) {
  RP_ENTER();
  const rp_backend *be = NULL;
  if (out)
    *out = NULL;
  if (!path || !path[0]) {
    rp__set_last_error("rp_plugin_load: no path");
    return RP_EINVAL;
  }
  pthread_mutex_lock(&load_mu);
  rp_status s = load_locked(path, &be);
  pthread_mutex_unlock(&load_mu);
  if (out)
    *out = be;
  if (s == RP_OK)
    rp__set_last_error("");
  return s;
}

rp_status rp__plugin_load_name(const char *name, const rp_backend **out) {
  char dirs[4096], file[4096 + 64];
  *out = NULL;
  snprintf(dirs, sizeof dirs, "%s", rp_plugin_path());
  pthread_mutex_lock(&load_mu);
  rp_status s = RP_ENOTFOUND;
  const rp_backend *be = rp__registry_get(name); /* raced by another? */
  if (be)
    s = RP_OK;
  for (char *d = dirs, *next; !be && d; d = next) {
    next = strchr(d, ':');
    if (next)
      *next++ = 0;
    if (!d[0])
      continue;
    struct stat st;
    snprintf(file, sizeof file, "%s/libreprise-%s.so", d, name);
    if (stat(file, &st) != 0)
      continue;
    s = load_locked(file, &be);
    if (s == RP_OK && strcmp(be->name, name)) {
      char msg[512];
      snprintf(msg, sizeof msg,
               "plugin %.300s holds backend \"%.64s\", not "
               "\"%.64s\"",
               file, be->name, name);
      rp__set_last_error(msg);
      be = NULL;
      s = RP_ENOTSUP;
    }
    break; /* the first file found decides */
  }
  pthread_mutex_unlock(&load_mu);
  *out = be;
  return s;
}
