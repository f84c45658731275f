/* The cache of calibrated models: one file per machine, backend and
 * configuration, calibrated on first use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "measure/measure.h"

/* The CPU's model name ("model name" of /proc/cpuinfo), "" unknown. */
static void cpu_name(char *out, size_t n) {
  out[0] = 0;
  FILE *fp = fopen("/proc/cpuinfo", "r");
  if (!fp)
    return;
  char line[512];
  while (fgets(line, sizeof line, fp)) {
    if (strncmp(line, "model name", 10))
      continue;
    const char *c = strchr(line, ':');
    if (!c)
      break;
    c++;
    while (*c == ' ' || *c == '\t')
      c++;
    snprintf(out, n, "%s", c);
    size_t k = strlen(out);
    while (k && (out[k - 1] == '\n' || out[k - 1] == ' '))
      out[--k] = 0;
    break;
  }
  fclose(fp);
}

static int is_openmp(const rp_backend *be) {
  return !strcmp(rp_backend_name(be), "openmp");
}

/* The load average of the last minute, or -1. */
static double load_now(void) {
  double l[1];
  return getloadavg(l, 1) == 1 ? l[0] : -1;
}

void rp__model_key(rp_model *m, const rp_backend *be, const rp_exec_opts *xo,
                   const char *version) {
  double l = load_now();
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  m->load = l > 0 ? l : 0;
  m->cpus = c > 0 ? (unsigned)c : 0;
  rp__host_name(m->machine, sizeof m->machine);
  cpu_name(m->cpu, sizeof m->cpu);
  m->gpu[0] = 0;
  if (!strcmp(rp_backend_name(be), "cuda"))
    rp__gpu_name(m->gpu, sizeof m->gpu);
  snprintf(m->version, sizeof m->version, "%s/m%d",
           version ? version : rp_version(), RP_MODEL_REVISION);
  m->threads = is_openmp(be) ? (unsigned)rp__omp_team(xo) : 0;
  m->device_map[0] = 0;
  if (xo && xo->device_map) {
    size_t k = 0;
    for (unsigned d = 0; d < xo->ndevice_map; d++) {
      int w = snprintf(m->device_map + k, sizeof m->device_map - k, "%s%d",
                       d ? "," : "", xo->device_map[d]);
      if (w < 0 || (size_t)w >= sizeof m->device_map - k) {
        /* Too long to spell: the prefix stands for it. */
        m->device_map[sizeof m->device_map - 1] = 0;
        break;
      }
      k += (size_t)w;
    }
  }
}

void rp_model_opts_init(rp_model_opts *o) {
  if (o)
    *o = (rp_model_opts)RP_MODEL_OPTS_INIT;
}

/* The versioning rule (core/versioned.c) at the entries taking an
 * rp_model_opts: dst the defaults, then the caller's src (NULL: none). */
static rp_status model_opts_in(rp_model_opts *dst, const rp_model_opts *src,
                               const char *what) {
  rp_model_opts_init(dst);
  if (!src)
    return RP_OK;
  return rp__versioned_load(dst, sizeof *dst, src, sizeof *dst, what);
}

rp_status rp_model_cache_path(const rp_backend *be, const rp_exec_opts *xo,
                              const rp_model_opts *o, char *path, size_t size) {
  RP_ENTER();
  rp_status s;
  if (!path || !size)
    return RP_BAD_ARG();
  rp_exec_opts xl;
  if ((s = rp__exec_opts_in(&xl, xo, "rp_model_cache_path: rp_exec_opts")) !=
      RP_OK)
    return s;
  xo = &xl;
  rp_model_opts ol;
  if ((s = model_opts_in(&ol, o, "rp_model_cache_path: rp_model_opts")) !=
      RP_OK)
    return s;
  if (!be && (s = rp_backend_find(NULL, &be)) != RP_OK)
    return s;
  const char *dir = ol.cache_dir;
  char base[4096];
  int k;
  if (dir && dir[0]) {
    k = snprintf(base, sizeof base, "%s", dir);
  } else {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
      k = snprintf(base, sizeof base, "%s/reprise", xdg);
    else if (home && home[0])
      k = snprintf(base, sizeof base, "%s/.cache/reprise", home);
    else
      return RP_ENOTFOUND;
  }
  if (k < 0 || (size_t)k >= sizeof base)
    return RP_EINVAL;
  rp_model key;
  rp_model_init(&key);
  rp__model_key(&key, be, xo, NULL);
  char conf[96] = "";
  size_t c = 0;
  if (key.threads)
    c += (size_t)snprintf(conf, sizeof conf, "-t%u", key.threads);
  if (key.device_map[0]) {
    c += (size_t)snprintf(conf + c, sizeof conf - c, "-m");
    for (const char *p = key.device_map; *p && c + 1 < sizeof conf; p++)
      conf[c++] = *p == ',' ? '.' : *p;
    conf[c] = 0;
  }
  k = snprintf(path, size, "%s/%s-%s%s.json", base, rp_backend_name(be),
               key.machine, conf);
  return k > 0 && (size_t)k < size ? RP_OK : RP_EINVAL;
}

/* A model calibrated on a busy machine (its threads got a fraction of a
 * core, its timings waited on preempted threads) while the machine is
 * now quiet: it describes a state that passed. */
static int busy_then(const rp_model *a, const rp_model *now) {
  return a->cpus && a->load > a->cpus && now->load >= 0 &&
         now->load < 0.5 * a->load;
}

/* The cached model is for this key: same machine, backend, configuration
 * and library version. */
static int same_key(const rp_model *a, const rp_model *b, const char *be) {
  return a->calibrated && !busy_then(a, b) && !strcmp(a->backend, be) &&
         !strcmp(a->machine, b->machine) && !strcmp(a->cpu, b->cpu) &&
         !strcmp(a->gpu, b->gpu) && !strcmp(a->version, b->version) &&
         a->threads == b->threads && !strcmp(a->device_map, b->device_map);
}

static int auto_off(void) {
  const char *e = getenv("RP_NO_AUTOCALIBRATE");
  return e && e[0] && strcmp(e, "0");
}

rp_status rp_model_get_opts(rp_model *m, const rp_backend *be,
                            const rp_exec_opts *xo, const rp_model_opts *o) {
  RP_ENTER();
  rp_model_opts ol;
  rp_status s = model_opts_in(&ol, o, "rp_model_get_opts: rp_model_opts");
  if (s != RP_OK)
    return s;
  o = &ol;
  if (!m ||
      (o->flags & ~(unsigned)(RP_MODEL_CALIBRATE | RP_MODEL_REFRESH |
                              RP_MODEL_NO_AUTO | RP_MODEL_NO_PROBE)) ||
      o->runs > 63)
    return RP_BAD_ARG();
  rp_exec_opts xl;
  if ((s = rp__exec_opts_in(&xl, xo, "rp_model_get: rp_exec_opts")) != RP_OK)
    return s;
  xo = &xl;
  if (!be && (s = rp_backend_find(NULL, &be)) != RP_OK)
    return s;
  char path[4200];
  rp_status ps = rp_model_cache_path(be, xo, o, path, sizeof path);
  rp_model want;
  rp_model_init(&want);
  rp__model_key(&want, be, xo, o->version);
  if (ps == RP_OK && !(o->flags & RP_MODEL_REFRESH) &&
      access(path, R_OK) == 0) {
    rp_model got;
    if (rp_model_load(&got, path) == RP_OK &&
        same_key(&got, &want, rp_backend_name(be))) {
      *m = got;
      return RP_OK;
    }
    /* Another machine's, configuration's or version's: calibrate anew. */
  }
  int ask = o->flags & (RP_MODEL_CALIBRATE | RP_MODEL_REFRESH);
  if (!ask && ((o->flags & RP_MODEL_NO_AUTO) || auto_off()))
    return RP_ENOTFOUND;
  if (o->progress) {
    char line[4400];
    char team[32] = "";
    if (want.threads)
      snprintf(team, sizeof team, ", %u thread%s", want.threads,
               want.threads == 1 ? "" : "s");
    snprintf(line, sizeof line,
             "reprise: calibrating the %s model of %s%s (once, a few "
             "seconds; cached in %s)",
             rp_backend_name(be), want.machine, team,
             ps == RP_OK ? path : "no cache folder: not saved");
    o->progress(o->user, line);
  }
  rp_model cal;
  if ((s = rp_model_calibrate(&cal, be, xo, o->runs)) != RP_OK)
    return s;
  /* The key as asked (the version a test gives). */
  snprintf(cal.version, sizeof cal.version, "%s", want.version);
  /* A read-only cache: the model is still used, and the line says so. */
  if (ps == RP_OK && rp_model_save(&cal, path) != RP_OK && o->progress) {
    char line[4400];
    snprintf(line, sizeof line, "reprise: not cached after all: %s",
             rp_last_error());
    o->progress(o->user, line);
  }
  *m = cal;
  return RP_OK;
}

rp_status rp_model_get(rp_model *m, const rp_backend *be,
                       const rp_exec_opts *xo, unsigned flags) {
  RP_ENTER();
  if (!m || (flags & ~(unsigned)(RP_MODEL_CALIBRATE | RP_MODEL_REFRESH)))
    return RP_BAD_ARG();
  rp_model_opts o;
  rp_model_opts_init(&o);
  o.flags = flags | RP_MODEL_NO_AUTO;
  return rp_model_get_opts(m, be, xo, &o);
}
