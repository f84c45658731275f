/* Profiling over several replays: median, min and max per operation. */
#include <stdlib.h>
#include <string.h>
#include "replay/exec.h"

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

void rp__op_stats(const double *t, unsigned runs, uint32_t n, double *col,
                  double *median, double *min, double *max) {
  for (uint32_t v = 0; v < n; v++) {
    for (unsigned r = 0; r < runs; r++)
      col[r] = t[(size_t)r * n + v];
    qsort(col, runs, sizeof *col, cmp_double);
    if (median)
      median[v] =
          runs % 2 ? col[runs / 2] : (col[runs / 2 - 1] + col[runs / 2]) / 2;
    if (min)
      min[v] = col[0];
    if (max)
      max[v] = col[runs - 1];
  }
}

/* A twin of x: the same graph, backend and options, its buffers bound to
 * scratch copies of x's host arrays as they are now, its scalars x's. It
 * is profiled instead of x, so that neither the user's arrays nor x's
 * device images advance. */
typedef struct twin {
  rp_exec *y;
  void **copy; /* per buffer: the scratch array, or NULL */
  uint32_t nbuf;
} twin;

static void twin_free(twin *t) {
  rp_exec_destroy(t->y);
  for (uint32_t b = 0; t->copy && b < t->nbuf; b++)
    free(t->copy[b]);
  free(t->copy);
  memset(t, 0, sizeof *t);
}

static rp_status twin_make(rp_exec *x, twin *t) {
  memset(t, 0, sizeof *t);
  rp_exec_opts o = x->opts;
  rp_status s = rp__exec_create(&t->y, x->ug, x->be, &o, x->choose_split);
  if (s != RP_OK)
    return s;
  const rp_graph *g = x->g;
  t->nbuf = g->nbuf;
  if (!(t->copy = calloc(t->nbuf ? t->nbuf : 1, sizeof *t->copy)))
    return RP_ENOMEM;
  for (uint32_t b = 0; b < g->nbuf; b++) {
    uint64_t bytes = g->buf[b].bytes;
    if (!x->host[b])
      continue;
    if (!(t->copy[b] = malloc(bytes ? bytes : 1)))
      return RP_ENOMEM;
    memcpy(t->copy[b], x->host[b], bytes);
    if ((s = rp_exec_rebind(t->y, b, t->copy[b], bytes ? bytes : 1)) != RP_OK)
      return s;
  }
  /* Scalars x was given (rp_exec_set_scalar()) since it was created. */
  const rp_plan *p = rp__plan_view(t->y->plan);
  for (uint32_t n = 0; n < g->nop; n++) {
    const rp__op *op = &g->op[n];
    if (op->type != RP_OP_KERNEL || !op->kernel || x->kidx[n] == RP_NONE)
      continue;
    for (unsigned k = 0; k < op->kernel->nparams; k++) {
      rp_slot *want = &x->kargs[x->kidx[n]].a[k];
      rp_slot *have = &t->y->kargs[t->y->kidx[n]].a[k];
      if (op->kernel->params[k].mode != RP_SCALAR ||
          /* the slot's bytes as given: a changed scalar changes them */
          // NOLINTNEXTLINE(bugprone-suspicious-memory-comparison)
          !memcmp(want, have, sizeof *want))
        continue;
      *have = *want;
      if (!x->be->set_scalar || p->node_of[n] == RP_NONE)
        return RP_ENOTSUP;
      if ((s = x->be->set_scalar(t->y->state, p->node_of[n], k)) != RP_OK)
        return s;
    }
  }
  return RP_OK;
}

/* Host arrays of x as they are, to put back after an in-place profile. */
static void **snapshot(rp_exec *x) {
  const rp_graph *g = x->g;
  void **c = calloc(g->nbuf ? g->nbuf : 1, sizeof *c);
  for (uint32_t b = 0; c && b < g->nbuf; b++) {
    if (!x->host[b])
      continue;
    if (!(c[b] = malloc(g->buf[b].bytes ? g->buf[b].bytes : 1))) {
      for (uint32_t k = 0; k < b; k++)
        free(c[k]);
      free(c);
      return NULL;
    }
    memcpy(c[b], x->host[b], g->buf[b].bytes);
  }
  return c;
}

static void restore(rp_exec *x, void **c) {
  const rp_graph *g = x->g;
  for (uint32_t b = 0; b < g->nbuf; b++) {
    if (c[b])
      memcpy(x->host[b], c[b], g->buf[b].bytes);
    free(c[b]);
  }
  free(c);
}

void rp_profile_opts_init(rp_profile_opts *o) {
  if (o)
    *o = (rp_profile_opts)RP_PROFILE_OPTS_INIT;
}

rp_status rp_exec_profile_opts(rp_exec *x, const rp_profile_opts *o,
                               double *median_us, double *min_us,
                               double *max_us) {
  RP_ENTER();
  if (!x)
    return RP_NULL_ARG();
  rp_profile_opts ol;
  rp_profile_opts_init(&ol);
  if (o && rp__versioned_load(&ol, sizeof ol, o, sizeof ol,
                              "rp_exec_profile_opts: rp_profile_opts") != RP_OK)
    return RP_EINVAL;
  unsigned runs = ol.runs, flags = ol.flags;
  if (runs > 1000 || (flags & ~(unsigned)RP_PROFILE_IN_PLACE)) {
    rp__set_last_errorf("rp_exec_profile_opts: %s",
                        runs > 1000 ? "more than 1000 runs" : "unknown flags");
    return RP_EINVAL;
  }
  rp__exec_begin(x);
  if (!runs)
    runs = 5;
  rp_status s = rp__exec_wait(x);
  if (s != RP_OK)
    return s;
  if (!x->be->profile) {
    rp_exec_set_error(x, "backend \"%s\" cannot profile", x->be->name);
    return RP_ENOTSUP;
  }
  uint32_t nop = rp_graph_num_nodes(x->ug);
  size_t k = nop ? nop : 1;
  double *t = malloc(sizeof *t * k * runs), *col = malloc(sizeof *col * runs);
  if (!t || !col) {
    free(t);
    free(col);
    return RP_ENOMEM;
  }
  /* Where: a twin on scratch copies; where the backend cannot make one
   * (no rebind, no memory for a second instance), x itself with its host
   * arrays put back afterwards (its device images do advance then, and
   * rp_exec_notice() says so). */
  twin tw;
  rp_exec *on = x;
  void **snap = NULL;
  if (!(flags & RP_PROFILE_IN_PLACE)) {
    if (twin_make(x, &tw) == RP_OK) {
      on = tw.y;
    } else {
      twin_free(&tw);
      if (!(snap = snapshot(x))) {
        free(t);
        free(col);
        return RP_ENOMEM;
      }
    }
  }
  for (unsigned r = 0; r < runs && s == RP_OK; r++)
    s = rp__exec_profile(on, t + (size_t)r * k, 1);
  if (on != x) {
    if (s != RP_OK)
      rp_exec_set_error(x, "%s", rp_exec_error(on));
    twin_free(&tw);
  }
  if (snap) {
    restore(x, snap);
    if (s == RP_OK)
      rp_exec_set_notice(x, "profile: ran in place (the backend could not "
                            "instantiate a second copy): the host arrays are "
                            "put back, device images advanced");
  }
  if (s == RP_OK)
    rp__op_stats(t, runs, nop, col, median_us, min_us, max_us);
  free(t);
  free(col);
  return s;
}

/* An elided copy moves nothing: it starts and ends when the last of its
 * predecessors in the graph ended (0 with none). */
static void elided_times(const rp_graph *g, const rp_plan *p, double *start,
                         double *end) {
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++) {
    if (p->node_of[n] != RP_NONE)
      continue;
    uint32_t np;
    const rp_node *pr = rp_graph_preds(g, n, &np);
    double t = 0;
    for (uint32_t i = 0; i < np; i++)
      if (end[pr[i]] > t)
        t = end[pr[i]];
    start[n] = end[n] = t;
  }
}

static rp_status timeline(rp_exec *x, double *start_us, double *end_us) {
  const rp_backend *be = rp_exec_backend(x);
  const rp_plan *p = rp_exec_plan(x);
  const rp_graph *g = rp_exec_graph(x);
  uint32_t nop = rp_graph_num_nodes(g);
  if (be->timeline) {
    rp_status s = rp__exec_wait(x);
    if (s != RP_OK)
      return s;
    double *st = malloc(sizeof *st * (p->nnode + 1));
    double *en = malloc(sizeof *en * (p->nnode + 1));
    if (!st || !en) {
      free(st);
      free(en);
      return RP_ENOMEM;
    }
    s = rp__exec_timeline(x, st, en);
    for (uint32_t n = 0; s == RP_OK && n < nop; n++)
      if (p->node_of[n] != RP_NONE) {
        start_us[n] = st[p->node_of[n]];
        end_us[n] = en[p->node_of[n]];
      }
    if (s == RP_OK)
      elided_times(g, p, start_us, end_us);
    free(st);
    free(en);
    return s;
  }
  if (strcmp(rp_backend_name(be), "reference")) {
    rp_exec_set_error(x, "backend \"%s\" cannot record a timeline",
                      rp_backend_name(be));
    return RP_ENOTSUP;
  }
  rp_status s = rp__exec_profile(x, end_us, 0);
  if (s != RP_OK)
    return s;
  double t = 0;
  for (uint32_t n = 0; n < nop; n++) {
    double d = end_us[n];
    start_us[n] = t;
    t += d;
    end_us[n] = t;
  }
  return RP_OK;
}

rp_status rp_exec_timeline(rp_exec *x, double *start_us, double *end_us) {
  RP_ENTER();
  if (!x || !start_us || !end_us)
    return RP_NULL_ARG();
  if (!x->rw.g)
    return timeline(x, start_us, end_us);
  /* Split: a recorded operation spans its chunks. */
  uint32_t nn = rp_graph_num_nodes(x->g);
  double *st = malloc(sizeof *st * (nn + 1));
  double *en = malloc(sizeof *en * (nn + 1));
  rp_status s = st && en ? timeline(x, st, en) : RP_ENOMEM;
  for (uint32_t n = 0; s == RP_OK && n < x->rw.nop; n++) {
    uint32_t a = x->rw.first[n], b = x->rw.first[n + 1];
    start_us[n] = a < b ? st[a] : 0;
    end_us[n] = a < b ? en[a] : 0;
    for (uint32_t m = a + 1; m < b; m++) {
      start_us[n] = st[m] < start_us[n] ? st[m] : start_us[n];
      end_us[n] = en[m] > end_us[n] ? en[m] : end_us[n];
    }
  }
  free(st);
  free(en);
  return s;
}
