#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
/* Benchmark: recording with hazard derivation, N operations over 1 000
 * buffers with partial regions; prints operations per second and the time
 * ratio between N and 10 N. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <malloc.h>
#include "reprise.h"
#include "record/graph.h"

static double now_s(void) {
  struct timespec ts;
  /* CPU time, not wall time: the machine is shared. */
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void nop(const rp_kargs *a, const uint64_t lo[3], const uint64_t hi[3]) {
  (void)a, (void)lo, (void)hi;
}

static const rp_param params[] = {{"src", RP_IN}, {"dst", RP_INOUT}};
static const rp_kernel k = {"k", 2, params, nop, NULL, NULL, {0, 0, 0},
                            NULL, NULL, 0};

enum { NBUF = 1000, BYTES = 1 << 16, CHUNKS = 16 };

/* Records n ops. Random: each reads a random chunk of one buffer and
 * updates a random chunk of another, anywhere among the 1 000 buffers (the
 * hardest case for the reduction: every op's dependencies reach far
 * back); one in 8 ops is a copy of a chunk back to the host. Local: the
 * same, but the two buffers are neighbours in a sweep over the buffers,
 * the way a blocked solver touches its tiles. Returns seconds, or a
 * negative value on failure. */
/* Bytes the ended graph keeps per operation (operations, their accesses,
 * kernel arguments, explicit dependencies, names, CSR offsets) and per
 * edge (successor, predecessor, packed kind and buffer). */
static void footprint(const rp_graph *g, double *per_op, double *per_edge) {
  size_t ops = (size_t)g->nop * sizeof *g->op +
               (size_t)g->nacc * sizeof *g->acc +
               (size_t)g->nargs * sizeof *g->args +
               (size_t)g->nafter * sizeof *g->after +
               2 * ((size_t)g->nop + 1) * sizeof(uint32_t);
  for (uint32_t i = 0; i < g->nop; i++) {
    if (g->op[i].name && !g->op[i].name_shared)
      ops += malloc_usable_size(g->op[i].name);
    ops += g->op[i].kernel_name ? malloc_usable_size(g->op[i].kernel_name)
                                : 0;
  }
  size_t edges = (size_t)g->nedge *
                 (sizeof *g->succ + sizeof *g->pred + sizeof *g->ekind);
  *per_op = g->nop ? (double)ops / g->nop : 0;
  *per_edge = g->nedge ? (double)edges / g->nedge : 0;
}

static double run(uint64_t n, int coherence, int local, uint32_t *edges) {
  static char mem[1];
  rp_graph *g;
  if (rp_graph_create(&g, coherence ? 0 : RP_GRAPH_NO_COHERENCE) != RP_OK)
    return -1;
  for (int b = 0; b < NBUF; b++) {
    char name[16];
    snprintf(name, sizeof name, "b%d", b);
    /* The graph never touches the memory: one byte serves as "host". */
    rp_buffer_desc d = {name, mem, BYTES, 1, 0, {0, 0, 0}};
    if (rp_buffer_add(g, &d, NULL) != RP_OK)
      return -1;
  }
  uint64_t s = 88172645463325252ull;
  double t0 = now_s();
  for (uint64_t i = 0; i < n; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    rp_buf a = (rp_buf)(s % NBUF), b = (rp_buf)((s >> 20) % NBUF);
    if (local) {
      b = (rp_buf)(i % NBUF);
      a = (rp_buf)((b + 1 + (s % 2)) % NBUF);
    }
    uint64_t ca = (s >> 40) % CHUNKS, cb = (s >> 50) % CHUNKS;
    const uint64_t cs = BYTES / CHUNKS;
    rp_status st;
    if ((s >> 60) % 8 == 0 && !coherence) {
      st = rp_record_copy_to_host(g, rp_bytes(a, ca * cs, cs), 0, NULL, NULL);
    } else {
      rp_arg args[2] = {rp_arg_buf(rp_bytes(a, ca * cs, cs)),
                        rp_arg_buf(rp_bytes(b, cb * cs, cs))};
      st = rp_record_kernel(g, &k, 0, rp_dims3(1, 1, 1), args, NULL, NULL);
    }
    if (st != RP_OK) {
      fprintf(stderr, "record: %s\n", rp_graph_error(g));
      return -1;
    }
  }
  if (rp_graph_end(g) != RP_OK)
    return -1;
  double t = now_s() - t0;
  *edges = rp_graph_num_edges(g);
  uint32_t nodes = rp_graph_num_nodes(g);
  double bop, bedge;
  footprint(g, &bop, &bedge);
  rp_graph_destroy(g);
  printf("  %9llu ops requested, %9u nodes, %9u edges: %.3f s, %.2f M ops/s"
         "; stored %.0f B/op + %.0f B/edge (budget 150 + 12)\n",
         (unsigned long long)n, nodes, *edges, t, nodes / t / 1e6, bop,
         bedge);
  fflush(stdout);
  return t;
}

int main(int argc, char **argv) {
  uint64_t n = 1000000;
  int ten = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--ops") && i + 1 < argc)
      n = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--no-10x"))
      ten = 0;
    else {
      printf("usage: bench_record [--ops N] [--no-10x]\n"
             "Records N kernels over %d buffers (partial regions) with "
             "hazard derivation,\nthen 10 N, and prints the rate and the "
             "time ratio.\n", NBUF);
      return strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  uint32_t e;
  for (int v = 0; v < 4; v++) {
    int coh = v & 1, local = v >> 1;
    printf("%s, %s:\n", local ? "local sweep" : "uniform random",
           coh ? "automatic coherence on (copies inserted)"
               : "coherence off (explicit copies)");
    double t1 = run(n, coh, local, &e);
    if (t1 < 0)
      return 1;
    if (ten) {
      double t10 = run(10 * n, coh, local, &e);
      if (t10 < 0)
        return 1;
      printf("  ratio 10N/N: %.2f (linear: 10)\n", t10 / t1);
    }
  }
  return 0;
}
