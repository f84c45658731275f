/* Tiled matrix product with a library kernel: record one operation per tile
 * product (cuBLAS dgemm on the GPU when built with cuBLAS, a plain loop on
 * the CPU), replay, check against the reference and a plain triple loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "examples.h"

typedef struct ctx {
  ex_gemm p;
  unsigned iters;
  double *a, *b, *c, *cc;
} ctx;

static void init(void *v) {
  ctx *c = (ctx *)v;
  ex_gemm_init(&c->p, c->a, c->b, c->c);
}

static int check(void *v) {
  ctx *c = (ctx *)v;
  ex_gemm_init(&c->p, c->a, c->b, c->cc);
  ex_gemm_check(&c->p, c->iters, c->a, c->b, c->cc);
  return memcmp(c->c, c->cc, c->p.n * c->p.n * sizeof(double)) != 0;
}

int main(int argc, char **argv) {
  ctx c;
  ex_opts o;
  memset(&c, 0, sizeof c);
  memset(&o, 0, sizeof o);
  c.p.n = 512;
  c.p.tile = 128;
  o.iters = 3;
  const ex_flag flags[] = {
      {"--n", "N", "N x N doubles (default 512)", &c.p.n, 1, 1, 1u << 15},
      {"--tile", "T", "tiles of T x T (128; N a multiple of T)", &c.p.tile, 1,
       1, 1u << 15}};
  int pr =
      ex_parse(argc, argv, "gemm", flags, sizeof flags / sizeof *flags, &o);
  if (pr)
    return pr == 1 ? 0 : 2;
  if (c.p.n % c.p.tile) {
    fprintf(stderr, "gemm: --n must be a multiple of --tile\n");
    return 2;
  }
  c.iters = o.iters ? o.iters : 1;
  size_t bytes = c.p.n * c.p.n * sizeof(double);
  double **arr[4] = {&c.a, &c.b, &c.c, &c.cc};
  int nomem = 0;
  for (int i = 0; i < 4; i++)
    nomem |= !(*arr[i] = (double *)malloc(bytes));
  rp_graph *g = NULL;
  int ret = 2, lib = 0;
  rp_status rc;
  if (nomem || rp_graph_create(&g, 0) || !(lib = !ex_gemm_library_init())) {
    fprintf(stderr, "gemm: out of memory, or cuBLAS failed to start\n");
    goto out;
  }
  ex_gemm_init(&c.p, c.a, c.b, c.c);
  if ((rc = ex_gemm_record(g, &c.p, c.a, c.b, c.c)) || (rc = rp_graph_end(g))) {
    fprintf(stderr, "gemm: recording failed: %s: %s\n", rp_strerror(rc),
            rp_graph_error(g));
    goto out;
  }
  printf("gemm: %llu x %llu doubles in %llu x %llu tiles (%s on a GPU), "
         "%u replays\ngraph: %u ops, %u edges\n",
         (unsigned long long)c.p.n, (unsigned long long)c.p.n,
         (unsigned long long)c.p.tile, (unsigned long long)c.p.tile,
         ex_gemm_uses_library ? "cuBLAS dgemm" : "generic kernel", c.iters,
         rp_graph_num_nodes(g), rp_graph_num_edges(g));
  ret = ex_run_compare(g, &o, init, check, &c);
out:
  /* ex_run_compare destroyed its execs: the library may go. */
  if (lib)
    ex_gemm_library_fini();
  rp_graph_destroy(g);
  for (int i = 0; i < 4; i++)
    free(*arr[i]);
  return ret;
}
