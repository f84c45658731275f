/* The predicted time of a replay in mode "mpi", per rank
 * (rp__starpu_predict, issue 35): what the lowering executes, simulated.
 * Every rank's task list and dependencies come from the backend's own
 * lowering (fake ranks, rp__sp_fake_rank: no StarPU, no MPI); an event
 * simulation then runs one replay on all ranks at once:
 *  - a task (a node run, a pack, an unpack) becomes ready when the tasks
 *    it depends on ended (a send after its pack, an unpack after its
 *    receive); the rank's workers take ready tasks in the order they
 *    became ready, then in program order, each for its body plus the
 *    model's task_us;
 *  - a send or a receive is a request of the rank's StarPU-MPI thread,
 *    which takes msg_us to act on it (its progress loop noticing it,
 *    posting or completing it, running its callback; requests pending
 *    together are handled together, not one after another): a send
 *    once its pack ended, its message arriving latency + bytes /
 *    bandwidth after that; a receive once its message arrived (its
 *    buffer is posted at submission), its unpack after it;
 *  - the replay starts launch_us after the launch on every rank.
 * A body is the operation's measured cost (op_us, one replay profiled in
 * one process): a pack or an unpack, its copy's in proportion to the
 * piece's bytes; a copy whose two ends the rank keeps in one memory
 * moves nothing; each scaled by the model's body_scale (the ranks of a
 * node sharing its memory bandwidth). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "sp_internal.h"

enum {
  EV_READY = 0, /* a task is ready: to the rank's ready list */
  EV_MPI = 1,   /* a request is ready: to the rank's MPI thread */
  EV_DONE = 2,  /* a task or request ended */
  EV_ARRIVE = 3 /* a message reached its receive */
};

/* Per rank: its lowering and the simulation's state. */
typedef struct rk {
  sp *s;
  double *body;           /* per item: its body (us) */
  uint32_t *left;         /* per item: what it still waits for */
  uint32_t *succ0, *succ; /* per item: its successors on the rank */
  long *to_item;          /* per send: the receive on the peer */
  sp_evq ready;           /* ready tasks, by (ready time, item) */
  unsigned busy;          /* workers running a task */
  double end;
  uint32_t ndone;
} rk;

static double body_of(const sp *s, const sp_item *it, const double *op_us) {
  const rp_plan *p = s->p;
  const rp_plan_node *nd = &p->node[it->v];
  double c = op_us[nd->op];
  if (it->kind == SP_SEND || it->kind == SP_RECV)
    return 0;
  if (nd->type == RP_OP_KERNEL || nd->type == RP_OP_HOST)
    return c;
  const rp_plan_access *a = p->acc + nd->acc0;
  if (it->kind == SP_RUN && nd->nacc > 1 &&
      rp__sp_in_user(p, &s->part, a[0].image) &&
      rp__sp_in_user(p, &s->part, a[1].image))
    return 0; /* both ends in one memory: nothing moves */
  if (it->piece != RP_NONE) {
    uint64_t all = rp__sp_copy_bytes(p, it->v);
    c = all ? c * (double)s->part.piece[it->piece].bytes / (double)all : c;
  }
  return c;
}

static int is_task(const sp_item *it) {
  return it->kind == SP_RUN || it->kind == SP_PACK || it->kind == SP_UNPACK;
}

/* Rank k's item i has nothing left to wait for at time t. */
static int release(rk *r, int k, uint32_t i, double t, sp_evq *q,
                   uint64_t *seq) {
  sp_ev e = {t, (*seq)++, i, k, is_task(&r[k].s->item[i]) ? EV_READY : EV_MPI};
  return rp__sp_ev_push(q, e);
}

static rp_status build(rk *r, int nranks, const double *op_us, double scale) {
  for (int k = 0; k < nranks; k++) {
    sp *s = r[k].s;
    uint32_t n = s->nitem;
    r[k].body = calloc((size_t)n + 1, sizeof *r[k].body);
    r[k].left = calloc((size_t)n + 1, sizeof *r[k].left);
    r[k].succ0 = calloc((size_t)n + 2, sizeof *r[k].succ0);
    r[k].succ = calloc((size_t)s->ndep + n + 1, sizeof *r[k].succ);
    r[k].to_item = calloc((size_t)n + 1, sizeof *r[k].to_item);
    if (!r[k].body || !r[k].left || !r[k].succ0 || !r[k].succ || !r[k].to_item)
      return RP_ENOMEM;
    /* successors (CSR): the dependencies within the replay, a send after
     * the item before it (its pack), an unpack after its receive */
    for (int pass = 0; pass < 2; pass++) {
      for (uint32_t i = 0; i < n; i++) {
        const sp_item *it = &s->item[i];
        for (uint32_t j = 0; j < it->ndep; j++) {
          uint32_t e = s->dep[it->dep0 + j];
          if (e & SP_DEP_PREV)
            continue;
          if (pass)
            r[k].succ[r[k].succ0[e + 1]++] = i;
          else
            r[k].succ0[e + 2]++, r[k].left[i]++;
        }
        if ((it->kind == SP_SEND || it->kind == SP_UNPACK) && i) {
          if (pass)
            r[k].succ[r[k].succ0[i - 1 + 1]++] = i;
          else
            r[k].succ0[i - 1 + 2]++, r[k].left[i]++;
        }
        if (!pass) {
          r[k].left[i] += it->kind == SP_RECV;
          r[k].body[i] = body_of(s, it, op_us) * scale;
          r[k].to_item[i] = -1;
          if (!isfinite(r[k].body[i]) || r[k].body[i] < 0)
            return RP_EINVAL;
        }
      }
      if (!pass)
        for (uint32_t i = 0; i < n; i++)
          r[k].succ0[i + 2] += r[k].succ0[i + 1];
    }
  }
  /* each send's receive */
  for (int k = 0; k < nranks; k++)
    for (uint32_t i = 0; i < r[k].s->nitem; i++) {
      const sp_item *it = &r[k].s->item[i];
      if (it->kind != SP_RECV)
        continue;
      long j = rp__sp_find_send(r[it->peer].s, r[k].s, it);
      if (j < 0)
        return RP_EINVAL; /* a receive nobody sends: not a lowering */
      r[it->peer].to_item[j] = (long)i;
    }
  return RP_OK;
}

static rp_status simulate(rk *r, int nranks, const rp__starpu_net *n) {
  sp_evq q = {0};
  uint64_t seq = 0;
  unsigned w = n->workers ? n->workers : 1;
  double bpus = n->gbps * 1e3; /* bytes per us */
  int fail = 0;
  for (int k = 0; k < nranks; k++) {
    r[k].end = n->launch_us;
    for (uint32_t i = 0; i < r[k].s->nitem && !fail; i++)
      if (!r[k].left[i])
        fail = release(r, k, i, n->launch_us, &q, &seq);
  }
  while (q.n && !fail) {
    sp_ev e = rp__sp_ev_pop(&q);
    rk *c = &r[e.rank];
    const sp_item *it = &c->s->item[e.item];
    switch (e.kind) {
    case EV_READY:
      fail = rp__sp_ev_push(&c->ready, (sp_ev){e.t, e.item, e.item, e.rank, 0});
      break;
    case EV_MPI: {
      double t1 = e.t + n->msg_us;
      fail = rp__sp_ev_push(&q, (sp_ev){t1, seq++, e.item, e.rank, EV_DONE});
      if (!fail && it->kind == SP_SEND) {
        const sp_piece *pc = &c->s->part.piece[it->piece];
        double fly = n->latency_us + (bpus > 0 ? (double)pc->bytes / bpus : 0);
        fail = c->to_item[e.item] < 0 ||
               rp__sp_ev_push(&q, (sp_ev){t1 + fly, seq++,
                                          (uint32_t)c->to_item[e.item],
                                          it->peer, EV_ARRIVE});
      }
      break;
    }
    case EV_ARRIVE:
      if (!--c->left[e.item])
        fail = release(r, e.rank, e.item, e.t, &q, &seq);
      break;
    default: /* EV_DONE */
      c->ndone++;
      c->end = e.t > c->end ? e.t : c->end;
      if (is_task(it))
        c->busy--;
      for (uint32_t j = c->succ0[e.item]; j < c->succ0[e.item + 1] && !fail;
           j++)
        if (!--c->left[c->succ[j]])
          fail = release(r, e.rank, c->succ[j], e.t, &q, &seq);
      break;
    }
    /* the rank's free workers take its ready tasks */
    while (!fail && c->busy < w && c->ready.n) {
      sp_ev x = rp__sp_ev_pop(&c->ready);
      c->busy++;
      fail = rp__sp_ev_push(&q, (sp_ev){e.t + c->body[x.item] + n->task_us,
                                        seq++, x.item, e.rank, EV_DONE});
    }
  }
  free(q.e);
  if (fail)
    return RP_ENOMEM;
  for (int k = 0; k < nranks; k++)
    if (r[k].ndone != r[k].s->nitem)
      return RP_EINVAL; /* something never ran: cannot happen */
  return RP_OK;
}

static int bad(double v) { return !isfinite(v) || v < 0; }

rp_status rp__starpu_predict(const rp_plan *p, int nranks, int whole,
                             const rp__starpu_net *n, const double *op_us,
                             double *rank_us) {
  if (nranks < 1 || !p || !n || !op_us || !rank_us || bad(n->latency_us) ||
      bad(n->gbps) || bad(n->task_us) || bad(n->msg_us) || bad(n->launch_us) ||
      bad(n->body_scale))
    return RP_EINVAL;
  rk *r = calloc((size_t)nranks, sizeof *r);
  rp_status st = r ? RP_OK : RP_ENOMEM;
  for (int k = 0; k < nranks && st == RP_OK; k++)
    st = rp__sp_fake_rank(p, k, nranks, whole, &r[k].s);
  if (st == RP_OK)
    st = build(r, nranks, op_us, n->body_scale > 0 ? n->body_scale : 1);
  if (st == RP_OK)
    st = simulate(r, nranks, n);
  for (int k = 0; k < nranks && st == RP_OK; k++)
    rank_us[k] = r[k].end;
  for (int k = 0; r && k < nranks; k++) {
    rp__sp_destroy(r[k].s);
    free(r[k].body);
    free(r[k].left);
    free(r[k].succ0);
    free(r[k].succ);
    free(r[k].to_item);
    free(r[k].ready.e);
  }
  free(r);
  return st;
}

/* Parameter `name` of rp_exec_predict() into the model: 1 when known. */
static int set_param(rp__starpu_net *n, int *whole, const char *name,
                     double v) {
  static const struct {
    const char *name;
    size_t off;
  } f[] = {{"latency_us", offsetof(rp__starpu_net, latency_us)},
           {"gbps", offsetof(rp__starpu_net, gbps)},
           {"task_us", offsetof(rp__starpu_net, task_us)},
           {"msg_us", offsetof(rp__starpu_net, msg_us)},
           {"launch_us", offsetof(rp__starpu_net, launch_us)},
           {"body_scale", offsetof(rp__starpu_net, body_scale)}};
  for (size_t i = 0; i < sizeof f / sizeof *f; i++)
    if (!strcmp(name, f[i].name)) {
      *(double *)(void *)((char *)n + f[i].off) = v;
      return 1;
    }
  if (!strcmp(name, "workers") && v >= 0 && v <= 1e6 && v == (unsigned)v) {
    n->workers = (unsigned)v;
    return 1;
  }
  if (!strcmp(name, "whole") && (v == 0 || v == 1)) {
    *whole = v == 1;
    return 1;
  }
  return 0;
}

rp_status rp__sp_predict_named(void *state, const rp_exec_stat *model,
                               unsigned nmodel, const double *op_us,
                               unsigned nranks, double *rank_us) {
  sp *s = state;
  rp__starpu_net n = {0, 0, 0, 0, 0, 1, 1};
  int whole = 0;
  for (unsigned i = 0; i < nmodel; i++)
    if (!model[i].name ||
        !set_param(&n, &whole, model[i].name, model[i].value)) {
      rp_exec_set_error(s->x,
                        "starpu: no model parameter \"%s\" of value %g "
                        "(latency_us, gbps, task_us, msg_us, launch_us, "
                        "workers, body_scale, whole)",
                        model[i].name ? model[i].name : "(null)",
                        model[i].value);
      return RP_EINVAL;
    }
  if (!op_us) {
    rp_exec_set_error(s->x, "starpu: no operations' costs (op_us NULL): "
                            "it keeps no profile of its own");
    return RP_EINVAL;
  }
  if (nranks > 65536) {
    rp_exec_set_error(s->x, "starpu: %u ranks: at most 65536", nranks);
    return RP_EINVAL;
  }
  rp_status st =
      rp__starpu_predict(s->p, (int)nranks, whole, &n, op_us, rank_us);
  if (st == RP_EINVAL)
    rp_exec_set_error(s->x, "starpu: a model figure is negative or not "
                            "finite");
  else if (st == RP_ENOTSUP)
    rp_exec_set_error(s->x, "starpu: a host task's rows lie on several "
                            "ranks: no prediction");
  else if (st == RP_ENOMEM)
    rp_exec_set_error(s->x, "starpu: out of memory predicting");
  return st;
}
