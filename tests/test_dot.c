/* Dot output: labels, colours, and validity under Graphviz when present. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util.h"
#ifdef RP_HAVE_EXAMPLES
#include "examples.h"
#endif

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
  TU_OK(g,
        rp_record_kernel(g, &tu_bump, 0, rp_dims3(16, 1, 1), args, NULL, NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(a), NULL));
  TU_OK(g, rp_graph_end(g));
  char *s = dot_of(g);
  cr_assert(strstr(s, "digraph reprise {"));
  cr_assert(strstr(s, "n0 [label=\"0: moveto A \\\"quoted\\\" for tu_bump_k"
                      "\\ncopy_h2d dev 0\""),
            "%s", s);
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
    rp_op_opts o1 = RP_OP_OPTS_WITH(.name = "fill", .cost_us = 1);
    TU_OK(g, rp_record_host(g, nop_host, NULL, &w, 1, &o1, NULL));
    rp_access c[2] = {{rp_bytes(b, i, 1), RP_IN}, {rp_whole(a), RP_INOUT}};
    rp_op_opts o2 = RP_OP_OPTS_WITH(.name = "step", .cost_us = 10);
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
                      "599 edges."),
            "%s", strstr(s, "graph [label"));
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
                      "edges not drawn\""),
            "%s", s);
  cr_assert(strstr(s, "n13 [label=\"#13..#25: 7 ops\\nstep .. step\\n+7 "
                      "edges not drawn\""),
            "%s", s);
  cr_assert(strstr(s, "n587 [label=\"#587..#599: 7 ops\\nstep .. step"), "%s",
            s);
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
                      "us</title>"),
            "%.3000s", s);
  cr_assert(strstr(s, "3000 operations drawn as 1 bars"), "%.3000s", s);
  free(s);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* Width and height of a PNG: its IHDR, bytes 16 to 23. */
static int png_size(const char *path, unsigned *w, unsigned *h) {
  unsigned char b[24];
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return -1;
  size_t n = fread(b, 1, sizeof b, fp);
  fclose(fp);
  if (n != sizeof b)
    return -1;
  *w = (unsigned)b[16] << 24 | (unsigned)b[17] << 16 | (unsigned)b[18] << 8 |
       b[19];
  *h = (unsigned)b[20] << 24 | (unsigned)b[21] << 16 | (unsigned)b[22] << 8 |
       b[23];
  return 0;
}

/* Renders s with Graphviz (when present) to a PNG; its size. */
static int render(const char *s, unsigned *w, unsigned *h) {
  if (access("/usr/bin/dot", X_OK) != 0)
    return -1;
  char path[] = "/tmp/rp_dot_pngXXXXXX", cmd[128];
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  snprintf(cmd, sizeof cmd, "/usr/bin/dot -Tpng -o %s", path);
  FILE *p = popen(cmd, "w");
  fputs(s, p);
  cr_assert_eq(pclose(p), 0, "dot rejected the output");
  int rc = png_size(path, w, h);
  unlink(path);
  return rc;
}

#ifdef RP_HAVE_EXAMPLES
static char *jacobi_dot(unsigned steps, unsigned every, int analysed,
                        uint32_t *nops) {
  ex_jacobi2d p = {64, steps, every, 8, 0, 0};
  static double a[64 * 64], b[64 * 64], sm[64];
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_jacobi2d_record(g, &p, a, b, sm));
  TU_OK(g, rp_graph_end(g));
  *nops = rp_graph_num_nodes(g);
  char *s = NULL;
  size_t n = 0;
  FILE *fp = open_memstream(&s, &n);
  if (analysed) {
    rp_analysis *an;
    TU_OK(NULL, rp_analyze(g, NULL, &an));
    TU_OK(NULL, rp_analysis_write_dot(an, fp));
    rp_analysis_destroy(an);
  } else {
    TU_OK(g, rp_graph_write_dot(g, fp));
  }
  fclose(fp);
  rp_graph_destroy(g);
  return s;
}

/* The demo's graph (Jacobi 2D at its default shape: 8 steps of 8 row
 * blocks, the host reading every 4 steps): 141 operations and 328 edges,
 * once drawn as 141 nodes and 328 edges labelled "RAW A". Now a cluster
 * per step (steps alike drawn once), the row blocks of one kernel in a
 * step as one node, one edge per pair of nodes, a legend; the picture
 * fits a screen. */
Test(dot, demo_graph_grouped_by_step) {
  uint32_t nops;
  for (int analysed = 0; analysed < 2; analysed++) {
    char *s = jacobi_dot(8, 4, analysed, &nops);
    cr_assert_eq(nops, 141);
    unsigned edges = count(s, " -> "), nodes = count(s, " [label=") - edges;
    cr_assert_leq(nodes, 25, "%u nodes:\n%s", nodes, s);
    cr_assert_leq(edges, 30, "%u edges:\n%s", edges, s);
    cr_assert(strstr(s, "label=\"step 1 (#0 .. #23)\""), "%s", s);
    cr_assert(strstr(s, "label=\"steps 2 to 3, alike (#24 .. #55)\""), "%s", s);
    cr_assert(strstr(s, "label=\"steps 5 to 7, alike (#74 .. #121)\""), "%s",
              s);
    cr_assert(strstr(s, "jac_copy \xc3\x97"
                        "8\\n#1 .. #15"),
              "%s", s);
    cr_assert(strstr(s, "jac_sten \xc3\x97"
                        "8 per step\\n#32 .. #55"),
              "%s", s);
    cr_assert(strstr(s, "label=\"next step: RAW A, WAR B\""), "%s", s);
    cr_assert(strstr(s, "tooltip=\"8 edges\\nRAW A x8\""), "%s", s);
    cr_assert(strstr(s, "<B>legend</B>"), "%s", s);
    cr_assert(strstr(s, "compute:0: kernels"), "%s", s);
    if (analysed)
      cr_assert(strstr(s, "the critical path"), "%s", s);
    unsigned w, h;
    if (render(s, &w, &h) == 0)
      cr_assert(w <= 1600 && h <= 2000, "%ux%u pixels", w, h);
    free(s);
  }
}

/* 2 000 operations (120 steps): the middle steps as one node. */
Test(dot, two_thousand_ops_fit_a_screen) {
  uint32_t nops;
  char *s = jacobi_dot(120, 10, 0, &nops);
  cr_assert_gt(nops, 1900);
  cr_assert_leq(count(s, " [label=") - count(s, " -> "), 40, "%s", s);
  cr_assert(strstr(s, "steps 11 to 110\\n1620 operations"), "%s", s);
  unsigned w, h;
  if (render(s, &w, &h) == 0)
    cr_assert(w <= 1600 && h <= 2000, "%ux%u pixels", w, h);
  free(s);
}
#endif

/* A graph of up to 64 operations is drawn as before, one node per
 * operation with its edges labelled, a legend added. */
Test(dot, small_graph_one_node_per_op) {
  rp_graph *g = chain_graph(10);
  char *s = dot_of(g);
  cr_assert_eq(count(s, " [label=\"") - count(s, " -> "), 20, "%s", s);
  cr_assert(strstr(s, "n19 [label=\"19: step\\nhost\""), "%s", s);
  cr_assert(strstr(s, "[label=\"RAW A\"]"), "%s", s);
  cr_assert(strstr(s, "host: host tasks"), "%s", s);
  cr_assert_null(strstr(s, "cluster"), "%s", s);
  free(s);
  rp_graph_destroy(g);
}
