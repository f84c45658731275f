/* Analysis options from what an exec really runs: its mode, the compute
 * units of each device and which logical devices share a physical one;
 * with the machine model of its backend calibrated on first use. */
#include <dirent.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "measure/measure.h"

/* The OpenMP team size when the exec gives none: the OpenMP default, which
 * is OMP_NUM_THREADS's first entry when set, else the online cores. (The
 * public API has no accessor for the team an exec really built.) */
long rp__omp_team(const rp_exec_opts *xo) {
  if (xo && xo->nthreads > 0)
    return xo->nthreads;
  if (xo && xo->cores && xo->ncores)
    return (long)xo->ncores;
  const char *e = getenv("OMP_NUM_THREADS");
  if (e && *e) {
    char *end;
    long v = strtol(e, &end, 10);
    if (end != e && v > 0)
      return v;
  }
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  return c > 0 ? c : 1;
}

/* CPUs this process may run on: its affinity mask, else the online
 * cores. */
static unsigned usable_cpus(void) {
#ifdef CPU_COUNT
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return (unsigned)CPU_COUNT(&set);
#endif
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  return c > 0 ? (unsigned)c : 1;
}

/* Runnable tasks of the machine now (/proc/stat procs_running), -1 when
 * it cannot say. */
static int procs_running(void) {
  FILE *fp = fopen("/proc/stat", "r");
  if (!fp)
    return -1;
  char line[256];
  int k = -1;
  while (fgets(line, sizeof line, fp))
    if (!strncmp(line, "procs_running ", 14)) {
      k = atoi(line + 14);
      break;
    }
  fclose(fp);
  return k;
}

int rp__each_thread(const char *file, int (*fn)(FILE *fp, void *u), void *u) {
  /* Thread ids are not consecutive: read the folder. */
  DIR *d = opendir("/proc/self/task");
  if (!d)
    return 0;
  int k = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    char f[300];
    snprintf(f, sizeof f, "/proc/self/task/%s/%s", e->d_name, file);
    FILE *t = fopen(f, "r");
    if (!t)
      continue;
    k += fn(t, u) == 1;
    fclose(t);
  }
  closedir(d);
  return k;
}

/* 1 when the thread's stat says it is runnable (state R). */
static int running(FILE *fp, void *u) {
  (void)u;
  char line[1024];
  if (!fgets(line, sizeof line, fp))
    return 0;
  const char *p = strrchr(line, ')');
  return p && p[1] == ' ' && p[2] == 'R';
}

/* This process's threads that are runnable now (state R in
 * /proc/self/task/T/stat): the caller, and a team that spins after its
 * replay, are no other load. */
static int own_running(void) {
  FILE *fp = fopen("/proc/self/stat", "r");
  if (!fp)
    return 1;
  char line[1024];
  int nth = 1;
  if (fgets(line, sizeof line, fp)) {
    /* Field 20 is num_threads; fields after the command's ")". */
    const char *p = strrchr(line, ')');
    int field = 2;
    for (; p && *p; p++)
      if (*p == ' ' && ++field == 20) {
        nth = atoi(p + 1);
        break;
      }
  }
  fclose(fp);
  if (nth <= 1)
    return 1;
  int r = rp__each_thread("stat", running, NULL);
  return r > 0 ? r : 1;
}

static int cmp_int(const void *x, const void *y) {
  int a = *(const int *)x, b = *(const int *)y;
  return (a > b) - (a < b);
}

/* Other runnable tasks now: the median of a few samples 5 ms apart of
 * the machine's runnable tasks less this process's own, so that one
 * passing task does not count. */
#define LOAD_SAMPLES 7
void rp__measure_load(rp_model *m) {
  int v[LOAD_SAMPLES], k = 0;
  for (int i = 0; i < LOAD_SAMPLES; i++) {
    int all = procs_running();
    if (all < 0)
      break;
    int other = all - own_running();
    v[k++] = other > 0 ? other : 0;
    if (i + 1 < LOAD_SAMPLES) {
      struct timespec ts = {0, 5000000};
      nanosleep(&ts, NULL);
    }
  }
  m->usable_cpus = usable_cpus();
  if (!k) {
    m->load_measured = 0;
    m->runnable = 0;
    return;
  }
  qsort(v, (size_t)k, sizeof v[0], cmp_int);
  /* NOLINTNEXTLINE(bugprone-integer-division): k / 2 is an index (the median of k samples) */
  m->runnable = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2.0;
  /* procs_running counts the whole machine: confined to some of its CPUs
   * (a cpuset), this process meets their share of the other tasks. */
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0 && m->usable_cpus < (unsigned long)online)
    m->runnable *= (double)m->usable_cpus / (double)online;
  m->load_measured = 1;
}

/* The options for backend `be` run with `xo` on graph g. */
static rp_status fill(rp_analysis_opts *o, rp_model *m, unsigned *units,
                      const rp_graph *g, const char *be,
                      const rp_exec_opts *xo) {
  static const rp_exec_opts none = RP_EXEC_OPTS_INIT;
  if (!xo)
    xo = &none;
  unsigned nd = rp_graph_num_devices(g);
  if (!nd)
    nd = 1;
  if (nd > RP_MAX_DEVICES)
    return RP_EINVAL;
  int map[RP_MAX_DEVICES];
  int ngroups = 1;
  for (unsigned d = 0; d < nd; d++) {
    map[d] = xo->device_map && d < xo->ndevice_map ? xo->device_map[d] : (int)d;
    if (map[d] < 0 || map[d] >= RP_MAX_DEVICES)
      return RP_EINVAL;
    ngroups = map[d] + 1 > ngroups ? map[d] + 1 : ngroups;
  }
  for (int d = 0; d < RP_MAX_DEVICES; d++) {
    m->units[d] = 0;
    m->phys[d] = -1;
  }
  int serial = xo->mode && !strcmp(xo->mode, "serial");
  /* What the backend is: the reference replays one operation at a time
   * in program order; CPU backends keep every image in host memory. */
  m->in_order = !strcmp(be, "reference");
  m->shared_memory = !strcmp(be, "openmp") || !strcmp(be, "reference");
  if (m->shared_memory) {
    m->h2d.gbps = m->d2h.gbps = m->p2p.gbps = 0;
    m->h2d.latency_us = m->d2h.latency_us = m->p2p.latency_us = 0;
  }
  if (!strcmp(be, "openmp")) {
    long nth = rp__omp_team(xo);
    if (serial)
      nth = 1;
    if (nth > 4096)
      nth = 4096;
    /* The backend's groups: thread i in group i * ngroups / nth. */
    int ng = ngroups < nth ? ngroups : (int)nth;
    unsigned gsize[RP_MAX_DEVICES] = {0};
    for (long i = 0; i < nth; i++)
      gsize[i * ng / nth]++;
    for (unsigned d = 0; d < nd; d++) {
      int grp = map[d] % ng;
      m->units[d] = gsize[grp];
      m->phys[d] = grp;
    }
    if (!m->split_min)
      m->split_min = 8192;
    /* One pool of threads: host tasks run on any of them. */
    m->host_units = (unsigned)nth;
  } else {
    /* The cuda backend without a map: the identity when there are enough
     * devices, else everything on device 0 (its map_devices()). The
     * number of devices comes from the calibration; the public API has no
     * accessor for the exec's real map. */
    int all0 =
        !xo->device_map && m->physical_devices && nd > m->physical_devices;
    for (unsigned d = 0; d < nd; d++) {
      m->units[d] = 1;
      m->phys[d] = all0 ? 0 : map[d];
    }
    m->host_units = 0;
  }
  /* The load now, as the replays will meet it: the same measurement for
   * the library and `reprise analyze --backend`. */
  rp__measure_load(m);
  o->model = m;
  o->mode = xo->mode;
  if (units) {
    for (int d = 0; d < RP_MAX_DEVICES; d++)
      units[d] = d < (int)nd ? (m->units[d] ? m->units[d] : 1) : 1;
    o->compute_units = units;
    o->ncompute_units = nd;
  }
  return RP_OK;
}

rp_status rp_analysis_opts_from_exec(rp_analysis_opts *o, rp_model *m,
                                     unsigned *units, const rp_exec *x) {
  RP_ENTER();
  if (!o || !m || !x)
    return RP_NULL_ARG();
  rp_analysis_opts mine;
  rp_status s = rp__analysis_opts_in(&mine, o, "rp_analysis_opts_from_exec");
  if (s != RP_OK)
    return s;
  s = fill(&mine, m, units, rp_exec_graph(x),
           rp_backend_name(rp_exec_backend(x)), rp_exec_opts_get(x));
  rp__versioned_store(o, &mine);
  return s;
}

rp_status rp_analysis_opts_for(rp_analysis_opts *o, rp_model *m,
                               unsigned *units, const rp_graph *g,
                               const rp_backend *be, const rp_exec_opts *xo) {
  RP_ENTER();
  if (!o || !m || !g)
    return RP_NULL_ARG();
  rp_status s;
  rp_analysis_opts mine;
  rp_exec_opts xl;
  if ((s = rp__analysis_opts_in(&mine, o, "rp_analysis_opts_for")) != RP_OK ||
      (s = rp__exec_opts_in(&xl, xo, "rp_analysis_opts_for: rp_exec_opts")) !=
          RP_OK)
    return s;
  if (!be && (s = rp_backend_find(NULL, &be)) != RP_OK)
    return s;
  rp_analysis_opts_init(&mine);
  s = fill(&mine, m, units, g, rp_backend_name(be), &xl);
  rp__versioned_store(o, &mine);
  return s;
}

rp_status rp_analysis_opts_calibrated(rp_analysis_opts *o, rp_model *m,
                                      unsigned *units, const rp_exec *x,
                                      const rp_model_opts *mo) {
  RP_ENTER();
  if (!o || !m || !x)
    return RP_NULL_ARG();
  rp_analysis_opts mine;
  rp_status vs = rp__analysis_opts_in(&mine, o, "rp_analysis_opts_calibrated");
  if (vs != RP_OK)
    return vs;
  rp_analysis_opts_init(&mine);
  rp__versioned_store(o, &mine); /* o back to its defaults */
  const rp_backend *be = rp_exec_backend(x);
  const rp_exec_opts *xo = rp_exec_opts_get(x);
  /* The model of the overlapped configuration: the serial mode is one
   * thread of the same machine, measured by the same calibration. */
  rp_exec_opts key = *xo;
  key.mode = NULL;
  rp_status s = rp_model_get_opts(m, be, &key, mo);
  if (s != RP_OK) { /* uncalibrated, but of this backend and machine */
    rp_model_init(m);
    snprintf(m->backend, sizeof m->backend, "%s", rp_backend_name(be));
    rp__host_name(m->machine, sizeof m->machine);
  }
  rp_status f = rp_analysis_opts_from_exec(o, m, units, x);
  if (f != RP_OK)
    return f;
  if (mo && (mo->flags & RP_MODEL_NO_PROBE))
    m->load_measured = 0; /* asked not to look at the load */
  return s == RP_ENOTFOUND ? RP_OK : s;
}

/* ---- The graph the exec really replays (issue 28) ----
 * rp_exec_create runs graph -> graph passes (src/transform: reshaped
 * copies by default on cuda, the split on request); this analyses their
 * output, carrying the costs measured per recorded operation onto it. */

/* What piece m of its recorded operation weighs against its siblings. */
static double weight(const rp_graph *g, rp_node m) {
  rp_node_info ni;
  if (rp_node_info_get(g, m, &ni) != RP_OK)
    return 1;
  if (ni.type == RP_OP_KERNEL)
    return (double)ni.space.x * (double)ni.space.y * (double)ni.space.z;
  if (ni.type == RP_OP_HOST)
    return 1;
  return (double)rp__copy_bytes(g, m);
}

/* The per-recorded-operation arrays of rp_analyze_exec()'s options
 * carried onto the graph it replays: 0 measured_us, 1 measured_min_us,
 * 2 measured_max_us (shared among pieces by weight), 3 team_us,
 * 4 team_min_us, 5 team_max_us (an operation replayed whole only). */
#define NMAPPED 6

rp_status rp_analyze_exec(const rp_exec *x, const rp_analysis_opts *o,
                          rp_analysis **out) {
  RP_ENTER();
  if (!x || !out)
    return RP_NULL_ARG();
  const rp_graph *g = rp_exec_graph(x);
  uint32_t n = rp_graph_num_nodes(g);
  rp_analysis_opts ao;
  rp_status vs = rp__analysis_opts_in(&ao, o, "rp_analyze_exec");
  if (vs != RP_OK)
    return vs;
  const double **src[NMAPPED] = {&ao.measured_us,     &ao.measured_min_us,
                                 &ao.measured_max_us, &ao.team_us,
                                 &ao.team_min_us,     &ao.team_max_us};
  int anyt = 0;
  for (int i = 3; i < NMAPPED; i++)
    anyt |= *src[i] != NULL;
  if (!ao.measured_us && (!anyt || g == x->ug))
    return rp_analyze(g, &ao, out);
  rp_node top = 0;
  for (rp_node m = 0; m < n; m++) {
    rp_node u = rp_exec_op_origin(x, m);
    top = u != RP_NONE && u + 1 > top ? u + 1 : top;
  }
  double *sum = calloc((size_t)top + 1, sizeof *sum);
  unsigned *pieces = calloc((size_t)top + 1, sizeof *pieces);
  double *to[NMAPPED] = {NULL};
  int fail = !sum || !pieces;
  for (int i = 0; i < NMAPPED && !fail; i++)
    if (*src[i] && (i < 3 || g != x->ug))
      fail = !(to[i] = calloc((size_t)n + 1, sizeof *to[i]));
  if (fail) {
    free(sum);
    free(pieces);
    for (int i = 0; i < NMAPPED; i++)
      free(to[i]);
    return RP_ENOMEM;
  }
  for (rp_node m = 0; m < n; m++) {
    rp_node u = rp_exec_op_origin(x, m);
    if (u != RP_NONE) {
      pieces[u]++;
      sum[u] += weight(g, m);
    }
  }
  /* A team profile times a recorded operation from its first piece's
   * start to its last one's end: it holds for an operation replayed
   * whole; the pieces of a cut one are modelled (-1). */
  for (int i = 3; i < NMAPPED; i++)
    for (rp_node m = 0; to[i] && m < n; m++) {
      rp_node u = rp_exec_op_origin(x, m);
      to[i][m] = u != RP_NONE && pieces[u] == 1 ? (*src[i])[u] : -1;
    }
  /* What the plan elides (a copy within one image) the exec never runs:
   * it costs nothing, whatever its profile says. */
  const rp_plan *pl = rp_exec_plan(x);
  for (rp_node m = 0; m < n; m++) {
    rp_node u = rp_exec_op_origin(x, m);
    if (u == RP_NONE || (pl && pl->node_of && pl->node_of[m] == RP_NONE))
      continue;
    double w = weight(g, m);
    for (int i = 0; i < 3; i++)
      if (to[i])
        to[i][m] = sum[u] > 0 ? (*src[i])[u] * w / sum[u] : (*src[i])[u];
  }
  free(pieces);
  free(sum);
  for (int i = 0; i < NMAPPED; i++)
    if (to[i])
      *src[i] = to[i];
  rp_status s = rp_analyze(g, &ao, out);
  for (int i = 0; i < NMAPPED; i++)
    free(to[i]);
  return s;
}
