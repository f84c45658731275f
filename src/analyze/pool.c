/* Identical operations share their team ratio (issue 33): an operation's
 * time within the team is taken as its serial cost times the median, over
 * the operations identical to it, of their team time over their serial
 * cost. One operation's team time comes from few replays, each of which
 * can catch a preemption or a neighbour's burst of traffic (on the 2-core
 * VM a jacobi2d block's ratio ranged 0.80-1.38 between blocks of one
 * run); the median over its identical operations (64 in that run) does
 * not move with one of them, and two runs of one graph agree. A change
 * that reaches every operation of a kind (a kernel slower within the
 * team) moves the median and the prediction with it; what is lost is a
 * difference between two identical operations that only their place in
 * the schedule makes, which the simulation models anyway (what runs
 * beside them). Taken as a ratio to the serial cost, the team time moves
 * with that cost, so a serial cost and the team time of one operation
 * cannot disagree by chance: a round that times one operation slow in
 * the serial profile slows it in both replays predicted. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/analysis.h"

/* What makes two operations identical: type, device, name, kernel, index
 * space and the bytes they move. */
typedef struct pkey {
  uint32_t n;
  int type, device;
  const char *name, *kernel;
  rp_dims space;
  double bytes;
} pkey;

static int str_cmp(const char *x, const char *y) {
  return strcmp(x ? x : "", y ? y : "");
}

static int key_cmp(const pkey *p, const pkey *q) {
  int c;
  if (p->type != q->type)
    return p->type < q->type ? -1 : 1;
  if (p->device != q->device)
    return p->device < q->device ? -1 : 1;
  if ((c = str_cmp(p->name, q->name)) || (c = str_cmp(p->kernel, q->kernel)))
    return c;
  const uint64_t u[3] = {p->space.x, p->space.y, p->space.z};
  const uint64_t v[3] = {q->space.x, q->space.y, q->space.z};
  for (int i = 0; i < 3; i++)
    if (u[i] != v[i])
      return u[i] < v[i] ? -1 : 1;
  if (p->bytes != q->bytes)
    return p->bytes < q->bytes ? -1 : 1;
  return 0;
}

/* By key, then program order (a stable, total order). */
static int by_key(const void *x, const void *y) {
  const pkey *p = x, *q = y;
  int c = key_cmp(p, q);
  return c ? c : (p->n < q->n ? -1 : p->n > q->n);
}

static int by_value(const void *x, const void *y) {
  const double p = *(const double *)x, q = *(const double *)y;
  return p < q ? -1 : p > q;
}

/* The median of v[0 .. k-1] (sorted in place); k > 0. */
static double median(double *v, uint32_t k) {
  qsort(v, k, sizeof *v, by_value);
  return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

/* Op n has a team time and a serial cost to hold it against, and a name
 * that says what it does: a host task recorded without one is named
 * "host" whatever its function (which a graph file does not keep, so the
 * function cannot tell them apart there: the CLI and the library would
 * disagree), so it keeps its own team time. */
static int pooled(const rp_analysis *a, uint32_t n) {
  const rp__op *op = &a->g->op[n];
  if (op->type == RP_OP_HOST && (!op->name || !strcmp(op->name, "host")))
    return 0;
  return a->tcost[n] >= 0 && a->cost[n] > 0 && !a->elided[n];
}

/* One run of identical operations p[0 .. k-1]: each op's team time (and
 * its range's ends) its serial cost times the run's median ratio. */
static void pool_run(rp_analysis *a, const pkey *p, uint32_t k, double *r) {
  double *const t[3] = {a->tcost, a->tlo, a->thi};
  double f[3];
  for (int j = 0; j < 3; j++) {
    for (uint32_t i = 0; i < k; i++)
      r[i] = t[j][p[i].n] / a->cost[p[i].n];
    f[j] = median(r, k);
  }
  for (uint32_t i = 0; i < k; i++) {
    const uint32_t n = p[i].n;
    const double c = a->cost[n];
    a->tcost[n] = c * f[0];
    a->tlo[n] = fmin(c * f[1], a->tcost[n]);
    a->thi[n] = fmax(c * f[2], a->tcost[n]);
  }
}

rp_status rp__analysis_pool_team(rp_analysis *a) {
  if (!a->tcost)
    return RP_OK;
  const rp_graph *g = a->g;
  const size_t cap = a->nop ? a->nop : 1;
  pkey *p = malloc(sizeof *p * cap);
  double *r = p ? malloc(sizeof *r * cap) : NULL;
  if (!r) {
    free(p);
    return RP_ENOMEM;
  }
  uint32_t k = 0;
  for (uint32_t n = 0; n < a->nop; n++) {
    const rp__op *op = &g->op[n];
    if (pooled(a, n))
      p[k++] = (pkey){.n = n,
                      .type = op->type,
                      .device = op->device,
                      .name = op->name,
                      .kernel = op->kernel ? op->kernel->name : op->kernel_name,
                      .space = rp__op_space(g, n),
                      .bytes = rp__op_bytes(g, n)};
  }
  qsort(p, k, sizeof *p, by_key);
  for (uint32_t lo = 0, hi; lo < k; lo = hi) {
    for (hi = lo + 1; hi < k && !key_cmp(&p[lo], &p[hi]); hi++)
      ;
    if (hi - lo >= 2)
      pool_run(a, p + lo, hi - lo, r);
  }
  free(p);
  free(r);
  return RP_OK;
}
