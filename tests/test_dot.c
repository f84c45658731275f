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
