/* libFuzzer target: the graph-file reader, then what `reprise analyze`
 * does with a graph it accepts (analysis, every report, the graph's and the
 * schedule's dot) and what `reprise check` does (rp_check_deps, both
 * reports), then a round trip: a graph written by the library must
 * read back and write the same text again. Any crash, sanitizer report or
 * broken invariant (abort) is a bug. See docs/fuzzing.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/json_keys.h"
#include "reprise.h"

/* Reads data again with another chunk size or with every element through
 * cJSON: the reader must say the same (status and message). */
static void same_again(const unsigned char *data, size_t size,
                       const rp_read_opts *ro, rp_status want,
                       const char *want_err, size_t chunk, int fast) {
  FILE *fp = fmemopen((void *)data, size, "r");
  if (!fp)
    return;
  rp_graph *g = NULL;
  char err[512];
  rp__json_chunk = chunk;
  rp__json_fast = fast;
  rp_status s = rp_graph_read_json_opts(&g, fp, ro, err, sizeof err);
  rp__json_chunk = 1u << 20;
  rp__json_fast = 1;
  fclose(fp);
  if (s != want || (s != RP_OK && strcmp(err, want_err))) {
    fprintf(stderr, "chunk %zu, fast %d: %d \"%s\" instead of %d \"%s\"\n",
            chunk, fast, (int)s, err, (int)want, want_err);
    abort();
  }
  rp_graph_destroy(g);
}

static FILE *sink(void) {
  static FILE *null;
  if (!null)
    null = fopen("/dev/null", "w");
  return null;
}

/* The JSON text of @p g (malloc'ed, *n bytes). */
static char *to_json(const rp_graph *g, size_t *n) {
  char *buf = NULL;
  FILE *fp = open_memstream(&buf, n);
  if (!fp)
    abort();
  if (rp_graph_write_json(g, fp) != RP_OK)
    abort(); /* writing an accepted graph cannot fail */
  fclose(fp);
  return buf;
}

/* What `reprise check` does with the graph: its `after` orders against
 * its accesses, both reports; the counts must agree with the items. */
static void check(const rp_graph *g, const rp_analysis_opts *o, FILE *out) {
  rp_check *c = NULL;
  rp_status s = rp_check_deps(g, o, &c);
  if (s != RP_OK) {
    if (c || (s != RP_EINVAL && s != RP_ENOMEM))
      abort();
    return;
  }
  rp_check_write_text(c, out);
  rp_check_write_json(c, out);
  rp_check_item it;
  uint32_t nr = rp_check_num_races(c), ns = rp_check_num_superfluous(c);
  if (ns > rp_check_num_orders(c))
    abort(); /* a superfluous edge is one of the orders */
  for (uint32_t i = 0; i < nr; i++)
    if (rp_check_race(c, i, &it) != RP_OK || it.from >= it.to ||
        it.to >= rp_graph_num_nodes(g))
      abort();
  for (uint32_t i = 0; i < ns; i++)
    if (rp_check_superfluous(c, i, &it) != RP_OK || it.from >= it.to)
      abort();
  if (rp_check_race(c, nr, &it) != RP_EINVAL)
    abort();
  double w, m;
  rp_check_times(c, &w, &m);
  if (!(m <= w + 1e-6 * (w > 1 ? w : 1)))
    abort(); /* dropping superfluous orders never slows */
  rp_check_destroy(c);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  if (size == 0)
    return 0;
  FILE *fp = fmemopen((void *)data, size, "r");
  if (!fp)
    return 0;
  rp_graph *g = NULL;
  char err[512];
  rp_read_opts ro = RP_READ_OPTS_INIT;
  ro.flags = size & 1 ? RP_READ_STRICT : 0; /* both paths */
  rp_status s = rp_graph_read_json_opts(&g, fp, &ro, err, sizeof err);
  fclose(fp);
  same_again(data, size, &ro, s, err, 1 + size % 7, 1);
  same_again(data, size, &ro, s, err, 1u << 20, 0);
  if (s != RP_OK) {
    if (g || !err[0])
      abort(); /* a failure returns no graph and says why */
    return 0;
  }
  FILE *out = sink();
  rp_graph_write_dot(g, out);
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.copy_engines = size % 3 == 0 ? 1 : 2;
  rp_analysis *a = NULL;
  if (rp_analyze(g, &o, &a) == RP_OK) {
    rp_analysis_write_text(a, out);
    rp_analysis_write_json(a, out);
    rp_analysis_write_dot(a, out);
    rp_analysis_write_trace(a, out);
    rp_analysis_write_svg(a, out);
    rp_analysis_destroy(a);
  }
  check(g, &o, out);
  /* round trip: write, read back, write again: the same text */
  size_t n1, n2;
  char *t1 = to_json(g, &n1);
  FILE *in = fmemopen(t1, n1, "r");
  rp_graph *g2 = NULL;
  if (!in || rp_graph_read_json(&g2, in, err, sizeof err) != RP_OK) {
    fprintf(stderr, "round trip: the library's own output is refused: %s\n",
            err);
    abort();
  }
  fclose(in);
  char *t2 = to_json(g2, &n2);
  if (n1 != n2 || memcmp(t1, t2, n1)) {
    fprintf(stderr, "round trip: the text changed\n");
    abort();
  }
  free(t1);
  free(t2);
  rp_graph_destroy(g2);
  rp_graph_destroy(g);
  return 0;
}
