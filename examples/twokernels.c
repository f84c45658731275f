/* Two independent kernels on two devices: the analysis puts them on two
 * compute lanes (bound 2x); checked against the reference and a plain
 * loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "multidev.h"

typedef struct ctx {
  ex_twok p;
  unsigned iters;
  uint64_t *x, *y, *cx, *cy;
} ctx;

static void init(void *v) {
  ctx *c = (ctx *)v;
  ex_twok_init(&c->p, c->x, c->y);
}

static int check(void *v) {
  ctx *c = (ctx *)v;
  ex_twok_init(&c->p, c->cx, c->cy);
  ex_twok_check(&c->p, c->iters, c->cx, c->cy);
  return memcmp(c->x, c->cx, c->p.n * 8) || memcmp(c->y, c->cy, c->p.n * 8);
}

int main(int argc, char **argv) {
  ctx c;
  ex_opts o;
  memset(&c, 0, sizeof c);
  memset(&o, 0, sizeof o);
  c.p.n = 1u << 20;
  c.p.inner = 200;
  c.p.rounds = 2;
  o.iters = 5;
  const ex_flag flags[] = {
      {"--n", "N", "elements of X and of Y (default 1048576)", &c.p.n, 1, 1,
       1ull << 32},
      {"--inner", "K", "updates per element per kernel (200)", &c.p.inner, 0, 0,
       1u << 20},
      {"--rounds", "R", "kernels per device per replay (2)", &c.p.rounds, 0, 0,
       1u << 20}};
  int pr = ex_parse(argc, argv, "twokernels", flags,
                    sizeof flags / sizeof *flags, &o);
  if (pr)
    return pr == 1 ? 0 : 2;
  c.iters = o.iters ? o.iters : 1;
  c.x = (uint64_t *)malloc(c.p.n * 8);
  c.y = (uint64_t *)malloc(c.p.n * 8);
  c.cx = (uint64_t *)malloc(c.p.n * 8);
  c.cy = (uint64_t *)malloc(c.p.n * 8);
  rp_graph *g = NULL;
  int ret = 2;
  rp_status rc;
  if (!c.x || !c.y || !c.cx || !c.cy || rp_graph_create(&g, 0)) {
    fprintf(stderr, "twokernels: out of memory\n");
    goto out;
  }
  if ((rc = ex_twok_record(g, &c.p, c.x, c.y)) || (rc = rp_graph_end(g))) {
    fprintf(stderr, "twokernels: recording failed: %s: %s\n", rp_strerror(rc),
            rp_graph_error(g));
    goto out;
  }
  printf("twokernels: X on device 0, Y on device 1, %llu elements each, "
         "%u updates per kernel, %u kernels per device, %u replays\n",
         (unsigned long long)c.p.n, c.p.inner, c.p.rounds, c.iters);
  printf("graph: %u ops, %u edges, %u devices\n", rp_graph_num_nodes(g),
         rp_graph_num_edges(g), rp_graph_num_devices(g));
  ret = ex_run_compare(g, &o, init, check, &c);
out:
  rp_graph_destroy(g);
  free(c.x);
  free(c.y);
  free(c.cx);
  free(c.cy);
  return ret;
}
