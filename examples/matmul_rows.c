/* Matmul by rows over several devices: C = A * B with A's and C's rows cut
 * over N devices and B copied to every device by automatic coherence;
 * checked against the reference and a plain triple loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "multidev.h"

typedef struct ctx {
  ex_mmrows p;
  double *a, *b, *c, *cc;
} ctx;

static void init(void *x) {
  ctx *c = (ctx *)x;
  ex_mmrows_init(&c->p, c->a, c->b, c->c);
}

static int check(void *x) {
  ctx *c = (ctx *)x;
  ex_mmrows_check(&c->p, c->a, c->b, c->cc);
  return memcmp(c->c, c->cc, c->p.n * c->p.n * 8) != 0;
}

int main(int argc, char **argv) {
  ctx c;
  ex_opts o;
  memset(&c, 0, sizeof c);
  memset(&o, 0, sizeof o);
  c.p.n = 512;
  c.p.devices = 2;
  o.iters = 3;
  const ex_flag flags[] = {
      {"--n", "N", "N x N doubles (default 512)", &c.p.n, 1, 1, 1u << 16},
      {"--devices", "D", "logical devices, rows cut in D blocks (2)",
       &c.p.devices, 0, 1, RP_MAX_DEVICES}};
  int pr = ex_parse(argc, argv, "matmul_rows", flags,
                    sizeof flags / sizeof *flags, &o);
  if (pr)
    return pr == 1 ? 0 : 2;
  if (c.p.devices > c.p.n || c.p.n >= (1ull << 24)) {
    fprintf(stderr, "matmul_rows: need devices <= n < 2^24\n");
    return 2;
  }
  uint64_t nn = c.p.n * c.p.n;
  c.a = (double *)malloc(nn * 8);
  c.b = (double *)malloc(nn * 8);
  c.c = (double *)malloc(nn * 8);
  c.cc = (double *)malloc(nn * 8);
  rp_graph *g = NULL;
  int ret = 2;
  rp_status rc;
  if (!c.a || !c.b || !c.c || !c.cc || rp_graph_create(&g, 0)) {
    fprintf(stderr, "matmul_rows: out of memory\n");
    goto out;
  }
  if ((rc = ex_mmrows_record(g, &c.p, c.a, c.b, c.c)) ||
      (rc = rp_graph_end(g))) {
    fprintf(stderr, "matmul_rows: recording failed: %s: %s\n", rp_strerror(rc),
            rp_graph_error(g));
    goto out;
  }
  printf("matmul_rows: C = A * B, %llux%llu doubles, rows of A and C over "
         "%u devices, B on every device, %u replays\n",
         (unsigned long long)c.p.n, (unsigned long long)c.p.n, c.p.devices,
         o.iters ? o.iters : 1);
  printf("graph: %u ops, %u edges, %u devices\n", rp_graph_num_nodes(g),
         rp_graph_num_edges(g), rp_graph_num_devices(g));
  ret = ex_run_compare(g, &o, init, check, &c);
out:
  rp_graph_destroy(g);
  free(c.a);
  free(c.b);
  free(c.c);
  free(c.cc);
  return ret;
}
