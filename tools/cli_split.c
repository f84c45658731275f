/* reprise analyze --split: the chunked-pipelining advice for a graph
 * file. A graph file holds no kernel descriptors, so the user says which
 * operations' kernels split and how; the graph is recorded again with a
 * stand-in descriptor per kernel (its buffer accesses as parameters) and
 * given to rp_split_advise(). */
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static void no_host(void *user, void *const *ptrs) {
  (void)user;
  (void)ptrs;
}

/* Parses NAME:AXIS:P[,P...] (AXIS x, y or z; P access indices). */
static int parse(const char *spec, char *name, size_t nl, unsigned *axis,
                 uint32_t *follow) {
  const char *c1 = strchr(spec, ':');
  const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (!c1 || !c2 || c1 == spec || (size_t)(c1 - spec) >= nl || c2 != c1 + 2 ||
      !strchr("xyz", c1[1]))
    return -1;
  memcpy(name, spec, (size_t)(c1 - spec));
  name[c1 - spec] = 0;
  *axis = (unsigned)(c1[1] - 'x') + RP_SPLIT_X;
  *follow = 0;
  const char *p = c2 + 1;
  do {
    char *end;
    unsigned long v = strtoul(p, &end, 10);
    if (end == p || v >= RP_MAX_PARAMS)
      return -1;
    *follow |= 1u << v;
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',')
      return -1;
  } while (*p);
  return 0;
}

int rp_cli_split_advice(const rp_graph *g, const char *spec,
                        const rp_analysis_opts *o, FILE *fp) {
  char name[256];
  unsigned axis;
  uint32_t follow;
  if (parse(spec, name, sizeof name, &axis, &follow)) {
    fprintf(stderr,
            "reprise analyze: --split wants NAME:AXIS:P[,P...] "
            "(AXIS x, y or z; P the indices of the accesses that follow), "
            "not \"%s\"\n",
            spec);
    return 2;
  }
  uint32_t nop = rp_graph_num_nodes(g);
  rp_kernel *ks = calloc(nop ? nop : 1, sizeof *ks);
  rp_param *ps = calloc((size_t)(nop ? nop : 1) * RP_MAX_PARAMS, sizeof *ps);
  rp_graph *c = NULL;
  rp_status s =
      ks && ps ? rp_graph_create(&c, RP_GRAPH_NO_COHERENCE) : RP_ENOMEM;
  unsigned matched = 0;
  for (unsigned d = 0; s == RP_OK && d < rp_graph_num_devices(g); d++)
    if (rp_graph_device_kind(g, (int)d) != RP_DEVICE_DEFAULT)
      s = rp_graph_set_device_kind(c, (int)d, rp_graph_device_kind(g, (int)d));
  for (rp_buf b = 0; s == RP_OK && b < rp_graph_num_buffers(g); b++) {
    rp_buffer_desc d;
    rp_buf nb;
    rp_buffer_info(g, b, &d);
    s = rp_buffer_add(c, &d, &nb);
  }
  for (rp_node n = 0; s == RP_OK && n < nop; n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    rp_op_opts oo = RP_OP_OPTS_WITH(.name = ni.name, .cost_us = ni.cost_us);
    rp_access acc[RP_MAX_PARAMS];
    rp_arg args[RP_MAX_PARAMS];
    unsigned na = ni.naccess < RP_MAX_PARAMS ? ni.naccess : RP_MAX_PARAMS;
    for (unsigned i = 0; i < na; i++) {
      rp_access_info ai;
      rp_node_access(g, n, i, &ai);
      acc[i].region = ai.region;
      acc[i].mode = ai.mode;
      args[i] = rp_arg_buf(ai.region);
    }
    if (ni.type == RP_OP_KERNEL) {
      rp_kernel *k = &ks[n];
      rp_param *p = ps + (size_t)n * RP_MAX_PARAMS;
      for (unsigned i = 0; i < na; i++) {
        p[i].name = "p";
        p[i].mode = acc[i].mode;
      }
      rp_kernel_init(k);
      k->name = ni.name;
      k->nparams = na;
      k->params = p;
      if (!strcmp(ni.name, name)) {
        k->split_axis = axis;
        k->split_follow = follow;
        matched++;
      }
      s = rp_record_kernel(c, k, ni.device, ni.space, args, &oo, NULL);
    } else if (ni.type == RP_OP_HOST) {
      s = rp_record_host(c, no_host, NULL, acc, na, &oo, NULL);
    } else if (ni.type == RP_OP_COPY_H2D) {
      s = rp_record_copy_to_device(c, acc[0].region, ni.device, &oo, NULL);
    } else if (ni.type == RP_OP_COPY_D2H) {
      s = rp_record_copy_to_host(c, acc[0].region, ni.device, &oo, NULL);
    } else {
      s = rp_record_copy_peer(c, acc[0].region, ni.device, ni.dst_device, &oo,
                              NULL);
    }
  }
  if (s == RP_OK)
    s = rp_graph_end(c);
  if (s == RP_OK)
    s = rp_graph_apply_costs(c, g, NULL);
  rp_split_advice adv;
  if (s == RP_OK)
    s = rp_split_advise(c, o, 0, &adv);
  int rc = 0;
  if (s != RP_OK) {
    fprintf(stderr, "reprise analyze: --split: %s (%s)\n", rp_strerror(s),
            c ? rp_graph_error(c) : "");
    rc = 1;
  } else if (!matched) {
    fprintf(stderr,
            "reprise analyze: --split: no kernel operation is "
            "named \"%s\"\n",
            name);
    rc = 1;
  } else if (rp_split_write_text(c, &adv, fp) != RP_OK) {
    rc = 1;
  }
  rp_graph_destroy(c);
  free(ks);
  free(ps);
  return rc;
}
