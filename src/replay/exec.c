/* The backend-neutral executor: instantiate, run, rebind. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "replay/exec.h"

extern const rp_backend rp_backend_reference;

/* The registry (rp_backend_find, rp_backend_list, ...) is in
 * replay/registry.c, the plugin loader in replay/plugin.c. */

/* Exported for plugins, which link against the shared library. */
RP_API double rp__now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

void rp_exec_set_error(rp_exec *x, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(x->err, sizeof x->err, fmt, ap);
  va_end(ap);
  rp__set_last_error(x->err);
}

const rp_graph *rp_exec_graph(const rp_exec *x) { return x->g; }
const rp_exec_opts *rp_exec_opts_get(const rp_exec *x) { return &x->opts; }
void *const *rp_exec_host(const rp_exec *x) { return x->host; }
const rp_backend *rp_exec_backend(const rp_exec *x) {
  return x ? x->be : NULL;
}
const char *rp_exec_error(const rp_exec *x) { return x ? x->err : ""; }
double rp_exec_last_us(const rp_exec *x) { return x ? x->last_us : 0.0; }

const rp_kargs *rp_exec_args(const rp_exec *x, rp_node n) {
  if (n >= x->g->nop || x->kidx[n] == RP_NONE)
    return NULL;
  return &x->kargs[x->kidx[n]];
}

static void exec_free(rp_exec *x) {
  free(x->host);
  free(x->kargs);
  free(x->kidx);
  free(x->cores);
  free(x->device_map);
  free(x);
}

rp_status rp_exec_create(rp_exec **out, const rp_graph *g,
                         const rp_backend *be, const rp_exec_opts *o) {
  if (!out || !g)
    return RP_EINVAL;
  *out = NULL;
  if (!g->ended) {
    rp__set_last_error("rp_exec_create: the graph is still recording "
                       "(call rp_graph_end first)");
    return RP_ESTATE;
  }
  rp_status s;
  if (!be && (s = rp_backend_find(NULL, &be)) != RP_OK)
    return s;
  if (be->abi != RP_BACKEND_ABI) {
    rp__set_last_error("backend built for another interface version");
    return RP_ENOTSUP;
  }
  if ((s = rp_backend_probe(be)) != RP_OK) {
    if (!rp_last_error()[0] || s == RP_ENODEV) {
      char msg[160];
      snprintf(msg, sizeof msg, "backend \"%s\" found no usable device",
               be->name);
      if (!rp_last_error()[0])
        rp__set_last_error(msg);
    }
    return s;
  }
  rp_exec *x = calloc(1, sizeof *x);
  if (!x)
    return RP_ENOMEM;
  x->g = g;
  x->be = be;
  if (o)
    x->opts = *o;
  uint32_t nk = 0;
  for (uint32_t i = 0; i < g->nop; i++)
    nk += g->op[i].type == RP_OP_KERNEL;
  x->host = calloc(g->nbuf ? g->nbuf : 1, sizeof *x->host);
  x->kargs = calloc(nk ? nk : 1, sizeof *x->kargs);
  x->kidx = malloc((g->nop ? g->nop : 1) * sizeof *x->kidx);
  if (o && o->cores && o->ncores &&
      (x->cores = malloc(o->ncores * sizeof *x->cores)))
    memcpy(x->cores, o->cores, o->ncores * sizeof *x->cores);
  if (o && o->device_map && o->ndevice_map &&
      (x->device_map = malloc(o->ndevice_map * sizeof *x->device_map)))
    memcpy(x->device_map, o->device_map,
           o->ndevice_map * sizeof *x->device_map);
  if (!x->host || !x->kargs || !x->kidx ||
      (o && o->cores && o->ncores && !x->cores) ||
      (o && o->device_map && o->ndevice_map && !x->device_map)) {
    exec_free(x);
    return RP_ENOMEM;
  }
  x->opts.cores = x->cores;
  x->opts.device_map = x->device_map;
  for (uint32_t b = 0; b < g->nbuf; b++)
    x->host[b] = g->buf[b].host;
  for (uint32_t i = 0, k = 0; i < g->nop; i++) {
    const rp__op *op = &g->op[i];
    x->kidx[i] = RP_NONE;
    if (op->type != RP_OP_KERNEL)
      continue;
    x->kidx[i] = k;
    rp_kargs *a = &x->kargs[k++];
    a->n[0] = op->space.x;
    a->n[1] = op->space.y;
    a->n[2] = op->space.z;
    unsigned np = op->kernel ? op->kernel->nparams : 0;
    for (unsigned p = 0; p < np; p++)
      if (op->kernel->params[p].mode == RP_SCALAR)
        a->a[p] = g->args[op->arg0 + p].value;
  }
  rp__set_last_error("");
  s = be->instantiate(x, &x->state);
  if (s != RP_OK) {
    if (!x->err[0])
      rp_exec_set_error(x, "backend \"%s\": instantiate failed: %s",
                        be->name, rp_strerror(s));
    rp__set_last_error(x->err);
    exec_free(x);
    return s;
  }
  *out = x;
  return RP_OK;
}

rp_status rp_exec_launch(rp_exec *x, unsigned iterations) {
  if (!x)
    return RP_EINVAL;
  if (x->launched) {
    rp_status s = rp_exec_wait(x);
    if (s != RP_OK)
      return s;
  }
  x->err[0] = 0;
  x->t0 = rp__now_us();
  rp_status s = iterations ? x->be->launch(x->state, iterations) : RP_OK;
  x->launched = s == RP_OK;
  if (s != RP_OK && !x->err[0])
    rp_exec_set_error(x, "backend \"%s\": run failed: %s", x->be->name,
                      rp_strerror(s));
  return s;
}

rp_status rp_exec_wait(rp_exec *x) {
  if (!x)
    return RP_EINVAL;
  if (!x->launched)
    return RP_OK;
  rp_status s = x->be->wait(x->state);
  x->last_us = rp__now_us() - x->t0;
  x->launched = 0;
  if (s != RP_OK && !x->err[0])
    rp_exec_set_error(x, "backend \"%s\": run failed: %s", x->be->name,
                      rp_strerror(s));
  return s;
}

rp_status rp_exec_run(rp_exec *x, unsigned iterations) {
  rp_status s = rp_exec_launch(x, iterations);
  if (s != RP_OK)
    return s;
  return rp_exec_wait(x);
}

rp_status rp_exec_rebind(rp_exec *x, rp_buf b, void *host) {
  if (!x)
    return RP_EINVAL;
  if (b >= x->g->nbuf) {
    rp_exec_set_error(x, "rebind: no buffer %u", b);
    return RP_EINVAL;
  }
  if (!host || !x->g->buf[b].host) {
    rp_exec_set_error(x, "rebind: buffer \"%s\" %s", x->g->buf[b].name,
                      host ? "is internal (it has no host image)"
                           : "needs a host pointer");
    return RP_EINVAL;
  }
  rp_status s = rp_exec_wait(x);
  if (s != RP_OK)
    return s;
  void *old = x->host[b];
  x->host[b] = host;
  s = x->be->rebind ? x->be->rebind(x->state, b) : RP_ENOTSUP;
  if (s != RP_OK) {
    x->host[b] = old;
    if (!x->err[0])
      rp_exec_set_error(x, "rebind of \"%s\" failed: %s", x->g->buf[b].name,
                        rp_strerror(s));
  }
  return s;
}

rp_status rp_exec_set_scalar(rp_exec *x, rp_node n, unsigned param,
                             rp_slot value) {
  if (!x)
    return RP_EINVAL;
  const rp__op *op = n < x->g->nop ? &x->g->op[n] : NULL;
  if (!op || op->type != RP_OP_KERNEL || !op->kernel ||
      param >= op->kernel->nparams ||
      op->kernel->params[param].mode != RP_SCALAR) {
    rp_exec_set_error(x, "set_scalar: node %u has no scalar parameter %u", n,
                      param);
    return RP_EINVAL;
  }
  rp_status s = rp_exec_wait(x);
  if (s != RP_OK)
    return s;
  rp_slot old = x->kargs[x->kidx[n]].a[param];
  x->kargs[x->kidx[n]].a[param] = value;
  s = x->be->set_scalar ? x->be->set_scalar(x->state, n, param) : RP_ENOTSUP;
  if (s != RP_OK) {
    x->kargs[x->kidx[n]].a[param] = old;
    if (!x->err[0])
      rp_exec_set_error(x, "set_scalar on \"%s\" failed: %s", op->name,
                        rp_strerror(s));
  }
  return s;
}

rp_status rp_exec_profile(rp_exec *x, double *op_us) {
  if (!x || !op_us)
    return RP_EINVAL;
  rp_status s = rp_exec_wait(x);
  if (s != RP_OK)
    return s;
  if (!x->be->profile) {
    rp_exec_set_error(x, "backend \"%s\" cannot profile", x->be->name);
    return RP_ENOTSUP;
  }
  x->err[0] = 0;
  double t0 = rp__now_us();
  s = x->be->profile(x->state, op_us);
  x->last_us = rp__now_us() - t0;
  return s;
}

void rp_exec_destroy(rp_exec *x) {
  if (!x)
    return;
  rp_exec_wait(x);
  x->be->destroy(x->state);
  exec_free(x);
}

rp_status rp_replay_reference(const rp_graph *g, unsigned iterations) {
  rp_exec *x;
  rp_status s = rp_exec_create(&x, g, &rp_backend_reference, NULL);
  if (s != RP_OK)
    return s;
  s = rp_exec_run(x, iterations);
  rp_exec_destroy(x);
  return s;
}
