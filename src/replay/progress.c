/* The wait of every backend's wait_buffer (rp_backend_wait_progress). */
#include <time.h>
#include "reprise/backend.h"

void rp_backend_wait_progress(pthread_mutex_t *mu, pthread_cond_t *cv,
                              int (*done)(void *ctx), void *ctx,
                              unsigned poll_us) {
  pthread_mutex_lock(mu);
  while (!done(ctx)) {
    if (!poll_us) {
      pthread_cond_wait(cv, mu);
      continue;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += (long)poll_us * 1000;
    ts.tv_sec += ts.tv_nsec / 1000000000;
    ts.tv_nsec %= 1000000000;
    pthread_cond_timedwait(cv, mu, &ts);
  }
  pthread_mutex_unlock(mu);
}
