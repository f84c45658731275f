/* Tests of the dependency check on transcribed stream programs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "reprise.h"
#include "util.h"

static void nop_cpu(const rp_kargs *a, const uint64_t lo[3],
                    const uint64_t hi[3]) {}
static void nop_host(void *user, void *const *ptrs) {}
static const rp_param p_io[] = {{"a", RP_INOUT}};
static const rp_kernel k_io = RP_KERNEL_WITH(.name = "k_io", .nparams = 1,
                                             .params = p_io, .cpu = nop_cpu);
static unsigned char ma[1024], mb[512];

static rp_op_opts after(const char *name, double us, const rp_node *a,
                        unsigned n) {
  rp_op_opts o =
      RP_OP_OPTS_WITH(.name = name, .cost_us = us, .after = a, .nafter = n);
  return o;
}

/* Two CUDA streams transcribed, one per device:
 *   stream 0: h2d A; K1(A); d2h A
 *   stream 1: wait(event after h2d A); h2d B; K2(B); d2h B; host(A, B)
 * The wait on h2d A orders nothing that conflicts (superfluous), the host
 * task reads A on the host without waiting for d2h A (a RAW race), and
 * with `implied` it also names h2d B, which the stream orders anyway. */
static rp_graph *streams(int fixed, int implied) {
  rp_graph *g;
  rp_buf A, B;
  rp_node n[7];
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  TU_OK(g, rp_buffer_register(g, "A", ma, sizeof ma, &A));
  TU_OK(g, rp_buffer_register(g, "B", mb, sizeof mb, &B));
  rp_op_opts o = after("h2d A", 10, NULL, 0);
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(A), 0, &o, &n[0]));
  rp_arg arg = rp_arg_buf(rp_whole(A));
  o = after("K1", 50, &n[0], 1);
  TU_OK(g, rp_record_kernel(g, &k_io, 0, rp_dims3(8, 1, 1), &arg, &o, &n[1]));
  o = after("d2h A", 10, &n[1], 1);
  TU_OK(g, rp_record_copy_to_host(g, rp_whole(A), 0, &o, &n[2]));
  o = after("h2d B", 10, &n[0], 1);
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(B), 1, &o, &n[3]));
  arg = rp_arg_buf(rp_whole(B));
  o = after("K2", 50, &n[3], 1);
  TU_OK(g, rp_record_kernel(g, &k_io, 1, rp_dims3(8, 1, 1), &arg, &o, &n[4]));
  o = after("d2h B", 10, &n[4], 1);
  TU_OK(g, rp_record_copy_to_host(g, rp_whole(B), 1, &o, &n[5]));
  rp_node w[3] = {n[5], implied ? n[3] : n[2], n[2]};
  rp_access acc[2] = {{rp_whole(A), RP_IN}, {rp_whole(B), RP_IN}};
  o = after("host", 10, w, fixed ? 3 : implied ? 2 : 1);
  TU_OK(g, rp_record_host(g, nop_host, NULL, acc, 2, &o, &n[6]));
  TU_OK(g, rp_graph_end(g));
  return g;
}

Test(check, race_and_superfluous_event) {
  rp_graph *g = streams(0, 1);
  rp_check *c = NULL;
  cr_assert_eq(rp_check_deps(g, NULL, &c), RP_OK);
  cr_assert_eq(rp_check_num_races(c), 1);
  rp_check_item r;
  cr_assert_eq(rp_check_race(c, 0, &r), RP_OK);
  cr_assert_eq(r.from, 2);
  cr_assert_eq(r.to, 6);
  cr_assert_eq(r.kind, RP_EDGE_RAW);
  cr_assert_eq(r.buf, 0);
  cr_assert_eq(r.space, RP_SPACE_HOST);
  cr_assert_eq(r.offset, 0);
  cr_assert_eq(r.bytes, sizeof ma);
  cr_assert_eq(rp_check_num_superfluous(c), 2);
  rp_check_item x;
  cr_assert_eq(rp_check_superfluous(c, 0, &x), RP_OK);
  cr_assert_eq(x.from, 0);
  cr_assert_eq(x.to, 3);
  cr_assert_eq(x.implied, 0);
  /* As written: 10 + 10 + 50 + 10 + 10 along stream 1; without the wait
   * stream 1 starts at once: 80. */
  cr_assert_float_eq(x.gain_us, 10, 1e-9);
  cr_assert_eq(rp_check_superfluous(c, 1, &x), RP_OK);
  cr_assert_eq(x.from, 3);
  cr_assert_eq(x.to, 6);
  cr_assert_eq(x.implied, 1);
  cr_assert_float_eq(x.gain_us, 0, 1e-9);
  double w, m;
  rp_check_times(c, &w, &m);
  cr_assert_float_eq(w, 90, 1e-9);
  cr_assert_float_eq(m, 80, 1e-9);
  cr_assert_eq(rp_check_race(c, 1, &r), RP_EINVAL);
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  cr_assert_eq(rp_check_write_text(c, fp), RP_OK);
  fclose(fp);
  cr_assert(strstr(buf, "raw: #2 d2h A -> #6 host on A in host, bytes "
                        "[0, 1024)"),
            "%s", buf);
  cr_assert(strstr(buf, "#0 h2d A -> #3 h2d B: dropping it gains 10.000 us"),
            "%s", buf);
  free(buf);
  rp_check_destroy(c);
  rp_graph_destroy(g);
}

Test(check, fixed_program_has_no_race) {
  rp_graph *g = streams(1, 0);
  rp_check *c = NULL;
  cr_assert_eq(rp_check_deps(g, NULL, &c), RP_OK);
  cr_assert_eq(rp_check_num_races(c), 0);
  cr_assert_eq(rp_check_num_superfluous(c), 1);
  rp_check_destroy(c);
  rp_graph_destroy(g);
}

/* Partial overlap: kernels on byte ranges [0, 100) and [50, 150) of one
 * buffer in two streams race on [50, 100) (the third waits on the second,
 * which writes a disjoint range); disjoint ranges do not. */
static const rp_param p_w[] = {{"a", RP_OUT}};
static const rp_kernel k_w =
    RP_KERNEL_WITH(.name = "k_w", .nparams = 1, .params = p_w, .cpu = nop_cpu);
Test(check, byte_range_of_a_race) {
  rp_graph *g;
  rp_buf A;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  TU_OK(g, rp_buffer_register(g, "A", ma, sizeof ma, &A));
  rp_arg a0 = rp_arg_buf(rp_bytes(A, 0, 100)),
         a1 = rp_arg_buf(rp_bytes(A, 50, 100)),
         a2 = rp_arg_buf(rp_bytes(A, 200, 100));
  TU_OK(g, rp_record_kernel(g, &k_w, 0, rp_dims3(8, 1, 1), &a0, NULL, NULL));
  TU_OK(g, rp_record_kernel(g, &k_w, 1, rp_dims3(8, 1, 1), &a2, NULL, NULL));
  rp_node one = 1;
  rp_op_opts o = after("k", 0, &one, 1);
  TU_OK(g, rp_record_kernel(g, &k_w, 0, rp_dims3(8, 1, 1), &a1, &o, NULL));
  TU_OK(g, rp_graph_end(g));
  rp_check *c = NULL;
  cr_assert_eq(rp_check_deps(g, NULL, &c), RP_OK);
  cr_assert_eq(rp_check_num_orders(c), 1);
  cr_assert_eq(rp_check_num_races(c), 1);
  rp_check_item r;
  rp_check_race(c, 0, &r);
  cr_assert_eq(r.from, 0);
  cr_assert_eq(r.to, 2);
  cr_assert_eq(r.kind, RP_EDGE_WAW);
  cr_assert_eq(r.space, 0);
  cr_assert_eq(r.offset, 50);
  cr_assert_eq(r.bytes, 50);
  rp_check_destroy(c);
  rp_graph_destroy(g);
}

Test(check, command_line) {
  rp_graph *g = streams(0, 0);
  char path[] = "/tmp/rp_check_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  FILE *fp = fdopen(fd, "w");
  cr_assert_eq(rp_graph_write_json(g, fp), RP_OK);
  fclose(fp);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s check %s --json > %s.out", RP_TEST_TOOL, path,
           path);
  int st = system(cmd);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 3, "status %d", st);
  snprintf(cmd, sizeof cmd, "%s.out", path);
  fp = fopen(cmd, "r");
  char buf[4096] = "";
  size_t k = fread(buf, 1, sizeof buf - 1, fp);
  buf[k] = 0;
  fclose(fp);
  cr_assert(strstr(buf, "\"from\": 2, \"to\": 6, \"kind\": \"raw\""), "%s",
            buf);
  cr_assert(strstr(buf, "\"as_written_us\": 90"), "%s", buf);
  unlink(cmd);
  unlink(path);
  rp_graph_destroy(g);
}

/* With a model the gains are the model's: each op pays a 1 us node
 * overhead, so the wait on h2d A costs 11 us. */
Test(check, gains_from_the_model) {
  rp_graph *g = streams(0, 1);
  rp_model m;
  rp_model_init(&m);
  snprintf(m.mode[0].name, sizeof m.mode[0].name, "graph");
  m.mode[0].op_us = 1;
  m.nmode = 1;
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = &m;
  rp_check *c = NULL;
  cr_assert_eq(rp_check_deps(g, &o, &c), RP_OK);
  rp_check_item x;
  cr_assert_eq(rp_check_superfluous(c, 0, &x), RP_OK);
  cr_assert_float_eq(x.gain_us, 11, 1e-9);
  double w, mn;
  rp_check_times(c, &w, &mn);
  cr_assert_float_eq(w, 95, 1e-9);
  cr_assert_float_eq(mn, 84, 1e-9);
  rp_check_destroy(c);
  rp_graph_destroy(g);
}

/* A 21-op program recorded with the library (automatic coherence: copies
 * inserted, no `after` list) has no hand-written order: the check says so
 * and exits 0 (it once reported all 88 conflicting pairs as races, exit
 * 3). */
static const rp_param p_rw[] = {{"src", RP_IN}, {"dst", RP_INOUT}};
static const rp_kernel k_rw = RP_KERNEL_WITH(.name = "heat", .nparams = 2,
                                             .params = p_rw, .cpu = nop_cpu);
static unsigned char heat[2][256];

static rp_graph *library_program(unsigned steps, int with_after) {
  rp_graph *g;
  rp_buf U, V;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, rp_buffer_register(g, "U", heat[0], sizeof heat[0], &U));
  TU_OK(g, rp_buffer_register(g, "V", heat[1], sizeof heat[1], &V));
  for (unsigned s = 0; s < steps; s++)
    for (unsigned h = 0; h < 2; h++) {
      rp_buf from = s % 2 ? V : U, to = s % 2 ? U : V;
      rp_arg a[2] = {rp_arg_buf(rp_whole(from)),
                     rp_arg_buf(rp_bytes(to, 128 * h, 128))};
      TU_OK(g,
            rp_record_kernel(g, &k_rw, 0, rp_dims3(16, 1, 1), a, NULL, NULL));
    }
  rp_node last = rp_graph_num_nodes(g) - 1;
  rp_op_opts o = after("report", 0, &last, with_after ? 1 : 0);
  rp_access acc = {rp_whole(U), RP_IN};
  TU_OK(g, rp_record_host(g, nop_host, NULL, &acc, 1, &o, NULL));
  TU_OK(g, rp_graph_end(g));
  return g;
}

Test(check, library_graph_has_no_hand_written_orders) {
  rp_graph *g = library_program(8, 0);
  cr_assert_eq(rp_graph_num_nodes(g), 21, "%u ops", rp_graph_num_nodes(g));
  rp_check *c = NULL;
  cr_assert_eq(rp_check_deps(g, NULL, &c), RP_OK);
  cr_assert_eq(rp_check_num_orders(c), 0);
  cr_assert_eq(rp_check_num_races(c), 0);
  cr_assert_eq(rp_check_num_superfluous(c), 0);
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  cr_assert_eq(rp_check_write_text(c, fp), RP_OK);
  fclose(fp);
  cr_assert(strstr(buf, "no hand-written orders to check"), "%s", buf);
  free(buf);
  rp_check_destroy(c);
  /* Saved and checked by the tool: exit 0. */
  char path[] = "/tmp/rp_check_libXXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  fp = fdopen(fd, "w");
  cr_assert_eq(rp_graph_write_json(g, fp), RP_OK);
  fclose(fp);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s check %s > /dev/null", RP_TEST_TOOL, path);
  int st = system(cmd);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
  unlink(path);
  rp_graph_destroy(g);
}

/* One `after` list in a library program: that order is checked; the
 * copies coherence inserted are never in a race. */
Test(check, library_graph_with_one_after) {
  rp_graph *g = library_program(8, 1);
  rp_check *c = NULL;
  cr_assert_eq(rp_check_deps(g, NULL, &c), RP_OK);
  cr_assert_eq(rp_check_num_orders(c), 1);
  for (uint32_t i = 0; i < rp_check_num_races(c); i++) {
    rp_check_item r;
    rp_node_info a, b;
    rp_check_race(c, i, &r);
    rp_node_info_get(g, r.from, &a);
    rp_node_info_get(g, r.to, &b);
    cr_assert(!a.inserted && !b.inserted, "race %u -> %u", r.from, r.to);
  }
  rp_check_destroy(c);
  rp_graph_destroy(g);
}
