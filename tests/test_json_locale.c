/* JSON numbers do not depend on the locale: under a locale whose decimal
 * separator is a comma (de_DE.UTF-8, generated into a temporary folder
 * with localedef when the system has not installed it), the graph file,
 * the analysis' JSON and trace and the model file hold the same text as
 * under "C", and cJSON reads the numbers back. */
#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "reprise.h"
#include "util.h"
#include "core/out.h"

/* A comma locale for LC_NUMERIC, or skip: the installed de_DE.UTF-8, else
 * one generated with localedef (LOCPATH). */
static void comma_locale(void) {
  if (setlocale(LC_NUMERIC, "de_DE.UTF-8"))
    return;
  static char dir[] = "/tmp/rp_locale_XXXXXX";
  if (!mkdtemp(dir))
    cr_skip_test("no temporary folder for a locale");
  char cmd[256];
  snprintf(cmd, sizeof cmd,
           "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", dir);
  if (system(cmd) != 0)
    cr_skip_test("no comma locale: de_DE.UTF-8 neither installed nor "
                 "generated (localedef, locales' sources)");
  setenv("LOCPATH", dir, 1);
  if (!setlocale(LC_NUMERIC, "de_DE.UTF-8"))
    cr_skip_test("the generated de_DE.UTF-8 does not load");
}

static uint8_t a[4096];

/* Every writer's text for a graph with non-integer costs. */
static char *texts(void) {
  rp_graph *g;
  rp_buf A;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(rp_buffer_register(g, "A", a, sizeof a, &A), RP_OK);
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "k", .cost_us = 12.375);
  rp_arg args[2] = {rp_arg_buf(rp_bytes(A, 0, 64)), rp_arg_i64(0)};
  cr_assert_eq(
      rp_record_kernel(g, &tu_bump, 0, rp_dims3(64, 1, 1), args, &o, NULL),
      RP_OK);
  cr_assert_eq(rp_record_copy_to_host(g, rp_bytes(A, 0, 64), 0, NULL, NULL),
               RP_OK);
  cr_assert_eq(rp_graph_end(g), RP_OK);
  cr_assert_eq(rp_node_set_cost(g, 1, 0.1), RP_ESTATE); /* ended */
  /* Measured costs and team times (issue 33) are numbers of the file
   * too. */
  double us[8], lo[8];
  cr_assert(rp_graph_num_nodes(g) <= 8);
  for (unsigned i = 0; i < 8; i++) {
    us[i] = 0.3 + i;
    lo[i] = 0.25 + i;
  }
  cr_assert_eq(rp_graph_set_measured_all(g, us, lo, NULL, 3, "t", "m"), RP_OK);
  cr_assert_eq(
      rp_graph_set_team_measured_all(g, us, lo, NULL, 3, 2, 0.97, "t", "m"),
      RP_OK);
  rp_analysis_opts ao;
  rp_analysis_opts_init(&ao);
  ao.h2d_gbps = 12.5;
  ao.kernel_us = 0.3;
  rp_analysis *an;
  cr_assert_eq(rp_analyze(g, &ao, &an), RP_OK);
  rp_model m;
  rp_model_init(&m);
  m.host_task_us = 1.0 / 3;
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  cr_assert(fp);
  cr_assert_eq(rp_graph_write_json(g, fp), RP_OK);
  cr_assert_eq(rp_analysis_write_json(an, fp), RP_OK);
  cr_assert_eq(rp_analysis_write_trace(an, fp), RP_OK);
  cr_assert_eq(rp_model_write_json(&m, fp), RP_OK);
  fclose(fp);
  rp_analysis_destroy(an);
  rp_graph_destroy(g);
  return buf;
}

Test(json_locale, numbers_are_the_same_under_a_comma_locale) {
  setlocale(LC_NUMERIC, "C");
  char *plain = texts();
  cr_assert(strstr(plain, "12.375"), "%s", plain);
  comma_locale();
  char t[40];
  snprintf(t, sizeof t, "%.1f", 0.5);
  cr_assert_str_eq(t, "0,5", "the locale has no decimal comma");
  char *comma = texts();
  setlocale(LC_NUMERIC, "C");
  cr_assert_str_eq(comma, plain);
  free(plain);
  free(comma);
}

/* The one number writer: text that reads back, point not comma. */
Test(json_locale, num_text) {
  char t[40];
  rp__num_text(t, 0.1);
  cr_assert_str_eq(t, "0.1");
  rp__num_text(t, 1.0 / 3);
  cr_assert_eq(strtod(t, NULL), 1.0 / 3);
  cr_assert_str_eq(t, "0.33333333333333331"); /* %.17g */
  comma_locale();
  rp__num_text(t, 2.5);
  setlocale(LC_NUMERIC, "C");
  cr_assert_str_eq(t, "2.5");
}
