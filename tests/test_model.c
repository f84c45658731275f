/* Tests of the machine model: its file, calibration, and the calibrated
 * prediction on small graphs with exact figures. */
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
#include "reprise/backend.h"
#include "util.h"
#include "analyze/analysis.h"
#include "measure/measure.h"

static void nop_cpu(const rp_kargs *a, const uint64_t lo[3],
                    const uint64_t hi[3]) {}
static const rp_param p_io[] = {{"a", RP_INOUT}};
static const rp_kernel k_io = RP_KERNEL_WITH(.name = "k_io", .nparams = 1,
                                             .params = p_io, .cpu = nop_cpu);

static unsigned char mem[4][2000000];

static rp_graph *graph(void) {
  rp_graph *g = NULL;
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE), RP_OK);
  return g;
}

static rp_buf buf(rp_graph *g, int i, uint64_t bytes) {
  char name[16];
  rp_buf b;
  snprintf(name, sizeof name, "B%d", i);
  TU_OK(g, rp_buffer_register(g, name, mem[i], bytes, &b));
  return b;
}

static rp_node kern(rp_graph *g, int dev, rp_buf x, uint64_t pts, double us) {
  rp_arg arg = rp_arg_buf(rp_whole(x));
  rp_op_opts o = RP_OP_OPTS_WITH(.cost_us = us);
  rp_node n;
  TU_OK(g, rp_record_kernel(g, &k_io, dev, rp_dims3(pts, 1, 1), &arg, &o, &n));
  return n;
}

/* A model with two modes: an overlapped one and "serial". */
static void model2(rp_model *m, const char *name, double op, double run,
                   int issue, double sop, double srun) {
  rp_model_init(m);
  snprintf(m->backend, sizeof m->backend, "test");
  snprintf(m->mode[0].name, sizeof m->mode[0].name, "%s", name);
  m->mode[0].op_us = op;
  m->mode[0].run_us = run;
  m->mode[0].host_issue = issue;
  snprintf(m->mode[1].name, sizeof m->mode[1].name, "serial");
  m->mode[1].op_us = sop;
  m->mode[1].run_us = srun;
  m->mode[1].host_issue = 1;
  m->nmode = 2;
}

static rp_analysis *run(rp_graph *g, const rp_model *m) {
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = m;
  rp_analysis *a = NULL;
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  return a;
}

#define EXACT(x, v)                                                            \
  cr_assert(fabs((x) - (v)) < 1e-9, #x " = %.17g, not %.17g", (double)(x),     \
            (double)(v))

Test(model, launch_overhead_in_both_predictions) {
  rp_graph *g = graph();
  for (int d = 0; d < 3; d++)
    kern(g, d, buf(g, d, 64), 16, 10);
  rp_model m;
  model2(&m, "graph", 1, 5, 0, 4, 2);
  rp_analysis *a = run(g, &m);
  rp_summary s;
  rp_analysis_summary(a, &s);
  cr_assert(s.modelled);
  EXACT(s.model_serial_us, 2 + 3 * (10 + 4));
  EXACT(s.model_overlap_us, 5 + 1 + 10);
  EXACT(s.model_speedup, 44.0 / 16.0);
  EXACT(s.predicted_speedup, 44.0 / 16.0); /* the headline: the model's */
  EXACT(s.schedule_speedup, 3);            /* the list schedule's */
  cr_assert_eq(s.calibrated, 0);
  double st, en;
  cr_assert_eq(rp_analysis_op_model(a, 2, &st, &en), RP_OK);
  EXACT(st, 0);
  EXACT(en, 11);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(model, host_issue_serialises_launches) {
  rp_graph *g = graph();
  for (int d = 0; d < 3; d++)
    kern(g, d, buf(g, d, 64), 16, 10);
  rp_model m;
  model2(&m, "streams", 3, 0, 1, 3, 0);
  rp_analysis *a = run(g, &m);
  rp_summary s;
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 9 + 10);
  EXACT(s.model_serial_us, 3 * 13);
  double st, en;
  cr_assert_eq(rp_analysis_op_model(a, 1, &st, &en), RP_OK);
  EXACT(st, 6);
  EXACT(en, 16);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* h2d of 2 MB and d2h of 1 MB at 1 GB/s (2000 and 1000 us alone); with
 * both at once each runs at half speed: the d2h ends at 2000, the h2d has
 * 1000 us left and ends at 3000. */
Test(model, duplex_copies_share_the_link) {
  rp_graph *g = graph();
  rp_buf a0 = buf(g, 0, 2000000), b1 = buf(g, 1, 1000000);
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(a0), 0, NULL, NULL));
  TU_OK(g, rp_record_copy_to_host(g, rp_whole(b1), 0, NULL, NULL));
  rp_model m;
  model2(&m, "graph", 0, 0, 0, 0, 0);
  m.h2d.gbps = m.d2h.gbps = 1;
  m.duplex_h2d_gbps = m.duplex_d2h_gbps = 0.5;
  rp_analysis *a = run(g, &m);
  rp_summary s;
  rp_analysis_summary(a, &s);
  EXACT(s.model_serial_us, 3000);
  EXACT(s.model_overlap_us, 3000);
  double st, en;
  rp_analysis_op_model(a, 1, &st, &en);
  EXACT(en, 2000);
  rp_analysis_destroy(a);
  /* Independent directions (duplex at full speed): 2000. */
  m.duplex_h2d_gbps = m.duplex_d2h_gbps = 1;
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = &m;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 2000);
  EXACT(s.model_speedup, 1.5);
  /* Latency counts once per copy. */
  m.h2d.latency_us = 7;
  rp_analysis_destroy(a);
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_analysis_summary(a, &s);
  EXACT(s.model_serial_us, 3007);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

Test(model, logical_devices_on_one_physical_share_it) {
  rp_graph *g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  kern(g, 1, buf(g, 1, 64), 16, 10);
  rp_model m;
  model2(&m, "graph", 0, 0, 0, 0, 0);
  rp_analysis *a = run(g, &m);
  rp_summary s;
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 10); /* two GPUs */
  rp_analysis_destroy(a);
  m.phys[0] = m.phys[1] = 0; /* one GPU: each at half speed */
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = &m;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 20);
  EXACT(s.model_speedup, 1);
  EXACT(s.bound, 2); /* the bound still counts two compute lanes */
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* h2d copies of 1 MB to logical devices 0 and 1 at 1 GB/s (1000 us each):
 * on two GPUs they run at once; on one GPU they share its link and its
 * copy engine, one after the other; an h2d of device 0 and a d2h of device
 * 1 on one GPU share its link as duplex copies of one device. */
Test(model, copies_of_logical_devices_on_one_physical_share_its_link) {
  rp_graph *g = graph();
  rp_buf b0 = buf(g, 0, 1000000), b1 = buf(g, 1, 1000000);
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(b0), 0, NULL, NULL));
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(b1), 1, NULL, NULL));
  rp_model m;
  model2(&m, "graph", 0, 0, 0, 0, 0);
  m.h2d.gbps = m.d2h.gbps = 1;
  m.duplex_h2d_gbps = m.duplex_d2h_gbps = 0.5;
  rp_analysis *a = run(g, &m);
  rp_summary s;
  rp_analysis_summary(a, &s);
  EXACT(s.model_serial_us, 2000);
  EXACT(s.model_overlap_us, 1000); /* two GPUs, two links */
  rp_analysis_destroy(a);
  m.phys[0] = m.phys[1] = 0;
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = &m;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 2000);
  EXACT(s.model_speedup, 1);
  double st, en;
  cr_assert_eq(rp_analysis_op_model(a, 1, &st, &en), RP_OK);
  EXACT(st, 1000); /* waits for the link */
  EXACT(en, 2000);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);

  g = graph();
  b0 = buf(g, 0, 1000000);
  b1 = buf(g, 1, 1000000);
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(b0), 0, NULL, NULL));
  TU_OK(g, rp_record_copy_to_host(g, rp_whole(b1), 1, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  m.phys[0] = m.phys[1] = -1; /* two links: no sharing */
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 1000);
  rp_analysis_destroy(a);
  m.phys[0] = m.phys[1] = 0; /* one link: each at half speed */
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 2000);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* A GPU of 100 multiprocessors: kernels of 1 block (16 points) run side
 * by side at their speed alone; two of 60 blocks (256 * 60 points) want
 * 1.2 GPUs, each gets 0.5 of 0.6 and runs at 5/6 of its speed (12 us
 * instead of 10); two that fill it (25600 points, 100 blocks) on two
 * logical devices of one GPU do not overlap at all. */
Test(model, gpu_kernels_share_its_multiprocessors) {
  static const uint64_t pts[3] = {16, 256 * 60, 256 * 100};
  static const double span[3] = {10, 12, 20};
  for (int i = 0; i < 3; i++) {
    rp_graph *g = graph();
    kern(g, 0, buf(g, 0, 64), pts[i], 10);
    kern(g, 1, buf(g, 1, 64), pts[i], 10);
    rp_model m;
    model2(&m, "graph", 0, 0, 0, 0, 0);
    m.multiprocessors = 100;
    m.phys[0] = m.phys[1] = 0;
    rp_analysis *a = run(g, &m);
    rp_summary s;
    rp_analysis_summary(a, &s);
    EXACT(s.model_serial_us, 20);
    EXACT(s.model_overlap_us, span[i]);
    rp_analysis_destroy(a);
    /* Without multiprocessors: one kernel at a time on the device. */
    m.multiprocessors = 0;
    rp_analysis_opts o;
    rp_analysis_opts_init(&o);
    o.model = &m;
    cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
    rp_analysis_summary(a, &s);
    EXACT(s.model_overlap_us, 20);
    rp_analysis_destroy(a);
    rp_graph_destroy(g);
  }
  /* 2-d index spaces launch 32 x 8 blocks: 64 x 64 points are 16 blocks;
   * eight such kernels want 1.28 GPUs and share it: 10 * 1.28 us. */
  rp_graph *g = graph();
  rp_buf b = buf(g, 0, 64);
  for (int k = 0; k < 8; k++) {
    rp_arg arg = rp_arg_buf(rp_bytes(b, 8 * (uint64_t)k, 8));
    rp_op_opts o = RP_OP_OPTS_WITH(.cost_us = 10);
    TU_OK(g,
          rp_record_kernel(g, &k_io, 0, rp_dims3(64, 64, 1), &arg, &o, NULL));
  }
  rp_model m;
  model2(&m, "graph", 0, 0, 0, 0, 0);
  m.multiprocessors = 100;
  rp_analysis *a = run(g, &m);
  rp_summary s;
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 12.8);
  EXACT(s.model_serial_us, 80);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* With threads per multiprocessor, a kernel occupies its threads over the
 * threads the GPU holds: 100 multiprocessors of 1024 threads hold 102400;
 * two kernels of 25600 threads (100 blocks: each fills every
 * multiprocessor with one block) take 1/4 each and run side by side. */
Test(model, gpu_kernels_share_its_resident_threads) {
  rp_graph *g = graph();
  kern(g, 0, buf(g, 0, 64), 25600, 10);
  kern(g, 0, buf(g, 1, 64), 25600, 10);
  rp_model m;
  model2(&m, "graph", 0, 0, 0, 0, 0);
  m.multiprocessors = 100;
  rp_analysis *a = run(g, &m);
  rp_summary s;
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 20); /* by blocks: each fills the GPU */
  rp_analysis_destroy(a);
  m.threads_per_mp = 1024;
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = &m;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 10);
  rp_analysis_destroy(a);
  /* 16 such kernels want 4 GPUs: each runs at 1/4 of its speed. */
  rp_graph_destroy(g);
  g = graph();
  rp_buf b = buf(g, 0, 64);
  for (int k = 0; k < 16; k++) {
    rp_arg arg = rp_arg_buf(rp_bytes(b, 4 * (uint64_t)k, 4));
    rp_op_opts oo = RP_OP_OPTS_WITH(.cost_us = 10);
    TU_OK(g, rp_record_kernel(g, &k_io, 0, rp_dims3(25600, 1, 1), &arg, &oo,
                              NULL));
  }
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 40);
  EXACT(s.model_serial_us, 160);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* The serial replay on a GPU: the host issues op n at (n + 1) * op_us
 * while the GPU runs the ones before (one stream); on a CPU each op pays
 * op_us on top. Chain of 10, 1, 1 us, serial op_us 3, run_us 2: issued at
 * 3, 6, 9; GPU: 3-13, 13-14, 14-15, + 2 = 17; CPU: 12 + 3 * 3 + 2 = 23. */
Test(model, gpu_serial_replay_overlaps_issue_and_execution) {
  rp_graph *g = graph();
  rp_buf b = buf(g, 0, 64);
  kern(g, 0, b, 16, 10);
  kern(g, 0, b, 16, 1);
  kern(g, 0, b, 16, 1);
  rp_model m;
  model2(&m, "graph", 0, 0, 0, 3, 2);
  rp_analysis *a = run(g, &m);
  rp_summary s;
  rp_analysis_summary(a, &s);
  EXACT(s.model_serial_us, 23);
  rp_analysis_destroy(a);
  m.multiprocessors = 132;
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = &m;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_analysis_summary(a, &s);
  EXACT(s.model_serial_us, 17);
  EXACT(s.model_overlap_us, 12); /* a chain: graph mode without overhead */
  rp_analysis_destroy(a);
  /* Launch-bound: ten 1 us ops issued every 3 us end at 30 + 1. */
  rp_graph_destroy(g);
  g = graph();
  b = buf(g, 0, 64);
  for (int k = 0; k < 10; k++)
    kern(g, 0, b, 16, 1);
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_analysis_summary(a, &s);
  EXACT(s.model_serial_us, 31 + 2);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* Device 0 with 2 threads: a split kernel (>= split_min points) alone runs
 * at 2 units; two split kernels share the 2; an unsplit one uses one. */
Test(model, split_cpu_kernels_occupy_the_threads) {
  rp_model m;
  model2(&m, "parallel", 0, 0, 0, 0, 0);
  m.units[0] = 2;
  m.split_min = 100;
  rp_graph *g = graph();
  kern(g, 0, buf(g, 0, 64), 1000, 10);
  rp_analysis *a = run(g, &m);
  rp_summary s;
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 5);
  EXACT(s.model_speedup, 2);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);

  g = graph();
  kern(g, 0, buf(g, 0, 64), 1000, 10);
  kern(g, 0, buf(g, 1, 64), 1000, 10);
  a = run(g, &m);
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 10);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);

  /* Unsplit (16 points) 10 us and split 30 us: 1 unit each until the
   * small one ends at 10 (the big one has 20 left), then 2: 10 + 10. */
  g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  kern(g, 0, buf(g, 1, 64), 1000, 30);
  a = run(g, &m);
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 20);
  EXACT(s.model_serial_us, 40);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}

/* A team of threads (openmp): host tasks, kernels and copies share one
 * pool, taken in program order. */
static void nop_host(void *u, void *const *p) {}

static rp_node host_task(rp_graph *g, rp_buf x, double us) {
  rp_access acc = {rp_whole(x), RP_INOUT};
  rp_op_opts o = RP_OP_OPTS_WITH(.cost_us = us);
  rp_node n;
  TU_OK(g, rp_record_host(g, nop_host, NULL, &acc, 1, &o, &n));
  return n;
}

static void pool_model(rp_model *m, unsigned threads) {
  model2(m, "parallel", 0, 0, 0, 0, 0);
  m->units[0] = threads;
  m->phys[0] = 0;
  m->host_units = threads;
  m->split_min = 100;
}

static rp_summary summary_of(rp_graph *g, const rp_model *m) {
  rp_analysis *a = run(g, m);
  rp_summary s;
  rp_analysis_summary(a, &s);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
  return s;
}

Test(model, host_tasks_share_the_pool) {
  rp_model m;
  rp_graph *g = graph();
  for (int i = 0; i < 4; i++)
    host_task(g, buf(g, i, 64), 10);
  pool_model(&m, 2);
  rp_summary s = summary_of(g, &m);
  EXACT(s.model_serial_us, 40);
  EXACT(s.model_overlap_us, 20); /* two threads, two at a time */
  EXACT(s.predicted_speedup, 2);
  EXACT(s.bound, 2); /* the work over the threads */
  cr_assert_str_eq(s.limited_by, "threads");
  /* Without a pool (a GPU backend's host): one host lane. */
  g = graph();
  for (int i = 0; i < 4; i++)
    host_task(g, buf(g, i, 64), 10);
  m.host_units = 0;
  s = summary_of(g, &m);
  EXACT(s.model_overlap_us, 40);
  /* Host tasks and kernels together: a kernel and a host task at 0, the
   * second host task when a thread is free. */
  g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  host_task(g, buf(g, 1, 64), 10);
  host_task(g, buf(g, 2, 64), 10);
  pool_model(&m, 2);
  s = summary_of(g, &m);
  EXACT(s.model_overlap_us, 20);
  EXACT(s.model_serial_us, 30);
}

Test(model, pool_costs_per_task_and_split) {
  rp_model m;
  pool_model(&m, 2);
  m.task_us = 1; /* thread time per task */
  rp_graph *g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  kern(g, 0, buf(g, 1, 64), 16, 10);
  rp_summary s = summary_of(g, &m);
  EXACT(s.model_overlap_us, 11);
  EXACT(s.model_serial_us, 20); /* the serial mode's overheads only */
  /* A split kernel waits split_us, then runs on both threads. */
  m.task_us = 0;
  m.split_us = 2;
  g = graph();
  kern(g, 0, buf(g, 0, 64), 1000, 10);
  s = summary_of(g, &m);
  EXACT(s.model_overlap_us, 7);
  EXACT(s.bound, 2); /* a split kernel's path is its work over 2 */
}

/* The engine takes ready operations in program order (its list schedule),
 * not longest path first: X, Y, then Z -> W (30) start late. */
Test(model, pool_runs_ready_ops_in_program_order) {
  rp_model m;
  pool_model(&m, 2);
  rp_graph *g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  kern(g, 0, buf(g, 1, 64), 16, 10);
  rp_buf z = buf(g, 2, 64);
  kern(g, 0, z, 16, 10);
  kern(g, 0, z, 16, 30);
  rp_summary s = summary_of(g, &m);
  EXACT(s.model_overlap_us, 50);
}

/* Operations running at once share the team's memory bandwidth: each
 * draws its bytes (64 B read and written: 128 B) over its cost. */
Test(model, pool_shares_memory_bandwidth) {
  rp_model m;
  pool_model(&m, 2);
  m.mem1_gbps = 0.0128;
  m.mem_gbps = 0.0128; /* 12.8 B/us: one 10 us kernel's draw */
  rp_graph *g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  kern(g, 0, buf(g, 1, 64), 16, 10);
  rp_summary s = summary_of(g, &m);
  EXACT(s.model_overlap_us, 20); /* half the bandwidth each */
  /* A team timed slower than one thread (a busy calibration): one
   * thread's bandwidth all the same. */
  m.mem_gbps = 0.001;
  g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  kern(g, 0, buf(g, 1, 64), 16, 10);
  s = summary_of(g, &m);
  EXACT(s.model_overlap_us, 20);
  m.mem_gbps = 0.0128;
  /* The one drawing less first: B (100 us, 1.28 B/us) gets its draw, A
   * (10 us) the 11.52 B/us left: rate 0.9. */
  g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  kern(g, 0, buf(g, 1, 64), 16, 100);
  rp_analysis *a = run(g, &m);
  double st, en;
  cr_assert_eq(rp_analysis_op_model(a, 0, &st, &en), RP_OK);
  EXACT(en, 10 / 0.9);
  cr_assert_eq(rp_analysis_op_model(a, 1, &st, &en), RP_OK);
  EXACT(en, 100);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
  /* Operations that stream faster than one thread does beyond cache are
   * in cache: the bandwidth beyond it does not cap them. */
  m.mem1_gbps = 0.0001;
  m.cache1_gbps = 0.01;
  g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  kern(g, 0, buf(g, 1, 64), 16, 10);
  s = summary_of(g, &m);
  EXACT(s.model_overlap_us, 10);
  m.cache_gbps = 0.0128; /* ... but that within it does */
  g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  kern(g, 0, buf(g, 1, 64), 16, 10);
  s = summary_of(g, &m);
  EXACT(s.model_overlap_us, 20);
}

/* The calibrated share of a core holds with the whole team busy; a lone
 * busy thread gets a whole core (the serial replay's). */
Test(model, pool_efficiency_follows_busy_threads) {
  rp_model m;
  pool_model(&m, 2);
  m.split_efficiency = 0.5;
  rp_graph *g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  rp_summary s = summary_of(g, &m);
  EXACT(s.model_overlap_us, 10);
  g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  kern(g, 0, buf(g, 1, 64), 16, 10);
  s = summary_of(g, &m);
  EXACT(s.model_overlap_us, 20); /* both busy: half a core each */
  /* A split kernel alone keeps both threads busy. */
  g = graph();
  kern(g, 0, buf(g, 0, 64), 1000, 10);
  s = summary_of(g, &m);
  EXACT(s.model_overlap_us, 10);
  /* 4 threads at 0.4: 3 busy give 0.6 each (1 - 0.6 * 2 / 3). */
  pool_model(&m, 4);
  m.split_efficiency = 0.4;
  g = graph();
  for (int i = 0; i < 3; i++)
    kern(g, 0, buf(g, i, 64), 16, 6);
  s = summary_of(g, &m);
  EXACT(s.model_overlap_us, 10);
}

/* An input from another thread costs edge_us: joins, and every successor
 * of a fork but its first (which continues on the fork's thread). */
Test(model, pool_pays_hand_offs_between_threads) {
  rp_model m;
  pool_model(&m, 2);
  m.edge_us = 3;
  rp_graph *g = graph();
  rp_buf a = buf(g, 0, 64), b = buf(g, 1, 64), c = buf(g, 2, 64);
  kern(g, 0, a, 16, 10); /* A */
  rp_arg ab[2] = {rp_arg_buf(rp_whole(a)), rp_arg_buf(rp_whole(b))};
  rp_arg ac[2] = {rp_arg_buf(rp_whole(a)), rp_arg_buf(rp_whole(c))};
  static const rp_param pio[] = {{"in", RP_IN}, {"x", RP_INOUT}};
  static const rp_kernel k2 =
      RP_KERNEL_WITH(.name = "k2", .nparams = 2, .params = pio, .cpu = nop_cpu);
  rp_op_opts o = RP_OP_OPTS_WITH(.cost_us = 10);
  TU_OK(g, rp_record_kernel(g, &k2, 0, rp_dims3(16, 1, 1), ab, &o, NULL));
  TU_OK(g, rp_record_kernel(g, &k2, 0, rp_dims3(16, 1, 1), ac, &o, NULL));
  rp_arg cb[2] = {rp_arg_buf(rp_whole(c)), rp_arg_buf(rp_whole(b))};
  TU_OK(g, rp_record_kernel(g, &k2, 0, rp_dims3(16, 1, 1), cb, &o, NULL));
  rp_analysis *an = run(g, &m);
  double st, en;
  cr_assert_eq(rp_analysis_op_model(an, 1, &st, &en), RP_OK);
  EXACT(st, 10); /* B continues on A's thread */
  cr_assert_eq(rp_analysis_op_model(an, 2, &st, &en), RP_OK);
  EXACT(st, 10); /* C: started, waits 3 for the hand-off */
  EXACT(en, 23);
  cr_assert_eq(rp_analysis_op_model(an, 3, &st, &en), RP_OK);
  EXACT(en, 23 + 3 + 10); /* D joins B and C */
  rp_analysis_destroy(an);
  rp_graph_destroy(g);
}

/* On a team, a copy the links say is free (shared memory) is elided: no
 * overhead, no thread. */
Test(model, pool_elides_free_copies) {
  rp_model m;
  pool_model(&m, 1);
  m.h2d.gbps = 0;
  m.mode[0].op_us = 1;
  m.task_us = 1;
  rp_graph *g = graph();
  rp_buf b = buf(g, 0, 64);
  rp_op_opts o = RP_OP_OPTS_WITH();
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(b), 0, &o, NULL));
  kern(g, 0, b, 16, 10);
  rp_summary s = summary_of(g, &m);
  EXACT(s.model_overlap_us, 1 + 1 + 10);
}

Test(model, unknown_mode_is_refused) {
  rp_graph *g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  TU_OK(g, rp_graph_end(g));
  rp_model m;
  model2(&m, "graph", 0, 0, 0, 0, 0);
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = &m;
  o.mode = "streams";
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_ENOTFOUND);
  cr_assert_null(a);
  o.mode = NULL;
  m.h2d.gbps = NAN;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  rp_graph_destroy(g);
}

Test(model, file_round_trip) {
  rp_model m, r;
  model2(&m, "graph", 0.75, 5.5, 0, 4.25, 2);
  snprintf(m.machine, sizeof m.machine, "box");
  m.h2d.gbps = 21.5;
  m.h2d.latency_us = 3;
  m.d2h.gbps = 20.25;
  m.duplex_h2d_gbps = 17;
  m.duplex_d2h_gbps = 16.5;
  m.host_task_us = 1.5;
  m.units[1] = 4;
  m.phys[0] = m.phys[1] = 0;
  m.split_min = 8192;
  m.physical_devices = 2;
  m.multiprocessors = 132;
  m.threads_per_mp = 2048;
  m.split_efficiency = 0.75;
  char dir[] = "/tmp/rp_model_XXXXXX", path[256];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/sub/m.json", dir);
  cr_assert_eq(rp_model_save(&m, path), RP_OK);
  cr_assert_eq(rp_model_load(&r, path), RP_OK);
  cr_assert_str_eq(r.backend, "test");
  cr_assert_str_eq(r.machine, "box");
  cr_assert_eq(r.nmode, 2);
  cr_assert_str_eq(r.mode[1].name, "serial");
  EXACT(r.mode[0].op_us, 0.75);
  EXACT(r.mode[0].run_us, 5.5);
  EXACT(r.mode[1].op_us, 4.25);
  cr_assert_eq(r.mode[1].host_issue, 1);
  EXACT(r.h2d.gbps, 21.5);
  EXACT(r.h2d.latency_us, 3);
  EXACT(r.d2h.gbps, 20.25);
  EXACT(r.duplex_h2d_gbps, 17);
  EXACT(r.duplex_d2h_gbps, 16.5);
  EXACT(r.host_task_us, 1.5);
  cr_assert_eq(r.units[1], 4);
  cr_assert_eq(r.phys[1], 0);
  cr_assert_eq(r.phys[2], -1);
  cr_assert_eq(r.split_min, 8192);
  cr_assert_eq(r.physical_devices, 2);
  cr_assert_eq(r.multiprocessors, 132);
  cr_assert_eq(r.threads_per_mp, 2048);
  EXACT(r.split_efficiency, 0.75);
  cr_assert_eq(r.calibrated, 1);
  /* Malformed files are refused with a reason. */
  FILE *fp = fopen(path, "w");
  fputs("{\"format\": \"reprise-model\", \"version\": 1, \"host_task_us\": -1}",
        fp);
  fclose(fp);
  cr_assert_eq(rp_model_load(&r, path), RP_EPARSE);
  cr_assert(strstr(rp_last_error(), "host_task_us"));
  fp = fopen(path, "w");
  fputs("{\"format\": \"reprise-model\", \"version\": 1, "
        "\"multiprocessors\": 1.5}",
        fp);
  fclose(fp);
  cr_assert_eq(rp_model_load(&r, path), RP_EPARSE);
  cr_assert(strstr(rp_last_error(), "multiprocessors"));
  fp = fopen(path, "w");
  fputs("{\"format\": \"reprise-graph\", \"version\": 1}", fp);
  fclose(fp);
  cr_assert_eq(rp_model_load(&r, path), RP_EPARSE);
  unlink(path);
  cr_assert_eq(rp_model_load(&r, path), RP_EIO);
}

Test(model, cache_path) {
  char p[512], host[64];
  gethostname(host, sizeof host);
  host[63] = 0;
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  cr_assert_eq(rp_model_path("cuda", p, sizeof p), RP_OK);
  char want[512];
  snprintf(want, sizeof want, "/x/cache/reprise/cuda-%s.json", host);
  cr_assert_str_eq(p, want);
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  cr_assert_eq(rp_model_path("openmp", p, sizeof p), RP_OK);
  snprintf(want, sizeof want, "/home/u/.cache/reprise/openmp-%s.json", host);
  cr_assert_str_eq(p, want);
  cr_assert_eq(rp_model_path("../x", p, sizeof p), RP_EINVAL);
  cr_assert_eq(rp_model_path("openmp", p, 8), RP_EINVAL);
}

/* Calibration through the public replay API, on the always-present
 * reference backend (the oracle) and on openmp where built. */
static void calibrated_ok(const char *be_name, const char *overlapped) {
  const rp_backend *be = NULL;
  if (rp_backend_find(be_name, &be) != RP_OK)
    return;
  rp_exec_opts xo;
  rp_exec_opts_init(&xo);
  /* The reference runs one operation at a time and refuses a team. */
  xo.nthreads = strcmp(be_name, "reference") ? 2 : 0;
  rp_model m;
  unsigned long before = rp_model_calibrations();
  cr_assert_eq(rp_model_calibrate(&m, be, &xo, 1), RP_OK, "%s", be_name);
  cr_assert_eq(rp_model_calibrations(), before + 1);
  cr_assert_str_eq(m.backend, be_name);
  cr_assert_eq(m.calibrated, 1);
  cr_assert_geq(m.nmode, 2);
  cr_assert_str_eq(m.mode[0].name, overlapped);
  cr_assert_not_null(rp_model_find_mode(&m, "serial"));
  for (unsigned i = 0; i < m.nmode; i++)
    cr_assert(isfinite(m.mode[i].op_us) && m.mode[i].op_us >= 0);
  cr_assert(isfinite(m.h2d.gbps) && m.h2d.gbps >= 0);
  /* The key: this machine, the library's version, the team. */
  char host[64];
  gethostname(host, sizeof host);
  host[63] = 0;
  cr_assert_str_eq(m.machine, host);
  cr_assert(!strncmp(m.version, rp_version(), strlen(rp_version())));
  if (!strcmp(be_name, "openmp")) {
    cr_assert_eq(m.threads, 2);
    cr_assert_eq(m.host_units, 2);
    cr_assert(m.split_efficiency > 0 && m.split_efficiency <= 1);
    cr_assert(m.mem1_gbps > 0 && m.mem_gbps > 0 && m.cache1_gbps > 0);
  } else {
    cr_assert_eq(m.threads, 0);
  }
  /* It is usable by the analysis as it is, and after a round trip. */
  char dir[] = "/tmp/rp_cal_XXXXXX", path[4096];
  cr_assert_not_null(mkdtemp(dir));
  cr_assert_eq(rp_model_save(&m, strcat(strcpy(path, dir), "/m.json")), RP_OK);
  rp_model r;
  cr_assert_eq(rp_model_load(&r, path), RP_OK);
  cr_assert_eq(r.nmode, m.nmode);
  cr_assert_eq(r.mode[0].op_us, m.mode[0].op_us);
  cr_assert_eq(r.threads, m.threads);
  cr_assert_eq(r.mem_gbps, m.mem_gbps);
  cr_assert_eq(r.task_us, m.task_us);
  cr_assert_str_eq(r.version, m.version);
  cr_assert_str_eq(r.cpu, m.cpu);
  unlink(path);
  rmdir(dir);
}

Test(model, calibrate_reference) { calibrated_ok("reference", "default"); }
Test(model, calibrate_openmp, .timeout = 60) {
  calibrated_ok("openmp", "parallel");
}

/* The cache, on a backend that runs nothing (its calibration is quick). */
typedef struct seen {
  unsigned lines;
  char last[4400];
} seen;

static void count_line(void *user, const char *line) {
  seen *s = user;
  s->lines++;
  snprintf(s->last, sizeof s->last, "%s", line);
}

/* A backend that runs nothing: its calibration takes no time (the cache
 * is what these tests look at). */
static rp_status ff_inst(rp_exec *x, const rp_plan *p, void **state) {
  *state = NULL;
  return RP_OK;
}
static rp_status ff_launch(void *s, unsigned n) { return RP_OK; }
static rp_status ff_wait(void *s) { return RP_OK; }
static void ff_destroy(void *s) {}
static const rp_backend fake_fast = {.abi = RP_BACKEND_ABI,
                                     .name = "fake",
                                     .owns = RP_DEVICE_CPU,
                                     .instantiate = ff_inst,
                                     .launch = ff_launch,
                                     .wait = ff_wait,
                                     .destroy = ff_destroy};

static const rp_backend *fast_backend(void) { return &fake_fast; }

/* Options of the cache tests: the folder, one run, progress counted. */
static void cache_opts(rp_model_opts *mo, seen *sn, const char *dir) {
  rp_model_opts_init(mo);
  mo->cache_dir = dir;
  mo->runs = 1;
  mo->progress = count_line;
  mo->user = sn;
}

Test(model, cache_calibrates_on_first_use_then_reuses) {
  char dir[] = "/tmp/rp_cache_XXXXXX", path[4096];
  cr_assert_not_null(mkdtemp(dir));
  unsetenv("RP_NO_AUTOCALIBRATE");
  seen sn = {0, ""};
  rp_model_opts mo;
  cache_opts(&mo, &sn, dir);
  const rp_backend *be = fast_backend();
  cr_assert_eq(rp_model_cache_path(be, NULL, &mo, path, sizeof path), RP_OK);
  char host[64], want[4200];
  gethostname(host, sizeof host);
  host[63] = 0;
  snprintf(want, sizeof want, "%s/fake-%s.json", dir, host);
  cr_assert_str_eq(path, want);
  cr_assert_neq(access(path, F_OK), 0);
  /* First use: one calibration, one progress line, the file written. */
  rp_model a, b;
  unsigned long n0 = rp_model_calibrations();
  cr_assert_eq(rp_model_get_opts(&a, be, NULL, &mo), RP_OK);
  cr_assert_eq(rp_model_calibrations(), n0 + 1);
  cr_assert_eq(sn.lines, 1);
  cr_assert(strstr(sn.last, "calibrating the fake model"), "%s", sn.last);
  cr_assert(strstr(sn.last, path), "%s", sn.last);
  cr_assert_eq(access(path, R_OK), 0);
  cr_assert_eq(a.calibrated, 1);
  /* Second use: the cache, no calibration, the same figures. */
  cr_assert_eq(rp_model_get_opts(&b, be, NULL, &mo), RP_OK);
  cr_assert_eq(rp_model_calibrations(), n0 + 1);
  cr_assert_eq(sn.lines, 1);
  cr_assert_eq(b.mode[0].op_us, a.mode[0].op_us);
  cr_assert_str_eq(b.version, a.version);
  /* The cache only: there it is. */
  mo.flags = RP_MODEL_NO_AUTO;
  cr_assert_eq(rp_model_get_opts(&b, be, NULL, &mo), RP_OK);
  /* Refresh: calibrates although cached. */
  mo.flags = RP_MODEL_REFRESH;
  cr_assert_eq(rp_model_get_opts(&b, be, NULL, &mo), RP_OK);
  cr_assert_eq(rp_model_calibrations(), n0 + 2);
  cr_assert_eq(sn.lines, 2);
  unlink(path);
  rmdir(dir);
}

Test(model, cache_recalibrates_for_another_version_or_machine) {
  char dir[] = "/tmp/rp_cache_XXXXXX", path[4096];
  cr_assert_not_null(mkdtemp(dir));
  unsetenv("RP_NO_AUTOCALIBRATE");
  seen sn = {0, ""};
  rp_model_opts mo;
  cache_opts(&mo, &sn, dir);
  const rp_backend *be = fast_backend();
  rp_model m;
  cr_assert_eq(rp_model_get_opts(&m, be, NULL, &mo), RP_OK);
  cr_assert_eq(sn.lines, 1);
  /* Another library version: calibrated again, the file rewritten. */
  mo.version = "99.0.0-test";
  unsigned long n0 = rp_model_calibrations();
  cr_assert_eq(rp_model_get_opts(&m, be, NULL, &mo), RP_OK);
  cr_assert_eq(rp_model_calibrations(), n0 + 1);
  cr_assert_eq(sn.lines, 2);
  cr_assert(!strncmp(m.version, "99.0.0-test/m", 13), "%s", m.version);
  cr_assert_eq(rp_model_cache_path(be, NULL, &mo, path, sizeof path), RP_OK);
  rp_model r;
  cr_assert_eq(rp_model_load(&r, path), RP_OK);
  cr_assert_str_eq(r.version, m.version);
  cr_assert_eq(rp_model_get_opts(&m, be, NULL, &mo), RP_OK); /* reused */
  cr_assert_eq(sn.lines, 2);
  /* The file says another machine (a copied cache): calibrated again. */
  snprintf(r.cpu, sizeof r.cpu, "another CPU");
  cr_assert_eq(rp_model_save(&r, path), RP_OK);
  cr_assert_eq(rp_model_get_opts(&m, be, NULL, &mo), RP_OK);
  cr_assert_eq(sn.lines, 3);
  cr_assert_str_neq(m.cpu, "another CPU");
  /* Calibrated on a machine far busier than now: calibrated again. */
  cr_assert_eq(rp_model_load(&r, path), RP_OK);
  r.load = 1e6;
  r.cpus = 1;
  cr_assert_eq(rp_model_save(&r, path), RP_OK);
  cr_assert_eq(rp_model_get_opts(&m, be, NULL, &mo), RP_OK);
  cr_assert_eq(sn.lines, 4);
  cr_assert(m.load < 1e6);
  /* A damaged file: calibrated again too. */
  FILE *fp = fopen(path, "w");
  fputs("{\"format\": ", fp);
  fclose(fp);
  cr_assert_eq(rp_model_get_opts(&m, be, NULL, &mo), RP_OK);
  cr_assert_eq(sn.lines, 5);
  cr_assert_eq(rp_model_load(&r, path), RP_OK);
  unlink(path);
  rmdir(dir);
}

Test(model, cache_key_names_the_configuration) {
  const rp_backend *be = NULL;
  if (rp_backend_find("openmp", &be) != RP_OK)
    cr_skip_test("no openmp backend");
  rp_model_opts mo;
  rp_model_opts_init(&mo);
  mo.cache_dir = "/c";
  rp_exec_opts xo;
  rp_exec_opts_init(&xo);
  char p1[512], p2[512], host[64], want[600];
  gethostname(host, sizeof host);
  host[63] = 0;
  xo.nthreads = 3;
  cr_assert_eq(rp_model_cache_path(be, &xo, &mo, p1, sizeof p1), RP_OK);
  snprintf(want, sizeof want, "/c/openmp-%s-t3.json", host);
  cr_assert_str_eq(p1, want);
  static const int map[3] = {0, 0, 1};
  xo.device_map = map;
  xo.ndevice_map = 3;
  cr_assert_eq(rp_model_cache_path(be, &xo, &mo, p2, sizeof p2), RP_OK);
  snprintf(want, sizeof want, "/c/openmp-%s-t3-m0.0.1.json", host);
  cr_assert_str_eq(p2, want);
  /* Without a folder: $XDG_CACHE_HOME/reprise, else ~/.cache/reprise. */
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  xo.device_map = NULL;
  cr_assert_eq(rp_model_cache_path(be, &xo, NULL, p1, sizeof p1), RP_OK);
  snprintf(want, sizeof want, "/x/cache/reprise/openmp-%s-t3.json", host);
  cr_assert_str_eq(p1, want);
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  cr_assert_eq(rp_model_cache_path(be, &xo, NULL, p1, sizeof p1), RP_OK);
  snprintf(want, sizeof want, "/home/u/.cache/reprise/openmp-%s-t3.json", host);
  cr_assert_str_eq(p1, want);
  cr_assert_eq(rp_model_cache_path(be, &xo, NULL, p1, 8), RP_EINVAL);
}

/* Automatic calibration off: no calibration, an uncalibrated model that
 * the report calls so. */
Test(model, automatic_calibration_can_be_turned_off) {
  char dir[] = "/tmp/rp_cache_XXXXXX", path[4096];
  cr_assert_not_null(mkdtemp(dir));
  setenv("XDG_CACHE_HOME", dir, 1);
  setenv("RP_NO_AUTOCALIBRATE", "1", 1);
  const rp_backend *be = fast_backend();
  seen sn = {0, ""};
  rp_model_opts mo;
  cache_opts(&mo, &sn, NULL);
  unsigned long n0 = rp_model_calibrations();
  rp_model m;
  cr_assert_eq(rp_model_get_opts(&m, be, NULL, &mo), RP_ENOTFOUND);
  /* The analysis of an exec: succeeds with an uncalibrated model. */
  rp_graph *g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = NULL;
  cr_assert_eq(rp_exec_create(&x, g, be, NULL), RP_OK);
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  unsigned units[RP_MAX_DEVICES];
  cr_assert_eq(rp_analysis_opts_calibrated(&o, &m, units, x, &mo), RP_OK);
  cr_assert_eq(m.calibrated, 0);
  cr_assert_eq(rp_model_calibrations(), n0);
  cr_assert_eq(sn.lines, 0);
  rp_analysis *a = NULL;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  char *text = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&text, &len);
  cr_assert_eq(rp_analysis_write_text(a, fp), RP_OK);
  fclose(fp);
  cr_assert(strstr(text, "uncalibrated"), "%s", text);
  cr_assert(strstr(text, "predicted speedup"), "%s", text);
  free(text);
  rp_analysis_destroy(a);
  /* The option alone does it too; asking for a calibration overrides. */
  unsetenv("RP_NO_AUTOCALIBRATE");
  mo.flags = RP_MODEL_NO_AUTO;
  cr_assert_eq(rp_model_get_opts(&m, be, NULL, &mo), RP_ENOTFOUND);
  setenv("RP_NO_AUTOCALIBRATE", "1", 1);
  mo.flags = RP_MODEL_CALIBRATE;
  cr_assert_eq(rp_model_get_opts(&m, be, NULL, &mo), RP_OK);
  cr_assert_eq(sn.lines, 1);
  /* And with automatic calibration on, the first analysis calibrates. */
  unsetenv("RP_NO_AUTOCALIBRATE");
  cr_assert_eq(rp_model_cache_path(be, NULL, NULL, path, sizeof path), RP_OK);
  unlink(path);
  mo.flags = 0;
  cr_assert_eq(rp_analysis_opts_calibrated(&o, &m, units, x, &mo), RP_OK);
  cr_assert_eq(m.calibrated, 1);
  cr_assert_eq(sn.lines, 2);
  cr_assert_eq(access(path, R_OK), 0);
  unlink(path);
  char sub[4200];
  snprintf(sub, sizeof sub, "%s/reprise", dir);
  rmdir(sub);
  rmdir(dir);
  unsetenv("XDG_CACHE_HOME");
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* The options follow the exec: threads per device group, the mode. */
Test(model, options_from_exec) {
  const rp_backend *be = NULL;
  if (rp_backend_find("openmp", &be) != RP_OK)
    return;
  rp_graph *g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  kern(g, 1, buf(g, 1, 64), 16, 10);
  TU_OK(g, rp_graph_end(g));
  rp_exec_opts xo;
  rp_exec_opts_init(&xo);
  xo.nthreads = 3;
  rp_exec *x = NULL;
  cr_assert_eq(rp_exec_create(&x, g, be, &xo), RP_OK);
  rp_analysis_opts o;
  rp_model m;
  unsigned units[RP_MAX_DEVICES];
  rp_analysis_opts_init(&o);
  rp_model_init(&m);
  cr_assert_eq(rp_analysis_opts_from_exec(&o, &m, units, x), RP_OK);
  cr_assert_eq(o.model, &m);
  cr_assert_eq(m.units[0], 2); /* threads 0, 1 */
  cr_assert_eq(m.units[1], 1); /* thread 2 */
  cr_assert_eq(m.phys[0], 0);
  cr_assert_eq(m.phys[1], 1);
  cr_assert_eq(o.ncompute_units, 2);
  cr_assert_eq(units[0], 2);
  rp_exec_destroy(x);
  /* Both devices on one group: they share its threads. */
  static const int one[2] = {0, 0};
  xo.device_map = one;
  xo.ndevice_map = 2;
  xo.nthreads = 1;
  cr_assert_eq(rp_exec_create(&x, g, be, &xo), RP_OK);
  cr_assert_eq(rp_analysis_opts_from_exec(&o, &m, NULL, x), RP_OK);
  cr_assert_eq(m.units[0], 1);
  cr_assert_eq(m.phys[0], 0);
  cr_assert_eq(m.phys[1], 0);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* The tool: calibrate into a file, then analyse a graph with it. */
Test(model, command_line) {
  char dir[] = "/tmp/rp_mcli_XXXXXX", mpath[256], gpath[256], cmd[1024];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(mpath, sizeof mpath, "%s/m.json", dir);
  snprintf(gpath, sizeof gpath, "%s/g.json", dir);
  snprintf(cmd, sizeof cmd,
           "%s calibrate --backend reference --runs 3 "
           "--out %s --quiet 2>/dev/null",
           RP_TEST_TOOL, mpath);
  cr_assert_eq(system(cmd), 0);
  rp_model m;
  cr_assert_eq(rp_model_load(&m, mpath), RP_OK);
  cr_assert_str_eq(m.backend, "reference");
  /* A hand-written model: 3 kernels on 3 devices, as in the first test. */
  model2(&m, "graph", 1, 5, 0, 4, 2);
  cr_assert_eq(rp_model_save(&m, mpath), RP_OK);
  rp_graph *g = graph();
  for (int d = 0; d < 3; d++)
    kern(g, d, buf(g, d, 64), 16, 10);
  TU_OK(g, rp_graph_end(g));
  FILE *fp = fopen(gpath, "w");
  cr_assert_eq(rp_graph_write_json(g, fp), RP_OK);
  fclose(fp);
  snprintf(cmd, sizeof cmd, "%s analyze %s --model %s --json", RP_TEST_TOOL,
           gpath, mpath);
  FILE *p = popen(cmd, "r");
  char out[16384] = "";
  size_t k = fread(out, 1, sizeof out - 1, p);
  out[k] = 0;
  cr_assert_eq(pclose(p), 0);
  cr_assert(strstr(out, "\"serial_us\": 44, \"overlap_us\": 16, "
                        "\"speedup\": 2.75"),
            "%s", out);
  snprintf(cmd, sizeof cmd,
           "%s analyze %s --model %s --mode streams "
           ">/dev/null 2>&1",
           RP_TEST_TOOL, gpath, mpath);
  cr_assert_eq(WEXITSTATUS(system(cmd)), 1);
  unlink(mpath);
  unlink(gpath);
  rmdir(dir);
  rp_graph_destroy(g);
}

Test(model, bad_arguments) {
  rp_model m;
  cr_assert_eq(rp_model_get(&m, NULL, NULL, 8), RP_EINVAL);
  cr_assert_eq(rp_model_calibrate(&m, NULL, NULL, 64), RP_EINVAL);
  cr_assert_null(rp_model_find_mode(&m, NULL));
  rp_graph *g = graph();
  kern(g, 0, buf(g, 0, 64), 16, 10);
  rp_analysis *a = NULL;
  rp_model_init(&m);
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = &m;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_ESTATE); /* not ended */
  TU_OK(g, rp_graph_end(g));
  m.split_efficiency = 1.5;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  m.split_efficiency = 0;
  m.phys[3] = RP_MAX_DEVICES;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  m.phys[3] = -1;
  /* No modes at all: no overheads, the two predictions are the costs. */
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_summary s;
  rp_analysis_summary(a, &s);
  EXACT(s.model_serial_us, 10);
  EXACT(s.model_overlap_us, 10);
  double st;
  cr_assert_eq(rp_analysis_op_model(a, 1, &st, NULL), RP_EINVAL);
  rp_analysis_destroy(a);
  o.model = NULL;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  cr_assert_eq(rp_analysis_op_model(a, 0, &st, NULL), RP_ENOTFOUND);
  rp_analysis_summary(a, &s);
  cr_assert_eq(s.modelled, 0);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
  rp_check *c = (rp_check *)1;
  cr_assert_eq(rp_check_deps(NULL, NULL, &c), RP_EINVAL);
  cr_assert_null(c);
}

/* Other backends: one unit per device; the exec's map, else the identity,
 * else (fewer physical devices than logical ones, as calibrated) all on
 * device 0. */
static rp_status fg_inst(rp_exec *x, const rp_plan *p, void **state) {
  *state = NULL;
  return RP_OK;
}
static rp_status fg_launch(void *s, unsigned n) { return RP_OK; }
static rp_status fg_wait(void *s) { return RP_OK; }
static void fg_destroy(void *s) {}
/* A GPU backend that takes device_map and runs nothing (the reference
 * refuses a map: it has no devices to map). */
static const rp_backend fake_gpu = {.abi = RP_BACKEND_ABI,
                                    .name = "fake-gpu",
                                    .owns = RP_DEVICE_CUDA,
                                    .instantiate = fg_inst,
                                    .launch = fg_launch,
                                    .wait = fg_wait,
                                    .destroy = fg_destroy,
                                    .options = RP_EXEC_OPT_DEVICE_MAP};

Test(model, options_from_exec_map) {
  const rp_backend *be = &fake_gpu;
  rp_graph *g = graph();
  for (int d = 0; d < 3; d++)
    kern(g, d, buf(g, d, 64), 16, 10);
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = NULL;
  cr_assert_eq(rp_exec_create(&x, g, be, NULL), RP_OK);
  rp_analysis_opts o;
  rp_model m;
  rp_model_init(&m);
  rp_analysis_opts_init(&o);
  cr_assert_eq(rp_analysis_opts_from_exec(&o, &m, NULL, x), RP_OK);
  cr_assert_eq(m.phys[2], 2);
  cr_assert_eq(m.units[2], 1);
  cr_assert_null(o.mode);
  m.physical_devices = 2;
  cr_assert_eq(rp_analysis_opts_from_exec(&o, &m, NULL, x), RP_OK);
  cr_assert_eq(m.phys[1], 0);
  cr_assert_eq(m.phys[2], 0);
  rp_exec_destroy(x);
  static const int map[3] = {1, 1, 0};
  rp_exec_opts xo;
  rp_exec_opts_init(&xo);
  xo.device_map = map;
  xo.ndevice_map = 3;
  xo.mode = "serial";
  cr_assert_eq(rp_exec_create(&x, g, be, &xo), RP_OK);
  cr_assert_eq(rp_analysis_opts_from_exec(&o, &m, NULL, x), RP_OK);
  cr_assert_eq(m.phys[0], 1);
  cr_assert_eq(m.phys[1], 1);
  cr_assert_eq(m.phys[2], 0);
  cr_assert_str_eq(o.mode, "serial");
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* The calibrated share of a core applies to a team of several threads,
 * never to one thread (the serial replay's). */
Test(model, efficiency_applies_to_a_team) {
  rp_model m;
  model2(&m, "parallel", 0, 0, 0, 0, 0);
  m.split_min = 100;
  m.split_efficiency = 0.5;
  rp_graph *g = graph();
  kern(g, 0, buf(g, 0, 64), 1000, 10);
  rp_analysis *a = run(g, &m);
  rp_summary s;
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 10); /* one unit: no team */
  rp_analysis_destroy(a);
  m.units[0] = 2; /* two threads at half a core each */
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  o.model = &m;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_OK);
  rp_analysis_summary(a, &s);
  EXACT(s.model_overlap_us, 10);
  EXACT(s.model_speedup, 1);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
}
