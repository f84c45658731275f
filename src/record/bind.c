/* Binding a graph (read from a file) to code and memory: the same
 * operations recorded again with the kernel descriptors and host tasks of
 * a set of kernel libraries, over the caller's host arrays. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "reprise/library.h"

/* Fails with status s and a message naming op n of g. */
static rp_status op_fail(const rp_graph *g, rp_node n, rp_status s,
                         const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static rp_status op_fail(const rp_graph *g, rp_node n, rp_status s,
                         const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  rp__set_last_errorf("op %u (\"%.100s\"): %s", n,
                      g->op[n].name ? g->op[n].name : "", msg);
  return s;
}

/* " in a.so, b.so", or " (no kernel library loaded)". */
static void libs(const rp_kernels *set, char *b, size_t n) {
  const char *p = rp_kernels_paths(set);
  snprintf(b, n, p[0] ? " in %.200s" : " (no kernel library loaded)", p);
}

/* The arguments of kernel op n of g for descriptor k: its accesses for
 * the buffer parameters, its saved values for the scalars. */
static rp_status kernel_args(const rp_graph *g, rp_node n, const rp_kernel *k,
                             rp_arg *args) {
  rp_slot v[RP_MAX_PARAMS];
  unsigned nv = 0, nbuf = 0, nsc = 0;
  rp_node_scalars(g, n, v, RP_MAX_PARAMS, &nv);
  if (k->nparams > RP_MAX_PARAMS || (k->nparams && !k->params))
    return op_fail(g, n, RP_EINVAL, "kernel \"%s\" has a bad parameter list",
                   k->name);
  for (unsigned p = 0; p < k->nparams; p++)
    nbuf += k->params[p].mode != RP_SCALAR;
  if (nbuf != g->op[n].nacc)
    return op_fail(g, n, RP_EINVAL,
                   "kernel \"%s\" takes %u buffer "
                   "parameters, the operation has %u accesses",
                   k->name, nbuf, g->op[n].nacc);
  if (k->nparams - nbuf != nv)
    return op_fail(g, n, RP_EINVAL,
                   "kernel \"%s\" takes %u scalar "
                   "parameters, the graph holds %u values for it%s",
                   k->name, k->nparams - nbuf, nv,
                   nv ? ""
                      : " (a file written before reprise saved "
                        "\"scalars\")");
  for (unsigned p = 0, a = 0; p < k->nparams; p++) {
    memset(&args[p], 0, sizeof args[p]);
    if (k->params[p].mode == RP_SCALAR) {
      args[p].region = rp_whole(RP_NONE);
      args[p].value = v[nsc++];
      continue;
    }
    rp__access x = rp__acc_get(g, n, a);
    if (x.mode != k->params[p].mode)
      return op_fail(g, n, RP_EINVAL,
                     "parameter %u '%s' of kernel \"%s\" is "
                     "%s, the operation's access %u is %s",
                     p, k->params[p].name ? k->params[p].name : "?", k->name,
                     k->params[p].mode == RP_IN    ? "in"
                     : k->params[p].mode == RP_OUT ? "out"
                                                   : "inout",
                     a,
                     x.mode == RP_IN    ? "in"
                     : x.mode == RP_OUT ? "out"
                                        : "inout");
    args[p].region = x.region;
    a++;
  }
  return RP_OK;
}

/* Records op n of g into c; sites[*nsite] serves a host task. */
static rp_status bind_op(rp_graph *c, const rp_graph *g, rp_node n,
                         const rp_kernels *set, rp_host_site *sites,
                         uint32_t *nsite) {
  const rp__op *op = &g->op[n];
  rp_op_opts o = RP_OP_OPTS_INIT;
  o.name = op->name;
  o.cost_us = op->cost_us > 0 ? op->cost_us : 0;
  o.after = op->nafter ? g->after + op->after0 : NULL;
  o.nafter = op->nafter;
  rp_status s;
  rp__access a0 = op->nacc ? rp__acc_get(g, n, 0) : (rp__access){{0}, 0, 0};
  switch ((rp_op_type)op->type) {
  case RP_OP_COPY_H2D:
    s = rp_record_copy_to_device(c, a0.region, op->device, &o, NULL);
    break;
  case RP_OP_COPY_D2H:
    s = rp_record_copy_to_host(c, a0.region, op->device, &o, NULL);
    break;
  case RP_OP_COPY_D2D:
    s = rp_record_copy_peer(c, a0.region, op->device, op->dst_device, &o, NULL);
    break;
  case RP_OP_KERNEL: {
    const char *kn = rp_node_kernel_name(g, n);
    const rp_kernel *k =
        op->kernel ? rp__kernel_given(g, op->kernel) : rp_kernels_find(set, kn);
    rp_arg args[RP_MAX_PARAMS];
    char in[240];
    libs(set, in, sizeof in);
    if (!k)
      return op_fail(g, n, RP_ENOTFOUND, "no kernel named \"%s\"%s",
                     kn ? kn : "", in);
    if ((s = kernel_args(g, n, k, args)) != RP_OK)
      return s;
    s = rp_record_kernel(c, k, op->device, rp__op_space(g, n), args, &o, NULL);
    break;
  }
  default: {
    /* A recorded graph's own function first, then the libraries'. */
    const rp_host_task *t = g->hostfn[op->arg0].fn
                                ? NULL
                                : rp_kernels_find_host_task(set, op->name);
    rp_host_fn fn = t ? t->fn : g->hostfn[op->arg0].fn;
    void *user = t ? (void *)&sites[*nsite] : g->hostfn[op->arg0].user;
    if (!fn) {
      char in[240];
      libs(set, in, sizeof in);
      return op_fail(g, n, RP_ENOTFOUND,
                     "no host task named \"%s\"%s (a "
                     "host task replays from a file when a kernel library "
                     "exports it by the operation's name)",
                     op->name ? op->name : "", in);
    }
    rp_access acc[RP_MAX_PARAMS], *ap = acc;
    if (op->nacc > RP_MAX_PARAMS && !(ap = malloc(sizeof *ap * op->nacc)))
      return RP_ENOMEM;
    for (uint32_t i = 0; i < op->nacc; i++) {
      rp__access x = rp__acc_get(g, n, i);
      ap[i].region = x.region;
      ap[i].mode = x.mode;
    }
    sites[*nsite].node = n;
    (*nsite)++;
    s = rp_record_host(c, fn, user, ap, op->nacc, &o, NULL);
    if (ap != acc)
      free(ap);
  }
  }
  if (s != RP_OK && s != RP_ENOMEM)
    return op_fail(g, n, s, "%s", rp_graph_error(c));
  return s;
}

rp_status rp_graph_bind(const rp_graph *g, const rp_kernels *set,
                        void *const *host, rp_graph **out) {
  RP_ENTER();
  if (!out || !g) {
    rp__set_last_error("rp_graph_bind: NULL argument");
    return RP_EINVAL;
  }
  *out = NULL;
  if (!g->ended) {
    rp__set_last_error("rp_graph_bind: the graph is still recording");
    return RP_ESTATE;
  }
  rp_graph *c;
  rp_status s = rp_graph_create(&c, RP_GRAPH_NO_COHERENCE);
  uint32_t nhost = 0, nsite = 0;
  if (s != RP_OK)
    return s;
  for (uint32_t n = 0; n < g->nop; n++)
    nhost += g->op[n].type == RP_OP_HOST;
  rp_host_site *sites = calloc(nhost ? nhost : 1, sizeof *sites);
  if (!sites) {
    rp_graph_destroy(c);
    return RP_ENOMEM;
  }
  c->bound_sites = sites;
  for (unsigned d = 0; d < RP_MAX_DEVICES; d++)
    if (g->dev_kind[d] != RP_DEVICE_DEFAULT)
      rp_graph_set_device_kind(c, (int)d, (rp_device_kind)g->dev_kind[d]);
  for (rp_buf b = 0; s == RP_OK && b < g->nbuf; b++) {
    rp_buffer_desc d;
    rp_buffer_info(g, b, &d);
    d.host = host ? host[b] : NULL;
    rp_buf nb;
    if ((s = rp_buffer_add(c, &d, &nb)) != RP_OK)
      rp__set_last_errorf("buffer \"%.100s\": %s", d.name, rp_graph_error(c));
  }
  for (rp_node n = 0; s == RP_OK && n < g->nop; n++)
    s = bind_op(c, g, n, set, sites, &nsite);
  for (uint32_t i = 0; i < nsite; i++)
    sites[i].graph = c;
  for (rp_node n = 0; s == RP_OK && n < g->nop; n++) {
    rp_measured m;
    if (rp_graph_get_measured(g, n, &m) == RP_OK)
      s = rp_graph_set_measured(c, n, &m);
    rp_team_measured t;
    if (s == RP_OK && rp_graph_get_team_measured(g, n, &t) == RP_OK)
      s = rp_graph_set_team_measured(c, n, &t);
  }
  if (s == RP_OK && (s = rp_graph_end(c)) != RP_OK)
    rp__set_last_errorf("rp_graph_end: %s", rp_graph_error(c));
  if (s != RP_OK) {
    if (s == RP_ENOMEM)
      rp__set_last_error("out of memory binding the graph");
    rp_graph_destroy(c);
    return s;
  }
  rp__set_last_error("");
  *out = c;
  return RP_OK;
}
