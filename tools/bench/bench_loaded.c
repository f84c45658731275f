/* Benchmark: `reprise analyze` of a graph file written by another program
 * (issue 26): the file has no "edges" and no "edges_check", so reading it
 * derives every hazard edge. The bench writes it itself with plain
 * fprintf, at 20 000, 200 000 and 2 000 000 operations, then times
 * rp_graph_read_json + rp_analyze (process CPU time and wall time, median
 * of 5 runs below 1 M operations, 1 run from 1 M on) in a child process
 * per run, whose peak resident memory it reports too.
 *
 * The shape: 64 vectors of 1 MiB and 16 matrices of 512 x 512 floats.
 * Among the operations, one in three reads one whole vector and updates a
 * 4 KiB piece of another (a blocked solver), one in three reads a 66 x 66
 * box of a matrix (a 64 x 64 tile and its halo) and writes the 64 x 64
 * tile of another matrix (a stencil), and one in three writes 4 KiB pieces
 * of two vectors (small writes). Costs are given.
 *
 * Run: bench_loaded [OPS...] (default 20000 200000 2000000); prints the
 * figures and the ratios against the goals (200 k < 1 s, 2 M < 10 s and
 * < 2 GB). --write FILE OPS only writes the file. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "reprise.h"
#include "bench_check.h"

enum { NVEC = 64, VEC = 1 << 20, NMAT = 16, DIM = 512, TILE = 64, REPS = 5 };

static uint64_t xs(uint64_t *s) {
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return *s;
}

/* Writes the graph file of `ops` operations the way another tool would:
 * no edges, no edges_check. */
static int write_file(const char *path, uint32_t ops) {
  FILE *fp = fopen(path, "w");
  if (!fp)
    return -1;
  fprintf(fp, "{\"format\": \"reprise-graph\", \"version\": 1,\n"
              " \"buffers\": [\n");
  for (int b = 0; b < NVEC; b++)
    fprintf(fp, "  {\"id\": %d, \"name\": \"v%d\", \"bytes\": %d},\n", b, b,
            VEC);
  for (int m = 0; m < NMAT; m++)
    fprintf(fp,
            "  {\"id\": %d, \"name\": \"m%d\", \"bytes\": %d, \"elem\": 4, "
            "\"dims\": [%d, %d]}%s\n",
            NVEC + m, m, DIM * DIM * 4, DIM, DIM, m + 1 < NMAT ? "," : "");
  fprintf(fp, " ],\n \"ops\": [\n");
  uint64_t s = 88172645463325252ull;
  for (uint32_t i = 0; i < ops; i++) {
    uint64_t x = xs(&s);
    unsigned kind = (unsigned)(x % 3);
    fprintf(fp,
            "  {\"id\": %u, \"type\": \"kernel\", \"device\": 0, "
            "\"cost_us\": %u, \"access\": [",
            i, 5 + (unsigned)(x >> 8) % 50);
    if (kind == 0) {
      unsigned a = (unsigned)(x >> 16) % NVEC;
      unsigned b = (a + 1 + (unsigned)(x >> 24) % (NVEC - 1)) % NVEC;
      unsigned pc = (unsigned)(x >> 32) % (VEC / 4096);
      fprintf(fp,
              "{\"buffer\": %u, \"space\": \"device:0\", \"mode\": "
              "\"in\"}, {\"buffer\": %u, \"space\": \"device:0\", "
              "\"mode\": \"inout\", \"offset\": %u, \"bytes\": 4096}",
              a, b, pc * 4096);
    } else if (kind == 1) {
      unsigned a = (unsigned)(x >> 16) % NMAT;
      unsigned b = (a + 1 + (unsigned)(x >> 24) % (NMAT - 1)) % NMAT;
      unsigned ti = (unsigned)(x >> 32) % (DIM / TILE);
      unsigned tj = (unsigned)(x >> 40) % (DIM / TILE);
      unsigned r0 = ti * TILE, c0 = tj * TILE;
      unsigned hr0 = r0 ? r0 - 1 : 0, hc0 = c0 ? c0 - 1 : 0;
      unsigned hr1 = r0 + TILE < DIM ? r0 + TILE + 1 : DIM;
      unsigned hc1 = c0 + TILE < DIM ? c0 + TILE + 1 : DIM;
      fprintf(fp,
              "{\"buffer\": %u, \"space\": \"device:0\", \"mode\": "
              "\"in\", \"box\": {\"lo\": [%u, %u], \"hi\": [%u, %u]}}, "
              "{\"buffer\": %u, \"space\": \"device:0\", \"mode\": "
              "\"out\", \"box\": {\"lo\": [%u, %u], \"hi\": [%u, %u]}}",
              NVEC + a, hr0, hc0, hr1, hc1, NVEC + b, r0, c0, r0 + TILE,
              c0 + TILE);
    } else {
      unsigned a = (unsigned)(x >> 16) % NVEC;
      unsigned b = (a + 1 + (unsigned)(x >> 24) % (NVEC - 1)) % NVEC;
      unsigned pa = (unsigned)(x >> 32) % (VEC / 4096);
      unsigned pb = (unsigned)(x >> 44) % (VEC / 4096);
      fprintf(fp,
              "{\"buffer\": %u, \"space\": \"device:0\", \"mode\": "
              "\"out\", \"offset\": %u, \"bytes\": 4096}, {\"buffer\": "
              "%u, \"space\": \"device:0\", \"mode\": \"out\", "
              "\"offset\": %u, \"bytes\": 4096}",
              a, pa * 4096, b, pb * 4096);
    }
    fprintf(fp, "]}%s\n", i + 1 < ops ? "," : "");
  }
  fprintf(fp, " ]\n}\n");
  return fclose(fp) ? -1 : 0;
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* What one child measured. */
typedef struct child {
  double cpu, wall, makespan;
  uint32_t nodes, edges;
} child;

/* Reads and analyses path in a child process: its figures in *c, its
 * peak resident memory (MB) returned (< 0: it failed). */
static double run_child(const char *path, child *c) {
  int fd[2];
  if (pipe(fd))
    return -1;
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    close(fd[0]);
    double w0 = now_us(), c0 = cpu_s();
    FILE *fp = fopen(path, "rb");
    rp_graph *g;
    char err[256];
    if (!fp || rp_graph_read_json(&g, fp, err, sizeof err) != RP_OK) {
      fprintf(stderr, "%s: %s\n", path, fp ? err : "cannot open");
      _exit(1);
    }
    fclose(fp);
    rp_analysis *a;
    RK(rp_analyze(g, NULL, &a));
    rp_summary sum;
    rp_analysis_summary(a, &sum);
    child r = {cpu_s() - c0, (now_us() - w0) / 1e6, sum.makespan_us,
               rp_graph_num_nodes(g), rp_graph_num_edges(g)};
    rp_analysis_destroy(a);
    rp_graph_destroy(g);
    if (write(fd[1], &r, sizeof r) != (ssize_t)sizeof r)
      _exit(1);
    _exit(0);
  }
  close(fd[1]);
  ssize_t got = read(fd[0], c, sizeof *c);
  close(fd[0]);
  int st;
  struct rusage ru;
  if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) ||
      got != (ssize_t)sizeof *c)
    return -1;
  return (double)ru.ru_maxrss / 1024.0;
}

static int bench(uint32_t ops) {
  char path[] = "/tmp/rp_bench_loadedXXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || write_file(path, ops)) {
    perror("temporary file");
    return -1;
  }
  close(fd);
  FILE *fp = fopen(path, "rb");
  fseek(fp, 0, SEEK_END);
  double mb = (double)ftell(fp) / 1e6;
  fclose(fp);
  int reps = ops >= 1000000 ? 1 : REPS;
  double cpu[REPS], wall[REPS], rss = 0;
  child c = {0};
  for (int k = 0; k < reps; k++) {
    double r = run_child(path, &c);
    if (r < 0) {
      remove(path);
      return -1;
    }
    cpu[k] = c.cpu;
    wall[k] = c.wall;
    if (r > rss)
      rss = r;
  }
  remove(path);
  double mc = median(cpu, reps), mw = median(wall, reps);
  double goal = ops <= 200000 ? 1.0 : 10.0;
  printf("%8u ops, %8u edges (%.2f/op), file %7.1f MB: read+analyze %.3f s "
         "CPU (wall %.3f), %.2f M ops/s, peak RSS %.0f MB%s; time/goal "
         "%.2f (goal %.0f s%s)\n",
         ops, c.edges, (double)c.edges / c.nodes, mb, mc, mw,
         c.nodes / mc / 1e6, rss, reps < REPS ? " (1 run)" : " (median of 5)",
         mc / goal, goal, ops > 200000 ? ", 2 GB" : "");
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "--write"))
    return write_file(argv[2], (uint32_t)strtoul(argv[3], NULL, 10)) ? 1 : 0;
  if (argc > 1 && (argv[1][0] < '0' || argv[1][0] > '9')) {
    printf("usage: bench_loaded [OPS...] | --write FILE OPS\n");
    return strcmp(argv[1], "--help") ? 2 : 0;
  }
  printf("rp_graph_read_json + rp_analyze of a file with no edges (derived "
         "on reading), in a child process per run: process CPU time "
         "(wall in parentheses), peak RSS of the child\n");
  static const uint32_t dflt[] = {20000, 200000, 2000000};
  int n = argc > 1 ? argc - 1 : 3;
  for (int i = 0; i < n; i++)
    if (bench(argc > 1 ? (uint32_t)strtoul(argv[i + 1], NULL, 10) : dflt[i]))
      return 1;
  return 0;
}
