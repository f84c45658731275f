/* Automatic chunked pipelining on any backend (openmp by default): the
 * pipeline recorded naively (one whole copy in, one kernel, one whole copy
 * out of one buffer), its unsplit replay, its automatic split
 * (rp_exec_opts.split = RP_EXEC_SPLIT_AUTO) and the same pipeline chunked
 * by hand into K chunks at record time, in one run, with the advice.
 * Usage: bench_split [backend [MiB [iters [K [k]]]]] (openmp 256 20 16
 * auto): k a fixed number of chunks instead of the automatic choice. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "reprise.h"
#include "reprise/kernel.h"
#include "bench_check.h"

enum { REPS = 7 };

/* bench_cuda's burn kernel, declared splittable along x. */
#include "burn_kernel.inc"
static const rp_kernel bs_burn =
    RP_KERNEL_DESC_SPLIT(bc_burn_k, bc_burn_params, RP_SPLIT_X, 0x1u);

static double run_once(rp_exec *x) {
  double t0 = now_us();
  RK(rp_exec_run(x, 1));
  return now_us() - t0;
}

/* The pipeline over n floats of h in K record-time chunks (K 1: naive). */
static rp_graph *record(float *h, size_t n, int K, int iters) {
  rp_graph *g;
  rp_buf b;
  RK(rp_graph_create(&g, 0));
  RK(rp_buffer_register(g, "data", h, n * sizeof *h, &b));
  for (int c = 0; c < K; c++) {
    size_t lo = n * c / K, hi = n * (c + 1) / K;
    rp_region r = rp_range_bytes(b, lo * sizeof *h, (hi - lo) * sizeof *h);
    rp_arg a[3] = {rp_arg_buf(r), rp_arg_i64((int64_t)lo), rp_arg_i32(iters)};
    RK(rp_record_copy_to_device(g, r, 0, NULL, NULL));
    RK(rp_record_kernel(g, &bs_burn, 0, rp_dims3(hi - lo, 1, 1), a, NULL,
                        NULL));
    RK(rp_record_copy_to_host(g, r, 0, NULL, NULL));
  }
  RK(rp_graph_end(g));
  return g;
}

int main(int argc, char **argv) {
  const char *bn = argc > 1 ? argv[1] : "openmp";
  size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 256;
  int iters = argc > 3 ? atoi(argv[3]) : 20;
  int K = argc > 4 ? atoi(argv[4]) : 16;
  unsigned fixk = argc > 5 ? (unsigned)atoi(argv[5]) : 0;
  const rp_backend *be;
  if (rp_backend_find(bn, &be) != RP_OK || rp_backend_probe(be) != RP_OK) {
    printf("bench_split: backend %s not usable here, nothing measured\n", bn);
    return 0;
  }
  size_t n = (mib << 20) / sizeof(float);
  float *h = malloc(n * sizeof *h), *h0 = malloc(n * sizeof *h);
  float *want = malloc(n * sizeof *h);
  for (size_t i = 0; i < n; i++)
    h0[i] = (float)(i % 1000) * 1e-3f;
  memcpy(h, h0, n * sizeof *h);
  rp_graph *g = record(h, n, 1, iters), *gh = record(h, n, K, iters);
  rp_exec *xu, *xa, *xh;
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  RK(rp_exec_create(&xu, g, be, NULL));
  RK(rp_exec_create(&xh, gh, be, NULL));
  o.split = fixk ? fixk : RP_EXEC_SPLIT_AUTO;
  RK(rp_exec_create(&xa, g, be, &o));
  uint32_t nk, nc;
  unsigned k = rp_exec_split_chunks(xa, &nk, &nc);
  RK(rp_exec_run(xu, 1));
  memcpy(want, h, n * sizeof *h);
  memcpy(h, h0, n * sizeof *h);
  RK(rp_exec_run(xa, 1));
  int same = !memcmp(want, h, n * sizeof *h);

  rp_analysis_opts ao;
  rp_analysis_opts_init(&ao);
  rp_model m;
  int cal = rp_model_get(&m, be, NULL, 0) == RP_OK;
  if (cal)
    ao.model = &m;
  rp_split_advice adv;
  RK(rp_split_advise(g, &ao, 0, &adv));
  printf("advice (%s): ", cal ? "calibrated model" : "default model");
  rp_split_write_text(g, &adv, stdout);

  double vu[REPS], va[REPS], vh[REPS];
  run_once(xu);
  run_once(xa);
  run_once(xh);
  for (int r = 0; r < REPS; r++) {
    vu[r] = run_once(xu);
    va[r] = run_once(xa);
    vh[r] = run_once(xh);
  }
  double tu = median(vu, REPS), ta = median(va, REPS), th = median(vh, REPS);
  printf("%s: naive %zu MiB, iters %d: unsplit %.2f ms, %s split (k %u, "
         "%u kernel, %u copies) %.2f ms, hand %d chunks %.2f ms (medians "
         "of %d); split/unsplit %.2fx, split/hand %.3f; results identical: "
         "%s\n",
         bn, mib, iters, tu / 1e3, fixk ? "fixed" : "auto", k, nk, nc, ta / 1e3,
         K, th / 1e3, REPS, tu / ta, ta / th, same ? "yes" : "NO");
  rp_exec_destroy(xu);
  rp_exec_destroy(xa);
  rp_exec_destroy(xh);
  rp_graph_destroy(g);
  rp_graph_destroy(gh);
  free(h);
  free(h0);
  free(want);
  return same ? 0 : 1;
}
