/* Tests of the speedup picture: rp_speedup_write_svg() and `reprise plot`
 * write well-formed XML with the curves and points asked for. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "reprise.h"
#include "util.h"

/* A tiny well-formedness check: one root element, every tag closed in
 * order, attributes quoted, no stray '<' or '&' in text. Returns NULL or
 * what is wrong. */
static const char *xml_ok(const char *s) {
  char stack[64][32];
  int depth = 0, roots = 0;
  while (*s) {
    if (*s != '<') {
      if (*s == '&') {
        static const char *const ent[] = {"&amp;", "&lt;", "&gt;", "&quot;",
                                          "&apos;"};
        int ok = 0;
        for (int i = 0; i < 5; i++)
          ok |= !strncmp(s, ent[i], strlen(ent[i]));
        if (!ok)
          return "a bare '&'";
      }
      if (!depth && !isspace((unsigned char)*s))
        return "text outside the root";
      s++;
      continue;
    }
    if (!strncmp(s, "<?", 2)) {
      const char *e = strstr(s, "?>");
      if (!e)
        return "unclosed <?";
      s = e + 2;
      continue;
    }
    if (!strncmp(s, "<!--", 4)) {
      const char *e = strstr(s, "-->");
      if (!e)
        return "unclosed comment";
      s = e + 3;
      continue;
    }
    int closing = s[1] == '/';
    s += closing ? 2 : 1;
    char name[32];
    int n = 0;
    while (isalnum((unsigned char)*s) || *s == '-' || *s == ':' || *s == '_')
      if (n < 31)
        name[n++] = *s++;
      else
        return "a long tag name";
    name[n] = 0;
    if (!n)
      return "a tag without a name";
    if (closing) {
      while (isspace((unsigned char)*s))
        s++;
      if (*s++ != '>')
        return "a bad closing tag";
      if (!depth || strcmp(stack[depth - 1], name))
        return "tags closed out of order";
      depth--;
      continue;
    }
    for (;;) { /* attributes */
      while (isspace((unsigned char)*s))
        s++;
      if (*s == '/' && s[1] == '>') {
        s += 2;
        if (!depth)
          roots++;
        break;
      }
      if (*s == '>') {
        s++;
        if (depth == 64)
          return "too deep";
        if (!depth)
          roots++;
        snprintf(stack[depth++], sizeof stack[0], "%s", name);
        break;
      }
      if (!isalpha((unsigned char)*s))
        return "a bad attribute";
      while (isalnum((unsigned char)*s) || *s == '-' || *s == ':' || *s == '_')
        s++;
      if (*s++ != '=' || *s != '"')
        return "an attribute without a quoted value";
      const char *e = strchr(s + 1, '"');
      if (!e || memchr(s + 1, '<', (size_t)(e - s - 1)))
        return "a bad attribute value";
      s = e + 1;
    }
  }
  if (depth)
    return "unclosed tags";
  return roots == 1 ? NULL : "not one root element";
}

static unsigned count(const char *s, const char *what) {
  unsigned n = 0;
  for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
    n++;
  return n;
}

Test(plot, svg_has_the_curves_and_points) {
  rp_speedup_point p[4] = {
      {4, 3.1, 3.9, 2.8, 2.5, 3.0},
      {1, 0.98, 1, 1.0, 0.95, 1.02},
      {2, 1.9, 2, 1.7, 1.6, 1.9},
      {8, 5.0, 7.5, 0, 0, 0}, /* not measured there */
  };
  char *svg = tu_speedup_svg(p, 4, "a <title> & more");
  const char *why = xml_ok(svg);
  cr_assert_null(why, "%s:\n%s", why, svg);
  cr_assert_eq(count(svg, "<circle class=\"predicted\""), 4);
  cr_assert_eq(count(svg, "<polyline class=\"predicted\""), 1);
  cr_assert_eq(count(svg, "<rect class=\"achieved\""), 3);
  cr_assert_eq(count(svg, "<g class=\"errorbar\""), 3);
  cr_assert_eq(count(svg, "<polyline class=\"achieved\""), 1);
  cr_assert_eq(count(svg, "<polygon class=\"bound\""), 1);
  cr_assert(strstr(svg, "a &lt;title&gt; &amp; more"), "%s", svg);
  /* Sorted by x: the predicted curve runs 1, 2, 4, 8 left to right. */
  cr_assert(strstr(svg, "<title>predicted 1: 0.980x</title>") <
            strstr(svg, "<title>predicted 8: 5.000x</title>"));
  free(svg);
  /* One point, no bound, nothing achieved: still a picture. */
  rp_speedup_point one = {2, 1.5, 0, 0, 0, 0};
  svg = tu_speedup_svg(&one, 1, "a <title> & more");
  cr_assert_null(xml_ok(svg), "%s", svg);
  cr_assert_eq(count(svg, "<circle class=\"predicted\""), 1);
  cr_assert_eq(count(svg, "class=\"achieved\""), 0);
  cr_assert_eq(count(svg, "class=\"bound\""), 0);
  free(svg);
  cr_assert_eq(rp_speedup_write_svg(p, 0, NULL, NULL, stdout), RP_EINVAL);
  one.x = 0;
  cr_assert_eq(rp_speedup_write_svg(&one, 1, NULL, NULL, stdout), RP_EINVAL);
}

/* The checker itself refuses what is not XML. */
Test(plot, checker_refuses_broken_xml) {
  cr_assert_null(xml_ok("<a x=\"1\"><b/>t &amp; u</a>"));
  cr_assert_not_null(xml_ok("<a><b></a></b>"));
  cr_assert_not_null(xml_ok("<a x=1/>"));
  cr_assert_not_null(xml_ok("<a>&</a>"));
  cr_assert_not_null(xml_ok("<a/><b/>"));
  cr_assert_not_null(xml_ok("<a>"));
}

/* `reprise plot` on a saved graph: a prediction per thread count, the
 * achieved points of a file. */
Test(plot, command_line) {
  const rp_backend *be;
  if (rp_backend_find("openmp", &be) != RP_OK)
    cr_skip_test("no openmp backend");
  char dir[] = "/tmp/rp_plot_XXXXXX", g[256], ach[256], out[256], cmd[2048];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(g, sizeof g, "%s/g.json", dir);
  snprintf(ach, sizeof ach, "%s/a.txt", dir);
  snprintf(out, sizeof out, "%s/p.svg", dir);
  static unsigned char mem[4][64];
  static const rp_param pa[] = {{"a", RP_INOUT}};
  static const rp_kernel k =
      RP_KERNEL_WITH(.name = "k", .nparams = 1, .params = pa);
  rp_graph *gr;
  cr_assert_eq(rp_graph_create(&gr, RP_GRAPH_NO_COHERENCE), RP_OK);
  for (int i = 0; i < 4; i++) {
    rp_buf b;
    char nm[8];
    snprintf(nm, sizeof nm, "B%d", i);
    TU_OK(gr, rp_buffer_register(gr, nm, mem[i], 64, &b));
    rp_arg arg = rp_arg_buf(rp_whole(b));
    rp_op_opts o = RP_OP_OPTS_WITH(.cost_us = 10);
    TU_OK(gr, rp_record_kernel(gr, &k, 0, rp_dims3(16, 1, 1), &arg, &o, NULL));
  }
  TU_OK(gr, rp_graph_end(gr));
  FILE *fp = fopen(g, "w");
  cr_assert_eq(rp_graph_write_json(gr, fp), RP_OK);
  fclose(fp);
  rp_graph_destroy(gr);
  fp = fopen(ach, "w");
  fputs("# threads median min max\n1 1.0 0.9 1.1\n2, 1.8, 1.7, 1.9\n", fp);
  fclose(fp);
  /* Without calibration: uncalibrated models, no overheads: 4 x 10 us
   * over 1, 2 and 4 threads. */
  snprintf(cmd, sizeof cmd,
           "RP_NO_AUTOCALIBRATE=1 XDG_CACHE_HOME=%s %s "
           "plot %s --threads 1,2,4 --achieved %s -o %s 2>%s/err.txt",
           dir, RP_TEST_TOOL, g, ach, out, dir);
  cr_assert_eq(system(cmd), 0, "%s", cmd);
  fp = fopen(out, "r");
  cr_assert_not_null(fp);
  char *svg = calloc(1, 1 << 16);
  size_t n = fread(svg, 1, (1 << 16) - 1, fp);
  svg[n] = 0;
  fclose(fp);
  cr_assert_null(xml_ok(svg), "%s", svg);
  cr_assert_eq(count(svg, "<circle class=\"predicted\""), 3);
  cr_assert_eq(count(svg, "<g class=\"errorbar\""), 2);
  cr_assert(strstr(svg, "<title>predicted 4: 4.000x</title>"), "%s", svg);
  cr_assert(strstr(svg, "<title>achieved 2: 1.800x (1.700x - 1.900x)"), "%s",
            svg);
  free(svg);
  snprintf(cmd, sizeof cmd, "%s plot %s --threads x >/dev/null 2>&1",
           RP_TEST_TOOL, g);
  cr_assert_eq(WEXITSTATUS(system(cmd)), 2);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_assert_eq(system(cmd), 0);
}
