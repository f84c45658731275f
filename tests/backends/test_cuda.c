/* Tests of the CUDA backend against the sequential reference replay. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cuda_runtime_api.h>
#include "cuda_kernels.h"
#include "rp_cuda_geom.h"
#include "util.h"
#include "cuda_random.h"

static const rp_backend *need_gpu(void) {
  const rp_backend *be = NULL;
  rp_status s = rp_backend_find("cuda", &be);
  if (s != RP_OK)
    cr_skip_test("no CUDA backend: %s", rp_strerror(s));
  s = rp_backend_probe(be);
  if (s != RP_OK)
    cr_skip_test("no CUDA device: %s", rp_strerror(s));
  return be;
}

static rp_exec *mk(const rp_graph *g, const rp_backend *be, const char *mode,
                   const int *map, unsigned nmap) {
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.mode = mode;
  o.device_map = map;
  o.ndevice_map = nmap;
  o.device_fold = 1; /* two logical devices on one GPU */
  rp_exec *x = NULL;
  rp_status s = rp_exec_create(&x, g, be, &o);
  cr_assert_eq(s, RP_OK, "exec (%s): %s: %s", mode ? mode : "graph",
               rp_status_name(s), rp_last_error());
  return x;
}

static void run_ok(rp_exec *x, unsigned it) {
  rp_status s = rp_exec_run(x, it);
  cr_assert_eq(s, RP_OK, "run: %s: %s", rp_status_name(s), rp_exec_error(x));
}

/* A random graph (cuda_random.h) over these kernels, which have CUDA
 * bodies. */
static void random_graph(tu_random *r, uint64_t seed, unsigned nbuf,
                         uint64_t bsize, unsigned nops, unsigned ndev) {
  cuda_random_graph(r, seed, nbuf, bsize, nops, ndev, &tc_mix, &tc_bump,
                    &tc_bump_host);
}

/* What check_random's execs are made with. */
typedef struct random_ctx {
  const rp_backend *be;
  const int *map;
  unsigned nmap;
} random_ctx;

static rp_exec *mk_random(const rp_graph *g, const char *mode, void *ctx) {
  const random_ctx *c = ctx;
  return mk(g, c->be, mode, c->map, c->nmap);
}

/* Replays a random graph with the reference and with cuda in each mode,
 * from the same initial contents, and compares every byte. */
static void check_random(uint64_t seed, unsigned nops, unsigned ndev,
                         const int *map) {
  random_ctx c = {need_gpu(), map, map ? ndev : 0};
  tu_random r;
  random_graph(&r, seed, 4, 4096, nops, ndev);
  cuda_check_random(&r, seed, mk_random, &c);
  tu_random_free(&r);
}

Test(backend_cuda, random_graphs_one_device, .timeout = 120) {
  for (uint64_t seed = 1; seed <= 6; seed++)
    check_random(seed, 40, 1, NULL);
}

Test(backend_cuda, random_graphs_two_logical_devices, .timeout = 120) {
  static const int map[2] = {0, 0};
  for (uint64_t seed = 11; seed <= 14; seed++) {
    check_random(seed, 40, 2, NULL); /* default map: all onto GPU 0 */
    check_random(seed, 40, 2, map);
  }
}

Test(backend_cuda, empty_graph, .timeout = 30) {
  const rp_backend *be = need_gpu();
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = mk(g, be, NULL, NULL, 0);
  run_ok(x, 5);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* h2d, bump, d2h of one byte buffer. */
static rp_graph *bump_graph(uint8_t *h, uint64_t n, uint64_t off, rp_node *kn) {
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "A", h, n, &b));
  rp_arg args[2] = {rp_arg_buf(rp_bytes(b, off, n - off)), rp_arg_i64(0)};
  args[1].value.u64 = off;
  TU_OK(g, rp_record_kernel(g, &tc_bump, 0, rp_dims3(n - off, 1, 1), args, NULL,
                            kn));
  TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
  TU_OK(g, rp_graph_end(g));
  return g;
}

Test(backend_cuda, thousand_replays, .timeout = 60) {
  const rp_backend *be = need_gpu();
  enum { N = 1000 };
  uint8_t h[N], want[N];
  for (unsigned i = 0; i < N; i++)
    h[i] = want[i] = (uint8_t)(i * 7);
  for (unsigned it = 0; it < 1000; it++)
    for (unsigned i = 0; i < N; i++)
      want[i] = (uint8_t)(want[i] * 5 + 7);
  rp_graph *g = bump_graph(h, N, 0, NULL);
  rp_exec *x = mk(g, be, NULL, NULL, 0);
  run_ok(x, 1000);
  cr_assert_eq(memcmp(h, want, N), 0, "after 1000 replays");
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(backend_cuda, rebind_and_set_scalar, .timeout = 60) {
  const rp_backend *be = need_gpu();
  static const char *modes[] = {"graph", "streams", "serial"};
  enum { N = 4096 };
  for (unsigned m = 0; m < 3; m++) {
    uint8_t *h1 = malloc(N), *h2 = malloc(N), *w = malloc(N);
    for (unsigned i = 0; i < N; i++) {
      h1[i] = (uint8_t)i;
      h2[i] = (uint8_t)(i * 3 + 1);
    }
    rp_node kn;
    rp_graph *g = bump_graph(h1, N, 0, &kn);
    rp_exec *x = mk(g, be, modes[m], NULL, 0);
    run_ok(x, 1);
    for (unsigned i = 0; i < N; i++)
      cr_assert_eq(h1[i], (uint8_t)((uint8_t)i * 5 + 7), "%s: h1", modes[m]);
    memcpy(w, h1, N);
    TU_OK(NULL, rp_exec_rebind(x, 0, h2, N));
    run_ok(x, 1);
    cr_assert_eq(memcmp(h1, w, N), 0, "%s: old image touched", modes[m]);
    for (unsigned i = 0; i < N; i++)
      cr_assert_eq(h2[i], (uint8_t)((uint8_t)(i * 3 + 1) * 5 + 7), "%s: h2[%u]",
                   modes[m], i);
    rp_exec_destroy(x);
    rp_graph_destroy(g);

    /* set_scalar: a kernel over [0, N/2) with offset 0, then N/2; as a
     * kernel node and as a captured host wrapper. */
    const rp_kernel *ks[2] = {&tc_bump, &tc_bump_host};
    for (unsigned k = 0; k < 2; k++) {
      for (unsigned i = 0; i < N; i++)
        h1[i] = (uint8_t)i;
      rp_graph *g2;
      rp_buf b;
      TU_OK(NULL, rp_graph_create(&g2, 0));
      TU_OK(g2, rp_buffer_register(g2, "A", h1, N, &b));
      rp_arg args[2] = {rp_arg_buf(rp_whole(b)), rp_arg_i64(0)};
      TU_OK(g2, rp_record_kernel(g2, ks[k], 0, rp_dims3(N / 2, 1, 1), args,
                                 NULL, &kn));
      TU_OK(g2, rp_record_sync_host(g2, rp_whole(b), NULL));
      TU_OK(g2, rp_graph_end(g2));
      x = mk(g2, be, modes[m], NULL, 0);
      rp_slot off = {.u64 = N / 2};
      TU_OK(NULL, rp_exec_set_scalar(x, kn, 1, off));
      run_ok(x, 1);
      for (unsigned i = 0; i < N; i++)
        cr_assert_eq(h1[i],
                     i < N / 2 ? (uint8_t)i : (uint8_t)((uint8_t)i * 5 + 7),
                     "%s, %s: set_scalar h1[%u]", modes[m], ks[k]->name, i);
      rp_exec_destroy(x);
      rp_graph_destroy(g2);
    }
    free(h1);
    free(h2);
    free(w);
  }
}

/* A rebind to an array that cannot be pinned (read-only pages): the copy
 * nodes now read pageable memory. Whether the driver updates them in
 * place or refuses (then the backend instantiates the graph again and
 * says so), the results follow the new array, in both update paths. */
Test(backend_cuda, rebind_to_unpinnable_memory, .timeout = 60) {
  const rp_backend *be = need_gpu();
  enum { N = 8192 };
  static const char *ups[] = {"node", "graph"};
  for (unsigned u = 0; u < 2; u++) {
    uint8_t *h1 = malloc(N), *out = malloc(N);
    uint8_t *ro = mmap(NULL, N, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(ro, MAP_FAILED);
    for (unsigned i = 0; i < N; i++) {
      h1[i] = (uint8_t)i;
      ro[i] = (uint8_t)(i * 7 + 3);
    }
    cr_assert_eq(mprotect(ro, N, PROT_READ), 0);
    rp_graph *g;
    rp_buf a, c;
    TU_OK(NULL, rp_graph_create(&g, 0));
    TU_OK(g, rp_buffer_register(g, "A", h1, N, &a));
    TU_OK(g, rp_buffer_register(g, "C", out, N, &c));
    rp_arg args[4] = {rp_arg_buf(rp_whole(a)), rp_arg_buf(rp_whole(c)),
                      rp_arg_i64(0), rp_arg_i64(0)};
    TU_OK(g,
          rp_record_kernel(g, &tc_mix, 0, rp_dims3(N, 1, 1), args, NULL, NULL));
    TU_OK(g, rp_record_sync_host(g, rp_whole(c), NULL));
    TU_OK(g, rp_graph_end(g));
    rp_exec_opts o = RP_EXEC_OPTS_INIT;
    o.cuda_update = ups[u];
    rp_exec *x = NULL;
    TU_OK(g, rp_exec_create(&x, g, be, &o));
    memset(out, 0, N);
    run_ok(x, 1);
    for (unsigned i = 0; i < N; i++)
      cr_assert_eq(out[i], (uint8_t)((uint8_t)i + 1));
    TU_OK(g, rp_exec_rebind(x, a, ro, N));
    memset(out, 0, N);
    run_ok(x, 1);
    cr_log_info("%s: %s", ups[u],
                rp_exec_error(x)[0] ? rp_exec_error(x) : "updated in place");
    for (unsigned i = 0; i < N; i++)
      cr_assert_eq(out[i], (uint8_t)((uint8_t)(i * 7 + 3) + 1),
                   "%s: out[%u] = %u", ups[u], i, out[i]);
    TU_OK(g, rp_exec_rebind(x, a, h1, N));
    memset(out, 0, N);
    run_ok(x, 1);
    for (unsigned i = 0; i < N; i++)
      cr_assert_eq(out[i], (uint8_t)((uint8_t)i + 1));
    rp_exec_destroy(x);
    rp_graph_destroy(g);
    munmap(ro, N);
    free(h1);
    free(out);
  }
}

/* A rebind behind a 3-d (partial box) memcpy node, which CUDA does not
 * update in place: the backend instantiates the graph again (and notes
 * it); results follow the new array in both update paths. */
Test(backend_cuda, rebind_behind_a_box_copy, .timeout = 60) {
  const rp_backend *be = need_gpu();
  enum { R = 37, C = 53 };
  static const char *ups[] = {"node", "graph"};
  float *h = malloc(sizeof(float) * R * C);
  float *h2 = malloc(sizeof(float) * R * C);
  for (unsigned u = 0; u < 2; u++) {
    rp_graph *g;
    rp_buf b;
    TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
    TU_OK(g, rp_buffer_register_2d(g, "M", h, R, C, sizeof(float), &b));
    TU_OK(g, rp_record_copy_to_device(g, rp_whole(b), 0, NULL, NULL));
    rp_arg args[2] = {rp_arg_buf(rp_whole(b)), rp_arg_i64(C)};
    TU_OK(g, rp_record_kernel(g, &tc_grid2, 0, rp_dims3(C, R, 1), args, NULL,
                              NULL));
    TU_OK(g,
          rp_record_copy_to_host(g, rp_box2(b, 4, 29, 6, 40), 0, NULL, NULL));
    TU_OK(g, rp_graph_end(g));
    rp_exec_opts o = RP_EXEC_OPTS_INIT;
    o.cuda_update = ups[u];
    rp_exec *x = NULL;
    TU_OK(g, rp_exec_create(&x, g, be, &o));
    for (unsigned i = 0; i < R * C; i++)
      h[i] = (float)(i % 97);
    run_ok(x, 1);
    for (unsigned i = 0; i < R * C; i++)
      h2[i] = (float)(i % 89);
    TU_OK(g, rp_exec_rebind(x, b, h2, sizeof(float) * R * C));
    run_ok(x, 1);
    cr_log_info("box rebind, %s: %s", ups[u],
                rp_exec_error(x)[0] ? rp_exec_error(x) : "updated in place");
    for (unsigned i = 0; i < R * C; i++) /* the reference, on h */
      h[i] = (float)(i % 89);
    TU_OK(g, rp_replay_reference(g, 1));
    cr_assert_eq(memcmp(h2, h, sizeof(float) * R * C), 0, "%s", ups[u]);
    rp_exec_destroy(x);
    rp_graph_destroy(g);
  }
  free(h);
  free(h2);
}

/* bump A, then the invalid kernel on B, then bump C. */
static rp_graph *bad_graph(uint8_t *a, uint8_t *b, uint8_t *c) {
  rp_graph *g;
  rp_buf ba, bb, bc;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "A", a, 64, &ba));
  TU_OK(g, rp_buffer_register(g, "B", b, 64, &bb));
  TU_OK(g, rp_buffer_register(g, "C", c, 64, &bc));
  rp_arg args[2] = {rp_arg_buf(rp_whole(ba)), rp_arg_i64(0)};
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "good_a");
  TU_OK(g,
        rp_record_kernel(g, &tc_bump, 0, rp_dims3(64, 1, 1), args, &o, NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(ba), NULL));
  args[0] = rp_arg_buf(rp_whole(bb));
  o.name = "the_bad_launch";
  TU_OK(g, rp_record_kernel(g, &tc_bad, 0, rp_dims3(64, 1, 1), args, &o, NULL));
  args[0] = rp_arg_buf(rp_whole(bc));
  o.name = "good_c";
  TU_OK(g,
        rp_record_kernel(g, &tc_bump, 0, rp_dims3(64, 1, 1), args, &o, NULL));
  for (rp_buf i = 0; i < 3; i++)
    TU_OK(g, rp_record_sync_host(g, rp_whole(i), NULL));
  TU_OK(g, rp_graph_end(g));
  return g;
}

Test(backend_cuda, failing_launch_names_the_op, .timeout = 60) {
  const rp_backend *be = need_gpu();
  uint8_t a[64], b[64], c[64];
  memset(a, 1, 64);
  memset(b, 1, 64);
  memset(c, 1, 64);
  rp_graph *g = bad_graph(a, b, c);
  /* Graph mode checks launch shapes when building the graph. */
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  rp_exec *x = NULL;
  cr_assert_eq(rp_exec_create(&x, g, be, &o), RP_EBACKEND);
  cr_assert_null(x);
  cr_assert_not_null(strstr(rp_last_error(), "the_bad_launch"), "%s",
                     rp_last_error());
  /* Serial and streams modes fail at the launch, and stop there: what
   * came before ran, what came after did not. */
  static const char *modes[] = {"serial", "streams"};
  for (unsigned m = 0; m < 2; m++) {
    memset(a, 1, 64);
    memset(c, 1, 64);
    x = mk(g, be, modes[m], NULL, 0);
    cr_assert_eq(rp_exec_run(x, 1), RP_EBACKEND, "%s", modes[m]);
    cr_assert_not_null(strstr(rp_exec_error(x), "the_bad_launch"), "%s",
                       rp_exec_error(x));
    cr_assert_eq(a[5], 12, "%s: A was bumped and copied back", modes[m]);
    cr_assert_eq(c[5], 1, "%s: C was not touched", modes[m]);
    rp_exec_destroy(x);
  }
  rp_graph_destroy(g);
  /* The device is still usable. */
  uint8_t h[256];
  for (unsigned i = 0; i < 256; i++)
    h[i] = (uint8_t)i;
  g = bump_graph(h, 256, 0, NULL);
  x = mk(g, be, NULL, NULL, 0);
  run_ok(x, 1);
  cr_assert_eq(h[3], 22);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* A 2-d buffer: a box copied in, a 2-d kernel over the whole, a box
 * copied out, a peer copy between two logical devices on one GPU. */
Test(backend_cuda, boxes_and_peer_copies, .timeout = 60) {
  const rp_backend *be = need_gpu();
  enum { R = 37, C = 53 };
  static const char *modes[] = {"graph", "streams", "serial"};
  static const int map[2] = {0, 0};
  float *h = malloc(sizeof(float) * R * C), *w = malloc(sizeof(float) * R * C);
  for (unsigned m = 0; m < 3; m++) {
    rp_graph *g;
    rp_buf b;
    TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
    TU_OK(g, rp_buffer_register_2d(g, "M", h, R, C, sizeof(float), &b));
    TU_OK(g, rp_record_copy_to_device(g, rp_whole(b), 0, NULL, NULL));
    rp_arg args[2] = {rp_arg_buf(rp_whole(b)), rp_arg_i64(C)};
    TU_OK(g, rp_record_kernel(g, &tc_grid2, 0, rp_dims3(C, R, 1), args, NULL,
                              NULL));
    TU_OK(g,
          rp_record_copy_peer(g, rp_box2(b, 3, 30, 5, 41), 0, 1, NULL, NULL));
    TU_OK(g, rp_record_kernel(g, &tc_grid2, 1, rp_dims3(C, R, 1), args, NULL,
                              NULL));
    TU_OK(g,
          rp_record_copy_to_host(g, rp_box2(b, 4, 29, 6, 40), 1, NULL, NULL));
    TU_OK(g, rp_graph_end(g));
    for (unsigned i = 0; i < R * C; i++)
      h[i] = (float)(i % 97);
    TU_OK(g, rp_replay_reference(g, 2));
    memcpy(w, h, sizeof(float) * R * C);
    for (unsigned i = 0; i < R * C; i++)
      h[i] = (float)(i % 97);
    rp_exec *x = mk(g, be, modes[m], map, 2);
    run_ok(x, 2);
    cr_assert_eq(memcmp(h, w, sizeof(float) * R * C), 0, "mode %s", modes[m]);
    double op_us[5] = {-1, -1, -1, -1, -1};
    TU_OK(NULL, rp_exec_profile(x, op_us));
    for (unsigned i = 0; i < 5; i++)
      cr_assert(op_us[i] > 0, "op %u timed %g us", i, op_us[i]);
    rp_exec_destroy(x);
    rp_graph_destroy(g);
  }
  free(h);
  free(w);
}

Test(backend_cuda, auto_picks_cuda, .timeout = 30) {
  need_gpu();
  if (getenv("RP_BACKEND"))
    cr_skip_test("RP_BACKEND is set");
  const rp_backend *be = NULL;
  TU_OK(NULL, rp_backend_find("auto", &be));
  cr_assert_str_eq(rp_backend_name(be), "cuda");
}

#ifdef RP_HAVE_EXAMPLES
#include <math.h>
#include "examples.h"

/* Replays ended graph g `it` times with the reference and with cuda in
 * each mode, from the same data (init), and compares every host buffer as
 * doubles. GPU code contracts a * b + c into one FMA where the CPU does
 * not, so results agree to rounding, not bit for bit. */
static void check_example(rp_graph *g, void (*init)(const void *),
                          const void *ctx, unsigned it) {
  const rp_backend *be = need_gpu();
  static const char *modes[] = {"graph", "streams", "serial"};
  uint32_t nb = rp_graph_num_buffers(g);
  double **want = calloc(nb, sizeof *want);
  init(ctx);
  TU_OK(g, rp_replay_reference(g, it));
  for (rp_buf b = 0; b < nb; b++) {
    rp_buffer_desc d;
    TU_OK(g, rp_buffer_info(g, b, &d));
    if (!d.host)
      continue;
    want[b] = malloc(d.bytes);
    memcpy(want[b], d.host, d.bytes);
  }
  for (unsigned m = 0; m < 3; m++) {
    init(ctx);
    rp_exec *x = mk(g, be, modes[m], NULL, 0);
    run_ok(x, it);
    for (rp_buf b = 0; b < nb; b++) {
      rp_buffer_desc d;
      rp_buffer_info(g, b, &d);
      const double *got = d.host;
      for (uint64_t i = 0; want[b] && i < d.bytes / sizeof(double); i++)
        cr_assert(fabs(got[i] - want[b][i]) <=
                      1e-9 * fmax(1.0, fabs(want[b][i])),
                  "%s: %s[%llu] = %.17g, reference %.17g", modes[m], d.name,
                  (unsigned long long)i, got[i], want[b][i]);
    }
    rp_exec_destroy(x);
  }
  for (rp_buf b = 0; b < nb; b++)
    free(want[b]);
  free(want);
}

static double ex_a[128 * 128], ex_b[128 * 128], ex_c[128 * 128],
    ex_d[128 * 128], ex_e[128 * 128];

static void jacobi_init(const void *p) {
  ex_jacobi2d_init(p, ex_a, ex_b, ex_c);
}
Test(backend_cuda, example_jacobi2d, .timeout = 60) {
  need_gpu();
  ex_jacobi2d p = {96, 6, 2, 4, 0, 0};
  cr_assert(ex_jacobi2d_nsums(&p) <= 128 * 128);
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_jacobi2d_record(g, &p, ex_a, ex_b, ex_c));
  TU_OK(g, rp_graph_end(g));
  check_example(g, jacobi_init, &p, 3);
  rp_graph_destroy(g);
}

static void matpow_init(const void *p) { ex_matpow_init(p, ex_a, ex_b, ex_c); }
Test(backend_cuda, example_matpow, .timeout = 60) {
  need_gpu();
  ex_matpow p = {64, 4, 4, 0};
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_matpow_record(g, &p, ex_a, ex_b, ex_c));
  TU_OK(g, rp_graph_end(g));
  check_example(g, matpow_init, &p, 2);
  rp_graph_destroy(g);
}

static void recurrence_init(const void *p) { ex_recurrence_init(p, ex_a); }
Test(backend_cuda, example_recurrence, .timeout = 60) {
  need_gpu();
  ex_recurrence p = {100, 120, 5, 3, 8, 3.7, 0.01, 0};
  rp_graph *g;
  rp_node first;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_recurrence_record(g, &p, ex_a, &first));
  TU_OK(g, rp_graph_end(g));
  check_example(g, recurrence_init, &p, 2);
  rp_graph_destroy(g);
}

static void bs_init(const void *p) {
  ex_blackscholes_init(p, ex_a, ex_b, ex_c);
}
Test(backend_cuda, example_blackscholes, .timeout = 60) {
  need_gpu();
  ex_blackscholes p = {10000, 8, 0.02, 0.3, 0};
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_blackscholes_record(g, &p, ex_a, ex_b, ex_c, ex_d, ex_e));
  TU_OK(g, rp_graph_end(g));
  check_example(g, bs_init, &p, 2);
  rp_graph_destroy(g);
}
#endif

/* tc_grid2 over a cols x rows space with kernel @p k; checks the result
 * against the reference and returns the geometry of the kernel node. */
static rp_kernel_block grid2_block(const rp_backend *be, const rp_kernel *k,
                                   unsigned rows, unsigned cols) {
  float *h = malloc(sizeof(float) * rows * cols);
  float *w = malloc(sizeof(float) * rows * cols);
  cr_assert(h && w);
  rp_graph *g;
  rp_buf b;
  rp_node kn, cn;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register_2d(g, "M", h, rows, cols, sizeof(float), &b));
  rp_arg args[2] = {rp_arg_buf(rp_whole(b)), rp_arg_i64(cols)};
  TU_OK(g, rp_record_kernel(g, k, 0, rp_dims3(cols, rows, 1), args, NULL, &kn));
  TU_OK(g, rp_record_sync_host(g, rp_whole(b), &cn));
  TU_OK(g, rp_graph_end(g));
  for (unsigned i = 0; i < rows * cols; i++)
    h[i] = (float)(i % 89);
  TU_OK(g, rp_replay_reference(g, 3));
  memcpy(w, h, sizeof(float) * rows * cols);
  for (unsigned i = 0; i < rows * cols; i++)
    h[i] = (float)(i % 89);
  rp_exec *x = mk(g, be, NULL, NULL, 0);
  run_ok(x, 3);
  cr_assert_eq(memcmp(h, w, sizeof(float) * rows * cols), 0,
               "results differ from the reference");
  rp_kernel_block kb;
  memset(&kb, 0, sizeof kb);
  cr_assert_eq(rp_exec_kernel_block(x, kn, &kb), RP_OK, "%s", rp_exec_error(x));
  rp_kernel_block other;
  if (cn != kn)
    cr_assert_eq(rp_exec_kernel_block(x, cn, &other), RP_EINVAL);
  cr_assert_eq(rp_exec_kernel_block(x, kn, NULL), RP_EINVAL);
  uint64_t n[3] = {cols, rows, 1};
  for (int i = 0; i < 3; i++)
    cr_assert(kb.grid[i] * (uint64_t)kb.block[i] >= n[i] &&
                  (kb.grid[i] - 1) * (uint64_t)kb.block[i] < n[i],
              "axis %d: grid %u x block %u over %llu", i, kb.grid[i],
              kb.block[i], (unsigned long long)n[i]);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(h);
  free(w);
  return kb;
}

/* The threads the backend should choose for tc_grid2 with @p hint: the
 * occupancy API over the candidates, as rp_cuda_geom.h says. */
static unsigned expected_threads(unsigned hint, double *occ) {
  struct cudaFuncAttributes fa;
  int smt = 0, dev = 0, blocks[RP_CU_NCAND] = {0};
  cr_assert_eq(cudaGetDevice(&dev), cudaSuccess);
  cr_assert_eq(cudaFuncGetAttributes(&fa, tc_grid2.cuda), cudaSuccess);
  cr_assert_eq(
      cudaDeviceGetAttribute(&smt, cudaDevAttrMaxThreadsPerMultiProcessor, dev),
      cudaSuccess);
  unsigned nc = 0;
  while (nc < RP_CU_NCAND &&
         rp__cu_cand[nc] <= (unsigned)fa.maxThreadsPerBlock) {
    cr_assert_eq(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                     &blocks[nc], tc_grid2.cuda, (int)rp__cu_cand[nc], 0),
                 cudaSuccess);
    nc++;
  }
  return rp__cu_pick_threads(blocks, nc, smt, hint, occ);
}

Test(backend_cuda, launch_geometry_by_occupancy, .timeout = 60) {
  const rp_backend *be = need_gpu();
  static const unsigned hints[3] = {0, RP_HINT_MEMORY_BOUND,
                                    RP_HINT_COMPUTE_BOUND};
  static const char *why[3] = {"occupancy", "occupancy, memory-bound",
                               "occupancy, compute-bound"};
  for (unsigned h = 0; h < 3; h++) {
    rp_kernel k = tc_grid2;
    k.hint = hints[h];
    double occ = -1;
    unsigned t = expected_threads(hints[h], &occ);
    cr_assert(t >= 64 && t <= 1024, "threads %u", t);
    unsigned want[3];
    uint64_t n[3] = {1000, 700, 1};
    rp__cu_shape(t, n, want);
    rp_kernel_block kb = grid2_block(be, &k, 700, 1000);
    cr_assert(kb.block[0] == want[0] && kb.block[1] == want[1] &&
                  kb.block[2] == want[2],
              "hint %u: %ux%ux%u, expected %ux%ux%u", hints[h], kb.block[0],
              kb.block[1], kb.block[2], want[0], want[1], want[2]);
    cr_assert_eq(kb.block[0], 32, "a 2-d space gets warp-wide rows");
    cr_assert_float_eq(kb.occupancy, occ, 1e-12);
    cr_assert(kb.occupancy > 0 && kb.occupancy <= 1);
    cr_assert_str_eq(kb.reason, why[h]);
  }
  /* a small space: the block shrinks to what it needs */
  rp_kernel_block kb = grid2_block(be, &tc_grid2, 3, 20);
  cr_assert(kb.block[0] == 32 && kb.block[1] <= 4 && kb.block[2] == 1,
            "%ux%ux%u", kb.block[0], kb.block[1], kb.block[2]);
}

Test(backend_cuda, launch_geometry_given_by_the_user, .timeout = 60) {
  const rp_backend *be = need_gpu();
  rp_kernel k = tc_grid2;
  k.block[0] = 16;
  k.block[1] = 16;
  rp_kernel_block kb = grid2_block(be, &k, 70, 100);
  cr_assert(kb.block[0] == 16 && kb.block[1] == 16 && kb.block[2] == 1);
  cr_assert_str_eq(kb.reason, "kernel's own");
  cr_assert(kb.occupancy < 0);
  cr_assert_eq(setenv("RP_CUDA_BLOCK", "64,2", 1), 0);
  kb = grid2_block(be, &tc_grid2, 70, 100);
  cr_assert(kb.block[0] == 64 && kb.block[1] == 2 && kb.block[2] == 1);
  cr_assert_str_eq(kb.reason, "RP_CUDA_BLOCK");
  kb = grid2_block(be, &k, 70, 100); /* the kernel's own still wins */
  cr_assert(kb.block[0] == 16 && kb.block[1] == 16);
  unsetenv("RP_CUDA_BLOCK");
}

Test(backend_cuda, launch_geometry_of_a_host_wrapper, .timeout = 30) {
  const rp_backend *be = need_gpu();
  enum { N = 300 };
  uint8_t h[N];
  memset(h, 1, N);
  rp_graph *g;
  rp_buf b;
  rp_node kn;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "A", h, N, &b));
  rp_arg args[2] = {rp_arg_buf(rp_whole(b)), rp_arg_i64(0)};
  TU_OK(g, rp_record_kernel(g, &tc_bump_host, 0, rp_dims3(N, 1, 1), args, NULL,
                            &kn));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = mk(g, be, NULL, NULL, 0);
  rp_kernel_block kb;
  cr_assert_eq(rp_exec_kernel_block(x, kn, &kb), RP_ENOTSUP);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* The argument table (issue 28): K kernels, each bumping its own block
 * whose offset is a scalar; every round moves every kernel to another
 * block with rp_exec_set_scalar and replays. The default (auto: a node
 * moves to the table at its first change, then one copy of the dirty
 * entries before the launch), the table from instantiate, CUDA's per-node
 * setters and the whole-graph update agree with a plain C run, in graph
 * mode and in the device loop's graph (rounds 1 and 2 run two replays
 * through rp_exec_run_until with a predicate that never holds: the loop
 * graph is built after the nodes moved, then reads the table). */
Test(backend_cuda, set_scalar_through_the_argument_table, .timeout = 60) {
  const rp_backend *be = need_gpu();
  enum { K = 24, B = 64, N = K * B };
  static const char *upd[] = {NULL, "table", "node", "graph"};
  /* the first int32 of A below any int32: never */
  const rp_until never = {0, 0, RP_UNTIL_I32, RP_UNTIL_LT, -3e9};
  for (unsigned u = 0; u < 4; u++) {
    uint8_t *h = malloc(N), *want = malloc(N);
    for (unsigned i = 0; i < N; i++)
      h[i] = want[i] = (uint8_t)(i * 7 + 3);
    rp_graph *g;
    rp_buf b;
    rp_node kn[K];
    TU_OK(NULL, rp_graph_create(&g, 0));
    TU_OK(g, rp_buffer_register(g, "A", h, N, &b));
    for (unsigned k = 0; k < K; k++) {
      rp_arg args[2] = {rp_arg_buf(rp_whole(b)), rp_arg_i64(k * B)};
      TU_OK(g, rp_record_kernel(g, &tc_bump, 0, rp_dims3(B, 1, 1), args, NULL,
                                &kn[k]));
    }
    TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
    TU_OK(g, rp_graph_end(g));
    rp_exec_opts o = RP_EXEC_OPTS_INIT;
    o.cuda_update = upd[u];
    rp_exec *x;
    cr_assert_eq(rp_exec_create(&x, g, be, &o), RP_OK, "%s", rp_last_error());
    for (unsigned round = 0; round < 4; round++) {
      unsigned reps = round == 1 || round == 2 ? 2 : 1;
      for (unsigned k = 0; k < K; k++) {
        unsigned blk = (k * 5 + round * 3) % K;
        rp_slot off = {.u64 = (uint64_t)blk * B};
        if (round)
          TU_OK(NULL, rp_exec_set_scalar(x, kn[k], 1, off));
        else
          blk = k;
        for (unsigned r = 0; r < reps; r++)
          for (unsigned i = 0; i < B; i++)
            want[blk * B + i] = (uint8_t)(want[blk * B + i] * 5 + 7);
      }
      if (reps == 2) {
        unsigned done = 0;
        TU_OK(NULL, rp_exec_run_until(x, &never, 2, 1, &done));
        cr_assert_eq(done, 2);
      } else {
        run_ok(x, 1);
      }
      cr_assert(!memcmp(h, want, N), "update %s, round %u: differs",
                upd[u] ? upd[u] : "default", round);
    }
    rp_exec_destroy(x);
    rp_graph_destroy(g);
    free(h);
    free(want);
  }
}
