/* JSON graph files ("reprise-graph", version 1): saving and loading. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "record/graph.h"
#include "record/json_keys.h"

/* Integers in a graph file are JSON numbers, read as doubles: from 2^53 on
 * they may have lost precision already, so they are refused. */
#define MAX_INT 9007199254740992.0
/* Nesting allowed anywhere in a file; the format itself needs 5 levels. */
#define MAX_DEPTH 512

static const char *const type_names[] = {"kernel", "copy_h2d", "copy_d2h",
                                         "copy_d2d", "host"};
static const char *const mode_names[] = {"", "in", "out", "inout"};

/* ------------------------------------------------------------------------
 * Writing. The file is streamed through a local buffer rather than built
 * as a cJSON tree: a tree of a graph with millions of operations would take
 * gigabytes. Output depends only on the graph, so equal graphs give equal
 * bytes.
 * ---------------------------------------------------------------------- */

typedef struct wr {
  FILE *fp;
  size_t n;
  int bad;
  char buf[1 << 15];
} wr;

static void w_flush(wr *w) {
  if (w->n && !w->bad && fwrite(w->buf, 1, w->n, w->fp) != w->n)
    w->bad = 1;
  w->n = 0;
}

static void w_mem(wr *w, const char *s, size_t n) {
  if (n > sizeof w->buf - w->n) {
    w_flush(w);
    if (n > sizeof w->buf) {
      if (!w->bad && fwrite(s, 1, n, w->fp) != n)
        w->bad = 1;
      return;
    }
  }
  memcpy(w->buf + w->n, s, n);
  w->n += n;
}

static void w_str(wr *w, const char *s) { w_mem(w, s, strlen(s)); }

static void w_u64(wr *w, uint64_t v) {
  char t[24];
  int i = (int)sizeof t;
  do {
    t[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  w_mem(w, t + i, sizeof t - (size_t)i);
}

/* A quoted JSON string. Bytes >= 0x80 pass through (UTF-8 stays UTF-8). */
static void w_esc(wr *w, const char *s) {
  w_mem(w, "\"", 1);
  const char *run = s;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c >= 0x20 && c != '"' && c != '\\')
      continue;
    w_mem(w, run, (size_t)(s - run));
    run = s + 1;
    char t[8];
    switch (c) {
    case '"': w_str(w, "\\\""); break;
    case '\\': w_str(w, "\\\\"); break;
    case '\n': w_str(w, "\\n"); break;
    case '\t': w_str(w, "\\t"); break;
    case '\r': w_str(w, "\\r"); break;
    case '\b': w_str(w, "\\b"); break;
    case '\f': w_str(w, "\\f"); break;
    default:
      snprintf(t, sizeof t, "\\u%04x", c);
      w_str(w, t);
    }
  }
  w_mem(w, run, (size_t)(s - run));
  w_mem(w, "\"", 1);
}

/* The shortest of %.15g and %.17g that reads back as the same double. The
 * round-trip check runs in the current locale; a decimal comma is then
 * turned into the point JSON needs. */
static void w_double(wr *w, double v) {
  char t[40];
  snprintf(t, sizeof t, "%.15g", v);
  if (strtod(t, NULL) != v)
    snprintf(t, sizeof t, "%.17g", v);
  for (char *c = t; *c; c++)
    if (*c == ',')
      *c = '.';
  w_str(w, t);
}

static void w_space(wr *w, int space) {
  if (space == RP_SPACE_HOST) {
    w_str(w, "\"host\"");
    return;
  }
  w_str(w, "\"device:");
  w_u64(w, (uint64_t)space);
  w_str(w, "\"");
}

static void w_key_u64(wr *w, const char *key, uint64_t v) {
  w_str(w, key);
  w_u64(w, v);
}

static void w_u64_list(wr *w, const uint64_t *v, unsigned n) {
  w_str(w, "[");
  for (unsigned i = 0; i < n; i++) {
    if (i)
      w_str(w, ", ");
    w_u64(w, v[i]);
  }
  w_str(w, "]");
}

static void write_buffer(wr *w, const rp__buffer *b, uint32_t i) {
  w_key_u64(w, "    {\"id\": ", i);
  w_str(w, ", \"name\": ");
  w_esc(w, b->name);
  w_key_u64(w, ", \"bytes\": ", b->bytes);
  w_key_u64(w, ", \"elem\": ", b->elem);
  if (b->ndims) {
    w_str(w, ", \"dims\": ");
    w_u64_list(w, b->dims, b->ndims);
  }
  w_str(w, "}");
}

static void write_access(wr *w, const rp__access *a) {
  w_key_u64(w, "       {\"buffer\": ", a->region.buf);
  w_str(w, ", \"space\": ");
  w_space(w, a->space);
  w_str(w, ", \"mode\": \"");
  w_str(w, (unsigned)a->mode < 4 ? mode_names[a->mode] : "?");
  w_str(w, "\"");
  if (a->region.kind == RP_REGION_BOX) {
    w_str(w, ", \"box\": {\"lo\": ");
    w_u64_list(w, a->region.lo, a->region.ndims);
    w_str(w, ", \"hi\": ");
    w_u64_list(w, a->region.hi, a->region.ndims);
    w_str(w, "}");
  } else if (a->region.kind == RP_REGION_BYTES) {
    w_key_u64(w, ", \"offset\": ", a->region.offset);
    w_key_u64(w, ", \"bytes\": ", a->region.bytes);
  }
  w_str(w, "}");
}

static void write_op(wr *w, const rp_graph *g, uint32_t i) {
  const rp__op *o = &g->op[i];
  w_key_u64(w, "    {\"id\": ", i);
  w_str(w, ", \"name\": ");
  w_esc(w, o->name ? o->name : "");
  w_str(w, ", \"type\": \"");
  w_str(w, (unsigned)o->type < 5 ? type_names[o->type] : "?");
  w_str(w, "\"");
  if (o->type != RP_OP_HOST && o->device >= 0)
    w_key_u64(w, ", \"device\": ", (uint64_t)o->device);
  if (o->type == RP_OP_COPY_D2D) {
    w_key_u64(w, ", \"src_device\": ", (uint64_t)o->device);
    w_key_u64(w, ", \"dst_device\": ", (uint64_t)o->dst_device);
  }
  if (o->type == RP_OP_KERNEL) {
    const char *kn = o->kernel ? o->kernel->name : o->kernel_name;
    if (kn) {
      w_str(w, ", \"kernel\": ");
      w_esc(w, kn);
    }
    rp_dims d = rp__op_space(g, i);
    uint64_t sp[3] = {d.x, d.y, d.z};
    w_str(w, ", \"space\": ");
    w_u64_list(w, sp, 3);
  }
  if (o->inserted)
    w_str(w, ", \"inserted\": true");
  if (o->cost_us >= 0 && isfinite(o->cost_us)) {
    w_str(w, ", \"cost_us\": ");
    w_double(w, o->cost_us);
  }
  char measured[1024]; /* hook: analyze/measured.c */
  if (rp__measured_json(g, i, measured, sizeof measured))
    w_str(w, measured);
  w_str(w, ",\n     \"access\": [");
  for (uint32_t k = 0; k < o->nacc; k++) {
    w_str(w, k ? ",\n" : "\n");
    rp__access a = rp__acc_get(g, i, k);
    write_access(w, &a);
  }
  w_str(w, "],\n     \"after\": [");
  for (uint32_t k = 0; k < o->nafter; k++) {
    if (k)
      w_str(w, ", ");
    w_u64(w, g->after[o->after0 + k]);
  }
  w_str(w, "]}");
}

static int edge_cmp(const void *a, const void *b) {
  const rp_edge *x = a, *y = b;
  if (x->from != y->from)
    return x->from < y->from ? -1 : 1;
  if (x->to != y->to)
    return x->to < y->to ? -1 : 1;
  if (x->kind != y->kind)
    return x->kind < y->kind ? -1 : 1;
  return x->buf < y->buf ? -1 : x->buf > y->buf;
}

rp_status rp_graph_write_json(const rp_graph *g, FILE *fp) {
  if (!g || !fp)
    return RP_EINVAL;
  wr *w = malloc(sizeof *w);
  if (!w)
    return RP_ENOMEM;
  /* While recording, edges are grouped by target: sort a copy as
   * rp_graph_end() would, so the file does not depend on the phase. */
  const rp_edge *edges = g->edge;
  rp_edge *tmp = NULL;
  if (!g->ended && g->nedge) {
    if (!(tmp = malloc((size_t)g->nedge * sizeof *tmp))) {
      free(w);
      return RP_ENOMEM;
    }
    memcpy(tmp, g->edge, (size_t)g->nedge * sizeof *tmp);
    qsort(tmp, g->nedge, sizeof *tmp, edge_cmp);
    edges = tmp;
  }
  w->fp = fp;
  w->n = 0;
  w->bad = 0;
  w_str(w, "{\n  \"format\": \"reprise-graph\",\n  \"version\": 1,\n"
           "  \"buffers\": [");
  for (uint32_t i = 0; i < g->nbuf; i++) {
    w_str(w, i ? ",\n" : "\n");
    write_buffer(w, &g->buf[i], i);
  }
  w_str(w, "],\n  \"ops\": [");
  for (uint32_t i = 0; i < g->nop && !w->bad; i++) {
    w_str(w, i ? ",\n" : "\n");
    write_op(w, g, i);
  }
  w_str(w, "],\n  \"edges\": [");
  for (uint32_t i = 0, f = 0; i < g->nedge && !w->bad; i++) {
    rp_edge e;
    if (g->ended) { /* the successor CSR, walked in order */
      while (g->succ_off[f + 1] <= i)
        f++;
      e.from = f;
      e.to = g->succ[i];
      e.kind = (rp_edge_kind)(g->ekind[i] >> 30);
      e.buf = (g->ekind[i] & ((1u << 30) - 1)) - 1;
    } else {
      e = edges[i];
    }
    w_str(w, i ? ",\n" : "\n");
    w_key_u64(w, "    {\"from\": ", e.from);
    w_key_u64(w, ", \"to\": ", e.to);
    w_str(w, ", \"kind\": \"");
    w_str(w, rp_edge_kind_name(e.kind));
    w_str(w, "\"");
    if (e.kind != RP_EDGE_AFTER && e.buf != RP_NONE)
      w_key_u64(w, ", \"buffer\": ", e.buf);
    w_str(w, "}");
  }
  w_str(w, "]\n}\n");
  w_flush(w);
  int bad = w->bad;
  free(w);
  free(tmp);
  if (bad || fflush(fp) != 0 || ferror(fp))
    return RP_EIO;
  return RP_OK;
}

/* ------------------------------------------------------------------------
 * Reading. The whole file is read into memory. A small iterative scanner
 * walks the top-level object and the elements of its arrays; cJSON parses
 * each element (one buffer, one operation) on its own, so memory stays
 * proportional to the file and the graph, and no input can nest deep
 * enough to exhaust the stack.
 * ---------------------------------------------------------------------- */

typedef struct span {
  size_t a, b; /* [a, b) of the value; a == b: absent */
} span;

typedef struct rd {
  const char *s;
  size_t n;
  char msg[512];
  rp_graph *g;
  uint32_t *names;  /* open-addressing set of buffer indices, by name */
  size_t nnames;    /* capacity, a power of 2 */
  rp__access *acc;  /* scratch of one operation */
  uint32_t cap_acc;
  rp_node *after;
  uint32_t cap_after;
  const rp_read_opts *opts; /* unknown keys: warn or refuse (NULL: ignore) */
} rd;

/* The first problem wins: later ones are consequences. */
static rp_status bad(rd *r, rp_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static rp_status bad(rd *r, rp_status st, const char *fmt, ...) {
  if (!r->msg[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
  }
  return st;
}

/* Reports the keys of object @p j not in @p known (record/json_keys.c). */
static rp_status check_keys(rd *r, const cJSON *j, const char *path,
                            const char *const *known) {
  for (const cJSON *c = j->child; r->opts && c; c = c->next)
    if (c->string && rp__json_key(r->opts, path, c->string, known, r->msg,
                                  sizeof r->msg))
      return RP_EPARSE;
  return RP_OK;
}

static void line_col(const rd *r, size_t pos, size_t *line, size_t *col) {
  size_t l = 1, c = 1;
  for (size_t i = 0; i < pos && i < r->n; i++) {
    if (r->s[i] == '\n') {
      l++;
      c = 1;
    } else {
      c++;
    }
  }
  *line = l;
  *col = c;
}

/* A syntax error at byte @p pos. */
static rp_status bad_at(rd *r, size_t pos, const char *what) {
  size_t l, c;
  line_col(r, pos, &l, &c);
  if (pos >= r->n)
    return bad(r, RP_EPARSE, "line %zu, column %zu: unexpected end of file "
               "(truncated?)", l, c);
  return bad(r, RP_EPARSE, "line %zu, column %zu: %s", l, c, what);
}

static size_t skip_ws(const rd *r, size_t p) {
  while (p < r->n && (r->s[p] == ' ' || r->s[p] == '\t' ||
                      r->s[p] == '\n' || r->s[p] == '\r'))
    p++;
  return p;
}

/* Bytes skip_value() stops at: 1 inside strings, 2 also between them. The
 * text holds no NUL before its end, where it stops too. */
static const unsigned char stop[256] = {
    ['\0'] = 3, ['"'] = 3, ['\\'] = 1, ['{'] = 2, ['}'] = 2, ['['] = 2,
    [']'] = 2};

/* Finds the end of the value starting at @p p, at nesting @p depth. Only
 * strings and brackets are followed; cJSON validates the rest later. */
static rp_status skip_value(rd *r, size_t p, unsigned depth, size_t *end) {
  const unsigned char *s = (const unsigned char *)r->s;
  size_t n = r->n, start = p;
  unsigned d = 0;
  if (p >= n)
    return bad_at(r, p, "");
  do {
    unsigned char c = s[p];
    if (c == '"') {
      for (p++;;) {
        while (!(stop[s[p]] & 1))
          p++;
        if (p >= n || s[p] == '"')
          break;
        p += 2; /* a backslash and the character it escapes */
        if (p > n)
          p = n;
      }
      if (p >= n)
        return bad_at(r, n, "");
      p++;
    } else if (c == '{' || c == '[') {
      if (depth + ++d > MAX_DEPTH) {
        char m[64];
        snprintf(m, sizeof m, "nesting deeper than %d levels", MAX_DEPTH);
        return bad_at(r, p, m);
      }
      p++;
    } else if (c == '}' || c == ']') {
      if (!d)
        return bad_at(r, p, "expected a value");
      d--;
      p++;
    } else if (d) {
      while (!(stop[s[p]] & 2))
        p++;
    } else {
      while (p < n && !strchr(" \t\r\n,:]}[{\"", s[p]))
        p++;
      if (p == start)
        return bad_at(r, p, "expected a value");
    }
  } while (d && p < n);
  if (d)
    return bad_at(r, n, "");
  *end = p;
  return RP_OK;
}

/* Parses the value at [a, b) with cJSON. */
static rp_status parse_span(rd *r, span v, const char *path, cJSON **out) {
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithLengthOpts(r->s + v.a, v.b - v.a, &end, 0);
  if (!j || end != r->s + v.b) {
    size_t pos = end && end >= r->s + v.a && end <= r->s + v.b
                     ? (size_t)(end - r->s) : v.a;
    size_t l, c;
    cJSON_Delete(j);
    line_col(r, pos, &l, &c);
    return bad(r, RP_EPARSE, "%s: not valid JSON (line %zu, column %zu)",
               path, l, c);
  }
  *out = j;
  return RP_OK;
}

static const char *json_type(const cJSON *j) {
  if (cJSON_IsNumber(j))
    return "a number";
  if (cJSON_IsString(j))
    return "a string";
  if (cJSON_IsBool(j))
    return "a boolean";
  if (cJSON_IsNull(j))
    return "null";
  if (cJSON_IsArray(j))
    return "an array";
  if (cJSON_IsObject(j))
    return "an object";
  return "an invalid value";
}

static const char *span_type(const rd *r, span v) {
  switch (r->s[v.a]) {
  case '"': return "a string";
  case '{': return "an object";
  case '[': return "an array";
  case 't': case 'f': return "a boolean";
  case 'n': return "null";
  default: return "a number";
  }
}

/* Member @p key of object @p o (NULL if absent); a key given twice is an
 * error, since which one counts would be a guess. */
static rp_status get(rd *r, const cJSON *o, const char *path,
                     const char *key, int required, const cJSON **out) {
  const cJSON *found = NULL;
  for (const cJSON *c = o->child; c; c = c->next) {
    if (!c->string || c->string[0] != key[0] || strcmp(c->string, key))
      continue;
    if (found)
      return bad(r, RP_EPARSE, "%s: duplicate key \"%s\"", path, key);
    found = c;
  }
  if (!found && required)
    return bad(r, RP_EPARSE, "%s: missing key \"%s\"", path, key);
  *out = found;
  return RP_OK;
}

/* Where a value is, formatted only when something is wrong with it:
 * PATH, PATH.KEY, PATH[IDX] or PATH.KEY[IDX]. */
static const char *where(char *buf, size_t n, const char *path,
                         const char *key, int idx) {
  int w = snprintf(buf, n, "%s%s%s", path, key ? "." : "", key ? key : "");
  if (idx >= 0 && w >= 0 && (size_t)w < n)
    snprintf(buf + w, n - (size_t)w, "[%d]", idx);
  return buf;
}

/* An integer in [0, 2^53): @p j is the value of PATH.KEY[IDX]. */
static rp_status as_uint(rd *r, const cJSON *j, const char *path,
                         const char *key, int idx, uint64_t *out) {
  char w[160];
  if (!cJSON_IsNumber(j))
    return bad(r, RP_EPARSE, "%s: expected an integer, got %s",
               where(w, sizeof w, path, key, idx), json_type(j));
  double v = j->valuedouble;
  if (v >= 0 && v < MAX_INT && v == floor(v)) {
    *out = (uint64_t)v;
    return RP_OK;
  }
  where(w, sizeof w, path, key, idx);
  if (!isfinite(v))
    return bad(r, RP_EPARSE, "%s: number out of range", w);
  if (v < 0)
    return bad(r, RP_EPARSE, "%s: must not be negative (got %.17g)", w, v);
  if (v != floor(v))
    return bad(r, RP_EPARSE, "%s: expected an integer, got %.17g", w, v);
  return bad(r, RP_EPARSE, "%s: integer too large (2^53 or more)", w);
}

/* Member @p key as an integer; @p present (may be NULL when required)
 * says whether it was there. */
static rp_status get_uint(rd *r, const cJSON *o, const char *path,
                          const char *key, int required, uint64_t *out,
                          int *present) {
  const cJSON *j = NULL;
  rp_status s = get(r, o, path, key, required, &j);
  if (present)
    *present = j != NULL;
  if (s || !j)
    return s;
  return as_uint(r, j, path, key, -1, out);
}

static rp_status get_str(rd *r, const cJSON *o, const char *path,
                         const char *key, int required, const char **out) {
  const cJSON *j = NULL;
  rp_status s = get(r, o, path, key, required, &j);
  *out = NULL;
  if (s || !j)
    return s;
  if (!cJSON_IsString(j))
    return bad(r, RP_EPARSE, "%s.%s: expected a string, got %s", path, key,
               json_type(j));
  *out = j->valuestring;
  return RP_OK;
}

/* An array of 1 to 3 integers. */
static rp_status get_dims(rd *r, const cJSON *j, const char *path,
                          uint64_t v[3], unsigned *n) {
  if (!cJSON_IsArray(j))
    return bad(r, RP_EPARSE, "%s: expected an array, got %s", path,
               json_type(j));
  int k = cJSON_GetArraySize(j);
  if (k < 1 || k > 3)
    return bad(r, RP_EPARSE, "%s: expected 1 to 3 entries, got %d", path, k);
  int i = 0;
  for (const cJSON *c = j->child; c; c = c->next, i++) {
    rp_status s = as_uint(r, c, path, NULL, i, &v[i]);
    if (s)
      return s;
  }
  *n = (unsigned)k;
  return RP_OK;
}

/* Device index of "device:N" or a number, 0..RP_MAX_DEVICES-1. */
static rp_status check_device(rd *r, uint64_t d, const char *path,
                              const char *key) {
  char w[160];
  if (d >= RP_MAX_DEVICES)
    return bad(r, RP_EPARSE, "%s: device %llu out of range (0..%d)",
               where(w, sizeof w, path, key, -1), (unsigned long long)d,
               RP_MAX_DEVICES - 1);
  return RP_OK;
}

/* The "space" of access PATH. */
static rp_status parse_space(rd *r, const char *str, const char *path,
                             int *out) {
  if (!strcmp(str, "host")) {
    *out = RP_SPACE_HOST;
    return RP_OK;
  }
  const char *p = str + 7;
  if (strncmp(str, "device:", 7) || *p < '0' || *p > '9' ||
      (p[0] == '0' && p[1]) || strlen(p) > 6)
    return bad(r, RP_EPARSE, "%s.space: bad space \"%s\" (expected \"host\" "
               "or \"device:N\")", path, str);
  uint64_t d = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9')
      return bad(r, RP_EPARSE, "%s.space: bad space \"%s\" (expected "
                 "\"host\" or \"device:N\")", path, str);
    d = d * 10 + (uint64_t)(*p - '0');
  }
  rp_status s = check_device(r, d, path, "space");
  *out = (int)d;
  return s;
}

/* --- buffers --- */

static uint64_t hash_name(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Finds @p name in the set; returns its slot (holding RP_NONE if absent). */
static size_t name_slot(const rd *r, const char *name) {
  size_t m = r->nnames - 1, i = (size_t)hash_name(name) & m;
  while (r->names[i] != RP_NONE && strcmp(r->g->buf[r->names[i]].name, name))
    i = (i + 1) & m;
  return i;
}

/* Makes room for one more name (load factor at most 1/2). */
static rp_status names_reserve(rd *r) {
  size_t need = 2 * ((size_t)r->g->nbuf + 1);
  if (need <= r->nnames)
    return RP_OK;
  size_t cap = r->nnames ? 2 * r->nnames : 64;
  uint32_t *old = r->names;
  size_t oldn = r->nnames;
  r->names = malloc(cap * sizeof *r->names);
  if (!r->names) {
    r->names = old;
    return bad(r, RP_ENOMEM, "out of memory");
  }
  memset(r->names, 0xff, cap * sizeof *r->names);
  r->nnames = cap;
  for (size_t i = 0; i < oldn; i++)
    if (old[i] != RP_NONE)
      r->names[name_slot(r, r->g->buf[old[i]].name)] = old[i];
  free(old);
  return RP_OK;
}

static rp_status load_buffer(rd *r, const cJSON *j, uint32_t i) {
  char path[48], kp[64];
  snprintf(path, sizeof path, "buffers[%u]", i);
  if (!cJSON_IsObject(j))
    return bad(r, RP_EPARSE, "%s: expected an object, got %s", path,
               json_type(j));
  rp_buffer_desc d = {0};
  uint64_t id, elem = 1;
  int has_elem;
  const cJSON *dims = NULL;
  rp_status s;
  if ((s = check_keys(r, j, path, rp__keys_buffer)) ||
      (s = get_uint(r, j, path, "id", 1, &id, NULL)))
    return s;
  if (id != i)
    return bad(r, RP_EPARSE, "%s.id: expected %u (buffer ids are 0, 1, 2, "
               "... in order), got %llu", path, i, (unsigned long long)id);
  if ((s = get_str(r, j, path, "name", 1, &d.name)) ||
      (s = get_uint(r, j, path, "bytes", 1, &d.bytes, NULL)) ||
      (s = get_uint(r, j, path, "elem", 0, &elem, &has_elem)) ||
      (s = get(r, j, path, "dims", 0, &dims)))
    return s;
  if (!d.name[0])
    return bad(r, RP_EPARSE, "%s.name: empty", path);
  if (d.bytes == 0)
    return bad(r, RP_EPARSE, "%s.bytes: must be positive", path);
  if (elem == 0)
    return bad(r, RP_EPARSE, "%s.elem: must be positive", path);
  d.elem = elem;
  if (dims) {
    snprintf(kp, sizeof kp, "%s.dims", path);
    if ((s = get_dims(r, dims, kp, d.dims, &d.ndims)))
      return s;
    uint64_t prod = elem;
    for (unsigned k = 0; k < d.ndims; k++) {
      if (d.dims[k] == 0)
        return bad(r, RP_EPARSE, "%s[%u]: must be positive", kp, k);
      if (prod > UINT64_MAX / d.dims[k])
        return bad(r, RP_EPARSE, "%s: elem x dims overflows 64 bits", kp);
      prod *= d.dims[k];
    }
    if (prod != d.bytes)
      return bad(r, RP_EPARSE, "%s.bytes: %llu, but elem x dims = %llu",
                 path, (unsigned long long)d.bytes,
                 (unsigned long long)prod);
  } else if (d.bytes % elem) {
    return bad(r, RP_EPARSE, "%s.bytes: %llu is not a multiple of elem %llu",
               path, (unsigned long long)d.bytes, (unsigned long long)elem);
  }
  if ((s = names_reserve(r)))
    return s;
  size_t slot = name_slot(r, d.name);
  if (r->names[slot] != RP_NONE)
    return bad(r, RP_EPARSE, "%s.name: duplicate buffer name \"%s\" (also "
               "buffers[%u])", path, d.name, r->names[slot]);
  /* Loaded buffers have no host memory: a program binds its own arrays
   * before replaying (rp_exec_rebind). */
  if ((s = rp_buffer_add(r->g, &d, NULL)))
    return bad(r, s == RP_ENOMEM ? s : RP_EPARSE, "%s: %s", path,
               rp_graph_error(r->g));
  r->names[slot] = i;
  return RP_OK;
}

/* --- operations --- */

static rp_status load_region(rd *r, const cJSON *j, const char *path,
                             rp_region *reg) {
  const rp__buffer *b = &r->g->buf[reg->buf];
  const cJSON *off = NULL, *len = NULL, *box = NULL;
  uint64_t o = 0, n = 0;
  rp_status s;
  if ((s = get(r, j, path, "offset", 0, &off)) ||
      (s = get(r, j, path, "bytes", 0, &len)) ||
      (s = get(r, j, path, "box", 0, &box)))
    return s;
  if (box && (off || len))
    return bad(r, RP_EPARSE, "%s: both a byte range and a box", path);
  if (!off != !len)
    return bad(r, RP_EPARSE, "%s: \"%s\" without \"%s\"", path,
               off ? "offset" : "bytes", off ? "bytes" : "offset");
  if (off) {
    if ((s = get_uint(r, j, path, "offset", 1, &o, NULL)) ||
        (s = get_uint(r, j, path, "bytes", 1, &n, NULL)))
      return s;
    if (o > b->bytes || n > b->bytes - o)
      return bad(r, RP_EPARSE, "%s: region ends past buffer \"%s\" (%llu "
                 "bytes)", path, b->name, (unsigned long long)b->bytes);
    *reg = rp_bytes(reg->buf, o, n);
    return RP_OK;
  }
  if (!box) {
    *reg = rp_bytes(reg->buf, 0, b->bytes);
    return RP_OK;
  }
  char bp[128], kp[140];
  snprintf(bp, sizeof bp, "%s.box", path);
  if (!cJSON_IsObject(box))
    return bad(r, RP_EPARSE, "%s: expected an object, got %s", bp,
               json_type(box));
  if (!b->ndims)
    return bad(r, RP_EPARSE, "%s: buffer \"%s\" has no dims", bp, b->name);
  const cJSON *lo = NULL, *hi = NULL;
  uint64_t vlo[3] = {0}, vhi[3] = {0};
  unsigned nlo, nhi;
  if ((s = check_keys(r, box, bp, rp__keys_box)) ||
      (s = get(r, box, bp, "lo", 1, &lo)) ||
      (s = get(r, box, bp, "hi", 1, &hi)))
    return s;
  snprintf(kp, sizeof kp, "%s.lo", bp);
  if ((s = get_dims(r, lo, kp, vlo, &nlo)))
    return s;
  snprintf(kp, sizeof kp, "%s.hi", bp);
  if ((s = get_dims(r, hi, kp, vhi, &nhi)))
    return s;
  if (nlo != b->ndims || nhi != b->ndims)
    return bad(r, RP_EPARSE, "%s: rank %u, but buffer \"%s\" has %u dims",
               bp, nlo != b->ndims ? nlo : nhi, b->name, b->ndims);
  for (unsigned k = 0; k < nlo; k++) {
    if (vlo[k] > vhi[k])
      return bad(r, RP_EPARSE, "%s: lo[%u] = %llu > hi[%u] = %llu", bp, k,
                 (unsigned long long)vlo[k], k, (unsigned long long)vhi[k]);
    if (vhi[k] > b->dims[k])
      return bad(r, RP_EPARSE, "%s: hi[%u] = %llu is past buffer \"%s\" "
                 "(dims[%u] = %llu)", bp, k, (unsigned long long)vhi[k],
                 b->name, k, (unsigned long long)b->dims[k]);
  }
  *reg = rp_box(reg->buf, nlo, vlo, vhi);
  return RP_OK;
}

static const char *space_str(int space, char buf[16]) {
  if (space == RP_SPACE_HOST)
    return "host";
  snprintf(buf, 16, "device:%d", space);
  return buf;
}

/* docs/design.md's table: a kernel accesses the space of its device, a host
 * task the host; a copy (as the recorder stores it) reads access[0] in its
 * source space and writes the same region as access[1] in its
 * destination space. */
static rp_status check_role(rd *r, const rp__proto *p, const rp__access *a,
                            uint32_t k, const char *path) {
  char want[16], got[16];
  int src = p->device, dst = p->device;
  const char *what = "a copy to device";
  switch (p->type) {
  case RP_OP_KERNEL:
    if (a->space != p->device)
      return bad(r, RP_EPARSE, "%s.space: a kernel on device %d accesses "
                 "\"%s\", not \"%s\"", path, p->device,
                 space_str(p->device, want), space_str(a->space, got));
    return RP_OK;
  case RP_OP_HOST:
    if (a->space != RP_SPACE_HOST)
      return bad(r, RP_EPARSE, "%s.space: a host task accesses \"host\", "
                 "not \"%s\"", path, space_str(a->space, got));
    return RP_OK;
  case RP_OP_COPY_H2D:
    src = RP_SPACE_HOST;
    break;
  case RP_OP_COPY_D2H:
    dst = RP_SPACE_HOST;
    what = "a copy from device";
    break;
  case RP_OP_COPY_D2D:
    dst = p->dst_device;
    what = "a peer copy from device";
    break;
  }
  if (k > 1)
    return bad(r, RP_EPARSE, "%s: a copy has exactly 2 accesses (source, "
               "destination)", path);
  int sp = k ? dst : src;
  if (a->space != sp)
    return bad(r, RP_EPARSE, "%s.space: %s %d %s \"%s\", not \"%s\"", path,
               what, p->device, k ? "writes" : "reads", space_str(sp, want),
               space_str(a->space, got));
  if (a->mode != (k ? RP_OUT : RP_IN))
    return bad(r, RP_EPARSE, "%s.mode: a copy %s: expected \"%s\", got "
               "\"%s\"", path, k ? "writes its destination" :
               "reads its source", k ? "out" : "in", mode_names[a->mode]);
  if (k == 1) {
    const rp_region *x = &a[-1].region, *y = &a->region;
    int same = x->buf == y->buf && x->kind == y->kind &&
               x->ndims == y->ndims && x->offset == y->offset &&
               x->bytes == y->bytes;
    for (unsigned d = 0; same && d < 3; d++)
      same = x->lo[d] == y->lo[d] && x->hi[d] == y->hi[d];
    if (!same)
      return bad(r, RP_EPARSE, "%s: a copy writes the region it reads "
                 "(access[0]'s)", path);
  }
  return RP_OK;
}

static rp_status load_access(rd *r, const cJSON *j, const char *path,
                             const rp__proto *p, rp__access *a, uint32_t k) {
  if (!cJSON_IsObject(j))
    return bad(r, RP_EPARSE, "%s: expected an object, got %s", path,
               json_type(j));
  uint64_t b;
  const char *space, *mode;
  rp_status s;
  if ((s = check_keys(r, j, path, rp__keys_access)) ||
      (s = get_uint(r, j, path, "buffer", 1, &b, NULL)))
    return s;
  if (b >= r->g->nbuf)
    return bad(r, RP_EPARSE, "%s.buffer: unknown buffer %llu (the file has "
               "%u)", path, (unsigned long long)b, r->g->nbuf);
  if ((s = get_str(r, j, path, "space", 1, &space)))
    return s;
  if ((s = parse_space(r, space, path, &a->space)))
    return s;
  if ((s = get_str(r, j, path, "mode", 1, &mode)))
    return s;
  if (!strcmp(mode, "in"))
    a->mode = RP_IN;
  else if (!strcmp(mode, "out"))
    a->mode = RP_OUT;
  else if (!strcmp(mode, "inout"))
    a->mode = RP_INOUT;
  else
    return bad(r, RP_EPARSE, "%s.mode: bad mode \"%s\" (expected \"in\", "
               "\"out\" or \"inout\")", path, mode);
  a->region.buf = (rp_buf)b;
  if ((s = load_region(r, j, path, &a->region)))
    return s;
  return check_role(r, p, a, k, path);
}

static rp_status load_type(rd *r, const cJSON *j, const char *path,
                           rp__proto *p) {
  const char *t;
  rp_status s = get_str(r, j, path, "type", 1, &t);
  if (s)
    return s;
  for (int k = 0; k < 5; k++)
    if (!strcmp(t, type_names[k])) {
      p->type = (rp_op_type)k;
      return RP_OK;
    }
  return bad(r, RP_EPARSE, "%s.type: unknown type \"%s\" (expected kernel, "
             "copy_h2d, copy_d2h, copy_d2d or host)", path, t);
}

/* Device fields: "device" for kernels and copies; a peer copy gives
 * "src_device" and "dst_device" ("device", if there, is the source). */
static rp_status load_devices(rd *r, const cJSON *j, const char *path,
                              rp__proto *p) {
  uint64_t d = 0, src = 0, dst = 0;
  int has_d;
  rp_status s;
  if (p->type == RP_OP_HOST) {
    if ((s = get_uint(r, j, path, "device", 0, &d, &has_d)))
      return s;
    p->device = p->dst_device = 0; /* as rp_record_host() stores it */
    return RP_OK;
  }
  if (p->type != RP_OP_COPY_D2D) {
    if ((s = get_uint(r, j, path, "device", 1, &d, NULL)) ||
        (s = check_device(r, d, path, "device")))
      return s;
    p->device = p->dst_device = (int)d;
    return RP_OK;
  }
  if ((s = get_uint(r, j, path, "device", 0, &d, &has_d)) ||
      (has_d && (s = check_device(r, d, path, "device"))) ||
      (s = get_uint(r, j, path, "src_device", 1, &src, NULL)) ||
      (s = check_device(r, src, path, "src_device")) ||
      (s = get_uint(r, j, path, "dst_device", 1, &dst, NULL)) ||
      (s = check_device(r, dst, path, "dst_device")))
    return s;
  if (has_d && d != src)
    return bad(r, RP_EPARSE, "%s.device: %llu, but src_device is %llu", path,
               (unsigned long long)d, (unsigned long long)src);
  if (src == dst)
    return bad(r, RP_EPARSE, "%s.dst_device: a peer copy needs two devices "
               "(both are %llu)", path, (unsigned long long)src);
  p->device = (int)src;
  p->dst_device = (int)dst;
  return RP_OK;
}

static rp_status load_kernel_fields(rd *r, const cJSON *j, const char *path,
                                    rp__proto *p) {
  const cJSON *sp = NULL;
  const char *kn;
  rp_status s;
  if ((s = get_str(r, j, path, "kernel", 0, &kn)) ||
      (s = get(r, j, path, "space", 0, &sp)))
    return s;
  p->kernel_name = (char *)kn;
  p->space = rp_dims3(1, 1, 1);
  if (sp) {
    uint64_t v[3] = {1, 1, 1};
    unsigned n;
    char kp[96];
    snprintf(kp, sizeof kp, "%s.space", path);
    if ((s = get_dims(r, sp, kp, v, &n)))
      return s;
    for (unsigned k = 0; k < 3; k++)
      if (!v[k])
        v[k] = 1;
    p->space = rp_dims3(v[0], v[1], v[2]);
  }
  return RP_OK;
}

static rp_status load_op(rd *r, const cJSON *j, uint32_t i) {
  char path[48], kp[96];
  snprintf(path, sizeof path, "ops[%u]", i);
  if (!cJSON_IsObject(j))
    return bad(r, RP_EPARSE, "%s: expected an object, got %s", path,
               json_type(j));
  rp__proto p;
  memset(&p, 0, sizeof p);
  p.cost_us = -1;
  uint64_t id;
  const char *name;
  const cJSON *cost = NULL, *ins = NULL, *acc = NULL, *after = NULL;
  rp_status s;
  if ((s = check_keys(r, j, path, rp__keys_op)) ||
      (s = get_uint(r, j, path, "id", 1, &id, NULL)))
    return s;
  if (id != i)
    return bad(r, RP_EPARSE, "%s.id: expected %u (op ids are their program "
               "order: 0, 1, 2, ...), got %llu", path, i,
               (unsigned long long)id);
  if ((s = get_str(r, j, path, "name", 0, &name)) ||
      (s = load_type(r, j, path, &p)) || (s = load_devices(r, j, path, &p)))
    return s;
  if (p.type == RP_OP_KERNEL && (s = load_kernel_fields(r, j, path, &p)))
    return s;
  if ((s = get(r, j, path, "inserted", 0, &ins)))
    return s;
  if (ins && !cJSON_IsBool(ins))
    return bad(r, RP_EPARSE, "%s.inserted: expected a boolean, got %s", path,
               json_type(ins));
  p.inserted = ins && cJSON_IsTrue(ins);
  if ((s = get(r, j, path, "cost_us", 0, &cost)))
    return s;
  if (cost) {
    if (!cJSON_IsNumber(cost))
      return bad(r, RP_EPARSE, "%s.cost_us: expected a number, got %s", path,
                 json_type(cost));
    if (!isfinite(cost->valuedouble) || cost->valuedouble < 0)
      return bad(r, RP_EPARSE, "%s.cost_us: must be finite and >= 0 (got "
                 "%.17g)", path, cost->valuedouble);
    p.cost_us = cost->valuedouble;
  }

  if ((s = get(r, j, path, "access", 1, &acc)))
    return s;
  if (!cJSON_IsArray(acc))
    return bad(r, RP_EPARSE, "%s.access: expected an array, got %s", path,
               json_type(acc));
  uint32_t nacc = 0;
  for (const cJSON *c = acc->child; c; c = c->next, nacc++) {
    if (rp__grow((void **)&r->acc, &r->cap_acc, nacc + 1, sizeof *r->acc))
      return bad(r, RP_ENOMEM, "out of memory");
    snprintf(kp, sizeof kp, "%s.access[%u]", path, nacc);
    memset(&r->acc[nacc], 0, sizeof r->acc[nacc]);
    if ((s = load_access(r, c, kp, &p, &r->acc[nacc], nacc)))
      return s;
  }
  if (p.type != RP_OP_KERNEL && p.type != RP_OP_HOST && nacc != 2)
    return bad(r, RP_EPARSE, "%s.access: a copy has exactly 2 accesses "
               "(source, destination), got %u", path, nacc);

  if ((s = get(r, j, path, "after", 0, &after)))
    return s;
  uint32_t nafter = 0;
  if (after) {
    if (!cJSON_IsArray(after))
      return bad(r, RP_EPARSE, "%s.after: expected an array, got %s", path,
                 json_type(after));
    for (const cJSON *c = after->child; c; c = c->next, nafter++) {
      uint64_t a;
      if (rp__grow((void **)&r->after, &r->cap_after, nafter + 1,
                   sizeof *r->after))
        return bad(r, RP_ENOMEM, "out of memory");
      if ((s = as_uint(r, c, path, "after", (int)nafter, &a)))
        return s;
      if (a >= i)
        return bad(r, RP_EPARSE, "%s.after[%u]: %llu is not an earlier op "
                   "(after must point backwards)", path, nafter,
                   (unsigned long long)a);
      r->after[nafter] = (rp_node)a;
    }
  }

  /* The cost travels in the prototype: a given cost of 0 stays given. */
  rp_op_opts o = {name, 0, r->after, nafter};
  rp_node node = RP_NONE;
  if ((s = rp__record_op(r->g, &p, r->acc, nacc, NULL, &o, &node)))
    return bad(r, s == RP_ENOMEM ? s : RP_EPARSE, "%s: %s", path,
               rp_graph_error(r->g));
  if (node != i)
    return bad(r, RP_EPARSE, "%s: recorded as node %u", path, node);
  char why[160]; /* hook: analyze/measured.c */
  if ((s = rp__measured_load(r->g, node,
                             cJSON_GetObjectItemCaseSensitive(j, "measured"),
                             why, sizeof why)))
    return bad(r, s, "%s.measured: %s", path, why);
  return RP_OK;
}

/* --- the top level --- */

enum { K_FORMAT, K_VERSION, K_BUFFERS, K_OPS, K_EDGES, K_N };
static const char *const top_keys[K_N] = {"format", "version", "buffers",
                                          "ops", "edges"};

/* Walks the top-level object: the spans of the known keys; unknown keys'
 * values are only checked to be JSON. */
static rp_status scan_top(rd *r, span v[K_N]) {
  size_t p = skip_ws(r, 0);
  rp_status s;
  if (p >= r->n)
    return bad(r, RP_EPARSE, "empty file");
  if (r->s[p] != '{')
    return bad_at(r, p, "expected an object ('{') at the top level");
  p = skip_ws(r, p + 1);
  if (p < r->n && r->s[p] == '}') {
    p++;
  } else {
    for (;;) {
      size_t ka = skip_ws(r, p), kb;
      if (ka >= r->n || r->s[ka] != '"')
        return bad_at(r, ka, "expected a key (a string)");
      if ((s = skip_value(r, ka, 1, &kb)))
        return s;
      cJSON *key;
      if ((s = parse_span(r, (span){ka, kb}, "(top level key)", &key)))
        return s;
      int k = 0;
      while (k < K_N && strcmp(key->valuestring, top_keys[k]))
        k++;
      s = k < K_N ? RP_OK : rp__json_key(r->opts, "", key->valuestring,
                                         rp__keys_top, r->msg, sizeof r->msg);
      cJSON_Delete(key);
      if (s)
        return s;
      p = skip_ws(r, kb);
      if (p >= r->n || r->s[p] != ':')
        return bad_at(r, p, "expected ':'");
      size_t va = skip_ws(r, p + 1), vb;
      if ((s = skip_value(r, va, 1, &vb)))
        return s;
      if (k < K_N) {
        if (v[k].b) {
          char m[64];
          snprintf(m, sizeof m, "duplicate key \"%s\"", top_keys[k]);
          return bad_at(r, ka, m);
        }
        v[k] = (span){va, vb};
      }
      /* Scalars and objects are checked now, so that a syntax error comes
       * before problems found later; arrays element by element later. */
      if (r->s[va] != '[' || k >= K_N) {
        cJSON *x;
        if ((s = parse_span(r, (span){va, vb},
                            k < K_N ? top_keys[k] : "(unknown key)", &x)))
          return s;
        cJSON_Delete(x);
      }
      p = skip_ws(r, vb);
      if (p < r->n && r->s[p] == ',') {
        p++;
        continue;
      }
      if (p < r->n && r->s[p] == '}') {
        p++;
        break;
      }
      return bad_at(r, p, "expected ',' or '}'");
    }
  }
  p = skip_ws(r, p);
  if (p < r->n)
    return bad_at(r, p, "unexpected data after the graph");
  return RP_OK;
}

/* Calls @p fn on each element of the array at @p v, parsed by cJSON. A NULL
 * @p fn only checks that each element is JSON. */
static rp_status each_element(rd *r, span v, const char *key,
                              rp_status (*fn)(rd *, const cJSON *,
                                              uint32_t)) {
  if (r->s[v.a] != '[')
    return bad(r, RP_EPARSE, "%s: expected an array, got %s", key,
               span_type(r, v));
  size_t p = skip_ws(r, v.a + 1);
  if (r->s[p] == ']')
    return RP_OK;
  for (uint32_t i = 0;; i++) {
    size_t ea = skip_ws(r, p), eb;
    char path[48];
    rp_status s;
    cJSON *j;
    if (i == UINT32_MAX - 1)
      return bad(r, RP_EPARSE, "%s: too many entries", key);
    snprintf(path, sizeof path, "%s[%u]", key, i);
    if ((s = skip_value(r, ea, 2, &eb)) || (s = parse_span(r, (span){ea, eb},
                                                           path, &j)))
      return s;
    s = fn ? fn(r, j, i) : RP_OK;
    cJSON_Delete(j);
    if (s)
      return s;
    p = skip_ws(r, eb);
    if (r->s[p] == ',') {
      p++;
      continue;
    }
    if (r->s[p] == ']')
      return RP_OK;
    return bad_at(r, p, "expected ',' or ']'");
  }
}

/* An edge of the input: only its keys are checked. */
static rp_status edge_keys(rd *r, const cJSON *j, uint32_t i) {
  char path[48];
  snprintf(path, sizeof path, "edges[%u]", i);
  return cJSON_IsObject(j) ? check_keys(r, j, path, rp__keys_edge) : RP_OK;
}

static rp_status load_all(rd *r) {
  span v[K_N] = {{0, 0}};
  cJSON *j;
  rp_status s;
  if ((s = scan_top(r, v)))
    return s;
  for (int k = 0; k < K_N; k++)
    if (!v[k].b && k != K_EDGES)
      return bad(r, RP_EPARSE, "missing key \"%s\"", top_keys[k]);
  if ((s = parse_span(r, v[K_FORMAT], "format", &j)))
    return s;
  if (!cJSON_IsString(j) || strcmp(j->valuestring, "reprise-graph")) {
    s = cJSON_IsString(j)
            ? bad(r, RP_EPARSE, "format: expected \"reprise-graph\", got "
                  "\"%.64s\"", j->valuestring)
            : bad(r, RP_EPARSE, "format: expected \"reprise-graph\", got %s",
                  json_type(j));
    cJSON_Delete(j);
    return s;
  }
  cJSON_Delete(j);
  if ((s = parse_span(r, v[K_VERSION], "version", &j)))
    return s;
  if (!cJSON_IsNumber(j) || j->valuedouble != 1) {
    s = cJSON_IsNumber(j)
            ? bad(r, RP_EPARSE, "version: unsupported version %.17g (this "
                  "library reads version 1)", j->valuedouble)
            : bad(r, RP_EPARSE, "version: expected a number, got %s",
                  json_type(j));
    cJSON_Delete(j);
    return s;
  }
  cJSON_Delete(j);
  if ((s = rp_graph_create(&r->g, RP_GRAPH_NO_COHERENCE)))
    return bad(r, s, "out of memory");
  if ((s = each_element(r, v[K_BUFFERS], "buffers", load_buffer)) ||
      (s = each_element(r, v[K_OPS], "ops", load_op)))
    return s;
  /* Edges are derived again; the given ones need only be JSON. */
  if (v[K_EDGES].b &&
      (s = each_element(r, v[K_EDGES], "edges", r->opts ? edge_keys : NULL)))
    return s;
  if ((s = rp_graph_end(r->g)))
    return bad(r, s, "%s", rp_graph_error(r->g));
  return RP_OK;
}

/* Reads the rest of @p fp; the result is NUL-terminated. */
static rp_status slurp(rd *r, FILE *fp, char **out, size_t *len) {
  size_t cap = 1 << 16, n = 0;
  off_t at = ftello(fp);
  if (at >= 0 && fseeko(fp, 0, SEEK_END) == 0) {
    off_t end = ftello(fp);
    if (fseeko(fp, at, SEEK_SET) != 0)
      return bad(r, RP_EIO, "cannot seek: %s", strerror(errno));
    if (end > at) {
      if ((uint64_t)(end - at) >= SIZE_MAX / 2)
        return bad(r, RP_ENOMEM, "file too large (%lld bytes)",
                   (long long)(end - at));
      cap = (size_t)(end - at) + 2;
    }
  }
  char *buf = malloc(cap);
  if (!buf)
    return bad(r, RP_ENOMEM, "out of memory reading the file (%zu bytes)",
               cap);
  for (;;) {
    if (n + 1 >= cap) {
      if (cap >= SIZE_MAX / 4) {
        free(buf);
        return bad(r, RP_ENOMEM, "file too large");
      }
      char *q = realloc(buf, cap * 2);
      if (!q) {
        free(buf);
        return bad(r, RP_ENOMEM, "out of memory reading the file (%zu "
                   "bytes)", cap * 2);
      }
      buf = q;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - 1 - n, fp);
    n += got;
    if (got == 0) {
      if (ferror(fp)) {
        int e = errno;
        free(buf);
        return bad(r, RP_EIO, "read error: %s", e ? strerror(e) : "unknown");
      }
      if (feof(fp))
        break;
    }
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return RP_OK;
}

rp_status rp_graph_read_json(rp_graph **out, FILE *fp, char *err,
                             size_t errlen) {
  return rp_graph_read_json_opts(out, fp, NULL, err, errlen);
}

rp_status rp_graph_read_json_opts(rp_graph **out, FILE *fp,
                                  const rp_read_opts *o, char *err,
                                  size_t errlen) {
  if (err && errlen)
    err[0] = '\0';
  if (out)
    *out = NULL;
  if (!out || !fp || (o && (o->size != sizeof *o || o->flags & ~1u))) {
    const char *m = !out ? "no output pointer" : !fp ? "no file given"
                    : "rp_read_opts: unknown size or flags (start from "
                      "RP_READ_OPTS_INIT)";
    if (err && errlen)
      snprintf(err, errlen, "%s", m);
    rp__set_last_error(m);
    return RP_EINVAL;
  }
  rd r;
  memset(&r, 0, sizeof r);
  r.opts = o;
  char *text = NULL;
  rp_status s = slurp(&r, fp, &text, &r.n);
  if (!s) {
    r.s = text;
    const char *nul = memchr(text, '\0', r.n);
    s = nul ? bad_at(&r, (size_t)(nul - text), "NUL byte in the file")
            : load_all(&r);
  }
  free(text);
  free(r.names);
  free(r.acc);
  free(r.after);
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
