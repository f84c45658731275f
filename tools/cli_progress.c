/* Progress lines of the reprise tool: one line on standard error, updated
 * in place, for work that takes over a second. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nanosleep */
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

void rp_cli_progress_start(rp_cli_progress *p, const char *what, int forced) {
  p->what = what;
  p->tty = isatty(STDERR_FILENO);
  p->on = forced || p->tty;
  p->forced = forced;
  p->bytes = 0;
  p->t0 = rp_clock_us();
  p->last = -1e300;
  p->shown = 0;
}

static void amount(const rp_cli_progress *p, double v, char *b, size_t n) {
  if (p->bytes)
    snprintf(b, n, "%.1f MB", v / 1e6);
  else
    snprintf(b, n, "%.0f", v);
}

void rp_cli_progress_update(rp_cli_progress *p, double done, double total) {
  if (!p->on)
    return;
  double now = rp_clock_us(), el = (now - p->t0) / 1e6;
  /* Nothing for work under a second (unless asked), then at most ten
   * lines a second on a terminal, one a second elsewhere. */
  if ((!p->forced && el < 1.0) ||
      (now - p->last < (p->tty ? 1e5 : 1e6) && done < total))
    return;
  p->last = now;
  char d[32], t[32], eta[48] = "";
  amount(p, done, d, sizeof d);
  amount(p, total, t, sizeof t);
  if (total > 0 && done > 0 && done < total)
    snprintf(eta, sizeof eta, ", about %.0f s left",
             el * (total - done) / done + 0.5);
  if (total > 0)
    fprintf(stderr, "%s%s %s of %s (%.0f%%, %.1f s%s)%s", p->tty ? "\r" : "",
            p->what, d, t, 100.0 * done / total, el, eta,
            p->tty ? "\033[K" : "\n");
  else
    fprintf(stderr, "%s%s %s (%.1f s)%s", p->tty ? "\r" : "", p->what, d, el,
            p->tty ? "\033[K" : "\n");
  fflush(stderr);
  p->shown = 1;
}

void rp_cli_progress_end(rp_cli_progress *p) {
  if (p->shown && p->tty) /* the line gives way to what follows */
    fputs("\r\033[K", stderr);
  p->shown = 0;
}

/* --- work on a thread of its own, the line ticking ---------------------- */

typedef struct busy {
  void (*fn)(void *);
  void *arg;
  atomic_int done;
} busy;

static void *busy_main(void *v) {
  busy *b = v;
  b->fn(b->arg);
  atomic_store(&b->done, 1);
  return NULL;
}

void rp_cli_busy(const char *what, int forced, void (*fn)(void *), void *arg,
                 const atomic_ulong *count, const char *unit) {
  rp_cli_progress p;
  rp_cli_progress_start(&p, what, forced);
  busy b = {fn, arg, 0};
  pthread_t th;
  if (!p.on || pthread_create(&th, NULL, busy_main, &b)) {
    fn(arg);
    return;
  }
  for (int last = 0; !last;) {
    struct timespec ts = {0, 50 * 1000 * 1000};
    if (!(last = atomic_load(&b.done)))
      nanosleep(&ts, NULL);
    double now = rp_clock_us(), el = (now - p.t0) / 1e6;
    /* Asked for (--progress): at least one line, the last if need be. */
    int final = last && p.forced && !p.shown && !p.tty;
    if (!final &&
        ((!p.forced && el < 1.0) || last || now - p.last < (p.tty ? 1e5 : 1e6)))
      continue;
    p.last = now;
    if (count)
      fprintf(stderr, "%s%s: %lu %s (%.1f s)%s", p.tty ? "\r" : "", what,
              (unsigned long)atomic_load(count), unit ? unit : "", el,
              p.tty ? "\033[K" : "\n");
    else
      fprintf(stderr, "%s%s (%.1f s)%s", p.tty ? "\r" : "", what, el,
              p.tty ? "\033[K" : "\n");
    fflush(stderr);
    p.shown = 1;
  }
  pthread_join(th, NULL);
  rp_cli_progress_end(&p);
}
