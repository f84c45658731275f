/* The mpi backend's model of a replay (rp__mpi_simulate, rp_mpi.h): every
 * rank's task list run at once by a discrete-event simulation, the
 * messages between the lists as edges that take latency + bytes /
 * bandwidth. No MPI here: the lists may be made by hand (the tests) or
 * from an exec's lowering (mpi_predict.c).
 *
 * Each rank has `threads` threads; a thread free at time t takes the first
 * task in list order whose predecessors on the rank have ended (one
 * thread: the list in its order, as rp__omp_run_caller runs it). A task
 * holds its thread task_us + its body; a send's message leaves when it
 * ends; a receive holds its thread until task_us has passed and its
 * message arrived, then for its body (the unpack). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rp_mpi.h"
#include "sp_place.h" /* the event queue, shared with sp_predict.c */

/* Per rank: the simulation's state. */
typedef struct srank {
  const rp_mpi_list *l;
  uint32_t *left;  /* per task: predecessors not ended */
  double *arrive;  /* receives: their message's arrival, or -1 */
  double *started; /* receives holding a thread: when, or -1 */
  uint32_t *to;    /* sends: the receive's task on the peer */
  sp_evq ready;    /* ready tasks by list order (t unused: 0) */
  unsigned busy, threads;
  uint32_t ndone;
  double end;
} srank;

/* A receive's key for matching: (peer, tag), then its task. */
typedef struct rkey {
  int peer, tag;
  uint32_t item;
} rkey;

static int rkey_cmp(const void *a, const void *b) {
  const rkey *x = a, *y = b;
  if (x->peer != y->peer)
    return x->peer < y->peer ? -1 : 1;
  if (x->tag != y->tag)
    return x->tag < y->tag ? -1 : 1;
  return 0;
}

static int bad_fig(double v) { return !isfinite(v) || v < 0; }

/* In-degrees, the sends' matches, the figures' checks. */
static rp_status prepare(srank *R, const rp_mpi_list *L, int nr) {
  rkey **keys = calloc((size_t)nr, sizeof *keys);
  uint32_t *nk = calloc((size_t)nr, sizeof *nk);
  rp_status rc = keys && nk ? RP_OK : RP_ENOMEM;
  for (int r = 0; r < nr && rc == RP_OK; r++) {
    uint32_t n = L[r].n;
    R[r].l = &L[r];
    R[r].threads = L[r].threads ? L[r].threads : 1;
    R[r].left = calloc((size_t)n + 1, sizeof *R[r].left);
    R[r].arrive = malloc(((size_t)n + 1) * sizeof *R[r].arrive);
    R[r].started = malloc(((size_t)n + 1) * sizeof *R[r].started);
    R[r].to = malloc(((size_t)n + 1) * sizeof *R[r].to);
    keys[r] = malloc(((size_t)n + 1) * sizeof *keys[r]);
    if (!R[r].left || !R[r].arrive || !R[r].started || !R[r].to || !keys[r]) {
      rc = RP_ENOMEM;
      break;
    }
    if (n && (!L[r].task || (!L[r].succ && L[r].task[0].ns))) {
      rc = RP_EINVAL;
      break;
    }
    for (uint32_t i = 0; i < n && rc == RP_OK; i++) {
      const rp_mpi_task *t = &L[r].task[i];
      R[r].arrive[i] = R[r].started[i] = -1;
      R[r].to[i] = UINT32_MAX;
      if (bad_fig(t->us) || t->kind < RP_MPI_WORK || t->kind > RP_MPI_RECV ||
          (t->kind != RP_MPI_WORK && (t->peer < 0 || t->peer >= nr)) ||
          (t->ns && !L[r].succ)) {
        rc = RP_EINVAL;
        break;
      }
      for (uint32_t k = t->s0; k < t->s0 + t->ns; k++) {
        if (L[r].succ[k] >= n || L[r].succ[k] == i) {
          rc = RP_EINVAL;
          break;
        }
        R[r].left[L[r].succ[k]]++;
      }
      if (t->kind == RP_MPI_RECV)
        keys[r][nk[r]++] = (rkey){t->peer, t->tag, i};
    }
    if (rc == RP_OK)
      qsort(keys[r], nk[r], sizeof *keys[r], rkey_cmp);
    for (uint32_t k = 1; rc == RP_OK && k < nk[r]; k++)
      if (!rkey_cmp(&keys[r][k - 1], &keys[r][k]))
        rc = RP_EINVAL; /* two receives of one message */
  }
  /* every send's receive, every receive matched once */
  uint64_t sends = 0, recvs = 0;
  for (int r = 0; r < nr && rc == RP_OK; r++) {
    recvs += nk[r];
    for (uint32_t i = 0; i < L[r].n && rc == RP_OK; i++) {
      const rp_mpi_task *t = &L[r].task[i];
      if (t->kind != RP_MPI_SEND)
        continue;
      rkey k = {r, t->tag, 0};
      const rkey *f =
          bsearch(&k, keys[t->peer], nk[t->peer], sizeof k, rkey_cmp);
      if (!f || t->peer == r) {
        rc = RP_EINVAL;
        break;
      }
      R[r].to[i] = f->item;
      sends++;
    }
  }
  if (rc == RP_OK && sends != recvs)
    rc = RP_EINVAL; /* a receive nobody sends */
  for (int r = 0; keys && r < nr; r++)
    free(keys[r]);
  free(keys);
  free(nk);
  return rc;
}

/* The simulation's clock and the events to come. */
typedef struct sim {
  srank *R;
  const rp_mpi_net *n;
  sp_evq q;
  uint64_t seq;
} sim;

static int done_at(sim *s, int r, uint32_t i, double t) {
  return rp__sp_ev_push(&s->q,
                        (sp_ev){.t = t, .seq = s->seq++, .item = i, .rank = r});
}

/* Rank r's free threads take its ready tasks at time t. */
static int dispatch(sim *s, int r, double t) {
  srank *c = &s->R[r];
  const double bpus = s->n->gbps * 1e3;
  while (c->busy < c->threads && c->ready.n) {
    uint32_t i = rp__sp_ev_pop(&c->ready).item;
    const rp_mpi_task *k = &c->l->task[i];
    c->busy++;
    double t1 = t + s->n->task_us;
    if (k->kind == RP_MPI_RECV) {
      if (c->arrive[i] < 0) { /* its thread waits for the message */
        c->started[i] = t;
        continue;
      }
      t1 = (t1 > c->arrive[i] ? t1 : c->arrive[i]) + k->us;
    } else {
      t1 += k->us;
    }
    if (done_at(s, r, i, t1))
      return -1;
    if (k->kind != RP_MPI_SEND)
      continue;
    double a = t1 + s->n->latency_us + (bpus > 0 ? (double)k->bytes / bpus : 0);
    srank *d = &s->R[k->peer];
    uint32_t j = c->to[i];
    c->end = a > c->end ? a : c->end; /* the launch waits for its sends */
    d->arrive[j] = a;
    if (d->started[j] >= 0) { /* the receive waits already */
      double w = d->started[j] + s->n->task_us;
      if (done_at(s, k->peer, j, (w > a ? w : a) + d->l->task[j].us))
        return -1;
    }
  }
  return 0;
}

static rp_status run(sim *s, int nr) {
  srank *R = s->R;
  for (int r = 0; r < nr; r++) {
    R[r].end = s->n->launch_us;
    for (uint32_t i = 0; i < R[r].l->n; i++)
      if (!R[r].left[i] &&
          rp__sp_ev_push(&R[r].ready, (sp_ev){.seq = i, .item = i, .rank = r}))
        return RP_ENOMEM;
  }
  for (int r = 0; r < nr; r++)
    if (dispatch(s, r, s->n->launch_us))
      return RP_ENOMEM;
  while (s->q.n) {
    sp_ev e = rp__sp_ev_pop(&s->q);
    srank *c = &R[e.rank];
    const rp_mpi_task *k = &c->l->task[e.item];
    c->busy--;
    c->ndone++;
    c->end = e.t > c->end ? e.t : c->end;
    for (uint32_t j = k->s0; j < k->s0 + k->ns; j++) {
      uint32_t v = c->l->succ[j];
      if (!--c->left[v] &&
          rp__sp_ev_push(&c->ready,
                         (sp_ev){.seq = v, .item = v, .rank = e.rank}))
        return RP_ENOMEM;
    }
    if (dispatch(s, e.rank, e.t))
      return RP_ENOMEM;
  }
  for (int r = 0; r < nr; r++)
    if (R[r].ndone != R[r].l->n)
      return RP_EINVAL; /* a cycle, or receives waiting for each other */
  return RP_OK;
}

rp_status rp__mpi_simulate(const rp_mpi_list *ranks, int nranks,
                           const rp_mpi_net *n, double *rank_us) {
  if (!ranks || !n || !rank_us || nranks < 1 || bad_fig(n->latency_us) ||
      bad_fig(n->gbps) || bad_fig(n->task_us) || bad_fig(n->launch_us))
    return RP_EINVAL;
  srank *R = calloc((size_t)nranks, sizeof *R);
  if (!R)
    return RP_ENOMEM;
  sim s = {R, n, {0}, 0};
  rp_status rc = prepare(R, ranks, nranks);
  if (rc == RP_OK)
    rc = run(&s, nranks);
  for (int r = 0; r < nranks; r++) {
    if (rc == RP_OK)
      rank_us[r] = R[r].end;
    free(R[r].left);
    free(R[r].arrive);
    free(R[r].started);
    free(R[r].to);
    free(R[r].ready.e);
  }
  free(s.q.e);
  free(R);
  return rc;
}
