/* The cuda backend's parameter blocks and update paths on the fake CUDA
 * runtime (fake_cudart.c), issue 38: a kernel node carries its block
 * packed to the kernel's parameters (the bytes CUDA copies, instantiates
 * and sets), not the whole 856-byte rp_kargs; a rebind that changes many
 * nodes reaches the executable graph through one cudaGraphExecUpdate, few
 * through CUDA's setter per node. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "fake_cudart.h"
#include "reprise/backend.h"
#include "util.h"
#include "cuda_logic.h"

/* tu_bump (a[off + x] = a[off + x] * 5 + 7; params: inout a, scalar off)
 * with a by-value entry, a by-pointer one and a packed one (2 params);
 * k_nt: the same without a by-pointer entry (never in the table); k_lie:
 * a packed entry the runtime reports of another size (3 params). */
static char pv, pi, pp, pl;
static const rp_cuda_args pair = {&pv, &pi, &pp, 2};
static const rp_cuda_args pair_nt = {&pv, NULL, &pp, 2};
static const rp_cuda_args pair_lie = {&pv, &pi, &pl, 2};
static rp_kernel k_b, k_nt, k_lie;

static void setup(void) {
  fk_kernel_pair(&k_b, &tu_bump, &pair);
  k_nt = k_b;
  k_nt.cuda_args = &pair_nt;
  k_lie = k_b;
  k_lie.cuda_args = &pair_lie;
  fk_kernel_packed(&pl, tu_bump.cpu, 3);
  fk_devices(1);
  fk_reset();
}

TestSuite(cuda_pack, .init = setup);

/* cl_mk with mode, cuda_update and the copies as recorded. */
static rp_exec *mk(const rp_graph *g, const char *mode, const char *upd) {
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  o.mode = mode;
  o.cuda_update = upd;
  o.reshape_copies = RP_EXEC_RESHAPE_NONE;
  return cl_mk(g, &o);
}

/* K kernels of descriptor k, kernel i bumping block i of B bytes of one
 * buffer (its offset a scalar). */
enum { K = 12, B = 32, N = K * B };
typedef struct chain {
  rp_graph *g;
  rp_node kn[K];
  uint8_t h[N], want[N];
} chain;

static void chain_make(chain *c, const rp_kernel *k) {
  rp_buf b;
  for (unsigned i = 0; i < N; i++)
    c->h[i] = c->want[i] = (uint8_t)(i * 11 + 5);
  TU_OK(NULL, rp_graph_create(&c->g, 0));
  TU_OK(c->g, rp_buffer_register(c->g, "A", c->h, N, &b));
  for (unsigned i = 0; i < K; i++) {
    rp_arg a[2] = {rp_arg_buf(rp_whole(b)), rp_arg_i64((int64_t)i * B)};
    TU_OK(c->g,
          rp_record_kernel(c->g, k, 0, rp_dims3(B, 1, 1), a, NULL, &c->kn[i]));
  }
  TU_OK(c->g, rp_record_sync_host(c->g, rp_whole(b), NULL));
  TU_OK(c->g, rp_graph_end(c->g));
}

/* Kernel i now bumps block blk[i]; one replay; the buffer checked. */
static void chain_round(chain *c, rp_exec *x, const unsigned *blk) {
  for (unsigned i = 0; i < K; i++) {
    if (blk) {
      rp_slot off = {.u64 = (uint64_t)blk[i] * B};
      TU_OK(NULL, rp_exec_set_scalar(x, c->kn[i], 1, off));
    }
    unsigned at = blk ? blk[i] : i;
    for (unsigned j = 0; j < B; j++)
      c->want[at * B + j] = (uint8_t)(c->want[at * B + j] * 5 + 7);
  }
  cl_run_ok(x);
  cr_assert(!memcmp(c->h, c->want, N), "the buffer differs");
}

/* By default every kernel node holds its block packed to the kernel's two
 * parameters: 184 bytes (n, 2 slots, 2 regions, origin, whole), the size
 * CUDA reports for the packed entry, not rp_kargs' 856; the results are
 * the reference's (the fake unpacks the block by its own layout). */
Test(cuda_pack, a_node_holds_its_kernels_parameters) {
  cr_assert_eq(RP_KARGS_PACKED_BYTES(2), 184);
  cr_assert_eq(RP_KARGS_PACKED_BYTES(RP_MAX_PARAMS), sizeof(rp_kargs));
  cr_assert_eq(sizeof(rp_kargs), 856);
  chain c;
  chain_make(&c, &k_b);
  rp_exec *x = mk(c.g, NULL, NULL);
  unsigned nodes = 0;
  cr_expect_eq(fk_exec_param_bytes(&pp, &nodes), (size_t)K * 184);
  cr_expect_eq(nodes, K);
  cr_expect_eq(fk_exec_kernels(&pv), 0, "no node holds the whole block");
  chain_round(&c, x, NULL);
  chain_round(&c, x, NULL);
  cr_expect_eq(fk.bad_shape, 0);
  cl_done(x, c.g);
  /* RP_CUDA_PACK=0: the whole block, as before (to compare on a GPU) */
  setenv("RP_CUDA_PACK", "0", 1);
  chain_make(&c, &k_b);
  x = mk(c.g, NULL, NULL);
  unsetenv("RP_CUDA_PACK");
  cr_expect_eq(fk_exec_param_bytes(&pv, &nodes), (size_t)K * 856);
  cr_expect_eq(nodes, K);
  chain_round(&c, x, NULL);
  cl_done(x, c.g);
}

/* The streams and serial modes launch the packed entry too. */
Test(cuda_pack, streams_launch_packed_blocks) {
  static const char *modes[] = {"streams", "serial"};
  for (unsigned m = 0; m < 2; m++) {
    chain c;
    chain_make(&c, &k_b);
    rp_exec *x = mk(c.g, modes[m], NULL);
    fk_reset();
    chain_round(&c, x, NULL);
    cr_expect_eq(fk.launch_kernel, K, "%s", modes[m]);
    unsigned blk[K];
    for (unsigned i = 0; i < K; i++)
      blk[i] = (i * 7 + 1) % K;
    chain_round(&c, x, blk);
    cl_done(x, c.g);
  }
}

/* A kernel without a by-pointer entry stays by value: set_scalar reaches
 * it by CUDA's setter per node, each with the packed block. */
Test(cuda_pack, setters_carry_packed_blocks) {
  chain c;
  chain_make(&c, &k_nt);
  rp_exec *x = mk(c.g, NULL, NULL);
  chain_round(&c, x, NULL);
  for (unsigned r = 0; r < 3; r++) {
    unsigned blk[K];
    for (unsigned i = 0; i < K; i++)
      blk[i] = (i * 5 + r * 3 + 1) % K;
    fk_reset();
    chain_round(&c, x, blk);
    cr_expect_eq(fk.exec_kernel_set, K, "round %u: %u setters", r,
                 fk.exec_kernel_set);
    cr_expect_eq(fk.exec_update + fk.instantiate, 0);
    unsigned nodes = 0;
    cr_expect_eq(fk_exec_param_bytes(&pp, &nodes), (size_t)K * 184);
    cr_expect_eq(nodes, K);
  }
  cl_done(x, c.g);
}

/* A packed entry is used only where CUDA reports its one parameter of the
 * packed size: one that takes another size (3 parameters' worth) leaves
 * the nodes on the whole block; so does a descriptor whose packed entry
 * holds fewer parameters than the kernel has. */
Test(cuda_pack, a_packed_entry_of_another_size_is_not_used) {
  chain c;
  chain_make(&c, &k_lie);
  rp_exec *x = mk(c.g, NULL, NULL);
  cr_expect_eq(fk_exec_kernels(&pl), 0);
  cr_expect_eq(fk_exec_param_bytes(&pv, NULL), (size_t)K * 856);
  chain_round(&c, x, NULL);
  cl_done(x, c.g);
  static const rp_cuda_args pair_short = {&pv, &pi, &pp, 1};
  rp_kernel k_short = k_b;
  k_short.cuda_args = &pair_short;
  chain_make(&c, &k_short);
  x = mk(c.g, NULL, NULL);
  cr_expect_eq(fk_exec_kernels(&pp), 0);
  cr_expect_eq(fk_exec_kernels(&pv), K);
  chain_round(&c, x, NULL);
  cl_done(x, c.g);
}

/* C copies of S-byte slices of one host buffer, as recorded (C memcpy
 * nodes in, one back after a kernel per slice), rebound to a second
 * array; returns the counts of the rebind's launch. */
static fk_counts rebind_copies(unsigned C, const char *upd) {
  enum { S = 16 };
  uint8_t *h1 = malloc(C * S), *h2 = malloc(C * S);
  for (unsigned i = 0; i < C * S; i++) {
    h1[i] = (uint8_t)i;
    h2[i] = (uint8_t)(200 - i);
  }
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "H", h1, C * S, &b));
  for (unsigned c = 0; c < C; c++) {
    rp_arg a[2] = {rp_arg_buf(rp_bytes(b, (uint64_t)c * S, S)),
                   rp_arg_i64((int64_t)c * S)};
    TU_OK(g, rp_record_kernel(g, &k_b, 0, rp_dims3(S, 1, 1), a, NULL, NULL));
  }
  TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = mk(g, NULL, upd);
  cr_expect_eq(fk_exec_copies(NULL, NULL), C + 1);
  cl_run_ok(x);
  TU_OK(NULL, rp_exec_rebind(x, b, h2, C * S));
  fk_reset();
  cl_run_ok(x);
  fk_counts got = fk;
  for (unsigned i = 0; i < C * S; i++)
    cr_assert_eq(h2[i], (uint8_t)((uint8_t)(200 - i) * 5 + 7), "%u copies: %u",
                 C, i);
  for (unsigned i = 0; i < C * S; i++)
    cr_assert_eq(h1[i], (uint8_t)((uint8_t)i * 5 + 7));
  /* and back: the first array again */
  TU_OK(NULL, rp_exec_rebind(x, b, h1, C * S));
  cl_run_ok(x);
  for (unsigned i = 0; i < C * S; i++)
    cr_assert_eq(h1[i], (uint8_t)((uint8_t)((uint8_t)i * 5 + 7) * 5 + 7));
  cl_done(x, g);
  free(h1);
  free(h2);
  return got;
}

/* A rebind behind many copies as recorded (64 memcpy nodes in a graph of
 * 129 nodes: RP_CU_WHOLE_MIN = 32 and half of the graph changed) is one
 * cudaGraphExecUpdate after the template's setters, no setter on the
 * executable graph; behind few (8 of 17 nodes, 16 of 33) it is CUDA's
 * setter per memcpy node, each reset as recorded;
 * cuda_update "node" keeps the setters for many too. */
Test(cuda_pack, rebind_of_many_copies_is_one_update) {
  fk_counts many = rebind_copies(64, NULL);
  cr_expect_eq(many.exec_update, 1);
  cr_expect_eq(many.exec_copy_set, 0);
  cr_expect_eq(many.tmpl_copy_set, 65, "%u", many.tmpl_copy_set);
  cr_expect_eq(many.instantiate, 0);
  fk_counts few = rebind_copies(8, NULL);
  cr_expect_eq(few.exec_update, 0);
  cr_expect_eq(few.exec_copy_set, 9);
  few = rebind_copies(16, NULL); /* 17 changed of 33: under 32 */
  cr_expect_eq(few.exec_update, 0);
  cr_expect_eq(few.exec_copy_set, 17);
  fk_counts node = rebind_copies(64, "node");
  cr_expect_eq(node.exec_update, 0);
  cr_expect_eq(node.exec_copy_set, 65);
  fk_counts whole = rebind_copies(8, "graph");
  cr_expect_eq(whole.exec_update, 1);
  cr_expect_eq(whole.exec_copy_set, 0);
}

/* A probe kernel reading every part of its block: element origin + x of
 * its region (at byte 8 of the buffer) gets the point, the region's
 * offset and bytes, the whole extent and the scalar; declared splittable
 * along x with the region following the cut, so that a split gives each
 * chunk its own origin and n. */
static void probe_cpu(const rp_kargs *a, const uint64_t lo[3],
                      const uint64_t hi[3]) {
  uint32_t *p = (uint32_t *)(void *)((char *)a->a[0].p + a->r[0].offset);
  uint64_t whole = a->whole[0] ? a->whole[0] : a->n[0];
  for (uint64_t x = lo[0]; x < hi[0]; x++) {
    uint64_t at = a->origin[0] + x;
    p[at] = (uint32_t)(at * 1000003u + a->r[0].offset * 101u +
                       a->r[0].bytes * 7u + whole * 3u + a->a[1].u64);
  }
}
static const rp_param probe_params[] = {{"p", RP_INOUT}, {"v", RP_SCALAR}};
static char prv, pri, prp;
static const rp_cuda_args probe_pair = {&prv, &pri, &prp, 2};

/* The probe whole and split into 4 chunks, graph and streams modes: every
 * element as the reference replay has it, from the packed blocks. */
Test(cuda_pack, packed_blocks_hold_regions_origin_and_extent) {
  enum { M = 4096, OFF = 8 };
  rp_kernel k = {.size = sizeof(rp_kernel),
                 .name = "probe",
                 .nparams = 2,
                 .params = probe_params,
                 .cpu = probe_cpu,
                 .split_axis = RP_SPLIT_X,
                 .split_follow = 0x1u};
  fk_kernel_pair(&k, &k, &probe_pair); /* its three entries */
  size_t bytes = OFF + sizeof(uint32_t) * M;
  uint8_t *h = calloc(1, bytes), *want = calloc(1, bytes);
  for (unsigned v = 0; v < 4; v++) {
    const char *mode = v & 1 ? "streams" : "graph";
    unsigned split = v & 2 ? 4 : 0;
    memset(h, 0, bytes);
    rp_graph *g;
    rp_buf b;
    TU_OK(NULL, rp_graph_create(&g, 0));
    TU_OK(g, rp_buffer_register(g, "P", h, bytes, &b));
    rp_arg a[2] = {rp_arg_buf(rp_bytes(b, OFF, sizeof(uint32_t) * M)),
                   rp_arg_i64(77)};
    TU_OK(g, rp_record_kernel(g, &k, 0, rp_dims3(M, 1, 1), a, NULL, NULL));
    TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
    TU_OK(g, rp_graph_end(g));
    TU_OK(g, rp_replay_reference(g, 1));
    memcpy(want, h, bytes);
    memset(h, 0, bytes);
    rp_exec_opts o = RP_EXEC_OPTS_INIT;
    o.mode = mode;
    o.split = split;
    rp_exec *x = cl_mk(g, &o);
    unsigned nodes = 0;
    if (!(v & 1)) {
      cr_expect_eq(fk_exec_param_bytes(&prp, &nodes),
                   (size_t)nodes * RP_KARGS_PACKED_BYTES(2));
      cr_expect_eq(nodes, split ? split : 1, "%s split %u: %u nodes", mode,
                   split, nodes);
    }
    cl_run_ok(x);
    cr_expect(!memcmp(h, want, bytes), "%s split %u: differs", mode, split);
    cr_expect_eq(((uint32_t *)(void *)(want + OFF))[M - 1],
                 (uint32_t)((M - 1) * 1000003u + OFF * 101u +
                            sizeof(uint32_t) * M * 7u + M * 3u + 77u));
    cl_done(x, g);
  }
  free(h);
  free(want);
}
