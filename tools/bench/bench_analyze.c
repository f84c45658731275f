/* Benchmark: read a large graph file and analyse it (200k and 2M ops). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "reprise.h"
#include "bench_check.h"

#define NBUF 256  /* buffers, each with its own pipeline */
#define CHUNKS 16 /* chunks per buffer, visited in turn */
#define BUF_BYTES (1u << 20)

static void cpu_nop(const rp_kargs *a, const uint64_t lo[3],
                    const uint64_t hi[3]) {
  (void)a, (void)lo, (void)hi;
}
static const rp_param p_step[] = {{"x", RP_INOUT}};
static const rp_param p_mix[] = {{"x", RP_IN}, {"y", RP_INOUT}};
static const rp_kernel k_step =
    RP_KERNEL_WITH(.name = "step", .nparams = 1, .params = p_step,
                   .cpu = cpu_nop);
static const rp_kernel k_mix = RP_KERNEL_WITH(.name = "mix", .nparams = 2,
                                              .params = p_mix, .cpu = cpu_nop);

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Pipelines over NBUF buffers on two devices: per step and buffer, copy a
 * chunk in, run a kernel over it, mix it into the buffer two further on
 * (same device), copy the chunk back; chunks cycle, so steps CHUNKS apart
 * conflict. Costs are modelled (copies) and default (kernels). */
static rp_graph *build(uint32_t ops) {
  static char host[NBUF][1];
  rp_graph *g;
  RK(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  rp_buf b[NBUF];
  for (int i = 0; i < NBUF; i++) {
    char name[16];
    snprintf(name, sizeof name, "b%d", i);
    RK(rp_buffer_register(g, name, host[i], BUF_BYTES, &b[i]));
  }
  const uint64_t cb = BUF_BYTES / CHUNKS;
  for (uint32_t step = 0; rp_graph_num_nodes(g) + 4 <= ops; step++)
    for (int i = 0; i < NBUF && rp_graph_num_nodes(g) + 4 <= ops; i++) {
      int dev = i % 2;
      rp_region r = rp_range_bytes(b[i], (step % CHUNKS) * cb, cb);
      rp_region r2 =
          rp_range_bytes(b[(i + 2) % NBUF], (step % CHUNKS) * cb, cb);
      RK(rp_record_copy_to_device(g, r, dev, NULL, NULL));
      rp_arg a1 = rp_arg_buf(r);
      RK(rp_record_kernel(g, &k_step, dev, rp_dims3(cb / 4, 1, 1), &a1, NULL,
                          NULL));
      rp_arg a2[2] = {rp_arg_buf(r), rp_arg_buf(r2)};
      RK(rp_record_kernel(g, &k_mix, dev, rp_dims3(cb / 4, 1, 1), a2, NULL,
                          NULL));
      RK(rp_record_copy_to_host(g, r, dev, NULL, NULL));
    }
  RK(rp_graph_end(g));
  return g;
}

typedef struct result {
  uint32_t ops, edges;
  double record_s, write_s, read_s, analyze_s, bytes;
  rp_summary sum;
  char limited_by[32]; /* sum.limited_by lives only as long as the analysis */
} result;

static result run(uint32_t ops) {
  result r;
  memset(&r, 0, sizeof r);
  double t0 = now();
  rp_graph *g = build(ops);
  r.record_s = now() - t0;
  r.ops = rp_graph_num_nodes(g);
  r.edges = rp_graph_num_edges(g);
  char path[] = "/tmp/rp_bench_analyzeXXXXXX";
  FILE *fp = fdopen(mkstemp(path), "w+");
  if (!fp) {
    perror("temporary file");
    exit(1);
  }
  t0 = now();
  RK(rp_graph_write_json(g, fp));
  fflush(fp);
  r.write_s = now() - t0;
  r.bytes = (double)ftell(fp);
  rp_graph_destroy(g);
  fclose(fp);

  /* What `reprise analyze FILE` does: read the file, analyse. */
  t0 = now();
  fp = fopen(path, "rb");
  char err[256];
  RK(rp_graph_read_json(&g, fp, err, sizeof err));
  fclose(fp);
  r.read_s = now() - t0;
  t0 = now();
  rp_analysis *a;
  RK(rp_analyze(g, NULL, &a));
  r.analyze_s = now() - t0;
  rp_analysis_summary(a, &r.sum);
  snprintf(r.limited_by, sizeof r.limited_by, "%s", r.sum.limited_by);
  r.sum.limited_by = r.limited_by;
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
  remove(path);
  printf("%9u ops %9u edges  file %6.1f MB  record %6.3f s  write %6.3f s"
         "  read %6.3f s  analyze %6.3f s  read+analyze %6.3f s\n",
         r.ops, r.edges, r.bytes / 1e6, r.record_s, r.write_s, r.read_s,
         r.analyze_s, r.read_s + r.analyze_s);
  printf("          serial %.1f us, critical path %.1f us, makespan %.1f us,"
         " bound %.2fx (%s), predicted %.2fx\n",
         r.sum.serial_us, r.sum.critical_path_us, r.sum.makespan_us,
         r.sum.bound, r.sum.limited_by, r.sum.predicted_speedup);
  return r;
}

int main(int argc, char **argv) {
  uint32_t small = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 200000;
  uint32_t large = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 2000000;
  result a = run(small);
  result b = run(large);
  double ta = a.read_s + a.analyze_s, tb = b.read_s + b.analyze_s;
  printf("read+analyze: %.3f s for %u ops (goal < 2 s), %.3f s for %u ops:"
         " %.1fx the time for %.1fx the ops (goal <= ~12x for 10x);"
         " analyze alone %.1fx\n",
         ta, a.ops, tb, b.ops, tb / ta, (double)b.ops / a.ops,
         b.analyze_s / a.analyze_s);
  return 0;
}
