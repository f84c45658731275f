/* Tests of several logical devices on the OpenMP backend (core groups):
 * heat 2D, matmul by rows and two kernels against the reference replay and
 * plain loops; the halo peer copies automatic coherence inserts. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "util.h"
#ifdef RP_HAVE_EXAMPLES
#include "multidev.h"

#include "backends/multidev_wl.h"

static const rp_backend *openmp(void) {
  const rp_backend *be = NULL;
  TU_OK(NULL, rp_backend_find("openmp", &be));
  return be;
}

/* The option sets every workload runs under: default groups; two threads
 * pinned on cores 1 and 0 with devices swapped between the groups; serial;
 * one thread (every device in one group). */
static void wl_all_opts(wl *w, unsigned replays, const char *name) {
  static const int cores[2] = {1, 0};
  static const int swap[4] = {1, 0, 1, 0};
  char what[96];
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  snprintf(what, sizeof what, "%s, default groups", name);
  wl_compare(w, openmp(), replays, &o, what);
  if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
    o.nthreads = 2;
    o.cores = cores;
    o.ncores = 2;
    o.device_map = swap;
    o.ndevice_map = 4;
    snprintf(what, sizeof what, "%s, cores {1,0}, map {1,0,1,0}", name);
    wl_compare(w, openmp(), replays, &o, what);
  }
  rp_exec_opts_init(&o);
  o.mode = "serial";
  snprintf(what, sizeof what, "%s, serial", name);
  wl_compare(w, openmp(), replays, &o, what);
  o.mode = NULL;
  o.nthreads = 1;
  snprintf(what, sizeof what, "%s, one thread", name);
  wl_compare(w, openmp(), replays, &o, what);
  o.nthreads = 3;
  snprintf(what, sizeof what, "%s, three threads", name);
  wl_compare(w, openmp(), replays, &o, what);
}

Test(openmp_multidev, heat2d_automatic_halo, .timeout = 120) {
  for (unsigned nd = 1; nd <= 4; nd++) {
    wl w;
    char name[64];
    memset(&w, 0, sizeof w);
    w.kind = W_HEAT;
    w.h.n = 37 + nd;
    w.h.steps = 5 + nd % 2;
    w.h.devices = nd;
    wl_make(&w, 0, 3);
    snprintf(name, sizeof name, "heat2d on %u devices", nd);
    wl_all_opts(&w, 3, name);
    wl_free(&w);
  }
}

Test(openmp_multidev, heat2d_explicit_halo, .timeout = 120) {
  for (unsigned nd = 2; nd <= 3; nd++) {
    wl w;
    char name[64];
    memset(&w, 0, sizeof w);
    w.kind = W_HEAT;
    w.h.n = 40;
    w.h.steps = 4;
    w.h.devices = nd;
    w.h.explicit_halo = 1;
    wl_make(&w, RP_GRAPH_NO_COHERENCE, 2);
    snprintf(name, sizeof name, "explicit heat2d on %u devices", nd);
    wl_all_opts(&w, 2, name);
    wl_free(&w);
  }
}

Test(openmp_multidev, matmul_rows, .timeout = 120) {
  for (unsigned nd = 1; nd <= 3; nd++) {
    wl w;
    char name[64];
    memset(&w, 0, sizeof w);
    w.kind = W_MM;
    w.m.n = 29 + nd;
    w.m.devices = nd;
    wl_make(&w, 0, 2);
    snprintf(name, sizeof name, "matmul_rows on %u devices", nd);
    wl_all_opts(&w, 2, name);
    wl_free(&w);
  }
}

Test(openmp_multidev, twokernels, .timeout = 120) {
  wl w;
  memset(&w, 0, sizeof w);
  w.kind = W_TWOK;
  w.t.n = 10000;
  w.t.inner = 7;
  w.t.rounds = 3;
  wl_make(&w, 0, 3);
  wl_all_opts(&w, 3, "twokernels");
  wl_free(&w);
}

/* matmul: B goes to every device, A's rows only to their device. */
Test(openmp_multidev, matmul_rows_copies, .timeout = 30) {
  ex_mmrows p = {12, 3};
  double a[144], b[144], c[144];
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_mmrows_record(g, &p, a, b, c));
  TU_OK(g, rp_graph_end(g));
  unsigned bto[3] = {0, 0, 0}, ato[3] = {0, 0, 0}, home = 0;
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
    rp_node_info ni;
    rp_access_info ai;
    TU_OK(g, rp_node_info_get(g, n, &ni));
    cr_assert_neq(ni.type, RP_OP_COPY_D2D, "no peer copy expected");
    if (ni.type == RP_OP_KERNEL)
      continue;
    TU_OK(g, rp_node_access(g, n, 0, &ai));
    if (ni.type == RP_OP_COPY_D2H) {
      cr_assert_eq(ai.region.buf, 2u);
      home++;
      continue;
    }
    cr_assert_eq(ni.type, RP_OP_COPY_H2D);
    cr_assert(ai.region.buf < 2, "only A and B go to the devices");
    (ai.region.buf ? bto : ato)[ni.device]++;
  }
  for (unsigned d = 0; d < 3; d++) {
    cr_assert_eq(bto[d], 1u, "B to device %u", d);
    cr_assert_eq(ato[d], 1u, "A to device %u", d);
  }
  cr_assert_eq(home, 3u, "C's rows home from each device");
  rp_graph_destroy(g);
}

/* twokernels: one kernel chain per compute lane, nothing between the two;
 * with the default costs (10 us per kernel, copies by bytes) the bound is
 * exactly 2. */
Test(openmp_multidev, twokernels_analysis, .timeout = 30) {
  ex_twok p = {4096, 3, 4};
  uint64_t x[4096], y[4096];
  rp_graph *g;
  rp_analysis *an;
  rp_summary sm;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_twok_record(g, &p, x, y));
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp_graph_num_devices(g), 2u);
  for (uint32_t i = 0; i < rp_graph_num_edges(g); i++) {
    rp_edge e;
    rp_node_info a, b;
    TU_OK(g, rp_graph_edge(g, i, &e));
    TU_OK(g, rp_node_info_get(g, e.from, &a));
    TU_OK(g, rp_node_info_get(g, e.to, &b));
    cr_assert_eq(a.device, b.device, "edge %u->%u joins the devices", e.from,
                 e.to);
  }
  TU_OK(NULL, rp_analyze(g, NULL, &an));
  rp_analysis_summary(an, &sm);
  cr_assert_float_eq(sm.bound, 2.0, 1e-12, "bound %g", sm.bound);
  cr_assert_float_eq(sm.max_lane_us, 40.0, 1e-9);
  int seen[2] = {0, 0};
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
    rp_node_info ni;
    rp_op_sched os;
    const char *lane;
    double busy;
    TU_OK(g, rp_node_info_get(g, n, &ni));
    if (ni.type != RP_OP_KERNEL)
      continue;
    TU_OK(NULL, rp_analysis_op(an, n, &os));
    TU_OK(NULL, rp_analysis_lane(an, os.lane, &lane, &busy));
    cr_assert_str_eq(lane, ni.device ? "compute:1" : "compute:0");
    cr_assert_float_eq(busy, 40.0, 1e-9, "%s busy %g", lane, busy);
    seen[ni.device]++;
  }
  cr_assert_eq(seen[0], 4);
  cr_assert_eq(seen[1], 4);
  rp_analysis_destroy(an);
  rp_graph_destroy(g);
}

/* ---- the halo exchange of a small heat 2D graph ---- */

/* Rows [*r0, *r1) an access covers in an n-column 2-d buffer of doubles. */
static void acc_rows(const rp_access_info *a, uint64_t n, uint64_t *r0,
                     uint64_t *r1) {
  if (a->region.kind == RP_REGION_BOX) {
    cr_assert_eq(a->region.lo[1], 0u);
    cr_assert_eq(a->region.hi[1], n);
    *r0 = a->region.lo[0];
    *r1 = a->region.hi[0];
  } else if (a->region.kind == RP_REGION_BYTES) {
    cr_assert_eq(a->region.offset % (n * 8), 0u);
    cr_assert_eq(a->region.bytes % (n * 8), 0u);
    *r0 = a->region.offset / (n * 8);
    *r1 = (a->region.offset + a->region.bytes) / (n * 8);
  } else {
    *r0 = 0;
    *r1 = n;
  }
}

typedef struct peer {
  unsigned step, src, dst;
  rp_buf buf;
  uint64_t row;
  int seen;
} peer;

/* n = 12 over 3 devices (rows 0-3, 4-7, 8-11), 3 steps: before steps 1
 * and 2 (0-based) device d gets row r0 - 1 from d - 1 and row r1 from
 * d + 1, of the buffer the step reads, each peer copy fed by exactly the
 * previous step's kernel on its source device and feeding the kernel of
 * its destination; kernels of different devices never touch directly, and
 * a halo row written next to a device's own rows conflicts with nothing
 * there. With the halo recorded by hand: the same copies, nothing
 * inserted. */
static void check_halo(int explicit_halo, unsigned flags) {
  enum { N = 12, ND = 3, S = 3 };
  ex_heat2d p = {N, S, ND, explicit_halo};
  double u[N * N], v[N * N];
  rp_graph *g;
  char eb[4096];
  TU_OK(NULL, rp_graph_create(&g, flags));
  TU_OK(g, ex_heat2d_record(g, &p, u, v));
  TU_OK(g, rp_graph_end(g));
  peer want[16];
  unsigned nw = 0;
  for (unsigned s = 1; s < S; s++)
    for (unsigned d = 0; d < ND; d++) {
      uint64_t r0, r1;
      ex_heat2d_rows(&p, d, &r0, &r1);
      peer a = {s, d - 1, d, s % 2, r0 - 1, 0};
      peer b = {s, d + 1, d, s % 2, r1, 0};
      if (d > 0)
        want[nw++] = a;
      if (d + 1 < ND)
        want[nw++] = b;
    }
  cr_assert_eq(nw, 8u);
  rp_node kern[S][ND];
  unsigned nk = 0, npeer = 0, ninserted = 0;
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
    rp_node_info ni;
    TU_OK(g, rp_node_info_get(g, n, &ni));
    ninserted += ni.inserted;
    if (ni.type == RP_OP_KERNEL) {
      cr_assert_eq(ni.device, (int)(nk % ND), "kernels in device order");
      kern[nk / ND][nk % ND] = n;
      nk++;
    }
  }
  cr_assert_eq(nk, (unsigned)(S * ND));
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
    rp_node_info ni;
    rp_access_info in, out;
    uint64_t r0, r1, w0, w1;
    TU_OK(g, rp_node_info_get(g, n, &ni));
    if (ni.type != RP_OP_COPY_D2D)
      continue;
    npeer++;
    cr_assert_eq(ni.inserted, !explicit_halo);
    TU_OK(g, rp_node_access(g, n, 0, &in));
    TU_OK(g, rp_node_access(g, n, 1, &out));
    cr_assert_eq(in.space, ni.device);
    cr_assert_eq(out.space, ni.dst_device);
    acc_rows(&in, N, &r0, &r1);
    acc_rows(&out, N, &w0, &w1);
    cr_assert(r0 == w0 && r1 == w1 && r1 == r0 + 1,
              "peer copy %u: one row, got rows %llu-%llu", n,
              (unsigned long long)r0, (unsigned long long)r1);
    /* The step: the first kernel after the copy. */
    unsigned s = 0;
    while (s < S && kern[s][ND - 1] < n)
      s++;
    cr_assert(s > 0 && s < S, "peer copy %u before step %u", n, s);
    peer *m = NULL;
    for (unsigned i = 0; i < nw; i++)
      if (!want[i].seen && want[i].step == s &&
          want[i].src == (unsigned)ni.device &&
          want[i].dst == (unsigned)ni.dst_device &&
          want[i].buf == in.region.buf && want[i].row == r0)
        m = &want[i];
    cr_assert_not_null(m,
                       "unexpected peer copy %u (%s): buffer %u row %llu"
                       " %d->%d before step %u",
                       n, ni.name, in.region.buf, (unsigned long long)r0,
                       ni.device, ni.dst_device, s);
    m->seen = 1;
    /* Fed by exactly the writer of the row; feeds its kernel. */
    unsigned nin = 0;
    for (uint32_t i = 0; i < rp_graph_num_edges(g); i++) {
      rp_edge e;
      TU_OK(g, rp_graph_edge(g, i, &e));
      nin += e.to == n;
    }
    cr_assert_eq(nin, 1u, "peer copy %u: %s", n,
                 tu_edges_str(g, eb, sizeof eb));
    cr_assert(
        tu_has_edge(g, kern[s - 1][ni.device], n, RP_EDGE_RAW, in.region.buf),
        "%s", tu_edges_str(g, eb, sizeof eb));
    cr_assert(
        tu_has_edge(g, n, kern[s][ni.dst_device], RP_EDGE_RAW, in.region.buf),
        "%s", tu_edges_str(g, eb, sizeof eb));
    /* The destination's own rows, written by its previous kernel, touch
     * the halo row without overlapping it: no edge of any kind. */
    for (int k = 0; k < 4; k++)
      cr_assert(!tu_has_edge(g, kern[s - 1][ni.dst_device], n, (rp_edge_kind)k,
                             in.region.buf),
                "halo row conflicts with the rows beside it: %s",
                tu_edges_str(g, eb, sizeof eb));
  }
  cr_assert_eq(npeer, nw);
  if (explicit_halo)
    cr_assert_eq(ninserted, 0u, "coherence inserted %u copies", ninserted);
  /* Kernels: their own rows from the previous step, their halo through
   * the peer copies, never an edge straight from another device. */
  for (uint32_t i = 0; i < rp_graph_num_edges(g); i++) {
    rp_edge e;
    rp_node_info a, b;
    TU_OK(g, rp_graph_edge(g, i, &e));
    TU_OK(g, rp_node_info_get(g, e.from, &a));
    TU_OK(g, rp_node_info_get(g, e.to, &b));
    if (a.type == RP_OP_KERNEL && b.type == RP_OP_KERNEL)
      cr_assert_eq(a.device, b.device, "kernel edge %u->%u across devices",
                   e.from, e.to);
  }
  for (unsigned s = 1; s < S; s++)
    for (unsigned d = 0; d < ND; d++)
      cr_assert(tu_has_edge(g, kern[s - 1][d], kern[s][d], RP_EDGE_RAW,
                            (rp_buf)(s % 2)),
                "step %u device %u: %s", s, d, tu_edges_str(g, eb, sizeof eb));
  rp_graph_destroy(g);
}

Test(openmp_multidev, heat2d_halo_peer_copies, .timeout = 30) {
  check_halo(0, 0);
}

Test(openmp_multidev, heat2d_halo_by_hand, .timeout = 30) {
  check_halo(1, RP_GRAPH_NO_COHERENCE);
  check_halo(1, 0); /* coherence on: finds every region valid */
}

/* The explicit and the automatic graph compute the same grids. */
Test(openmp_multidev, heat2d_explicit_equals_automatic, .timeout = 60) {
  enum { N = 33 };
  ex_heat2d p = {N, 6, 3, 0};
  double u[N * N], v[N * N], u2[N * N], v2[N * N];
  rp_graph *g, *g2;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_heat2d_record(g, &p, u, v));
  TU_OK(g, rp_graph_end(g));
  p.explicit_halo = 1;
  TU_OK(NULL, rp_graph_create(&g2, RP_GRAPH_NO_COHERENCE));
  TU_OK(g2, ex_heat2d_record(g2, &p, u2, v2));
  TU_OK(g2, rp_graph_end(g2));
  ex_heat2d_init(&p, u, v);
  ex_heat2d_init(&p, u2, v2);
  TU_OK(g, rp_replay_reference(g, 2));
  TU_OK(g2, rp_replay_reference(g2, 2));
  cr_assert_eq(memcmp(u, u2, sizeof u), 0);
  cr_assert_eq(memcmp(v, v2, sizeof v), 0);
  rp_graph_destroy(g);
  rp_graph_destroy(g2);
}

#else
Test(openmp_multidev, examples_not_built) {
  cr_skip_test("examples not built (RP_BUILD_EXAMPLES=OFF)");
}
#endif

/* Two kernels on devices 0 and 1, each behind an (elided) copy to its
 * device, must run at the same time: each raises its flag and waits for
 * the other's, giving up after 5 s (no timing is measured: only whether
 * the other was seen). Run one after the other, neither sees
 * the other's flag. (Regression: the copies, which any group may run, all
 * started in group 0's queue, and device 1's chain waited for device 0's.)
 */
RP_KERNEL(rendezvous_k, {
  int *flag = RP_PTR(int, 0), *seen = RP_PTR(int, 1);
  int me = (int)RP_VAL(int64_t, 2);
  __atomic_store_n(&flag[me], 1, __ATOMIC_SEQ_CST);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    if (__atomic_load_n(&flag[1 - me], __ATOMIC_SEQ_CST)) {
      seen[me] = 1;
      break;
    }
    usleep(10);
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while (t.tv_sec - t0.tv_sec < 5);
})
static const rp_param rendezvous_params[] = {
    {"flag", RP_INOUT}, {"seen", RP_INOUT}, {"me", RP_SCALAR}};
static const rp_kernel rendezvous =
    RP_KERNEL_DESC(rendezvous_k, rendezvous_params);

Test(openmp_multidev, devices_run_at_the_same_time, .timeout = 60) {
  int flag[2][2] = {{0, 0}, {0, 0}}, seen[2][2] = {{0, 0}, {0, 0}};
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  /* One flag pair shared through host memory: the plan shares images
   * between spaces (every write is synced home), which is what lets the
   * kernels see each other. */
  rp_buf f[2], sn[2];
  TU_OK(g, rp_buffer_register(g, "f0", flag[0], sizeof flag[0], &f[0]));
  TU_OK(g, rp_buffer_register(g, "s0", seen[0], sizeof seen[0], &sn[0]));
  TU_OK(g, rp_buffer_register(g, "s1", seen[1], sizeof seen[1], &sn[1]));
  (void)f[1];
  for (int d = 0; d < 2; d++) {
    rp_arg a[3] = {rp_arg_buf(rp_whole(f[0])), rp_arg_buf(rp_whole(sn[d])),
                   rp_arg_i64(d)};
    /* Each device reads flags from its own copy: two kernels on one buffer
     * would be ordered by their hazard, so device 1 uses an after-free,
     * hazard-free alias: the same memory registered twice. */
    if (d == 1) {
      TU_OK(g, rp_buffer_register(g, "f1", flag[0], sizeof flag[0], &f[1]));
      a[0] = rp_arg_buf(rp_whole(f[1]));
    }
    TU_OK(g, rp_record_kernel(g, &rendezvous, d, rp_dims3(1, 1, 1), a, NULL,
                              NULL));
  }
  /* Every device write is brought home: the plan then shares each
   * buffer's images with the host's array (invisible over replays). */
  for (int d = 0; d < 2; d++) {
    TU_OK(g, rp_record_sync_host(g, rp_whole(f[d]), NULL));
    TU_OK(g, rp_record_sync_host(g, rp_whole(sn[d]), NULL));
  }
  TU_OK(g, rp_graph_end(g));
  const rp_backend *be;
  TU_OK(NULL, rp_backend_find("openmp", &be));
  rp_exec *x;
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.nthreads = 2;
  TU_OK(NULL, rp_exec_create(&x, g, be, &o));
  TU_OK(NULL, rp_exec_run(x, 1));
  cr_assert(seen[0][0] && seen[1][1],
            "the two devices' kernels did not run at the same time "
            "(device 0 saw %d, device 1 saw %d)",
            seen[0][0], seen[1][1]);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}
