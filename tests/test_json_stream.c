/* Tests of the streaming graph reader: chunk boundaries everywhere (the
 * same graph, the same error messages, whatever the chunk size), and the
 * saved edges (trusted only when their check matches: an edited file has
 * its edges derived again). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "record/json_keys.h"
#include "reprise.h"
#include "util.h"

static const rp_param p_in_io[] = {{"x", RP_IN}, {"y", RP_INOUT}};
static const rp_kernel k_upd =
    RP_KERNEL_WITH(.name = "upd", .nparams = 2, .params = p_in_io);

static char *save(const rp_graph *g, size_t *len) {
  char *s = NULL;
  size_t n = 0;
  FILE *fp = open_memstream(&s, &n);
  cr_assert_not_null(fp);
  cr_assert_eq(rp_graph_write_json(g, fp), RP_OK);
  fclose(fp);
  if (len)
    *len = n;
  return s;
}

typedef struct warns {
  unsigned n;
  char last[256];
} warns;

static void on_warn(void *user, const char *msg) {
  warns *w = user;
  w->n++;
  snprintf(w->last, sizeof w->last, "%s", msg);
}

/* Loads @p len bytes of @p text with @p flags, counting warnings. */
static rp_status load(const char *text, size_t len, unsigned flags,
                      rp_graph **g, char *err, size_t errlen, warns *w) {
  FILE *fp = fmemopen((void *)text, len, "r");
  cr_assert_not_null(fp);
  rp_read_opts o = RP_READ_OPTS_INIT;
  o.flags = flags;
  o.warn = on_warn;
  o.user = w;
  rp_status s = rp_graph_read_json_opts(g, fp, &o, err, errlen);
  fclose(fp);
  return s;
}

static rp_graph *load_ok(const char *text, unsigned flags, warns *w) {
  rp_graph *g = NULL;
  char err[512];
  warns dummy = {0, ""};
  rp_status s =
      load(text, strlen(text), flags, &g, err, sizeof err, w ? w : &dummy);
  cr_assert_eq(s, RP_OK, "%s", err);
  return g;
}

/* Both graphs have the same edges, in order. */
static void same_edges(const rp_graph *a, const rp_graph *b) {
  cr_assert_eq(rp_graph_num_nodes(a), rp_graph_num_nodes(b));
  cr_assert_eq(rp_graph_num_edges(a), rp_graph_num_edges(b));
  for (uint32_t i = 0; i < rp_graph_num_edges(a); i++) {
    rp_edge x, y;
    rp_graph_edge(a, i, &x);
    rp_graph_edge(b, i, &y);
    cr_assert(x.from == y.from && x.to == y.to && x.kind == y.kind &&
                  x.buf == y.buf,
              "edge %u: %u->%u %d %u vs %u->%u %d %u", i, x.from, x.to, x.kind,
              x.buf, y.from, y.to, y.kind, y.buf);
  }
  for (rp_node n = 0; n < rp_graph_num_nodes(a); n++) {
    uint32_t ca, cb;
    const rp_node *pa = rp_graph_preds(a, n, &ca),
                  *pb = rp_graph_preds(b, n, &cb);
    cr_assert_eq(ca, cb, "node %u", n);
    for (uint32_t k = 0; k < ca; k++)
      cr_assert_eq(pa[k], pb[k], "node %u pred %u", n, k);
  }
}

/* A random graph (coherence on: inserted copies, two devices). */
static rp_graph *random_graph(uint64_t seed, unsigned nops, tu_random *r) {
  cr_assert_eq(tu_random_graph(r, seed, 5, 256, nops, 3,
                               seed % 2 ? 0 : RP_GRAPH_NO_COHERENCE, 1),
               0);
  TU_OK(r->g, rp_graph_end(r->g));
  return r->g;
}

/* ---- chunks ---------------------------------------------------------- */

static const size_t chunks[] = {1, 2, 3, 7, 64, 4096};
#define NCHUNKS (sizeof chunks / sizeof *chunks)

/* Every chunk size reads a file to the same graph, as saved. */
Test(json_stream, chunk_sizes_same_graph) {
  for (uint64_t seed = 1; seed <= 4; seed++) {
    tu_random r;
    rp_graph *g = random_graph(seed, 150, &r);
    size_t n;
    char *s = save(g, &n);
    for (unsigned c = 0; c < NCHUNKS; c++) {
      rp__json_chunk = chunks[c];
      rp_graph *h = load_ok(s, 0, NULL);
      same_edges(g, h);
      char *again = save(h, NULL);
      cr_assert_str_eq(again, s, "chunk %zu", chunks[c]);
      free(again);
      rp_graph_destroy(h);
    }
    rp__json_chunk = 1u << 20;
    free(s);
    tu_random_free(&r);
  }
}

/* The message of loading @p len bytes of @p s with chunk @p chunk. */
static rp_status load_msg(const char *s, size_t len, size_t chunk, char *err,
                          size_t errlen) {
  rp__json_chunk = chunk;
  rp_graph *h = NULL;
  warns w = {0, ""};
  rp_status st = load(s, len, 0, &h, err, errlen, &w);
  rp__json_chunk = 1u << 20;
  if (st == RP_OK)
    rp_graph_destroy(h);
  else
    cr_assert_null(h);
  return st;
}

/* Every truncation of a file, and bad bytes put everywhere, give the same
 * status and message (line and column included) for every chunk size:
 * boundaries inside strings, numbers, keys and between elements. */
Test(json_stream, same_errors_every_chunk_size) {
  tu_random r;
  rp_graph *g = random_graph(3, 30, &r);
  size_t n;
  char *s = save(g, &n);
  /* Long enough that the window slides (chunk 64) many times. */
  cr_assert_gt(n, 8000);
  char want[512], got[512];
  /* Under ASan (TU_SAN_STRIDE) fewer prefixes and bytes than plain. */
  for (size_t k = 0; k < n; k += (k < 400 ? 1 : 97) * TU_SAN_STRIDE) {
    rp_status a = load_msg(s, k, 1u << 20, want, sizeof want);
    cr_assert_eq(a, RP_EPARSE, "prefix %zu", k);
    for (unsigned c = 0; c < NCHUNKS; c++) {
      rp_status b = load_msg(s, k, chunks[c], got, sizeof got);
      cr_assert_eq(a, b, "prefix %zu chunk %zu", k, chunks[c]);
      cr_assert_str_eq(want, got, "prefix %zu chunk %zu", k, chunks[c]);
    }
  }
  static const char subst[] = "\"{]:9-\\x\n";
  for (size_t k = 0; k < n; k += 89 * TU_SAN_STRIDE) {
    for (const char *c = subst; *c; c++) {
      char keep = s[k];
      s[k] = *c;
      rp_status a = load_msg(s, n, 1u << 20, want, sizeof want);
      for (unsigned i = 0; i < NCHUNKS; i += 2) {
        rp_status b = load_msg(s, n, chunks[i], got, sizeof got);
        cr_assert_eq(a, b, "byte %zu '%c' chunk %zu", k, *c, chunks[i]);
        if (a != RP_OK)
          cr_assert_str_eq(want, got, "byte %zu '%c' chunk %zu", k, *c,
                           chunks[i]);
      }
      s[k] = keep;
    }
  }
  free(s);
  tu_random_free(&r);
}

/* An error far into a file names its line and column after the window
 * has slid many times; a NUL byte there is reported where it is. */
Test(json_stream, line_numbers_after_sliding) {
  tu_random r;
  rp_graph *g = random_graph(5, 150, &r);
  size_t n;
  char *s = save(g, &n);
  /* The 40th line from the end: a known line and column to break. */
  size_t line = 1, at = 0;
  unsigned lines = 0;
  for (size_t i = 0; i < n; i++)
    lines += s[i] == '\n';
  for (size_t i = 0; i < n && line < lines - 40; i++)
    if (s[i] == '\n') {
      line++;
      at = i + 1;
    }
  while (s[at] == ' ')
    at++;
  size_t col = 1;
  for (size_t i = at; i > 0 && s[i - 1] != '\n'; i--)
    col++;
  char expect[128], got[512];
  s[at] = '@';
  snprintf(expect, sizeof expect, "line %zu, column %zu", line, col);
  for (unsigned c = 0; c < NCHUNKS; c++) {
    cr_assert_eq(load_msg(s, n, chunks[c], got, sizeof got), RP_EPARSE);
    cr_assert(strstr(got, expect), "chunk %zu: \"%s\" lacks \"%s\"", chunks[c],
              got, expect);
  }
  s[at] = '\0';
  snprintf(expect, sizeof expect,
           "line %zu, column %zu: NUL byte in the "
           "file",
           line, col);
  for (unsigned c = 0; c < NCHUNKS; c++) {
    cr_assert_eq(load_msg(s, n, chunks[c], got, sizeof got), RP_EPARSE);
    cr_assert_str_eq(got, expect, "chunk %zu", chunks[c]);
  }
  free(s);
  tu_random_free(&r);
}

/* Operations before the buffers (any key order is JSON) still load. */
Test(json_stream, ops_before_buffers) {
  static const char text[] =
      "{\"ops\": [{\"id\": 0, \"type\": \"host\", \"access\": [{\"buffer\": "
      "0, \"space\": \"host\", \"mode\": \"out\"}]},\n {\"id\": 1, \"type\": "
      "\"host\", \"access\": [{\"buffer\": 0, \"space\": \"host\", \"mode\": "
      "\"in\"}]}], \"buffers\": [{\"id\": 0, \"name\": \"A\", \"bytes\": "
      "64}], \"version\": 1, \"format\": \"reprise-graph\"}";
  for (unsigned c = 0; c < NCHUNKS; c++) {
    rp__json_chunk = chunks[c];
    rp_graph *g = load_ok(text, 0, NULL);
    rp__json_chunk = 1u << 20;
    cr_assert_eq(rp_graph_num_nodes(g), 2);
    cr_assert(tu_has_edge(g, 0, 1, RP_EDGE_RAW, 0));
    rp_graph_destroy(g);
  }
  /* Its errors still name the line: the second op's bad mode. */
  char bad[sizeof text];
  memcpy(bad, text, sizeof text);
  char *m = strstr(bad, "\"in\"");
  memcpy(m, "\"ni\"", 4);
  char err[512];
  cr_assert_eq(load_msg(bad, strlen(bad), 3, err, sizeof err), RP_EPARSE);
  cr_assert(strstr(err, "ops[1].access[0].mode: bad mode \"ni\""), "%s", err);
}

/* ---- saved edges ------------------------------------------------------ */

/* Saved edges load as they are when the check matches: the same edges as
 * deriving them again, no warning. */
Test(json_stream, trusted_equals_derived) {
  for (uint64_t seed = 1; seed <= 10; seed++) {
    tu_random r;
    rp_graph *g = random_graph(seed, 150, &r);
    char *s = save(g, NULL);
    cr_assert(strstr(s, "\"edges_check\": \""));
    warns w = {0, ""};
    rp_graph *t = load_ok(s, 0, &w);
    rp_graph *d = load_ok(s, RP_READ_DERIVE, NULL);
    cr_assert_eq(w.n, 0, "%s", w.last);
    same_edges(g, t);
    same_edges(g, d);
    rp_graph_destroy(t);
    rp_graph_destroy(d);
    free(s);
    tu_random_free(&r);
  }
}

/* A solver-shaped graph: whole reads, 4 KiB updates. */
static rp_graph *solver(unsigned ops) {
  rp_graph *g;
  TU_OK(g, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  for (int b = 0; b < 16; b++) {
    char name[16];
    snprintf(name, sizeof name, "v%d", b);
    rp_buffer_desc d = {name, NULL, 1 << 16, 1, 0, {0, 0, 0}};
    TU_OK(g, rp_buffer_add(g, &d, NULL));
  }
  uint64_t s = 88172645463325252ull;
  for (unsigned i = 0; i < ops; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    rp_buf a = (rp_buf)(s % 16), b = (rp_buf)((s >> 8) % 16);
    if (a == b)
      b = (b + 1) % 16;
    rp_arg args[2] = {rp_arg_buf(rp_whole(a)),
                      rp_arg_buf(rp_bytes(b, ((s >> 20) % 16) * 4096, 4096))};
    TU_OK(g,
          rp_record_kernel(g, &k_upd, 0, rp_dims3(1, 1, 1), args, NULL, NULL));
  }
  TU_OK(g, rp_graph_end(g));
  return g;
}

/* Replaces the first occurrence of @p from after @p after by @p to (same
 * length). */
static void edit(char *s, const char *after, const char *from, const char *to) {
  char *p = strstr(strstr(s, "\"ops\": ["), after);
  cr_assert_not_null(p, "no \"%s\"", after);
  p = strstr(p, from);
  cr_assert_not_null(p, "no \"%s\" after \"%s\"", from, after);
  cr_assert_eq(strlen(from), strlen(to));
  memcpy(p, to, strlen(to));
}

/* A file whose accesses were edited keeps its check and its old edges:
 * they no longer match, so the edges are derived again from the edited
 * accesses (with a warning), never the saved ones used. */
Test(json_stream, edited_accesses_derived_again) {
  rp_graph *g = solver(400);
  char *s = save(g, NULL);
  /* Same-length edit: op 200's whole read moves to another buffer. */
  char *p = strstr(strstr(s, "{\"id\": 200,"), "\"buffer\": ");
  cr_assert_not_null(p);
  p += strlen("\"buffer\": ");
  int x = (int)strtol(p, NULL, 10);
  int y = x < 10 ? (x + 1) % 10 : 10 + (x - 9) % 6;
  char digits[8];
  snprintf(digits, sizeof digits, "%d", y);
  memcpy(p, digits, strlen(digits));
  warns w = {0, ""};
  rp_graph *t = load_ok(s, 0, &w);
  rp_graph *d = load_ok(s, RP_READ_DERIVE, NULL);
  cr_assert_eq(w.n, 1);
  cr_assert(strstr(w.last, "edges_check"), "%s", w.last);
  same_edges(t, d);
  /* And the derived edges do differ from the saved ones here. */
  int differ = rp_graph_num_edges(t) != rp_graph_num_edges(g);
  for (uint32_t i = 0; !differ && i < rp_graph_num_edges(g); i++) {
    rp_edge x, y;
    rp_graph_edge(g, i, &x);
    rp_graph_edge(t, i, &y);
    differ =
        x.from != y.from || x.to != y.to || x.kind != y.kind || x.buf != y.buf;
  }
  cr_assert(differ, "the edit changed no edge: pick another");
  rp_graph_destroy(t);
  rp_graph_destroy(d);
  free(s);
  rp_graph_destroy(g);
}

/* Edited edges (one dropped, one changed) are not used either. */
Test(json_stream, edited_edges_derived_again) {
  rp_graph *g = solver(300);
  char *s = save(g, NULL);
  /* Drop the first edge: "edges": [\n    {...},\n -> keep the rest. */
  char *e = strstr(s, "\"edges\": [\n");
  cr_assert_not_null(e);
  char *first = e + strlen("\"edges\": [\n");
  char *next = strstr(first, "},\n") + 3;
  memmove(first, next, strlen(next) + 1);
  warns w = {0, ""};
  rp_graph *t = load_ok(s, 0, &w);
  cr_assert_eq(w.n, 1, "%s", w.last);
  same_edges(g, t);
  rp_graph_destroy(t);
  free(s);
  /* A kind changed in place. */
  s = save(g, NULL);
  edit(s, "\"edges\": [", "\"kind\": \"raw\"", "\"kind\": \"war\"");
  w.n = 0;
  t = load_ok(s, 0, &w);
  cr_assert_eq(w.n, 1, "%s", w.last);
  same_edges(g, t);
  rp_graph_destroy(t);
  /* A check changed: derived again. */
  free(s);
  s = save(g, NULL);
  char *c = strstr(s, "\"edges_check\": \"") + strlen("\"edges_check\": \"");
  *c = *c == '0' ? '1' : '0';
  w.n = 0;
  t = load_ok(s, 0, &w);
  cr_assert_eq(w.n, 1, "%s", w.last);
  same_edges(g, t);
  rp_graph_destroy(t);
  free(s);
  rp_graph_destroy(g);
}

/* Names and costs are not what edges come from: editing them keeps the
 * saved edges (no warning); names left out are derived as the recorder
 * derives them. */
Test(json_stream, names_and_costs_keep_trust) {
  rp_graph *g = solver(50);
  char *s = save(g, NULL);
  edit(s, "{\"id\": 7,", "\"name\": \"upd\"", "\"name\": \"UPD\"");
  /* Drop op 9's name: "name": "upd", -> spaces. */
  char *p = strstr(strstr(strstr(s, "\"ops\": ["), "{\"id\": 9,"),
                   "\"name\": \"upd\", ");
  memset(p, ' ', strlen("\"name\": \"upd\", "));
  warns w = {0, ""};
  rp_graph *t = load_ok(s, 0, &w);
  rp_graph *d = load_ok(s, RP_READ_DERIVE, NULL);
  cr_assert_eq(w.n, 0, "%s", w.last);
  same_edges(g, t);
  rp_node_info a, b;
  rp_node_info_get(t, 7, &a);
  cr_assert_str_eq(a.name, "UPD");
  rp_node_info_get(t, 9, &a);
  rp_node_info_get(d, 9, &b);
  cr_assert_str_eq(a.name, b.name);
  cr_assert_str_eq(a.name, "upd");
  rp_graph_destroy(t);
  rp_graph_destroy(d);
  free(s);
  rp_graph_destroy(g);
}

/* A file written before the check existed (no "edges_check") is read as
 * before: its edges derived, the saved ones ignored. */
Test(json_stream, no_check_derives) {
  rp_graph *g = solver(100);
  char *s = save(g, NULL);
  char *c = strstr(s, "  \"edges_check\"");
  char *end = strchr(c, '\n') + 1;
  memmove(c, end, strlen(end) + 1);
  /* Its saved edges, dropped: derivation does not need them. */
  char *e = strstr(s, "\"edges\": [") + strlen("\"edges\": [");
  char *close = strrchr(s, ']');
  memmove(e, close, strlen(close) + 1);
  warns w = {0, ""};
  rp_graph *t = load_ok(s, 0, &w);
  cr_assert_eq(w.n, 0, "%s", w.last);
  same_edges(g, t);
  rp_graph_destroy(t);
  free(s);
  rp_graph_destroy(g);
}

/* The flags: RP_READ_DERIVE is known, other bits are refused. */
Test(json_stream, read_flags) {
  rp_graph *g = NULL;
  char err[256];
  FILE *fp = fmemopen((void *)"{}", 2, "r");
  rp_read_opts o = RP_READ_OPTS_INIT;
  o.flags = 4;
  cr_assert_eq(rp_graph_read_json_opts(&g, fp, &o, err, sizeof err), RP_EINVAL);
  fclose(fp);
}

/* ---- the fast path ------------------------------------------------------ */

/* Loads with the fast path on or off: status and message. */
static rp_status load_path(const char *s, size_t len, int fast, char *err,
                           size_t errlen, char **saved) {
  rp__json_fast = fast;
  rp_graph *h = NULL;
  warns w = {0, ""};
  rp_status st = load(s, len, 0, &h, err, errlen, &w);
  rp__json_fast = 1;
  *saved = NULL;
  if (st == RP_OK) {
    *saved = save(h, NULL);
    rp_graph_destroy(h);
  }
  return st;
}

/* The scanner for operations and edges as written and the cJSON path give
 * the same graphs, and on damaged files the same statuses and messages:
 * the scanner accepts nothing the cJSON path refuses. */
Test(json_stream, fast_path_same_as_cjson) {
  tu_random r;
  rp_graph *g = random_graph(7, 40, &r);
  rp_node_set_cost(g, 3, 1.0 / 3.0);
  size_t n;
  char *s = save(g, &n);
  char e1[512], e2[512], *a, *b;
  cr_assert_eq(load_path(s, n, 1, e1, sizeof e1, &a), RP_OK, "%s", e1);
  cr_assert_eq(load_path(s, n, 0, e2, sizeof e2, &b), RP_OK, "%s", e2);
  cr_assert_str_eq(a, s);
  cr_assert_str_eq(b, s);
  free(a);
  free(b);
  static const char subst[] = "\"{]:9-\\x0 e.";
  unsigned failed = 0;
  /* Every 31st byte plain, every (31 * TU_SAN_STRIDE)th under ASan. */
  for (size_t k = 0; k < n; k += 31 * TU_SAN_STRIDE) {
    for (const char *c = subst; *c; c++) {
      char keep = s[k];
      s[k] = *c;
      rp_status x = load_path(s, n, 1, e1, sizeof e1, &a);
      rp_status y = load_path(s, n, 0, e2, sizeof e2, &b);
      cr_assert_eq(x, y, "byte %zu '%c': %s vs %s", k, *c, e1, e2);
      if (x == RP_OK)
        cr_assert_str_eq(a, b, "byte %zu '%c'", k, *c);
      else
        cr_assert_str_eq(e1, e2, "byte %zu '%c'", k, *c);
      failed += x != RP_OK;
      free(a);
      free(b);
      s[k] = keep;
    }
  }
  cr_assert_gt(failed, 50 / TU_SAN_STRIDE);
  free(s);
  tu_random_free(&r);
}
