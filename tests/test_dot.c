/* Dot output: labels, colours, and validity under Graphviz when present. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util.h"

TestSuite(dot, .timeout = 60);

static char *dot_of(rp_graph *g) {
  char *s = NULL;
  size_t n = 0;
  FILE *fp = open_memstream(&s, &n);
  TU_OK(g, rp_graph_write_dot(g, fp));
  fclose(fp);
  return s;
}

Test(dot, nodes_edges_and_lanes) {
  uint8_t A[16];
  rp_graph *g;
  rp_buf a;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "A \"quoted\"", A, 16, &a));
  rp_arg args[2] = {rp_arg_buf(rp_whole(a)), rp_arg_i64(0)};
  TU_OK(g, rp_record_kernel(g, &tu_bump, 0, rp_dims3(16, 1, 1), args, NULL,
                            NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(a), NULL));
  TU_OK(g, rp_graph_end(g));
  char *s = dot_of(g);
  cr_assert(strstr(s, "digraph reprise {"));
  cr_assert(strstr(s, "n0 [label=\"0: moveto A \\\"quoted\\\" for tu_bump_k"
                      "\\ncopy_h2d dev 0\""), "%s", s);
  cr_assert(strstr(s, "n1 [label=\"1: tu_bump_k\\nkernel dev 0\""), "%s", s);
  cr_assert(strstr(s, "n0 -> n1 [label=\"RAW A \\\"quoted\\\"\"]"), "%s", s);
  cr_assert(strstr(s, "n1 -> n2 [label=\"RAW A \\\"quoted\\\"\"]"), "%s", s);
  cr_assert(strstr(s, "fillcolor=\"#9ecae1\""), "kernel colour: %s", s);
  if (access("/usr/bin/dot", X_OK) == 0) {
    char path[] = "/tmp/rp_dot_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
    close(fd);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "/usr/bin/dot -Tsvg %s -o /dev/null", path);
    cr_assert_eq(system(cmd), 0, "dot rejected the output");
    unlink(path);
  } else {
    fprintf(stderr, "test_dot: Graphviz dot not installed: validity not "
                    "checked\n");
  }
  free(s);
  rp_graph_destroy(g);
}

/* A chain of 300 costly ops over A, each also reading a byte of B that a
 * cheap op wrote just before: 600 ops, the chain is the critical path. */
static void nop_host(void *user, void *const *ptrs) { (void)user, (void)ptrs; }

static rp_graph *chain_graph(unsigned len) {
  static uint8_t A[1], B[2000];
  rp_graph *g;
  rp_buf a, b;
  TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  TU_OK(g, rp_buffer_register(g, "A", A, 1, &a));
  TU_OK(g, rp_buffer_register(g, "B", B, sizeof B, &b));
  for (unsigned i = 0; i < len; i++) {
    rp_access w = {rp_bytes(b, i, 1), RP_OUT};
    rp_op_opts o1 = {"fill", 1, NULL, 0};
    TU_OK(g, rp_record_host(g, nop_host, NULL, &w, 1, &o1, NULL));
    rp_access c[2] = {{rp_bytes(b, i, 1), RP_IN}, {rp_whole(a), RP_INOUT}};
    rp_op_opts o2 = {"step", 10, NULL, 0};
    TU_OK(g, rp_record_host(g, nop_host, NULL, c, 2, &o2, NULL));
  }
  TU_OK(g, rp_graph_end(g));
  return g;
}

static char *dot_limited(rp_graph *g, uint32_t max) {
  char *s = NULL;
  size_t n = 0;
  FILE *fp = open_memstream(&s, &n);
  TU_OK(g, rp_graph_write_dot_limited(g, fp, max));
  fclose(fp);
  return s;
}

static unsigned count(const char *s, const char *pat) {
  unsigned k = 0;
  for (const char *p = s; (p = strstr(p, pat)); p++)
    k++;
  return k;
}

Test(dot, big_graph_keeps_critical_path_and_neighbours) {
  rp_graph *g = chain_graph(300);
  char *full = dot_of(g), *same = dot_limited(g, 600);
  cr_assert_str_eq(full, same, "at the limit: the full drawing");
  char *s = dot_limited(g, 400);
  cr_assert_eq(count(s, " [label=\"#"), 400, "%.2000s", s);
  char node[64];
  for (unsigned i = 0; i < 300; i++) { /* every step (critical) drawn */
    snprintf(node, sizeof node, "  n%u [label=\"#%u step", 2 * i + 1,
             2 * i + 1);
    cr_assert(strstr(s, node), "%s missing", node);
  }
  /* The fills next to the first 100 steps, nearest first. */
  for (unsigned i = 0; i < 100; i++) {
    snprintf(node, sizeof node, "  n%u [label=\"#%u fill", 2 * i, 2 * i);
    cr_assert(strstr(s, node), "%s missing", node);
  }
  /* The path starts with the first fill: 301 ops, 99 more fills. */
  cr_assert(strstr(s, "400 of 600 operations drawn: the critical path (301 "
                      "operations) and the operations next to it; 399 of "
                      "599 edges."), "%s", strstr(s, "graph [label"));
  cr_assert(strstr(s, "--full"));
  cr_assert(strstr(s, "+1 edges not drawn"), "the fill left out of step 201");
  free(full);
  free(same);
  free(s);
  rp_graph_destroy(g);
}

Test(dot, critical_path_longer_than_the_limit_is_grouped) {
  rp_graph *g = chain_graph(300);
  char *s = dot_limited(g, 100);
  /* 301 critical ops (the first fill, then the steps) in runs of 7:
   * 43 nodes, at most half the limit. */
  cr_assert_eq(count(s, " [label=\"#"), 43, "%s", s);
  cr_assert(strstr(s, "n0 [label=\"#0..#11: 7 ops\\nfill .. step\\n+5 "
                      "edges not drawn\""), "%s", s);
  cr_assert(strstr(s, "n13 [label=\"#13..#25: 7 ops\\nstep .. step\\n+7 "
                      "edges not drawn\""), "%s", s);
  cr_assert(strstr(s, "n587 [label=\"#587..#599: 7 ops\\nstep .. step"),
            "%s", s);
  cr_assert(strstr(s, "n0 -> n13 [label=\"raw A\", penwidth=3]"), "%s", s);
  cr_assert(strstr(s, "n573 -> n587 [label=\"raw A\", penwidth=3]"), "%s", s);
  cr_assert(strstr(s, "43 of 600 operations drawn: the critical path (301 "
                      "operations, runs of consecutive operations drawn as "
                      "one node)"),
            "%s", s);
  if (access("/usr/bin/dot", X_OK) == 0) {
    FILE *p = popen("/usr/bin/dot -Tsvg -o /dev/null", "w");
    fputs(s, p);
    cr_assert_eq(pclose(p), 0, "dot rejected the output");
  }
  free(s);
  rp_graph_destroy(g);
}

/* The SVG of a big schedule merges bars closer than a pixel: the chain of
 * 3 000 ops runs back to back on one lane, so one bar holds them all. */
Test(dot, svg_of_a_big_schedule_merges_bars) {
  rp_graph *g = chain_graph(1500);
  rp_analysis *a;
  TU_OK(NULL, rp_analyze(g, NULL, &a));
  char *s = NULL;
  size_t n = 0;
  FILE *fp = open_memstream(&s, &n);
  TU_OK(NULL, rp_analysis_write_svg(a, fp));
  fclose(fp);
  cr_assert_eq(count(s, "<title>"), 1, "%.3000s", s);
  cr_assert(strstr(s, "<title>3000 ops from #0 (fill): 0.000 .. 16500.000 "
                      "us</title>"), "%.3000s", s);
  cr_assert(strstr(s, "3000 operations drawn as 1 bars"), "%.3000s", s);
  free(s);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}
