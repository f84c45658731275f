/* The analysis over MPI ranks: copies between two ranks' spaces on a
 * "net:a-b" lane of their pair, costed latency + bytes / bandwidth. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "reprise/backend.h"
#include "reprise/kernel.h"
#include "util.h"

RP_KERNEL(net_touch, { RP_PTR(uint8_t, 0)[RP_X] += 1; })
static const rp_param net_touch_params[] = {{"a", RP_INOUT}};
static const rp_kernel net_touch_k =
    RP_KERNEL_DESC(net_touch, net_touch_params);

/* A buffer of 4 x 1000 bytes; device d touches row d, then every device
 * touches row 0 (only device 3 with `last`; coherence copies it around),
 * then the host reads all; `parts` > 0: A distributed by rows in parts. */
static rp_graph *ring_of(uint8_t *a, int last, unsigned parts) {
  rp_graph *g;
  rp_buf A;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register_2d(g, "A", a, 4, 1000, 1, &A));
  for (int d = 0; d < 4; d++) {
    rp_arg arg = rp_arg_buf(rp_box2(A, (uint64_t)d, (uint64_t)d + 1, 0, 1000));
    TU_OK(g, rp_record_kernel(g, &net_touch_k, d, rp_dims3(1000, 1, 1), &arg,
                              NULL, NULL));
  }
  for (int d = last ? 3 : 0; d < 4; d++) {
    rp_arg arg = rp_arg_buf(rp_box2(A, 0, 1, 0, 1000));
    TU_OK(g, rp_record_kernel(g, &net_touch_k, d, rp_dims3(1000, 1, 1), &arg,
                              NULL, NULL));
  }
  TU_OK(g, rp_record_sync_host(g, rp_whole(A), NULL));
  if (parts)
    TU_OK(g, rp_buffer_distribute(g, A, parts, NULL));
  TU_OK(g, rp_graph_end(g));
  return g;
}

static rp_graph *ring(uint8_t *a) { return ring_of(a, 0, 0); }

static int rank_of(int space, unsigned nr) {
  return space < 0 ? 0 : space % (int)nr;
}

Test(analyze_net, copies_between_ranks_on_pair_lanes) {
  uint8_t a[4000] = {0};
  rp_graph *g = ring(a);
  for (unsigned nr = 1; nr <= 4; nr++) {
    rp_analysis_opts o;
    rp_analysis_opts_init(&o);
    o.nranks = nr;
    o.net_latency_us = 7;
    o.net_gbps = 0.5; /* 500 bytes per us */
    rp_analysis *an;
    cr_assert_eq(rp_analyze(g, &o, &an), RP_OK);
    unsigned nnet = 0;
    for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
      rp_node_info ni;
      rp_node_info_get(g, n, &ni);
      rp_op_sched sc;
      const char *lane;
      double busy;
      cr_assert_eq(rp_analysis_op(an, n, &sc), RP_OK);
      cr_assert_eq(rp_analysis_lane(an, sc.lane, &lane, &busy), RP_OK);
      if (ni.type == RP_OP_KERNEL || ni.type == RP_OP_HOST) {
        cr_assert(strncmp(lane, "net:", 4), "%s on %s", ni.name, lane);
        continue;
      }
      int s = ni.type == RP_OP_COPY_H2D ? -1 : ni.device;
      int d = ni.type == RP_OP_COPY_H2D   ? ni.device
              : ni.type == RP_OP_COPY_D2H ? -1
                                          : ni.dst_device;
      int rs = rank_of(s, nr), rd = rank_of(d, nr);
      if (rs == rd) {
        cr_assert(strncmp(lane, "net:", 4), "%s within rank %d on %s", ni.name,
                  rs, lane);
        continue;
      }
      char want[16];
      snprintf(want, sizeof want, "net:%d-%d", rs < rd ? rs : rd,
               rs < rd ? rd : rs);
      cr_assert_str_eq(lane, want, "%s (rank %d -> %d)", ni.name, rs, rd);
      /* every copy here moves one row: 1000 bytes */
      cr_assert_float_eq(sc.cost_us, 7 + 1000 / 500.0, 1e-9, "%s: %g", ni.name,
                         sc.cost_us);
      nnet++;
    }
    if (nr == 1)
      cr_assert_eq(nnet, 0);
    else
      cr_assert_gt(nnet, 0, "%u ranks: no copy between ranks", nr);
    rp_summary sm;
    rp_analysis_summary(an, &sm);
    cr_assert_geq(sm.makespan_us + 1e-9, sm.max_lane_us);
    rp_analysis_destroy(an);
  }
  /* bad network figures are refused when there are ranks */
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.nranks = 2;
  o.net_gbps = 0;
  rp_analysis *an = NULL;
  cr_assert_eq(rp_analyze(g, &o, &an), RP_EINVAL);
  o.nranks = 1;
  cr_assert_eq(rp_analyze(g, &o, &an), RP_OK);
  rp_analysis_destroy(an);
  rp_graph_destroy(g);
}

/* With A distributed by rows (row d in part d, on rank d % nranks), a copy
 * between the host and a device is local when the device's rank holds the
 * copy's rows (and costs nothing: that rank keeps both in one memory),
 * else a transfer with the holder's rank; a transfer that was measured
 * costs the net model plus its pack and unpack (the measured copy each). */
Test(analyze_net, distributed_rows_and_pack_costs) {
  uint8_t a[4000] = {0};
  rp_graph *g = ring_of(a, 1, 4);
  uint32_t nop = rp_graph_num_nodes(g);
  double *us = malloc(nop * sizeof *us);
  for (uint32_t n = 0; n < nop; n++)
    us[n] = 3;
  for (unsigned nr = 2; nr <= 4; nr++) {
    rp_analysis_opts o;
    rp_analysis_opts_init(&o);
    o.nranks = nr;
    o.net_latency_us = 7;
    o.net_gbps = 0.5;
    o.measured_us = us;
    rp_analysis *an;
    cr_assert_eq(rp_analyze(g, &o, &an), RP_OK);
    unsigned nlocal = 0, nnet = 0;
    for (rp_node n = 0; n < nop; n++) {
      rp_node_info ni;
      rp_node_info_get(g, n, &ni);
      if (ni.type != RP_OP_COPY_H2D && ni.type != RP_OP_COPY_D2H)
        continue;
      rp_access_info h;
      rp_node_access(g, n, ni.type == RP_OP_COPY_H2D ? 0 : 1, &h);
      uint64_t iv[2] = {0, 0};
      rp_region_intervals(g, &h.region, iv, 1);
      int holder = (int)(iv[0] / 1000 % nr), dev = ni.device % (int)nr;
      rp_op_sched sc;
      const char *lane;
      double busy;
      cr_assert_eq(rp_analysis_op(an, n, &sc), RP_OK);
      cr_assert_eq(rp_analysis_lane(an, sc.lane, &lane, &busy), RP_OK);
      if (holder == dev) {
        cr_assert(strncmp(lane, "net:", 4), "%s on %s", ni.name, lane);
        cr_assert_float_eq(sc.cost_us, 0, 1e-12, "%s: %g", ni.name, sc.cost_us);
        nlocal++;
        continue;
      }
      char want[16];
      snprintf(want, sizeof want, "net:%d-%d", holder < dev ? holder : dev,
               holder < dev ? dev : holder);
      cr_assert_str_eq(lane, want, "%s", ni.name);
      cr_assert_float_eq(sc.cost_us, 7 + 1000 / 500.0 + 2 * 3, 1e-9, "%s: %g",
                         ni.name, sc.cost_us);
      nnet++;
    }
    cr_assert_gt(nlocal, 0);
    /* row 0 goes home from device 3: another rank's, but with 3 ranks */
    cr_assert_eq(nnet, nr == 3 ? 0 : 1, "%u ranks: %u", nr, nnet);
    rp_analysis_destroy(an);
  }
  free(us);
  rp_graph_destroy(g);
}
