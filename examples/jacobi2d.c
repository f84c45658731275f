/* Jacobi 2D: record copy + stencil steps once (the host reading the grid
 * every k steps), replay them, check against the reference, and compare the
 * achieved speedup with the analysis' prediction. With --mixed, over two
 * device kinds in one graph: the top half of the rows on CPU cores (a
 * CPU-kind device 1), the bottom half on device 0 (a GPU on the cuda
 * backend, CPU cores on openmp), the halo rows between them copied by
 * automatic coherence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "examples.h"

typedef struct ctx {
  ex_jacobi2d p;
  unsigned iters;
  double *a, *b, *s, *ca, *cb, *cs;
} ctx;

static void init(void *v) {
  ctx *c = (ctx *)v;
  ex_jacobi2d_init(&c->p, c->a, c->b, c->s);
}

static int check(void *v) {
  ctx *c = (ctx *)v;
  uint64_t nn = c->p.n * c->p.n;
  ex_jacobi2d_init(&c->p, c->ca, c->cb, c->cs);
  ex_jacobi2d_check(&c->p, c->iters, c->ca, c->cb, c->cs);
  return memcmp(c->a, c->ca, nn * 8) || memcmp(c->b, c->cb, nn * 8) ||
         memcmp(c->s, c->cs, ex_jacobi2d_nsums(&c->p) * 8);
}

int main(int argc, char **argv) {
  ctx c;
  ex_opts o;
  memset(&c, 0, sizeof c);
  memset(&o, 0, sizeof o);
  c.p.n = 1024;
  c.p.steps = 8;
  c.p.every = 4;
  c.p.blocks = 8;
  o.iters = 10;
  int mixed = 0;
  const ex_flag flags[] = {
      {"--mixed", NULL,
       "top half of the rows on a CPU-kind device 1, the "
       "bottom half on device 0",
       &mixed, 0, 0, 1},
      {"--n", "N", "grid of N x N doubles (default 1024)", &c.p.n, 1, 3,
       1u << 20},
      {"--steps", "S", "Jacobi steps recorded in the graph (8)", &c.p.steps, 0,
       0, 1u << 20},
      {"--every", "K", "the host reads the grid every K steps (4)", &c.p.every,
       0, 0, 1u << 20},
      {"--blocks", "B", "row blocks per step (8)", &c.p.blocks, 0, 1,
       1u << 20}};
  int pr =
      ex_parse(argc, argv, "jacobi2d", flags, sizeof flags / sizeof *flags, &o);
  if (pr)
    return pr == 1 ? 0 : 2;
  c.iters = o.iters ? o.iters : 1;
  uint64_t nn = c.p.n * c.p.n, ns = ex_jacobi2d_nsums(&c.p);
  c.a = (double *)malloc(nn * 8);
  c.b = (double *)malloc(nn * 8);
  c.s = (double *)malloc(ns * 8);
  c.ca = (double *)malloc(nn * 8);
  c.cb = (double *)malloc(nn * 8);
  c.cs = (double *)malloc(ns * 8);
  rp_graph *g = NULL;
  int ret = 2;
  rp_status rc;
  if (!c.a || !c.b || !c.s || !c.ca || !c.cb || !c.cs ||
      rp_graph_create(&g, 0)) {
    fprintf(stderr, "jacobi2d: out of memory\n");
    goto out;
  }
  if ((rc = mixed ? ex_jacobi2d_mixed_record(g, &c.p, 1, c.a, c.b, c.s)
                  : ex_jacobi2d_record(g, &c.p, c.a, c.b, c.s)) ||
      (rc = rp_graph_end(g))) {
    fprintf(stderr, "jacobi2d: recording failed: %s: %s\n", rp_strerror(rc),
            rp_graph_error(g));
    goto out;
  }
  printf("jacobi2d: %llux%llu grid, %u row blocks%s, %u steps per graph "
         "(host reads every %u), %u replays\n",
         (unsigned long long)c.p.n, (unsigned long long)c.p.n, c.p.blocks,
         mixed ? " (the top half on CPU-kind device 1, the bottom half on "
                 "device 0)"
               : "",
         c.p.steps, c.p.every, c.iters);
  printf("graph: %u ops, %u edges\n", rp_graph_num_nodes(g),
         rp_graph_num_edges(g));
  ret = ex_run_compare(g, &o, init, check, &c);
out:
  rp_graph_destroy(g);
  free(c.a);
  free(c.b);
  free(c.s);
  free(c.ca);
  free(c.cb);
  free(c.cs);
  return ret;
}
