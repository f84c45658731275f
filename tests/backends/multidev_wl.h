/* The several-device workloads of the backend tests (heat 2D, matmul by
 * rows, two kernels): host arrays, graph, expected result. Included by
 * test_openmp_multidev.c and test_cuda_multidev.c. */
#ifndef RP_TEST_MULTIDEV_WL_H
#define RP_TEST_MULTIDEV_WL_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "multidev.h"
#include "util.h"

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

/* `replays` replays by the reference, then by backend `be` with options o,
 * from the same data: byte-identical to each other and to w->e. */
static void wl_compare(wl *w, const rp_backend *be, unsigned replays,
                       const rp_exec_opts *o, const char *what) {
  void *ref[3];
  wl_init(w, w->b);
  TU_OK(w->g, rp_replay_reference(w->g, replays));
  for (unsigned i = 0; i < w->nb; i++) {
    ref[i] = malloc(w->bytes[i]);
    memcpy(ref[i], w->b[i], w->bytes[i]);
    cr_assert_eq(memcmp(ref[i], w->e[i], w->bytes[i]), 0,
                 "%s: reference differs from the plain loop in buffer %u", what,
                 i);
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
                 "%s: %s differs from the reference in buffer %u", what,
                 rp_backend_name(be), i);
    free(ref[i]);
  }
  rp_exec_destroy(x);
}

#endif
