/* rp_backend_wait_progress (issue 34): the one wait of every backend's
 * wait_buffer. It asks its test under the mutex before any wait, wakes on
 * the engine's broadcast, and with poll_us > 0 also sees progress
 * published without the mutex (atomics, as the openmp engine does). */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "reprise/backend.h"

typedef struct engine {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done_under_mu;      /* published under mu, then broadcast */
  atomic_int done_atomic; /* published without mu, never signalled */
  int asked;              /* how many times the test ran */
  int held;               /* each time: was mu held? */
} engine;

static int ready_mu(void *ctx) {
  engine *e = ctx;
  e->asked++;
  /* the caller holds mu: trylock by another owner must fail */
  e->held += pthread_mutex_trylock(&e->mu) != 0;
  return e->done_under_mu;
}

static int ready_atomic(void *ctx) {
  engine *e = ctx;
  e->asked++;
  return atomic_load(&e->done_atomic);
}

static void *publish_mu(void *v) {
  engine *e = v;
  usleep(20000);
  pthread_mutex_lock(&e->mu);
  e->done_under_mu = 1;
  pthread_cond_broadcast(&e->cv);
  pthread_mutex_unlock(&e->mu);
  return NULL;
}

static void *publish_atomic(void *v) {
  engine *e = v;
  usleep(20000);
  atomic_store(&e->done_atomic, 1); /* no lock, no signal */
  return NULL;
}

static void engine_init(engine *e) {
  memset(e, 0, sizeof *e);
  pthread_mutex_init(&e->mu, NULL);
  pthread_cond_init(&e->cv, NULL);
}

static void engine_fini(engine *e) {
  pthread_cond_destroy(&e->cv);
  pthread_mutex_destroy(&e->mu);
}

Test(wait_progress, ready_at_once_asks_once_and_never_waits) {
  engine e;
  engine_init(&e);
  e.done_under_mu = 1;
  rp_backend_wait_progress(&e.mu, &e.cv, ready_mu, &e, 0);
  cr_assert_eq(e.asked, 1);
  cr_assert_eq(e.held, 1);
  /* the mutex is released on return */
  cr_assert_eq(pthread_mutex_trylock(&e.mu), 0);
  pthread_mutex_unlock(&e.mu);
  engine_fini(&e);
}

/* Wait with @p ready while @p publish runs on a thread of its own; the
 * mutex must be free again on return. */
static void wait_while(engine *e, void *(*publish)(void *),
                       int (*ready)(void *), unsigned poll_us) {
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, publish, e), 0);
  rp_backend_wait_progress(&e->mu, &e->cv, ready, e, poll_us);
  pthread_join(t, NULL);
  cr_assert_eq(pthread_mutex_trylock(&e->mu), 0);
  pthread_mutex_unlock(&e->mu);
}

Test(wait_progress, wakes_on_the_engines_broadcast) {
  engine e;
  engine_init(&e);
  wait_while(&e, publish_mu, ready_mu, 0);
  cr_assert_eq(e.done_under_mu, 1);
  cr_assert_geq(e.asked, 2); /* before the wait and after the wake */
  cr_assert_eq(e.held, e.asked);
  engine_fini(&e);
}

Test(wait_progress, polls_progress_published_without_the_mutex) {
  engine e;
  engine_init(&e);
  wait_while(&e, publish_atomic, ready_atomic, 200);
  cr_assert_eq(atomic_load(&e.done_atomic), 1);
  /* nobody signalled: only the polls (every 200 us over ~20 ms) woke it */
  cr_assert_geq(e.asked, 3);
  engine_fini(&e);
}
