/* Analysis options from what an exec really runs: its mode, the compute
 * units of each device and which logical devices share a physical one;
 * with the machine model of its backend calibrated on first use. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    map[d] = xo->device_map && d < xo->ndevice_map ? xo->device_map[d]
                                                   : (int)d;
    if (map[d] < 0 || map[d] >= RP_MAX_DEVICES)
      return RP_EINVAL;
    ngroups = map[d] + 1 > ngroups ? map[d] + 1 : ngroups;
  }
  for (int d = 0; d < RP_MAX_DEVICES; d++) {
    m->units[d] = 0;
    m->phys[d] = -1;
  }
  int serial = xo->mode && !strcmp(xo->mode, "serial");
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
    int all0 = !xo->device_map && m->physical_devices &&
               nd > m->physical_devices;
    for (unsigned d = 0; d < nd; d++) {
      m->units[d] = 1;
      m->phys[d] = all0 ? 0 : map[d];
    }
    m->host_units = 0;
  }
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
  rp_status vs =
      rp__analysis_opts_in(&mine, o, "rp_analysis_opts_calibrated");
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
  /* On a busy machine a team thread's share of a core changes by the
   * minute: measure it again now (about 0.2 s), so that the
   * prediction is of the machine the replays run on. */
  if (s == RP_OK && m->calibrated && m->threads > 1 &&
      !(mo && (mo->flags & RP_MODEL_NO_PROBE)) && rp__model_busy(m) &&
      rp__model_probe_share(m, be, &key) == RP_OK)
    m->probed = 1;
  rp_status f = rp_analysis_opts_from_exec(o, m, units, x);
  if (f != RP_OK)
    return f;
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
  if (!ao.measured_us)
    return rp_analyze(g, &ao, out);
  double *us = calloc((size_t)n + 1, sizeof *us);
  double *sum = NULL;
  rp_node top = 0;
  for (rp_node m = 0; m < n; m++) {
    rp_node u = rp_exec_op_origin(x, m);
    top = u != RP_NONE && u + 1 > top ? u + 1 : top;
  }
  sum = calloc((size_t)top + 1, sizeof *sum);
  if (!us || !sum) {
    free(us);
    free(sum);
    return RP_ENOMEM;
  }
  for (rp_node m = 0; m < n; m++) {
    rp_node u = rp_exec_op_origin(x, m);
    if (u != RP_NONE)
      sum[u] += weight(g, m);
  }
  for (rp_node m = 0; m < n; m++) {
    rp_node u = rp_exec_op_origin(x, m);
    if (u == RP_NONE)
      continue;
    double w = weight(g, m);
    us[m] = sum[u] > 0 ? ao.measured_us[u] * w / sum[u] : ao.measured_us[u];
  }
  ao.measured_us = us;
  rp_status s = rp_analyze(g, &ao, out);
  free(us);
  free(sum);
  return s;
}
