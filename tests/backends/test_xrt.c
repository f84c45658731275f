/* Tests of the xrt backend through XRT's noop shim, with xclbins built at
 * run time: results equal the reference replay byte for byte, every
 * compute unit is used, bad input fails cleanly, no card gives ENODEV. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "replay/exec.h"
#include "rp_xrt.h"
#include "util.h"
#ifdef RP_HAVE_EXAMPLES
#include "examples.h"
#endif

static char dir[64], ini[96], xclbin[96];

/* vadd: C[off + x] = A[off + x] + B[off + x] for x < n. The descriptor's
 * parameters (A, B, off, C, n) map to the XRT arguments (A, B, C, n, off):
 * n is a "uint", off a 64-bit scalar. */
RP_KERNEL(vadd_k, {
  uint64_t i = RP_VAL(uint64_t, 2) + RP_X;
  RP_PTR(float, 3)[i] = RP_PTR(const float, 0)[i] + RP_PTR(const float, 1)[i];
})
static const rp_param vadd_params[] = {{"A", RP_IN},
                                       {"B", RP_IN},
                                       {"off", RP_SCALAR},
                                       {"C", RP_OUT},
                                       {"n", RP_SCALAR}};
static const unsigned vadd_map[] = {0, 1, 3, 4, 2};
static const rp_kernel vadd =
    RP_KERNEL_WITH(.name = "vadd", .nparams = 5, .params = vadd_params,
                   .cpu = vadd_k_rp_cpu, .xrt = "vadd", .xrt_argmap = vadd_map,
                   .xrt_nargs = 5);

/* The test xclbin: vadd and matmul with 2 and 3 compute units, and the
 * two kernels of tu_random_graph (named after their descriptors). */
static const rp__xrt_kspec kspec[] = {{"vadd", "gggul", 2},
                                      {"matmul", "ggglll", 3},
                                      {"tu_mix_k", "ggll", 2},
                                      {"tu_bump_k", "gl", 3}};

static void write_file(const char *path, const char *text) {
  FILE *fp = fopen(path, "w");
  cr_assert(fp, "cannot write %s", path);
  fputs(text, fp);
  fclose(fp);
}

static void setup(void) {
  strcpy(dir, "/tmp/rp_test_xrt.XXXXXX");
  cr_assert(mkdtemp(dir));
  snprintf(ini, sizeof ini, "%s/xrt.ini", dir);
  snprintf(xclbin, sizeof xclbin, "%s/test.xclbin", dir);
  /* Silence XRT; give each noop run 20 us so that several are really in
   * flight at once. */
  write_file(ini, "[Runtime]\nruntime_log=null\nverbosity=0\n"
                  "noop_completion_delay_us=20\n");
  setenv("XRT_INI_PATH", ini, 1);
  setenv("RP_XRT_EMULATE", "1", 1);
  unsetenv("RP_XRT_EMU_CUS");
  cr_assert_eq(rp__xrt_xclbin_write(xclbin, kspec, 4), RP_OK);
}

static void teardown(void) {
  char p[128];
  const char *files[] = {"xrt.ini", "test.xclbin", "bad.xclbin"};
  for (unsigned i = 0; i < 3; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, files[i]);
    unlink(p);
  }
  rmdir(dir);
}

TestSuite(xrt, .init = setup, .fini = teardown, .timeout = 60);

static rp_exec *make_exec(const rp_graph *g, const char *path, const char *mode,
                          rp_status want) {
  const rp_backend *be;
  rp_exec *x = NULL;
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.xclbin = path;
  o.mode = mode;
  cr_assert_eq(rp_backend_find("xrt", &be), RP_OK, "%s", rp_last_error());
  rp_status s = rp_exec_create(&x, g, be, &o);
  cr_assert_eq(s, want, "rp_exec_create: %s (%s)", rp_status_name(s),
               rp_last_error());
  return x;
}

static unsigned long cu_total(const rp_exec *x, const char *k, int dev,
                              unsigned *used) {
  unsigned long t = 0;
  *used = 0;
  for (unsigned c = 0; c < rp__xrt_num_cus(x->state, k, dev); c++) {
    unsigned long r = rp__xrt_cu_runs(x->state, k, dev, c);
    t += r;
    *used += r > 0;
  }
  return t;
}

/* 8 independent vadds over chunks of 128 floats. */
static rp_graph *vadd_graph(float *a, float *b, float *c) {
  rp_graph *g;
  rp_buf A, B, C;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, rp_buffer_register(g, "A", a, 1024 * 4, &A));
  TU_OK(g, rp_buffer_register(g, "B", b, 1024 * 4, &B));
  TU_OK(g, rp_buffer_register(g, "C", c, 1024 * 4, &C));
  for (unsigned i = 0; i < 8; i++) {
    rp_arg args[5] = {rp_arg_buf(rp_bytes(A, i * 512, 512)),
                      rp_arg_buf(rp_bytes(B, i * 512, 512)),
                      rp_arg_i64(i * 128),
                      rp_arg_buf(rp_bytes(C, i * 512, 512)), rp_arg_i32(128)};
    TU_OK(g,
          rp_record_kernel(g, &vadd, 0, rp_dims3(128, 1, 1), args, NULL, NULL));
  }
  TU_OK(g, rp_record_sync_host(g, rp_whole(C), NULL));
  TU_OK(g, rp_graph_end(g));
  return g;
}

Test(xrt, vadd_equals_reference_and_uses_every_cu) {
  static float a[1024], b[1024], c[1024], ref[1024];
  for (unsigned i = 0; i < 1024; i++) {
    a[i] = (float)i * 0.5f;
    b[i] = (float)(1024 - i);
    c[i] = -1.0f;
  }
  rp_graph *g = vadd_graph(a, b, c);
  cr_assert_eq(rp_replay_reference(g, 1), RP_OK);
  memcpy(ref, c, sizeof c);
  memset(c, 0xff, sizeof c);
  rp_exec *x = make_exec(g, xclbin, NULL, RP_OK);
  cr_assert_eq(rp_exec_run(x, 3), RP_OK, "%s", rp_exec_error(x));
  cr_assert_eq(memcmp(c, ref, sizeof c), 0);
  for (unsigned i = 0; i < 1024; i++)
    cr_assert_eq(c[i], a[i] + b[i], "C[%u]", i);
  unsigned used;
  cr_assert_eq(cu_total(x, "vadd", 0, &used), 24);
  cr_assert_eq(used, 2, "vadd ran on %u of 2 compute units", used);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(xrt, serial_mode_set_scalar_and_rebind) {
  static float a[1024], b[1024], c[1024], c2[1024], ref[1024];
  for (unsigned i = 0; i < 1024; i++) {
    a[i] = (float)(i % 7 + 1);
    b[i] = (float)(i % 5);
  }
  rp_graph *g = vadd_graph(a, b, c);
  rp_exec *x = make_exec(g, xclbin, "serial", RP_OK);
  rp_exec *r = NULL;
  const rp_backend *refbe;
  cr_assert_eq(rp_backend_find("reference", &refbe), RP_OK);
  cr_assert_eq(rp_exec_create(&r, g, refbe, NULL), RP_OK);
  rp_node k = RP_NONE;
  for (rp_node n = 0; n < rp_graph_num_nodes(g) && k == RP_NONE; n++) {
    rp_node_info ni;
    rp_node_info_get(g, n, &ni);
    if (ni.type == RP_OP_KERNEL)
      k = n;
  }
  /* The first vadd now writes the last chunk: the first chunk of C keeps
   * its zeroed device image. */
  rp_slot v;
  v.u64 = 896;
  cr_assert_eq(rp_exec_set_scalar(x, k, 2, v), RP_OK, "%s", rp_exec_error(x));
  cr_assert_eq(rp_exec_set_scalar(r, k, 2, v), RP_OK);
  cr_assert_eq(rp_exec_rebind(x, 2, c2, sizeof c2), RP_OK, "%s",
               rp_exec_error(x));
  cr_assert_eq(rp_exec_rebind(r, 2, ref, sizeof ref), RP_OK);
  memset(c2, 0xff, sizeof c2);
  memset(ref, 0xee, sizeof ref);
  cr_assert_eq(rp_exec_run(r, 1), RP_OK);
  cr_assert_eq(rp_exec_run(x, 1), RP_OK, "%s", rp_exec_error(x));
  cr_assert_eq(memcmp(c2, ref, sizeof ref), 0);
  cr_assert_eq(c2[5], 0.0f);
  cr_assert_eq(c2[900], a[900] + b[900]);
  unsigned used;
  cr_assert_eq(cu_total(x, "vadd", 0, &used), 8);
  rp_exec_destroy(r);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

#ifdef RP_HAVE_EXAMPLES
Test(xrt, blocked_matmul_equals_reference_and_triple_loop) {
  ex_matmul p = {128, 0};
  size_t nel = (size_t)p.n * p.n;
  float *a = malloc(nel * 4), *b = malloc(nel * 4), *c = malloc(nel * 4);
  float *ref = malloc(nel * 4), *want = malloc(nel * 4);
  rp_graph *g;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, ex_matmul_record(g, &p, a, b, c));
  TU_OK(g, rp_graph_end(g));
  ex_matmul_init(&p, a, b, c);
  memcpy(want, c, nel * 4);
  ex_matmul_check(&p, 2, a, b, want);
  cr_assert_eq(rp_replay_reference(g, 2), RP_OK);
  memcpy(ref, c, nel * 4);
  ex_matmul_init(&p, a, b, c);
  rp_exec *x = make_exec(g, xclbin, NULL, RP_OK);
  cr_assert_eq(rp_exec_run(x, 2), RP_OK, "%s", rp_exec_error(x));
  cr_assert_eq(memcmp(c, ref, nel * 4), 0);
  cr_assert_eq(memcmp(c, want, nel * 4), 0);
  unsigned used;
  cr_assert_eq(cu_total(x, "matmul", 0, &used), 2 * 4 * 4 * 4);
  cr_assert_eq(used, 3, "matmul ran on %u of 3 compute units", used);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(a);
  free(b);
  free(c);
  free(ref);
  free(want);
}

Test(xrt, generated_xclbin_in_emulation) {
  ex_matmul p = {64, 0};
  size_t nel = (size_t)p.n * p.n;
  float *a = malloc(nel * 4), *b = malloc(nel * 4), *c = malloc(nel * 4);
  float *want = malloc(nel * 4);
  rp_graph *g;
  setenv("RP_XRT_EMU_CUS", "4", 1);
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, ex_matmul_record(g, &p, a, b, c));
  TU_OK(g, rp_graph_end(g));
  ex_matmul_init(&p, a, b, c);
  memcpy(want, c, nel * 4);
  ex_matmul_check(&p, 1, a, b, want);
  rp_exec *x = make_exec(g, NULL, NULL, RP_OK);
  cr_assert_eq(rp_exec_run(x, 1), RP_OK, "%s", rp_exec_error(x));
  cr_assert_eq(memcmp(c, want, nel * 4), 0);
  cr_assert_eq(rp__xrt_num_cus(x->state, "matmul", 0), 4);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(a);
  free(b);
  free(c);
  free(want);
}
#endif

/* Random graphs over two devices: kernels, explicit and peer copies, host
 * tasks, after edges, with and without automatic coherence. The xrt
 * backend keeps host and device memory apart, so even copies of stale
 * data give the reference's bytes. */
static void random_case(uint64_t seed, unsigned flags, const char *mode) {
  tu_random r;
  const unsigned nbuf = 4;
  const uint64_t bs = 256;
  cr_assert_eq(tu_random_graph(&r, seed, nbuf, bs, 50, 2, flags, 1), 0);
  TU_OK(r.g, rp_graph_end(r.g));
  cr_assert_eq(rp_replay_reference(r.g, 2), RP_OK);
  uint8_t ref[4][256];
  for (unsigned b = 0; b < nbuf; b++)
    memcpy(ref[b], r.buf[b], bs);
  tu_random_reset(&r, seed);
  rp_exec *x = make_exec(r.g, xclbin, mode, RP_OK);
  cr_assert_eq(rp_exec_run(x, 2), RP_OK, "%s", rp_exec_error(x));
  for (unsigned b = 0; b < nbuf; b++)
    cr_assert_eq(memcmp(ref[b], r.buf[b], bs), 0,
                 "seed %llu flags %u: buffer B%u differs",
                 (unsigned long long)seed, flags, b);
  rp_exec_destroy(x);
  tu_random_free(&r);
}

Test(xrt, random_graphs_equal_reference) {
  for (uint64_t seed = 1; seed <= 24; seed++) {
    random_case(seed, 0, NULL);
    random_case(seed, RP_GRAPH_NO_COHERENCE, seed % 2 ? "dag" : "serial");
  }
}

/* ---- bad input */

static rp_graph *one_kernel_graph(const rp_kernel *k, float *buf) {
  rp_graph *g;
  rp_buf A;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, rp_buffer_register(g, "A", buf, 64, &A));
  rp_arg args[5] = {rp_arg_buf(rp_bytes(A, 0, 16)),
                    rp_arg_buf(rp_bytes(A, 16, 16)), rp_arg_i64(8),
                    rp_arg_buf(rp_bytes(A, 32, 16)), rp_arg_i32(4)};
  TU_OK(g, rp_record_kernel(g, k, 0, rp_dims3(1, 1, 1), args, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  return g;
}

static void expect_error(const rp_kernel *k, const char *path, rp_status want,
                         const char *needle) {
  float buf[16];
  rp_graph *g = one_kernel_graph(k, buf);
  cr_assert_null(make_exec(g, path, NULL, want));
  cr_assert(strstr(rp_last_error(), needle), "message \"%s\" lacks \"%s\"",
            rp_last_error(), needle);
  rp_graph_destroy(g);
}

Test(xrt, missing_xclbin) {
  char path[128];
  snprintf(path, sizeof path, "%s/none.xclbin", dir);
  expect_error(&vadd, path, RP_EIO, "none.xclbin");
}

Test(xrt, invalid_xclbin) {
  char path[128];
  snprintf(path, sizeof path, "%s/bad.xclbin", dir);
  write_file(path, "this is not an xclbin, only text pretending to be one");
  expect_error(&vadd, path, RP_EPARSE, "invalid xclbin");
  write_file(path, "");
  expect_error(&vadd, path, RP_EPARSE, "empty");
}

Test(xrt, unknown_kernel_name) {
  rp_kernel k = vadd;
  k.xrt = "no_such_kernel";
  expect_error(&k, xclbin, RP_ENOTFOUND, "no_such_kernel");
}

Test(xrt, wrong_argument_count) {
  static const unsigned map[] = {0, 1, 3, 4};
  rp_kernel k = vadd;
  k.xrt_argmap = map;
  k.xrt_nargs = 4;
  expect_error(&k, xclbin, RP_EINVAL, "takes 5 arguments");
  k.xrt_argmap = NULL; /* no argument map: its 5 parameters, but the */
  k.xrt_nargs = 0;     /* order is wrong: A, B, off where C is expected */
  expect_error(&k, xclbin, RP_EINVAL, "argument 2 is a buffer");
}

Test(xrt, argument_kind_mismatch) {
  static const unsigned map[] = {0, 1, 3, 3, 2}; /* XRT's n <- C */
  rp_kernel k = vadd;
  k.xrt_argmap = map;
  expect_error(&k, xclbin, RP_EINVAL, "argument 3 is a scalar");
}

/* Without the emulation switch XRT loads its hardware shim; with no card
 * that is ENODEV with a message, not an abort. */
Test(xrt, no_card_is_enodev) {
  unsetenv("RP_XRT_EMULATE");
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("xrt", &be), RP_OK);
  cr_assert_eq(rp_backend_probe(be), RP_ENODEV);
  float buf[16];
  rp_graph *g = one_kernel_graph(&vadd, buf);
  cr_assert_null(make_exec(g, xclbin, NULL, RP_ENODEV));
  cr_assert(strstr(rp_last_error(), "no FPGA device"), "%s", rp_last_error());
  /* The hardware shim is loaded now: asking for the emulation in the same
   * process is refused cleanly too. */
  setenv("RP_XRT_EMULATE", "1", 1);
  cr_assert_null(make_exec(g, xclbin, NULL, RP_ENODEV));
  cr_assert(strstr(rp_last_error(), "already loaded"), "%s", rp_last_error());
  rp_graph_destroy(g);
}

/* ---- mixed device kinds: an FPGA (device 0, emulated) beside CPU cores
 * (device 1) in one graph */

#include "mixed_wl.h"

Test(xrt, mixed_fpga_and_cpu_devices_equal_reference) {
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("xrt", &be), RP_OK);
  mw_check(be, NULL, &tu_mix, &tu_bump, 4);
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  o.mode = "serial";
  mw_check(be, &o, &tu_mix, &tu_bump, 2);
}

Test(xrt, wait_buffer_returns_before_a_blocked_task) {
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("xrt", &be), RP_OK);
  for (unsigned reps = 1; reps <= 3; reps++)
    mw_wait_buffer(be, NULL, &tu_mix, &tu_bump, reps);
}

/* The timeline hook (on the exec's state: the core has no call for it
 * yet): every node starts before it ends, after its predecessors end, and
 * the replay computes what the reference does. */
Test(xrt, timeline_respects_the_plan) {
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("xrt", &be), RP_OK);
  static uint8_t want[MW_NB][MW_BS];
  mw_prog P;
  mw_make(&P, &tu_mix, &tu_bump, 5, 1);
  cr_assert_eq(rp_replay_reference(P.g, 1), RP_OK);
  memcpy(want, P.rec, sizeof want);
  for (rp_buf b = 0; b < MW_NB; b++)
    mw_fill(P.rec[b], 5 + b);
  rp_exec *x;
  cr_assert_eq(rp_exec_create(&x, P.g, be, NULL), RP_OK, "%s", rp_last_error());
  const rp_plan *p = rp_exec_plan(x);
  double *t0 = calloc(p->nnode + 1, sizeof *t0);
  double *t1 = calloc(p->nnode + 1, sizeof *t1);
  cr_assert_not_null(be->timeline);
  cr_assert_eq(be->timeline(x->state, t0, t1), RP_OK, "%s", rp_exec_error(x));
  for (uint32_t v = 0; v < p->nnode; v++) {
    cr_assert(t0[v] >= 0 && t1[v] >= t0[v] && t1[v] > 0, "node %u: %g..%g", v,
              t0[v], t1[v]);
    for (uint32_t i = 0; i < p->node[v].npred; i++)
      cr_assert(t0[v] >= t1[p->pred[p->node[v].pred0 + i]],
                "node %u starts before its predecessor ends", v);
  }
  cr_assert_eq(memcmp(P.rec, want, sizeof want), 0);
  free(t0);
  free(t1);
  rp_exec_destroy(x);
  rp_graph_destroy(P.g);
}
