/* The calibrated prediction: the serial and the overlapped replay predicted
 * with one machine model, so that their ratio compares like with like.
 *
 * Serial: run_us + Σ (cost + op_us) of the serial mode (+ host_task_us per
 * host task): one operation at a time, each paying its launch.
 *
 * Overlapped: an event-driven simulation in which work progresses at a
 * rate that depends on what runs at the same time (a fluid model):
 *  - each op first waits its mode's op_us (a node's delay on its device),
 *    or, in a host-issue mode (streams), cannot start before the host has
 *    issued it and every op before it: (rank + 1) * op_us;
 *  - copies, peer copies and host tasks hold their lane (h2d:N, d2h:N or
 *    copy:N, p2p:N, host) one at a time, the copy lanes of logical
 *    devices that share one physical device being one (its copy engines
 *    and its link); an h2d and a d2h of one physical device running
 *    together progress at the duplex bandwidths' share;
 *  - on a GPU (the model gives its multiprocessors), up to 128 kernels
 *    run side by side, each occupying the share f of the GPU its threads
 *    fill (threads / (multiprocessors * threads_per_mp), or blocks /
 *    multiprocessors, at most 1) and running at its speed alone while the
 *    shares fit; beyond, the GPU is shared out evenly (water-filling) and
 *    a kernel given g of its share f runs at g / f;
 *  - other kernels queue per physical device, which runs as many at once as
 *    its compute units (one on a GPU; a CPU group's threads), those
 *    running sharing the units; a kernel the backend splits (at least
 *    split_min points on a device with several units) may use them all,
 *    one it does not split uses one; the units are shared out evenly
 *    (water-filling), each kernel's work being its cost at one unit; a
 *    calibrated efficiency e (the share of a core each thread of the
 *    overlapped team gets) scales the units: k units run a split kernel
 *    k * e times faster than the serial replay's one thread;
 *  - a team of CPU threads (the model's host_units > 0: openmp) is one
 *    pool: host tasks run on any group's threads, copies that move bytes
 *    on their device's group, like kernels, each taking one thread (at e)
 *    and task_us of its time; ready operations start in program order (a
 *    list schedule, as the engine's); a split kernel also waits
 *    split_us; each thread gives e of a core with the whole team busy,
 *    a whole core alone (a linear mix in between); and the operations
 *    running at once share the team's
 *    memory bandwidth: each draws its bytes over its cost at one thread,
 *    and when they draw more than the team's bandwidth of their regime
 *    (within cache, or beyond it: the kernel's draw against the two one-
 *    thread bandwidths) the bandwidth is water-filled, the least drawing
 *    first (a roofline cap). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analysis.h"

/* The share of the cores a team must be able to count on for a
 * prediction: below it, other runnable tasks take a share of its cores
 * that changes by the second, and the prediction is withheld. */
#define RP__BUSY_SHARE 0.85
/* Kernels a GPU runs at once (Hopper: 128). */
#define RP__GPU_KERNELS 128

typedef struct sim {
  rp_analysis *a;
  const rp_model *m;
  const rp_model_mode *md;
  double *delay, *work, *elig;
  uint32_t *left; /* predecessors not ended */
  uint8_t *phase; /* 0 waiting, 1 delay, 2 work, 3 done */
  uint32_t *active, nactive;
  /* Queues of ready ops: one per exclusive lane (0 .. nlane-1), one per
   * physical device for kernels (nlane + device); each a heap by
   * priority, with how many of its ops run and how many may. */
  uint32_t nqueue;
  uint32_t **queue, *nq, *busy, *slots;
  uint32_t *future, nfuture; /* ready ops not yet issued (elig > t) */
  double *rate;              /* per op while in work */
  struct kitem *kt;          /* kernels in work, per event */
  double eff;                /* share of a core per unit: the calibrated
                              efficiency when the team has several
                              threads, else 1 */
  double eff_all;            /* pool: the calibrated efficiency (all of the
                              team busy); eff follows how many are */
  unsigned team;             /* pool: its threads */
  int pool;                  /* a team of CPU threads (host_units > 0) */
  uint32_t anyq;             /* pool: the queue of host tasks (any group) */
  int *res;                  /* pool: the resource an op runs on */
  int pres[RP_MAX_DEVICES];  /* pool: the resources of the team */
  unsigned npres;
  double *beta;     /* pool: bytes per us of work at one thread */
  uint8_t *fixed;   /* pool: the op's work is its profiled time within
                       the team (rp_analysis_opts.team_us): rate 1 */
  uint32_t *hold;   /* threads of its group an op holds while it runs */
  double *rel;      /* work left when it gives one of them back; <0: none */
  double mem_split; /* pool: beta at or above it is cache-bound */
} sim;

static int exclusive(const rp_analysis *a, uint32_t n) {
  return a->lanes[a->lane[n]].kind != RP__LANE_COMPUTE;
}

static int resource_of(const rp_model *m, int d) {
  if (d < 0 || d >= RP_MAX_DEVICES)
    return 0;
  return m->phys[d] >= 0 ? m->phys[d] : d;
}

static unsigned units_of(const rp_model *m, int d) {
  if (d < 0 || d >= RP_MAX_DEVICES)
    return 1;
  return m->units[d] > 1 ? m->units[d] : 1;
}

/* A kernel on a GPU: the model gives its multiprocessors and the device
 * has one compute unit. */
static int on_gpu(const rp_model *m, int d) {
  return m->multiprocessors > 0 && units_of(m, d) <= 1;
}

/* Thread blocks (blocks 1) or threads (blocks 0) of a kernel as the cuda
 * backend launches it: the kernel's block shape, else 256 x 1 x 1,
 * 32 x 8 x 1 or 32 x 4 x 4 by the rank of its index space. */
static double blocks_of(const rp_graph *g, rp_node i, int blocks) {
  const rp__op *op = &g->op[i];
  rp_dims sp = rp__op_space(g, i);
  uint64_t n[3] = {sp.x, sp.y, sp.z}, b[3] = {256, 1, 1};
  const unsigned *kb = op->kernel ? op->kernel->block : NULL;
  if (kb && (kb[0] || kb[1] || kb[2])) {
    for (int i = 0; i < 3; i++)
      b[i] = kb[i] ? kb[i] : 1;
  } else if (n[2] > 1) {
    b[0] = 32, b[1] = 4, b[2] = 4;
  } else if (n[1] > 1) {
    b[0] = 32, b[1] = 8;
  }
  double k = 1;
  for (int i = 0; i < 3; i++)
    /* NOLINTNEXTLINE(bugprone-integer-division): a whole number of blocks (ceiling division), on purpose */
    k *= (double)((n[i] + b[i] - 1) / b[i] * (blocks ? 1 : b[i]));
  return k;
}

/* The share of its GPU a kernel occupies alone: its threads over the
 * threads the GPU holds at once (multiprocessors * threads per
 * multiprocessor), or, without threads_per_mp, its blocks over the
 * multiprocessors; at most all of it. */
static double gpu_share(const sim *s, uint32_t n) {
  const rp_graph *g = s->a->g;
  double f = blocks_of(g, n, 1) / (double)s->m->multiprocessors;
  if (s->m->threads_per_mp > 0)
    f = blocks_of(g, n, 0) /
        ((double)s->m->multiprocessors * s->m->threads_per_mp);
  return f < 1 ? f : 1;
}

/* Units a kernel can use (effective units: scaled by the calibrated
 * efficiency of a split kernel); on a GPU, the share it occupies. */
static double width(const sim *s, uint32_t n) {
  const rp__op *op = &s->a->g->op[n];
  if (on_gpu(s->m, op->device))
    return gpu_share(s, n);
  unsigned u = units_of(s->m, op->device);
  rp_dims d = rp__op_space(s->a->g, n);
  uint64_t pts = d.x * d.y * d.z;
  double e = s->eff;
  return (u > 1 && pts >= s->m->split_min ? (double)u : 1) * e;
}

/* The op's work (µs at one unit) under the model: modelled copies use the
 * model's links; every other cost is the analysis's. */
static double work_of(const sim *s, uint32_t n) {
  const rp_analysis *a = s->a;
  const rp__op *op = &a->g->op[n];
  if (a->source[n] != RP_COST_MODELLED)
    return a->cost[n];
  const rp_model_link *l = op->type == RP_OP_COPY_H2D   ? &s->m->h2d
                           : op->type == RP_OP_COPY_D2H ? &s->m->d2h
                                                        : &s->m->p2p;
  if (!(l->gbps > 0))
    return 0;
  return l->latency_us + (double)rp__copy_bytes(a->g, n) / (l->gbps * 1e3);
}

/* A kernel the backend splits over its device's units. */
static int split_kernel(const sim *s, uint32_t n) {
  const rp__op *op = &s->a->g->op[n];
  if (op->type != RP_OP_KERNEL || on_gpu(s->m, op->device) ||
      units_of(s->m, op->device) < 2)
    return 0;
  rp_dims d = rp__op_space(s->a->g, n);
  return d.x * d.y * d.z >= s->m->split_min;
}

/* A copy the backend elides (lanes.c: a CPU backend's copy without a
 * cost of its own): it costs nothing, not even an overhead. */
static int elided(const sim *s, uint32_t n) { return s->a->elided[n]; }

/* Whether op n's input likely comes from another thread: an op joining
 * several predecessors, or one of the later successors of an op that
 * fans out (its first successor continues on its thread). Structural,
 * so that it holds for any engine that keeps chains on one thread. */
static int crosses(const sim *s, uint32_t n) {
  uint32_t np, ns;
  const rp_node *pr = rp_graph_preds(s->a->g, n, &np);
  if (np >= 2)
    return 1;
  if (np == 0)
    return 0;
  const rp_node *su = rp_graph_succs(s->a->g, pr[0], &ns);
  for (uint32_t i = 0; i < ns; i++)
    if (su[i] < n)
      return 1;
  return 0;
}

static double op_delay(const sim *s, uint32_t n, const rp_model_mode *md) {
  if (s->pool && elided(s, n))
    return 0;
  double d = md && !md->host_issue ? md->op_us : 0;
  if (s->a->g->op[n].type == RP_OP_HOST)
    d += s->m->host_task_us;
  if (s->pool && split_kernel(s, n) && !s->fixed[n])
    d += s->m->split_us; /* a team profile times the split in */
  if (s->pool && s->team > 1 && s->m->edge_us > 0 && crosses(s, n))
    d += s->m->edge_us;
  return d;
}

/* Higher priority first: larger bottom level, then program order; a team
 * of threads takes ready operations in program order (its engine's list
 * schedule). */
static int prior(const sim *s, uint32_t x, uint32_t y) {
  const rp_analysis *a = s->a;
  if (s->pool)
    return x < y;
  return a->bottom[x] > a->bottom[y] || (a->bottom[x] == a->bottom[y] && x < y);
}

/* A pool operation: on a team of threads, everything but transfers
 * between ranks (net lanes). */
static int in_pool(const sim *s, uint32_t n) {
  const rp_analysis *a = s->a;
  const rp__lane *l = &a->lanes[a->lane[n]];
  return s->pool && (l->kind == RP__LANE_COMPUTE || l->kind == RP__LANE_HOST ||
                     l->device >= 0);
}

/* Queues: the analysis's lanes (the host lane, net lanes), then one per
 * physical device for kernels, then one per (copy lane kind, physical
 * device): copies of logical devices that share one physical device share
 * its copy engines and its link, as kernels share its compute. */
static uint32_t queue_of(const sim *s, uint32_t n) {
  const rp_analysis *a = s->a;
  if (in_pool(s, n)) {
    const rp__op *op = &a->g->op[n];
    if (op->type == RP_OP_HOST)
      return s->anyq;
    return a->nlane + (uint32_t)resource_of(s->m, op->device);
  }
  if (!exclusive(a, n))
    return a->nlane + (uint32_t)resource_of(s->m, a->g->op[n].device);
  const rp__lane *l = &a->lanes[a->lane[n]];
  if (l->device < 0 || l->kind == RP__LANE_HOST)
    return a->lane[n];
  return a->nlane + RP_MAX_DEVICES + (uint32_t)l->kind * RP_MAX_DEVICES +
         (uint32_t)resource_of(s->m, l->device);
}

static void q_push(sim *s, uint32_t q, uint32_t n) {
  uint32_t *h = s->queue[q], i = s->nq[q]++;
  while (i > 0) {
    uint32_t p = (i - 1) / 2;
    if (!prior(s, n, h[p]))
      break;
    h[i] = h[p];
    i = p;
  }
  h[i] = n;
}

static uint32_t q_pop(sim *s, uint32_t q) {
  uint32_t *h = s->queue[q], top = h[0], x = h[--s->nq[q]], i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= s->nq[q])
      break;
    if (c + 1 < s->nq[q] && prior(s, h[c + 1], h[c]))
      c++;
    if (!prior(s, h[c], x))
      break;
    h[i] = h[c];
    i = c;
  }
  if (s->nq[q])
    h[i] = x;
  return top;
}

/* The queue whose slot op n holds while it runs: its own, or, for a host
 * task of the pool, the group it was given. */
static uint32_t slot_of(const sim *s, uint32_t n) {
  if (s->pool && s->res[n] >= 0)
    return s->a->nlane + (uint32_t)s->res[n];
  return queue_of(s, n);
}

static void begin(sim *s, uint32_t n, double t) {
  s->a->mstart[n] = t;
  s->phase[n] = 1;
  s->active[s->nactive++] = n;
  uint32_t q = slot_of(s, n);
  /* A split kernel timed within the team ran over as many threads as it
   * ran faster than alone: u = its serial cost c over its team time t.
   * With u threads free it holds floor(u) of them for its time and one
   * more for the fraction u - floor(u) of it (the thread time it used,
   * c), so that the prediction moves smoothly with u instead of jumping
   * where u crosses a half. With fewer free, k, it holds them all and
   * takes c / k (its chunks shared by k threads: c on one, not the team
   * time it got with more). A team time near the serial cost says the
   * other threads ran other operations meanwhile: it holds one. */
  s->hold[n] = 1;
  s->rel[n] = -1;
  if (s->fixed[n] && split_kernel(s, n)) {
    const double t = s->a->tcost[n], c = s->a->cost[n];
    const uint32_t free_threads = s->slots[q] - s->busy[q];
    const double used = t > 0 && c > t ? c / t : 1;
    if (used > free_threads) {
      s->hold[n] = free_threads;
      s->work[n] += c / free_threads - t;
    } else {
      const double whole = floor(used);
      s->hold[n] = (uint32_t)whole;
      if (used - whole > 1e-9) { /* the extra thread, for that share */
        s->hold[n]++;
        s->rel[n] = s->work[n] - (used - whole) * t;
      }
    }
  }
  s->busy[q] += s->hold[n];
}

/* The future ops form a binary min-heap by (elig, id). */
static int earlier(const sim *s, uint32_t x, uint32_t y) {
  return s->elig[x] < s->elig[y] || (s->elig[x] == s->elig[y] && x < y);
}

static void fut_push(sim *s, uint32_t n) {
  uint32_t i = s->nfuture++;
  while (i > 0) {
    uint32_t p = (i - 1) / 2;
    if (!earlier(s, n, s->future[p]))
      break;
    s->future[i] = s->future[p];
    i = p;
  }
  s->future[i] = n;
}

static uint32_t fut_pop(sim *s) {
  uint32_t top = s->future[0], x = s->future[--s->nfuture], i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= s->nfuture)
      break;
    if (c + 1 < s->nfuture && earlier(s, s->future[c + 1], s->future[c]))
      c++;
    if (!earlier(s, s->future[c], x))
      break;
    s->future[i] = s->future[c];
    i = c;
  }
  if (s->nfuture)
    s->future[i] = x;
  return top;
}

/* Op n is ready (all predecessors ended) at time t. */
static void ready(sim *s, uint32_t n, double t) {
  double e = s->elig[n] > t ? s->elig[n] : t;
  s->elig[n] = e;
  fut_push(s, n);
}

/* Moves issued ready ops to their lanes and starts what can start. */
static void dispatch(sim *s, double t, double eps) {
  rp_analysis *a = s->a;
  (void)a;
  while (s->nfuture && s->elig[s->future[0]] <= t + eps) {
    uint32_t n = fut_pop(s);
    q_push(s, queue_of(s, n), n);
  }
  /* A pool's groups: a free thread takes the first ready operation in
   * program order, its group's own or a host task (any group's). */
  if (s->pool)
    for (unsigned i = 0; i < s->npres; i++) {
      uint32_t q = s->a->nlane + (uint32_t)s->pres[i], aq = s->anyq;
      while (s->busy[q] < s->slots[q] && (s->nq[q] || s->nq[aq])) {
        int any = s->nq[aq] && (!s->nq[q] || s->queue[aq][0] < s->queue[q][0]);
        uint32_t n = q_pop(s, any ? aq : q);
        if (any)
          s->res[n] = s->pres[i];
        begin(s, n, t);
      }
    }
  for (uint32_t q = 0; q < s->nqueue; q++)
    while (q != s->anyq && s->nq[q] && s->busy[q] < s->slots[q])
      begin(s, q_pop(s, q), t);
}

/* A kernel in work, for sharing out its device's units. */
typedef struct kitem {
  int res;
  double w;
  uint32_t n;
} kitem;

static int by_resource_width(const void *x, const void *y) {
  const kitem *p = x, *q = y;
  if (p->res != q->res)
    return p->res < q->res ? -1 : 1;
  if (p->w != q->w)
    return p->w < q->w ? -1 : 1;
  return p->n < q->n ? -1 : p->n > q->n;
}

static int by_beta(const void *x, const void *y) {
  const kitem *p = x, *q = y;
  if (p->w != q->w)
    return p->w < q->w ? -1 : 1;
  return p->n < q->n ? -1 : p->n > q->n;
}

/* The pool's memory bandwidth (a roofline cap): the k operations of s->kt
 * running draw rate * beta bytes per us each; in each regime (within
 * cache, beyond it) the team's bandwidth is water-filled among them, the
 * least drawing per unit of rate first, each given at most its draw and
 * at most its rate's share of what is left. */
static void share_bandwidth(sim *s, uint32_t k) {
  const rp_model *m = s->m;
  kitem *kt = s->kt;
  for (int reg = 0; reg < 2; reg++) {
    double cap = (reg ? m->cache_gbps : m->mem_gbps) * 1e3; /* B/us */
    double one = (reg ? m->cache1_gbps : m->mem1_gbps) * 1e3;
    if (!(cap > 0))
      continue;
    /* The team streams at least as fast as one of its threads alone (a
     * calibration on a busy machine can time it slower). */
    cap = cap > one ? cap : one;
    uint32_t j = 0;
    double draw = 0, wsum = 0;
    for (uint32_t i = 0; i < k; i++) {
      uint32_t n = kt[i].n;
      double b = s->beta[n];
      if (!(b > 0) || (b >= s->mem_split) != reg)
        continue;
      draw += s->rate[n] * b;
      wsum += s->rate[n];
      s->kt[k + j].n = n;
      s->kt[k + j].w = b;
      j++;
    }
    if (draw <= cap || j == 0)
      continue;
    kitem *v = s->kt + k;
    qsort(v, j, sizeof *v, by_beta);
    for (uint32_t i = 0; i < j; i++) {
      uint32_t n = v[i].n;
      double r = s->rate[n], want = r * v[i].w;
      double fair = wsum > 0 ? cap * r / wsum : 0;
      double got = want < fair ? want : fair;
      s->rate[n] = v[i].w > 0 ? got / v[i].w : r;
      cap -= got;
      wsum -= r;
    }
  }
}

/* A pool's share of a core per thread with the operations now in work:
 * the calibrated one with the whole team busy, a whole core with one
 * thread busy (the serial replay's: a lone thread has the clock and the
 * machine's share to itself), in between linearly in the busy threads. */
static void pool_eff(sim *s) {
  if (!s->pool || s->team < 2 || !(s->eff_all < 1))
    return;
  double busy = 0;
  for (uint32_t i = 0; i < s->nactive; i++) {
    uint32_t n = s->active[i];
    if (s->phase[n] != 2 || !in_pool(s, n))
      continue;
    busy += split_kernel(s, n) ? units_of(s->m, s->a->g->op[n].device) : 1;
  }
  if (busy > s->team)
    busy = s->team;
  if (busy < 1)
    busy = 1;
  s->eff = 1 - (1 - s->eff_all) * (busy - 1) / (s->team - 1);
}

/* Rates of the ops in work: compute units shared out per physical device,
 * the duplex share for copies. */
static void rates(sim *s) {
  rp_analysis *a = s->a;
  const rp_model *m = s->m;
  pool_eff(s);
  int h2d_on[RP_MAX_DEVICES] = {0}, d2h_on[RP_MAX_DEVICES] = {0};
  for (uint32_t i = 0; i < s->nactive; i++) {
    uint32_t n = s->active[i];
    const rp__op *op = &a->g->op[n];
    if (s->phase[n] != 2 || op->device < 0 || op->device >= RP_MAX_DEVICES)
      continue;
    if (op->type == RP_OP_COPY_H2D)
      h2d_on[resource_of(m, op->device)] = 1;
    else if (op->type == RP_OP_COPY_D2H)
      d2h_on[resource_of(m, op->device)] = 1;
  }
  double fh = m->duplex_h2d_gbps > 0 && m->h2d.gbps > 0
                  ? fmin(1, m->duplex_h2d_gbps / m->h2d.gbps)
                  : 1;
  double fd = m->duplex_d2h_gbps > 0 && m->d2h.gbps > 0
                  ? fmin(1, m->duplex_d2h_gbps / m->d2h.gbps)
                  : 1;
  /* Kernels per physical device, by width (water-filling): sorted by
   * (device, width), each group shares its device's capacity. */
  uint32_t k = 0;
  kitem *kt = s->kt;
  for (uint32_t i = 0; i < s->nactive; i++) {
    uint32_t n = s->active[i];
    if (s->phase[n] != 2)
      continue;
    if (in_pool(s, n) && s->fixed[n]) {
      s->rate[n] = 1; /* its time within the team: contention in */
    } else if (in_pool(s, n)) {
      kt[k].res =
          s->res[n] >= 0 ? s->res[n] : resource_of(m, a->g->op[n].device);
      kt[k].w = a->g->op[n].type == RP_OP_KERNEL ? width(s, n) : s->eff;
      kt[k++].n = n;
    } else if (a->g->op[n].type == RP_OP_KERNEL) {
      kt[k].res = resource_of(m, a->g->op[n].device);
      kt[k].w = width(s, n);
      kt[k++].n = n;
    }
  }
  qsort(kt, k, sizeof *kt, by_resource_width);
  for (uint32_t lo = 0; lo < k;) {
    uint32_t hi = lo;
    double cap = 0;
    int gpu = !in_pool(s, kt[lo].n) && on_gpu(m, a->g->op[kt[lo].n].device);
    while (hi < k && kt[hi].res == kt[lo].res) {
      double c = s->slots[a->nlane + (uint32_t)kt[hi].res];
      if (!s->pool)
        c = units_of(m, a->g->op[kt[hi].n].device);
      c *= s->eff;
      cap = c > cap ? c : cap;
      hi++;
    }
    if (gpu) /* the whole GPU; a kernel's work is its time alone */
      cap = 1;
    for (uint32_t j = lo; j < hi; j++) {
      double share = cap / (double)(hi - j);
      double got = kt[j].w < share ? kt[j].w : share;
      s->rate[kt[j].n] = gpu ? got / kt[j].w : got;
      cap -= got;
    }
    lo = hi;
  }
  if (s->pool)
    share_bandwidth(s, k);
  for (uint32_t i = 0; i < s->nactive; i++) {
    uint32_t n = s->active[i];
    const rp__op *op = &a->g->op[n];
    if (s->phase[n] != 2 || op->type == RP_OP_KERNEL || in_pool(s, n))
      continue;
    s->rate[n] = 1;
    if (a->opts.copy_engines == 2 && op->device >= 0 &&
        op->device < RP_MAX_DEVICES && h2d_on[resource_of(m, op->device)] &&
        d2h_on[resource_of(m, op->device)]) {
      if (op->type == RP_OP_COPY_H2D)
        s->rate[n] = fh;
      else if (op->type == RP_OP_COPY_D2H)
        s->rate[n] = fd;
    }
  }
}

static void finish(sim *s, uint32_t i, double t) {
  rp_analysis *a = s->a;
  uint32_t n = s->active[i], ns;
  s->active[i] = s->active[--s->nactive];
  s->phase[n] = 3;
  a->mend[n] = t;
  s->busy[slot_of(s, n)] -= s->hold[n];
  const rp_node *succ = rp_graph_succs(a->g, n, &ns);
  for (uint32_t j = 0; j < ns; j++)
    if (--s->left[succ[j]] == 0)
      ready(s, succ[j], t);
}

static rp_status simulate(sim *s, double *makespan) {
  rp_analysis *a = s->a;
  uint32_t nop = a->nop, done = 0;
  for (uint32_t n = 0; n < nop; n++) {
    uint32_t np;
    rp_graph_preds(a->g, n, &np);
    s->left[n] = np;
    s->fixed[n] = s->pool && a->tcost && a->tcost[n] >= 0 && in_pool(s, n) &&
                  !elided(s, n);
    s->delay[n] = op_delay(s, n, s->md);
    s->work[n] = s->fixed[n] ? a->tcost[n] : work_of(s, n);
    a->sum.team_costs += s->fixed[n];
    if (!isfinite(s->work[n]))
      return RP_EINVAL;
    if (s->pool && in_pool(s, n)) {
      /* Bytes per us of work at one thread, before the pool's own cost
       * per task (which touches no data) is added. */
      double b = rp__op_bytes(a->g, n);
      s->beta[n] =
          s->work[n] > 0 && isfinite(b) && !s->fixed[n] ? b / s->work[n] : 0;
      if (!elided(s, n))
        s->work[n] += s->m->task_us;
      s->res[n] = -1;
    }
    s->elig[n] = s->md && s->md->host_issue ? (n + 1) * s->md->op_us : 0;
    if (np == 0)
      ready(s, n, 0);
  }
  double t = 0;
  while (done < nop) {
    double eps = 1e-12 * (t > 1 ? t : 1);
    dispatch(s, t, eps);
    /* Settle: delays and work that are over now. */
    int moved = 0;
    for (uint32_t i = 0; i < s->nactive;) {
      uint32_t n = s->active[i];
      if (s->phase[n] == 1 && s->delay[n] <= eps)
        s->phase[n] = 2;
      if (s->phase[n] == 2 && s->rel[n] >= 0 && s->work[n] <= s->rel[n] + eps) {
        s->busy[slot_of(s, n)]--; /* its extra thread's share is done */
        s->hold[n]--;
        s->rel[n] = -1;
        moved = 1;
      }
      if (s->phase[n] == 2 && s->work[n] <= eps) {
        finish(s, i, t);
        done++;
        moved = 1;
        continue;
      }
      i++;
    }
    if (moved)
      continue;
    rates(s);
    double dt = INFINITY;
    for (uint32_t i = 0; i < s->nactive; i++) {
      uint32_t n = s->active[i];
      double d = s->phase[n] == 1 ? s->delay[n] : s->work[n] / s->rate[n];
      if (s->phase[n] == 2 && s->rel[n] >= 0)
        d = (s->work[n] - s->rel[n]) / s->rate[n];
      dt = d < dt ? d : dt;
    }
    if (s->nfuture && s->elig[s->future[0]] - t < dt)
      dt = s->elig[s->future[0]] - t;
    if (!isfinite(dt))
      return RP_EINVAL; /* nothing runs, nothing comes: cannot happen */
    if (dt < 0)
      dt = 0;
    for (uint32_t i = 0; i < s->nactive; i++) {
      uint32_t n = s->active[i];
      if (s->phase[n] == 1) {
        s->delay[n] -= dt;
      } else {
        double w = s->work[n] / s->rate[n];
        s->work[n] = w <= dt ? 0 : s->work[n] - dt * s->rate[n];
        if (s->rel[n] >= 0 && s->work[n] < s->rel[n])
          s->work[n] = s->rel[n]; /* the release that set dt: exactly now */
      }
    }
    /* The op that set dt ends its phase exactly now. */
    t += dt;
    for (uint32_t i = 0; i < s->nactive; i++) {
      uint32_t n = s->active[i];
      if (s->phase[n] == 1 && s->delay[n] <= 1e-12 * (t > 1 ? t : 1))
        s->delay[n] = 0;
    }
  }
  *makespan = t;
  return RP_OK;
}

/* The overlapped mode predicted (@p *md: the one named, else the model's
 * first that is not "serial") and the serial baseline (@p *ms): RP_OK, or
 * RP_ENOTFOUND for a name the model lacks. */
static rp_status pick_modes(const rp_analysis *a, const rp_model *m,
                            const rp_model_mode **md,
                            const rp_model_mode **ms) {
  const char *oname = a->opts.mode, *sname = a->opts.serial_mode;
  *md = NULL;
  if (oname)
    *md = rp_model_find_mode(m, oname);
  else
    for (unsigned i = 0; i < m->nmode && i < RP_MODEL_MAX_MODES && !*md; i++)
      if (strcmp(m->mode[i].name, "serial"))
        *md = &m->mode[i];
  *ms = rp_model_find_mode(m, sname ? sname : "serial");
  if ((oname && !*md) || (sname && !*ms))
    return RP_ENOTFOUND;
  return RP_OK;
}

/* The simulation's arrays (and the analysis' mstart, mend): 0, or -1 out
 * of memory (sim_free frees what was taken). */
static int sim_alloc(sim *s, rp_analysis *a, const rp_model *m) {
  uint32_t nop = a->nop, nl = a->nlane;
  size_t k = nop ? nop : 1;
  a->mstart = malloc(sizeof *a->mstart * k);
  a->mend = malloc(sizeof *a->mend * k);
  s->delay = malloc(sizeof *s->delay * k);
  s->work = malloc(sizeof *s->work * k);
  s->elig = malloc(sizeof *s->elig * k);
  s->rate = malloc(sizeof *s->rate * k);
  s->left = malloc(sizeof *s->left * k);
  s->phase = calloc(k, 1);
  s->active = malloc(sizeof *s->active * k);
  s->future = malloc(sizeof *s->future * k);
  s->kt = malloc(sizeof *s->kt * 2 * k);
  s->pool = m->host_units > 0 && m->multiprocessors == 0;
  s->res = malloc(sizeof *s->res * k);
  s->beta = calloc(k, sizeof *s->beta);
  s->fixed = calloc(k, 1);
  s->hold = calloc(k, sizeof *s->hold);
  s->rel = malloc(sizeof *s->rel * k);
  s->nqueue = nl + RP_MAX_DEVICES + RP__LANE_KINDS * RP_MAX_DEVICES + 1;
  s->anyq = s->pool ? s->nqueue - 1 : UINT32_MAX;
  /* Within cache, a thread streams faster than beyond it: an operation
   * drawing at least the geometric mean of the two is cache-bound. */
  s->mem_split = m->mem1_gbps > 0 && m->cache1_gbps > m->mem1_gbps
                     ? sqrt(m->mem1_gbps * m->cache1_gbps) * 1e3
                     : INFINITY;
  s->nq = calloc(s->nqueue, sizeof *s->nq);
  s->busy = calloc(s->nqueue, sizeof *s->busy);
  s->slots = calloc(s->nqueue, sizeof *s->slots);
  s->queue = calloc(s->nqueue, sizeof *s->queue);
  if (!a->mstart || !a->mend || !s->delay || !s->work || !s->elig || !s->rate ||
      !s->left || !s->phase || !s->active || !s->future || !s->kt || !s->nq ||
      !s->busy || !s->slots || !s->queue || !s->res || !s->beta || !s->fixed ||
      !s->hold || !s->rel)
    return -1;
  for (uint32_t n = 0; n < nop; n++) {
    s->res[n] = -1;
    s->rel[n] = -1;
  }
  return 0;
}

static void sim_free(sim *s) {
  if (s->queue)
    for (uint32_t q = 0; q < s->nqueue; q++)
      free(s->queue[q]);
  free(s->queue);
  free(s->nq);
  free(s->busy);
  free(s->slots);
  free(s->kt);
  free(s->res);
  free(s->beta);
  free(s->fixed);
  free(s->hold);
  free(s->rel);
  free(s->future);
  free(s->active);
  free(s->phase);
  free(s->left);
  free(s->rate);
  free(s->elig);
  free(s->work);
  free(s->delay);
}

/* Queues: each holds at most its own ops. A lane runs one op at a time; a
 * physical device as many kernels as its most units (a CPU group's
 * threads, one task each; a GPU, one kernel filling it, its work shared
 * with the next only as one ends: kernels that fill a device gain nothing
 * from running together). Then the team that splits kernels. 0, or -1 out
 * of memory. */
static int sim_queues(sim *s) {
  const rp_model *m = s->m;
  uint32_t nop = s->a->nop, nl = s->a->nlane;
  uint32_t *per = calloc(s->nqueue, sizeof *per);
  if (!per)
    return -1;
  for (uint32_t n = 0; n < nop; n++)
    per[queue_of(s, n)]++;
  for (uint32_t q = 0; q < s->nqueue; q++) {
    s->slots[q] = 1;
    if (per[q] && !(s->queue[q] = malloc(sizeof **s->queue * per[q]))) {
      free(per);
      return -1;
    }
  }
  for (int d = 0; d < RP_MAX_DEVICES; d++) {
    uint32_t q = nl + (uint32_t)resource_of(m, d); /* kernels */
    unsigned k = on_gpu(m, d) ? RP__GPU_KERNELS : units_of(m, d);
    if (k > s->slots[q])
      s->slots[q] = k;
  }
  /* The team: the units of the CPU devices that run kernels; a pool: its
   * groups (the devices given units), all its threads. */
  uint32_t team = 0;
  uint8_t seen[RP_MAX_DEVICES] = {0};
  for (int d = 0; d < RP_MAX_DEVICES; d++) {
    int r = resource_of(m, d);
    if (s->pool && m->units[d] > 0 && !seen[r]) {
      seen[r] = 1;
      s->pres[s->npres++] = r;
    } else if (!s->pool && per[nl + (uint32_t)r] && !on_gpu(m, d) && !seen[r]) {
      seen[r] = 1;
      team += s->slots[nl + (uint32_t)r];
    }
  }
  if (s->pool && !s->npres) { /* a model without groups: one of them all */
    s->pres[s->npres++] = 0;
    if (s->slots[nl] < m->host_units)
      s->slots[nl] = m->host_units;
  }
  if (s->pool)
    team = m->host_units;
  s->eff = team > 1 && m->split_efficiency > 0 ? m->split_efficiency : 1;
  s->eff_all = s->eff;
  s->team = team;
  free(per);
  return 0;
}

/* The serial replay: one operation at a time in program order. On a GPU
 * whose serial mode the host issues (one stream), the host issues op n at
 * (n + 1) * op_us while the GPU runs the ones before: an op starts once
 * issued and once its predecessor ended. Elsewhere (a CPU thread issues
 * and runs) each op pays op_us on top of its work. */
static double serial_us(const sim *s, const rp_model_mode *ms) {
  const rp_analysis *a = s->a;
  const rp_model *m = s->m;
  double serial = 0;
  int pipe = m->multiprocessors > 0 && ms && ms->host_issue;
  for (uint32_t n = 0; n < a->nop; n++) {
    double w =
        work_of(s, n) + (a->g->op[n].type == RP_OP_HOST ? m->host_task_us : 0);
    if (pipe) {
      double issued = (double)(n + 1) * ms->op_us;
      serial = (issued > serial ? issued : serial) + w;
    } else {
      serial += w + (ms ? ms->op_us : 0);
    }
  }
  return serial;
}

/* The backend replays one operation at a time in program order (the
 * reference): the overlapped replay is the serial one. */
static void in_order_times(const sim *s, const rp_model_mode *ms) {
  rp_analysis *a = s->a;
  double t = 0;
  for (uint32_t n = 0; n < a->nop; n++) {
    a->mstart[n] = t;
    t += work_of(s, n) +
         (a->g->op[n].type == RP_OP_HOST ? s->m->host_task_us : 0) +
         (ms ? ms->op_us : 0);
    a->mend[n] = t;
  }
}

/* The prediction into the analysis' summary and model fields. */
static void record_prediction(rp_analysis *a, const rp_model *m,
                              const rp_model_mode *md, const rp_model_mode *ms,
                              double serial, double span) {
  rp_summary *sum = &a->sum;
  sum->modelled = 1;
  snprintf(a->mbackend, sizeof a->mbackend, "%s", m->backend);
  snprintf(a->mmachine, sizeof a->mmachine, "%s", m->machine);
  snprintf(a->mmode, sizeof a->mmode, "%s", md ? md->name : "none");
  snprintf(a->msmode, sizeof a->msmode, "%s", ms ? ms->name : "none");
  a->mcalibrated = m->calibrated;
  sum->model_serial_us = serial + (ms ? ms->run_us : 0);
  sum->model_overlap_us = span + (md ? md->run_us : 0);
  sum->model_speedup = sum->model_overlap_us > 0
                           ? sum->model_serial_us / sum->model_overlap_us
                           : 1;
  sum->predicted_speedup = sum->model_speedup; /* the headline */
  sum->calibrated = m->calibrated;
  a->mthreads = m->host_units;
  a->mload = m->load;
  /* A busy machine: the team would get less than RP__BUSY_SHARE of the
   * cores it counts on (other runnable tasks besides it), by a share that
   * changes by the second; the quiet machine's figure is kept but withheld
   * (the reports say why). An in-order replay is 1.00x on any machine. */
  if (m->load_measured && !m->in_order && m->usable_cpus) {
    double team = m->host_units > 0 ? m->host_units : 1;
    if (team > m->usable_cpus)
      team = m->usable_cpus;
    sum->runnable = m->runnable;
    sum->usable_cpus = m->usable_cpus;
    sum->withheld = m->usable_cpus / (m->runnable + team) < RP__BUSY_SHARE;
  }
  /* The team's share of its cores measured during its profiled replays:
   * the same rule, from what the team really got. */
  sum->team_share = a->opts.team_share;
  if (!m->in_order && m->host_units > 1 && a->opts.team_share > 0 &&
      a->opts.team_share < RP__BUSY_SHARE)
    sum->withheld = 1;
  a->meff = m->split_efficiency;
  a->mcpus = m->cpus;
}

rp_status rp__analysis_predict(rp_analysis *a, const rp_model *m) {
  const rp_model_mode *md, *ms;
  rp_status st = pick_modes(a, m, &md, &ms);
  if (st != RP_OK)
    return st;
  sim s = {.a = a, .m = m, .md = md};
  st = RP_ENOMEM;
  if (sim_alloc(&s, a, m) || sim_queues(&s))
    goto out;
  double span = 0;
  if ((st = simulate(&s, &span)) != RP_OK)
    goto out;
  double serial = serial_us(&s, ms);
  if (m->in_order) {
    in_order_times(&s, ms);
    span = serial;
    md = ms;
  }
  record_prediction(a, m, md, ms, serial, span);
  st = isfinite(a->sum.model_serial_us) ? RP_OK : RP_EINVAL;
out:
  sim_free(&s);
  return st;
}
