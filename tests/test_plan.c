/* The execution plan: exact plans on a test backend, the coherence
 * warnings, asynchronous launch with per-buffer wait, and the differential
 * test of every backend present against the sequential reference over
 * random programs, 1-3 replays, with and without a final host sync, with a
 * rebind between replays. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "plan/plan_kernels.h"
#include "reprise/backend.h"
#include "util.h"

/* ---- a backend that only keeps its plan, to look at it ---------------- */

static const rp_plan *seen;
static rp_status tb_inst(rp_exec *x, const rp_plan *p, void **state) {
  seen = p;
  *state = NULL;
  return RP_OK;
}
static rp_status tb_launch(void *s, unsigned n) { return RP_OK; }
static rp_status tb_wait(void *s) { return RP_OK; }
static void tb_destroy(void *s) {}
static rp_backend test_cpu = {.abi = RP_BACKEND_ABI,
                              .name = "test-cpu",
                              .owns = RP_DEVICE_CPU,
                              .instantiate = tb_inst,
                              .launch = tb_launch,
                              .wait = tb_wait,
                              .destroy = tb_destroy};
static rp_backend test_gpu = {.abi = RP_BACKEND_ABI,
                              .name = "test-gpu",
                              .owns = RP_DEVICE_CUDA,
                              .instantiate = tb_inst,
                              .launch = tb_launch,
                              .wait = tb_wait,
                              .destroy = tb_destroy};

static uint32_t node_of_name(const rp_plan *p, const char *name) {
  for (uint32_t v = 0; v < p->nnode; v++) {
    rp_node_info ni;
    rp_node_info_get(p->graph, p->node[v].op, &ni);
    if (!strcmp(ni.name, name))
      return v;
  }
  return RP_NONE;
}

static int has_succ(const rp_plan *p, uint32_t a, uint32_t b) {
  for (uint32_t i = 0; i < p->node[a].nsucc; i++)
    if (p->succ[p->node[a].succ0 + i] == b)
      return 1;
  return 0;
}

/* Host tasks of the tests. */
typedef struct hk {
  int kind; /* 0 bump (inout a), 1 mix (in a, inout b), 2 b=a+1 */
  uint64_t oa, ob, len;
} hk;

static void host_fn(void *user, void *const *ptrs) {
  const hk *h = user;
  uint8_t *a = ptrs[0];
  for (uint64_t i = 0; i < h->len; i++) {
    if (h->kind == 0) {
      a[h->oa + i] = (uint8_t)(5 * a[h->oa + i] + 7);
    } else {
      uint8_t *b = ptrs[1];
      b[h->ob + i] = h->kind == 1
                         ? (uint8_t)(3 * b[h->ob + i] + a[h->oa + i] + 1)
                         : (uint8_t)(a[h->oa + i] + 1);
    }
  }
}

/* The smallest case: host task B = A + 1, then a kernel
 * A = 5A + 7 on device 0, no sync. */
static rp_graph *two_ops(uint8_t *A, uint8_t *B, hk *h, unsigned flags) {
  rp_graph *g;
  rp_buf a, b;
  cr_assert_eq(rp_graph_create(&g, flags), RP_OK);
  TU_OK(g, rp_buffer_register(g, "A", A, 16, &a));
  TU_OK(g, rp_buffer_register(g, "B", B, 16, &b));
  *h = (hk){2, 0, 0, 16};
  rp_access acc[2] = {{rp_whole(a), RP_IN}, {rp_whole(b), RP_INOUT}};
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "B=A+1");
  TU_OK(g, rp_record_host(g, host_fn, h, acc, 2, &o, NULL));
  rp_arg args[2] = {rp_arg_buf(rp_whole(a)), rp_arg_i64(0)};
  o.name = "A=5A+7";
  TU_OK(g,
        rp_record_kernel(g, &pk_bump, 0, rp_dims3(16, 1, 1), args, &o, NULL));
  return g;
}

Test(plan, visible_sharing_is_refused) {
  uint8_t A[16], B[16];
  hk h;
  rp_graph *g = two_ops(A, B, &h, 0);
  TU_OK(g, rp_graph_end(g));
  /* The kernel's value of A never reaches the host: a warning. */
  cr_assert_eq(rp_graph_num_warnings(g), 1);
  cr_assert(strstr(rp_graph_warning(g, 0), "buffer \"A\"") &&
                strstr(rp_graph_warning(g, 0), "never reach the host"),
            "%s", rp_graph_warning(g, 0));
  rp_exec *x;
  cr_assert_eq(rp_exec_create(&x, g, &test_cpu, NULL), RP_OK, "%s",
               rp_last_error());
  const rp_plan *p = rp_exec_plan(x);
  cr_assert_eq(p, seen);
  /* A: the host and device 0 cannot share (the host array would see the
   * kernel's writes); B is used on the host only. */
  cr_assert_eq(p->nimage, 3);
  cr_assert_eq(p->nnode, 3, "moveto A is a real copy");
  cr_assert_eq(p->nelided, 0);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(plan, shared_images_elide_copies_and_order_spaces) {
  /* K1 writes A on device 0, sync, host task H reads A, K2 writes A on
   * device 0, sync: the host and device 0 may share A's memory, both syncs
   * vanish, and H -> K2 (write after read across spaces) is added. */
  uint8_t A[16] = {0}, C[16] = {0};
  rp_graph *g;
  rp_buf a, c;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, rp_buffer_register(g, "A", A, 16, &a));
  TU_OK(g, rp_buffer_register(g, "C", C, 16, &c));
  rp_arg set[4] = {rp_arg_buf(rp_whole(c)), rp_arg_buf(rp_whole(a)),
                   rp_arg_i64(0), rp_arg_i64(0)};
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "K1");
  TU_OK(g, rp_record_kernel(g, &pk_set, 0, rp_dims3(16, 1, 1), set, &o, NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(a), NULL));
  hk h = {2, 0, 0, 16};
  rp_access acc[2] = {{rp_whole(a), RP_IN}, {rp_whole(c), RP_INOUT}};
  o.name = "H";
  TU_OK(g, rp_record_host(g, host_fn, &h, acc, 2, &o, NULL));
  o.name = "K2";
  TU_OK(g, rp_record_kernel(g, &pk_set, 0, rp_dims3(16, 1, 1), set, &o, NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(a), NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(c), NULL));
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp_graph_num_warnings(g), 0, "%s", rp_graph_warning(g, 0));
  rp_exec *x;
  cr_assert_eq(rp_exec_create(&x, g, &test_cpu, NULL), RP_OK, "%s",
               rp_last_error());
  const rp_plan *p = rp_exec_plan(x);
  cr_assert_eq(p->nimage, 2, "one image each for A and C");
  cr_assert_eq(p->nnode, 3, "K1, H, K2; every copy elided");
  uint32_t k1 = node_of_name(p, "K1"), hh = node_of_name(p, "H"),
           k2 = node_of_name(p, "K2");
  cr_assert(k1 != RP_NONE && hh != RP_NONE && k2 != RP_NONE);
  cr_assert(has_succ(p, k1, hh), "K1 -> H through the elided sync");
  cr_assert(has_succ(p, hh, k2), "H -> K2: sharing makes it a conflict");
  for (uint32_t i = 0; i < p->nimage; i++)
    cr_assert(p->image[i].flags & RP_IMAGE_USER);
  /* Host writers of A: K1 and K2 (they write its user array now). */
  cr_assert_eq(p->hw_off[a + 1] - p->hw_off[a], 2);
  rp_exec_destroy(x);
  /* The reference shares nothing: every copy is a node. */
  cr_assert_eq(rp_exec_create(&x, g, NULL, NULL) == RP_OK || rp_last_error()[0],
               1);
  rp_exec_destroy(x);
  const rp_backend *ref;
  cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
  cr_assert_eq(rp_exec_create(&x, g, ref, NULL), RP_OK);
  cr_assert_eq(rp_exec_plan(x)->nnode, rp_graph_num_nodes(g));
  cr_assert_eq(rp_exec_plan(x)->nelided, 0);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(plan, device_kinds) {
  /* On a GPU backend, a CPU-kind device runs its kernels on the host over
   * host memory; device 0 keeps device memory. */
  uint8_t A[16] = {0};
  rp_graph *g;
  rp_buf a;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, rp_buffer_register(g, "A", A, 16, &a));
  TU_OK(g, rp_graph_set_device_kind(g, 1, RP_DEVICE_CPU));
  cr_assert_eq(rp_graph_set_device_kind(g, 1, (rp_device_kind)9), RP_EINVAL);
  cr_assert_eq(rp_graph_device_kind(g, 1), RP_DEVICE_CPU);
  rp_arg args[2] = {rp_arg_buf(rp_bytes(a, 0, 8)), rp_arg_i64(0)};
  TU_OK(g,
        rp_record_kernel(g, &pk_bump, 0, rp_dims3(8, 1, 1), args, NULL, NULL));
  args[0] = rp_arg_buf(rp_bytes(a, 8, 8));
  args[1] = rp_arg_i64(8);
  TU_OK(g,
        rp_record_kernel(g, &pk_bump, 1, rp_dims3(8, 1, 1), args, NULL, NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(a), NULL));
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp_graph_set_device_kind(g, 1, RP_DEVICE_CPU), RP_ESTATE);
  rp_exec *x;
  cr_assert_eq(rp_exec_create(&x, g, &test_gpu, NULL), RP_OK, "%s",
               rp_last_error());
  const rp_plan *p = rp_exec_plan(x);
  cr_assert_eq(p->ndev, 2);
  cr_assert(p->dev[0].native && !p->dev[0].host_memory);
  cr_assert(!p->dev[1].native && p->dev[1].host_memory);
  cr_assert_eq(p->dev[1].kind, RP_DEVICE_CPU);
  for (uint32_t v = 0; v < p->nnode; v++)
    if (p->node[v].type == RP_OP_KERNEL)
      cr_assert_eq(!!(p->node[v].flags & RP_PLAN_ON_HOST),
                   p->node[v].device == 1);
  /* Device 1's image of A shares the host's; device 0's is its own. */
  uint32_t shared = 0, dev0 = 0;
  for (uint32_t i = 0; i < p->nimage; i++) {
    if (p->image[i].spaces == ((1ull << 63) | 2))
      shared++;
    if (p->image[i].spaces == 1) {
      dev0++;
      cr_assert_eq(p->image[i].lo, 0);
      cr_assert_eq(p->image[i].hi, 8, "device 0 touches bytes [0, 8)");
      cr_assert(!(p->image[i].flags & RP_IMAGE_HOST_MEMORY));
      cr_assert(p->image[i].flags & RP_IMAGE_ZERO);
    }
  }
  cr_assert_eq(shared, 1);
  cr_assert_eq(dev0, 1);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(plan, coherence_warnings_and_strict) {
  uint8_t A[16] = {0};
  rp_graph *g;
  rp_buf a;
  /* Coherence off: the kernel reads device 0's image, never copied in. */
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE | RP_GRAPH_STRICT),
               RP_OK);
  TU_OK(g, rp_buffer_register(g, "A", A, 16, &a));
  rp_arg args[2] = {rp_arg_buf(rp_whole(a)), rp_arg_i64(0)};
  rp_op_opts o = RP_OP_OPTS_WITH(.name = "k");
  TU_OK(g,
        rp_record_kernel(g, &pk_bump, 0, rp_dims3(16, 1, 1), args, &o, NULL));
  cr_assert_eq(rp_graph_end(g), RP_ECOHERENCE);
  cr_assert(strstr(rp_graph_error(g), "op 0 \"k\" reads bytes [0, 16) of "
                                      "buffer \"A\" on device 0"),
            "%s", rp_graph_error(g));
  cr_assert_eq(rp_graph_ended(g), 0, "a refused end leaves it recording");
  cr_assert_eq(rp_graph_num_warnings(g), 2, "zeros read, never home");
  /* Mend it: bring A home; the read of zeros stays a warning. */
  TU_OK(g, rp_record_copy_to_host(g, rp_whole(a), 0, NULL, NULL));
  cr_assert_eq(rp_graph_end(g), RP_ECOHERENCE);
  cr_assert_eq(rp_graph_num_warnings(g), 1);
  rp_graph_destroy(g);
  /* The same program with a copy in first: clean. */
  cr_assert_eq(rp_graph_create(&g, RP_GRAPH_NO_COHERENCE | RP_GRAPH_STRICT),
               RP_OK);
  TU_OK(g, rp_buffer_register(g, "A", A, 16, &a));
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(a), 0, NULL, NULL));
  TU_OK(g,
        rp_record_kernel(g, &pk_bump, 0, rp_dims3(16, 1, 1), args, &o, NULL));
  TU_OK(g, rp_record_copy_to_host(g, rp_whole(a), 0, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  cr_assert_eq(rp_graph_num_warnings(g), 0);
  rp_graph_destroy(g);
}

/* ---- a plan-following CPU backend that shares images ------------------- *
 * It runs the plan's nodes one at a time in a random order that respects
 * the plan's edges (a new order every replay), so the differential test
 * checks the plan itself: sharing decisions, elided copies, contracted and
 * added edges. */

typedef struct sq {
  rp_exec *x;
  const rp_plan *p;
  void **img;
  uint32_t *cnt, *ready;
  uint64_t rng;
} sq;

static void *sq_image(sq *q, uint32_t i) {
  const rp_plan_image *im = &q->p->image[i];
  return im->flags & RP_IMAGE_USER ? rp_exec_host(q->x)[im->buf]
                                   : (char *)q->img[i] - im->lo;
}

static void sq_destroy(void *state) {
  sq *q = state;
  for (uint32_t i = 0; i < q->p->nimage; i++)
    free(q->img[i]);
  free(q->img);
  free(q->cnt);
  free(q->ready);
  free(q);
}

static rp_status sq_inst(rp_exec *x, const rp_plan *p, void **state) {
  sq *q = calloc(1, sizeof *q);
  q->x = x;
  q->p = p;
  q->rng = 88172645463325252ull;
  q->img = calloc(p->nimage + 1, sizeof *q->img);
  q->cnt = calloc(p->nnode + 1, sizeof *q->cnt);
  q->ready = calloc(p->nnode + 1, sizeof *q->ready);
  for (uint32_t i = 0; i < p->nimage; i++)
    if (!(p->image[i].flags & RP_IMAGE_USER)) {
      /* Only the bytes the plan says are touched (ASan checks it). */
      cr_assert(p->image[i].lo <= p->image[i].hi &&
                p->image[i].hi <= p->image[i].bytes);
      q->img[i] = calloc(1, p->image[i].hi - p->image[i].lo + 1);
    }
  *state = q;
  return RP_OK;
}

static void *sq_addr(void *ctx, uint32_t i) { return sq_image(ctx, i); }

static void sq_node(sq *q, uint32_t v) {
  void *ptrs[8];
  cr_assert_eq(rp_plan_run_on_host(q->x, v, sq_addr, q, ptrs), RP_OK);
}

static rp_status sq_launch(void *state, unsigned iterations) {
  sq *q = state;
  const rp_plan *p = q->p;
  for (unsigned it = 0; it < iterations; it++) {
    uint32_t nr = 0;
    for (uint32_t v = 0; v < p->nnode; v++)
      if (!(q->cnt[v] = p->node[v].npred))
        q->ready[nr++] = v;
    for (uint32_t done = 0; done < p->nnode; done++) {
      cr_assert(nr > 0, "the plan's edges form a cycle");
      uint32_t k = (uint32_t)(tu_rand(&q->rng) % nr);
      uint32_t v = q->ready[k];
      q->ready[k] = q->ready[--nr];
      sq_node(q, v);
      for (uint32_t i = 0; i < p->node[v].nsucc; i++) {
        uint32_t w = p->succ[p->node[v].succ0 + i];
        if (!--q->cnt[w])
          q->ready[nr++] = w;
      }
    }
  }
  return RP_OK;
}

static rp_status sq_rebind(void *state, rp_buf b) { return RP_OK; }

static rp_backend test_seq = {.abi = RP_BACKEND_ABI,
                              .name = "test-shuffled",
                              .owns = RP_DEVICE_CPU,
                              .flags = RP_BACKEND_BLOCKING_LAUNCH,
                              .instantiate = sq_inst,
                              .launch = sq_launch,
                              .wait = tb_wait,
                              .rebind = sq_rebind,
                              .destroy = sq_destroy};

/* ---- every backend present ----------------------------------------------- */

/* Backends to compare with the reference: built, and with a device. */
static unsigned backends(const rp_backend **out, unsigned max) {
  unsigned n = 0;
  out[n++] = &test_seq;
  for (const rp_backend *const *b = rp_backend_list(); *b && n < max; b++) {
    if (!strcmp(rp_backend_name(*b), "reference"))
      continue;
    if (rp_backend_probe(*b) != RP_OK) {
      cr_log_info("backend %s: no device here, not compared",
                  rp_backend_name(*b));
      continue;
    }
    out[n++] = *b;
  }
  return n;
}

Test(plan, two_replays_same_as_reference_everywhere) {
  const rp_backend *be[8];
  unsigned nb = backends(be, 8);
  const rp_backend *ref;
  cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
  for (unsigned i = 0; i <= nb; i++) {
    const rp_backend *b = i < nb ? be[i] : ref;
    uint8_t A[16], B[16];
    for (int k = 0; k < 16; k++)
      A[k] = (uint8_t)k, B[k] = 0;
    hk h;
    rp_graph *g = two_ops(A, B, &h, 0);
    TU_OK(g, rp_graph_end(g));
    rp_exec *x;
    rp_status s = rp_exec_create(&x, g, b, NULL);
    if (s != RP_OK) {
      cr_log_info("%s: %s", rp_backend_name(b), rp_last_error());
      rp_graph_destroy(g);
      continue;
    }
    cr_assert_eq(rp_exec_run(x, 2), RP_OK, "%s", rp_exec_error(x));
    /* Program order, twice: A stays home (never synced), B = A + 1. */
    for (int k = 0; k < 16; k++) {
      cr_assert_eq(A[k], k, "%s: A[%d]", rp_backend_name(b), k);
      cr_assert_eq(B[k], k + 1, "%s: B[%d]", rp_backend_name(b), k);
    }
    rp_exec_destroy(x);
    rp_graph_destroy(g);
  }
}

/* A host task that blocks until the test releases it (or 10 s pass). */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_open, gate_timed_out, gate_entered;

static void gate_fn(void *user, void *const *ptrs) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  pthread_mutex_lock(&gate_mu);
  gate_entered = 1;
  pthread_cond_broadcast(&gate_cv);
  while (!gate_open && !gate_timed_out)
    if (pthread_cond_timedwait(&gate_cv, &gate_mu, &until))
      gate_timed_out = 1;
  pthread_mutex_unlock(&gate_mu);
  ((uint8_t *)ptrs[0])[0] = 42;
}

Test(plan, launch_returns_and_wait_buffer_sees_early_results) {
  const rp_backend *be[8];
  unsigned nb = backends(be, 8);
  const rp_backend *ref;
  cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
  be[nb++] = ref;
  for (unsigned i = 0; i < nb; i++) {
    if (be[i] == &test_seq || !be[i]->wait_buffer) {
      cr_log_info("%s: no per-buffer wait", rp_backend_name(be[i]));
      continue;
    }
    uint8_t A[16] = {0}, C[16] = {0};
    rp_graph *g;
    rp_buf a, c;
    cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
    TU_OK(g, rp_buffer_register(g, "A", A, 16, &a));
    TU_OK(g, rp_buffer_register(g, "C", C, 16, &c));
    hk h = {0, 0, 0, 16};
    rp_access ac = {rp_whole(a), RP_INOUT};
    TU_OK(g, rp_record_host(g, host_fn, &h, &ac, 1, NULL, NULL));
    rp_access gc = {rp_whole(c), RP_INOUT};
    TU_OK(g, rp_record_host(g, gate_fn, NULL, &gc, 1, NULL, NULL));
    TU_OK(g, rp_graph_end(g));
    rp_exec *x;
    cr_assert_eq(rp_exec_create(&x, g, be[i], NULL), RP_OK, "%s",
                 rp_last_error());
    gate_open = gate_timed_out = gate_entered = 0;
    cr_assert_eq(rp_exec_launch(x, 1), RP_OK);
    cr_assert_eq(rp_exec_wait_buffer(x, a), RP_OK);
    for (int k = 0; k < 16; k++)
      cr_assert_eq(A[k], 7, "%s: A ready before the gate opens",
                   rp_backend_name(be[i]));
    pthread_mutex_lock(&gate_mu);
    cr_assert_eq(gate_timed_out, 0, "%s: launch or wait_buffer blocked",
                 rp_backend_name(be[i]));
    gate_open = 1;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
    cr_assert_eq(rp_exec_wait(x), RP_OK);
    cr_assert_eq(C[0], 42);
    cr_assert_eq(rp_exec_wait_buffer(x, c), RP_OK, "nothing in flight");
    rp_exec_destroy(x);
    rp_graph_destroy(g);
  }
}

/* ---- random programs ----------------------------------------------------- */

#define NBUF 5 /* 3 user 1-d (64 B), 1 user 8 x 8, 1 internal */
#define BSZ 64
#define MAXOPS 40

typedef struct prog {
  rp_graph *g;
  uint8_t rec[NBUF][BSZ]; /* arrays given when recording */
  hk h[MAXOPS];
  unsigned nuser;
  int sync, mixed, coherent;
} prog;

static void fill(uint8_t *p, uint64_t seed) {
  for (int i = 0; i < BSZ; i++)
    p[i] = (uint8_t)tu_rand(&seed);
}

/* A random run [off, off + len) of a buffer, as a region: byte ranges on
 * 1-d buffers, whole rows on the 2-d one. */
static rp_region run_of(uint64_t *s, rp_buf b, uint64_t len_max, uint64_t *off,
                        uint64_t *len) {
  if (b == 3) {
    uint64_t r0 = tu_rand(s) % 8, r1 = r0 + 1 + tu_rand(s) % (8 - r0);
    if ((r1 - r0) * 8 > len_max)
      r1 = r0 + len_max / 8;
    *off = r0 * 8;
    *len = (r1 - r0) * 8;
    return rp_box2(b, r0, r1, 0, 8);
  }
  *len = 1 + tu_rand(s) % len_max;
  *off = tu_rand(s) % (BSZ - *len + 1);
  return rp_bytes(b, *off, *len);
}

/* Any region, for copies: boxes of the 2-d buffer may be partial rows. */
static rp_region any_region(uint64_t *s, rp_buf b) {
  if (b == 3 && tu_rand(s) % 2) {
    uint64_t r0 = tu_rand(s) % 8, r1 = r0 + 1 + tu_rand(s) % (8 - r0);
    uint64_t c0 = tu_rand(s) % 8, c1 = c0 + 1 + tu_rand(s) % (8 - c0);
    return rp_box2(b, r0, r1, c0, c1);
  }
  uint64_t off, len;
  return run_of(s, b, BSZ, &off, &len);
}

static void prog_make(prog *P, uint64_t seed) {
  uint64_t s = seed * 2654435761u + 1;
  memset(P, 0, sizeof *P);
  unsigned ndev = 1 + tu_rand(&s) % 3;
  P->coherent = tu_rand(&s) % 4 != 0;
  P->sync = tu_rand(&s) % 2;
  P->mixed = ndev >= 2 && tu_rand(&s) % 3 == 0;
  cr_assert_eq(rp_graph_create(&P->g, P->coherent ? 0 : RP_GRAPH_NO_COHERENCE),
               RP_OK);
  rp_graph *g = P->g;
  char nm[8];
  for (unsigned b = 0; b < 3; b++) {
    fill(P->rec[b], seed * 7 + b);
    snprintf(nm, sizeof nm, "u%u", b);
    TU_OK(g, rp_buffer_register(g, nm, P->rec[b], BSZ, NULL));
  }
  fill(P->rec[3], seed * 7 + 3);
  TU_OK(g, rp_buffer_register_2d(g, "m", P->rec[3], 8, 8, 1, NULL));
  rp_buffer_desc d = {"tmp", NULL, BSZ, 1, 0, {0, 0, 0}};
  TU_OK(g, rp_buffer_add(g, &d, NULL));
  P->nuser = 4;
  if (P->mixed)
    TU_OK(g, rp_graph_set_device_kind(g, 1, RP_DEVICE_CPU));
  unsigned nops = 8 + tu_rand(&s) % (MAXOPS - 8);
  for (unsigned i = 0; i < nops; i++) {
    unsigned what = tu_rand(&s) % 10;
    int dev = (int)(tu_rand(&s) % ndev);
    if (what < 5) {
      /* A kernel. */
      rp_buf a = tu_rand(&s) % NBUF, b = (a + 1 + tu_rand(&s) % 4) % NBUF;
      uint64_t oa, la, ob, lb;
      rp_region ra = run_of(&s, a, BSZ, &oa, &la);
      rp_region rb = run_of(&s, b, la, &ob, &lb);
      if (!lb || (lb < la && a == 3 && lb % 8))
        continue;
      if (lb < la)
        ra = a == 3 ? rp_box2(a, oa / 8, (oa + lb) / 8, 0, 8)
                    : rp_bytes(a, oa, lb);
      unsigned k = tu_rand(&s) % 3;
      if (k == 2) {
        rp_arg args[2] = {rp_arg_buf(rb), rp_arg_i64((int64_t)ob)};
        TU_OK(g, rp_record_kernel(g, &pk_bump, dev, rp_dims3(lb, 1, 1), args,
                                  NULL, NULL));
      } else {
        rp_arg args[4] = {rp_arg_buf(ra), rp_arg_buf(rb),
                          rp_arg_i64((int64_t)oa), rp_arg_i64((int64_t)ob)};
        TU_OK(g, rp_record_kernel(g, k ? &pk_set : &pk_mix, dev,
                                  rp_dims3(lb, 1, 1), args, NULL, NULL));
      }
    } else if (what < 7) {
      /* A host task over user buffers. */
      rp_buf a = tu_rand(&s) % P->nuser, b = (a + 1) % P->nuser;
      uint64_t oa, la, ob, lb;
      rp_region ra = run_of(&s, a, BSZ, &oa, &la);
      rp_region rb = run_of(&s, b, la, &ob, &lb);
      if (!lb || (lb < la && a == 3 && lb % 8))
        continue;
      if (lb < la)
        ra = a == 3 ? rp_box2(a, oa / 8, (oa + lb) / 8, 0, 8)
                    : rp_bytes(a, oa, lb);
      hk *h = &P->h[i];
      *h = (hk){(int)(tu_rand(&s) % 2), oa, ob, lb};
      rp_access acc[2] = {{h->kind ? ra : rb, h->kind ? RP_IN : RP_INOUT},
                          {rb, RP_INOUT}};
      if (!h->kind)
        h->oa = ob;
      TU_OK(g, rp_record_host(g, host_fn, h, acc, h->kind ? 2 : 1, NULL, NULL));
    } else if (what < 9) {
      /* An explicit copy. */
      rp_buf b = tu_rand(&s) % NBUF;
      rp_region r = any_region(&s, b);
      unsigned c = tu_rand(&s) % 3;
      if (b == 4 || (c == 2 && ndev >= 2)) {
        int dst = (int)(tu_rand(&s) % ndev);
        if (dst != dev)
          TU_OK(g, rp_record_copy_peer(g, r, dev, dst, NULL, NULL));
      } else if (c == 0) {
        TU_OK(g, rp_record_copy_to_device(g, r, dev, NULL, NULL));
      } else {
        TU_OK(g, rp_record_copy_to_host(g, r, dev, NULL, NULL));
      }
    } else if (P->coherent) {
      rp_buf b = tu_rand(&s) % P->nuser;
      TU_OK(g, rp_record_sync_host(g, any_region(&s, b), NULL));
    }
  }
  if (P->sync && P->coherent)
    for (rp_buf b = 0; b < P->nuser; b++)
      TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
  TU_OK(g, rp_graph_end(g));
}

/* Replays of one program on one backend: the user arrays after each of
 * `reps` replays (out[r][b]); a rebind of buffer 0 to new contents after
 * the first replay when asked. Returns 0 when the backend refuses it. */
/* With `reshape` > 0 the exec reshapes the program's copies with that
 * threshold, and *reshaped says whether it changed any. */
static int prog_run_shaped(prog *P, const rp_backend *be, unsigned reps,
                           int rebind, int batch, uint8_t out[3][NBUF][BSZ],
                           uint64_t seed, size_t reshape, int *reshaped) {
  rp_exec *x;
  rp_exec_opts eo = RP_EXEC_OPTS_INIT;
  eo.device_fold = 1; /* cuda: up to 3 logical devices on fewer GPUs */
  eo.reshape_copies = reshape;
  rp_status s = rp_exec_create(&x, P->g, be, &eo);
  if (s != RP_OK) {
    cr_assert(s == RP_ENOKERNEL || s == RP_ENODEV || s == RP_ENOTSUP, "%s: %s",
              rp_backend_name(be), rp_last_error());
    return 0;
  }
  if (reshaped)
    *reshaped = rp_exec_copies_reshaped(x, NULL, NULL);
  static uint8_t arr[NBUF][BSZ], arr2[BSZ];
  for (rp_buf b = 0; b < P->nuser; b++) {
    fill(arr[b], seed * 7 + b);
    cr_assert_eq(rp_exec_rebind(x, b, arr[b], BSZ), RP_OK);
  }
  if (batch) {
    cr_assert_eq(rp_exec_run(x, reps), RP_OK, "%s", rp_exec_error(x));
    memcpy(out[reps - 1], arr, sizeof arr);
  } else {
    for (unsigned r = 0; r < reps; r++) {
      if (r == 1 && rebind) {
        fill(arr2, seed * 13 + 5);
        cr_assert_eq(rp_exec_rebind(x, 0, arr2, BSZ), RP_OK);
      }
      cr_assert_eq(rp_exec_run(x, 1), RP_OK, "%s: %s", rp_backend_name(be),
                   rp_exec_error(x));
      memcpy(out[r], arr, sizeof arr);
      if (r >= 1 && rebind)
        memcpy(out[r][0], arr2, BSZ);
    }
  }
  rp_exec_destroy(x);
  return 1;
}

static int prog_run(prog *P, const rp_backend *be, unsigned reps, int rebind,
                    int batch, uint8_t out[3][NBUF][BSZ], uint64_t seed) {
  return prog_run_shaped(P, be, reps, rebind, batch, out, seed, 0, NULL);
}

Test(plan, differential_random_programs, .timeout = 600) {
  const rp_backend *be[8];
  unsigned nb = backends(be, 8);
  const rp_backend *ref;
  cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
  static uint8_t want[3][NBUF][BSZ], got[3][NBUF][BSZ];
  unsigned compared[9] = {0}, refused[9] = {0}, reshaped[2] = {0};
  /* Seeds 1..1000 by default. ctest runs this test as shards of seed
   * ranges (tests/CMakeLists.txt): the plain stage all 1 000 programs in
   * 8 shards, the sanitizer stage programs 1..RP_TEST_DIFF_SAN (fewer:
   * ASan+UBSan replays ~20x slower). RP_TEST_SEEDS=A-B or
   * RP_TEST_PROGRAMS=N choose by hand. */
  uint64_t seed0, seed1;
  const unsigned nprog = tu_seed_range(1000, &seed0, &seed1);
  double spent[8] = {0};
  for (uint64_t seed = seed0; seed <= seed1; seed++) {
    prog P;
    prog_make(&P, seed);
    for (int mode = 0; mode < 3; mode++) {
      /* mode 0: 3 replays one by one; 1: with a rebind after the first;
       * 2: 3 replays in one launch. */
      int rebind = mode == 1, batch = mode == 2;
      prog_run(&P, ref, 3, rebind, batch, want, seed);
      /* Every backend as recorded, then every backend and the reference
       * with the copies reshaped: merging all it can (a huge threshold) or
       * splitting all it can (1 byte). */
      for (unsigned j = 0; j < 2 * nb + 1; j++) {
        unsigned i = j < nb ? j : j - nb;
        const rp_backend *b = i < nb ? be[i] : ref;
        size_t shape = j < nb ? 0 : seed % 2 ? (size_t)1 << 40 : 1;
        int shaped = 0;
        double t0 = rp_clock_us();
        int ran =
            prog_run_shaped(&P, b, 3, rebind, batch, got, seed, shape, &shaped);
        if (i < nb)
          spent[i] += rp_clock_us() - t0;
        reshaped[seed % 2] += shaped;
        if (!ran) {
          refused[i < nb ? i : nb]++;
          continue;
        }
        compared[i < nb ? i : nb]++;
        for (unsigned r = batch ? 2 : 0; r < 3; r++)
          for (rp_buf bb = 0; bb < P.nuser; bb++)
            for (int k = 0; k < BSZ; k++)
              cr_assert_eq(
                  got[r][bb][k], want[r][bb][k],
                  "%s%s, program %llu (sync %d, coherence %d, "
                  "mixed %d), mode %d, after replay %u: buffer %u "
                  "byte %d: %u, reference %u",
                  rp_backend_name(b), shaped ? " (copies reshaped)" : "",
                  (unsigned long long)seed, P.sync, P.coherent, P.mixed, mode,
                  r + 1, bb, k, got[r][bb][k], want[r][bb][k]);
      }
    }
    rp_graph_destroy(P.g);
  }
  for (unsigned i = 0; i < nb; i++) {
    cr_log_info("%s: %u runs compared, %u refused, %.1f s",
                rp_backend_name(be[i]), compared[i], refused[i],
                spent[i] / 1e6);
    if (!strcmp(rp_backend_name(be[i]), "openmp"))
      cr_assert_eq(refused[i], 0);
  }
  /* The reshaped runs changed copies in both ways, not only in name. */
  cr_log_info("copies reshaped in %u runs merging, %u runs splitting",
              reshaped[1], reshaped[0]);
  /* (A copy back splits only behind independent writers: a few dozen in
   * every hundred programs.) */
  cr_assert(nprog < 20 || reshaped[1] > 0, "no run merged copies");
  cr_assert(nprog < 100 || reshaped[0] > 0, "no run split copies");
}

static const rp_backend *all_backends(const rp_backend **be) {
  unsigned nb = backends(be, 7);
  const rp_backend *ref;
  cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
  be[nb] = ref;
  be[nb + 1] = NULL;
  return ref;
}

Test(plan, region_accessors_on_every_backend) {
  const rp_backend *be[9];
  all_backends(be);
  for (unsigned i = 0; be[i]; i++) {
    uint8_t M[6 * 10] = {0};
    rp_graph *g;
    rp_buf m;
    cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
    TU_OK(g, rp_buffer_register_2d(g, "M", M, 6, 10, 1, &m));
    /* rows 2..4, columns 3..9 of a 6 x 10 buffer */
    rp_arg a = rp_arg_buf(rp_box2(m, 2, 5, 3, 10));
    rp_node k;
    TU_OK(g, rp_record_kernel(g, &pk_box, 0, rp_dims3(7, 3, 1), &a, NULL, &k));
    TU_OK(g, rp_record_sync_host(g, rp_whole(m), NULL));
    TU_OK(g, rp_graph_end(g));
    rp_exec *x;
    if (rp_exec_create(&x, g, be[i], NULL) != RP_OK) {
      cr_log_info("%s: %s", rp_backend_name(be[i]), rp_last_error());
      rp_graph_destroy(g);
      continue;
    }
    const rp_kargs *ka = rp_exec_args(x, k);
    cr_assert_not_null(ka);
    cr_assert_eq(ka->r[0].offset, 2 * 10 + 3);
    cr_assert_eq(ka->r[0].bytes, 2 * 10 + 7);
    cr_assert_eq(ka->r[0].ld, 10);
    cr_assert(ka->r[0].lo[0] == 2 && ka->r[0].lo[1] == 3);
    cr_assert(ka->r[0].n[0] == 3 && ka->r[0].n[1] == 7 && ka->r[0].n[2] == 1);
    cr_assert_eq(rp_exec_run(x, 2), RP_OK, "%s", rp_exec_error(x));
    for (int r = 0; r < 6; r++)
      for (int c = 0; c < 10; c++) {
        int in = r >= 2 && r < 5 && c >= 3;
        cr_assert_eq(M[r * 10 + c], in ? (uint8_t)(2 * (3 * r + c)) : 0,
                     "%s: M[%d][%d]", rp_backend_name(be[i]), r, c);
      }
    rp_exec_destroy(x);
    rp_graph_destroy(g);
  }
}

/* A host task that fails in its second replay. */
static int fail_calls;
static void failing_fn(void *user, void *const *ptrs) {
  uint8_t *a = ptrs[0];
  if (++fail_calls == 2) {
    rp_task_fail(7, "non-positive pivot %d", -3);
    return;
  }
  a[0]++;
}

Test(plan, task_failure_stops_the_replay) {
  const rp_backend *be[9];
  all_backends(be);
  for (unsigned i = 0; be[i]; i++) {
    if (be[i] == &test_seq)
      continue;
    uint8_t A[4] = {0}, B[4] = {0};
    rp_graph *g;
    rp_buf a, b;
    cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
    TU_OK(g, rp_buffer_register(g, "A", A, 4, &a));
    TU_OK(g, rp_buffer_register(g, "B", B, 4, &b));
    rp_access acc = {rp_whole(a), RP_INOUT};
    rp_op_opts o = RP_OP_OPTS_WITH(.name = "factor");
    TU_OK(g, rp_record_host(g, failing_fn, NULL, &acc, 1, &o, NULL));
    /* Depends on the failing task: never runs in the failing replay. */
    hk h = {0, 0, 0, 4};
    rp_access acc2[2] = {{rp_whole(a), RP_IN}, {rp_whole(b), RP_INOUT}};
    h.kind = 1;
    o.name = "after";
    TU_OK(g, rp_record_host(g, host_fn, &h, acc2, 2, &o, NULL));
    TU_OK(g, rp_graph_end(g));
    rp_exec *x;
    cr_assert_eq(rp_exec_create(&x, g, be[i], NULL), RP_OK, "%s",
                 rp_last_error());
    fail_calls = 0;
    cr_assert_eq(rp_exec_run(x, 3), RP_ETASK, "%s", rp_backend_name(be[i]));
    const char *e = rp_exec_error(x);
    cr_assert(strstr(e, "\"factor\"") && strstr(e, "replay 2") &&
                  strstr(e, "code 7") && strstr(e, "pivot -3"),
              "%s: %s", rp_backend_name(be[i]), e);
    /* Replay 1 ran whole; replay 2 stopped at the failure. */
    cr_assert_eq(A[0], 1);
    cr_assert_eq(B[0], 3 * 0 + 1 + 1, "%s", rp_backend_name(be[i]));
    /* The exec can run again. */
    cr_assert_eq(rp_exec_run(x, 1), RP_OK, "%s", rp_exec_error(x));
    cr_assert_eq(A[0], 2);
    cr_assert_eq(rp_task_take_failure(NULL, 0), 0);
    rp_exec_destroy(x);
    rp_graph_destroy(g);
  }
}

Test(plan, single_task) {
  uint8_t A[4] = {1, 2, 3, 4};
  rp_graph *g;
  rp_buf a;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, rp_buffer_register(g, "A", A, 4, &a));
  rp_arg args[2] = {rp_arg_buf(rp_bytes(a, 2, 1)), rp_arg_i64(2)};
  rp_node n;
  TU_OK(g, rp_record_task(g, &pk_bump, 0, args, NULL, &n));
  TU_OK(g, rp_record_sync_host(g, rp_whole(a), NULL));
  TU_OK(g, rp_graph_end(g));
  rp_node_info ni;
  TU_OK(g, rp_node_info_get(g, n, &ni));
  cr_assert(ni.space.x == 1 && ni.space.y == 1 && ni.space.z == 1);
  cr_assert_eq(rp_replay_reference(g, 1), RP_OK);
  cr_assert(A[0] == 1 && A[1] == 2 && A[2] == 22 && A[3] == 4);
  rp_graph_destroy(g);
}

Test(plan, exec_options_checked) {
  uint8_t A[4] = {0};
  rp_graph *g;
  rp_buf a;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, rp_buffer_register(g, "A", A, 4, &a));
  hk h = {0, 0, 0, 4};
  rp_access acc = {rp_whole(a), RP_INOUT};
  TU_OK(g, rp_record_host(g, host_fn, &h, &acc, 1, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  const rp_backend *ref;
  cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
  rp_exec *x = (rp_exec *)1;
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  o.nthreads = 4;
  cr_assert_eq(rp_exec_create(&x, g, ref, &o), RP_EINVAL);
  cr_assert_null(x);
  cr_assert(strstr(rp_last_error(), "\"nthreads\" is not supported"), "%s",
            rp_last_error());
  rp_exec_opts big = RP_EXEC_OPTS_INIT;
  big.size = sizeof big + 8;
  cr_assert_eq(rp_exec_create(&x, g, ref, &big), RP_EINVAL);
  cr_assert(strstr(rp_last_error(), "rp_exec_opts: size 128 is not a size"),
            "%s", rp_last_error());
  rp_exec_opts dflt = RP_EXEC_OPTS_INIT;
  cr_assert_eq(rp_exec_create(&x, g, ref, &dflt), RP_OK);
  cr_assert_eq(rp_exec_opts_get(x)->size, sizeof(rp_exec_opts));
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(plan, rebind_checks_the_size) {
  uint8_t A[16] = {0}, small[8], big[32];
  rp_graph *g;
  rp_buf a;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, rp_buffer_register(g, "A", A, 16, &a));
  hk h = {0, 0, 0, 16};
  rp_access acc = {rp_whole(a), RP_INOUT};
  TU_OK(g, rp_record_host(g, host_fn, &h, &acc, 1, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  rp_exec *x;
  cr_assert_eq(rp_exec_create(&x, g, NULL, NULL), RP_OK);
  cr_assert_eq(rp_exec_rebind(x, a, small, sizeof small), RP_EINVAL);
  cr_assert(strstr(rp_exec_error(x), "8 bytes given for buffer \"A\" of 16"),
            "%s", rp_exec_error(x));
  cr_assert_eq(rp_exec_rebind(x, a, big, sizeof big), RP_OK);
  memset(big, 1, sizeof big);
  cr_assert_eq(rp_exec_run(x, 1), RP_OK);
  cr_assert_eq(big[15], 12);
  cr_assert_eq(big[16], 1, "bytes past the buffer untouched");
  cr_assert_eq(A[0], 0);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(plan, run_until_converged) {
  const rp_backend *be[9];
  all_backends(be);
  for (unsigned i = 0; be[i]; i++) {
    double v = 1000.0;
    rp_graph *g;
    rp_buf b;
    cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
    TU_OK(g, rp_buffer_register(g, "v", &v, sizeof v, &b));
    rp_arg a = rp_arg_buf(rp_whole(b));
    TU_OK(g, rp_record_task(g, &pk_half, 0, &a, NULL, NULL));
    TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
    TU_OK(g, rp_graph_end(g));
    rp_exec *x;
    if (rp_exec_create(&x, g, be[i], NULL) != RP_OK) {
      cr_log_info("%s: %s", rp_backend_name(be[i]), rp_last_error());
      rp_graph_destroy(g);
      continue;
    }
    rp_until u = {b, 0, RP_UNTIL_F64, RP_UNTIL_LT, 1.0};
    unsigned n;
    cr_assert_eq(rp_exec_run_until(x, &u, 100, 1, &n), RP_OK);
    cr_assert_eq(n, 10, "%s", rp_backend_name(be[i]));
    cr_assert_eq(v, 1000.0 / 1024);
    v = 1000.0;
    cr_assert_eq(rp_exec_run_until(x, &u, 100, 4, &n), RP_OK);
    cr_assert_eq(n, 12, "checked every 4: %s", rp_backend_name(be[i]));
    cr_assert_eq(v, 1000.0 / 4096);
    v = 1000.0;
    cr_assert_eq(rp_exec_run_until(x, &u, 5, 1, &n), RP_OK);
    cr_assert_eq(n, 5);
    cr_assert_eq(v, 1000.0 / 32);
    u.offset = 4;
    cr_assert_eq(rp_exec_run_until(x, &u, 5, 1, &n), RP_EINVAL);
    cr_assert(strstr(rp_exec_error(x), "past its buffer's end"));
    rp_exec_destroy(x);
    rp_graph_destroy(g);
  }
}

static rp_status probe_nodev(void) { return RP_ENODEV; }

Test(plan, exec_accessors_refuse_null_and_errors_are_fresh) {
  cr_assert_null(rp_exec_backend(NULL));
  cr_assert_eq(rp_exec_last_us(NULL), 0.0);
  cr_assert_null(rp_exec_graph(NULL));
  cr_assert_null(rp_exec_host(NULL));
  cr_assert_null(rp_exec_plan(NULL));
  cr_assert_null(rp_exec_args(NULL, 0));
  cr_assert_eq(rp_exec_opts_get(NULL)->size, sizeof(rp_exec_opts));
  cr_assert_eq(rp_exec_wait(NULL), RP_EINVAL);
  cr_assert_eq(rp_exec_wait_buffer(NULL, 0), RP_EINVAL);
  /* A failure to find a device says so, not an earlier message. */
  rp_graph *g;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(rp_backend_find("no-such-backend", &(const rp_backend *){0}),
               RP_ENOTFOUND);
  cr_assert(strstr(rp_last_error(), "no-such-backend"));
  TU_OK(g, rp_graph_end(g));
  rp_backend nodev = test_cpu;
  nodev.name = "nodev";
  nodev.probe = probe_nodev;
  rp_exec *x;
  cr_assert_eq(rp_exec_create(&x, g, &nodev, NULL), RP_ENODEV);
  cr_assert(strstr(rp_last_error(), "\"nodev\"") &&
                strstr(rp_last_error(), "no usable device"),
            "%s", rp_last_error());
  rp_graph_destroy(g);
}
