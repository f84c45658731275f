/* Recurrence: record rounds of u <- r u (1 - u) + c over every element of a
 * matrix once, replay, check against the reference and compare achieved
 * speedup with the analysis' prediction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "examples.h"

typedef struct ctx {
  ex_recurrence p;
  unsigned iters;
  double *u, *cu;
} ctx;

static void init(void *v) {
  ctx *c = (ctx *)v;
  ex_recurrence_init(&c->p, c->u);
}

static int check(void *v) {
  ctx *c = (ctx *)v;
  ex_recurrence_init(&c->p, c->cu);
  ex_recurrence_check(&c->p, c->iters, c->cu);
  return memcmp(c->u, c->cu, c->p.rows * c->p.cols * 8) != 0;
}

static void usage(FILE *fp) {
  fprintf(fp, "usage: recurrence [options]\n"
              "  --rows R --cols C   matrix of doubles (default 512 x 512)\n"
              "  --inner K           recurrence steps per kernel (20)\n"
              "  --rounds N          rounds per graph (4)\n"
              "  --blocks B          row blocks per round (16)\n");
  ex_usage_common(fp);
}

int main(int argc, char **argv) {
  ctx c;
  ex_opts o;
  memset(&c, 0, sizeof c);
  memset(&o, 0, sizeof o);
  c.p.rows = c.p.cols = 512;
  c.p.inner = 20;
  c.p.rounds = 4;
  c.p.blocks = 16;
  c.p.r = 3.7;
  c.p.c = 0.001;
  o.iters = 5;
  for (int i = 1; i < argc; i++) {
    int r = ex_parse_common(argc, argv, &i, &o);
    long v = i + 1 < argc ? atol(argv[i + 1]) : -1;
    if (r == 1)
      continue;
    if (!strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    }
    if (r == 0 && v > 0 && !strcmp(argv[i], "--rows"))
      c.p.rows = (uint64_t)v;
    else if (r == 0 && v > 0 && !strcmp(argv[i], "--cols"))
      c.p.cols = (uint64_t)v;
    else if (r == 0 && v >= 0 && !strcmp(argv[i], "--inner"))
      c.p.inner = (unsigned)v;
    else if (r == 0 && v >= 0 && !strcmp(argv[i], "--rounds"))
      c.p.rounds = (unsigned)v;
    else if (r == 0 && v > 0 && !strcmp(argv[i], "--blocks"))
      c.p.blocks = (unsigned)v;
    else {
      usage(stderr);
      return 2;
    }
    i++;
  }
  c.iters = o.iters ? o.iters : 1;
  size_t bytes = c.p.rows * c.p.cols * 8;
  c.u = (double *)malloc(bytes);
  c.cu = (double *)malloc(bytes);
  rp_graph *g = NULL;
  int ret = 2;
  rp_status rc;
  if (!c.u || !c.cu || rp_graph_create(&g, 0)) {
    fprintf(stderr, "recurrence: out of memory\n");
    goto out;
  }
  if ((rc = ex_recurrence_record(g, &c.p, c.u, NULL)) ||
      (rc = rp_graph_end(g))) {
    fprintf(stderr, "recurrence: recording failed: %s: %s\n",
            rp_strerror(rc), rp_graph_error(g));
    goto out;
  }
  printf("recurrence: %llux%llu, %u rounds of %u row blocks x %u steps per "
         "graph, %u replays\ngraph: %u ops, %u edges\n",
         (unsigned long long)c.p.rows, (unsigned long long)c.p.cols,
         c.p.rounds, c.p.blocks, c.p.inner, c.iters, rp_graph_num_nodes(g),
         rp_graph_num_edges(g));
  ret = ex_run_compare(g, &o, init, check, &c);
out:
  rp_graph_destroy(g);
  free(c.u);
  free(c.cu);
  return ret;
}
