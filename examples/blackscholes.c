/* Black-Scholes: record the pricing kernels once, replay, check against the
 * reference and compare achieved speedup with the analysis' prediction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "examples.h"

typedef struct ctx {
  ex_blackscholes p;
  double *s, *k, *t, *call, *put, *cc, *cp;
} ctx;

static void init(void *v) {
  ctx *c = (ctx *)v;
  ex_blackscholes_init(&c->p, c->s, c->k, c->t);
  memset(c->call, 0, c->p.n * 8);
  memset(c->put, 0, c->p.n * 8);
}

/* On a GPU, exp, log and erf round differently from the C library: prices
 * agree to this relative tolerance, not to the bit (they do on CPUs). */
#define RTOL 1e-9

static int check(void *v) {
  ctx *c = (ctx *)v;
  ex_blackscholes_check(&c->p, c->s, c->k, c->t, c->cc, c->cp);
  double worst = 0;
  return !ex_close(c->call, c->cc, c->p.n, RTOL, &worst) ||
         !ex_close(c->put, c->cp, c->p.n, RTOL, &worst);
}

int main(int argc, char **argv) {
  ctx c;
  ex_opts o;
  memset(&c, 0, sizeof c);
  memset(&o, 0, sizeof o);
  c.p.n = 1000000;
  c.p.blocks = 16;
  c.p.r = 0.02;
  c.p.v = 0.30;
  o.iters = 5;
  o.rtol = RTOL;
  const ex_flag flags[] = {
      {"--n", "N", "options (default 1000000)", &c.p.n, 1, 1, 1ull << 32},
      {"--blocks", "B", "kernels (16)", &c.p.blocks, 0, 1, 1u << 20}};
  int pr = ex_parse(argc, argv, "blackscholes", flags,
                    sizeof flags / sizeof *flags, &o);
  if (pr)
    return pr == 1 ? 0 : 2;
  size_t bytes = c.p.n * 8;
  double **arr[7] = {&c.s, &c.k, &c.t, &c.call, &c.put, &c.cc, &c.cp};
  int nomem = 0;
  for (int i = 0; i < 7; i++)
    nomem |= !(*arr[i] = (double *)malloc(bytes));
  rp_graph *g = NULL;
  int ret = 2;
  rp_status rc;
  if (nomem || rp_graph_create(&g, 0)) {
    fprintf(stderr, "blackscholes: out of memory\n");
    goto out;
  }
  if ((rc = ex_blackscholes_record(g, &c.p, c.s, c.k, c.t, c.call, c.put)) ||
      (rc = rp_graph_end(g))) {
    fprintf(stderr, "blackscholes: recording failed: %s: %s\n", rp_strerror(rc),
            rp_graph_error(g));
    goto out;
  }
  printf("blackscholes: %llu options in %u kernels, %u replays\n"
         "graph: %u ops, %u edges\n",
         (unsigned long long)c.p.n, c.p.blocks, o.iters ? o.iters : 1,
         rp_graph_num_nodes(g), rp_graph_num_edges(g));
  ret = ex_run_compare(g, &o, init, check, &c);
out:
  rp_graph_destroy(g);
  for (int i = 0; i < 7; i++)
    free(*arr[i]);
  return ret;
}
