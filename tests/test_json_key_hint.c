/* The JSON reader's fast path compares a key with the one found at the
 * same place of the element before while scanning it (issue 36): a key
 * that the hinted one is a prefix of, or that is a prefix of it, is
 * another key. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"

#define HEAD                                                                   \
  "{\"format\": \"reprise-graph\", \"version\": 1, \"buffers\": "              \
  "[{\"id\": 0, \"name\": \"A\", \"bytes\": 64}], \"ops\": ["
#define OP0                                                                    \
  "{\"id\": 0, \"type\": \"kernel\", \"device\": 0, \"access\": "              \
  "[{\"buffer\": 0, \"space\": \"device:0\", \"mode\": \"out\", "              \
  "\"offset\": 0, \"bytes\": 8}]},"

/* The warnings of one read: how many, and the first. */
typedef struct warned {
  char first[160];
  int count;
} warned;

static void on_warn(void *user, const char *msg) {
  warned *w = user;
  if (!w->count++)
    snprintf(w->first, sizeof w->first, "%s", msg);
}

static rp_status read_text(const char *text, rp_graph **g, warned *w,
                           char *err) {
  FILE *fp = fmemopen((void *)text, strlen(text), "r");
  cr_assert_not_null(fp);
  rp_read_opts o = RP_READ_OPTS_INIT;
  o.warn = on_warn;
  o.user = w;
  rp_status s = rp_graph_read_json_opts(g, fp, &o, err, 256);
  fclose(fp);
  return s;
}

/* "bytesX" where the element before had "bytes", "spac" where it had
 * "space": unknown keys (warned), so the access misses its length or its
 * space and the file is refused. */
Test(json_key_hint, longer_and_shorter_keys_are_others) {
  static const char *const bad[2] = {
      HEAD OP0 "{\"id\": 1, \"type\": \"kernel\", \"device\": 0, \"access\": "
               "[{\"buffer\": 0, \"space\": \"device:0\", \"mode\": \"in\", "
               "\"offset\": 0, \"bytesX\": 8}]}]}",
      HEAD OP0 "{\"id\": 1, \"type\": \"kernel\", \"device\": 0, \"access\": "
               "[{\"buffer\": 0, \"spac\": \"device:0\", \"mode\": \"in\", "
               "\"offset\": 0, \"bytes\": 8}]}]}"};
  static const char *const key[2] = {"bytesX", "spac"};
  for (int i = 0; i < 2; i++) {
    rp_graph *g = NULL;
    warned w = {0};
    char err[256] = "";
    rp_status s = read_text(bad[i], &g, &w, err);
    cr_assert_neq(s, RP_OK, "%s: read as a known key", key[i]);
    cr_assert_null(g);
    cr_assert_geq(w.count, 1, "%s: not warned", key[i]);
    cr_assert_not_null(strstr(w.first, key[i]), "%s: %s", key[i], w.first);
  }
}

/* The same keys in the same places as the element before, and then in
 * another order: read as those keys, the same edges. */
Test(json_key_hint, repeated_and_reordered_keys) {
  const char *text =
      HEAD OP0 "{\"id\": 1, \"type\": \"kernel\", \"device\": 0, \"access\": "
               "[{\"buffer\": 0, \"space\": \"device:0\", \"mode\": \"in\", "
               "\"offset\": 4, \"bytes\": 8}]},"
               "{\"id\": 2, \"device\": 0, \"type\": \"kernel\", \"access\": "
               "[{\"mode\": \"out\", \"bytes\": 4, \"buffer\": 0, "
               "\"offset\": 12, \"space\": \"device:0\"}]}]}";
  rp_graph *g = NULL;
  warned w = {0};
  char err[256] = "";
  cr_assert_eq(read_text(text, &g, &w, err), RP_OK, "%s", err);
  cr_assert_eq(w.count, 0, "%s", w.first);
  cr_assert_eq(rp_graph_num_nodes(g), 3);
  /* 0 writes [0, 8); 1 reads [4, 12); 2 writes [12, 16): 0 -> 1 only. */
  cr_assert_eq(rp_graph_num_edges(g), 1);
  rp_access_info a;
  cr_assert_eq(rp_node_access(g, 2, 0, &a), RP_OK);
  cr_assert_eq(a.mode, RP_OUT);
  cr_assert_eq(a.space, 0);
  rp_graph_destroy(g);
}
