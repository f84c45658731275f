/* Names derived for ops that a graph file leaves unnamed (issue 36: the
 * reader gives each kernel op its kernel's name without formatting it). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"

static rp_graph *load(const char *text) {
  FILE *fp = fmemopen((void *)text, strlen(text), "r");
  cr_assert_not_null(fp);
  rp_graph *g = NULL;
  char err[512];
  rp_status s = rp_graph_read_json(&g, fp, err, sizeof err);
  fclose(fp);
  cr_assert_eq(s, RP_OK, "load failed: %s: %s", rp_status_name(s), err);
  return g;
}

/* A kernel op is named after its kernel ("kernel" when the file names
 * none); a 300-byte kernel name gives its first 255 bytes; a given name
 * is kept; host ops keep their format. */
Test(derive_name, kernel_ops) {
  char kn[301];
  for (int i = 0; i < 300; i++)
    kn[i] = (char)('a' + i % 26);
  kn[300] = '\0';
  char text[2048];
  snprintf(
      text, sizeof text,
      "{\"format\": \"reprise-graph\", \"version\": 1, \"buffers\": "
      "[{\"id\": 0, \"name\": \"A\", \"bytes\": 64}], \"ops\": ["
      "{\"id\": 0, \"type\": \"kernel\", \"kernel\": \"stencil\", "
      "\"device\": 0, \"access\": [{\"buffer\": 0, \"space\": \"device:0\", "
      "\"mode\": \"out\"}]},"
      "{\"id\": 1, \"type\": \"kernel\", \"kernel\": \"%s\", "
      "\"device\": 0, \"access\": [{\"buffer\": 0, \"space\": \"device:0\", "
      "\"mode\": \"inout\"}]},"
      "{\"id\": 2, \"type\": \"kernel\", \"kernel\": \"stencil\", "
      "\"name\": \"given\", \"device\": 0, \"access\": [{\"buffer\": 0, "
      "\"space\": \"device:0\", \"mode\": \"inout\"}]},"
      "{\"id\": 3, \"type\": \"kernel\", \"device\": 0, \"access\": "
      "[{\"buffer\": 0, \"space\": \"device:0\", \"mode\": \"in\"}]},"
      "{\"id\": 4, \"type\": \"host\", \"access\": [{\"buffer\": 0, "
      "\"space\": \"host\", \"mode\": \"in\"}]}"
      "]}",
      kn);
  rp_graph *g = load(text);
  cr_assert_eq(rp_graph_num_nodes(g), 5);
  rp_node_info x;
  cr_assert_eq(rp_node_info_get(g, 0, &x), RP_OK);
  cr_assert_str_eq(x.name, "stencil");
  cr_assert_eq(rp_node_info_get(g, 1, &x), RP_OK);
  cr_assert_eq(strlen(x.name), 255);
  cr_assert_eq(strncmp(x.name, kn, 255), 0);
  cr_assert_eq(rp_node_info_get(g, 2, &x), RP_OK);
  cr_assert_str_eq(x.name, "given");
  cr_assert_eq(rp_node_info_get(g, 3, &x), RP_OK);
  cr_assert_str_eq(x.name, "kernel"); /* no kernel named */
  cr_assert_eq(rp_node_info_get(g, 4, &x), RP_OK);
  cr_assert_str_eq(x.name, "host");
  rp_graph_destroy(g);
}
