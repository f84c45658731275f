/* JSON graph files: saved edges and the top level of the reader. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/json_read.h"
#include "record/load.h"

/* --- saved edges --- */

/* A saved edge. Its keys are reported as any object's; with trusted edges
 * pending it is kept, and anything unexpected about it (which the check
 * could not cover) only means the edges are derived again. */
static rp_status load_edge(rd *r, const cJSON *j, uint32_t i) {
  char path[48];
  snprintf(path, sizeof path, "edges[%u]", i);
  if (!cJSON_IsObject(j)) {
    r->fe_bad = 1;
    return RP_OK;
  }
  rp_status s = rp__json_check_keys(r, j, path, rp__keys_edge);
  if (s || !r->trust || r->fe_bad)
    return s;
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "from");
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "to");
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(j, "kind");
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "buffer");
  rp_edge e = {0, 0, RP_EDGE_RAW, RP_NONE};
  int kind = -1;
  if (cJSON_IsString(k))
    for (int x = 0; x < 4; x++)
      if (!strcmp(k->valuestring, rp_edge_kind_name((rp_edge_kind)x)))
        kind = x;
  if (!cJSON_IsNumber(f) || !cJSON_IsNumber(t) || kind < 0 ||
      f->valuedouble < 0 || f->valuedouble >= RP_NONE || t->valuedouble < 0 ||
      t->valuedouble >= RP_NONE ||
      (b && (!cJSON_IsNumber(b) || b->valuedouble < 0 ||
             b->valuedouble >= RP__MAX_BUFFERS))) {
    r->fe_bad = 1;
    return RP_OK;
  }
  e.from = (rp_node)f->valuedouble;
  e.to = (rp_node)t->valuedouble;
  e.kind = (rp_edge_kind)kind;
  e.buf = b ? (rp_buf)b->valuedouble : RP_NONE;
  if (e.from != f->valuedouble || e.to != t->valuedouble ||
      (b && e.buf != b->valuedouble) ||
      rp__grow((void **)&r->fe, &r->cap_fe, r->nfe + 1, sizeof *r->fe)) {
    r->fe_bad = 1; /* out of memory here: derive (which may fail too) */
    return RP_OK;
  }
  r->fe[r->nfe++] = e;
  return RP_OK;
}

/* 1 if the saved edges may be installed: sorted by (from, to), each pair
 * once, from < to < nop, the buffer of a hazard edge a buffer of the graph
 * and none on an explicit one (as the writer writes them). */
static int saved_edges_sane(const rd *r) {
  const rp_graph *g = r->g;
  for (uint32_t i = 0; i < r->nfe; i++) {
    const rp_edge *e = &r->fe[i];
    if (e->from >= e->to || e->to >= g->nop)
      return 0;
    if (e->kind == RP_EDGE_AFTER ? e->buf != RP_NONE : e->buf >= g->nbuf)
      return 0;
    if (i &&
        (e[-1].from > e->from || (e[-1].from == e->from && e[-1].to >= e->to)))
      return 0;
  }
  return 1;
}

/* Makes r->g, whose operations were loaded without their hazards, a graph
 * whose edges are derived again: records its operations anew. */
static rp_status rederive(rd *r) {
  rp_graph *old = r->g, *g;
  rp_status s;
  if ((s = rp_graph_create(&g, RP_GRAPH_NO_COHERENCE)))
    return rp__json_bad(r, s, "out of memory");
  for (uint32_t i = 0; i < old->nbuf && !s; i++) {
    const rp__buffer *b = &old->buf[i];
    rp_buffer_desc d = {b->name,  NULL,
                        b->bytes, b->elem,
                        b->ndims, {b->dims[0], b->dims[1], b->dims[2]}};
    s = rp_buffer_add(g, &d, NULL);
  }
  rp__access *acc = NULL;
  uint32_t capacc = 0;
  for (uint32_t i = 0; i < old->nop && !s; i++) {
    const rp__op *op = &old->op[i];
    rp__proto p;
    memset(&p, 0, sizeof p);
    p.type = (rp_op_type)op->type;
    p.device = op->device;
    p.dst_device = op->dst_device;
    p.cost_us = op->cost_us;
    p.kernel_name = op->kernel_name;
    p.space = rp__op_space(old, i);
    p.inserted = op->inserted;
    if (rp__grow((void **)&acc, &capacc, op->nacc ? op->nacc : 1,
                 sizeof *acc)) {
      s = RP_ENOMEM;
      break;
    }
    for (uint32_t k = 0; k < op->nacc; k++)
      acc[k] = rp__acc_get(old, i, k);
    rp_op_opts o =
        RP_OP_OPTS_WITH(.name = op->name, .after = old->after + op->after0,
                        .nafter = op->nafter);
    s = rp__record_op(g, &p, acc, op->nacc, NULL, &o, NULL);
  }
  free(acc);
  if (s) {
    rp__json_bad(r, s, "ops: %s", rp_graph_error(g));
    rp_graph_destroy(g);
    return s;
  }
  g->measured = old->measured; /* per node: the nodes are the same */
  old->measured = NULL;
  rp_graph_destroy(old);
  r->g = g;
  return RP_OK;
}

/* --- the top level --- */

enum { K_FORMAT, K_VERSION, K_CHECK, K_BUFFERS, K_OPS, K_EDGES, K_N };
static const char *const top_keys[K_N] = {"format",  "version", "edges_check",
                                          "buffers", "ops",     "edges"};

/* Calls @p fn on each element of the array at @p *pp, parsed by cJSON;
 * *pp ends past the array. A NULL @p fn only checks that each element is
 * JSON. */
typedef int (*fast_fn)(rd *, const char *, const char *, uint32_t, rp_status *);

static rp_status each_element(rd *r, size_t *pp, const char *key,
                              rp_status (*fn)(rd *, const cJSON *, uint32_t),
                              fast_fn fast) {
  size_t p = *pp;
  if (r->s[p] != '[')
    return rp__json_bad(r, RP_EPARSE, "%s: expected an array, got %s", key,
                        rp__json_span_type(r, p));
  p = rp__json_skip_ws(r, p + 1);
  if (p < r->n && r->s[p] == ']') {
    *pp = p + 1;
    return RP_OK;
  }
  for (uint32_t i = 0;; i++) {
    size_t ea = rp__json_skip_ws(r, p), eb;
    char path[48];
    rp_status s;
    cJSON *j;
    if (i == UINT32_MAX - 1)
      return rp__json_bad(r, RP_EPARSE, "%s: too many entries", key);
    rp__json_slide(r, &ea);
    int done = 0;
    r->quiet = 1;
    /* As written, whole in the window: read once, where it lies. */
    if (fast && rp__json_fast && fast(r, r->s + ea, NULL, i, &s)) {
      done = 1;
      eb = (size_t)(r->fast_end - r->s);
    }
    r->quiet = 0;
    if (!done) {
      if ((s = rp__json_skip_value(r, ea, 2, &eb)))
        return s;
      r->quiet = 1;
      done = fast && rp__json_fast && fast(r, r->s + ea, r->s + eb, i, &s);
      r->quiet = 0;
    }
    if (!done) {
      snprintf(path, sizeof path, "%s[%u]", key, i);
      if ((s = rp__json_parse_span(r, (span){ea, eb}, path, &j)))
        return s;
      s = fn ? fn(r, j, i) : RP_OK;
      cJSON_Delete(j);
    }
    if (s)
      return s;
    p = rp__json_skip_ws(r, eb);
    if (p < r->n && r->s[p] == ',') {
      p++;
      continue;
    }
    if (p < r->n && r->s[p] == ']') {
      *pp = p + 1;
      return RP_OK;
    }
    return rp__json_bad_at(r, p, "expected ',' or ']'");
  }
}

static rp_status check_format(rd *r, const cJSON *j) {
  if (!cJSON_IsString(j) || strcmp(j->valuestring, "reprise-graph"))
    return cJSON_IsString(j)
               ? rp__json_bad(r, RP_EPARSE,
                              "format: expected \"reprise-graph\", got "
                              "\"%.64s\"",
                              j->valuestring)
               : rp__json_bad(r, RP_EPARSE,
                              "format: expected \"reprise-graph\", got "
                              "%s",
                              rp__json_type_of(j));
  return RP_OK;
}

static rp_status check_version(rd *r, const cJSON *j) {
  if (!cJSON_IsNumber(j) || j->valuedouble != 1)
    return cJSON_IsNumber(j)
               ? rp__json_bad(r, RP_EPARSE,
                              "version: unsupported version %.17g (this "
                              "library reads version 1)",
                              j->valuedouble)
               : rp__json_bad(r, RP_EPARSE,
                              "version: expected a number, got %s",
                              rp__json_type_of(j));
  return RP_OK;
}

/* "edges_check": 16 hexadecimal digits. Met before the operations (where
 * the writer puts it), the operations are loaded without deriving hazards
 * and the saved edges are checked at the end. */
static rp_status load_check(rd *r, const cJSON *j) {
  const char *v = cJSON_IsString(j) ? j->valuestring : "";
  uint64_t h = 0;
  size_t k = 0;
  for (; k < 16 && v[k]; k++) {
    int c = (unsigned char)v[k], d = c >= '0' && c <= '9'   ? c - '0'
                                     : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                                            : -1;
    if (d < 0)
      break;
    h = h << 4 | (uint64_t)d;
  }
  if (k != 16 || v[k])
    return rp__json_bad(r, RP_EPARSE,
                        "edges_check: expected 16 hexadecimal digits, "
                        "got %s",
                        rp__json_type_of(j));
  r->check = h;
  r->has_check = 1;
  r->trust = !r->seen_ops && !(r->opts && r->opts->flags & RP_READ_DERIVE);
  return RP_OK;
}

/* The operations held back because they came before the buffers. */
static rp_status load_deferred(rd *r) {
  rd save = *r;
  r->s = r->deferred;
  r->n = r->cap = r->ndeferred;
  r->line = r->dline;
  r->col = r->dcol;
  r->eof = 1;
  r->nul = r->io = r->oom = 0;
  size_t p = 0;
  rp_status s = each_element(r, &p, "ops", rp__json_load_op, rp__json_fast_op);
  save.g = r->g, save.names = r->names, save.nnames = r->nnames;
  save.acc = r->acc, save.cap_acc = r->cap_acc;
  save.after = r->after, save.cap_after = r->cap_after;
  memcpy(save.msg, r->msg, sizeof save.msg);
  *r = save;
  free(r->deferred);
  r->deferred = NULL;
  return s;
}

/* Reads a value of the top level at @p *pp (the key @p k, K_N when
 * unknown); *pp ends past it. */
static rp_status top_value(rd *r, int k, size_t *pp, cJSON **pend) {
  size_t va = *pp, vb;
  rp_status s;
  if (rp__json_at_end(r, va))
    return rp__json_bad_at(r, va, "");
  if ((k == K_BUFFERS || k == K_EDGES || (k == K_OPS && r->seen_buffers)) &&
      r->s[va] == '[') {
    if (k == K_BUFFERS) {
      s = each_element(r, pp, "buffers", rp__json_load_buffer, NULL);
      r->seen_buffers = 1;
      if (!s && r->deferred)
        s = load_deferred(r);
    } else if (k == K_OPS) {
      r->seen_ops = 1;
      s = each_element(r, pp, "ops", rp__json_load_op, rp__json_fast_op);
    } else {
      s = each_element(r, pp, "edges", r->opts || r->trust ? load_edge : NULL,
                       rp__json_fast_edge);
    }
    return s;
  }
  if ((s = rp__json_skip_value(r, va, 1, &vb)))
    return s;
  *pp = vb;
  if (k == K_OPS) { /* before the buffers: kept until they come */
    r->seen_ops = 1;
    if (r->s[va] != '[')
      return rp__json_bad(r, RP_EPARSE, "ops: expected an array, got %s",
                          rp__json_span_type(r, va));
    if (!(r->deferred = malloc(vb - va + 1)))
      return rp__json_bad(r, RP_ENOMEM, "out of memory");
    memcpy(r->deferred, r->s + va, vb - va);
    r->deferred[vb - va] = '\0';
    r->ndeferred = vb - va;
    rp__json_line_col(r, va, &r->dline, &r->dcol);
    return RP_OK;
  }
  if (k == K_BUFFERS || k == K_EDGES)
    return rp__json_bad(r, RP_EPARSE, "%s: expected an array, got %s",
                        top_keys[k], rp__json_span_type(r, va));
  /* A scalar (or an unknown key's value) is checked once the syntax
   * after it is, so that a syntax error comes first. */
  return rp__json_parse_span(r, (span){va, vb},
                             k < K_N ? top_keys[k] : "(unknown key)", pend);
}

/* Checks a scalar of the top level read by top_value(), and frees it. */
static rp_status top_scalar(rd *r, int k, cJSON *x) {
  rp_status s = k == K_FORMAT    ? check_format(r, x)
                : k == K_VERSION ? check_version(r, x)
                : k == K_CHECK   ? load_check(r, x)
                                 : RP_OK;
  cJSON_Delete(x);
  return s;
}

/* Walks the top-level object, reading each known key's value as it comes;
 * unknown keys' values are only checked to be JSON. */
static rp_status read_top(rd *r, int seen[K_N]) {
  size_t p = rp__json_skip_ws(r, 0);
  rp_status s;
  if (p >= r->n)
    return r->nul || r->io || r->oom ? rp__json_bad_at(r, p, "")
                                     : rp__json_bad(r, RP_EPARSE, "empty file");
  if (r->s[p] != '{')
    return rp__json_bad_at(r, p, "expected an object ('{') at the top level");
  p = rp__json_skip_ws(r, p + 1);
  if (p < r->n && r->s[p] == '}') {
    p++;
  } else {
    for (;;) {
      size_t ka = rp__json_skip_ws(r, p), kb;
      rp__json_slide(r, &ka);
      if (ka >= r->n || r->s[ka] != '"')
        return rp__json_bad_at(r, ka, "expected a key (a string)");
      if ((s = rp__json_skip_value(r, ka, 1, &kb)))
        return s;
      cJSON *key;
      if ((s = rp__json_parse_span(r, (span){ka, kb}, "(top level key)", &key)))
        return s;
      int k = 0;
      while (k < K_N && strcmp(key->valuestring, top_keys[k]))
        k++;
      s = k < K_N ? RP_OK
                  : rp__json_key(r->opts, "", key->valuestring, rp__keys_top,
                                 r->msg, sizeof r->msg);
      cJSON_Delete(key);
      if (s)
        return s;
      if (k < K_N && seen[k]) {
        char m[64];
        snprintf(m, sizeof m, "duplicate key \"%s\"", top_keys[k]);
        return rp__json_bad_at(r, ka, m);
      }
      if (k < K_N)
        seen[k] = 1;
      p = rp__json_skip_ws(r, kb);
      if (p >= r->n || r->s[p] != ':')
        return rp__json_bad_at(r, p, "expected ':'");
      p = rp__json_skip_ws(r, p + 1);
      cJSON *x = NULL;
      if ((s = top_value(r, k, &p, &x)))
        return s;
      p = rp__json_skip_ws(r, p);
      int c = p < r->n ? r->s[p] : 0;
      if (c != ',' && c != '}') {
        cJSON_Delete(x);
        return rp__json_bad_at(r, p, "expected ',' or '}'");
      }
      if (x && (s = top_scalar(r, k, x)))
        return s;
      p++;
      if (c == '}')
        break;
    }
  }
  p = rp__json_skip_ws(r, p);
  if (p < r->n)
    return rp__json_bad_at(r, p, "unexpected data after the graph");
  if (r->nul || r->io || r->oom)
    return rp__json_bad_at(r, r->n, "");
  return RP_OK;
}

static rp_status load_all(rd *r) {
  int seen[K_N] = {0};
  rp_status s;
  if ((s = rp_graph_create(&r->g, RP_GRAPH_NO_COHERENCE)))
    return rp__json_bad(r, s, "out of memory");
  if ((s = read_top(r, seen)))
    return s;
  for (int k = 0; k < K_N; k++)
    if (!seen[k] && k != K_EDGES && k != K_CHECK)
      return rp__json_bad(r, RP_EPARSE, "missing key \"%s\"", top_keys[k]);
  if (r->trust) {
    if (!r->fe_bad && saved_edges_sane(r) &&
        rp__json_edges_check(r->g, r->fe, r->nfe) == r->check) {
      if ((s = rp__load_edges(r->g, r->fe, r->nfe)))
        return rp__json_bad(r, s, "%s", rp_graph_error(r->g));
      free(r->fe); /* copied: not held while the graph ends */
      r->fe = NULL;
    } else {
      if (r->opts && r->opts->warn)
        r->opts->warn(r->opts->user,
                      "edges_check: the saved edges do not "
                      "match the file's operations (edited?): derived again");
      if ((s = rederive(r)))
        return s;
    }
  }
  if ((s = rp_graph_end(r->g)))
    return rp__json_bad(r, s, "%s", rp_graph_error(r->g));
  return RP_OK;
}

rp_status rp_graph_read_json(rp_graph **out, FILE *fp, char *err,
                             size_t errlen) {
  RP_ENTER();
  if (!out || !fp) {
    if (err && errlen)
      snprintf(err, errlen, "rp_graph_read_json: no %s",
               !out ? "output pointer" : "file given");
    return RP_NULL_ARG();
  }
  return rp_graph_read_json_opts(out, fp, NULL, err, errlen);
}

void rp_read_opts_init(rp_read_opts *o) {
  if (o)
    *o = (rp_read_opts)RP_READ_OPTS_INIT;
}

rp_status rp_graph_read_json_opts(rp_graph **out, FILE *fp,
                                  const rp_read_opts *o, char *err,
                                  size_t errlen) {
  RP_ENTER();
  if (err && errlen)
    err[0] = '\0';
  if (out)
    *out = NULL;
  /* The versioning rule (core/versioned.c); the size before `progress`
   * was added is still a known one. */
  rp_read_opts mine = RP_READ_OPTS_INIT;
  const char *m = !out  ? "rp_graph_read_json_opts: no output pointer"
                  : !fp ? "rp_graph_read_json_opts: no file given"
                        : NULL;
  if (!m && o &&
      rp__versioned_load(
          &mine, sizeof mine, o, offsetof(rp_read_opts, progress),
          "rp_read_opts (start from RP_READ_OPTS_INIT)") != RP_OK)
    m = rp_last_error();
  else if (!m && (mine.flags & ~3u))
    m = "rp_read_opts: unknown flags";
  if (m) {
    if (err && errlen)
      snprintf(err, errlen, "%s", m);
    if (m != rp_last_error())
      rp__set_last_error(m);
    return RP_EINVAL;
  }
  rd r;
  memset(&r, 0, sizeof r);
  r.opts = o ? &mine : NULL;
  r.progress = mine.progress;
  r.fp = fp;
  r.line = r.col = 1;
  r.want = 4096;
  rp_status s = load_all(&r);
  free(r.s);
  free(r.names);
  free(r.acc);
  free(r.after);
  free(r.fe);
  free(r.deferred);
  if (s) {
    rp_graph_destroy(r.g);
    if (!r.msg[0])
      snprintf(r.msg, sizeof r.msg, "%s", rp_strerror(s));
    if (err && errlen)
      snprintf(err, errlen, "%s", r.msg);
    rp__set_last_error(r.msg);
    return s;
  }
  *out = r.g;
  rp__set_last_error("");
  return RP_OK;
}
