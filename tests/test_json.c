/* Tests of JSON graph files: round trips and every class of bad input. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"
#include "reprise.h"
#include "util.h"

/* ---- helpers ------------------------------------------------------------ */

static void nop_cpu(const rp_kargs *a, const uint64_t lo[3],
                    const uint64_t hi[3]) {}
static void nop_host(void *user, void *const *ptrs) {}

static const rp_param p_in_out[] = {
    {"src", RP_IN}, {"dst", RP_OUT}, {"w", RP_SCALAR}};
static const rp_param p_io[] = {{"a", RP_INOUT}};
static const rp_kernel k_stencil =
    RP_KERNEL_WITH(.name = "stencil", .nparams = 3, .params = p_in_out,
                   .cpu = nop_cpu);
static const rp_kernel k_scale = RP_KERNEL_WITH(.name = "scale", .nparams = 1,
                                                .params = p_io, .cpu = nop_cpu);

/* The whole of @p fp from its start, NUL-terminated. */
static char *read_all(FILE *fp, size_t *len) {
  cr_assert_eq(fseek(fp, 0, SEEK_END), 0);
  long n = ftell(fp);
  cr_assert(n >= 0);
  rewind(fp);
  char *s = malloc((size_t)n + 1);
  cr_assert_not_null(s);
  cr_assert_eq(fread(s, 1, (size_t)n, fp), (size_t)n);
  s[n] = '\0';
  if (len)
    *len = (size_t)n;
  return s;
}

static char *save(const rp_graph *g, size_t *len) {
  FILE *fp = tmpfile();
  cr_assert_not_null(fp);
  cr_assert_eq(rp_graph_write_json(g, fp), RP_OK);
  char *s = read_all(fp, len);
  fclose(fp);
  return s;
}

/* Loads the first @p len bytes of @p text. */
static rp_status load_n(const char *text, size_t len, rp_graph **g, char *err,
                        size_t errlen) {
  FILE *fp = len ? fmemopen((void *)text, len, "r") : tmpfile();
  cr_assert_not_null(fp);
  rp_status s = rp_graph_read_json(g, fp, err, errlen);
  fclose(fp);
  return s;
}

static rp_graph *load_ok(const char *text) {
  rp_graph *g = NULL;
  char err[512];
  rp_status s = load_n(text, strlen(text), &g, err, sizeof err);
  cr_assert_eq(s, RP_OK, "load failed: %s: %s", rp_status_name(s), err);
  cr_assert_not_null(g);
  cr_assert(rp_graph_ended(g));
  return g;
}

static char *file_text(const char *name, size_t *len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", RP_TEST_DATA, name);
  FILE *fp = fopen(path, "rb");
  cr_assert_not_null(fp, "cannot open %s", path);
  char *s = read_all(fp, len);
  fclose(fp);
  return s;
}

static const char *kname(const rp_graph *g, rp_node n) {
  const rp__op *o = &g->op[n];
  return o->kernel ? o->kernel->name : o->kernel_name;
}

/* Same buffers, operations, accesses, afters and edges (host pointers and
 * kernel bodies are not part of a file). */
static void assert_same_graph(const rp_graph *a, const rp_graph *b) {
  cr_assert_eq(rp_graph_num_buffers(a), rp_graph_num_buffers(b));
  cr_assert_eq(rp_graph_num_nodes(a), rp_graph_num_nodes(b));
  cr_assert_eq(rp_graph_num_edges(a), rp_graph_num_edges(b));
  cr_assert_eq(rp_graph_num_devices(a), rp_graph_num_devices(b));
  for (rp_buf i = 0; i < rp_graph_num_buffers(a); i++) {
    rp_buffer_desc x, y;
    cr_assert_eq(rp_buffer_info(a, i, &x), RP_OK);
    cr_assert_eq(rp_buffer_info(b, i, &y), RP_OK);
    cr_assert_str_eq(x.name, y.name);
    cr_assert_eq(x.bytes, y.bytes);
    cr_assert_eq(x.elem, y.elem);
    cr_assert_eq(x.ndims, y.ndims);
    for (unsigned d = 0; d < 3; d++)
      cr_assert_eq(x.dims[d], y.dims[d]);
  }
  for (rp_node n = 0; n < rp_graph_num_nodes(a); n++) {
    rp_node_info x, y;
    cr_assert_eq(rp_node_info_get(a, n, &x), RP_OK);
    cr_assert_eq(rp_node_info_get(b, n, &y), RP_OK);
    cr_assert_eq(x.type, y.type, "node %u", n);
    cr_assert_eq(x.device, y.device, "node %u", n);
    cr_assert_eq(x.dst_device, y.dst_device, "node %u", n);
    cr_assert_str_eq(x.name, y.name);
    cr_assert(x.cost_us == y.cost_us || (x.cost_us < 0 && y.cost_us < 0),
              "node %u: cost %.17g vs %.17g", n, x.cost_us, y.cost_us);
    cr_assert_eq(x.inserted, y.inserted, "node %u", n);
    cr_assert_eq(x.naccess, y.naccess, "node %u", n);
    if (x.type == RP_OP_KERNEL) {
      cr_assert_eq(x.space.x, y.space.x);
      cr_assert_eq(x.space.y, y.space.y);
      cr_assert_eq(x.space.z, y.space.z);
      cr_assert_str_eq(kname(a, n), kname(b, n));
    }
    for (unsigned k = 0; k < x.naccess; k++) {
      rp_access_info p, q;
      cr_assert_eq(rp_node_access(a, n, k, &p), RP_OK);
      cr_assert_eq(rp_node_access(b, n, k, &q), RP_OK);
      cr_assert_eq(p.mode, q.mode);
      cr_assert_eq(p.space, q.space);
      cr_assert_eq(p.region.buf, q.region.buf);
      cr_assert_eq(p.region.kind, q.region.kind, "node %u access %u", n, k);
      cr_assert_eq(p.region.ndims, q.region.ndims);
      cr_assert_eq(p.region.offset, q.region.offset);
      cr_assert_eq(p.region.bytes, q.region.bytes);
      for (unsigned d = 0; d < 3; d++) {
        cr_assert_eq(p.region.lo[d], q.region.lo[d]);
        cr_assert_eq(p.region.hi[d], q.region.hi[d]);
      }
    }
    cr_assert_eq(a->op[n].nafter, b->op[n].nafter);
    for (uint32_t k = 0; k < a->op[n].nafter; k++)
      cr_assert_eq(a->after[a->op[n].after0 + k],
                   b->after[b->op[n].after0 + k]);
  }
  static char ea[1 << 16], eb[1 << 16];
  tu_edges_str(a, ea, sizeof ea);
  tu_edges_str(b, eb, sizeof eb);
  cr_assert_str_eq(ea, eb);
  for (uint32_t i = 0; i < rp_graph_num_edges(a); i++) {
    rp_edge x, y;
    cr_assert_eq(rp_graph_edge(a, i, &x), RP_OK);
    cr_assert_eq(rp_graph_edge(b, i, &y), RP_OK);
    cr_assert_eq(x.from, y.from, "edge %u", i);
    cr_assert_eq(x.to, y.to, "edge %u", i);
    cr_assert_eq(x.kind, y.kind, "edge %u", i);
    cr_assert_eq(x.buf, y.buf, "edge %u", i);
  }
}

/* save -> load -> compare -> save again, byte-identical. */
static void round_trip(const rp_graph *g) {
  size_t n1, n2;
  char *s1 = save(g, &n1);
  rp_graph *h = load_ok(s1);
  assert_same_graph(g, h);
  char *s2 = save(h, &n2);
  cr_assert_eq(n1, n2);
  cr_assert(!memcmp(s1, s2, n1), "second save differs");
  rp_graph_destroy(h);
  free(s1);
  free(s2);
}

static float mem_a[8 * 16], mem_b[8 * 16];
static unsigned char mem_c[100];

/* A graph recorded through the public API with automatic coherence: boxes,
 * byte ranges, two devices, peer copies, host tasks, after edges, costs
 * that need 17 digits, a zero cost and names needing escapes. */
static rp_graph *sample_graph(void) {
  rp_graph *g = NULL;
  rp_buf a, b, c, t;
  TU_OK(g, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register_2d(g, "A", mem_a, 8, 16, 4, &a));
  TU_OK(g, rp_buffer_register_2d(g, "B \"quoted\"\n\\", mem_b, 8, 16, 4, &b));
  TU_OK(g, rp_buffer_register(g, "C \xc3\xa9t\xc3\xa9", mem_c, 100, &c));
  rp_buffer_desc td = {"tmp", NULL, 64, 8, 1, {8, 0, 0}};
  TU_OK(g, rp_buffer_add(g, &td, &t));

  /* Interior of B from all of A, on device 0 (coherence copies A in). */
  rp_arg args[3] = {rp_arg_buf(rp_whole(a)),
                    rp_arg_buf(rp_box2(b, 1, 7, 1, 15)), rp_arg_f32(0.25f)};
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "stencil 0", .cost_us = 1.0 / 3.0);
  rp_node k0, k1, h0, p0;
  TU_OK(g,
        rp_record_kernel(g, &k_stencil, 0, rp_dims3(14, 6, 0), args, &o, &k0));
  /* Rows 0-3 of B on device 1 via a peer copy, then a kernel there. */
  o = (rp_op_opts)RP_OP_OPTS_INIT;
  TU_OK(g, rp_record_copy_peer(g, rp_box2(b, 0, 4, 0, 16), 0, 1, &o, &p0));
  rp_arg a1 = rp_arg_buf(rp_box2(b, 0, 4, 0, 16));
  o = (rp_op_opts)RP_OP_OPTS_WITH(.name = "scale \"top\"",
                                  .cost_us = 123456789.123456789);
  TU_OK(g, rp_record_kernel(g, &k_scale, 1, rp_dims3(64, 1, 1), &a1, &o, &k1));
  /* A byte range of C on the host, ordered after k1 by hand. */
  rp_access ha[2] = {{rp_bytes(c, 10, 20), RP_INOUT}, {rp_whole(a), RP_IN}};
  rp_node after[1] = {k1};
  o = (rp_op_opts)RP_OP_OPTS_WITH(.name = "host\ttask", .cost_us = 2.5e-7,
                                  .after = after, .nafter = 1);
  TU_OK(g, rp_record_host(g, nop_host, NULL, ha, 2, &o, &h0));
  /* The internal buffer, on device 1, then an explicit copy back of C. */
  rp_arg a2 = rp_arg_buf(rp_bytes(t, 8, 48));
  rp_node aft2[2] = {p0, h0};
  o = (rp_op_opts)RP_OP_OPTS_WITH(.after = aft2, .nafter = 2);
  TU_OK(g, rp_record_kernel(g, &k_scale, 1, rp_dims3(6, 0, 0), &a2, &o, NULL));
  TU_OK(g, rp_record_copy_to_device(g, rp_bytes(c, 0, 50), 1, NULL, NULL));
  TU_OK(g, rp_record_copy_to_host(g, rp_bytes(c, 0, 50), 1, NULL, NULL));
  /* B back to the host: coherence-inserted copies from both devices. */
  unsigned nsync = 0;
  TU_OK(g, rp_record_sync_host(g, rp_whole(b), &nsync));
  cr_assert(nsync >= 2);
  /* A given cost of zero. */
  TU_OK(g, rp_node_set_cost(g, p0, 0.0));
  TU_OK(g, rp_graph_end(g));
  return g;
}

/* ---- round trips -------------------------------------------------------- */

Test(json, sample_round_trip) {
  rp_graph *g = sample_graph();
  /* The sample does hold what it claims to. */
  unsigned inserted = 0, peer = 0, host = 0, boxes = 0, after = 0;
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
    rp_node_info x;
    rp_node_info_get(g, n, &x);
    inserted += x.inserted;
    peer += x.type == RP_OP_COPY_D2D;
    host += x.type == RP_OP_HOST;
    for (unsigned k = 0; k < x.naccess; k++) {
      rp_access_info ai;
      rp_node_access(g, n, k, &ai);
      boxes += ai.region.kind == RP_REGION_BOX;
    }
  }
  for (uint32_t i = 0; i < rp_graph_num_edges(g); i++) {
    rp_edge e;
    rp_graph_edge(g, i, &e);
    after += e.kind == RP_EDGE_AFTER;
  }
  cr_assert(inserted >= 3 && peer >= 1 && host == 1 && boxes >= 3 && after >= 1,
            "inserted %u peer %u host %u boxes %u after %u", inserted, peer,
            host, boxes, after);
  round_trip(g);
  rp_graph_destroy(g);
}

Test(json, sample_text) {
  rp_graph *g = sample_graph();
  char *s = save(g, NULL);
  /* Escapes, 17-digit costs, the zero cost, kernel extras, peer devices. */
  cr_assert(strstr(s, "\"name\": \"B \\\"quoted\\\"\\n\\\\\""), "%s", s);
  cr_assert(strstr(s, "\"name\": \"C \xc3\xa9t\xc3\xa9\""));
  cr_assert(strstr(s, "\"name\": \"host\\ttask\""));
  cr_assert(strstr(s, "\"cost_us\": 0.33333333333333331"));
  cr_assert(strstr(s, "\"cost_us\": 123456789.12345679"));
  cr_assert(strstr(s, "\"cost_us\": 2.5e-07"));
  cr_assert(strstr(s, "\"kernel\": \"stencil\", \"space\": [14, 6, 1], "
                      "\"scalars\": [\"0x3e800000\"], "
                      "\"cost_us\": 0.33333333333333331,"),
            "%s", s);
  cr_assert(strstr(s, "\"type\": \"copy_d2d\", \"device\": 0, "
                      "\"src_device\": 0, \"dst_device\": 1, "
                      "\"cost_us\": 0,"),
            "%s", s);
  cr_assert(strstr(s, "\"inserted\": true"), "%s", s);
  cr_assert(strstr(s, "\"box\": {\"lo\": [1, 1], \"hi\": [7, 15]}"));
  cr_assert(strstr(s, "{\"buffer\": 2, \"space\": \"host\", \"mode\": "
                      "\"inout\", \"offset\": 10, \"bytes\": 20}"));
  cr_assert(strstr(s, "{\"id\": 3, \"name\": \"tmp\", \"bytes\": 64, "
                      "\"elem\": 8, \"dims\": [8]}"));
  cr_assert(strstr(s, "\"kind\": \"after\"}"));
  /* Same graph, same bytes. */
  char *t = save(g, NULL);
  cr_assert_str_eq(s, t);
  free(s);
  free(t);
  rp_graph_destroy(g);
}

Test(json, random_graphs_round_trip) {
  for (uint64_t seed = 1; seed <= 12; seed++) {
    tu_random r;
    unsigned flags = seed % 3 == 0 ? RP_GRAPH_NO_COHERENCE : 0;
    cr_assert_eq(tu_random_graph(&r, seed, 5, 256, 120, 3, flags, 1), 0);
    /* Written while recording: edges come out sorted all the same. */
    char *open = save(r.g, NULL);
    TU_OK(r.g, rp_graph_end(r.g));
    char *ended = save(r.g, NULL);
    cr_assert_str_eq(open, ended);
    free(open);
    free(ended);
    round_trip(r.g);
    tu_random_free(&r);
  }
}

/* A chain long enough to cross the writer's buffer many times. */
Test(json, long_chain_round_trip) {
  rp_graph *g = NULL;
  rp_buf a;
  TU_OK(g, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  rp_buffer_desc d = {"A", NULL, 4096, 4, 0, {0, 0, 0}};
  TU_OK(g, rp_buffer_add(g, &d, &a));
  for (unsigned i = 0; i < 3000; i++) {
    rp_arg arg = rp_arg_buf(rp_bytes(a, (i % 64) * 64, 64));
    rp_op_opts o = RP_OP_OPTS_WITH(.cost_us = 1.0 + i / 7.0);
    TU_OK(g, rp_record_kernel(g, &k_scale, (int)(i % 4), rp_dims3(16, 1, 1),
                              &arg, &o, NULL));
  }
  TU_OK(g, rp_graph_end(g));
  round_trip(g);
  rp_graph_destroy(g);
}

Test(json, empty_graph_round_trip) {
  rp_graph *g = NULL;
  TU_OK(g, rp_graph_create(&g, 0));
  TU_OK(g, rp_graph_end(g));
  size_t n;
  char *s = save(g, &n);
  cr_assert_str_eq(s, "{\n  \"format\": \"reprise-graph\",\n  \"version\": "
                      "1,\n  \"edges_check\": \"d92664b5b83b79f2\",\n"
                      "  \"buffers\": [],\n  \"ops\": [],\n  \"edges\": "
                      "[]\n}\n");
  round_trip(g);
  free(s);
  rp_graph_destroy(g);
}

/* The fixture other tests use: loading it and saving gives the same bytes,
 * and its edges are the ones of a ping-pong Jacobi. */
Test(json, jacobi_fixture) {
  size_t n;
  char *text = file_text("jacobi.json", &n);
  rp_graph *g = load_ok(text);
  cr_assert_eq(rp_graph_num_buffers(g), 2);
  cr_assert_eq(rp_graph_num_nodes(g), 7);
  char *again = save(g, NULL);
  cr_assert_str_eq(again, text);
  /* 0 moveto A, 1 moveto B, 2 A->B, 3 B->A, 4 A->B, 5 B->A, 6 movefrom A */
  char es[512];
  tu_edges_str(g, es, sizeof es);
  cr_assert_eq(rp_graph_num_edges(g), 6, "%s", es);
  cr_assert(tu_has_edge(g, 0, 2, RP_EDGE_RAW, 0), "%s", es);
  cr_assert(tu_has_edge(g, 1, 2, RP_EDGE_WAW, 1), "%s", es);
  cr_assert(tu_has_edge(g, 2, 3, RP_EDGE_RAW, 1), "%s", es);
  cr_assert(tu_has_edge(g, 3, 4, RP_EDGE_RAW, 0), "%s", es);
  cr_assert(tu_has_edge(g, 4, 5, RP_EDGE_RAW, 1), "%s", es);
  cr_assert(tu_has_edge(g, 5, 6, RP_EDGE_RAW, 0), "%s", es);
  rp_node_info x;
  rp_node_info_get(g, 2, &x);
  cr_assert_eq(x.cost_us, 95.5);
  cr_assert_str_eq(x.name, "jacobi 0");
  free(again);
  free(text);
  rp_graph_destroy(g);
}

/* Edges in a file are ignored and derived again. */
Test(json, input_edges_ignored) {
  rp_graph *g = load_ok(
      "{\"format\": \"reprise-graph\", \"version\": 1, \"buffers\": "
      "[{\"id\": 0, \"name\": \"A\", \"bytes\": 64}], \"ops\": ["
      "{\"id\": 0, \"type\": \"host\", \"access\": [{\"buffer\": 0, "
      "\"space\": \"host\", \"mode\": \"out\"}]},"
      "{\"id\": 1, \"type\": \"host\", \"access\": [{\"buffer\": 0, "
      "\"space\": \"host\", \"mode\": \"in\", \"offset\": 0, \"bytes\": 8}]}"
      "], \"edges\": [{\"from\": 1, \"to\": 0, \"kind\": \"war\"}, "
      "{\"nonsense\": [1, 2, {}]}], \"comment\": {\"any\": [true, null]}}");
  cr_assert_eq(rp_graph_num_edges(g), 1);
  cr_assert(tu_has_edge(g, 0, 1, RP_EDGE_RAW, 0));
  rp_node_info x;
  rp_node_info_get(g, 0, &x);
  cr_assert_str_eq(x.name, "host"); /* derived when none is given */
  cr_assert_lt(x.cost_us, 0);
  rp_graph_destroy(g);
}

/* ---- bad input ---------------------------------------------------------- */

/* Loads @p text, expects @p want and a message containing @p where; the
 * output pointer must come back NULL. */
static void expect_bad_n(const char *text, size_t len, rp_status want,
                         const char *where) {
  rp_graph *g = (rp_graph *)&g; /* not NULL: it must be reset */
  char err[512] = "untouched";
  rp_status s = load_n(text, len, &g, err, sizeof err);
  cr_assert_eq(s, want, "got %s (%s) for: %.300s", rp_status_name(s), err,
               text);
  cr_assert_null(g);
  cr_assert(strstr(err, where), "message \"%s\" lacks \"%s\"", err, where);
  cr_assert_str_eq(rp_last_error(), err);
}

static void expect_bad(const char *text, const char *where) {
  expect_bad_n(text, strlen(text), RP_EPARSE, where);
}

#define HEAD "{\"format\": \"reprise-graph\", \"version\": 1, "
#define BUF_A "{\"id\": 0, \"name\": \"A\", \"bytes\": 64}"
#define BUF_M                                                                  \
  "{\"id\": 1, \"name\": \"M\", \"bytes\": 256, \"elem\": 4, "                 \
  "\"dims\": [8, 8]}"
/* A document with buffers A (64 bytes) and M (8 x 8 x 4) and @p ops. */
static char *doc(const char *ops) {
  static char buf[8192];
  snprintf(buf, sizeof buf,
           HEAD "\"buffers\": [" BUF_A ", " BUF_M "], \"ops\": [%s]}", ops);
  return buf;
}
/* One op: {"id": 0, FIELDS, "access": [ACCESS]}. */
static char *op1(const char *fields, const char *access) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "{\"id\": 0, %s, \"access\": [%s]}", fields,
           access);
  return doc(buf);
}
#define KERNEL0 "\"type\": \"kernel\", \"device\": 0"
#define ACC_A0 "{\"buffer\": 0, \"space\": \"device:0\", \"mode\": \"in\"}"
#define ACC_M0 "{\"buffer\": 1, \"space\": \"device:0\", \"mode\": \"in\", "

Test(json_bad, valid_base_loads) {
  /* The base documents below are valid before each one's fault. */
  rp_graph *g = load_ok(op1(KERNEL0, ACC_A0));
  rp_graph_destroy(g);
  g = load_ok(op1(KERNEL0, ACC_M0 "\"box\": {\"lo\": [0, 0], \"hi\": [8, "
                                  "8]}}"));
  rp_graph_destroy(g);
}

Test(json_bad, empty_and_truncated) {
  expect_bad("", "empty file");
  expect_bad(" \n\t ", "empty file");
  expect_bad("{", "line 1, column 2: unexpected end of file (truncated?)");
  expect_bad(HEAD "\"buffers\": [" BUF_A,
             "unexpected end of file (truncated?)");
  expect_bad(HEAD "\"buffers\": [{\"id\": 0, \"name\": \"A",
             "unexpected end of file");
}

Test(json_bad, not_json) {
  expect_bad("hello", "line 1, column 1: expected an object ('{') at the "
                      "top level");
  expect_bad("[1, 2]", "line 1, column 1: expected an object");
  expect_bad("{\"format\": reprise}", "format: not valid JSON (line 1, "
                                      "column 12)");
  expect_bad("{\"format\" \"x\"}", "line 1, column 11: expected ':'");
  expect_bad("{\"format\": 1 \"version\": 1}",
             "line 1, column 14: expected ',' or '}'");
  expect_bad("{format: 1}", "line 1, column 2: expected a key (a string)");
  expect_bad(HEAD "\"buffers\": [], \"ops\": []} trailing",
             "unexpected data after the graph");
  expect_bad(HEAD "\"buffers\": [" BUF_A " " BUF_A "], \"ops\": []}",
             "expected ',' or ']'");
  expect_bad(HEAD "\"buffers\": [" BUF_A ",], \"ops\": []}",
             "expected a value");
  expect_bad(HEAD "\"buffers\": [{\"id\": 0,}], \"ops\": []}",
             "buffers[0]: not valid JSON");
  expect_bad(HEAD "\"buffers\": [], \"ops\": [], \"edges\": [{]}]}",
             "edges[0]: not valid JSON (line 1, column 80)");
  expect_bad(HEAD "\"buffers\": [], \"ops\": [], \"edges\": [{\"a\" 1}]}",
             "edges[0]: not valid JSON");
  expect_bad(HEAD "\"buffers\": [], \"ops\": [], \"x\": tru}",
             "(unknown key): not valid JSON");
  static const char nul[] = "{\"format\": \"reprise-graph\"\0}";
  expect_bad_n(nul, sizeof nul - 1, RP_EPARSE,
               "line 1, column 27: NUL byte in the file");
}

Test(json_bad, format_and_version) {
  expect_bad("{\"format\": \"other\", \"version\": 1, \"buffers\": [], "
             "\"ops\": []}",
             "format: expected \"reprise-graph\", got "
             "\"other\"");
  expect_bad("{\"format\": 7, \"version\": 1, \"buffers\": [], \"ops\": []}",
             "format: expected \"reprise-graph\", got a number");
  expect_bad("{\"format\": \"reprise-graph\", \"version\": 2, \"buffers\": "
             "[], \"ops\": []}",
             "version: unsupported version 2 (this "
             "library reads version 1)");
  expect_bad("{\"format\": \"reprise-graph\", \"version\": \"1\", "
             "\"buffers\": [], \"ops\": []}",
             "version: expected a number, got a string");
}

Test(json_bad, missing_keys) {
  expect_bad("{\"version\": 1, \"buffers\": [], \"ops\": []}",
             "missing key \"format\"");
  expect_bad(HEAD "\"buffers\": []}", "missing key \"ops\"");
  expect_bad(HEAD "\"buffers\": [{\"id\": 0, \"name\": \"A\"}], "
                  "\"ops\": []}",
             "buffers[0]: missing key \"bytes\"");
  expect_bad(op1(KERNEL0, "{\"buffer\": 0, \"mode\": \"in\"}"),
             "ops[0].access[0]: missing key \"space\"");
  expect_bad(doc("{\"id\": 0, " KERNEL0 "}"), "ops[0]: missing key \"access\"");
  expect_bad(op1("\"type\": \"kernel\"", ACC_A0),
             "ops[0]: missing key \"device\"");
  expect_bad(op1(KERNEL0, ACC_M0 "\"box\": {\"lo\": [0, 0]}}"),
             "ops[0].access[0].box: missing key \"hi\"");
  expect_bad(op1("\"type\": \"copy_d2d\", \"dst_device\": 1", ACC_A0),
             "ops[0]: missing key \"src_device\"");
}

Test(json_bad, duplicate_keys) {
  expect_bad(HEAD "\"buffers\": [], \"ops\": [], \"ops\": []}",
             "line 1, column 69: duplicate key \"ops\"");
  expect_bad(op1(KERNEL0 ", \"type\": \"host\"", ACC_A0),
             "ops[0]: duplicate key \"type\"");
}

Test(json_bad, unknown_buffer) {
  expect_bad(op1(KERNEL0, "{\"buffer\": 5, \"space\": \"device:0\", "
                          "\"mode\": \"in\"}"),
             "ops[0].access[0].buffer: unknown buffer 5 (the file has 2)");
}

Test(json_bad, region_out_of_bounds) {
  expect_bad(op1(KERNEL0,
                 ACC_A0 ", {\"buffer\": 0, \"space\": "
                        "\"device:0\", \"mode\": \"out\", \"offset\": 60, "
                        "\"bytes\": 8}"),
             "ops[0].access[1]: region ends past buffer \"A\" (64 bytes)");
  /* offset + bytes wraps around in 64 bits. */
  expect_bad(op1(KERNEL0, "{\"buffer\": 0, \"space\": \"device:0\", "
                          "\"mode\": \"in\", \"offset\": 8, \"bytes\": "
                          "9007199254740991}"),
             "ops[0].access[0]: region ends past buffer \"A\" (64 bytes)");
  expect_bad(op1(KERNEL0, "{\"buffer\": 0, \"space\": \"device:0\", "
                          "\"mode\": \"in\", \"offset\": 65, \"bytes\": 0}"),
             "ops[0].access[0]: region ends past buffer \"A\" (64 bytes)");
  expect_bad(op1(KERNEL0, "{\"buffer\": 0, \"space\": \"device:0\", "
                          "\"mode\": \"in\", \"offset\": 8}"),
             "ops[0].access[0]: \"offset\" without \"bytes\"");
  expect_bad(op1(KERNEL0, ACC_M0 "\"offset\": 0, \"bytes\": 4, \"box\": "
                                 "{\"lo\": [0, 0], \"hi\": [1, 1]}}"),
             "ops[0].access[0]: both a byte range and a box");
}

Test(json_bad, boxes) {
  expect_bad(op1(KERNEL0, ACC_M0 "\"box\": {\"lo\": [0], \"hi\": [8]}}"),
             "ops[0].access[0].box: rank 1, but buffer \"M\" has 2 dims");
  expect_bad(op1(KERNEL0, ACC_M0 "\"box\": {\"lo\": [0, 0, 0], "
                                 "\"hi\": [1, 1, 1]}}"),
             "ops[0].access[0].box: rank 3, but buffer \"M\" has 2 dims");
  expect_bad(op1(KERNEL0, ACC_M0 "\"box\": {\"lo\": [0, 0, 0, 0], "
                                 "\"hi\": [1, 1, 1, 1]}}"),
             "ops[0].access[0].box.lo: expected 1 to 3 entries, got 4");
  expect_bad(op1(KERNEL0, ACC_M0 "\"box\": {\"lo\": [0, 5], "
                                 "\"hi\": [8, 3]}}"),
             "ops[0].access[0].box: lo[1] = 5 > hi[1] = 3");
  expect_bad(op1(KERNEL0, ACC_M0 "\"box\": {\"lo\": [0, 0], "
                                 "\"hi\": [9, 8]}}"),
             "ops[0].access[0].box: hi[0] = 9 is past buffer \"M\" "
             "(dims[0] = 8)");
  expect_bad(op1(KERNEL0,
                 "{\"buffer\": 0, \"space\": \"device:0\", "
                 "\"mode\": \"in\", \"box\": {\"lo\": [0], \"hi\": [1]}}"),
             "ops[0].access[0].box: buffer \"A\" has no dims");
  expect_bad(op1(KERNEL0, ACC_M0 "\"box\": [0, 8]}"),
             "ops[0].access[0].box: expected an object, got an array");
  expect_bad(op1(KERNEL0, ACC_M0 "\"box\": {\"lo\": [0, -1], "
                                 "\"hi\": [8, 8]}}"),
             "ops[0].access[0].box.lo[1]: must not be negative (got -1)");
}

Test(json_bad, modes_types_spaces) {
  expect_bad(op1(KERNEL0, "{\"buffer\": 0, \"space\": \"device:0\", "
                          "\"mode\": \"rw\"}"),
             "ops[0].access[0].mode: bad mode \"rw\" (expected \"in\", "
             "\"out\" or \"inout\")");
  expect_bad(op1("\"type\": \"launch\", \"device\": 0", ACC_A0),
             "ops[0].type: unknown type \"launch\" (expected kernel, "
             "copy_h2d, copy_d2h, copy_d2d or host)");
  expect_bad(op1("\"type\": 3, \"device\": 0", ACC_A0),
             "ops[0].type: expected a string, got a number");
  static const char *const bad_spaces[] = {
      "gpu:0",     "device:", "device:x",      "device:01",
      "device:-1", "Host",    "device:1234567"};
  for (unsigned i = 0; i < sizeof bad_spaces / sizeof *bad_spaces; i++) {
    char acc[200], where[100];
    snprintf(acc, sizeof acc,
             "{\"buffer\": 0, \"space\": \"%s\", "
             "\"mode\": \"in\"}",
             bad_spaces[i]);
    snprintf(where, sizeof where,
             "ops[0].access[0].space: bad space \"%s\" "
             "(expected \"host\" or \"device:N\")",
             bad_spaces[i]);
    expect_bad(op1(KERNEL0, acc), where);
  }
  expect_bad(op1(KERNEL0, "{\"buffer\": 0, \"space\": \"device:62\", "
                          "\"mode\": \"in\"}"),
             "ops[0].access[0].space: device 62 out of range (0..61)");
}

Test(json_bad, device_out_of_range) {
  expect_bad(op1("\"type\": \"kernel\", \"device\": 62", ACC_A0),
             "ops[0].device: device 62 out of range (0..61)");
  expect_bad(op1("\"type\": \"kernel\", \"device\": -1", ACC_A0),
             "ops[0].device: must not be negative (got -1)");
  expect_bad(op1("\"type\": \"copy_d2d\", \"src_device\": 0, "
                 "\"dst_device\": 99",
                 ACC_A0),
             "ops[0].dst_device: device 99 out of range (0..61)");
}

#define H2D(dev) "\"type\": \"copy_h2d\", \"device\": " #dev
#define ACC(buf, space, mode)                                                  \
  "{\"buffer\": " #buf ", \"space\": \"" space "\", \"mode\": \"" mode "\"}"

Test(json_bad, space_matches_type) {
  expect_bad(op1(KERNEL0, ACC(0, "host", "in")),
             "ops[0].access[0].space: a kernel on device 0 accesses "
             "\"device:0\", not \"host\"");
  expect_bad(op1(KERNEL0, ACC_A0 ", " ACC(0, "device:1", "out")),
             "ops[0].access[1].space: a kernel on device 0 accesses "
             "\"device:0\", not \"device:1\"");
  expect_bad(op1("\"type\": \"host\"", ACC(0, "device:0", "in")),
             "ops[0].access[0].space: a host task accesses \"host\", not "
             "\"device:0\"");
  /* Copies: source "in" first, then the same region "out". */
  rp_graph *g =
      load_ok(op1(H2D(0), ACC(0, "host", "in") ", " ACC(0, "device:0", "out")));
  rp_graph_destroy(g);
  expect_bad(op1(H2D(0), ACC(0, "device:0", "out") ", " ACC(0, "host", "in")),
             "ops[0].access[0].space: a copy to device 0 reads \"host\", "
             "not \"device:0\"");
  expect_bad(op1(H2D(0), ACC(0, "host", "in") ", " ACC(0, "device:1", "out")),
             "ops[0].access[1].space: a copy to device 0 writes "
             "\"device:0\", not \"device:1\"");
  expect_bad(op1(H2D(0), ACC(0, "host", "in") ", " ACC(0, "device:0", "in")),
             "ops[0].access[1].mode: a copy writes its destination: "
             "expected \"out\", got \"in\"");
  expect_bad(
      op1(H2D(0), ACC(0, "host", "inout") ", " ACC(0, "device:0", "out")),
      "ops[0].access[0].mode: a copy reads its source: expected "
      "\"in\", got \"inout\"");
  expect_bad(op1("\"type\": \"copy_d2h\", \"device\": 2",
                 ACC(0, "host", "in") ", " ACC(0, "device:2", "out")),
             "ops[0].access[0].space: a copy from device 2 reads "
             "\"device:2\", not \"host\"");
  expect_bad(op1("\"type\": \"copy_d2d\", \"src_device\": 0, "
                 "\"dst_device\": 1",
                 ACC(0, "device:0", "in") ", " ACC(0, "device:0", "out")),
             "ops[0].access[1].space: a peer copy from device 0 writes "
             "\"device:1\", not \"device:0\"");
  expect_bad(op1("\"type\": \"copy_d2d\", \"src_device\": 1, "
                 "\"dst_device\": 1",
                 ACC_A0),
             "ops[0].dst_device: a peer copy needs two devices (both are "
             "1)");
  expect_bad(op1("\"type\": \"copy_d2d\", \"device\": 0, "
                 "\"src_device\": 1, \"dst_device\": 2",
                 ACC_A0),
             "ops[0].device: 0, but src_device is 1");
  expect_bad(op1(H2D(0), ACC(0, "host", "in")),
             "ops[0].access: a copy has exactly 2 accesses (source, "
             "destination), got 1");
  expect_bad(
      op1(H2D(0), ACC(0, "host", "in") ", " ACC(0, "device:0", "out") ", " ACC(
                      0, "device:0", "out")),
      "ops[0].access[2]: a copy has exactly 2 accesses");
  expect_bad(op1(H2D(0),
                 ACC(0, "host",
                     "in") ", "
                           "{\"buffer\": 0, \"space\": \"device:0\", \"mode\": "
                           "\"out\", \"offset\": 0, \"bytes\": 8}"),
             "ops[0].access[1]: a copy writes the region it reads");
  expect_bad(op1(H2D(0), ACC(0, "host", "in") ", " ACC(1, "device:0", "out")),
             "ops[0].access[1]: a copy writes the region it reads");
}

Test(json_bad, costs) {
  expect_bad(op1(KERNEL0 ", \"cost_us\": -1", ACC_A0),
             "ops[0].cost_us: must be finite and >= 0 (got -1)");
  expect_bad(op1(KERNEL0 ", \"cost_us\": 1e999", ACC_A0),
             "ops[0].cost_us: must be finite and >= 0 (got inf)");
  expect_bad(op1(KERNEL0 ", \"cost_us\": \"95\"", ACC_A0),
             "ops[0].cost_us: expected a number, got a string");
  expect_bad(op1(KERNEL0 ", \"cost_us\": null", ACC_A0),
             "ops[0].cost_us: expected a number, got null");
}

Test(json_bad, after) {
  const char *k = "{\"id\": %u, " KERNEL0 ", \"access\": [" ACC_A0 "]%s}";
  char ops[1024], a[300], b[300];
  snprintf(a, sizeof a, k, 0, "");
  snprintf(b, sizeof b, k, 1, ", \"after\": [0, 2]");
  snprintf(ops, sizeof ops, "%s, %s", a, b);
  expect_bad(doc(ops), "ops[1].after[1]: 2 is not an earlier op (after must "
                       "point backwards)");
  snprintf(b, sizeof b, k, 1, ", \"after\": [1]");
  snprintf(ops, sizeof ops, "%s, %s", a, b);
  expect_bad(doc(ops), "ops[1].after[0]: 1 is not an earlier op");
  snprintf(b, sizeof b, k, 1, ", \"after\": [-1]");
  snprintf(ops, sizeof ops, "%s, %s", a, b);
  expect_bad(doc(ops), "ops[1].after[0]: must not be negative");
  snprintf(b, sizeof b, k, 1, ", \"after\": 0");
  snprintf(ops, sizeof ops, "%s, %s", a, b);
  expect_bad(doc(ops), "ops[1].after: expected an array, got a number");
  snprintf(b, sizeof b, k, 1, ", \"after\": [0]");
  snprintf(ops, sizeof ops, "%s, %s", a, b);
  rp_graph *g = load_ok(doc(ops));
  cr_assert(tu_has_edge(g, 0, 1, RP_EDGE_AFTER, RP_NONE));
  rp_graph_destroy(g);
}

Test(json_bad, ids_in_order) {
  char ops[1024];
  snprintf(ops, sizeof ops,
           "{\"id\": 0, " KERNEL0 ", \"access\": []}, "
           "{\"id\": 2, " KERNEL0 ", \"access\": []}");
  expect_bad(doc(ops), "ops[1].id: expected 1 (op ids are their program "
                       "order: 0, 1, 2, ...), got 2");
  expect_bad(doc("{\"id\": \"0\", " KERNEL0 ", \"access\": []}"),
             "ops[0].id: expected an integer, got a string");
  expect_bad(HEAD "\"buffers\": [" BUF_A ", {\"id\": 0, \"name\": \"B\", "
                  "\"bytes\": 4}], \"ops\": []}",
             "buffers[1].id: expected 1 (buffer ids are 0, 1, 2, ... in "
             "order), got 0");
  expect_bad(HEAD "\"buffers\": {}, \"ops\": []}",
             "buffers: expected an array, got an object");
  expect_bad(HEAD "\"buffers\": [], \"ops\": \"none\"}",
             "ops: expected an array, got a string");
  expect_bad(HEAD "\"buffers\": [], \"ops\": [7]}",
             "ops[0]: expected an object, got a number");
}

static void expect_bad_buffer(const char *buffer, const char *where) {
  char text[1024];
  snprintf(text, sizeof text, HEAD "\"buffers\": [%s], \"ops\": []}", buffer);
  expect_bad(text, where);
}

Test(json_bad, sizes) {
  expect_bad_buffer("{\"id\": 0, \"name\": \"A\", \"bytes\": 100, \"elem\": 4, "
                    "\"dims\": [4, 4]}",
                    "buffers[0].bytes: 100, but elem x dims = 64");
  expect_bad_buffer("{\"id\": 0, \"name\": \"A\", \"bytes\": 64, \"elem\": 1, "
                    "\"dims\": [4294967296, 4294967296, 2]}",
                    "buffers[0].dims: elem x dims overflows 64 bits");
  expect_bad_buffer("{\"id\": 0, \"name\": \"A\", \"bytes\": 64, \"elem\": "
                    "4294967296, \"dims\": [4294967296]}",
                    "buffers[0].dims: elem x dims overflows 64 bits");
  expect_bad_buffer("{\"id\": 0, \"name\": \"A\", \"bytes\": "
                    "9007199254740993}",
                    "buffers[0].bytes: integer too large (2^53 or more)");
  expect_bad_buffer("{\"id\": 0, \"name\": \"A\", \"bytes\": 1e300}",
                    "buffers[0].bytes: integer too large (2^53 or more)");
  expect_bad_buffer("{\"id\": 0, \"name\": \"A\", \"bytes\": -64}",
                    "buffers[0].bytes: must not be negative (got -64)");
  expect_bad_buffer("{\"id\": 0, \"name\": \"A\", \"bytes\": 6.5}",
                    "buffers[0].bytes: expected an integer, got 6.5");
  expect_bad_buffer("{\"id\": 0, \"name\": \"A\", \"bytes\": \"64\"}",
                    "buffers[0].bytes: expected an integer, got a string");
  expect_bad_buffer("{\"id\": 0, \"name\": \"A\", \"bytes\": 0}",
                    "buffers[0].bytes: must be positive");
  expect_bad_buffer("{\"id\": 0, \"name\": \"A\", \"bytes\": 10, "
                    "\"elem\": 4}",
                    "buffers[0].bytes: 10 is not a multiple of elem 4");
  expect_bad_buffer("{\"id\": 0, \"name\": \"A\", \"bytes\": 8, \"elem\": 0}",
                    "buffers[0].elem: must be positive");
  expect_bad_buffer("{\"id\": 0, \"name\": \"A\", \"bytes\": 8, "
                    "\"dims\": [8, 0]}",
                    "buffers[0].dims[1]: must be "
                    "positive");
  expect_bad_buffer("{\"id\": 0, \"name\": \"A\", \"bytes\": 8, "
                    "\"dims\": []}",
                    "buffers[0].dims: expected 1 to 3 entries, got 0");
  expect_bad_buffer("{\"id\": 0, \"name\": 5, \"bytes\": 8}",
                    "buffers[0].name: expected a string, got a number");
  expect_bad_buffer("{\"id\": 0, \"name\": \"\", \"bytes\": 8}",
                    "buffers[0].name: empty");
  expect_bad(op1(KERNEL0 ", \"space\": [1, 2.5]", ACC_A0),
             "ops[0].space[1]: expected an integer, got 2.5");
}

Test(json_bad, duplicate_buffer_names) {
  expect_bad(HEAD "\"buffers\": [" BUF_A ", " BUF_M ", {\"id\": 2, "
                  "\"name\": \"A\", \"bytes\": 8}], \"ops\": []}",
             "buffers[2].name: duplicate buffer name \"A\" (also "
             "buffers[0])");
}

/* 100 000 nested brackets fail cleanly, wherever they are. */
Test(json_bad, deep_nesting) {
  enum { DEPTH = 100000 };
  size_t cap = 2 * DEPTH + 4096;
  char *s = malloc(cap);
  cr_assert_not_null(s);
  memset(s, '[', DEPTH);
  s[DEPTH] = '\0';
  expect_bad(s, "line 1, column 1: expected an object");
  /* Inside an unknown key, closed and not. */
  int n = snprintf(s, cap, HEAD "\"buffers\": [], \"ops\": [], \"x\": ");
  memset(s + n, '[', DEPTH);
  memset(s + n + DEPTH, ']', DEPTH);
  strcpy(s + n + 2 * DEPTH, "}");
  expect_bad(s, "nesting deeper than 512 levels");
  s[n + DEPTH] = '\0';
  expect_bad(s, "nesting deeper than 512 levels");
  /* Inside an operation. */
  n = snprintf(s, cap,
               HEAD "\"buffers\": [], \"ops\": [{\"id\": 0, "
                    "\"deep\": ");
  memset(s + n, '{', 1);
  for (int i = 1; i < DEPTH; i++)
    s[n + i] = i % 2 ? '[' : '{';
  s[n + DEPTH] = '\0';
  expect_bad(s, "nesting deeper than 512 levels");
  free(s);
}

/* ---- fuzz-ish ----------------------------------------------------------- */

/* Every prefix of a valid file fails cleanly, except those that hold the
 * whole object. */
Test(json_fuzz, every_truncation) {
  rp_graph *g = sample_graph();
  size_t n;
  char *s = save(g, &n);
  size_t full = n;
  while (full && strchr(" \n\t\r", s[full - 1]))
    full--;
  for (size_t k = 0; k <= n; k++) {
    rp_graph *h = (rp_graph *)&h;
    char err[512] = "";
    rp_status st = load_n(s, k, &h, err, sizeof err);
    if (k >= full) {
      cr_assert_eq(st, RP_OK, "prefix %zu: %s", k, err);
      assert_same_graph(g, h);
      rp_graph_destroy(h);
    } else {
      cr_assert_eq(st, RP_EPARSE, "prefix %zu: %s", k, rp_status_name(st));
      cr_assert_null(h);
      cr_assert(err[0], "prefix %zu: no message", k);
    }
  }
  free(s);
  rp_graph_destroy(g);
}

/* Single-byte corruptions never crash; they load or fail with a message. */
Test(json_fuzz, byte_corruptions) {
  rp_graph *g = sample_graph();
  size_t n;
  char *s = save(g, &n);
  static const char subst[] = "\"{],:9-\\";
  unsigned ok = 0, bad = 0;
  /* Every byte in the plain stage, every TU_SAN_STRIDE-th under ASan. */
  for (size_t k = 0; k < n; k += TU_SAN_STRIDE) {
    for (const char *c = subst; *c; c++) {
      if (s[k] == *c)
        continue;
      char keep = s[k];
      s[k] = *c;
      rp_graph *h = (rp_graph *)&h;
      char err[512] = "";
      rp_status st = load_n(s, n, &h, err, sizeof err);
      s[k] = keep;
      /* Plain checks: a Criterion assertion per load would dominate. */
      if (st == RP_OK && h && h != (rp_graph *)&h) {
        rp_graph_destroy(h);
        ok++;
      } else if (st == RP_EPARSE && !h && err[0]) {
        bad++;
      } else {
        cr_assert_fail("byte %zu -> '%c': %s (%s), graph %p", k, *c,
                       rp_status_name(st), err, (void *)h);
      }
    }
  }
  cr_assert_gt(bad, ok);
  free(s);
  rp_graph_destroy(g);
}

/* ---- I/O and arguments -------------------------------------------------- */

Test(json_io, read_error_is_eio) {
  FILE *fp = fopen("/dev/null", "w"); /* reading it fails */
  cr_assert_not_null(fp);
  rp_graph *g = (rp_graph *)&g;
  char err[256] = "";
  cr_assert_eq(rp_graph_read_json(&g, fp, err, sizeof err), RP_EIO);
  cr_assert_null(g);
  cr_assert(strstr(err, "read error"), "%s", err);
  fclose(fp);
}

Test(json_io, write_error_is_eio) {
  rp_graph *g = sample_graph();
  FILE *fp = fopen("/dev/full", "w");
  if (fp) {
    cr_assert_eq(rp_graph_write_json(g, fp), RP_EIO);
    fclose(fp);
  }
  fp = fopen("/dev/null", "r"); /* writing it fails */
  cr_assert_not_null(fp);
  cr_assert_eq(rp_graph_write_json(g, fp), RP_EIO);
  fclose(fp);
  rp_graph_destroy(g);
}

Test(json_io, null_arguments) {
  rp_graph *g = NULL;
  char err[128];
  cr_assert_eq(rp_graph_read_json(&g, NULL, err, sizeof err), RP_EINVAL);
  cr_assert_null(g);
  FILE *fp = tmpfile();
  cr_assert_eq(rp_graph_read_json(NULL, fp, NULL, 0), RP_EINVAL);
  cr_assert_eq(rp_graph_write_json(NULL, fp), RP_EINVAL);
  fclose(fp);
  TU_OK(g, rp_graph_create(&g, 0));
  cr_assert_eq(rp_graph_write_json(g, NULL), RP_EINVAL);
  rp_graph_destroy(g);
}

/* A tiny error buffer truncates the message but stays a C string. */
Test(json_io, small_error_buffer) {
  char err[8];
  rp_graph *g = NULL;
  cr_assert_eq(load_n("[]", 2, &g, err, sizeof err), RP_EPARSE);
  cr_assert_str_eq(err, "line 1,");
  cr_assert_eq(load_n("[]", 2, &g, NULL, 0), RP_EPARSE);
}

/* Reading from a pipe (no seeking) works. */
Test(json_io, read_from_pipe) {
  rp_graph *g = sample_graph();
  char *s = save(g, NULL);
  char path[] = "/tmp/rp_json_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  FILE *w = fdopen(fd, "w");
  fputs(s, w);
  fclose(w);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "cat %s", path);
  FILE *fp = popen(cmd, "r");
  cr_assert_not_null(fp);
  rp_graph *h = NULL;
  char err[256];
  cr_assert_eq(rp_graph_read_json(&h, fp, err, sizeof err), RP_OK, "%s", err);
  pclose(fp);
  remove(path);
  assert_same_graph(g, h);
  rp_graph_destroy(h);
  rp_graph_destroy(g);
  free(s);
}

/* The bad fixtures other tests (the CLI's) use say what they should. */
Test(json_bad, fixture_files) {
  static const struct {
    const char *file, *where;
  } cases[] = {
      {"bad_region.json", "ops[3].access[1]: region ends past buffer \"A\" "
                          "(64 bytes)"},
      {"bad_truncated.json", "line 28, column 15: unexpected end of file "
                             "(truncated?)"},
  };
  for (unsigned i = 0; i < sizeof cases / sizeof *cases; i++) {
    size_t n;
    char *text = file_text(cases[i].file, &n);
    expect_bad_n(text, n, RP_EPARSE, cases[i].where);
    free(text);
  }
}

/* A kernel's saved scalar values: read back as written (both readers);
 * anything but "0x" and 1 to 16 hex digits refused, naming where. */
Test(json_bad, kernel_scalars) {
  rp_graph *g = load_ok(op1(KERNEL0 ", \"kernel\": \"k\", \"scalars\": "
                                    "[\"0x40\", \"0xFFFFFFFFFFFFFFFF\"]",
                            ACC_A0));
  rp_slot v[4];
  unsigned n = 0;
  cr_assert_eq(rp_node_scalars(g, 0, v, 4, &n), RP_OK);
  cr_assert_eq(n, 2);
  cr_assert_eq(v[0].u64, 64);
  cr_assert_eq(v[1].u64, UINT64_MAX);
  cr_assert_str_eq(rp_node_kernel_name(g, 0), "k");
  rp_graph_destroy(g);
  expect_bad(op1(KERNEL0 ", \"scalars\": [\"12\"]", ACC_A0),
             "ops[0].scalars[0]: expected a string \"0x\" and 1 to 16 hex "
             "digits");
  expect_bad(op1(KERNEL0 ", \"scalars\": [\"0x10000000000000000\"]", ACC_A0),
             "ops[0].scalars[0]");
  expect_bad(op1(KERNEL0 ", \"scalars\": 3", ACC_A0),
             "ops[0].scalars: expected an array");
}
