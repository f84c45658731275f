/* The size rule for the structs a recording call takes (rp_kernel,
 * rp_op_opts): a struct of an older, smaller size is accepted with the
 * defaults of what it lacks; size 0 and unknown sizes are refused with a
 * message. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>
#include "util.h"

TestSuite(versioned_record, .timeout = 60);

RP_KERNEL(vr_twice, { RP_PTR(int32_t, 0)[RP_X] *= 2; })
static const rp_param vr_params[] = {{"a", RP_INOUT}};

/* A descriptor of the older layout (up to xrt_nargs): the members past
 * its size hold what an older caller's memory would, rubbish. */
static rp_kernel older_kernel(void) {
  rp_kernel k;
  memset(&k, 0xA5, sizeof k);
  k.size = offsetof(rp_kernel, split_axis);
  k.name = "twice";
  k.nparams = 1;
  k.params = vr_params;
  k.cpu = vr_twice_rp_cpu;
  k.cuda = NULL;
  k.cuda_host = NULL;
  memset(k.block, 0, sizeof k.block);
  k.xrt = NULL;
  k.xrt_argmap = NULL;
  k.xrt_nargs = 0;
  return k;
}

/* A graph over a[4], and the argument naming it whole. */
static rp_graph *four_ints(int32_t *a, rp_arg *arg) {
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "a", a, 4 * sizeof *a, &b));
  *arg = rp_arg_buf(rp_whole(b));
  return g;
}

Test(versioned_record, older_kernel_gets_defaults_and_replays) {
  rp_kernel k = older_kernel();
  int32_t a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "a", a, sizeof a, &b));
  rp_arg arg = rp_arg_buf(rp_whole(b));
  rp_node n0, n1;
  TU_OK(g, rp_record_kernel(g, &k, 0, rp_dims3(8, 1, 1), &arg, NULL, &n0));
  TU_OK(g, rp_record_kernel(g, &k, 0, rp_dims3(8, 1, 1), &arg, NULL, &n1));
  TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
  TU_OK(g, rp_graph_end(g));
  rp_node_info i0, i1;
  TU_OK(g, rp_node_info_get(g, n0, &i0));
  TU_OK(g, rp_node_info_get(g, n1, &i1));
  /* The graph's own full-size copy, one per descriptor. */
  cr_assert_neq(i0.kernel, &k);
  cr_assert_eq(i0.kernel, i1.kernel);
  cr_assert_eq(i0.kernel->size, sizeof(rp_kernel));
  cr_assert_str_eq(i0.kernel->name, "twice");
  cr_assert_eq(i0.kernel->cpu, vr_twice_rp_cpu);
  cr_assert_eq(i0.kernel->split_axis, RP_SPLIT_NONE);
  cr_assert_eq(i0.kernel->split_follow, 0);
  cr_assert_eq(i0.kernel->hint, 0);
  cr_assert_null(i0.kernel->cuda_args);
  const rp_backend *ref;
  TU_OK(NULL, rp_backend_find("reference", &ref));
  rp_exec *x;
  TU_OK(NULL, rp_exec_create(&x, g, ref, NULL));
  TU_OK(NULL, rp_exec_run(x, 1));
  rp_exec_destroy(x);
  for (int i = 0; i < 8; i++)
    cr_assert_eq(a[i], 4 * (i + 1), "a[%d] = %d", i, a[i]);
  rp_graph_destroy(g);
}

/* A graph bound from one with an older-size descriptor keeps a copy of
 * its own, so that the first may be destroyed first (rp_graph_bind()). */
Test(versioned_record, bound_graph_outlives_the_first) {
  rp_kernel k = older_kernel();
  int32_t a[4] = {1, 2, 3, 4};
  rp_arg arg;
  rp_graph *g = four_ints(a, &arg);
  TU_OK(g, rp_record_kernel(g, &k, 0, rp_dims3(4, 1, 1), &arg, NULL, NULL));
  TU_OK(g, rp_record_sync_host(g, arg.region, NULL));
  TU_OK(g, rp_graph_end(g));
  rp_graph *c = NULL;
  void *host[1] = {a};
  TU_OK(NULL, rp_graph_bind(g, NULL, host, &c));
  rp_node_info gi, ci;
  TU_OK(g, rp_node_info_get(g, 1, &gi));
  TU_OK(c, rp_node_info_get(c, 1, &ci));
  cr_assert_eq(gi.type, RP_OP_KERNEL);
  cr_assert_eq(ci.type, RP_OP_KERNEL);
  cr_assert_neq(ci.kernel, gi.kernel, "c uses g's copy");
  cr_assert_eq(ci.kernel->cpu, vr_twice_rp_cpu);
  rp_graph_destroy(g);
  cr_assert_str_eq(ci.kernel->name, "twice");
  TU_OK(NULL, rp_replay_reference(c, 1));
  for (int i = 0; i < 4; i++)
    cr_assert_eq(a[i], 2 * (i + 1));
  rp_graph_destroy(c);
}

Test(versioned_record, current_kernel_is_kept_as_given) {
  static const rp_kernel k = RP_KERNEL_DESC(vr_twice, vr_params);
  cr_assert_eq(k.size, sizeof(rp_kernel));
  int32_t a[4] = {0};
  rp_arg arg;
  rp_graph *g = four_ints(a, &arg);
  rp_node n;
  TU_OK(g, rp_record_kernel(g, &k, 0, rp_dims3(4, 1, 1), &arg, NULL, &n));
  rp_node_info ni;
  TU_OK(g, rp_node_info_get(g, n, &ni));
  cr_assert_eq(ni.kernel, &k);
  rp_kernel e;
  rp_kernel_init(&e);
  cr_assert_eq(e.size, sizeof e);
  cr_assert_null(e.name);
  rp_graph_destroy(g);
}

/* Refused with RP_EINVAL, nothing recorded, and both messages say why. */
static void refused(rp_graph *g, rp_status s, const char *why) {
  cr_assert_eq(s, RP_EINVAL);
  cr_assert(strstr(rp_last_error(), why), "%s", rp_last_error());
  cr_assert(strstr(rp_graph_error(g), why), "%s", rp_graph_error(g));
  cr_assert_eq(rp_graph_num_nodes(g), 0);
}

Test(versioned_record, wrong_kernel_sizes_are_refused) {
  int32_t a[4] = {0};
  rp_arg arg;
  rp_graph *g = four_ints(a, &arg);
  rp_kernel k = RP_KERNEL_WITH(.name = "twice", .nparams = 1,
                               .params = vr_params, .cpu = vr_twice_rp_cpu);
  size_t sizes[] = {0, 3, offsetof(rp_kernel, split_axis) - 1,
                    sizeof(rp_kernel) + 8};
  const char *why[] = {"kernel \"?\": size is 0: build the descriptor",
                       "size 3 is not a size of rp_kernel",
                       "is not a size of rp_kernel", "is not a size"};
  for (unsigned i = 0; i < 4; i++) {
    k.size = sizes[i];
    refused(g, rp_record_kernel(g, &k, 0, rp_dims3(4, 1, 1), &arg, NULL, NULL),
            why[i]);
    refused(g, rp_record_task(g, &k, 0, &arg, NULL, NULL), why[i]);
  }
  rp_graph_destroy(g);
}

Test(versioned_record, op_opts_older_size_and_wrong_sizes) {
  rp_op_opts o0 = RP_OP_OPTS_INIT, o1;
  rp_op_opts_init(&o1);
  cr_assert_eq(o0.size, sizeof(rp_op_opts));
  cr_assert_eq(o1.size, sizeof(rp_op_opts));
  cr_assert(!o0.name && !o1.name && !o0.after && !o1.after);
  cr_assert(o0.cost_us == 0 && o1.cost_us == 0 && !o0.nafter && !o1.nafter);
  unsigned char m[16] = {0};
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, RP_GRAPH_NO_COHERENCE));
  TU_OK(g, rp_buffer_register(g, "m", m, sizeof m, &b));
  rp_access acc = {rp_whole(b), RP_INOUT};
  /* Wrong sizes first: nothing is recorded. */
  rp_op_opts bad = RP_OP_OPTS_WITH(.name = "bad");
  bad.size = 0;
  refused(g, rp_record_host(g, tu_host_bump, NULL, &acc, 1, &bad, NULL),
          "rp_op_opts: size is 0");
  bad.size = sizeof bad + 8;
  refused(g, rp_record_host(g, tu_host_bump, NULL, &acc, 1, &bad, NULL),
          "rp_op_opts: size");
  bad.size = offsetof(rp_op_opts, after) - 1;
  refused(g, rp_record_copy_to_device(g, rp_whole(b), 0, &bad, NULL),
          "is not a size of this struct");
  rp_node first;
  TU_OK(g,
        rp_record_host(g, tu_host_bump, NULL, &acc, 1,
                       &(rp_op_opts)RP_OP_OPTS_WITH(.name = "first"), &first));
  /* An older caller's options end before `after`: what lies past them
   * (here a dependency list of 5 bogus nodes) is not read. */
  rp_op_opts older;
  memset(&older, 0xA5, sizeof older);
  older.size = offsetof(rp_op_opts, after);
  older.name = "second";
  older.cost_us = 12.5;
  rp_node second;
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(b), 0, &older, &second));
  TU_OK(g, rp_graph_end(g));
  rp_node_info ni;
  TU_OK(g, rp_node_info_get(g, second, &ni));
  cr_assert_str_eq(ni.name, "second");
  cr_assert_eq(ni.cost_us, 12.5);
  /* The one edge is the hazard on m, no explicit dependency. */
  cr_assert_eq(rp_graph_num_edges(g), 1);
  cr_assert(tu_has_edge(g, first, second, RP_EDGE_RAW, b));
  rp_graph_destroy(g);
}
