/* Jacobi 2D: record copy + stencil steps once (the host reading the grid
 * every k steps), replay them, check against the reference, and compare the
 * achieved speedup with the analysis' prediction. */
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

static void usage(FILE *fp) {
  fprintf(fp, "usage: jacobi2d [options]\n"
              "  --n N           grid of N x N doubles (default 1024)\n"
              "  --steps S       Jacobi steps recorded in the graph (8)\n"
              "  --every K       the host reads the grid every K steps (4)\n"
              "  --blocks B      row blocks per step (8)\n");
  ex_usage_common(fp);
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
  for (int i = 1; i < argc; i++) {
    int r = ex_parse_common(argc, argv, &i, &o);
    long v = i + 1 < argc ? atol(argv[i + 1]) : -1;
    if (r == 1)
      continue;
    if (!strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    }
    if (r == 0 && v >= 0 && !strcmp(argv[i], "--n"))
      c.p.n = (uint64_t)v;
    else if (r == 0 && v >= 0 && !strcmp(argv[i], "--steps"))
      c.p.steps = (unsigned)v;
    else if (r == 0 && v >= 0 && !strcmp(argv[i], "--every"))
      c.p.every = (unsigned)v;
    else if (r == 0 && v >= 0 && !strcmp(argv[i], "--blocks"))
      c.p.blocks = (unsigned)v;
    else {
      usage(stderr);
      return 2;
    }
    i++;
  }
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
  if ((rc = ex_jacobi2d_record(g, &c.p, c.a, c.b, c.s)) ||
      (rc = rp_graph_end(g))) {
    fprintf(stderr, "jacobi2d: recording failed: %s: %s\n", rp_strerror(rc),
            rp_graph_error(g));
    goto out;
  }
  printf("jacobi2d: %llux%llu grid, %u row blocks, %u steps per graph "
         "(host reads every %u), %u replays\n",
         (unsigned long long)c.p.n, (unsigned long long)c.p.n, c.p.blocks,
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
