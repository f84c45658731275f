/* Tests of several logical devices on the CUDA backend, all mapped onto
 * the one GPU: heat 2D, matmul by rows and two kernels, byte for byte
 * against the reference replay and plain loops. Skip without a GPU. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"
#ifdef RP_HAVE_EXAMPLES
#include "multidev.h"

static const rp_backend *need_gpu(void) {
  const rp_backend *be = NULL;
  rp_status s = rp_backend_find("cuda", &be);
  if (s != RP_OK)
    cr_skip_test("no CUDA backend: %s", rp_strerror(s));
  s = rp_backend_probe(be);
  if (s != RP_OK)
    cr_skip_test("no CUDA device: %s", rp_strerror(s));
  return be;
}

/* ---- a workload: its host arrays, its graph, its expected result ---- */

enum { W_HEAT, W_MM, W_TWOK };
typedef struct wl {
  int kind;
  ex_heat2d h;
  ex_mmrows m;
  ex_twok t;
  unsigned nb;
  void *b[3], *e[3];
  size_t bytes[3];
  rp_graph *g;
} wl;

static void wl_init(wl *w, void **b) {
  if (w->kind == W_HEAT)
    ex_heat2d_init(&w->h, b[0], b[1]);
  else if (w->kind == W_MM)
    ex_mmrows_init(&w->m, b[0], b[1], b[2]);
  else
    ex_twok_init(&w->t, b[0], b[1]);
}

/* Records the workload (graph flags `flags`) and computes in w->e the plain
 * sequential result of `replays` replays. */
static void wl_make(wl *w, unsigned flags, unsigned replays) {
  uint64_t n = w->kind == W_HEAT ? w->h.n : w->kind == W_MM ? w->m.n : 0;
  w->nb = w->kind == W_MM ? 3 : 2;
  for (unsigned i = 0; i < w->nb; i++) {
    w->bytes[i] = w->kind == W_TWOK ? w->t.n * 8 : n * n * 8;
    w->b[i] = malloc(w->bytes[i]);
    w->e[i] = malloc(w->bytes[i]);
  }
  TU_OK(NULL, rp_graph_create(&w->g, flags));
  if (w->kind == W_HEAT)
    TU_OK(w->g, ex_heat2d_record(w->g, &w->h, w->b[0], w->b[1]));
  else if (w->kind == W_MM)
    TU_OK(w->g, ex_mmrows_record(w->g, &w->m, w->b[0], w->b[1], w->b[2]));
  else
    TU_OK(w->g, ex_twok_record(w->g, &w->t, w->b[0], w->b[1]));
  TU_OK(w->g, rp_graph_end(w->g));
  wl_init(w, w->e);
  if (w->kind == W_HEAT)
    ex_heat2d_check(&w->h, replays, w->e[0], w->e[1]);
  else if (w->kind == W_MM)
    ex_mmrows_check(&w->m, w->e[0], w->e[1], w->e[2]);
  else
    ex_twok_check(&w->t, replays, w->e[0], w->e[1]);
}

static void wl_free(wl *w) {
  rp_graph_destroy(w->g);
  for (unsigned i = 0; i < w->nb; i++) {
    free(w->b[i]);
    free(w->e[i]);
  }
}

/* `replays` replays by the reference, then by cuda with these options,
 * from the same data: byte-identical to each other and to w->e (the
 * kernels round the same with or without FMA contraction). */
static void wl_compare(wl *w, unsigned replays, const rp_exec_opts *o,
                       const char *what) {
  const rp_backend *be = need_gpu();
  void *ref[3];
  wl_init(w, w->b);
  TU_OK(w->g, rp_replay_reference(w->g, replays));
  for (unsigned i = 0; i < w->nb; i++) {
    ref[i] = malloc(w->bytes[i]);
    memcpy(ref[i], w->b[i], w->bytes[i]);
    cr_assert_eq(memcmp(ref[i], w->e[i], w->bytes[i]), 0,
                 "%s: reference differs from the plain loop in buffer %u",
                 what, i);
  }
  wl_init(w, w->b);
  rp_exec *x = NULL;
  rp_status s = rp_exec_create(&x, w->g, be, o);
  cr_assert_eq(s, RP_OK, "%s: exec: %s: %s", what, rp_status_name(s),
               rp_last_error());
  s = rp_exec_run(x, replays);
  cr_assert_eq(s, RP_OK, "%s: run: %s", what, rp_exec_error(x));
  for (unsigned i = 0; i < w->nb; i++) {
    cr_assert_eq(memcmp(ref[i], w->b[i], w->bytes[i]), 0,
                 "%s: cuda differs from the reference in buffer %u", what,
                 i);
    free(ref[i]);
  }
  rp_exec_destroy(x);
}

/* Every mode, with the logical devices all on GPU 0 by an explicit map
 * and by the default (fewer GPUs than devices: all on GPU 0). */
static void wl_all_opts(wl *w, unsigned replays, const char *name) {
  static const char *modes[] = {"graph", "streams", "serial"};
  static const int zeros[4] = {0, 0, 0, 0};
  char what[96];
  rp_exec_opts o;
  for (unsigned m = 0; m < 3; m++)
    for (unsigned map = 0; map < 2; map++) {
      memset(&o, 0, sizeof o);
      o.mode = modes[m];
      o.device_map = map ? zeros : NULL;
      o.ndevice_map = map ? 4 : 0;
      snprintf(what, sizeof what, "%s, %s, map %s", name, modes[m],
               map ? "{0,0,...}" : "default");
      wl_compare(w, replays, &o, what);
    }
}

static void run_heat(unsigned nd, int explicit_halo, uint64_t n,
                     unsigned steps) {
  wl w;
  char name[64];
  need_gpu();
  memset(&w, 0, sizeof w);
  w.kind = W_HEAT;
  w.h.n = n;
  w.h.steps = steps;
  w.h.devices = nd;
  w.h.explicit_halo = explicit_halo;
  wl_make(&w, explicit_halo ? RP_GRAPH_NO_COHERENCE : 0, 3);
  snprintf(name, sizeof name, "%sheat2d on %u devices",
           explicit_halo ? "explicit " : "", nd);
  wl_all_opts(&w, 3, name);
  wl_free(&w);
}

Test(cuda_multidev, heat2d_two_devices, .timeout = 120) {
  run_heat(2, 0, 70, 6);
}

Test(cuda_multidev, heat2d_three_and_four_devices, .timeout = 120) {
  run_heat(3, 0, 45, 5);
  run_heat(4, 0, 129, 4);
}

Test(cuda_multidev, heat2d_explicit_halo, .timeout = 120) {
  run_heat(2, 1, 64, 4);
  run_heat(3, 1, 50, 5);
}

Test(cuda_multidev, matmul_rows, .timeout = 120) {
  for (unsigned nd = 2; nd <= 3; nd++) {
    wl w;
    char name[64];
    need_gpu();
    memset(&w, 0, sizeof w);
    w.kind = W_MM;
    w.m.n = 61 + nd;
    w.m.devices = nd;
    wl_make(&w, 0, 2);
    snprintf(name, sizeof name, "matmul_rows on %u devices", nd);
    wl_all_opts(&w, 2, name);
    wl_free(&w);
  }
}

Test(cuda_multidev, twokernels, .timeout = 120) {
  wl w;
  need_gpu();
  memset(&w, 0, sizeof w);
  w.kind = W_TWOK;
  w.t.n = 100000;
  w.t.inner = 9;
  w.t.rounds = 3;
  wl_make(&w, 0, 3);
  wl_all_opts(&w, 3, "twokernels");
  wl_free(&w);
}

#else
Test(cuda_multidev, examples_not_built) {
  cr_skip_test("examples not built (RP_BUILD_EXAMPLES=OFF)");
}
#endif
