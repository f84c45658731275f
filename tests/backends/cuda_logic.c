/* The cuda backend's logic without a GPU: backends/cuda's sources against
 * the fake CUDA runtime of fake_cudart.c, which runs graphs on the host (a
 * random order their edges allow) and counts the calls made. Results are
 * checked against the expected bytes (or the reference replay); the
 * counts say how an update reached the executable graph: CUDA's setter
 * per node, the argument table's one copy, a whole-graph update. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "fake_cudart.h"
#include "reprise/backend.h"
#include "util.h"
#include "cuda_random.h"
#include "cuda_logic.h"

extern const rp_backend rp_backend_cuda;

/* tests/util.h's tu_mix and tu_bump with "device entries": their
 * addresses name them to the fake runtime, which runs each through the
 * kernel's CPU body, by value (the whole block or packed to the kernel's
 * parameters, as RP_KERNEL_DESC makes them) or by pointer. */
static char val_mix, ind_mix, pk_mix, val_bump, ind_bump, pk_bump;
static const rp_cuda_args mix_pair = {&val_mix, &ind_mix, &pk_mix, 4};
static const rp_cuda_args bump_pair = {&val_bump, &ind_bump, &pk_bump, 2};
static rp_kernel k_mix, k_bump;

static void setup(void) {
  fk_kernel_pair(&k_mix, &tu_mix, &mix_pair);
  fk_kernel_pair(&k_bump, &tu_bump, &bump_pair);
  fk_devices(1);
  fk_reset();
}

TestSuite(cuda_logic, .init = setup);

rp_exec *cl_mk(const rp_graph *g, rp_exec_opts *o) {
  rp_exec *x = NULL;
  rp_status s = rp_exec_create(&x, g, &rp_backend_cuda, o);
  cr_assert_eq(s, RP_OK, "exec: %s: %s", rp_status_name(s), rp_last_error());
  return x;
}

void cl_run_ok(rp_exec *x) {
  rp_status s = rp_exec_run(x, 1);
  cr_assert_eq(s, RP_OK, "run: %s: %s", rp_status_name(s), rp_exec_error(x));
}

/* Destroys x and g: nothing of the runtime's is left alive. */
void cl_done(rp_exec *x, rp_graph *g) {
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  cr_expect_eq(fk_live(), 0, "%ld runtime objects left", fk_live());
}

/* K bump kernels over one buffer of K blocks of B bytes, kernel k on
 * block k (its offset a scalar), the buffer synced home. */
enum { K = 24, B = 64, N = K * B };
typedef struct bumps {
  rp_graph *g;
  rp_node kn[K];
  uint8_t h[N], want[N];
  unsigned blk[K];
} bumps;

static void bumps_make(bumps *t) {
  rp_buf b;
  for (unsigned i = 0; i < N; i++)
    t->h[i] = t->want[i] = (uint8_t)(i * 7 + 3);
  TU_OK(NULL, rp_graph_create(&t->g, 0));
  TU_OK(t->g, rp_buffer_register(t->g, "A", t->h, N, &b));
  for (unsigned k = 0; k < K; k++) {
    rp_arg args[2] = {rp_arg_buf(rp_whole(b)), rp_arg_i64(k * B)};
    TU_OK(t->g, rp_record_kernel(t->g, &k_bump, 0, rp_dims3(B, 1, 1), args,
                                 NULL, &t->kn[k]));
    t->blk[k] = k;
  }
  TU_OK(t->g, rp_record_sync_host(t->g, rp_whole(b), NULL));
  TU_OK(t->g, rp_graph_end(t->g));
}

/* One round: the kernels with bit k of `which` set move to another block
 * (set_scalar), then one replay; the buffer must hold what the kernels
 * did. */
static void bumps_round(bumps *t, rp_exec *x, unsigned round, uint32_t which) {
  for (unsigned k = 0; k < K; k++) {
    if (which >> k & 1) {
      t->blk[k] = (k * 5 + round * 3) % K;
      rp_slot off = {.u64 = (uint64_t)t->blk[k] * B};
      TU_OK(NULL, rp_exec_set_scalar(x, t->kn[k], 1, off));
    }
    for (unsigned i = 0; i < B; i++) {
      uint8_t *w = &t->want[t->blk[k] * B + i];
      *w = (uint8_t)(*w * 5 + 7);
    }
  }
  cl_run_ok(x);
  cr_assert(!memcmp(t->h, t->want, N), "round %u: the buffer differs", round);
}

static unsigned popcount(uint32_t v) {
  unsigned c = 0;
  for (; v; v &= v - 1)
    c++;
  return c;
}

/* The default (auto): every kernel node takes its block by value; the
 * first set_scalar of a node moves it to the argument table (one CUDA
 * setter, once), after which its changes go over in the one copy of the
 * table's dirty entries, with no setter. */
Test(cuda_logic, auto_moves_a_node_to_the_table_once) {
  bumps t;
  bumps_make(&t);
  rp_exec *x = cl_mk(t.g, NULL);
  cr_expect_eq(fk_exec_kernels(&pk_bump), K, "by value, packed");
  cr_expect_eq(fk_exec_kernels(&ind_bump), 0);
  cr_expect_eq(fk.dev_malloc_bytes, N,
               "the image alone at instantiate: %zu bytes on the device",
               fk.dev_malloc_bytes);
  bumps_round(&t, x, 0, 0);
  const uint32_t even = 0x555555, all = (1u << K) - 1;
  /* round, nodes changed, setters expected, table entries copied */
  const struct {
    uint32_t which;
    unsigned setters, entries;
  } r[] = {{even, K / 2, K - 1},       /* the even nodes move */
           {all, K / 2, K},            /* the odd ones move */
           {all, 0, K},                /* all in the table: no setter */
           {1u << 3 | 1u << 7, 0, 5}}; /* the span of entries 3 .. 7 */
  for (unsigned i = 0; i < sizeof r / sizeof r[0]; i++) {
    fk_reset();
    bumps_round(&t, x, i + 1, r[i].which);
    cr_expect_eq(fk.exec_kernel_set, r[i].setters, "round %u: %u setters",
                 i + 1, fk.exec_kernel_set);
    cr_expect_eq(fk.memcpy_async, 1, "round %u: %u copies", i + 1,
                 fk.memcpy_async);
    cr_expect_eq(fk.memcpy_async_bytes, r[i].entries * sizeof(rp_kargs),
                 "round %u: %zu bytes of the table", i + 1,
                 fk.memcpy_async_bytes);
    cr_expect_eq(fk.instantiate + fk.exec_update, 0);
  }
  cr_expect_eq(fk_exec_kernels(&ind_bump), K);
  cr_expect_eq(fk_exec_kernels(&pk_bump), 0);
  cr_expect_eq(fk.bad_shape, 0);
  cl_done(x, t.g);
}

/* cuda_update "table": every node in the table from instantiate, no
 * setter ever. "node" and "graph" no longer keep set_scalar on CUDA's
 * setters (retired: 1.58x and 1.86x of cudaGraphExecUpdate on the H200,
 * against the table's 0.23x): a node's first set_scalar moves it to the
 * table as in auto, through the mode's own path (CUDA's setter per node,
 * or the template's setters and one cudaGraphExecUpdate), once; its later
 * changes are the table's one copy, no setter. */
Test(cuda_logic, explicit_update_paths) {
  static const char *upd[] = {"node", "graph", "table"};
  const uint32_t which[] = {0x555555, (1u << K) - 1, 1u << 3, 0x00ff00};
  for (unsigned u = 0; u < 3; u++) {
    bumps t;
    bumps_make(&t);
    rp_exec_opts o = RP_EXEC_OPTS_INIT;
    o.cuda_update = upd[u];
    fk_reset();
    rp_exec *x = cl_mk(t.g, &o);
    cr_expect_eq(fk_exec_kernels(&ind_bump), u == 2 ? K : 0, "%s", upd[u]);
    cr_expect_eq(fk.memcpy_sync, u == 2, "%s: the table filled once", upd[u]);
    uint32_t moved = u == 2 ? (1u << K) - 1 : 0;
    for (unsigned i = 0; i < 4; i++) {
      fk_reset();
      bumps_round(&t, x, i + 1, which[i]);
      unsigned n = popcount(which[i] & ~moved); /* first moves */
      moved |= which[i];
      cr_expect_eq(fk.exec_kernel_set, u == 0 ? n : 0, "%s round %u: %u",
                   upd[u], i, fk.exec_kernel_set);
      cr_expect_eq(fk.tmpl_kernel_set, u == 1 ? n : 0, "%s round %u: %u",
                   upd[u], i, fk.tmpl_kernel_set);
      cr_expect_eq(fk.exec_update, u == 1 && n > 0, "%s round %u", upd[u], i);
      cr_expect_eq(fk.memcpy_async, 1, "%s round %u: the table's copy", upd[u],
                   i);
    }
    cr_expect_eq(fk_exec_kernels(&ind_bump), K, "%s: all in the table", upd[u]);
    cl_done(x, t.g);
  }
}

/* The streams and serial modes launch by value from the blocks set_scalar
 * changed; a node moved to the table in graph mode is right in a profile
 * (which issues nodes one by one) too. */
Test(cuda_logic, streams_modes_and_profile_follow_set_scalar) {
  static const char *modes[] = {"streams", "serial"};
  for (unsigned m = 0; m < 2; m++) {
    bumps t;
    bumps_make(&t);
    rp_exec_opts o = RP_EXEC_OPTS_INIT;
    o.mode = modes[m];
    rp_exec *x = cl_mk(t.g, &o);
    for (unsigned i = 0; i < 3; i++)
      bumps_round(&t, x, i + 1, i ? 0xff00f0u : 0x3u);
    cr_expect_eq(fk.graph_launch, 0);
    cr_expect_gt(fk.launch_kernel, 0);
    cl_done(x, t.g);
  }
  bumps t;
  bumps_make(&t);
  rp_exec *x = cl_mk(t.g, NULL);
  bumps_round(&t, x, 1, 0xfu);
  double *us = calloc(rp_graph_num_nodes(t.g) + 1, sizeof *us);
  TU_OK(NULL, rp_exec_profile(x, us));
  free(us);
  memcpy(t.want, t.h, N); /* whatever the profiled run left */
  bumps_round(&t, x, 2, 0xf0u);
  bumps_round(&t, x, 3, 0xffu);
  cl_done(x, t.g);
}

/* Without a table (its allocation refused), a node stays by value and
 * takes CUDA's setter per change; a notice says so. */
Test(cuda_logic, no_table_falls_back_to_setters) {
  bumps t;
  bumps_make(&t);
  rp_exec *x = cl_mk(t.g, NULL);
  fk_fail_malloc_from(K * sizeof(rp_kargs));
  rp_slot off = {.u64 = 0};
  TU_OK(NULL, rp_exec_set_scalar(x, t.kn[0], 1, off));
  cr_expect(strstr(rp_exec_notice(x), "no argument table"), "notice: %s",
            rp_exec_notice(x));
  TU_OK(NULL, rp_exec_set_scalar(x, t.kn[0], 1, off)); /* as it was */
  fk_reset();
  bumps_round(&t, x, 1, 0xffu);
  cr_expect_eq(fk.exec_kernel_set, 8);
  fk_reset();
  bumps_round(&t, x, 2, 0xffu);
  cr_expect_eq(fk.exec_kernel_set, 8);
  cr_expect_eq(fk_exec_kernels(&ind_bump), 0);
  fk_fail_malloc_from(0);
  cl_done(x, t.g);
}

/* Random graphs (kernels, copies, peer copies, host tasks, after edges)
 * on one and two logical devices (folded onto the one fake GPU), in the
 * three modes, against the reference replay; the fake runs each graph in
 * a random order its edges allow. */
static rp_exec *mk_folded(const rp_graph *g, const char *mode, void *ctx) {
  (void)ctx;
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  o.mode = mode;
  o.device_fold = 1;
  return cl_mk(g, &o);
}

static void check_random(uint64_t seed, unsigned ndev) {
  tu_random r;
  cuda_random_graph(&r, seed, 4, 2048, 40, ndev, &k_mix, &k_bump, NULL);
  cuda_check_random(&r, seed, mk_folded, NULL);
  tu_random_free(&r);
  cr_expect_eq(fk_live(), 0);
}

Test(cuda_logic, random_graphs_against_the_reference) {
  for (uint64_t seed = 1; seed <= 40; seed++)
    check_random(seed, 1 + (unsigned)(seed % 2));
  /* two GPUs: each logical device on its own, peer copies between them */
  fk_devices(2);
  for (uint64_t seed = 41; seed <= 60; seed++)
    check_random(seed, 2);
  fk_devices(1);
  cr_expect_eq(fk.bad_shape, 0);
}

/* Two logical devices folded onto one GPU, each reading all of X and
 * its half of Y: X's image of device 1 aliases device 0's, and its copy
 * is an empty node after device 0's (copied once per GPU); Y's halves
 * move as recorded. Streams mode keeps every copy. */
Test(cuda_logic, folded_devices_copy_a_read_only_buffer_once) {
  enum { H = 512 };
  uint8_t xh[H], yh[2 * H], want[2 * H];
  for (unsigned i = 0; i < H; i++)
    xh[i] = (uint8_t)(i * 13 + 1);
  for (unsigned m = 0; m < 2; m++) {
    for (unsigned i = 0; i < 2 * H; i++)
      yh[i] = (uint8_t)(i * 3 + 5);
    rp_graph *g;
    rp_buf X, Y;
    TU_OK(NULL, rp_graph_create(&g, 0));
    TU_OK(g, rp_buffer_register(g, "X", xh, H, &X));
    TU_OK(g, rp_buffer_register(g, "Y", yh, 2 * H, &Y));
    for (int d = 0; d < 2; d++) {
      rp_arg a[4] = {rp_arg_buf(rp_whole(X)),
                     rp_arg_buf(rp_bytes(Y, (uint64_t)d * H, H)), rp_arg_i64(0),
                     rp_arg_i64((int64_t)d * H)};
      TU_OK(g,
            rp_record_kernel(g, &k_mix, d, rp_dims3(H, 1, 1), a, NULL, NULL));
    }
    TU_OK(g, rp_record_sync_host(g, rp_whole(Y), NULL));
    TU_OK(g, rp_graph_end(g));
    memcpy(want, yh, sizeof want);
    for (unsigned i = 0; i < 2 * H; i++)
      want[i] = (uint8_t)(3 * want[i] + xh[i % H] + 1);
    rp_exec_opts o = RP_EXEC_OPTS_INIT;
    o.device_fold = 1;
    o.mode = m ? "streams" : "graph";
    o.reshape_copies = RP_EXEC_RESHAPE_NONE;
    rp_exec *x = cl_mk(g, &o);
    if (!m) {
      size_t bytes = 0;
      unsigned empty = 0, copies = fk_exec_copies(&bytes, &empty);
      cr_expect_eq(copies, 5, "X once, Y's halves in and out: %u", copies);
      cr_expect_eq(empty, 1);
      cr_expect_eq(bytes, H + 4 * H);
    }
    cl_run_ok(x);
    cr_expect(!memcmp(yh, want, sizeof want), "%s: Y differs",
              m ? "streams" : "graph");
    cl_done(x, g);
  }
}

/* RP_CUDA_TIMES=1: instantiate notes where its time went, in the form
 * bench_cuda reads. */
Test(cuda_logic, times_note) {
  bumps t;
  bumps_make(&t);
  setenv("RP_CUDA_TIMES", "1", 1);
  rp_exec *x = cl_mk(t.g, NULL);
  unsetenv("RP_CUDA_TIMES");
  unsigned nn = 0;
  double v[7];
  cr_expect_eq(sscanf(rp_exec_error(x),
                      "cuda: times: nodes %u total %lf "
                      "setup %lf add %lf inst %lf mem %lf attr %lf other "
                      "%lf",
                      &nn, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]),
               8, "note: %s", rp_exec_error(x));
  cr_expect_eq(nn, K + 2, "the kernels, the copy in and back: %u", nn);
  cl_done(x, t.g);
}

/* One bump kernel over 64 bytes on device 0 (of kind `kind`), then the
 * buffer synced home; rp_exec_create with no backend runs it and the
 * chosen backend's name is returned. */
static const char *auto_choice(const rp_kernel *k, rp_device_kind kind) {
  uint8_t h[B], want[B];
  for (unsigned i = 0; i < B; i++)
    h[i] = (uint8_t)(i * 3 + 1), want[i] = (uint8_t)(h[i] * 5 + 7);
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  if (kind != RP_DEVICE_DEFAULT)
    TU_OK(g, rp_graph_set_device_kind(g, 0, kind));
  TU_OK(g, rp_buffer_register(g, "A", h, B, &b));
  rp_arg args[2] = {rp_arg_buf(rp_whole(b)), rp_arg_i64(0)};
  TU_OK(g, rp_record_kernel(g, k, 0, rp_dims3(B, 1, 1), args, NULL, NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = NULL;
  rp_status s = rp_exec_create(&x, g, NULL, NULL);
  cr_assert_eq(s, RP_OK, "auto: %s: %s", rp_status_name(s), rp_last_error());
  const char *name = rp_backend_name(rp_exec_backend(x));
  cl_run_ok(x);
  cr_assert(!memcmp(h, want, B), "auto (%s): the buffer differs", name);
  cl_done(x, g);
  return name;
}

/* The automatic choice considers the graph's kernels: cuda (the fake
 * GPU: the best backend present) when every kernel has a body it runs, a
 * CPU backend when one kernel has no CUDA body, cuda again when that
 * kernel sits on a device of kind cpu (it runs its CPU body there). */
Test(cuda_logic, auto_takes_a_backend_that_runs_every_kernel) {
  unsetenv("RP_BACKEND");
  const rp_backend *best;
  TU_OK(NULL, rp_backend_find(NULL, &best));
  cr_assert_str_eq(rp_backend_name(best), "cuda");
  cr_expect_str_eq(auto_choice(&k_bump, RP_DEVICE_DEFAULT), "cuda");
  const char *cpu = auto_choice(&tu_bump, RP_DEVICE_DEFAULT);
  cr_expect(!strcmp(cpu, "openmp") || !strcmp(cpu, "reference"),
            "a kernel without a CUDA body ran on %s", cpu);
  cr_expect_str_eq(auto_choice(&tu_bump, RP_DEVICE_CPU), "cuda");
  /* named, cuda refuses the kernel, as before */
  rp_graph *g;
  rp_buf b;
  uint8_t h[B] = {0};
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "A", h, B, &b));
  rp_arg args[2] = {rp_arg_buf(rp_whole(b)), rp_arg_i64(0)};
  TU_OK(g,
        rp_record_kernel(g, &tu_bump, 0, rp_dims3(B, 1, 1), args, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = NULL;
  cr_expect_eq(rp_exec_create(&x, g, &rp_backend_cuda, NULL), RP_ENOKERNEL);
  cr_expect(strstr(rp_last_error(), "has no CUDA implementation"), "%s",
            rp_last_error());
  rp_graph_destroy(g);
}
