#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
/* Benchmark: recording with hazard derivation and exact reduction, N, 10 N
 * (and 100 N) operations of five shapes (partial regions over 1 000
 * buffers, uniform or in a sweep; a blocked solver's whole reads and 4 KiB
 * updates over 64 buffers; the same over 4 buffers, gather, where a whole
 * read sees up to 256 recent writes; rowmix, whole-matrix reads mixed with
 * row writes); prints the median process CPU time, operations per second
 * against the goal of issue 36 (3 M ops/s at 1 M ops on one core of the
 * host, 1 M ops/s on the 2-core VM), stored bytes per operation and per
 * edge, the time ratios 10N/N (goal <= 12), and last a summary table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <malloc.h>
#include "reprise.h"
#include "record/graph.h"
#include "record/hazard.h"

/* --tune W,L,S: the reducer's window, list length and 1 + search budget
 * (record/hazard.h; 0 keeps a default), to explore them. */
static uint32_t tune_w, tune_l, tune_s;

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
static const rp_kernel k =
    RP_KERNEL_WITH(.name = "k", .nparams = 2, .params = params, .cpu = nop);

enum { NBUF = 1000, BYTES = 1 << 16, CHUNKS = 16 };

/* Bytes the ended graph keeps per operation (operations, their accesses
 * and boxes, kernel scalars and index spaces, host functions, explicit
 * dependencies, names, CSR offsets) and per
 * edge (successor, predecessor, packed kind and buffer). */
/* Shapes (run() records n ops of one). Uniform: each op reads a random
 * chunk of one buffer and updates a random chunk of another, anywhere
 * among the 1 000 buffers (the hardest case for the reduction: every op's
 * dependencies reach far back); one in 8 ops is a copy of a chunk back to
 * the host when coherence is off. Sweep: the same, but the two buffers
 * are neighbours in a sweep over the buffers, the way a blocked solver
 * touches its tiles. Solver: see SOL_*. */
static void footprint(const rp_graph *g, double *per_op, double *per_edge) {
  size_t ops =
      (size_t)g->nop * sizeof *g->op + (size_t)g->nsacc * sizeof *g->sacc +
      (size_t)g->nbox * sizeof *g->box + (size_t)g->nslot * sizeof *g->slot +
      (size_t)g->ndims * sizeof *g->dims +
      (size_t)g->nhostfn * sizeof *g->hostfn +
      (size_t)g->nafter * sizeof *g->after +
      2 * ((size_t)g->nop + 1) * sizeof(uint32_t);
  for (uint32_t i = 0; i < g->nop; i++) {
    if (g->op[i].name && !g->op[i].name_shared)
      ops += malloc_usable_size(g->op[i].name);
    ops += g->op[i].kernel_name ? malloc_usable_size(g->op[i].kernel_name) : 0;
  }
  size_t edges =
      (size_t)g->nedge * (sizeof *g->succ + sizeof *g->pred + sizeof *g->ekind);
  *per_op = g->nop ? (double)ops / g->nop : 0;
  *per_edge = g->nedge ? (double)edges / g->nedge : 0;
}

enum {
  SHAPE_UNIFORM,
  SHAPE_SWEEP,
  SHAPE_SOLVER,
  SHAPE_GATHER,
  SHAPE_ROWMIX,
  NSHAPE
};
static const char *const shape_name[] = {"uniform", "sweep", "solver", "gather",
                                         "rowmix"};

/* Solver shape: 64 buffers of 1 MiB; each op reads one whole buffer and
 * updates a 4 KiB piece of another. Gather shape: the same over 4
 * buffers, so that the 256 pieces a whole read sees were written by the
 * last thousand or so ops. */
enum { SOL_NBUF = 64, SOL_BYTES = 1 << 20, SOL_PIECE = 4096, GAT_NBUF = 4 };

/* Rowmix shape (issue 36: whole-buffer reads mixed with row writes): 16
 * matrices of 256 rows x 1 024 floats; every op writes one row of a
 * matrix, and reads a whole other matrix (one op in two) or one row of
 * it. */
enum { ROW_NBUF = 16, ROW_ROWS = 256, ROW_COLS = 1024 };
static const rp_param row_params[] = {{"src", RP_IN}, {"dst", RP_OUT}};
static const rp_kernel row_k = RP_KERNEL_WITH(.name = "row", .nparams = 2,
                                              .params = row_params, .cpu = nop);
typedef struct result {
  double t; /* CPU seconds: record + derive + reduce + end */
  uint32_t nodes, edges;
  double bop, bedge; /* stored bytes per op and per edge */
} result;

static int run(uint64_t n, int coherence, int shape, result *res) {
  static char mem[1];
  rp_graph *g;
  if (rp_graph_create(&g, coherence ? 0 : RP_GRAPH_NO_COHERENCE) != RP_OK)
    return -1;
  if (tune_w || tune_l || tune_s)
    rp__hazard_tune(g, tune_w, tune_l, tune_s);
  int whole = shape == SHAPE_SOLVER || shape == SHAPE_GATHER;
  int rows = shape == SHAPE_ROWMIX;
  int nbuf = shape == SHAPE_SOLVER   ? SOL_NBUF
             : shape == SHAPE_GATHER ? GAT_NBUF
             : rows                  ? ROW_NBUF
                                     : NBUF;
  uint64_t bytes = whole ? SOL_BYTES : BYTES;
  for (int b = 0; b < nbuf; b++) {
    char name[16];
    snprintf(name, sizeof name, "b%d", b);
    /* The graph never touches the memory: one byte serves as "host". */
    rp_buffer_desc d = {name, mem, bytes, 1, 0, {0, 0, 0}};
    if (rows)
      d = (rp_buffer_desc){name, mem, (uint64_t)ROW_ROWS * ROW_COLS * 4,
                           4,    2,   {ROW_ROWS, ROW_COLS, 0}};
    if (rp_buffer_add(g, &d, NULL) != RP_OK)
      return -1;
  }
  uint64_t s = 88172645463325252ull;
  double t0 = now_s();
  for (uint64_t i = 0; i < n; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    rp_status st;
    if (rows) {
      rp_buf a = (rp_buf)(s % ROW_NBUF);
      rp_buf b = (rp_buf)((a + 1 + (s >> 8) % (ROW_NBUF - 1)) % ROW_NBUF);
      uint64_t ra = (s >> 20) % ROW_ROWS, rb = (s >> 30) % ROW_ROWS;
      rp_region src = (s >> 40) % 2 ? rp_whole(a)
                                    : rp_box2_elems(a, ra, ra + 1, 0, ROW_COLS);
      rp_arg args[2] = {rp_arg_buf(src),
                        rp_arg_buf(rp_box2_elems(b, rb, rb + 1, 0, ROW_COLS))};
      st = rp_record_kernel(g, &row_k, 0, rp_dims3(1, 1, 1), args, NULL, NULL);
    } else if (whole) {
      rp_buf a = (rp_buf)(s % (uint64_t)nbuf);
      rp_buf b =
          (rp_buf)((a + 1 + (s >> 8) % (uint64_t)(nbuf - 1)) % (uint64_t)nbuf);
      uint64_t pc = (s >> 20) % (SOL_BYTES / SOL_PIECE);
      rp_arg args[2] = {
          rp_arg_buf(rp_whole(a)),
          rp_arg_buf(rp_range_bytes(b, pc * SOL_PIECE, SOL_PIECE))};
      st = rp_record_kernel(g, &k, 0, rp_dims3(1, 1, 1), args, NULL, NULL);
    } else {
      rp_buf a = (rp_buf)(s % NBUF), b = (rp_buf)((s >> 20) % NBUF);
      if (shape == SHAPE_SWEEP) {
        b = (rp_buf)(i % NBUF);
        a = (rp_buf)((b + 1 + (s % 2)) % NBUF);
      }
      uint64_t ca = (s >> 40) % CHUNKS, cb = (s >> 50) % CHUNKS;
      const uint64_t cs = BYTES / CHUNKS;
      if ((s >> 60) % 8 == 0 && !coherence) {
        st = rp_record_copy_to_host(g, rp_range_bytes(a, ca * cs, cs), 0, NULL,
                                    NULL);
      } else {
        rp_arg args[2] = {rp_arg_buf(rp_range_bytes(a, ca * cs, cs)),
                          rp_arg_buf(rp_range_bytes(b, cb * cs, cs))};
        st = rp_record_kernel(g, &k, 0, rp_dims3(1, 1, 1), args, NULL, NULL);
      }
    }
    if (st != RP_OK) {
      fprintf(stderr, "record: %s\n", rp_graph_error(g));
      return -1;
    }
  }
  if (rp_graph_end(g) != RP_OK)
    return -1;
  res->t = now_s() - t0;
  res->edges = rp_graph_num_edges(g);
  res->nodes = rp_graph_num_nodes(g);
  footprint(g, &res->bop, &res->bedge);
  rp_graph_destroy(g);
  return 0;
}

/* One line of the summary table: rates at N, 10 N and 100 N. */
typedef struct summary {
  int shape, coh, sizes;
  double rate[3];
} summary;

static int dcmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median CPU time of `runs` runs of n ops (the other figures are the same
 * in every run: the program is deterministic). */
static int measure(uint64_t n, int coh, int shape, int runs, result *r) {
  double goal = 3e6;
  double t[64];
  for (int i = 0; i < runs; i++) {
    if (run(n, coh, shape, r))
      return -1;
    t[i] = r->t;
  }
  qsort(t, (size_t)runs, sizeof *t, dcmp);
  r->t = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
  printf("  %9llu ops: %9u nodes, %9u edges (%.2f/op): median %.3f s of %d"
         " (min %.3f, max %.3f), %.2f M ops/s = %.2f x the goal of %.0f M "
         "ops/s; stored %.0f B/op + %.0f B/edge (budget 150 + 12)\n",
         (unsigned long long)n, r->nodes, r->edges, (double)r->edges / r->nodes,
         r->t, runs, t[0], t[runs - 1], r->nodes / r->t / 1e6,
         r->nodes / r->t / goal, goal / 1e6, r->bop, r->bedge);
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  uint64_t n = 100000;
  int sizes = 2, runs = 5, runs10 = 5, runs100 = 1, only_shape = -1,
      only_coh = -1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--ops") && i + 1 < argc)
      n = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--tune") && i + 1 < argc &&
             sscanf(argv[++i], "%u,%u,%u", &tune_w, &tune_l, &tune_s) == 3)
      ;
    else if (!strcmp(argv[i], "--no-10x"))
      sizes = 1;
    else if (!strcmp(argv[i], "--10m"))
      sizes = 3;
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--runs10") && i + 1 < argc)
      runs10 = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
      const char *v = argv[++i];
      for (int k2 = 0; k2 < NSHAPE; k2++)
        if (!strcmp(v, shape_name[k2]))
          only_shape = k2;
      if (only_shape < 0)
        return 2;
    } else if (!strcmp(argv[i], "--coherence") && i + 1 < argc)
      only_coh = !strcmp(argv[++i], "on");
    else {
      printf("usage: bench_record [--ops N] [--no-10x | --10m] [--runs R] "
             "[--runs10 R]\n"
             "       [--shape uniform|sweep|solver|gather|rowmix] [--coherence "
             "on|off]\n"
             "Records N ops (default 100 000; median of R = 5 runs), then "
             "10 N (R10 = 5 runs),\nand with --10m 100 N (one run), with "
             "hazard derivation and exact reduction,\nand prints process "
             "CPU time, rate, stored bytes and the ratios 10N/N.\n");
      return strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  if (runs < 1 || runs > 64 || runs10 < 1 || runs10 > 64)
    return 2;
  summary sum[2 * NSHAPE];
  int nsum = 0;
  for (int shape = 0; shape < NSHAPE; shape++) {
    if (only_shape >= 0 && shape != only_shape)
      continue;
    for (int coh = 0; coh < 2; coh++) {
      if (only_coh >= 0 && coh != only_coh)
        continue;
      printf("%s, %s:\n", shape_name[shape],
             coh ? "automatic coherence on (copies inserted)"
                 : "coherence off (explicit copies)");
      result r[3];
      uint64_t m = n;
      summary *sm = &sum[nsum++];
      sm->shape = shape;
      sm->coh = coh;
      sm->sizes = sizes;
      int rr[3] = {runs, runs10, runs100};
      for (int z = 0; z < sizes; z++, m *= 10) {
        if (measure(m, coh, shape, rr[z], &r[z]))
          return 1;
        sm->rate[z] = r[z].nodes / r[z].t / 1e6;
        if (z)
          printf("  ratio 10N/N: %.2f (linear: 10; goal <= 12)\n",
                 r[z].t / r[z - 1].t);
      }
    }
  }
  printf("\nsummary (M ops/s, median; goal 3 on one host core, 1 on the "
         "VM)\n%-8s %-9s",
         "shape", "coherence");
  for (int z = 0; z < sizes; z++) {
    char h[32];
    unsigned long long m = n;
    for (int x = 0; x < z; x++)
      m *= 10;
    snprintf(h, sizeof h, "%llu ops", m);
    printf(" %14s", h);
  }
  printf("\n");
  for (int i = 0; i < nsum; i++) {
    printf("%-8s %-9s", shape_name[sum[i].shape], sum[i].coh ? "on" : "off");
    for (int z = 0; z < sum[i].sizes; z++)
      printf(" %14.2f", sum[i].rate[z]);
    printf("\n");
  }
  return 0;
}
