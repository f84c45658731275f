/* Recording: the API's checks, automatic coherence, the reference replay. */
#include <criterion/criterion.h>
#include <string.h>
#include "util.h"
#include "record/graph.h"

TestSuite(record, .timeout = 60);

Test(record, statuses_have_names_and_messages) {
  cr_assert_str_eq(rp_status_name(RP_EINVAL), "RP_EINVAL");
  cr_assert_str_eq(rp_strerror(RP_ENOTSUP),
                   "backend not built into this library");
  cr_assert_str_eq(rp_strerror((rp_status)-999), "unknown status");
  cr_assert_str_eq(rp_version(), RP_VERSION_STRING);
}

Test(record, bad_flags_and_buffers) {
  rp_graph *g = (rp_graph *)1;
  cr_assert_eq(rp_graph_create(&g, 0x80), RP_EINVAL);
  cr_assert_null(g);
  TU_OK(NULL, rp_graph_create(&g, 0));
  char A[16];
  rp_buf a;
  cr_assert_eq(rp_buffer_register(g, "A", NULL, 16, &a), RP_EINVAL);
  cr_assert_eq(rp_buffer_register(g, "A", A, 0, &a), RP_EINVAL);
  cr_assert_eq(rp_buffer_register(g, NULL, A, 16, &a), RP_EINVAL);
  TU_OK(g, rp_buffer_register(g, "A", A, 16, &a));
  cr_assert_eq(rp_buffer_register(g, "A", A, 16, &a), RP_EINVAL);
  cr_assert(strstr(rp_graph_error(g), "already exists"));
  rp_buffer_desc d = {"M", NULL, 60, 4, 2, {4, 4, 0}};
  cr_assert_eq(rp_buffer_add(g, &d, NULL), RP_EINVAL);
  cr_assert(strstr(rp_graph_error(g), "dims give 64 bytes, not 60"), "%s",
            rp_graph_error(g));
  cr_assert_eq(rp_graph_num_buffers(g), 1);
  rp_graph_destroy(g);
}

Test(record, bad_regions_leave_the_graph_unchanged) {
  rp_graph *g;
  char A[64];
  rp_buf a;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "A", A, 64, &a));
  rp_arg args[2] = {rp_arg_buf(rp_bytes(a, 60, 8)), rp_arg_i64(0)};
  cr_assert_eq(
      rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), args, NULL, NULL),
      RP_ERANGE);
  cr_assert_str_eq(rp_graph_error(g),
                   "parameter 0 'a' of kernel "
                   "'tu_bump_k': region ends past buffer \"A\" (64 bytes)");
  cr_assert_eq(rp_graph_num_nodes(g), 0);
  args[0] = rp_arg_buf(rp_bytes(a, UINT64_MAX - 2, 8)); /* overflow */
  cr_assert_eq(
      rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), args, NULL, NULL),
      RP_ERANGE);
  args[0] = rp_arg_buf(rp_box2(a, 0, 1, 0, 1)); /* no dims */
  cr_assert_eq(
      rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), args, NULL, NULL),
      RP_EINVAL);
  args[0] = rp_arg_buf(rp_whole(7)); /* unknown buffer */
  cr_assert_eq(
      rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), args, NULL, NULL),
      RP_EINVAL);
  args[0] = rp_arg_buf(rp_whole(a));
  cr_assert_eq(
      rp_record_kernel(g, &tu_bump, -1, rp_dims3(8, 1, 1), args, NULL, NULL),
      RP_EINVAL);
  cr_assert_eq(
      rp_record_kernel(g, NULL, 0, rp_dims3(8, 1, 1), args, NULL, NULL),
      RP_EINVAL);
  rp_node fwd = 3;
  rp_op_opts o = RP_OP_OPTS_WITH(.after = &fwd, .nafter = 1);
  cr_assert_eq(
      rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), args, &o, NULL),
      RP_EINVAL);
  cr_assert(strstr(rp_graph_error(g), "not an earlier node"));
  cr_assert_eq(rp_record_copy_peer(g, rp_whole(a), 1, 1, NULL, NULL),
               RP_EINVAL);
  cr_assert_eq(rp_graph_num_nodes(g), 0);
  cr_assert_eq(rp_graph_num_edges(g), 0);
  /* The graph still records normally afterwards. */
  TU_OK(g,
        rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), args, NULL, NULL));
  cr_assert_eq(rp_graph_num_nodes(g), 2);
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(
      rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), args, NULL, NULL),
      RP_ESTATE);
  cr_assert_eq(rp_graph_end(g), RP_ESTATE);
  rp_graph_destroy(g);
}

Test(record, internal_buffers_have_no_host_image) {
  rp_graph *g;
  rp_buf t;
  TU_OK(NULL, rp_graph_create(&g, 0));
  rp_buffer_desc d = {"T", NULL, 32, 1, 0, {0, 0, 0}};
  TU_OK(g, rp_buffer_add(g, &d, &t));
  cr_assert_eq(rp_record_copy_to_host(g, rp_whole(t), 0, NULL, NULL),
               RP_EINVAL);
  cr_assert(strstr(rp_graph_error(g), "internal"));
  /* A kernel may use it: nothing valid anywhere, so nothing is copied. */
  rp_arg args[2] = {rp_arg_buf(rp_whole(t)), rp_arg_i64(0)};
  TU_OK(g,
        rp_record_kernel(g, &tu_bump, 0, rp_dims3(32, 1, 1), args, NULL, NULL));
  cr_assert_eq(rp_graph_num_nodes(g), 1);
  rp_graph_destroy(g);
}

Test(record, coherence_inserts_what_is_stale) {
  rp_graph *g;
  uint8_t A[64];
  rp_buf a;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "A", A, 64, &a));
  rp_arg args[2] = {rp_arg_buf(rp_bytes(a, 0, 16)), rp_arg_i64(0)};
  rp_op_opts ko = RP_OP_OPTS_WITH(.name = "bump");
  TU_OK(g, rp_record_kernel(g, &tu_bump, 0, rp_dims3(16, 1, 1), args, &ko,
                            NULL)); /* 0 copy, 1 */
  TU_OK(g, rp_record_kernel(g, &tu_bump, 0, rp_dims3(16, 1, 1), args, &ko,
                            NULL)); /* 2: no copy */
  cr_assert_eq(rp_graph_num_nodes(g), 3);
  /* The host reads bytes 8..24: only 8..16 is stale there. */
  tu_host_arg h = {8, 16};
  rp_access acc = {rp_bytes(a, 8, 16), RP_IN};
  TU_OK(g, rp_record_host(g, tu_host_bump, &h, &acc, 1, NULL, NULL));
  cr_assert_eq(rp_graph_num_nodes(g), 5);
  rp_node_info in;
  rp_access_info ai;
  rp_node_info_get(g, 3, &in);
  cr_assert_eq(in.type, RP_OP_COPY_D2H);
  cr_assert(in.inserted);
  cr_assert_str_eq(in.name, "movefrom A for host");
  rp_node_access(g, 3, 1, &ai);
  cr_assert_eq(ai.region.offset, 8);
  cr_assert_eq(ai.region.bytes, 8);
  cr_assert_eq(ai.space, RP_SPACE_HOST);
  /* Device 1 reads bytes 0..16: the host copy is valid for 8..16 (just
   * copied back) and for 0..8? No: 0..8 is valid only on device 0. */
  TU_OK(g,
        rp_record_kernel(g, &tu_bump, 1, rp_dims3(16, 1, 1), args, &ko, NULL));
  rp_node_info_get(g, 5, &in);
  cr_assert_eq(in.type, RP_OP_COPY_D2D, "%s", in.name);
  cr_assert_eq(in.device, 0);
  cr_assert_eq(in.dst_device, 1);
  rp_node_access(g, 5, 1, &ai);
  cr_assert_eq(ai.region.offset, 0);
  cr_assert_eq(ai.region.bytes, 8);
  rp_node_info_get(g, 6, &in);
  cr_assert_eq(in.type, RP_OP_COPY_H2D, "%s", in.name);
  rp_node_access(g, 6, 1, &ai);
  cr_assert_eq(ai.region.offset, 8);
  cr_assert_eq(ai.region.bytes, 8);
  unsigned cnt = 9;
  TU_OK(g, rp_record_sync_host(g, rp_whole(a), &cnt));
  cr_assert_eq(cnt, 1); /* 0..16 from device 1 */
  TU_OK(g, rp_record_sync_host(g, rp_whole(a), &cnt));
  cr_assert_eq(cnt, 0);
  rp_graph_destroy(g);
}

Test(record, no_coherence_records_only_what_is_given) {
  rp_graph *g;
  uint8_t A[64];
  rp_buf a;
  TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  TU_OK(g, rp_buffer_register(g, "A", A, 64, &a));
  rp_arg args[2] = {rp_arg_buf(rp_whole(a)), rp_arg_i64(0)};
  TU_OK(g,
        rp_record_kernel(g, &tu_bump, 0, rp_dims3(64, 1, 1), args, NULL, NULL));
  cr_assert_eq(rp_graph_num_nodes(g), 1);
  rp_graph_destroy(g);
}

Test(record, reference_replays_in_program_order) {
  uint8_t A[64], want[64];
  for (int i = 0; i < 64; i++)
    A[i] = want[i] = (uint8_t)i;
  rp_graph *g;
  rp_buf a;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "A", A, 64, &a));
  rp_arg args[2] = {rp_arg_buf(rp_bytes(a, 16, 32)), rp_arg_i64(16)};
  TU_OK(g,
        rp_record_kernel(g, &tu_bump, 0, rp_dims3(32, 1, 1), args, NULL, NULL));
  tu_host_arg h = {0, 24};
  rp_access acc = {rp_bytes(a, 0, 24), RP_INOUT};
  TU_OK(g, rp_record_host(g, tu_host_bump, &h, &acc, 1, NULL, NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(a), NULL));
  TU_OK(g, rp_graph_end(g));
  for (int it = 0; it < 3; it++) {
    for (int i = 16; i < 48; i++)
      want[i] = (uint8_t)(want[i] * 5 + 7);
    for (int i = 0; i < 24; i++)
      want[i] = (uint8_t)(want[i] * 5 + 7);
  }
  TU_OK(g, rp_replay_reference(g, 3));
  cr_assert_arr_eq(A, want, 64);
  rp_graph_destroy(g);
}

Test(record, exec_rebind_and_scalars) {
  uint8_t A[16] = {0}, B[16] = {0};
  rp_graph *g;
  rp_buf a;
  rp_node k;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "A", A, 16, &a));
  /* The kernel declares the whole buffer; its offset scalar picks which
   * half it touches. */
  rp_arg args[2] = {rp_arg_buf(rp_whole(a)), rp_arg_i64(0)};
  TU_OK(g, rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), args, NULL, &k));
  TU_OK(g, rp_record_sync_host(g, rp_whole(a), NULL));
  TU_OK(g, rp_graph_end(g));
  const rp_backend *be;
  TU_OK(NULL, rp_backend_find("reference", &be));
  rp_exec *x;
  TU_OK(NULL, rp_exec_create(&x, g, be, NULL));
  TU_OK(NULL, rp_exec_run(x, 1));
  cr_assert_eq(A[0], 7);
  cr_assert_eq(A[8], 0);
  TU_OK(NULL, rp_exec_rebind(x, a, B, sizeof B));
  rp_slot off = {0};
  off.u64 = 8;
  TU_OK(NULL, rp_exec_set_scalar(x, k, 1, off));
  TU_OK(NULL, rp_exec_run(x, 1));
  cr_assert_eq(B[8], 7);
  cr_assert_eq(B[0], 0);
  cr_assert_eq(A[0], 7, "the old buffer is left alone");
  cr_assert_eq(A[8], 0, "the old buffer is left alone");
  cr_assert_eq(rp_exec_set_scalar(x, k, 0, off), RP_EINVAL);
  cr_assert_eq(rp_exec_rebind(x, 5, B, sizeof B), RP_EINVAL);
  cr_assert_geq(rp_exec_last_us(x), 0);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(record, backends_by_name) {
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("nosuch", &be), RP_ENOTFOUND);
  TU_OK(NULL, rp_backend_find("reference", &be));
  cr_assert_str_eq(rp_backend_name(be), "reference");
  TU_OK(NULL, rp_backend_find(NULL, &be));
  int n = 0;
  for (const rp_backend *const *b = rp_backend_list(); *b; b++)
    n++;
  cr_assert_geq(n, 1);
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  rp_exec *x = (rp_exec *)1;
  cr_assert_eq(rp_exec_create(&x, g, be, NULL), RP_ESTATE);
  cr_assert_null(x);
  rp_graph_destroy(g);
}

Test(record, random_graphs_same_result_on_any_placement) {
  /* Without explicit copies the random sequence differs only in where the
   * kernels run: automatic coherence must move the data so that three
   * devices give the bytes one device gives. */
  for (uint64_t seed = 1; seed <= 20; seed++) {
    tu_random r1, r2;
    cr_assert_eq(tu_random_graph(&r1, seed, 3, 48, 60, 3, 0, 0), 0);
    cr_assert_eq(tu_random_graph(&r2, seed, 3, 48, 60, 1, 0, 0), 0);
    TU_OK(r1.g, rp_graph_end(r1.g));
    TU_OK(r2.g, rp_graph_end(r2.g));
    cr_assert_gt(rp_graph_num_devices(r1.g), 1);
    TU_OK(NULL, rp_replay_reference(r1.g, 2));
    TU_OK(NULL, rp_replay_reference(r2.g, 2));
    int changed = 0;
    for (int b = 0; b < 3; b++) {
      cr_assert_arr_eq(r1.buf[b], r2.buf[b], 48, "seed %llu buffer %d",
                       (unsigned long long)seed, b);
    }
    tu_random_reset(&r2, seed);
    for (int b = 0; b < 3; b++)
      changed |= memcmp(r1.buf[b], r2.buf[b], 48) != 0;
    cr_assert(changed, "the replay computed nothing (seed %llu)",
              (unsigned long long)seed);
    tu_random_free(&r1);
    tu_random_free(&r2);
  }
}

Test(record, coherence_copies_a_box_in_one_piece) {
  /* A kernel writes the interior of an 8 x 8 grid on the device; the host
   * then reads the whole grid. The stale rows are bridged over the border
   * columns (valid on the device too): one copy, not one per row. */
  double G[64];
  rp_graph *g;
  rp_buf a;
  rp_mode m[] = {RP_INOUT};
  rp_param ps[1];
  rp_kernel k = tu_nop_kernel("interior", 1, m, ps);
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register_2d(g, "G", G, 8, 8, sizeof(double), &a));
  rp_arg arg = rp_arg_buf(rp_box2(a, 1, 7, 1, 7));
  TU_OK(g, rp_record_kernel(g, &k, 0, rp_dims3(6, 6, 1), &arg, NULL, NULL));
  cr_assert_eq(rp_graph_num_nodes(g), 2); /* moveto (bridged too), kernel */
  unsigned cnt = 0;
  TU_OK(g, rp_record_sync_host(g, rp_whole(a), &cnt));
  cr_assert_eq(cnt, 1);
  rp_access_info ai;
  TU_OK(g, rp_node_access(g, 2, 1, &ai));
  cr_assert_eq(ai.region.offset, (8 + 1) * sizeof(double));
  cr_assert_eq(ai.region.bytes, (5 * 8 + 6) * sizeof(double));
  TU_OK(g, rp_node_access(g, 0, 1, &ai));
  cr_assert_eq(ai.region.offset, (8 + 1) * sizeof(double));
  cr_assert_eq(ai.region.bytes, (5 * 8 + 6) * sizeof(double));
  rp_graph_destroy(g);
}

/* Buffer names are indexed: every one of many buffers is found, a
 * duplicate is refused, an unknown name is not found. */
Test(record, many_buffers_found_by_name) {
  static char host[1];
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  char name[32];
  for (unsigned i = 0; i < 20000; i++) {
    snprintf(name, sizeof name, "buf%u", i * 7919u);
    rp_buf b;
    TU_OK(g, rp_buffer_register(g, name, host, 1, &b));
    cr_assert_eq(b, i);
  }
  for (unsigned i = 0; i < 20000; i++) {
    snprintf(name, sizeof name, "buf%u", i * 7919u);
    rp_buf b = RP_NONE;
    TU_OK(g, rp_graph_find_buffer(g, name, &b));
    cr_assert_eq(b, i, "%s", name);
    cr_assert_eq(rp_buffer_register(g, name, host, 1, NULL), RP_EINVAL);
  }
  rp_buf b = 5;
  cr_assert_eq(rp_graph_find_buffer(g, "buf1", &b), RP_ENOTFOUND);
  cr_assert_eq(b, 5);
  cr_assert_eq(rp_graph_find_buffer(g, "", &b), RP_ENOTFOUND);
  cr_assert_eq(rp_graph_num_buffers(g), 20000);
  rp_graph_destroy(g);
}

/* A kernel op without a given name shares its descriptor's name (no copy
 * per op); a given name is copied. */
Test(record, kernel_names_shared_given_names_copied) {
  uint8_t A[8];
  rp_graph *g;
  rp_buf a;
  TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  TU_OK(g, rp_buffer_register(g, "A", A, 8, &a));
  rp_arg args[2] = {rp_arg_buf(rp_whole(a)), rp_arg_i64(0)};
  char given[] = "mine";
  rp_op_opts o = RP_OP_OPTS_WITH(.name = given);
  TU_OK(g,
        rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), args, NULL, NULL));
  TU_OK(g, rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), args, &o, NULL));
  given[0] = 'X';
  TU_OK(g, rp_graph_end(g));
  rp_node_info in;
  TU_OK(g, rp_node_info_get(g, 0, &in));
  cr_assert_eq(in.name, tu_bump.name, "shared with the descriptor");
  TU_OK(g, rp_node_info_get(g, 1, &in));
  cr_assert_str_eq(in.name, "mine");
  rp_graph_destroy(g);
}

/* Compact storage (an op in 64 bytes, a byte-range access in 24, boxes,
 * index spaces, scalars and host functions beside): what was recorded is
 * what the graph gives back, field by field. */
static void host_noop(void *user, void *const *ptrs) { (void)user, (void)ptrs; }

static const rp_param mix_params[] = {
    {"x", RP_IN}, {"alpha", RP_SCALAR}, {"t", RP_INOUT}, {"n", RP_SCALAR}};
static const rp_kernel mix =
    RP_KERNEL_WITH(.name = "mix", .nparams = 4, .params = mix_params);

Test(record, compact_storage_gives_back_what_was_recorded) {
  static uint8_t V[4096], M[8 * 16 * 4];
  rp_graph *g;
  rp_buf v, m;
  TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  TU_OK(g, rp_buffer_register(g, "V", V, sizeof V, &v));
  rp_buffer_desc d = {"M", M, sizeof M, 4, 2, {8, 16, 0}};
  TU_OK(g, rp_buffer_add(g, &d, &m));
  rp_arg args[4] = {rp_arg_buf(rp_bytes(v, 1000, 96)), rp_arg_f64(2.5),
                    rp_arg_buf(rp_box2(m, 2, 5, 3, 11)), rp_arg_i64(-7)};
  rp_node k1, k2, h;
  TU_OK(g, rp_record_kernel(g, &mix, 3, rp_dims3(4, 0, 9), args, NULL, &k1));
  args[0] = rp_arg_buf(rp_whole(v));
  TU_OK(g, rp_record_kernel(g, &mix, 1, rp_dims3(1, 1, 1), args, NULL, &k2));
  int user = 5;
  rp_access ha = {rp_box2(m, 0, 8, 0, 16), RP_INOUT};
  TU_OK(g, rp_record_host(g, host_noop, &user, &ha, 1, NULL, &h));
  TU_OK(g, rp_graph_end(g));
  cr_assert_leq(sizeof(rp__op), 64);
  cr_assert_leq(sizeof(rp__sacc), 24);

  rp_node_info in;
  rp_access_info ai;
  TU_OK(NULL, rp_node_info_get(g, k1, &in));
  cr_assert(in.type == RP_OP_KERNEL && in.device == 3 && in.naccess == 2);
  cr_assert(in.kernel == &mix);
  cr_assert(in.space.x == 4 && in.space.y == 1 && in.space.z == 9);
  TU_OK(NULL, rp_node_access(g, k1, 0, &ai));
  cr_assert(ai.region.kind == RP_REGION_BYTES && ai.region.buf == v &&
            ai.region.offset == 1000 && ai.region.bytes == 96 &&
            ai.mode == RP_IN && ai.space == 3);
  TU_OK(NULL, rp_node_access(g, k1, 1, &ai));
  cr_assert(ai.region.kind == RP_REGION_BOX && ai.region.buf == m &&
            ai.region.ndims == 2 && ai.mode == RP_INOUT && ai.space == 3);
  cr_assert(ai.region.lo[0] == 2 && ai.region.hi[0] == 5 &&
            ai.region.lo[1] == 3 && ai.region.hi[1] == 11);
  cr_assert_eq(g->slot[g->op[k1].arg0].f64, 2.5);
  cr_assert_eq(g->slot[g->op[k1].arg0 + 1].i64, -7);

  TU_OK(NULL, rp_node_info_get(g, k2, &in));
  cr_assert(in.space.x == 1 && in.space.y == 1 && in.space.z == 1);
  cr_assert_eq(g->op[k2].dims0, RP_NONE, "1 x 1 x 1 is not stored");
  TU_OK(NULL, rp_node_access(g, k2, 0, &ai));
  cr_assert(ai.region.kind == RP_REGION_BYTES && ai.region.offset == 0 &&
                ai.region.bytes == sizeof V,
            "WHOLE is stored as its bytes");
  cr_assert_eq(g->slot[g->op[k2].arg0 + 1].i64, -7);

  rp_host_fn fn;
  void *u;
  TU_OK(NULL, rp_node_host_fn(g, h, &fn, &u));
  cr_assert(fn == host_noop && u == &user);
  TU_OK(NULL, rp_node_access(g, h, 0, &ai));
  cr_assert(ai.region.kind == RP_REGION_BOX && ai.region.hi[0] == 8 &&
            ai.region.hi[1] == 16 && ai.space == RP_SPACE_HOST);
  cr_assert_eq(g->nbox, 3, "one box per box access, none for byte ranges");
  cr_assert_eq(g->nslot, 4, "scalar values only");
  rp_graph_destroy(g);
}
