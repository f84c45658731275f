/* Heat 2D over several devices: rows cut over N devices, a halo exchange
 * every step (peer copies inserted by automatic coherence, or recorded by
 * hand), checked against the reference and a plain loop; --scaling times
 * the same problem on 1 and on N devices in one run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "multidev.h"

typedef struct ctx {
  ex_heat2d p;
  unsigned iters;
  double *u, *v, *cu, *cv;
} ctx;

static void init(void *x) {
  ctx *c = (ctx *)x;
  ex_heat2d_init(&c->p, c->u, c->v);
}

static int check(void *x) {
  ctx *c = (ctx *)x;
  uint64_t nn = c->p.n * c->p.n;
  ex_heat2d_init(&c->p, c->cu, c->cv);
  ex_heat2d_check(&c->p, c->iters, c->cu, c->cv);
  return memcmp(c->u, c->cu, nn * 8) || memcmp(c->v, c->cv, nn * 8);
}

/* Records and ends a graph of c->p on `devices` devices. */
static rp_graph *record(ctx *c, unsigned devices) {
  rp_graph *g = NULL;
  ex_heat2d p = c->p;
  rp_status rc;
  p.devices = devices;
  if (rp_graph_create(&g, p.explicit_halo ? RP_GRAPH_NO_COHERENCE : 0)) {
    fprintf(stderr, "heat2d: out of memory\n");
    return NULL;
  }
  if ((rc = ex_heat2d_record(g, &p, c->u, c->v)) || (rc = rp_graph_end(g))) {
    fprintf(stderr, "heat2d: recording failed: %s: %s\n", rp_strerror(rc),
            rp_graph_error(g));
    rp_graph_destroy(g);
    return NULL;
  }
  return g;
}

static void describe(const rp_graph *g) {
  unsigned peer = 0, ins = 0, h2d = 0, d2h = 0;
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    peer += ni.type == RP_OP_COPY_D2D;
    h2d += ni.type == RP_OP_COPY_H2D;
    d2h += ni.type == RP_OP_COPY_D2H;
    ins += ni.inserted;
  }
  printf("graph: %u ops (%u peer copies, %u to devices, %u home; %u "
         "inserted by coherence), %u edges, %u devices\n",
         rp_graph_num_nodes(g), peer, h2d, d2h, ins, rp_graph_num_edges(g),
         rp_graph_num_devices(g));
}

/* Replays g: once to warm up, then iters timed. Returns the time in us,
 * negative on failure; leaves the result in the host arrays. */
static double timed(const rp_graph *g, const rp_backend *be, const ex_opts *o,
                    ctx *c) {
  rp_exec_opts eo;
  rp_exec *x = NULL;
  double us = -1;
  rp_exec_opts_init(&eo);
  if (rp_backend_options(be) & RP_EXEC_OPT_NTHREADS)
    eo.nthreads = o->threads;
  eo.device_fold = 1; /* more logical devices than GPUs: fold, say so */
  rp_status rc = rp_exec_create(&x, g, be, &eo);
  if (!rc && rp_exec_notice(x)[0])
    printf("(%s)\n", rp_exec_notice(x));
  if (!rc) {
    init(c);
    rc = rp_exec_run(x, 1);
  }
  if (!rc) {
    init(c);
    rc = rp_exec_run(x, c->iters);
    us = rp_exec_last_us(x);
  }
  if (rc) {
    fprintf(stderr, "heat2d: %s: %s\n", rp_strerror(rc),
            x ? rp_exec_error(x) : rp_last_error());
    us = -1;
  }
  rp_exec_destroy(x);
  return us;
}

/* Speedup of D devices over one, in one run. */
static int scaling(ctx *c, const ex_opts *o) {
  const rp_backend *be = NULL;
  uint64_t nn = c->p.n * c->p.n;
  rp_status rc = rp_backend_find(o->backend, &be);
  if (rc) {
    fprintf(stderr, "backend %s: %s\n", o->backend ? o->backend : "auto",
            rp_strerror(rc));
    return 2;
  }
  rp_graph *g1 = record(c, 1), *gn = g1 ? record(c, c->p.devices) : NULL;
  int ret = 2;
  if (!gn)
    goto out;
  printf("heat2d scaling: %llux%llu grid, %u steps per graph, %u replays, "
         "backend %s\n",
         (unsigned long long)c->p.n, (unsigned long long)c->p.n, c->p.steps,
         c->iters, rp_backend_name(be));
  printf("1 device:  ");
  describe(g1);
  printf("%u devices: ", c->p.devices);
  describe(gn);
  double t1 = timed(g1, be, o, c);
  memcpy(c->cu, c->u, nn * 8);
  memcpy(c->cv, c->v, nn * 8);
  double tn = t1 < 0 ? -1 : timed(gn, be, o, c);
  if (tn < 0)
    goto out;
  int same = !memcmp(c->u, c->cu, nn * 8) && !memcmp(c->v, c->cv, nn * 8);
  printf("%u devices vs 1 device: results %s\n", c->p.devices,
         same ? "identical" : "DIFFERENT");
  printf("1 device   %10.3f ms\n", t1 / 1e3);
  printf("%u devices  %10.3f ms\n", c->p.devices, tn / 1e3);
  printf("speedup over one device %.2fx on %u devices\n",
         tn > 0 ? t1 / tn : 0.0, c->p.devices);
  ret = same ? 0 : 1;
out:
  rp_graph_destroy(g1);
  rp_graph_destroy(gn);
  return ret;
}

int main(int argc, char **argv) {
  ctx c;
  ex_opts o;
  int scale = 0;
  memset(&c, 0, sizeof c);
  memset(&o, 0, sizeof o);
  c.p.n = 1024;
  c.p.steps = 10;
  c.p.devices = 2;
  o.iters = 10;
  const ex_flag flags[] = {
      {"--n", "N", "grid of N x N doubles (default 1024)", &c.p.n, 1, 0,
       1u << 20},
      {"--steps", "S", "time steps recorded in the graph (10)", &c.p.steps, 0,
       0, 1u << 20},
      {"--devices", "D", "logical devices, rows cut in D blocks (2)",
       &c.p.devices, 0, 1, RP_MAX_DEVICES},
      {"--explicit-halo", NULL, "record halo copies by hand, no coherence",
       &c.p.explicit_halo, 0, 0, 0},
      {"--scaling", NULL, "time 1 device against D, print the ratio", &scale, 0,
       0, 0}};
  int pr =
      ex_parse(argc, argv, "heat2d", flags, sizeof flags / sizeof *flags, &o);
  if (pr)
    return pr == 1 ? 0 : 2;
  c.iters = o.iters ? o.iters : 1;
  if (c.p.n < 3 || c.p.devices > c.p.n || c.p.n >= (1ull << 31)) {
    fprintf(stderr, "heat2d: need 3 <= n and devices <= n\n");
    return 2;
  }
  uint64_t nn = c.p.n * c.p.n;
  c.u = (double *)malloc(nn * 8);
  c.v = (double *)malloc(nn * 8);
  c.cu = (double *)malloc(nn * 8);
  c.cv = (double *)malloc(nn * 8);
  rp_graph *g = NULL;
  int ret = 2;
  if (!c.u || !c.v || !c.cu || !c.cv) {
    fprintf(stderr, "heat2d: out of memory\n");
    goto out;
  }
  if (scale) {
    ret = scaling(&c, &o);
    goto out;
  }
  if (!(g = record(&c, c.p.devices)))
    goto out;
  printf("heat2d: %llux%llu grid, rows over %u devices, %u steps per graph "
         "(ping-pong U/V), halo exchange %s, %u replays\n",
         (unsigned long long)c.p.n, (unsigned long long)c.p.n, c.p.devices,
         c.p.steps, c.p.explicit_halo ? "recorded by hand" : "automatic",
         c.iters);
  describe(g);
  ret = ex_run_compare(g, &o, init, check, &c);
out:
  rp_graph_destroy(g);
  free(c.u);
  free(c.v);
  free(c.cu);
  free(c.cv);
  return ret;
}
