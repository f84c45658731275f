/* Benchmark: the cost of loading one small graph file (issue 21). The
 * byte-corruption tests and the fuzz target load tens of thousands of
 * files of a few KB; each load's fixed cost (the reader's window, the
 * hazard tracker) decides how long they take, above all under ASan.
 *
 * The graph: a 2-D Jacobi of 4 row blocks and 1 step over two buffers
 * with automatic coherence (8 operations, about 3 KB of JSON). It is
 * loaded from a regular file (the reader sees its size) and from memory
 * (fmemopen: no size known), each the median of 7 rounds of N loads.
 *
 * Run: bench_load_small [N] (default 2000). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "reprise.h"
#include "bench_check.h"

enum { ROUNDS = 7 };

static const rp_param params[] = {{"src", RP_IN}, {"dst", RP_OUT}};
RP_KERNEL(body, {})
static const rp_kernel stencil = RP_KERNEL_DESC(body, params);

static rp_graph *small_graph(void) {
  static double a[64 * 64], b[64 * 64];
  rp_graph *g;
  rp_buf A, B;
  RK(rp_graph_create(&g, 0));
  RK(rp_buffer_register_2d(g, "A", a, 64, 64, sizeof(double), &A));
  RK(rp_buffer_register_2d(g, "B", b, 64, 64, sizeof(double), &B));
  for (int s = 0; s < 1; s++)
    for (uint64_t r0 = 1; r0 < 63; r0 += 16) {
      uint64_t r1 = r0 + 16 < 63 ? r0 + 16 : 63;
      rp_buf src = s % 2 ? B : A, dst = s % 2 ? A : B;
      rp_arg args[2] = {rp_arg_buf(rp_box2_elems(src, r0 - 1, r1 + 1, 0, 64)),
                        rp_arg_buf(rp_box2_elems(dst, r0, r1, 1, 63))};
      RK(rp_record_kernel(g, &stencil, 0, rp_dims3(62, r1 - r0, 1), args, NULL,
                          NULL));
    }
  RK(rp_record_sync_host(g, rp_whole(A), NULL));
  RK(rp_graph_end(g));
  return g;
}

static double per_load_us(const char *path, const char *text, size_t len,
                          int n) {
  double t[ROUNDS];
  for (int r = 0; r < ROUNDS; r++) {
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
      FILE *fp = path ? fopen(path, "r") : fmemopen((void *)text, len, "r");
      rp_graph *h;
      char err[256];
      if (!fp || rp_graph_read_json(&h, fp, err, sizeof err) != RP_OK) {
        fprintf(stderr, "bench_load_small: load failed: %s\n", err);
        exit(2);
      }
      fclose(fp);
      rp_graph_destroy(h);
    }
    t[r] = (now_us() - t0) / n;
  }
  return median(t, ROUNDS);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  if (n <= 0) {
    fprintf(stderr, "usage: bench_load_small [N]\n");
    return 2;
  }
  rp_graph *g = small_graph();
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  RK(rp_graph_write_json(g, mem));
  fclose(mem);
  char path[] = "/tmp/rp_bench_load_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
    perror("bench_load_small");
    return 2;
  }
  close(fd);
  printf("graph: %u ops, %u edges, %zu bytes of JSON; %d loads per round,"
         " median of %d rounds\n",
         rp_graph_num_nodes(g), rp_graph_num_edges(g), len, n, ROUNDS);
  printf("from a file:   %8.2f us per load\n", per_load_us(path, NULL, 0, n));
  printf("from memory:   %8.2f us per load\n", per_load_us(NULL, text, len, n));
  unlink(path);
  free(text);
  rp_graph_destroy(g);
  return 0;
}
