/* rp_graph_read_json_opts: unknown keys through the warn callback, an
 * error with RP_READ_STRICT, options checked. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"

static const char text[] =
    "{\"format\": \"reprise-graph\", \"version\": 1, \"extra\": [1, 2],\n"
    " \"buffers\": [{\"id\": 0, \"name\": \"A\", \"bytes\": 8, "
    "\"colour\": \"red\"}],\n"
    " \"ops\": []}\n";

typedef struct seen {
  int n;
  char msg[4][128];
} seen;

static void warn(void *user, const char *msg) {
  seen *s = user;
  if (s->n < 4)
    snprintf(s->msg[s->n], sizeof s->msg[0], "%s", msg);
  s->n++;
}

static rp_status read_with(const rp_read_opts *o, rp_graph **g, char *err) {
  FILE *fp = fmemopen((void *)text, sizeof text - 1, "r");
  cr_assert_not_null(fp);
  rp_status s = rp_graph_read_json_opts(g, fp, o, err, 256);
  fclose(fp);
  return s;
}

Test(json_keys, warned_in_order_and_graph_read) {
  seen s = {0};
  rp_read_opts o = RP_READ_OPTS_INIT;
  o.warn = warn;
  o.user = &s;
  rp_graph *g;
  char err[256];
  cr_assert_eq(read_with(&o, &g, err), RP_OK, "%s", err);
  cr_assert_eq(s.n, 2);
  cr_assert_str_eq(s.msg[0], "\"extra\": unknown key");
  cr_assert_str_eq(s.msg[1], "buffers[0].\"colour\": unknown key");
  cr_assert_eq(rp_graph_num_buffers(g), 1);
  rp_graph_destroy(g);
}

Test(json_keys, strict_refuses_the_first) {
  seen s = {0};
  rp_read_opts o = RP_READ_OPTS_INIT;
  o.flags = RP_READ_STRICT;
  o.warn = warn;
  o.user = &s;
  rp_graph *g = (rp_graph *)1;
  char err[256];
  cr_assert_eq(read_with(&o, &g, err), RP_EPARSE);
  cr_assert_null(g);
  cr_assert_str_eq(err, "\"extra\": unknown key (strict reading)");
  cr_assert_str_eq(rp_last_error(), err);
  cr_assert_eq(s.n, 0);
}

Test(json_keys, without_options_ignored_and_bad_options_refused) {
  rp_graph *g;
  char err[256];
  cr_assert_eq(read_with(NULL, &g, err), RP_OK, "%s", err);
  rp_graph_destroy(g);
  rp_read_opts o = RP_READ_OPTS_INIT;
  o.size = 8;
  cr_assert_eq(read_with(&o, &g, err), RP_EINVAL);
  cr_assert(strstr(err, "RP_READ_OPTS_INIT"), "%s", err);
  o = (rp_read_opts)RP_READ_OPTS_INIT;
  o.flags = 0x10;
  cr_assert_eq(read_with(&o, &g, err), RP_EINVAL);
}

/* Every key the writer writes is known: a graph with a measured cost
 * written by rp_graph_write_json() reads back strictly. */
Test(json_keys, written_graph_with_measured_costs_reads_strictly) {
  static char mem[8];
  rp_graph *g = NULL, *r = NULL;
  rp_buf b;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(rp_buffer_register(g, "A", mem, sizeof mem, &b), RP_OK);
  cr_assert_eq(rp_record_copy_to_device(g, rp_whole(b), 0, NULL, NULL), RP_OK);
  cr_assert_eq(rp_graph_end(g), RP_OK);
  rp_measured m = {3, 2, 5, 5, "openmp", "box"};
  cr_assert_eq(rp_graph_set_measured(g, 0, &m), RP_OK);
  char *text = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&text, &len);
  cr_assert_eq(rp_graph_write_json(g, fp), RP_OK);
  fclose(fp);
  cr_assert(strstr(text, "\"measured\""));
  rp_read_opts o = RP_READ_OPTS_INIT;
  o.flags = RP_READ_STRICT;
  char err[256] = "";
  fp = fmemopen(text, len, "r");
  cr_assert_eq(rp_graph_read_json_opts(&r, fp, &o, err, sizeof err), RP_OK,
               "%s", err);
  fclose(fp);
  rp_measured back;
  cr_assert_eq(rp_graph_get_measured(r, 0, &back), RP_OK);
  cr_assert_eq(back.median_us, 3);
  rp_graph_destroy(r);
  rp_graph_destroy(g);
  free(text);
}
