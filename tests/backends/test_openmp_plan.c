/* The OpenMP backend on the execution plan: results over several replays
 * without a final sync, rebinding between replays, and the per-buffer
 * wait of an asynchronous launch. Every result is compared byte for byte
 * with the reference backend driven the same way. */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "reprise/kernel.h"
#include "util.h"

#define NE 16

static const rp_backend *be_named(const char *name) {
  const rp_backend *be = NULL;
  cr_assert_eq(rp_backend_find(name, &be), RP_OK);
  return be;
}

static rp_exec *mk(const rp_graph *g, const char *be, int nth,
                   const char *mode) {
  rp_exec_opts o;
  rp_exec *x = NULL;
  rp_exec_opts_init(&o);
  o.nthreads = nth;
  o.mode = mode;
  rp_status s = rp_exec_create(&x, g, be_named(be), &o);
  cr_assert_eq(s, RP_OK, "exec_create(%s): %s: %s", be, rp_status_name(s),
               rp_last_error());
  return x;
}

/* A = 2A + 1 over NE int64. */
RP_KERNEL(k_twice, {
  int64_t *a = RP_PTR(int64_t, 0);
  a[RP_X] = 2 * a[RP_X] + 1;
})
static const rp_param k_twice_p[] = {{"a", RP_INOUT}};
static const rp_kernel k_twice = RP_KERNEL_DESC(k_twice, k_twice_p);

/* B = A + 1 (ptrs: A, B). */
static void h_inc(void *user, void *const *p) {
  (void)user;
  const int64_t *a = p[0];
  int64_t *b = p[1];
  for (int i = 0; i < NE; i++)
    b[i] = a[i] + 1;
}

typedef struct ab {
  int64_t a[NE], b[NE];
  rp_graph *g;
  rp_buf ba, bb;
} ab;

/* The smallest wrong-result case: host task B = A + 1, then a
 * kernel A = 2A + 1 on device 0, no final sync. */
static void ab_record(ab *s, int sync) {
  for (int i = 0; i < NE; i++)
    s->a[i] = i * 3 - 7, s->b[i] = 100 + i;
  TU_OK(NULL, rp_graph_create(&s->g, 0));
  TU_OK(s->g, rp_buffer_register(s->g, "A", s->a, sizeof s->a, &s->ba));
  TU_OK(s->g, rp_buffer_register(s->g, "B", s->b, sizeof s->b, &s->bb));
  rp_access acc[2] = {{rp_whole(s->ba), RP_IN}, {rp_whole(s->bb), RP_OUT}};
  TU_OK(s->g, rp_record_host(s->g, h_inc, NULL, acc, 2, NULL, NULL));
  rp_arg arg = rp_arg_buf(rp_whole(s->ba));
  TU_OK(s->g, rp_record_kernel(s->g, &k_twice, 0, rp_dims3(NE, 1, 1), &arg,
                               NULL, NULL));
  if (sync)
    TU_OK(s->g, rp_record_sync_host(s->g, rp_whole(s->ba), NULL));
  TU_OK(s->g, rp_graph_end(s->g));
}

static void ab_reset(ab *s) {
  for (int i = 0; i < NE; i++)
    s->a[i] = i * 3 - 7, s->b[i] = 100 + i;
}

/* reps replays on backend be (nth threads, mode): A and B afterwards. */
static void ab_run(ab *s, const char *be, int nth, const char *mode,
                   unsigned reps, int64_t *a, int64_t *b) {
  ab_reset(s);
  rp_exec *x = mk(s->g, be, nth, mode);
  for (unsigned r = 0; r < reps; r++)
    cr_assert_eq(rp_exec_run(x, 1), RP_OK, "%s", rp_exec_error(x));
  rp_exec_destroy(x);
  memcpy(a, s->a, sizeof s->a);
  memcpy(b, s->b, sizeof s->b);
}

Test(openmp_plan, host_task_then_kernel_without_sync_replayed, .timeout = 60) {
  for (int sync = 0; sync < 2; sync++) {
    ab s;
    ab_record(&s, sync);
    for (unsigned reps = 1; reps <= 3; reps++) {
      int64_t ra[NE], rb[NE], oa[NE], ob[NE];
      ab_run(&s, "reference", 0, NULL, reps, ra, rb);
      const char *modes[3] = {NULL, NULL, "serial"};
      int nths[3] = {1, 2, 1};
      for (int m = 0; m < 3; m++) {
        ab_run(&s, "openmp", nths[m], modes[m], reps, oa, ob);
        cr_assert_eq(memcmp(ra, oa, sizeof ra), 0,
                     "A differs (sync %d, %u replays, %d threads %s)", sync,
                     reps, nths[m], modes[m] ? modes[m] : "");
        cr_assert_eq(memcmp(rb, ob, sizeof rb), 0,
                     "B differs (sync %d, %u replays, %d threads %s)", sync,
                     reps, nths[m], modes[m] ? modes[m] : "");
      }
      /* One launch of reps replays is the same as reps launches. */
      ab_reset(&s);
      rp_exec *x = mk(s.g, "openmp", 2, NULL);
      cr_assert_eq(rp_exec_run(x, reps), RP_OK);
      rp_exec_destroy(x);
      cr_assert_eq(memcmp(ra, s.a, sizeof ra), 0);
      cr_assert_eq(memcmp(rb, s.b, sizeof rb), 0);
    }
    /* Without the sync the host's A is never written by the graph: the
     * reference keeps it, so B = A0 + 1 on every replay. */
    if (!sync)
      for (int i = 0; i < NE; i++)
        cr_assert_eq(s.b[i], i * 3 - 7 + 1);
    rp_graph_destroy(s.g);
  }
}

/* Run, rebind A and B to other arrays (with other contents), run again:
 * the arrays' final contents on openmp equal the reference's. */
static void rebind_seq(ab *s, const char *be, int nth, int64_t out[4][NE]) {
  int64_t a2[NE], b2[NE];
  for (int i = 0; i < NE; i++)
    a2[i] = 1000 - i, b2[i] = -i;
  ab_reset(s);
  rp_exec *x = mk(s->g, be, nth, NULL);
  cr_assert_eq(rp_exec_run(x, 2), RP_OK);
  TU_OK(NULL, rp_exec_rebind(x, s->ba, a2, sizeof a2));
  TU_OK(NULL, rp_exec_rebind(x, s->bb, b2, sizeof b2));
  cr_assert_eq(rp_exec_run(x, 1), RP_OK);
  TU_OK(NULL, rp_exec_rebind(x, s->ba, s->a, sizeof s->a));
  cr_assert_eq(rp_exec_run(x, 1), RP_OK);
  rp_exec_destroy(x);
  memcpy(out[0], s->a, sizeof s->a);
  memcpy(out[1], s->b, sizeof s->b);
  memcpy(out[2], a2, sizeof a2);
  memcpy(out[3], b2, sizeof b2);
}

Test(openmp_plan, rebind_between_replays, .timeout = 60) {
  for (int sync = 0; sync < 2; sync++) {
    ab s;
    ab_record(&s, sync);
    int64_t ref[4][NE], got[4][NE];
    rebind_seq(&s, "reference", 0, ref);
    for (int nth = 1; nth <= 2; nth++) {
      rebind_seq(&s, "openmp", nth, got);
      cr_assert_eq(memcmp(ref, got, sizeof ref), 0,
                   "rebind (sync %d, %d threads) differs", sync, nth);
    }
    /* Without the sync the host arrays of A are only read: a2 keeps its
     * contents, and b2 (still B's array) holds A0 + 1 from the last
     * replay. */
    if (!sync)
      for (int i = 0; i < NE; i++) {
        cr_assert_eq(got[2][i], 1000 - i);
        cr_assert_eq(got[3][i], i * 3 - 7 + 1);
      }
    rp_graph_destroy(s.g);
  }
}

/* ---- wait_buffer: the host sees X while a later operation is blocked on
 * a gate the test opens only after wait_buffer returned ---- */
typedef struct gate {
  atomic_int open, waited_out, entered, calls;
  int every; /* block on every every-th call (the last replay of a launch) */
} gate;

static void h_set(void *user, void *const *p) {
  int64_t *x = p[0];
  for (int i = 0; i < NE; i++)
    x[i] += 10 + i + (int64_t)(intptr_t)user;
}

static void h_blocked(void *user, void *const *p) {
  gate *gt = user;
  int64_t *y = p[0];
  if ((atomic_fetch_add(&gt->calls, 1) + 1) % gt->every) {
    for (int i = 0; i < NE; i++)
      y[i] = y[i] * 2 + 1;
    return;
  }
  atomic_store(&gt->entered, 1);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (!atomic_load(&gt->open)) {
    usleep(50);
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec >= 10) {
      atomic_store(&gt->waited_out, 1);
      break;
    }
  }
  for (int i = 0; i < NE; i++)
    y[i] = y[i] * 2 + 1;
}

/* X written by a host task, then (kind 1) by a kernel on device 0 synced
 * home; Y then written by the blocked task (after X's writers: it reads X
 * in kind 2). reps replays in one launch. */
static void waitbuf_case(int kind, int nth, const char *mode, unsigned reps) {
  int64_t xv[NE], yv[NE], xr[NE], yr[NE];
  for (int i = 0; i < NE; i++)
    xv[i] = i, yv[i] = 7 * i;
  gate gt;
  atomic_init(&gt.open, 1);
  atomic_init(&gt.waited_out, 0);
  atomic_init(&gt.entered, 0);
  atomic_init(&gt.calls, 0);
  gt.every = (int)reps;
  rp_graph *g;
  rp_buf bx, by;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "X", xv, sizeof xv, &bx));
  TU_OK(g, rp_buffer_register(g, "Y", yv, sizeof yv, &by));
  rp_access ax = {rp_whole(bx), RP_INOUT};
  TU_OK(g,
        rp_record_host(g, h_set, (void *)(intptr_t)kind, &ax, 1, NULL, NULL));
  if (kind >= 1) {
    rp_arg arg = rp_arg_buf(rp_whole(bx));
    TU_OK(g, rp_record_kernel(g, &k_twice, 0, rp_dims3(NE, 1, 1), &arg, NULL,
                              NULL));
    TU_OK(g, rp_record_sync_host(g, rp_whole(bx), NULL));
  }
  rp_access ay[2] = {{rp_whole(by), RP_INOUT}, {rp_whole(bx), RP_IN}};
  TU_OK(g,
        rp_record_host(g, h_blocked, &gt, ay, kind == 2 ? 2 : 1, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  /* The reference, gate open. */
  rp_exec *x = mk(g, "reference", 0, NULL);
  cr_assert_eq(rp_exec_run(x, reps), RP_OK);
  rp_exec_destroy(x);
  memcpy(xr, xv, sizeof xv);
  memcpy(yr, yv, sizeof yv);
  for (int i = 0; i < NE; i++)
    xv[i] = i, yv[i] = 7 * i;
  /* openmp, gate closed: wait_buffer(X) must return while the blocked
   * task still waits, with X's final value of the last replay. */
  x = mk(g, "openmp", nth, mode);
  for (int launch = 0; launch < 2; launch++) {
    atomic_store(&gt.open, 0);
    cr_assert_eq(rp_exec_launch(x, reps), RP_OK, "%s", rp_exec_error(x));
    cr_assert_eq(rp_exec_wait_buffer(x, bx), RP_OK);
    int64_t seen[NE];
    memcpy(seen, xv, sizeof seen);
    int early = !atomic_load(&gt.open);
    atomic_store(&gt.open, 1);
    cr_assert_eq(rp_exec_wait(x), RP_OK);
    cr_assert(early, "kind %d, %d threads %s, %u replays", kind, nth,
              mode ? mode : "", reps);
    cr_assert(!atomic_load(&gt.waited_out),
              "the blocked task timed out: wait_buffer did not return "
              "(kind %d, %d threads %s, %u replays)",
              kind, nth, mode ? mode : "", reps);
    if (launch == 0) {
      cr_assert_eq(memcmp(seen, xr, sizeof seen), 0,
                   "X seen by the host differs (kind %d, %d threads)", kind,
                   nth);
      cr_assert_eq(memcmp(yv, yr, sizeof yv), 0);
      cr_assert_eq(memcmp(xv, xr, sizeof xv), 0);
    }
  }
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(openmp_plan, wait_buffer_before_the_replay_ends, .timeout = 120) {
  for (int kind = 0; kind < 3; kind++)
    for (unsigned reps = 1; reps <= 3; reps += 2) {
      waitbuf_case(kind, 2, NULL, reps);
      waitbuf_case(kind, 1, NULL, reps);
      waitbuf_case(kind, 1, "serial", reps);
    }
}

/* wait_buffer on a buffer no operation writes returns at once, and
 * launch returns before a blocked replay ends. */
Test(openmp_plan, launch_returns_at_once, .timeout = 60) {
  int64_t yv[NE] = {0}, zv[NE] = {0};
  gate gt;
  atomic_init(&gt.open, 0);
  atomic_init(&gt.waited_out, 0);
  atomic_init(&gt.entered, 0);
  atomic_init(&gt.calls, 0);
  gt.every = 1;
  rp_graph *g;
  rp_buf by, bz;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "Y", yv, sizeof yv, &by));
  TU_OK(g, rp_buffer_register(g, "Z", zv, sizeof zv, &bz));
  rp_access ay = {rp_whole(by), RP_INOUT};
  TU_OK(g, rp_record_host(g, h_blocked, &gt, &ay, 1, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = mk(g, "openmp", 2, NULL);
  cr_assert_eq(rp_exec_launch(x, 1), RP_OK);
  cr_assert_eq(rp_exec_wait_buffer(x, bz), RP_OK);
  while (!atomic_load(&gt.entered))
    usleep(100);
  cr_assert_eq(yv[0], 0, "the blocked task finished before it was released");
  atomic_store(&gt.open, 1);
  cr_assert_eq(rp_exec_wait(x), RP_OK);
  cr_assert(!atomic_load(&gt.waited_out));
  cr_assert_eq(yv[3], 1);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* ---- the owner engine (every launch after the first on several threads)
 * against the reference, over random graphs and several launches ---- */
static unsigned char *rsnap(const tu_random *r) {
  unsigned char *s = malloc(r->nbuf * r->bsize);
  for (unsigned b = 0; b < r->nbuf; b++)
    memcpy(s + b * r->bsize, r->buf[b], r->bsize);
  return s;
}

/* launches launches of reps replays each, on backend be. */
static unsigned char *rrun(tu_random *r, uint64_t seed, const char *be, int nth,
                           const char *mode, unsigned launches, unsigned reps) {
  tu_random_reset(r, seed);
  rp_exec *x = mk(r->g, be, nth, mode);
  for (unsigned l = 0; l < launches; l++)
    cr_assert_eq(rp_exec_run(x, reps), RP_OK, "%s", rp_exec_error(x));
  rp_exec_destroy(x);
  return rsnap(r);
}

Test(openmp_plan, owner_engine_random_graphs_several_launches, .timeout = 180) {
  for (uint64_t seed = 1; seed <= 60; seed++) {
    tu_random r;
    unsigned ndev = 1 + (unsigned)(seed % 3);
    cr_assert_eq(tu_random_graph(&r, seed, 4, 96, 20 + (unsigned)(seed % 50),
                                 ndev, 0, 0),
                 0);
    cr_assert_eq(rp_graph_end(r.g), RP_OK, "%s", rp_graph_error(r.g));
    unsigned reps = 1 + (unsigned)(seed % 3);
    unsigned char *ref = rrun(&r, seed, "reference", 0, NULL, 4, reps);
    const int nths[5] = {2, 3, 4, 2, 3};
    const char *modes[5] = {NULL, NULL, NULL, "dynamic", "owner"};
    for (int m = 0; m < 5; m++) {
      unsigned char *got = rrun(&r, seed, "openmp", nths[m], modes[m], 4, reps);
      cr_assert_eq(memcmp(ref, got, r.nbuf * r.bsize), 0,
                   "seed %llu, %d threads %s, 4 x %u replays differ",
                   (unsigned long long)seed, nths[m], modes[m] ? modes[m] : "",
                   reps);
      free(got);
    }
    free(ref);
    tu_random_free(&r);
  }
}

/* ---- the timeline hook (called through the table: the core's entry
 * point is another helper's) ---- */
#include "replay/exec.h"

Test(openmp_plan, timeline_respects_every_edge, .timeout = 60) {
  tu_random r;
  cr_assert_eq(tu_random_graph(&r, 5, 4, 96, 60, 2, 0, 0), 0);
  cr_assert_eq(rp_graph_end(r.g), RP_OK);
  for (int nth = 1; nth <= 2; nth++)
    for (int launches = 0; launches < 2; launches++) {
      rp_exec *x = mk(r.g, "openmp", nth, NULL);
      for (int l = 0; l < launches; l++)
        cr_assert_eq(rp_exec_run(x, 1), RP_OK);
      const rp_backend *be = rp_exec_backend(x);
      const rp_plan *p = rp_exec_plan(x);
      cr_assert(be->timeline);
      double *s = malloc(p->nnode * sizeof *s),
             *e = malloc(p->nnode * sizeof *e);
      for (uint32_t v = 0; v < p->nnode; v++)
        s[v] = e[v] = -1;
      cr_assert_eq(be->timeline(x->state, s, e), RP_OK);
      for (uint32_t v = 0; v < p->nnode; v++) {
        cr_assert(s[v] >= 0 && e[v] >= s[v], "node %u: %g .. %g", v, s[v],
                  e[v]);
        for (uint32_t k = 0; k < p->node[v].nsucc; k++) {
          uint32_t w = p->succ[p->node[v].succ0 + k];
          cr_assert(e[v] <= s[w], "edge %u -> %u: ends %g, starts %g", v, w,
                    e[v], s[w]);
        }
      }
      free(s);
      free(e);
      rp_exec_destroy(x);
    }
  tu_random_free(&r);
}
