/* Tests of the starpu backend against the sequential reference replay, in
 * its two single-process modes; the lowering of mode "mpi" counted
 * without MPI (the distributed runs are the mpi_* ctest entries). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "reprise/kernel.h"
#include "rp_starpu.h"
#include "util.h"
#ifdef RP_HAVE_EXAMPLES
#include "examples.h"
#include "multidev.h"
#endif

static const char *const modes[] = {"implicit", "explicit"};

static rp_exec *mk(const rp_graph *g, const char *mode) {
  const rp_backend *be = NULL;
  cr_assert_eq(rp_backend_find("starpu", &be), RP_OK);
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.mode = mode;
  rp_exec *x = NULL;
  rp_status s = rp_exec_create(&x, g, be, &o);
  cr_assert_eq(s, RP_OK, "exec_create (%s): %s: %s", mode, rp_status_name(s),
               rp_last_error());
  return x;
}

typedef void (*reset_fn)(void *ctx);

/* iters replays by the reference and by starpu (mode) from the same
 * initial data leave identical host images. */
static void same_as_reference(const rp_graph *g, reset_fn reset, void *ctx,
                              unsigned iters, const char *mode) {
  size_t n1, n2;
  reset(ctx);
  cr_assert_eq(rp_replay_reference(g, iters), RP_OK);
  unsigned char *ref = tu_snapshot(g, &n1);
  reset(ctx);
  rp_exec *x = mk(g, mode);
  cr_assert_eq(rp_exec_run(x, iters), RP_OK, "%s", rp_exec_error(x));
  unsigned char *got = tu_snapshot(g, &n2);
  cr_assert_eq(n1, n2);
  cr_assert(memcmp(ref, got, n1) == 0,
            "starpu (%s, %u replays) differs from the reference", mode, iters);
  rp_exec_destroy(x);
  free(ref);
  free(got);
}

static void tr_reset(void *v) { tu_random_reset((tu_random *)v, 99); }

Test(starpu, random_graphs_both_modes_1_to_3_replays, .timeout = 240) {
  for (uint64_t seed = 1; seed <= 30; seed++) {
    tu_random r;
    cr_assert_eq(tu_random_graph(&r, 99 + seed, 3, 256, 40, 1 + seed % 3, 0,
                                 (int)(seed % 2)),
                 0);
    TU_OK(r.g, rp_graph_end(r.g));
    for (unsigned m = 0; m < 2; m++)
      for (unsigned it = 1; it <= 3; it++) {
        tu_random_reset(&r, 99 + seed);
        same_as_reference(r.g, tr_reset, &r, it, modes[m]);
      }
    tu_random_free(&r);
  }
}

Test(starpu, bad_mode_is_refused, .timeout = 30) {
  rp_graph *g;
  uint8_t a[16] = {0};
  rp_buf A;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "A", a, 16, &A));
  rp_arg args[2] = {rp_arg_buf(rp_whole(A)), rp_arg_i64(0)};
  TU_OK(g,
        rp_record_kernel(g, &tu_bump, 0, rp_dims3(16, 1, 1), args, NULL, NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(A), NULL));
  TU_OK(g, rp_graph_end(g));
  const rp_backend *be;
  cr_assert_eq(rp_backend_find("starpu", &be), RP_OK);
  rp_exec_opts o;
  rp_exec_opts_init(&o);
  o.mode = "nonsense";
  rp_exec *x = NULL;
  cr_assert_eq(rp_exec_create(&x, g, be, &o), RP_EINVAL);
  cr_assert_null(x);
  cr_assert(strstr(rp_last_error(), "nonsense"), "%s", rp_last_error());
  /* auto never picks starpu */
  cr_assert_eq(rp_backend_find(NULL, &be), RP_OK);
  cr_assert_str_neq(rp_backend_name(be), "starpu");
  rp_graph_destroy(g);
}

/* A host task that blocks until released, so the test can see a buffer
 * final while the replay is still running. */
typedef struct gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int open;
} gate;

static void gate_task(void *user, void *const *ptrs) {
  gate *gt = user;
  pthread_mutex_lock(&gt->mu);
  while (!gt->open)
    pthread_cond_wait(&gt->cv, &gt->mu);
  pthread_mutex_unlock(&gt->mu);
  ((uint8_t *)ptrs[0])[0] += 1;
}

Test(starpu, wait_buffer_returns_before_the_replay_ends, .timeout = 60) {
  uint8_t a[64], b[64];
  gate gt = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  rp_graph *g;
  rp_buf A, B;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "A", a, 64, &A));
  TU_OK(g, rp_buffer_register(g, "B", b, 64, &B));
  rp_arg args[2] = {rp_arg_buf(rp_whole(A)), rp_arg_i64(0)};
  TU_OK(g,
        rp_record_kernel(g, &tu_bump, 0, rp_dims3(64, 1, 1), args, NULL, NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(A), NULL));
  rp_access acc = {rp_whole(B), RP_INOUT};
  TU_OK(g, rp_record_host(g, gate_task, &gt, &acc, 1, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x = mk(g, "implicit");
  memset(a, 1, 64);
  memset(b, 0, 64);
  cr_assert_eq(rp_exec_launch(x, 2), RP_OK);
  cr_assert_eq(rp_exec_wait_buffer(x, A), RP_OK);
  /* two replays of A = 5 A + 7 over bytes: 1 -> 12 -> 67 */
  for (int i = 0; i < 64; i++)
    cr_assert_eq(a[i], 67, "A[%d] = %d", i, a[i]);
  cr_assert_eq(b[0], 0, "the gated host task ran before it was released");
  pthread_mutex_lock(&gt.mu);
  gt.open = 1;
  pthread_cond_broadcast(&gt.cv);
  pthread_mutex_unlock(&gt.mu);
  cr_assert_eq(rp_exec_wait(x), RP_OK);
  cr_assert_eq(b[0], 2);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

#ifdef RP_HAVE_EXAMPLES
typedef struct jctx {
  ex_jacobi2d p;
  double *a, *b, *s;
} jctx;

static void j_reset(void *v) {
  jctx *c = v;
  ex_jacobi2d_init(&c->p, c->a, c->b, c->s);
}

Test(starpu, jacobi_rebind_and_many_replays, .timeout = 120) {
  jctx c;
  memset(&c, 0, sizeof c);
  c.p.n = 40;
  c.p.steps = 4;
  c.p.every = 2;
  c.p.blocks = 3;
  uint64_t nn = 40 * 40;
  c.a = malloc(nn * 8);
  c.b = malloc(nn * 8);
  c.s = malloc(16);
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_jacobi2d_record(g, &c.p, c.a, c.b, c.s));
  TU_OK(g, rp_graph_end(g));
  double *ea = malloc(nn * 8), *eb = malloc(nn * 8), es[2];
  double *a2 = malloc(nn * 8), *b2 = malloc(nn * 8), s2[2];
  for (unsigned m = 0; m < 2; m++) {
    same_as_reference(g, j_reset, &c, 3, modes[m]);
    rp_exec *x = mk(g, modes[m]);
    /* rebind all three arrays to other memory: the graph's stay put */
    rp_buf A, B, S;
    TU_OK(g, rp_graph_find_buffer(g, "A", &A));
    TU_OK(g, rp_graph_find_buffer(g, "B", &B));
    TU_OK(g, rp_graph_find_buffer(g, "sums", &S));
    j_reset(&c);
    ex_jacobi2d_init(&c.p, a2, b2, s2);
    cr_assert_eq(rp_exec_rebind(x, A, a2, nn * 8), RP_OK);
    cr_assert_eq(rp_exec_rebind(x, B, b2, nn * 8), RP_OK);
    cr_assert_eq(rp_exec_rebind(x, S, s2, sizeof s2), RP_OK);
    for (int i = 0; i < 50; i++)
      cr_assert_eq(rp_exec_run(x, 1), RP_OK);
    cr_assert_eq(rp_exec_launch(x, 150), RP_OK);
    cr_assert_eq(rp_exec_wait(x), RP_OK);
    ex_jacobi2d_init(&c.p, ea, eb, es);
    ex_jacobi2d_check(&c.p, 200, ea, eb, es);
    cr_assert(memcmp(ea, a2, nn * 8) == 0 && memcmp(eb, b2, nn * 8) == 0 &&
                  memcmp(es, s2, 16) == 0,
              "%s: 200 replays after rebind", modes[m]);
    ex_jacobi2d_init(&c.p, ea, eb, es);
    cr_assert(memcmp(ea, c.a, nn * 8) == 0, "graph's A was written");
    rp_exec_destroy(x);
  }
  free(ea);
  free(eb);
  free(a2);
  free(b2);
  free(c.a);
  free(c.b);
  free(c.s);
  rp_graph_destroy(g);
}

static double process_cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* StarPU's workers poll for tasks in a tight loop (non-blocking drivers):
 * the backend pauses them while no launch is in flight, so an idle exec
 * costs no CPU (two polling workers would burn ~600 ms in 300 ms). The
 * task bodies' CPU time is counted. */
Test(starpu, workers_idle_between_launches, .timeout = 60) {
  jctx c;
  memset(&c, 0, sizeof c);
  c.p.n = 64;
  c.p.steps = 4;
  c.p.blocks = 2;
  c.a = malloc(64 * 64 * 8);
  c.b = malloc(64 * 64 * 8);
  c.s = malloc(16);
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_jacobi2d_record(g, &c.p, c.a, c.b, c.s));
  TU_OK(g, rp_graph_end(g));
  for (unsigned m = 0; m < 2; m++) {
    j_reset(&c);
    rp_exec *x = mk(g, modes[m]);
    rp__starpu_stats st;
    cr_assert_eq(rp__starpu_stats_get(x, &st), RP_OK);
    cr_assert_eq(st.body_cpu_us, 0);
    cr_assert_eq(rp_exec_run(x, 3), RP_OK);
    cr_assert_eq(rp__starpu_stats_get(x, &st), RP_OK);
    cr_assert_gt(st.body_cpu_us, 0, "%s: task bodies not timed", modes[m]);
    double t0 = process_cpu_ms();
    struct timespec d = {0, 300000000};
    nanosleep(&d, NULL);
    double used = process_cpu_ms() - t0;
    cr_assert_lt(used, 30,
                 "%s: %.1f ms of CPU in 300 ms with no launch in "
                 "flight: the workers are polling",
                 modes[m], used);
    /* and they run again at the next launch */
    cr_assert_eq(rp_exec_run(x, 2), RP_OK);
    double *ea = malloc(64 * 64 * 8), *eb = malloc(64 * 64 * 8), es[2];
    ex_jacobi2d_init(&c.p, ea, eb, es);
    ex_jacobi2d_check(&c.p, 5, ea, eb, es);
    cr_assert(memcmp(ea, c.a, 64 * 64 * 8) == 0, "%s: 3 + 2 replays", modes[m]);
    free(ea);
    free(eb);
    rp_exec_destroy(x);
  }
  rp_graph_destroy(g);
  free(c.a);
  free(c.b);
  free(c.s);
}

typedef struct hctx {
  ex_heat2d p;
  double *u, *v;
} hctx;

static void h_reset(void *x) {
  hctx *c = x;
  ex_heat2d_init(&c->p, c->u, c->v);
}

static rp_graph *heat_graph_parts(hctx *c, uint64_t n, unsigned steps,
                                  unsigned devices, int explicit_halo,
                                  unsigned parts) {
  memset(c, 0, sizeof *c);
  c->p.n = n;
  c->p.steps = steps;
  c->p.devices = devices;
  c->p.explicit_halo = explicit_halo;
  c->u = malloc(n * n * 8);
  c->v = malloc(n * n * 8);
  rp_graph *g;
  TU_OK(NULL, rp_graph_create(&g, explicit_halo ? RP_GRAPH_NO_COHERENCE : 0));
  TU_OK(g, ex_heat2d_record(g, &c->p, c->u, c->v));
  for (rp_buf b = 0; parts && b < 2; b++)
    TU_OK(g, rp_buffer_distribute(g, b, parts, NULL));
  TU_OK(g, rp_graph_end(g));
  return g;
}

static rp_graph *heat_graph(hctx *c, uint64_t n, unsigned steps,
                            unsigned devices, int explicit_halo) {
  return heat_graph_parts(c, n, steps, devices, explicit_halo, 0);
}

Test(starpu, heat2d_over_devices_and_recurrence_set_scalar, .timeout = 120) {
  for (int ex = 0; ex < 2; ex++) {
    hctx c;
    rp_graph *g = heat_graph(&c, 37, 5, 3, ex);
    for (unsigned m = 0; m < 2; m++)
      for (unsigned it = 1; it <= 3; it++)
        same_as_reference(g, h_reset, &c, it, modes[m]);
    rp_graph_destroy(g);
    free(c.u);
    free(c.v);
  }
  ex_recurrence p;
  memset(&p, 0, sizeof p);
  p.rows = 48;
  p.cols = 50;
  p.inner = 3;
  p.rounds = 3;
  p.blocks = 4;
  p.r = 3.6;
  p.c = 0.002;
  size_t bytes = 48 * 50 * 8;
  double *u = malloc(bytes), *e = malloc(bytes);
  rp_graph *g;
  rp_node first;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_recurrence_record(g, &p, u, &first));
  TU_OK(g, rp_graph_end(g));
  for (unsigned m = 0; m < 2; m++) {
    rp_exec *x = mk(g, modes[m]);
    rp_slot v;
    v.f64 = 3.9;
    for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
      rp_node_info ni;
      rp_node_info_get(g, n, &ni);
      if (ni.type == RP_OP_KERNEL)
        cr_assert_eq(rp_exec_set_scalar(x, n, 2, v), RP_OK);
    }
    p.r = 3.6;
    ex_recurrence_init(&p, u);
    cr_assert_eq(rp_exec_run(x, 2), RP_OK);
    p.r = 3.9;
    ex_recurrence_init(&p, e);
    ex_recurrence_check(&p, 2, e);
    cr_assert(memcmp(e, u, bytes) == 0, "%s: set_scalar not applied", modes[m]);
    rp_exec_destroy(x);
  }
  free(u);
  free(e);
  rp_graph_destroy(g);
}

/* Mode "mpi" lowering, counted for ranks that are not there (fake ranks:
 * the code the backend lowers with, without StarPU or MPI), with the rows
 * per rank fixed (weak scaling: the graph grows with the ranks).
 * - every node is lowered by exactly one rank, a copy between ranks by two
 *   (a pack and send, a receive and unpack);
 * - a rank other than 0 lowers, accesses, allocates and registers the same
 *   from 3 ranks to RP_MAX_DEVICES (one device per rank): its work does
 *   not grow with the ranks;
 * - rank 0 owns the host: it lowers the same plus one copy per host copy
 *   with the other end on another rank (the scatter and the gather of the
 *   whole grid, which the graph gives it), exactly (N - 1) times those of
 *   2 ranks;
 * - an image holds only the bytes its accesses touch (its rows and halos),
 *   not the whole buffer. */
Test(starpu, mpi_lowering_is_pruned_and_flat_in_ranks, .timeout = 120) {
  enum { NK = 8, ROWS = 6 };
  unsigned ranks[NK] = {1, 2, 3, 4, 8, 16, 32, RP_MAX_DEVICES};
  rp__starpu_stats mid[NK], last[NK], first[NK];
  uint32_t host_cross[NK];
  for (unsigned k = 0; k < NK; k++) {
    unsigned nr = ranks[k];
    hctx c;
    uint64_t n = ROWS * (uint64_t)nr;
    rp_graph *g = heat_graph(&c, n, 4, nr, 0);
    const rp_backend *ref;
    rp_exec *x;
    cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
    cr_assert_eq(rp_exec_create(&x, g, ref, NULL), RP_OK);
    const rp_plan *p = rp_exec_plan(x);
    uint32_t cross = 0, tasks = 0, sends = 0, recvs = 0, visited = 0;
    host_cross[k] = 0;
    for (uint32_t v = 0; v < p->nnode; v++) {
      const rp_plan_node *nd = &p->node[v];
      if (nd->type == RP_OP_KERNEL || nd->type == RP_OP_HOST)
        continue;
      const rp_plan_access *a = p->acc + nd->acc0;
      int s = a[0].space < 0 ? 0 : a[0].space % (int)nr;
      int d = a[1].space < 0 ? 0 : a[1].space % (int)nr;
      cross += s != d;
      host_cross[k] += s != d && (a[0].space < 0 || a[1].space < 0);
    }
    double most_us = 0;
    for (unsigned r = 0; r < nr; r++) {
      rp__starpu_stats st;
      cr_assert_eq(rp__starpu_count(p, (int)r, (int)nr, &st), RP_OK);
      cr_assert_eq(st.nodes, p->nnode);
      cr_assert_eq(st.scanned, p->nnode);
      tasks += st.tasks;
      sends += st.sends;
      recvs += st.recvs;
      visited += st.visited;
      /* images of their own and staging buffers, one handle each; one
       * per user array */
      cr_assert_eq(st.handles, st.images - st.aliased + st.user_arrays +
                                   st.sends + st.recvs);
      if (r == 0)
        first[k] = st;
      if (r == 1 % nr)
        mid[k] = st;
      if (r == nr - 1)
        last[k] = st;
      if (nr > 1)
        cr_assert_lt(st.tasks, p->nnode,
                     "rank %u of %u lowers the whole "
                     "graph",
                     r, nr);
      /* an image: its rank's rows and at most a halo row each side */
      if (r > 0)
        cr_assert_leq(st.image_bytes, (uint64_t)st.images * (ROWS + 2) * n * 8,
                      "rank %u of %u: %llu image bytes for %u images", r, nr,
                      (unsigned long long)st.image_bytes, st.images);
      if (st.lower_us > most_us)
        most_us = st.lower_us;
    }
    cr_log_info("%u ranks: %u nodes; rank 0 / 1 / last: %u / %u / %u "
                "nodes lowered, %u / %u / %u handles; slowest rank found "
                "its part in %.1f us",
                nr, p->nnode, first[k].visited, mid[k].visited, last[k].visited,
                first[k].handles, mid[k].handles, last[k].handles, most_us);
    cr_assert_eq(tasks, p->nnode + cross, "%u ranks", nr);
    cr_assert_eq(visited, p->nnode + cross, "%u ranks", nr);
    cr_assert_eq(sends, cross);
    cr_assert_eq(recvs, cross);
    rp_exec_destroy(x);
    rp_graph_destroy(g);
    free(c.u);
    free(c.v);
  }
  /* from 3 ranks on: rank 1 is interior, the last rank a boundary rank */
  for (unsigned k = 3; k < NK; k++) {
    const rp__starpu_stats *a = &mid[k], *b = &mid[2];
    cr_assert(a->tasks == b->tasks && a->sends == b->sends &&
                  a->recvs == b->recvs && a->visited == b->visited &&
                  a->accesses == b->accesses && a->images == b->images &&
                  a->handles == b->handles,
              "rank 1 of %u lowers %u nodes (%u tasks, %u accesses, %u "
              "handles), of 3: %u (%u, %u, %u)",
              ranks[k], a->visited, a->tasks, a->accesses, a->handles,
              b->visited, b->tasks, b->accesses, b->handles);
    a = &last[k];
    b = &last[2];
    cr_assert(a->tasks == b->tasks && a->visited == b->visited &&
                  a->accesses == b->accesses && a->handles == b->handles,
              "last rank of %u: %u nodes, of 3: %u", ranks[k], a->visited,
              b->visited);
  }
  /* rank 0: the same work plus its host copies, which grow as N - 1 */
  for (unsigned k = 2; k < NK; k++) {
    cr_assert_eq(host_cross[k], (ranks[k] - 1) * host_cross[1]);
    cr_assert_eq(first[k].visited - host_cross[k],
                 first[1].visited - host_cross[1], "rank 0 of %u ranks",
                 ranks[k]);
    cr_assert_eq(first[k].tasks - host_cross[k],
                 first[1].tasks - host_cross[1]);
  }
}
#endif

/* A plan's copies between two devices of different ranks (the halos);
 * and in *host_msgs the transfers between ranks that its copies from and
 * to the host need when part q of every buffer (n rows, nr parts: rows
 * [bounds[q], bounds[q + 1]), even parts when bounds is NULL) lives on
 * rank q and device d on rank d: one per other rank whose rows a copy
 * moves. */
static uint32_t cross_copies(const rp_plan *p, unsigned nr, uint64_t n,
                             const uint64_t *bounds, uint32_t *host_msgs) {
  uint32_t c = 0;
  *host_msgs = 0;
  for (uint32_t v = 0; v < p->nnode; v++) {
    const rp_plan_node *nd = &p->node[v];
    if (nd->type == RP_OP_KERNEL || nd->type == RP_OP_HOST)
      continue;
    const rp_plan_access *a = p->acc + nd->acc0;
    if (a[0].space >= 0 && a[1].space >= 0) {
      c += a[0].space % (int)nr != a[1].space % (int)nr;
      continue;
    }
    int dev = a[0].space >= 0 ? a[0].space : a[1].space;
    uint64_t rb = n * 8, r0 = a[1].offset / rb;
    uint64_t r1 = (a[1].offset + a[1].bytes - 1) / rb + 1;
    for (unsigned q = 0; q < nr; q++) {
      uint64_t q0 = bounds ? bounds[q] : n * q / nr;
      uint64_t q1 = bounds ? bounds[q + 1] : n * (q + 1) / nr;
      *host_msgs += (int)q != dev % (int)nr && q0 < q1 && q0 < r1 && r0 < q1;
    }
  }
  return c;
}

/* Mode "mpi" with the heat grids distributed over the ranks, one part per
 * device (fake ranks again, 6 rows per rank): a copy from or to the host
 * stays on its rank but for the halo rows the first step reads from the
 * host (its neighbours' rows: a transfer each), so the messages are the
 * halos between devices and those, and rank 0 lowers what the last rank
 * lowers, the same from 3 ranks to 62: nothing grows with the ranks, and
 * nothing goes through rank 0. Each rank keeps its images in its own
 * array (no image memory of its own, one handle per array). */
Test(starpu, mpi_distributed_rows_stay_on_their_rank, .timeout = 120) {
  enum { NK = 7, ROWS = 6 };
  unsigned ranks[NK] = {1, 2, 3, 4, 8, 16, RP_MAX_DEVICES};
  rp__starpu_stats first[NK], last[NK];
  for (unsigned k = 0; k < NK; k++) {
    unsigned nr = ranks[k];
    hctx c;
    uint64_t n = ROWS * (uint64_t)nr;
    rp_graph *g = heat_graph_parts(&c, n, 4, nr, 0, nr);
    const rp_backend *ref;
    rp_exec *x;
    cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
    cr_assert_eq(rp_exec_create(&x, g, ref, NULL), RP_OK);
    const rp_plan *p = rp_exec_plan(x);
    uint32_t host_msgs, cross = cross_copies(p, nr, n, NULL, &host_msgs);
    uint32_t sends = 0, recvs = 0;
    for (unsigned r = 0; r < nr; r++) {
      rp__starpu_stats st;
      cr_assert_eq(rp__starpu_count(p, (int)r, (int)nr, &st), RP_OK);
      sends += st.sends;
      recvs += st.recvs;
      cr_assert_eq(st.image_bytes, 0, "rank %u of %u", r, nr);
      cr_assert_eq(st.aliased, st.images, "rank %u of %u", r, nr);
      cr_assert_eq(st.user_arrays, 2);
      cr_assert_eq(st.handles, 2 + st.sends + st.recvs);
      if (r == 0)
        first[k] = st;
      if (r == nr - 1)
        last[k] = st;
    }
    cr_assert_eq(sends, cross + host_msgs,
                 "%u ranks: %u sends, %u halo "
                 "copies, %u host rows of other ranks",
                 nr, sends, cross, host_msgs);
    cr_assert_eq(recvs, sends);
    rp_exec_destroy(x);
    rp_graph_destroy(g);
    free(c.u);
    free(c.v);
  }
  for (unsigned k = 2; k < NK; k++) {
    cr_assert(last[k].visited == last[2].visited &&
                  last[k].tasks == last[2].tasks &&
                  last[k].sends == last[2].sends,
              "last rank of %u: %u nodes, of 3: %u", ranks[k], last[k].visited,
              last[2].visited);
    cr_assert(first[k].visited == first[2].visited &&
                  first[k].tasks == first[2].tasks &&
                  first[k].accesses == first[2].accesses,
              "rank 0 of %u: %u nodes, of 3: %u", ranks[k], first[k].visited,
              first[2].visited);
  }
}

/* A host task runs on the rank holding the rows it touches; rows of
 * several ranks are refused (RP_ENOTSUP) in mode "mpi", not in one
 * process. Parts that do not match the devices cut a copy into pieces:
 * one local, the others messages, and a rank with no rows (part 1 empty)
 * takes part in no copy from or to the host. */
Test(starpu, mpi_distributed_host_tasks_and_pieces, .timeout = 60) {
  uint8_t a[8 * 16], h[8];
  rp_graph *g;
  rp_buf A, H;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register_2d(g, "A", a, 8, 16, 1, &A));
  TU_OK(g, rp_buffer_register(g, "H", h, 8, &H));
  /* device 1 bumps rows [4, 8); a host task reads them; sync */
  rp_arg args[2] = {rp_arg_buf(rp_box2(A, 4, 8, 0, 16)), rp_arg_i64(64)};
  TU_OK(g,
        rp_record_kernel(g, &tu_bump, 1, rp_dims3(64, 1, 1), args, NULL, NULL));
  static tu_host_arg ha = {64, 64};
  rp_access acc = {rp_box2(A, 4, 8, 0, 16), RP_INOUT};
  TU_OK(g, rp_record_host(g, tu_host_bump, &ha, &acc, 1, NULL, NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(A), NULL));
  TU_OK(g, rp_buffer_distribute(g, A, 2, NULL));
  TU_OK(g, rp_graph_end(g));
  const rp_backend *ref;
  rp_exec *x;
  cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
  cr_assert_eq(rp_exec_create(&x, g, ref, NULL), RP_OK);
  const rp_plan *p = rp_exec_plan(x);
  rp__starpu_stats s0, s1;
  /* rows [4, 8) are part 1's, rank 1's: the kernel, the copy home and the
   * host task all run there; rank 0 has nothing to do */
  cr_assert_eq(rp__starpu_count(p, 0, 2, &s0), RP_OK);
  cr_assert_eq(rp__starpu_count(p, 1, 2, &s1), RP_OK);
  cr_assert_eq(s0.tasks, 0);
  cr_assert_eq(s1.tasks, p->nnode);
  cr_assert_eq(s0.sends + s0.recvs + s1.sends + s1.recvs, 0);
  rp_exec_destroy(x);
  rp_graph_destroy(g);

  /* the same with the host task over the whole array: refused over two
   * ranks, fine over one */
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register_2d(g, "A", a, 8, 16, 1, &A));
  TU_OK(g,
        rp_record_kernel(g, &tu_bump, 1, rp_dims3(64, 1, 1), args, NULL, NULL));
  static tu_host_arg hall = {0, 128};
  acc.region = rp_whole(A);
  TU_OK(g, rp_record_host(g, tu_host_bump, &hall, &acc, 1, NULL, NULL));
  TU_OK(g, rp_buffer_distribute(g, A, 2, NULL));
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp_exec_create(&x, g, ref, NULL), RP_OK);
  p = rp_exec_plan(x);
  cr_assert_eq(rp__starpu_count(p, 0, 2, &s0), RP_ENOTSUP);
  cr_assert_eq(rp__starpu_count(p, 0, 1, &s0), RP_OK);
  cr_assert_eq(s0.tasks, p->nnode);
  rp_exec_destroy(x);
  rp_graph_destroy(g);

  /* heat over 4 devices and 4 ranks, grids in 4 parts with part 1 empty
   * (its rows are part 2's): device 1's copies from and to the host are
   * messages with rank 2, cut where part 0's rows end; rank 1 holds no
   * host rows */
  hctx c;
  g = NULL;
  memset(&c, 0, sizeof c);
  c.p.n = 24;
  c.p.steps = 3;
  c.p.devices = 4;
  c.u = malloc(24 * 24 * 8);
  c.v = malloc(24 * 24 * 8);
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, ex_heat2d_record(g, &c.p, c.u, c.v));
  uint64_t b[5] = {0, 6, 6, 18, 24};
  for (rp_buf q = 0; q < 2; q++)
    TU_OK(g, rp_buffer_distribute(g, q, 4, b));
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp_exec_create(&x, g, ref, NULL), RP_OK);
  p = rp_exec_plan(x);
  uint32_t pieces = 0, sends = 0, recvs = 0;
  for (int r = 0; r < 4; r++) {
    rp__starpu_stats st;
    cr_assert_eq(rp__starpu_count(p, r, 4, &st), RP_OK);
    pieces += st.pieces;
    sends += st.sends;
    recvs += st.recvs;
    if (r == 1) /* no rows here: every piece a message, none local */
      cr_assert_eq(st.pieces, st.sends + st.recvs);
  }
  cr_assert_eq(sends, recvs);
  /* the halos, and one transfer per other rank whose rows a host copy
   * moves: device 1's all cross (to rank 2) */
  uint32_t host_msgs, halos = cross_copies(p, 4, 24, b, &host_msgs);
  cr_assert_eq(sends, halos + host_msgs, "%u sends, %u halos, %u", sends, halos,
               host_msgs);
  cr_assert_gt(pieces, sends); /* and local pieces */
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  free(c.u);
  free(c.v);
}
