/* Device kinds, and the coherence warnings rp_graph_end() gives. */
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "record/coherence.h"

static const char *const kind_names[] = {"default", "cpu", "cuda", "fpga"};

const char *rp_device_kind_name(rp_device_kind k) {
  return (unsigned)k < 4 ? kind_names[k] : "?";
}

rp_status rp_graph_set_device_kind(rp_graph *g, int device,
                                   rp_device_kind kind) {
  RP_ENTER();
  if (!g)
    return RP_BAD_ARG();
  if (g->ended)
    return rp__fail(g, RP_ESTATE, "graph ended: device kinds are fixed");
  if (device < 0 || device >= RP_MAX_DEVICES)
    return rp__fail(g, RP_EINVAL, "device %d out of range (0..%d)", device,
                    RP_MAX_DEVICES - 1);
  if ((unsigned)kind > RP_DEVICE_FPGA)
    return rp__fail(g, RP_EINVAL, "unknown device kind %d", (int)kind);
  g->dev_kind[device] = (uint8_t)kind;
  return RP_OK;
}

rp_device_kind rp_graph_device_kind(const rp_graph *g, int device) {
  if (!g || device < 0 || device >= RP_MAX_DEVICES)
    return RP_DEVICE_DEFAULT;
  return (rp_device_kind)g->dev_kind[device];
}

unsigned rp_graph_num_warnings(const rp_graph *g) { return g ? g->nwarn : 0; }

const char *rp_graph_warning(const rp_graph *g, unsigned i) {
  return g && i < g->nwarn ? g->warn[i] : "";
}

void rp__warnings_free(rp_graph *g) {
  for (unsigned i = 0; i < g->nwarn; i++)
    free(g->warn[i]);
  free(g->warn);
  g->warn = NULL;
  g->nwarn = 0;
}

static rp_status add_warning(void *ctx, const char *msg) {
  rp_graph *g = ctx;
  char **w = realloc(g->warn, (g->nwarn + 1) * sizeof *w);
  if (!w)
    return RP_ENOMEM;
  g->warn = w;
  if (!(w[g->nwarn] = rp__strdup(msg)))
    return RP_ENOMEM;
  g->nwarn++;
  return RP_OK;
}

rp_status rp__graph_check(rp_graph *g) {
  rp__warnings_free(g);
  rp__coh *c;
  rp_status s = rp__coh_build(g, &c);
  if (s == RP_OK)
    s = rp__coh_check(c, add_warning, g);
  rp__coh_free(c);
  if (s != RP_OK) {
    rp__warnings_free(g);
    return rp__fail(g, s, "out of memory checking coherence");
  }
  if (g->nwarn && (g->flags & RP_GRAPH_STRICT))
    return rp__fail(g, RP_ECOHERENCE, "%s%s", g->warn[0],
                    g->nwarn > 1 ? " (and more: rp_graph_warning)" : "");
  return RP_OK;
}
