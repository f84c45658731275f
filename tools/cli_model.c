/* Machine models and measured costs for the reprise tool's subcommands. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* gethostname */
#endif
#include <string.h>
#include <unistd.h>
#include "cli.h"

static void progress(void *user, const char *line) {
  (void)user;
  fprintf(stderr, "%s\n", line);
}

int rp_cli_model_threads(const char *path, const char *backend, int calibrate,
                         unsigned threads, rp_model *m) {
  rp_status s;
  if (path) {
    if ((s = rp_model_load(m, path)) != RP_OK) {
      fprintf(stderr, "reprise: %s: %s: %s\n", path, rp_strerror(s),
              rp_last_error());
      return 1;
    }
    return 0;
  }
  if (!backend)
    return 0;
  const rp_backend *be = NULL;
  if ((s = rp_backend_find(backend, &be)) != RP_OK) {
    fprintf(stderr, "reprise: backend %s: %s\n", backend, rp_strerror(s));
    return 1;
  }
  rp_exec_opts xo;
  rp_exec_opts_init(&xo);
  xo.nthreads = (int)threads;
  rp_model_opts mo;
  rp_model_opts_init(&mo);
  mo.flags = calibrate ? RP_MODEL_REFRESH : 0;
  mo.progress = progress;
  s = rp_model_get_opts(m, be, &xo, &mo);
  if (s == RP_ENOTFOUND) {
    /* As the library: an uncalibrated model, which the report names. */
    fprintf(stderr,
            "reprise: no model of backend %s on this machine and "
            "automatic calibration is off (RP_NO_AUTOCALIBRATE): "
            "uncalibrated (`reprise calibrate --backend %s` "
            "calibrates)\n",
            backend, backend);
    rp_model_init(m);
    snprintf(m->backend, sizeof m->backend, "%s", rp_backend_name(be));
    if (gethostname(m->machine, sizeof m->machine) != 0)
      m->machine[0] = 0;
    m->machine[sizeof m->machine - 1] = 0;
    return 0;
  }
  if (s != RP_OK) {
    fprintf(stderr, "reprise: model of backend %s: %s\n", backend,
            rp_strerror(s));
    return 1;
  }
  return 0;
}

int rp_cli_model(const char *path, const char *backend, int calibrate,
                 rp_model *m) {
  return rp_cli_model_threads(path, backend, calibrate, 0, m);
}

int rp_cli_backend_opts(const rp_graph *g, const char *backend,
                        unsigned threads, rp_model *m, unsigned *units,
                        rp_analysis_opts *o) {
  const rp_backend *be = NULL;
  rp_analysis_opts t;
  rp_analysis_opts_init(&t);
  rp_exec_opts xo;
  rp_exec_opts_init(&xo);
  xo.nthreads = (int)threads;
  xo.mode = o->mode;
  rp_status s = rp_backend_find(backend, &be);
  if (s == RP_OK)
    s = rp_analysis_opts_for(&t, m, units, g, be, &xo);
  if (s != RP_OK) {
    fprintf(stderr, "reprise: backend %s: %s\n", backend, rp_strerror(s));
    return 1;
  }
  o->model = t.model;
  if (!o->compute_units) {
    o->compute_units = t.compute_units;
    o->ncompute_units = t.ncompute_units;
  }
  return 0;
}

int rp_cli_apply_costs(rp_graph *g, const char *path) {
  if (!path)
    return 0;
  rp_graph *src = rp_cli_load(path);
  if (!src)
    return 1;
  uint32_t k = 0;
  rp_status s = rp_graph_apply_costs(g, src, &k);
  rp_graph_destroy(src);
  if (s != RP_OK) {
    fprintf(stderr, "reprise: %s: %s\n", path, rp_strerror(s));
    return 1;
  }
  fprintf(stderr, "reprise: costs of %u of %u operations from %s\n", k,
          rp_graph_num_nodes(g), path);
  return 0;
}
