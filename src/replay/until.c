/* Replaying until a value the graph computes says to stop. */
#include <stdio.h>
#include <string.h>
#include "replay/exec.h"

static int holds(const rp_until *u, const void *p) {
  double v;
  switch (u->type) {
  case RP_UNTIL_F32:
    v = *(const float *)p;
    break;
  case RP_UNTIL_I64:
    v = (double)*(const int64_t *)p;
    break;
  case RP_UNTIL_I32:
    v = *(const int32_t *)p;
    break;
  default:
    v = *(const double *)p;
    break;
  }
  switch (u->cmp) {
  case RP_UNTIL_LE:
    return v <= u->threshold;
  case RP_UNTIL_GT:
    return v > u->threshold;
  case RP_UNTIL_GE:
    return v >= u->threshold;
  default:
    return v < u->threshold;
  }
}

static uint64_t type_size(rp_until_type t) {
  return t == RP_UNTIL_F32 || t == RP_UNTIL_I32 ? 4 : 8;
}

rp_status rp_exec_run_until(rp_exec *x, const rp_until *u, unsigned max_replays,
                            unsigned check_every, unsigned *done) {
  RP_ENTER();
  if (done)
    *done = 0;
  if (!x || !u)
    return RP_BAD_ARG();
  rp__exec_begin(x);
  if (u->buf >= x->g->nbuf || !x->host[u->buf] ||
      (unsigned)u->type > RP_UNTIL_I32 || (unsigned)u->cmp > RP_UNTIL_GE ||
      u->offset > x->g->buf[u->buf].bytes ||
      type_size(u->type) > x->g->buf[u->buf].bytes - u->offset) {
    rp_exec_set_error(x, "run_until: the predicate names %s",
                      u->buf >= x->g->nbuf ? "no buffer"
                      : !x->host[u->buf]   ? "an internal buffer"
                      : (unsigned)u->type > RP_UNTIL_I32 ||
                              (unsigned)u->cmp > RP_UNTIL_GE
                          ? "an unknown type or comparison"
                          : "a value past its buffer's end");
    return RP_EINVAL;
  }
  rp_status s = rp__exec_wait(x);
  if (s != RP_OK)
    return s;
  unsigned k = check_every ? check_every : 1, n = 0;
  double t0 = rp__now_us();
  if (x->be->run_until && max_replays > 0) {
    /* The backend tests the predicate itself, after every replay. */
    x->batch++;
    x->launched_iters = max_replays;
    s = x->be->run_until(x->state, u, max_replays, k, &n);
    if (s != RP_ENOTSUP) {
      x->last_us = rp__now_us() - t0;
      if (done)
        *done = n;
      if (s != RP_OK && !x->err[0])
        rp_exec_set_error(x, "backend \"%s\": run_until failed: %s",
                          x->be->name, rp_strerror(s));
      return s;
    }
    /* Refused: the host checks instead; the reason is the call's notice
     * (rp_exec_notice()) once the loop succeeded. */
    s = RP_OK;
    n = 0;
    if (x->err[0])
      snprintf(x->note, sizeof x->note, "%s", x->err);
    x->err[0] = 0;
    rp__set_last_error("");
  }
  while (n < max_replays) {
    unsigned step = max_replays - n < k ? max_replays - n : k;
    if ((s = rp__exec_run(x, step)) != RP_OK)
      break;
    n += step;
    const char *v = (const char *)x->host[u->buf] + u->offset;
    if (holds(u, v))
      break;
  }
  x->last_us = rp__now_us() - t0;
  if (done)
    *done = n;
  return s;
}
