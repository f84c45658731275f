/* The mpi backend's prediction of its own replay (rp__mpi_predict,
 * rp_mpi.h): every rank describes the task list it lowered (kind, the
 * operation whose cost its body takes and in what share, its message,
 * its successors); rank 0 gathers them, gives each its body from the
 * profiled costs and simulates them all at once (mpi_model.c). Also the
 * network model's measure (rp__mpi_net_measure): a ping-pong from rank 0
 * to each rank. And the execs alive in this process, so that a caller's
 * rp_exec finds its rank's state. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "mpi_internal.h"
#include "rp_mpi.h"

/* ---- the execs alive ---- */

static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static mstate **live;
static size_t nlive, caplive;

rp_status rp__mpi_live_add(mstate *m) {
  pthread_mutex_lock(&live_mu);
  rp_status rc = RP_OK;
  if (nlive == caplive) {
    size_t c = caplive ? 2 * caplive : 8;
    mstate **t = realloc(live, c * sizeof *t);
    if (t) {
      live = t;
      caplive = c;
    } else {
      rc = RP_ENOMEM;
    }
  }
  if (rc == RP_OK)
    live[nlive++] = m;
  pthread_mutex_unlock(&live_mu);
  return rc;
}

void rp__mpi_live_remove(const mstate *m) {
  pthread_mutex_lock(&live_mu);
  for (size_t i = 0; i < nlive; i++)
    if (live[i] == m) {
      live[i] = live[--nlive];
      break;
    }
  if (!nlive) {
    free(live);
    live = NULL;
    caplive = 0;
  }
  pthread_mutex_unlock(&live_mu);
}

static mstate *find_live(const rp_exec *x) {
  mstate *m = NULL;
  pthread_mutex_lock(&live_mu);
  for (size_t i = 0; x && i < nlive && !m; i++)
    if (live[i]->x == x)
      m = live[i];
  pthread_mutex_unlock(&live_mu);
  return m;
}

/* ---- a profile of the rank's tasks ---- */

static int cmp_us(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

rp_status rp__mpi_profile(mstate *m, double *node_us) {
  ostate *st = m->st;
  const size_t n = (size_t)m->nitem + 1;
  if (!m->prof && !(m->prof = calloc(n * (MI_PROFILES + 1), sizeof *m->prof)))
    return RP_ENOMEM;
  double *last = m->prof + n * (1 + m->nprof % MI_PROFILES), w[MI_PROFILES];
  m->nprof++;
  for (uint32_t v = 0; v < m->p->nnode; v++)
    node_us[v] = 0;
  for (uint32_t i = 0; i < m->nitem; i++) {
    const otask *t = &st->task[i];
    if (m->kind[i] == MI_RECV) /* the wait apart: recv_body's is then none */
      MPI_Wait(&((mmsg *)t->p)->req, MPI_STATUS_IGNORE);
    double t0 = rp_clock_us();
    rp__omp_run_task(st, t);
    last[i] = rp_clock_us() - t0;
    if (m->node[i] != RP_NONE)
      node_us[m->node[i]] += last[i];
  }
  /* each task's median over the profiles kept */
  unsigned k = m->nprof < MI_PROFILES ? m->nprof : MI_PROFILES;
  for (uint32_t i = 0; i < m->nitem; i++) {
    for (unsigned j = 0; j < k; j++)
      w[j] = m->prof[n * (1 + j) + i];
    qsort(w, k, sizeof *w, cmp_us);
    m->prof[i] = k % 2 ? w[k / 2] : 0.5 * (w[k / 2 - 1] + w[k / 2]);
  }
  for (uint32_t k = 0; k < m->nsend; k++)
    m->sreq[k] = m->msg[m->send[k]].req;
  MPI_Waitall((int)m->nsend, m->sreq, MPI_STATUSES_IGNORE);
  for (uint32_t k = 0; k < m->nsend; k++)
    m->msg[m->send[k]].req = MPI_REQUEST_NULL;
  return RP_OK;
}

/* ---- a rank's list, described ---- */

/* One task as rank 0 receives it: its body is op's cost times frac (op
 * UINT32_MAX: none). */
typedef struct mdesc {
  int32_t kind, peer, tag;
  uint32_t op;
  double frac;
  double us; /* its time in the rank's last profile, or -1 */
  uint64_t bytes;
  uint32_t s0, ns;
} mdesc;

/* The share of its kernel's points that kernel task t runs (a slice's
 * points over the whole launch's). */
static double points_share(const mstate *m, uint32_t op, const otask *t) {
  const rp_kargs *tpl = rp_exec_args(m->x, op);
  const rp_kargs *ka = t->p;
  if (!tpl || !ka)
    return 1;
  double whole = 1, mine = 1;
  for (int d = 0; d < 3; d++) {
    whole *= (double)(tpl->n[d] ? tpl->n[d] : 1);
    mine *= (double)(ka->n[d] ? ka->n[d] : 1);
  }
  return whole > 0 ? mine / whole : 1;
}

static void describe(const mstate *m, uint32_t i, mdesc *d) {
  const rp_plan *p = m->p;
  const otask *t = &m->st->task[i];
  *d = (mdesc){.kind = RP_MPI_WORK,
               .op = UINT32_MAX,
               .frac = 0,
               .us = m->prof ? m->prof[i] : -1,
               .s0 = t->s0,
               .ns = t->ns};
  const uint8_t kind = m->kind[i];
  if (kind == MI_POST)
    return;
  const rp_plan_node *nd = &p->node[m->node[i]];
  if (kind == MI_RUN || kind == MI_PART) {
    if (t->kind == 0)
      return; /* a copy within one memory: nothing moves */
    d->op = nd->op;
    d->frac = nd->type == RP_OP_KERNEL ? points_share(m, nd->op, t) : 1;
    return;
  }
  if (t->kind == 0)
    return; /* a local piece within one memory */
  const mmsg *g = t->p;
  const uint64_t b = m->part.piece[g - m->msg].bytes;
  const uint64_t all = rp__sp_copy_bytes(p, m->node[i]);
  d->op = nd->op;
  d->frac = all ? (double)b / (double)all : 1;
  if (kind == MI_SEND || kind == MI_RECV) {
    d->kind = kind == MI_SEND ? RP_MPI_SEND : RP_MPI_RECV;
    d->peer = g->peer;
    d->tag = g->tag;
    d->bytes = (uint64_t)g->bytes;
  }
}

/* ---- the prediction ---- */

/* On rank 0: the lists of all ranks from their descriptions (desc, succ
 * at offsets d0, e0 per rank), bodies from op_us, simulated. */
static rp_status simulate_all(const mdesc *desc, const uint32_t *succ,
                              const int *cnt, int nr, const rp_mpi_net *n,
                              const double *op_us, uint32_t nops,
                              double *rank_us) {
  rp_mpi_task *t = malloc(((size_t)cnt[3 * nr] + 1) * sizeof *t);
  rp_mpi_list *l = calloc((size_t)nr, sizeof *l);
  rp_status rc = t && l ? RP_OK : RP_ENOMEM;
  for (int i = 0; rc == RP_OK && i < cnt[3 * nr]; i++) {
    const mdesc *d = &desc[i];
    if ((op_us && d->op != UINT32_MAX && d->op >= nops) ||
        (!op_us && d->us < 0)) {
      rc = RP_EINVAL; /* no profile of the exec's own */
      break;
    }
    double us = !op_us                ? d->us
                : d->op == UINT32_MAX ? 0
                                      : op_us[d->op] * d->frac;
    t[i] = (rp_mpi_task){.kind = d->kind,
                         .us = us,
                         .peer = d->peer,
                         .tag = d->tag,
                         .bytes = d->bytes,
                         .s0 = d->s0,
                         .ns = d->ns};
  }
  for (int r = 0, d0 = 0, e0 = 0; rc == RP_OK && r < nr; r++) {
    l[r] = (rp_mpi_list){t + d0, (uint32_t)cnt[3 * r], succ + e0,
                         (unsigned)cnt[3 * r + 2]};
    d0 += cnt[3 * r];
    e0 += cnt[3 * r + 1];
  }
  if (rc == RP_OK)
    rc = rp__mpi_simulate(l, nr, n, rank_us);
  free(t);
  free(l);
  return rc;
}

/* Gathers on rank 0 of m's communicator every rank's description; cnt (3
 * per rank: tasks, successors, threads; then the totals of the first
 * two), desc and succ allocated there. */
static rp_status gather(const mstate *m, int *cnt, mdesc **desc,
                        uint32_t **succ) {
  const int nr = m->nranks, me[3] = {(int)m->nitem, (int)m->nedge, m->st->nth};
  mdesc *d = calloc((size_t)m->nitem + 1, sizeof *d);
  int ok = d != NULL, all_ok = 0;
  for (uint32_t i = 0; ok && i < m->nitem; i++)
    describe(m, i, &d[i]);
  if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, m->comm) !=
          MPI_SUCCESS ||
      MPI_Gather(me, 3, MPI_INT, cnt, 3, MPI_INT, 0, m->comm) != MPI_SUCCESS) {
    free(d);
    return RP_ENODEV;
  }
  if (!all_ok) {
    free(d);
    return RP_ENOMEM;
  }
  int *rc = NULL, *rd = NULL, *ec = NULL, *ed = NULL;
  if (m->rank == 0) {
    rc = calloc((size_t)nr, sizeof *rc);
    rd = calloc((size_t)nr, sizeof *rd);
    ec = calloc((size_t)nr, sizeof *ec);
    ed = calloc((size_t)nr, sizeof *ed);
    cnt[3 * nr] = cnt[3 * nr + 1] = 0;
    for (int r = 0; rc && rd && ec && ed && r < nr; r++) {
      rc[r] = cnt[3 * r] * (int)sizeof(mdesc);
      rd[r] = cnt[3 * nr] * (int)sizeof(mdesc);
      ec[r] = cnt[3 * r + 1];
      ed[r] = cnt[3 * nr + 1];
      cnt[3 * nr] += cnt[3 * r];
      cnt[3 * nr + 1] += cnt[3 * r + 1];
    }
    *desc = malloc(((size_t)cnt[3 * nr] + 1) * sizeof **desc);
    *succ = malloc(((size_t)cnt[3 * nr + 1] + 1) * sizeof **succ);
  }
  /* a failed allocation on rank 0 still takes part (into nothing) */
  int room = m->rank != 0 || (rc && rd && ec && ed && *desc && *succ);
  int st = MPI_Bcast(&room, 1, MPI_INT, 0, m->comm);
  if (st == MPI_SUCCESS && room)
    st = MPI_Gatherv(d, (int)(m->nitem * sizeof *d), MPI_BYTE, *desc, rc, rd,
                     MPI_BYTE, 0, m->comm);
  if (st == MPI_SUCCESS && room)
    st = MPI_Gatherv(m->succ, (int)m->nedge, MPI_UINT32_T, *succ, ec, ed,
                     MPI_UINT32_T, 0, m->comm);
  free(d);
  free(rc);
  free(rd);
  free(ec);
  free(ed);
  return st != MPI_SUCCESS ? RP_ENODEV : room ? RP_OK : RP_ENOMEM;
}

rp_status rp__mpi_predict(const rp_exec *x, const rp_mpi_net *n,
                          const double *op_us, double *rank_us) {
  mstate *m = find_live(x);
  if (!m || !rank_us)
    return RP_EINVAL; /* not of this backend: no collective started */
  const int nr = m->nranks;
  int *cnt = calloc(3 * (size_t)nr + 2, sizeof *cnt);
  mdesc *desc = NULL;
  uint32_t *succ = NULL;
  rp_status rc = cnt ? RP_OK : RP_ENOMEM;
  int ok = rc == RP_OK, all_ok = 0;
  if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, m->comm) != MPI_SUCCESS)
    rc = RP_ENODEV;
  else if (!all_ok)
    rc = RP_ENOMEM;
  if (rc == RP_OK)
    rc = gather(m, cnt, &desc, &succ);
  if (rc == RP_OK && m->rank == 0)
    rc = !n ? RP_EINVAL
            : simulate_all(desc, succ, cnt, nr, n, op_us,
                           m->p->nnode + m->p->nelided, rank_us);
  /* every rank learns rank 0's status and figures */
  int code = (int)rc;
  if (rc != RP_ENODEV &&
      (MPI_Bcast(&code, 1, MPI_INT, 0, m->comm) != MPI_SUCCESS ||
       (code == RP_OK &&
        MPI_Bcast(rank_us, nr, MPI_DOUBLE, 0, m->comm) != MPI_SUCCESS)))
    code = RP_ENODEV;
  free(cnt);
  free(desc);
  free(succ);
  return (rp_status)code;
}

/* ---- the network model ---- */

/* The least half round trip of `bytes` bytes between rank 0 and peer
 * (on rank 0; elsewhere 0), reps round trips after one unmeasured. */
static int half_trip(MPI_Comm c, int me, int peer, char *buf, int bytes,
                     unsigned reps, double *t, double *out) {
  for (unsigned k = 0; k <= reps; k++) {
    double t0 = MPI_Wtime();
    int st =
        me == 0
            ? MPI_Send(buf, bytes, MPI_BYTE, peer, 1, c) ||
                  MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, c, MPI_STATUS_IGNORE)
            : MPI_Recv(buf, bytes, MPI_BYTE, 0, 1, c, MPI_STATUS_IGNORE) ||
                  MPI_Send(buf, bytes, MPI_BYTE, 0, 1, c);
    if (st)
      return -1;
    if (k)
      t[k - 1] = (MPI_Wtime() - t0) * 0.5e6;
  }
  qsort(t, reps, sizeof *t, cmp_us);
  *out = t[0];
  return 0;
}

rp_status rp__mpi_net_measure(const rp_exec *x, unsigned reps, uint64_t bytes,
                              rp_mpi_net *out) {
  mstate *m = find_live(x);
  if (!m || !out)
    return RP_EINVAL;
  reps = reps ? reps : 50;
  bytes = bytes ? bytes : 1u << 20;
  if (bytes > (uint64_t)1 << 30)
    return RP_EINVAL;
  char *buf = calloc(bytes, 1);
  double *t = malloc(reps * sizeof *t);
  int ok = buf && t, all_ok = 0;
  MPI_Comm c;
  if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, m->comm) ||
      MPI_Comm_dup(m->comm, &c)) {
    free(buf);
    free(t);
    return RP_ENODEV;
  }
  double lat = -1, bw = -1, fig[2] = {0, out->gbps};
  int fail = !all_ok;
  for (int peer = 1; !fail && peer < m->nranks; peer++) {
    double small = 0, large = 0;
    if (m->rank == 0 || m->rank == peer)
      fail = half_trip(c, m->rank, peer, buf, 8, reps, t, &small) ||
             half_trip(c, m->rank, peer, buf, (int)bytes, reps, t, &large);
    if (m->rank == 0 && !fail) {
      double g = large > small ? (double)bytes / (large - small) * 1e-3 : 0;
      lat = lat < 0 || small < lat ? small : lat;
      bw = g > 0 && (bw < 0 || g < bw) ? g : bw;
    }
    int f = fail;
    MPI_Allreduce(&f, &fail, 1, MPI_INT, MPI_MAX, c);
  }
  if (m->rank == 0) {
    fig[0] = lat > 0 ? lat : 0;
    fig[1] = bw > 0 ? bw : out->gbps;
  }
  int st = MPI_Bcast(fig, 2, MPI_DOUBLE, 0, c);
  MPI_Comm_free(&c);
  free(buf);
  free(t);
  if (!all_ok)
    return RP_ENOMEM;
  if (fail || st != MPI_SUCCESS)
    return RP_ENODEV;
  out->latency_us = fig[0];
  out->gbps = fig[1];
  return RP_OK;
}
