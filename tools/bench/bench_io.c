/* Benchmark: graph files of the solver shape (issue 12, item 5): write,
 * then what `reprise analyze FILE` does (read + rp_analyze), at 20 000,
 * 200 000 and 2 000 000 operations, with peak resident memory.
 *
 * The shape: 64 buffers of 1 MiB, each operation reads one whole buffer
 * and updates a 4 KiB piece of another (a blocked solver reading a full
 * vector and writing one block).
 *
 * Each file is read twice per run: as saved (the edges are trusted, their
 * check matching) and with RP_READ_DERIVE (the edges derived again from
 * the accesses: the path of every file before the check existed, and of a
 * file edited by hand), the same-run baseline.
 *
 * Run: bench_io [OPS...] (default 20000 200000 2000000); figures are
 * medians of 5 runs below 1 M operations, of 1 run from 1 M on. With
 * --write FILE OPS it only writes the file (for profiling the reader). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "reprise.h"
#include "bench_check.h"
#include "solver_shape.h"

enum { REPS = 5 };

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Process CPU time: the machine is shared. */
static double cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double peak_mb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0;
}

static rp_graph *solver(uint32_t ops) {
  rp_graph *g;
  RK(solver_graph(ops, &g));
  return g;
}

/* Read + analyse path; returns the CPU seconds, wall seconds in *w. */
static double read_analyze(const char *path, unsigned flags, double *w,
                           uint32_t *edges, double *makespan) {
  double c0 = cpu(), w0 = wall();
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    perror(path);
    exit(1);
  }
  rp_read_opts o = RP_READ_OPTS_INIT;
  o.flags = flags;
  rp_graph *g;
  char err[256];
  rp_status s = rp_graph_read_json_opts(&g, fp, &o, err, sizeof err);
  fclose(fp);
  if (s) {
    fprintf(stderr, "%s: %s\n", path, err);
    exit(1);
  }
  rp_analysis *a;
  RK(rp_analyze(g, NULL, &a));
  rp_summary sum;
  rp_analysis_summary(a, &sum);
  *makespan = sum.makespan_us;
  *edges = rp_graph_num_edges(g);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
  *w = wall() - w0;
  return cpu() - c0;
}

static void bench(uint32_t ops) {
  int reps = ops >= 1000000 ? 1 : REPS;
  double wr[REPS], tr[REPS], dr[REPS], trw[REPS], drw[REPS];
  char path[] = "/tmp/rp_bench_ioXXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    perror("temporary file");
    exit(1);
  }
  rp_graph *g = solver(ops);
  uint32_t edges = rp_graph_num_edges(g), e1 = 0, e2 = 0;
  double bytes = 0, m1 = 0, m2 = 0;
  for (int k = 0; k < reps; k++) {
    FILE *fp = fopen(path, "wb");
    double c0 = cpu();
    RK(rp_graph_write_json(g, fp));
    wr[k] = cpu() - c0;
    bytes = (double)ftell(fp);
    fclose(fp);
  }
  rp_graph_destroy(g);
  double rss_before = peak_mb();
  for (int k = 0; k < reps; k++)
    tr[k] = read_analyze(path, 0, &trw[k], &e1, &m1);
  double rss_trusted = peak_mb();
  for (int k = 0; k < reps; k++)
    dr[k] = read_analyze(path, RP_READ_DERIVE, &drw[k], &e2, &m2);
  double rss_derive = peak_mb();
  close(fd);
  remove(path);
  if (e1 != edges || e2 != edges || m1 != m2) {
    fprintf(stderr, "edges differ: recorded %u, trusted %u, derived %u\n",
            edges, e1, e2);
    exit(1);
  }
  printf("%8u ops, %8u edges, file %7.1f MB: write %.3f s; read+analyze "
         "%.3f s (wall %.3f), derived again %.3f s (wall %.3f); peak RSS "
         "%.0f MB before reading, %.0f after trusted, %.0f after derived%s\n",
         ops, edges, bytes / 1e6, median(wr, reps), median(tr, reps),
         median(trw, reps), median(dr, reps), median(drw, reps), rss_before,
         rss_trusted, rss_derive, reps < REPS ? " (1 run)" : " (median of 5)");
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "--write")) {
    rp_graph *g = solver((uint32_t)strtoul(argv[3], NULL, 10));
    FILE *fp = fopen(argv[2], "wb");
    if (!fp) {
      perror(argv[2]);
      return 1;
    }
    RK(rp_graph_write_json(g, fp));
    fclose(fp);
    rp_graph_destroy(g);
    return 0;
  }
  printf("CPU seconds of this process (wall in parentheses); peak RSS is "
         "the process's high-water mark so far (getrusage)\n");
  if (argc > 1)
    for (int i = 1; i < argc; i++)
      bench((uint32_t)strtoul(argv[i], NULL, 10));
  else {
    bench(20000);
    bench(200000);
    bench(2000000);
  }
  return 0;
}
