/* Mixed-device workloads shared by the backend tests (included by a test
 * file after criterion.h and util.h): graphs with kernels on device 0 (the
 * backend's own kind) beside a CPU-kind device 1, host tasks between,
 * automatic coherence moving the bytes; replayed 1 to 3 times with and
 * without a final host sync, with a rebind between replays, against the
 * reference replayed the same way; and a per-buffer wait that returns
 * while a later host task is still blocked. */
#ifndef RP_TEST_MIXED_WL_H
#define RP_TEST_MIXED_WL_H

#include <pthread.h>
#include <time.h>

#define MW_NB 3
#define MW_BS 512

typedef struct mw_prog {
  rp_graph *g;
  uint8_t rec[MW_NB][MW_BS];
  tu_host_arg h[64];
} mw_prog;

static void mw_fill(uint8_t *p, uint64_t seed) {
  for (int i = 0; i < MW_BS; i++)
    p[i] = (uint8_t)tu_rand(&seed);
}

/* Kernels mix (in a, inout b, oa, ob) and bump (inout a, o) alternate
 * between device 0 and the CPU-kind device 1 over random byte ranges, with
 * host tasks in between. */
static void mw_make(mw_prog *P, const rp_kernel *mix, const rp_kernel *bump,
                    uint64_t seed, int sync) {
  uint64_t s = seed * 977 + 3;
  memset(P, 0, sizeof *P);
  cr_assert_eq(rp_graph_create(&P->g, 0), RP_OK);
  rp_graph *g = P->g;
  TU_OK(g, rp_graph_set_device_kind(g, 1, RP_DEVICE_CPU));
  for (unsigned b = 0; b < MW_NB; b++) {
    char nm[8];
    snprintf(nm, sizeof nm, "m%u", b);
    mw_fill(P->rec[b], seed + b);
    TU_OK(g, rp_buffer_register(g, nm, P->rec[b], MW_BS, NULL));
  }
  for (unsigned i = 0; i < 40; i++) {
    unsigned what = (unsigned)(tu_rand(&s) % 8);
    int dev = (int)(tu_rand(&s) % 2);
    rp_buf a = (rp_buf)(tu_rand(&s) % MW_NB);
    rp_buf b = (rp_buf)((a + 1 + tu_rand(&s) % (MW_NB - 1)) % MW_NB);
    uint64_t len = 1 + tu_rand(&s) % (MW_BS / 2);
    uint64_t oa = tu_rand(&s) % (MW_BS - len + 1);
    uint64_t ob = tu_rand(&s) % (MW_BS - len + 1);
    if (what < 4) {
      rp_arg args[4] = {rp_arg_buf(rp_bytes(a, oa, len)),
                        rp_arg_buf(rp_bytes(b, ob, len)),
                        rp_arg_i64((int64_t)oa), rp_arg_i64((int64_t)ob)};
      TU_OK(g, rp_record_kernel(g, mix, dev, rp_dims3(len, 1, 1), args, NULL,
                                NULL));
    } else if (what < 6) {
      rp_arg args[2] = {rp_arg_buf(rp_bytes(b, ob, len)),
                        rp_arg_i64((int64_t)ob)};
      TU_OK(g, rp_record_kernel(g, bump, dev, rp_dims3(len, 1, 1), args, NULL,
                                NULL));
    } else {
      tu_host_arg *h = &P->h[i];
      h->off = ob;
      h->len = len;
      rp_access acc = {rp_bytes(b, ob, len), RP_INOUT};
      TU_OK(g, rp_record_host(g, tu_host_bump, h, &acc, 1, NULL, NULL));
    }
  }
  if (sync)
    for (rp_buf b = 0; b < MW_NB; b++)
      TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
  TU_OK(g, rp_graph_end(g));
}

/* reps replays one by one (a rebind of buffer 0 to fresh contents after
 * the first when asked), the user arrays after each in out[r]. */
static void mw_run(mw_prog *P, const rp_backend *be, const rp_exec_opts *o,
                   unsigned reps, int rebind, uint64_t seed,
                   uint8_t out[3][MW_NB][MW_BS]) {
  static uint8_t arr[MW_NB][MW_BS], arr2[MW_BS];
  rp_exec *x;
  rp_status s = rp_exec_create(&x, P->g, be, o);
  cr_assert_eq(s, RP_OK, "%s: %s", rp_backend_name(be), rp_last_error());
  for (rp_buf b = 0; b < MW_NB; b++) {
    mw_fill(arr[b], seed * 5 + b);
    cr_assert_eq(rp_exec_rebind(x, b, arr[b], MW_BS), RP_OK);
  }
  for (unsigned r = 0; r < reps; r++) {
    if (r == 1 && rebind) {
      mw_fill(arr2, seed * 11 + 1);
      cr_assert_eq(rp_exec_rebind(x, 0, arr2, MW_BS), RP_OK);
    }
    cr_assert_eq(rp_exec_run(x, 1), RP_OK, "%s: %s", rp_backend_name(be),
                 rp_exec_error(x));
    memcpy(out[r], arr, sizeof arr);
    if (r >= 1 && rebind)
      memcpy(out[r][0], arr2, MW_BS);
  }
  rp_exec_destroy(x);
}

/* seeds programs x final sync on/off x rebind or not: 3 replays, every
 * user array after each equal to the reference's. */
static void mw_check(const rp_backend *be, const rp_exec_opts *o,
                     const rp_kernel *mix, const rp_kernel *bump,
                     unsigned seeds) {
  const rp_backend *ref;
  cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
  static uint8_t want[3][MW_NB][MW_BS], got[3][MW_NB][MW_BS];
  for (uint64_t seed = 1; seed <= seeds; seed++)
    for (int sync = 0; sync < 2; sync++) {
      mw_prog P;
      mw_make(&P, mix, bump, seed, sync);
      for (int rebind = 0; rebind < 2; rebind++) {
        mw_run(&P, ref, NULL, 3, rebind, seed, want);
        mw_run(&P, be, o, 3, rebind, seed, got);
        for (unsigned r = 0; r < 3; r++)
          for (rp_buf b = 0; b < MW_NB; b++)
            cr_assert_eq(memcmp(got[r][b], want[r][b], MW_BS), 0,
                         "%s: seed %llu sync %d rebind %d: buffer %u "
                         "differs after replay %u",
                         rp_backend_name(be), (unsigned long long)seed, sync,
                         rebind, b, r + 1);
      }
      rp_graph_destroy(P.g);
    }
}

/* A host task that blocks until the test opens the gate (or 10 s pass). */
static pthread_mutex_t mw_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t mw_cv = PTHREAD_COND_INITIALIZER;
static int mw_open, mw_timed_out;

static void mw_gate(void *user, void *const *ptrs) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  pthread_mutex_lock(&mw_mu);
  while (!mw_open && !mw_timed_out)
    if (pthread_cond_timedwait(&mw_cv, &mw_mu, &until))
      mw_timed_out = 1;
  pthread_mutex_unlock(&mw_mu);
  ((uint8_t *)ptrs[0])[0] = 42;
}

/* Buffer A: bump on device 0, then mix into it on the CPU-kind device 1,
 * then home; C: a host task blocked on the gate, after A is home. rp_exec_wait_buffer(A)
 * returns with A final while C's task still waits, in each of `reps`
 * replays of one launch. */
static void mw_wait_buffer(const rp_backend *be, const rp_exec_opts *o,
                           const rp_kernel *mix, const rp_kernel *bump,
                           unsigned reps) {
  static uint8_t A[MW_BS], B[MW_BS], C[16], want[MW_BS], seen[MW_BS];
  rp_graph *g;
  rp_buf a, b, c;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, rp_graph_set_device_kind(g, 1, RP_DEVICE_CPU));
  TU_OK(g, rp_buffer_register(g, "A", A, MW_BS, &a));
  TU_OK(g, rp_buffer_register(g, "B", B, MW_BS, &b));
  TU_OK(g, rp_buffer_register(g, "C", C, 16, &c));
  rp_arg ka[2] = {rp_arg_buf(rp_whole(a)), rp_arg_i64(0)};
  TU_OK(g, rp_record_kernel(g, bump, 0, rp_dims3(MW_BS, 1, 1), ka, NULL, NULL));
  rp_arg km[4] = {rp_arg_buf(rp_whole(b)), rp_arg_buf(rp_whole(a)),
                  rp_arg_i64(0), rp_arg_i64(0)};
  TU_OK(g, rp_record_kernel(g, mix, 1, rp_dims3(MW_BS, 1, 1), km, NULL, NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(a), NULL));
  /* The gate reads A (so it runs after A is home: xrt runs host tasks in
   * its one polling thread, where a blocked task stalls the others). */
  rp_access gc[2] = {{rp_whole(c), RP_INOUT}, {rp_whole(a), RP_IN}};
  TU_OK(g, rp_record_host(g, mw_gate, NULL, gc, 2, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  for (int i = 0; i < MW_BS; i++)
    A[i] = (uint8_t)i, B[i] = (uint8_t)(3 * i);
  cr_assert_eq(rp_replay_reference(g, reps), RP_OK);
  memcpy(want, A, MW_BS);
  for (int i = 0; i < MW_BS; i++)
    A[i] = (uint8_t)i, B[i] = (uint8_t)(3 * i);
  rp_exec *x;
  cr_assert_eq(rp_exec_create(&x, g, be, o), RP_OK, "%s", rp_last_error());
  mw_open = mw_timed_out = 0;
  /* Replays before the last must pass the gate: open it for them by
   * running them first. */
  if (reps > 1) {
    mw_open = 1;
    cr_assert_eq(rp_exec_run(x, reps - 1), RP_OK, "%s", rp_exec_error(x));
    mw_open = 0;
  }
  cr_assert_eq(rp_exec_launch(x, 1), RP_OK, "%s", rp_exec_error(x));
  cr_assert_eq(rp_exec_wait_buffer(x, a), RP_OK, "%s", rp_exec_error(x));
  memcpy(seen, A, MW_BS);
  pthread_mutex_lock(&mw_mu);
  int early = !mw_timed_out;
  mw_open = 1;
  pthread_cond_broadcast(&mw_cv);
  pthread_mutex_unlock(&mw_mu);
  cr_assert(early, "%s: wait_buffer returned only after the gate timed out",
            rp_backend_name(be));
  cr_assert_eq(memcmp(seen, want, MW_BS), 0, "%s: A not final at wait_buffer",
               rp_backend_name(be));
  cr_assert_eq(rp_exec_wait(x), RP_OK, "%s", rp_exec_error(x));
  cr_assert_eq(C[0], 42);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

#endif
