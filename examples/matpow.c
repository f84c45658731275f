/* Matrix power: record repeated row-blocked products X <- X * M once,
 * replay, check against the reference and compare achieved speedup with
 * the analysis' prediction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "examples.h"

typedef struct ctx {
  ex_matpow p;
  unsigned iters;
  double *m, *x, *y, *cx, *cy;
} ctx;

static void init(void *v) {
  ctx *c = (ctx *)v;
  ex_matpow_init(&c->p, c->m, c->x, c->y);
}

static int check(void *v) {
  ctx *c = (ctx *)v;
  size_t bytes = c->p.n * c->p.n * 8;
  double *m = (double *)malloc(bytes);
  if (!m)
    return 1;
  ex_matpow_init(&c->p, m, c->cx, c->cy);
  ex_matpow_check(&c->p, c->iters, m, c->cx, c->cy);
  free(m);
  return memcmp(c->x, c->cx, bytes) || memcmp(c->y, c->cy, bytes);
}

int main(int argc, char **argv) {
  ctx c;
  ex_opts o;
  memset(&c, 0, sizeof c);
  memset(&o, 0, sizeof o);
  c.p.n = 256;
  c.p.steps = 6;
  c.p.blocks = 8;
  o.iters = 2;
  const ex_flag flags[] = {
      {"--n", "N", "matrices of N x N doubles (default 256)", &c.p.n, 1, 1,
       1u << 16},
      {"--steps", "S", "products per graph (6)", &c.p.steps, 0, 0, 1u << 20},
      {"--blocks", "B", "row blocks per product (8)", &c.p.blocks, 0, 1,
       1u << 20}};
  int pr =
      ex_parse(argc, argv, "matpow", flags, sizeof flags / sizeof *flags, &o);
  if (pr)
    return pr == 1 ? 0 : 2;
  c.iters = o.iters ? o.iters : 1;
  size_t bytes = c.p.n * c.p.n * 8;
  c.m = (double *)malloc(bytes);
  c.x = (double *)malloc(bytes);
  c.y = (double *)malloc(bytes);
  c.cx = (double *)malloc(bytes);
  c.cy = (double *)malloc(bytes);
  rp_graph *g = NULL;
  int ret = 2;
  rp_status rc;
  if (!c.m || !c.x || !c.y || !c.cx || !c.cy || rp_graph_create(&g, 0)) {
    fprintf(stderr, "matpow: out of memory\n");
    goto out;
  }
  if ((rc = ex_matpow_record(g, &c.p, c.m, c.x, c.y)) ||
      (rc = rp_graph_end(g))) {
    fprintf(stderr, "matpow: recording failed: %s: %s\n", rp_strerror(rc),
            rp_graph_error(g));
    goto out;
  }
  printf("matpow: %llux%llu, %u products of %u row blocks per graph, "
         "%u replays\ngraph: %u ops, %u edges\n",
         (unsigned long long)c.p.n, (unsigned long long)c.p.n, c.p.steps,
         c.p.blocks, c.iters, rp_graph_num_nodes(g), rp_graph_num_edges(g));
  ret = ex_run_compare(g, &o, init, check, &c);
out:
  rp_graph_destroy(g);
  free(c.m);
  free(c.x);
  free(c.y);
  free(c.cx);
  free(c.cy);
  return ret;
}
