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

#include "backends/multidev_wl.h"
#include "reprise/backend.h"

/* Every mode, with the logical devices all on GPU 0 by an explicit map
 * and by folding (device_fold: logical d on GPU d mod count). */
static void wl_all_opts(wl *w, unsigned replays, const char *name) {
  static const char *modes[] = {"graph", "streams", "serial"};
  static const int zeros[4] = {0, 0, 0, 0};
  char what[96];
  rp_exec_opts o;
  for (unsigned m = 0; m < 3; m++)
    for (unsigned map = 0; map < 2; map++) {
      rp_exec_opts_init(&o);
      o.mode = modes[m];
      o.device_map = map ? zeros : NULL;
      o.ndevice_map = map ? 4 : 0;
      o.device_fold = !map;
      snprintf(what, sizeof what, "%s, %s, map %s", name, modes[m],
               map ? "{0,0,...}" : "default");
      wl_compare(w, need_gpu(), replays, &o, what);
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

/* Four logical GPUs: without a map or folding, a machine with fewer GPUs
 * refuses the exec and says how to ask; with folding it runs and says it
 * folded. Each device's images span only its rows and halos. */
Test(cuda_multidev, folding_is_asked_for, .timeout = 120) {
  wl w;
  const rp_backend *be = need_gpu();
  memset(&w, 0, sizeof w);
  w.kind = W_HEAT;
  w.h.n = 128;
  w.h.steps = 3;
  w.h.devices = 4;
  wl_make(&w, 0, 3);
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  rp_exec *x = NULL;
  rp_status s = rp_exec_create(&x, w.g, be, &o);
  if (s == RP_OK) { /* four GPUs or more: nothing to fold */
    cr_assert_null(strstr(rp_exec_notice(x), "folded"));
    rp_exec_destroy(x);
  } else {
    cr_assert_eq(s, RP_ENODEV, "%s", rp_status_name(s));
    cr_assert(strstr(rp_last_error(), "device_fold") &&
                  strstr(rp_last_error(), "logical device"),
              "%s", rp_last_error());
    o.device_fold = 1;
    s = rp_exec_create(&x, w.g, be, &o);
    cr_assert_eq(s, RP_OK, "%s", rp_last_error());
    cr_assert(strstr(rp_exec_notice(x), "folded"), "%s", rp_exec_notice(x));
    cr_assert_str_empty(rp_exec_error(x));
    cr_assert_str_empty(rp_last_error());
    const rp_plan *p = rp_exec_plan(x);
    for (uint32_t i = 0; i < p->nimage; i++) {
      const rp_plan_image *im = &p->image[i];
      if (im->space < 0 || (im->flags & RP_IMAGE_HOST_MEMORY))
        continue;
      /* a quarter of the rows and two halo rows at most */
      cr_assert_leq(im->hi - im->lo, im->bytes / 4 + 2 * 128 * 8,
                    "image %u of device %d spans %llu of %llu bytes", i,
                    im->space, (unsigned long long)(im->hi - im->lo),
                    (unsigned long long)im->bytes);
    }
    rp_exec_destroy(x);
    wl_compare(&w, be, 3, &o, "heat2d folded from 4 devices");
  }
  wl_free(&w);
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
