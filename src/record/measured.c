/* Measured costs of operations: kept per graph, saved in graph files as a
 * `measured` object per operation, applied across graphs by name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "record/graph.h"
#include "core/out.h"

typedef struct ent {
  int set, tset; /* m, t set */
  rp_measured m;
  rp_team_measured t; /* the time within the team's overlapped replays */
} ent;

struct rp__measured {
  uint32_t n; /* entries, one per op up to the highest set */
  ent *e;
};

void rp__measured_free(rp_graph *g) {
  if (g && g->measured) {
    free(g->measured->e);
    free(g->measured);
    g->measured = NULL;
  }
}

static int good(const rp_measured *m) {
  return isfinite(m->median_us) && isfinite(m->min_us) && isfinite(m->max_us) &&
         m->min_us >= 0 && m->min_us <= m->median_us &&
         m->median_us <= m->max_us;
}

/* Node n's entry (n < g->nop), the table grown to every op; NULL out of
 * memory. */
static ent *entry(rp_graph *g, rp_node n) {
  if (!g->measured && !(g->measured = calloc(1, sizeof *g->measured)))
    return NULL;
  struct rp__measured *t = g->measured;
  if (n >= t->n) {
    uint32_t k = g->nop;
    ent *e = realloc(t->e, sizeof *e * k);
    if (!e)
      return NULL;
    memset(e + t->n, 0, sizeof *e * (k - t->n));
    t->e = e;
    t->n = k;
  }
  return &t->e[n];
}

static int team_good(const rp_team_measured *m) {
  rp_measured t = {m->median_us, m->min_us, m->max_us, 0, "", ""};
  return good(&t) && m->threads > 0 && isfinite(m->share) && m->share >= 0 &&
         m->share <= 1;
}

/* Sets node n's serial (team 0: an rp_measured) or team (1: an
 * rp_team_measured) figures to *v, or clears them (v NULL). */
static rp_status put(rp_graph *g, rp_node n, int team, const void *v) {
  if (!v) {
    if (g->measured && n < g->measured->n)
      *(team ? &g->measured->e[n].tset : &g->measured->e[n].set) = 0;
    return RP_OK;
  }
  ent *e = entry(g, n);
  if (!e)
    return RP_ENOMEM;
  if (team) {
    e->tset = 1;
    e->t = *(const rp_team_measured *)v;
    e->t.backend[sizeof e->t.backend - 1] = 0;
    e->t.machine[sizeof e->t.machine - 1] = 0;
  } else {
    e->set = 1;
    e->m = *(const rp_measured *)v;
    e->m.backend[sizeof e->m.backend - 1] = 0;
    e->m.machine[sizeof e->m.machine - 1] = 0;
  }
  return RP_OK;
}

/* Getter fn's work: node n's serial (team 0) or team (1) figures into
 * out (size bytes). */
static rp_status fetch(const rp_graph *g, rp_node n, int team, void *out,
                       size_t size, const char *fn) {
  if (!g || !out || n >= g->nop)
    return rp__bad_arg(fn);
  const ent *e = g->measured && n < g->measured->n ? &g->measured->e[n] : NULL;
  if (!e || !(team ? e->tset : e->set))
    return RP_ENOTFOUND;
  memcpy(out, team ? (const void *)&e->t : (const void *)&e->m, size);
  return RP_OK;
}

/* Setter fn's work: put() after the checks (bad: the figures are not
 * valid). */
static rp_status store(rp_graph *g, rp_node n, int team, const void *v, int bad,
                       const char *fn) {
  if (!g || n >= g->nop || (v && bad))
    return rp__bad_arg(fn);
  return put(g, n, team, v);
}

/* A profile's backend and machine (NULL: this host's name) into b, h. */
static void where(char *b, size_t bs, char *h, size_t hs, const char *backend,
                  const char *machine) {
  snprintf(b, bs, "%s", backend ? backend : "");
  if (machine)
    snprintf(h, hs, "%s", machine);
  else if (gethostname(h, hs) != 0)
    h[0] = 0;
  h[hs - 1] = 0;
}

/* Every op's figures from a profile's arrays (min, max NULL: the median)
 * through v (the template's median, min, max) into put(); fn: the public
 * call, for the message of a bad figure. */
static rp_status put_all(rp_graph *g, int team, const void *tmpl,
                         double *const v[3], const double *const a[3],
                         const char *fn) {
  for (uint32_t n = 0; n < g->nop; n++) {
    for (int i = 0; i < 3; i++)
      *v[i] = a[i] ? a[i][n] : a[0][n];
    if (!(team ? team_good(tmpl) : good(tmpl)))
      return rp__bad_arg(fn);
    rp_status s = put(g, n, team, tmpl);
    if (s != RP_OK)
      return s;
  }
  return RP_OK;
}

rp_status rp_graph_set_measured(rp_graph *g, rp_node n, const rp_measured *m) {
  RP_ENTER();
  return store(g, n, 0, m, m && !good(m), __func__);
}

rp_status rp_graph_get_measured(const rp_graph *g, rp_node n,
                                rp_measured *out) {
  RP_ENTER();
  return fetch(g, n, 0, out, sizeof *out, __func__);
}

rp_status rp_graph_set_measured_all(rp_graph *g, const double *median_us,
                                    const double *min_us, const double *max_us,
                                    unsigned runs, const char *backend,
                                    const char *machine) {
  RP_ENTER();
  if (!g || !median_us)
    return RP_BAD_ARG();
  rp_measured m;
  memset(&m, 0, sizeof m);
  m.runs = runs;
  where(m.backend, sizeof m.backend, m.machine, sizeof m.machine, backend,
        machine);
  double *const v[3] = {&m.median_us, &m.min_us, &m.max_us};
  const double *const a[3] = {median_us, min_us, max_us};
  return put_all(g, 0, &m, v, a, __func__);
}

rp_status rp_graph_set_team_measured_all(rp_graph *g, const double *median_us,
                                         const double *min_us,
                                         const double *max_us, unsigned runs,
                                         unsigned threads, double share,
                                         const char *backend,
                                         const char *machine) {
  RP_ENTER();
  rp_team_measured m = {.runs = runs, .threads = threads, .share = share};
  if (!g || !median_us)
    return RP_BAD_ARG();
  where(m.backend, sizeof m.backend, m.machine, sizeof m.machine, backend,
        machine);
  double *const v[3] = {&m.median_us, &m.min_us, &m.max_us};
  const double *const a[3] = {median_us, min_us, max_us};
  return put_all(g, 1, &m, v, a, __func__);
}

rp_status rp_graph_get_team_measured(const rp_graph *g, rp_node n,
                                     rp_team_measured *out) {
  RP_ENTER();
  return fetch(g, n, 1, out, sizeof *out, __func__);
}

rp_status rp_graph_set_team_measured(rp_graph *g, rp_node n,
                                     const rp_team_measured *m) {
  RP_ENTER();
  return store(g, n, 1, m, m && !team_good(m), __func__);
}

/* `, "NAME": {"median_us": M, "min_us": m, "max_us": X, "runs": R`:
 * numbers as every JSON writer of the tree prints them (rp__out_num: a
 * point, never the locale's comma). */
static void write_head(rp__out *w, const char *name, const double v[3],
                       unsigned runs) {
  static const char *const keys[3] = {
      "\": {\"median_us\": ", ", \"min_us\": ", ", \"max_us\": "};
  rp__out_str(w, ", \"");
  rp__out_str(w, name);
  for (int i = 0; i < 3; i++) {
    rp__out_str(w, keys[i]);
    rp__out_num(w, v[i]);
  }
  rp__out_str(w, ", \"runs\": ");
  rp__out_num(w, runs);
}

/* The end of a `measured` or `team` object: backend and machine. */
static void write_where(rp__out *w, const char *backend, const char *machine) {
  rp__out_str(w, ", \"backend\": ");
  rp__out_jstr(w, backend);
  rp__out_str(w, ", \"machine\": ");
  rp__out_jstr(w, machine);
  rp__out_str(w, "}");
}

void rp__measured_write(rp__out *w, const rp_graph *g, rp_node n) {
  rp_measured m;
  if (rp_graph_get_measured(g, n, &m) != RP_OK)
    return;
  const double v[3] = {m.median_us, m.min_us, m.max_us};
  write_head(w, "measured", v, m.runs);
  write_where(w, m.backend, m.machine);
}

void rp__team_write(rp__out *w, const rp_graph *g, rp_node n) {
  rp_team_measured t;
  if (rp_graph_get_team_measured(g, n, &t) == RP_OK) {
    const double v[3] = {t.median_us, t.min_us, t.max_us};
    write_head(w, "team", v, t.runs);
    rp__out_str(w, ", \"threads\": ");
    rp__out_num(w, t.threads);
    rp__out_str(w, ", \"share\": ");
    rp__out_num(w, t.share);
    write_where(w, t.backend, t.machine);
  }
}

static rp_status why(char *w, size_t size, const char *msg) {
  snprintf(w, size, "%s", msg);
  return RP_EPARSE;
}

/* The fields a `measured` and a `team` object share (median_us, min_us,
 * max_us, runs, backend, machine) into m; RP_OK or RP_EPARSE (why). */
static rp_status load_common(const cJSON *j, rp_measured *m, char *w,
                             size_t size) {
  if (!cJSON_IsObject(j))
    return why(w, size, "expected an object");
  memset(m, 0, sizeof *m);
  static const char *const keys[3] = {"median_us", "min_us", "max_us"};
  double *v[3] = {&m->median_us, &m->min_us, &m->max_us};
  for (int i = 0; i < 3; i++) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, keys[i]);
    if (!x && i > 0) {
      *v[i] = m->median_us;
      continue;
    }
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < 0)
      return why(w, size,
                 i == 0   ? "median_us: expected a number >= 0"
                 : i == 1 ? "min_us: expected a number >= 0"
                          : "max_us: expected a number >= 0");
    *v[i] = x->valuedouble;
  }
  if (!good(m))
    return why(w, size, "expected min_us <= median_us <= max_us");
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "runs");
  if (r) {
    if (!cJSON_IsNumber(r) || r->valuedouble < 0 || r->valuedouble > 1e9 ||
        r->valuedouble != floor(r->valuedouble))
      return why(w, size, "runs: expected a count");
    m->runs = (unsigned)r->valuedouble;
  }
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "backend");
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(j, "machine");
  if ((b && !cJSON_IsString(b)) || (h && !cJSON_IsString(h)))
    return why(w, size, "backend and machine are strings");
  if (b)
    snprintf(m->backend, sizeof m->backend, "%s", b->valuestring);
  if (h)
    snprintf(m->machine, sizeof m->machine, "%s", h->valuestring);
  return RP_OK;
}

rp_status rp__measured_load(rp_graph *g, rp_node n, const void *json, char *w,
                            size_t size) {
  const cJSON *j = json;
  if (!j)
    return RP_OK;
  rp_measured m;
  rp_status s = load_common(j, &m, w, size);
  if (s == RP_OK && (s = rp_graph_set_measured(g, n, &m)) != RP_OK)
    snprintf(w, size, "%s", rp_strerror(s));
  return s;
}

rp_status rp__team_load(rp_graph *g, rp_node n, const void *json, char *w,
                        size_t size) {
  const cJSON *j = json;
  rp_measured c; /* the fields a `measured` object has too */
  rp_status s = j ? load_common(j, &c, w, size) : RP_OK;
  if (!j || s != RP_OK)
    return s;
  rp_team_measured m;
  memset(&m, 0, sizeof m);
  m.median_us = c.median_us;
  m.min_us = c.min_us;
  m.max_us = c.max_us;
  m.runs = c.runs;
  memcpy(m.backend, c.backend, sizeof m.backend);
  memcpy(m.machine, c.machine, sizeof m.machine);
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "threads");
  if (!cJSON_IsNumber(t) || t->valuedouble < 1 || t->valuedouble > 1e6 ||
      t->valuedouble != floor(t->valuedouble))
    return why(w, size, "threads: expected a count >= 1");
  m.threads = (unsigned)t->valuedouble;
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(j, "share");
  if (sh) {
    if (!cJSON_IsNumber(sh) || !(sh->valuedouble >= 0) ||
        !(sh->valuedouble <= 1))
      return why(w, size, "share: expected a number in [0, 1]");
    m.share = sh->valuedouble;
  }
  if ((s = rp_graph_set_team_measured(g, n, &m)) != RP_OK)
    snprintf(w, size, "%s", rp_strerror(s));
  return s;
}

/* Name-sorted index of a graph's ops: (name, occurrence) -> op. */
typedef struct named {
  const char *name;
  uint32_t op;
} named;

static int named_cmp(const void *x, const void *y) {
  const named *a = x, *b = y;
  int c = strcmp(a->name, b->name);
  return c ? c : (a->op < b->op ? -1 : a->op > b->op);
}

static named *index_of(const rp_graph *g) {
  named *v = malloc(sizeof *v * (g->nop ? g->nop : 1));
  if (!v)
    return NULL;
  for (uint32_t n = 0; n < g->nop; n++) {
    v[n].name = g->op[n].name ? g->op[n].name : "";
    v[n].op = n;
  }
  qsort(v, g->nop, sizeof *v, named_cmp);
  return v;
}

rp_status rp_graph_apply_costs(rp_graph *dst, const rp_graph *src,
                               uint32_t *matched) {
  RP_ENTER();
  if (matched)
    *matched = 0;
  if (!dst || !src)
    return RP_BAD_ARG();
  named *d = index_of(dst), *s = index_of(src);
  rp_status st = RP_ENOMEM;
  if (!d || !s)
    goto out;
  st = RP_OK;
  uint32_t j = 0, cnt = 0;
  for (uint32_t i = 0; i < dst->nop;) {
    /* The run of dst ops with one name, and src's run with that name. */
    uint32_t i1 = i;
    while (i1 < dst->nop && !strcmp(d[i1].name, d[i].name))
      i1++;
    while (j < src->nop && strcmp(s[j].name, d[i].name) < 0)
      j++;
    uint32_t j1 = j;
    while (j1 < src->nop && !strcmp(s[j1].name, d[i].name))
      j1++;
    for (uint32_t k = i; j1 > j && k < i1; k++) {
      uint32_t from = s[j + (k - i < j1 - j ? k - i : j1 - j - 1)].op;
      rp_measured m;
      if (rp_graph_get_measured(src, from, &m) != RP_OK) {
        double c = src->op[from].cost_us;
        if (!(c >= 0))
          continue;
        memset(&m, 0, sizeof m);
        m.median_us = m.min_us = m.max_us = c;
      }
      if ((st = rp_graph_set_measured(dst, d[k].op, &m)) != RP_OK)
        goto out;
      cnt++;
    }
    i = i1;
  }
  if (matched)
    *matched = cnt;
out:
  free(d);
  free(s);
  return st;
}
