/* Where a rank's time goes (rp__starpu_breakdown): each task stamps when
 * it became ready (StarPU's prologue callback), when its body started and
 * ended, and when its callback ran; each receive when it was posted and
 * when it completed. After the launch one sweep over these stamps cuts
 * the launch's wall time into classes, by what was going on at each
 * instant: a body running, else a task ready but none running (StarPU
 * scheduling the task and waking a worker up), else a receive pending,
 * else the submission unfinished, else nothing of ours. */
#include <stdlib.h>
#include "sp_internal.h"

enum { EV_RUN = 0, EV_READY = 1, EV_RECV = 2, EV_SUB = 3 };

typedef struct ev {
  double t;
  int8_t kind, delta;
  uint8_t cls;
} ev;

static int cmp_ev(const void *x, const void *y) {
  double a = ((const ev *)x)->t, b = ((const ev *)y)->t;
  return (a > b) - (a < b);
}

static void push(ev *e, size_t *n, double t, int kind, int delta, int cls) {
  e[(*n)++] = (ev){t, (int8_t)kind, (int8_t)delta, (uint8_t)cls};
}

static int is_task(int kind) {
  return kind == SP_RUN || kind == SP_PACK || kind == SP_UNPACK;
}

void rp__sp_trace_account(sp *s, unsigned iterations, double wall_us) {
  if (!s->stamp || iterations > s->trace_reps)
    return; /* replays ran untraced: their time would be unaccounted */
  size_t cap = (size_t)s->nitem * iterations * 4 + 2, n = 0;
  ev *e = malloc(cap * sizeof *e);
  if (!e)
    return;
  rp__starpu_breakdown *bd = &s->bd;
  for (unsigned r = 0; r < iterations; r++)
    for (uint32_t i = 0; i < s->nitem; i++) {
      const sp_item *it = &s->item[i];
      const sp_stamp *st = &s->stamp[(size_t)r * s->nitem + i];
      if (is_task(it->kind) && st->start >= 0 && st->end >= st->start) {
        push(e, &n, st->start, EV_RUN, 1, it->cls);
        push(e, &n, st->end, EV_RUN, -1, it->cls);
        if (st->ready >= 0 && st->ready <= st->start) {
          push(e, &n, st->ready, EV_READY, 1, 0);
          push(e, &n, st->start, EV_READY, -1, 0);
          bd->ready_lat_us += st->start - st->ready;
        }
        if (st->done >= st->end)
          bd->done_lat_us += st->done - st->end;
        bd->tasks++;
      } else if (it->kind == SP_RECV && st->start >= 0 &&
                 st->done >= st->start) {
        push(e, &n, st->start, EV_RECV, 1, it->cls);
        push(e, &n, st->done, EV_RECV, -1, it->cls);
        bd->recvs++;
      }
    }
  push(e, &n, 0, EV_SUB, 1, 0);
  push(e, &n, s->submit_end, EV_SUB, -1, 0);
  qsort(e, n, sizeof *e, cmp_ev);
  int run[3] = {0, 0, 0}, ready = 0, recv[3] = {0, 0, 0}, sub = 0;
  double prev = 0, *cls[] = {&bd->body_us, &bd->halo_us, &bd->host_us};
  for (size_t k = 0; k <= n; k++) {
    double t = k < n ? e[k].t : wall_us;
    if (t > wall_us)
      t = wall_us;
    double seg = t > prev ? t - prev : 0;
    double *to = &bd->other_us;
    if (run[SP_CL_BODY] || run[SP_CL_HALO] || run[SP_CL_HOST])
      to = cls[run[SP_CL_BODY]   ? SP_CL_BODY
               : run[SP_CL_HALO] ? SP_CL_HALO
                                 : SP_CL_HOST];
    else if (ready)
      to = &bd->sched_us;
    else if (recv[SP_CL_HALO])
      to = &bd->recv_us;
    else if (recv[SP_CL_HOST])
      to = &bd->host_recv_us;
    else if (sub)
      to = &bd->submit_wait_us;
    *to += seg;
    if (t > prev)
      prev = t;
    if (k == n)
      break;
    switch (e[k].kind) {
    case EV_RUN:
      run[e[k].cls] += e[k].delta;
      break;
    case EV_READY:
      ready += e[k].delta;
      break;
    case EV_RECV:
      recv[e[k].cls] += e[k].delta;
      break;
    default:
      sub += e[k].delta;
    }
  }
  free(e);
  bd->launches++;
  bd->replays += iterations;
  bd->wall_us += wall_us;
  bd->submit_us += s->submit_us;
}
