/* The CUDA backend with mixed device kinds: a GPU (device 0) beside a
 * CPU-kind device (1) in one graph, against the reference; per-buffer
 * wait. Skipped without a GPU. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "cuda_kernels.h"
#include "replay/exec.h"
#include "util.h"
#include "mixed_wl.h"

static const rp_backend *need_gpu(void) {
  const rp_backend *be = NULL;
  rp_status s = rp_backend_find("cuda", &be);
  if (s != RP_OK)
    cr_skip_test("no CUDA backend: %s", rp_strerror(s));
  s = rp_backend_probe(be);
  if (s != RP_OK)
    cr_skip_test("no CUDA device here (%s): GPU tests skipped",
                 rp_last_error());
  return be;
}

static void check_modes(void (*fn)(const rp_backend *, const rp_exec_opts *)) {
  const rp_backend *be = need_gpu();
  static const char *modes[] = {"graph", "streams", "serial"};
  for (unsigned m = 0; m < 3; m++) {
    rp_exec_opts o = RP_EXEC_OPTS_INIT;
    o.mode = modes[m];
    fn(be, &o);
  }
}

static void mixed(const rp_backend *be, const rp_exec_opts *o) {
  mw_check(be, o, &tc_mix, &tc_bump, 3);
}

Test(cuda_mixed, gpu_and_cpu_devices_equal_reference, .timeout = 120) {
  check_modes(mixed);
}

static void waitbuf(const rp_backend *be, const rp_exec_opts *o) {
  for (unsigned reps = 1; reps <= 3; reps++)
    mw_wait_buffer(be, o, &tc_mix, &tc_bump, reps);
}

Test(cuda_mixed, wait_buffer_returns_before_a_blocked_task, .timeout = 120) {
  check_modes(waitbuf);
}

/* The timeline hook (called on the exec's state: the core has no call
 * for it yet): every node starts before it ends, no node starts before
 * its predecessors end, and the replay computes what the reference does. */
Test(cuda_mixed, timeline_respects_the_plan, .timeout = 60) {
  const rp_backend *be = need_gpu();
  static uint8_t want[MW_NB][MW_BS];
  mw_prog P;
  mw_make(&P, &tc_mix, &tc_bump, 7, 1);
  cr_assert_eq(rp_replay_reference(P.g, 1), RP_OK);
  memcpy(want, P.rec, sizeof want);
  for (rp_buf b = 0; b < MW_NB; b++)
    mw_fill(P.rec[b], 7 + b);
  rp_exec *x;
  cr_assert_eq(rp_exec_create(&x, P.g, be, NULL), RP_OK, "%s", rp_last_error());
  const rp_plan *p = rp_exec_plan(x);
  double *t0 = calloc(p->nnode + 1, sizeof *t0);
  double *t1 = calloc(p->nnode + 1, sizeof *t1);
  cr_assert(be->timeline);
  cr_assert_eq(be->timeline(x->state, t0, t1), RP_OK, "%s", rp_exec_error(x));
  for (uint32_t v = 0; v < p->nnode; v++) {
    cr_assert(t0[v] >= 0 && t1[v] >= t0[v] && t1[v] > 0, "node %u: %g..%g", v,
              t0[v], t1[v]);
    for (uint32_t i = 0; i < p->node[v].npred; i++)
      cr_assert(t0[v] >= t1[p->pred[p->node[v].pred0 + i]] - 1.0,
                "node %u starts before its predecessor ends", v);
  }
  cr_assert_eq(memcmp(P.rec, want, sizeof want), 0);
  free(t0);
  free(t1);
  rp_exec_destroy(x);
  rp_graph_destroy(P.g);
}
