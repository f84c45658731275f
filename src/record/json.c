/* JSON graph files ("reprise-graph", version 1): saving and loading. */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "record/graph.h"
#include "record/json_keys.h"
#include "record/load.h"
#include "core/out.h"

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

static void w_space(rp__out *w, int space) {
  if (space == RP_SPACE_HOST) {
    rp__out_str(w, "\"host\"");
    return;
  }
  rp__out_str(w, "\"device:");
  rp__out_u64(w, (uint64_t)space);
  rp__out_str(w, "\"");
}

static void w_key_u64(rp__out *w, const char *key, uint64_t v) {
  rp__out_str(w, key);
  rp__out_u64(w, v);
}

static void w_u64_list(rp__out *w, const uint64_t *v, unsigned n) {
  rp__out_str(w, "[");
  for (unsigned i = 0; i < n; i++) {
    if (i)
      rp__out_str(w, ", ");
    rp__out_u64(w, v[i]);
  }
  rp__out_str(w, "]");
}

static void write_buffer(rp__out *w, const rp__buffer *b, uint32_t i) {
  w_key_u64(w, "    {\"id\": ", i);
  rp__out_str(w, ", \"name\": ");
  rp__out_jstr(w, b->name);
  w_key_u64(w, ", \"bytes\": ", b->bytes);
  w_key_u64(w, ", \"elem\": ", b->elem);
  if (b->ndims) {
    rp__out_str(w, ", \"dims\": ");
    w_u64_list(w, b->dims, b->ndims);
  }
  rp__out_str(w, "}");
}

static void write_access(rp__out *w, const rp__access *a) {
  w_key_u64(w, "       {\"buffer\": ", a->region.buf);
  rp__out_str(w, ", \"space\": ");
  w_space(w, a->space);
  rp__out_str(w, ", \"mode\": \"");
  rp__out_str(w, (unsigned)a->mode < 4 ? mode_names[a->mode] : "?");
  rp__out_str(w, "\"");
  if (a->region.kind == RP_REGION_BOX) {
    rp__out_str(w, ", \"box\": {\"lo\": ");
    w_u64_list(w, a->region.lo, a->region.ndims);
    rp__out_str(w, ", \"hi\": ");
    w_u64_list(w, a->region.hi, a->region.ndims);
    rp__out_str(w, "}");
  } else if (a->region.kind == RP_REGION_BYTES) {
    w_key_u64(w, ", \"offset\": ", a->region.offset);
    w_key_u64(w, ", \"bytes\": ", a->region.bytes);
  }
  rp__out_str(w, "}");
}

static void write_op(rp__out *w, const rp_graph *g, uint32_t i) {
  const rp__op *o = &g->op[i];
  w_key_u64(w, "    {\"id\": ", i);
  rp__out_str(w, ", \"name\": ");
  rp__out_jstr(w, o->name ? o->name : "");
  rp__out_str(w, ", \"type\": \"");
  rp__out_str(w, (unsigned)o->type < 5 ? type_names[o->type] : "?");
  rp__out_str(w, "\"");
  if (o->type != RP_OP_HOST && o->device >= 0)
    w_key_u64(w, ", \"device\": ", (uint64_t)o->device);
  if (o->type == RP_OP_COPY_D2D) {
    w_key_u64(w, ", \"src_device\": ", (uint64_t)o->device);
    w_key_u64(w, ", \"dst_device\": ", (uint64_t)o->dst_device);
  }
  if (o->type == RP_OP_KERNEL) {
    const char *kn = o->kernel ? o->kernel->name : o->kernel_name;
    if (kn) {
      rp__out_str(w, ", \"kernel\": ");
      rp__out_jstr(w, kn);
    }
    rp_dims d = rp__op_space(g, i);
    uint64_t sp[3] = {d.x, d.y, d.z};
    rp__out_str(w, ", \"space\": ");
    w_u64_list(w, sp, 3);
  }
  if (o->inserted)
    rp__out_str(w, ", \"inserted\": true");
  if (o->cost_us >= 0 && isfinite(o->cost_us)) {
    rp__out_str(w, ", \"cost_us\": ");
    rp__out_num(w, o->cost_us);
  }
  char measured[1024]; /* hook: analyze/measured.c */
  if (rp__measured_json(g, i, measured, sizeof measured))
    rp__out_str(w, measured);
  rp__out_str(w, ",\n     \"access\": [");
  for (uint32_t k = 0; k < o->nacc; k++) {
    rp__out_str(w, k ? ",\n" : "\n");
    rp__access a = rp__acc_get(g, i, k);
    write_access(w, &a);
  }
  rp__out_str(w, "],\n     \"after\": [");
  for (uint32_t k = 0; k < o->nafter; k++) {
    if (k)
      rp__out_str(w, ", ");
    rp__out_u64(w, g->after[o->after0 + k]);
  }
  rp__out_str(w, "]}");
}

/* ------------------------------------------------------------------------
 * The edges' check: a 64-bit hash of everything the edges are derived
 * from (buffer geometry; per operation its type, devices, accesses and
 * explicit dependencies, in order) and of the edges themselves. Names,
 * costs and measurements are left out: editing them keeps the saved edges
 * valid. A reader that finds the same hash over what it loaded installs
 * the saved edges instead of deriving them again; an edited file (or one
 * damaged) gets another hash and its edges are derived again. It guards
 * against accidents, not against a forged file.
 * ---------------------------------------------------------------------- */

static inline uint64_t hmix(uint64_t h, uint64_t v) {
  h = (h ^ v) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

static uint64_t hash_nodes(const rp_graph *g) {
  uint64_t h = hmix(0x7265707269736531ull, g->nbuf);
  for (uint32_t i = 0; i < g->nbuf; i++) {
    const rp__buffer *b = &g->buf[i];
    h = hmix(hmix(hmix(h, b->bytes), b->elem), b->ndims);
    for (unsigned d = 0; d < b->ndims && d < 3; d++)
      h = hmix(h, b->dims[d]);
  }
  h = hmix(h, g->nop);
  for (uint32_t i = 0; i < g->nop; i++) {
    const rp__op *o = &g->op[i];
    h = hmix(h, (uint64_t)o->type << 48 ^ (uint64_t)(uint16_t)o->device << 32
                    ^ (uint64_t)(uint16_t)o->dst_device << 16 ^ o->nacc);
    for (uint32_t k = 0; k < o->nacc; k++) {
      const rp__access acc = rp__acc_get(g, i, k);
      const rp__access *a = &acc;
      const rp_region *r = &a->region;
      h = hmix(h, (uint64_t)r->buf << 32 ^ (uint64_t)(uint8_t)a->space << 16
                      ^ (uint64_t)a->mode << 8 ^ (uint64_t)r->kind);
      if (r->kind == RP_REGION_BOX) {
        h = hmix(h, r->ndims);
        for (unsigned d = 0; d < r->ndims && d < 3; d++)
          h = hmix(hmix(h, r->lo[d]), r->hi[d]);
      } else {
        h = hmix(hmix(h, r->offset), r->bytes);
      }
    }
    h = hmix(h, o->nafter);
    for (uint32_t k = 0; k < o->nafter; k++)
      h = hmix(h, g->after[o->after0 + k]);
  }
  return h;
}

static inline uint64_t hash_edge(uint64_t h, const rp_edge *e) {
  return hmix(hmix(h, (uint64_t)e->from << 32 | e->to),
              (uint64_t)e->kind << 32 | e->buf);
}

static uint64_t hash_end(uint64_t h, uint32_t m) {
  h = hmix(h, m);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

/* The check of graph @p g (its operations) with edges @p e. */
static uint64_t edges_check(const rp_graph *g, const rp_edge *e,
                            uint32_t m) {
  uint64_t h = hash_nodes(g);
  for (uint32_t i = 0; i < m; i++)
    h = hash_edge(h, &e[i]);
  return hash_end(h, m);
}

/* Edge i of a graph being written, in (from, to) order: from the
 * successor CSR once ended (*f is the cursor over sources, from 0), else
 * from @p sorted. */
static rp_edge edge_at(const rp_graph *g, const rp_edge *sorted, uint32_t i,
                       uint32_t *f) {
  rp_edge e;
  if (!g->ended)
    return sorted[i];
  while (g->succ_off[*f + 1] <= i)
    (*f)++;
  e.from = *f;
  e.to = g->succ[i];
  e.kind = (rp_edge_kind)(g->ekind[i] >> 30);
  e.buf = (g->ekind[i] & ((1u << 30) - 1)) - 1;
  return e;
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
  rp__out *w = rp__out_new(fp);
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
  uint64_t hc = hash_nodes(g);
  for (uint32_t i = 0, f = 0; i < g->nedge; i++) {
    rp_edge e = edge_at(g, edges, i, &f);
    hc = hash_edge(hc, &e);
  }
  hc = hash_end(hc, g->nedge);
  char hex[17];
  for (int k = 0; k < 16; k++)
    hex[k] = "0123456789abcdef"[(hc >> (60 - 4 * k)) & 15];
  hex[16] = '\0';
  rp__out_str(w, "{\n  \"format\": \"reprise-graph\",\n  \"version\": 1,\n"
           "  \"edges_check\": \"");
  rp__out_str(w, hex);
  rp__out_str(w, "\",\n  \"buffers\": [");
  for (uint32_t i = 0; i < g->nbuf; i++) {
    rp__out_str(w, i ? ",\n" : "\n");
    write_buffer(w, &g->buf[i], i);
  }
  rp__out_str(w, "],\n  \"ops\": [");
  for (uint32_t i = 0; i < g->nop && !w->bad; i++) {
    rp__out_str(w, i ? ",\n" : "\n");
    write_op(w, g, i);
  }
  rp__out_str(w, "],\n  \"edges\": [");
  for (uint32_t i = 0, f = 0; i < g->nedge && !w->bad; i++) {
    rp_edge e = edge_at(g, edges, i, &f);
    rp__out_str(w, i ? ",\n" : "\n");
    w_key_u64(w, "    {\"from\": ", e.from);
    w_key_u64(w, ", \"to\": ", e.to);
    rp__out_str(w, ", \"kind\": \"");
    rp__out_str(w, rp_edge_kind_name(e.kind));
    rp__out_str(w, "\"");
    if (e.kind != RP_EDGE_AFTER && e.buf != RP_NONE)
      w_key_u64(w, ", \"buffer\": ", e.buf);
    rp__out_str(w, "}");
  }
  rp__out_str(w, "]\n}\n");
  int bad = rp__out_end(w);
  free(tmp);
  if (bad || fflush(fp) != 0)
    return RP_EIO;
  return RP_OK;
}
/* ------------------------------------------------------------------------
 * Reading. The file is read through a window of a few chunks: the first
 * read is 4 KiB (stdio's buffer: a smaller one would copy through it) and
 * each later one twice the last, up to rp__json_chunk (1 MiB), so a 3 KB
 * file never costs a 1 MiB allocation (under ASan such an allocation and
 * its free cost ~9 ms, issue 21). Asking fstat for the file's size
 * instead cost more (a system call, ~1.5 us per load) than the doublings
 * save. A small iterative scanner walks the top-level object and the
 * elements of its arrays, and cJSON parses each element (one buffer, one
 * operation, one edge) on its own. Only the element being read and the
 * chunk it lies in are held, never the whole text; no input can nest deep
 * enough to exhaust the stack. Positions are offsets into the window;
 * the window slides (forgetting what was read, counting its lines) only
 * between elements.
 * ---------------------------------------------------------------------- */

/* Bytes read per fread (tests set it small to put chunk boundaries
 * everywhere). */
size_t rp__json_chunk = 1u << 20;
/* 0: every element through cJSON (tests compare both paths). */
int rp__json_fast = 1;

typedef struct span {
  size_t a, b; /* [a, b) of the value; a == b: absent */
} span;

typedef struct rd {
  FILE *fp;
  char *s;          /* the window; s[n] == '\0' */
  size_t n, cap;
  size_t want;      /* bytes of the next read: grows to rp__json_chunk */
  size_t line, col; /* of s[0] */
  int eof, nul, io, oom; /* input ended: at its end, at a NUL byte, on a
                            read error (io: errno + 1), out of memory */
  char msg[512];
  rp_graph *g;
  uint32_t *names;  /* open-addressing set of buffer indices, by name */
  size_t nnames;    /* capacity, a power of 2 */
  rp__access *acc;  /* scratch of one operation */
  uint32_t cap_acc;
  rp_node *after;
  uint32_t cap_after;
  const rp_read_opts *opts; /* unknown keys: warn or refuse (NULL: ignore) */
  /* Saved edges: trusted when "edges_check" came before "ops" and matches
   * (then the ops are loaded without deriving hazards). */
  int trust, has_check, fe_bad, seen_buffers, seen_ops;
  int quiet;        /* the fast path is trying: bad() records nothing */
  uint64_t check;
  rp_edge *fe;
  uint32_t nfe, cap_fe;
  char *deferred;   /* "ops" met before "buffers": their text, read later */
  size_t ndeferred, dline, dcol;
} rd;

/* The first problem wins: later ones are consequences. */
static rp_status bad(rd *r, rp_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static rp_status bad(rd *r, rp_status st, const char *fmt, ...) {
  if (!r->msg[0] && !r->quiet) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
  }
  return st;
}

/* Reads one more chunk into the window; 0 at the end of the input (or on
 * a NUL byte, a read error, no memory: the flags say which). */
static int more(rd *r) {
  if (r->eof)
    return 0;
  size_t cap_read = rp__json_chunk ? rp__json_chunk : 1;
  size_t want = r->want && r->want < cap_read ? r->want : cap_read;
  r->want = want < cap_read / 2 ? want * 2 : cap_read;
  if (r->n + want + 1 > r->cap) {
    size_t cap = r->cap ? r->cap : want + 1;
    while (cap < r->n + want + 1)
      cap *= 2;
    char *q = realloc(r->s, cap);
    if (!q) {
      r->oom = r->eof = 1;
      return 0;
    }
    r->s = q;
    r->cap = cap;
  }
  size_t got = fread(r->s + r->n, 1, want, r->fp);
  if (got == 0) {
    if (ferror(r->fp))
      r->io = errno + 1;
    r->eof = 1;
    r->s[r->n] = '\0';
    return 0;
  }
  const char *z = memchr(r->s + r->n, '\0', got);
  if (z) { /* the text ends at the NUL: reaching it is the error */
    got = (size_t)(z - (r->s + r->n));
    r->nul = r->eof = 1;
  }
  r->n += got;
  r->s[r->n] = '\0';
  return got > 0 || !r->eof;
}

/* 1 if the window ends at or before @p p and the input has no more. */
static int at_end(rd *r, size_t p) {
  while (p >= r->n)
    if (!more(r))
      return 1;
  return 0;
}

/* Forgets the bytes before @p *p once they are more than a chunk, keeping
 * count of their lines and columns; *p becomes 0. */
static void slide(rd *r, size_t *p) {
  size_t k = *p;
  if (k < r->want || k > r->n)
    return;
  const char *s = r->s, *e = s + k, *nl;
  while ((nl = memchr(s, '\n', (size_t)(e - s)))) {
    r->line++;
    r->col = 1;
    s = nl + 1;
  }
  r->col += (size_t)(e - s);
  memmove(r->s, r->s + k, r->n - k + 1);
  r->n -= k;
  *p = 0;
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
  size_t l = r->line, c = r->col;
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

/* A syntax error at byte @p pos (past the end: what ended the input). */
static rp_status bad_at(rd *r, size_t pos, const char *what) {
  size_t l, c;
  line_col(r, pos, &l, &c);
  if (pos >= r->n) {
    if (r->oom)
      return bad(r, RP_ENOMEM, "out of memory reading the file");
    if (r->io)
      return bad(r, RP_EIO, "read error: %s", strerror(r->io - 1));
    if (r->nul)
      return bad(r, RP_EPARSE, "line %zu, column %zu: NUL byte in the file",
                 l, c);
    return bad(r, RP_EPARSE, "line %zu, column %zu: unexpected end of file "
               "(truncated?)", l, c);
  }
  return bad(r, RP_EPARSE, "line %zu, column %zu: %s", l, c, what);
}

static size_t skip_ws(rd *r, size_t p) {
  for (;;) {
    while (p < r->n && (r->s[p] == ' ' || r->s[p] == '\t' ||
                        r->s[p] == '\n' || r->s[p] == '\r'))
      p++;
    if (p < r->n || !more(r))
      return p;
  }
}

/* Bytes skip_value() stops at: 1 inside strings, 2 also between them. The
 * window holds no NUL before its end, where it stops too. */
static const unsigned char stop[256] = {
    ['\0'] = 3, ['"'] = 3, ['\\'] = 1, ['{'] = 2, ['}'] = 2, ['['] = 2,
    [']'] = 2};

/* Finds the end of the value starting at @p p, at nesting @p depth,
 * reading more input as needed. Only strings and brackets are followed;
 * cJSON validates the rest later. */
static rp_status skip_value(rd *r, size_t p, unsigned depth, size_t *end) {
  size_t start = p;
  unsigned d = 0;
  if (at_end(r, p))
    return bad_at(r, p, "");
  do {
    unsigned char c = (unsigned char)r->s[p];
    if (c == '"') {
      for (p++;;) {
        const unsigned char *s = (const unsigned char *)r->s;
        while (!(stop[s[p]] & 1))
          p++;
        if (p >= r->n) {
          if (!more(r))
            return bad_at(r, p, "");
          continue;
        }
        if (s[p] == '"')
          break;
        if (at_end(r, p + 1)) /* a backslash and the character it escapes */
          return bad_at(r, r->n, "");
        p += 2;
      }
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
      for (;;) {
        const unsigned char *s = (const unsigned char *)r->s;
        while (!(stop[s[p]] & 2))
          p++;
        if (p < r->n || !more(r))
          break;
      }
    } else {
      for (;;) {
        while (p < r->n && !strchr(" \t\r\n,:]}[{\"", r->s[p]))
          p++;
        if (p < r->n || !more(r))
          break;
      }
      if (p == start)
        return bad_at(r, p, "expected a value");
    }
  } while (d && (p < r->n || more(r)));
  if (d)
    return bad_at(r, r->n, "");
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

static const char *span_type(const rd *r, size_t a) {
  switch (r->s[a]) {
  case '"': return "a string";
  case '{': return "an object";
  case '[': return "an array";
  case 't': case 'f': return "a boolean";
  case 'n': return "null";
  default: return "a number";
  }
}
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
  if (r->trust) { /* as rp__record_op() checks and stores them */
    for (uint32_t k = 0; k < nacc; k++)
      if ((s = rp__region_check(r->g, &r->acc[k].region, "access")))
        return bad(r, s == RP_ENOMEM ? s : RP_EPARSE, "%s: %s", path,
                   rp_graph_error(r->g));
    s = rp__load_op(r->g, &p, r->acc, nacc, r->after, nafter, name, &node);
  } else {
    s = rp__record_op(r->g, &p, r->acc, nacc, NULL, &o, &node);
  }
  if (s)
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

/* --- the fast path: an operation or edge as the writer writes it --- */

/* A hand-written scanner for the elements of "ops" and "edges" in the
 * shape the writer gives them: known keys, each once, integers as plain
 * digits, strings without escapes, no "measured". It decides only
 * whether an element is such a one and valid; anything else (and any
 * problem) goes to the cJSON path above, which then says what is wrong.
 * It never accepts what that path refuses, and stores the same values. */

static inline void f_ws(const char **c) {
  while (**c == ' ' || **c == '\n' || **c == '\t' || **c == '\r')
    (*c)++;
}

static inline int f_lit(const char **c, char ch) {
  f_ws(c);
  if (**c != ch)
    return 0;
  (*c)++;
  return 1;
}

/* A string without escapes or control bytes: [*a, *a + *len). */
static inline int f_str(const char **c, const char **a, size_t *len) {
  f_ws(c);
  if (**c != '"')
    return 0;
  const unsigned char *q = (const unsigned char *)*c + 1;
  while (*q >= 0x20 && *q != '"' && *q != '\\')
    q++;
  if (*q != '"')
    return 0;
  *a = *c + 1;
  *len = (size_t)((const char *)q - *a);
  *c = (const char *)q + 1;
  return 1;
}

/* An integer in plain digits, at most 15 (below 2^53, as as_uint wants). */
static inline int f_uint(const char **c, uint64_t *v) {
  f_ws(c);
  const char *p = *c;
  uint64_t x = 0;
  while (*p >= '0' && *p <= '9' && p - *c < 16)
    x = x * 10 + (uint64_t)(*p++ - '0');
  size_t n = (size_t)(p - *c);
  if (!n || n > 15 || (n > 1 && **c == '0') || *p == '.' || *p == 'e' ||
      *p == 'E' || (*p >= '0' && *p <= '9'))
    return 0;
  *v = x;
  *c = p;
  return 1;
}

/* A JSON number, converted as cJSON converts it (strtod), when the
 * locale's decimal point is '.'. */
static int f_num(const char **c, double *v) {
  f_ws(c);
  const char *p = *c;
  if (*p == '-')
    p++;
  if (*p == '0')
    p++;
  else if (*p >= '1' && *p <= '9')
    while (*p >= '0' && *p <= '9')
      p++;
  else
    return 0;
  if (*p == '.') {
    if (!(*++p >= '0' && *p <= '9'))
      return 0;
    while (*p >= '0' && *p <= '9')
      p++;
  }
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-')
      p++;
    if (!(*p >= '0' && *p <= '9'))
      return 0;
    while (*p >= '0' && *p <= '9')
      p++;
  }
  char t[64];
  size_t n = (size_t)(p - *c);
  if (n >= sizeof t || localeconv()->decimal_point[0] != '.' ||
      localeconv()->decimal_point[1])
    return 0;
  memcpy(t, *c, n);
  t[n] = '\0';
  *v = strtod(t, NULL);
  *c = p;
  return 1;
}

static inline int f_is(const char *a, size_t n, const char *lit) {
  return strlen(lit) == n && !memcmp(a, lit, n);
}

/* A key and its colon; the key's index in @p keys (NULL-terminated), or
 * -1 when unknown or not a plain string. */
static int f_key(const char **c, const char *const *keys) {
  const char *a;
  size_t n;
  if (!f_str(c, &a, &n) || !f_lit(c, ':'))
    return -1;
  for (int k = 0; keys[k]; k++)
    if (n && keys[k][0] == a[0] && f_is(a, n, keys[k]))
      return k;
  return -1;
}

/* A list of 1 to 3 integers. */
static int f_dims(const char **c, uint64_t v[3], unsigned *n) {
  if (!f_lit(c, '['))
    return 0;
  *n = 0;
  do {
    if (*n == 3 || !f_uint(c, &v[*n]))
      return 0;
    (*n)++;
  } while (f_lit(c, ','));
  return f_lit(c, ']');
}

static const char *const f_acc_keys[] = {"buffer", "space", "mode", "offset",
                                         "bytes", "box", NULL};
static const char *const f_box_keys[] = {"lo", "hi", NULL};

/* One access (its role is checked once the op's type is known). */
static int f_access(rd *r, const char **c, rp__access *a) {
  uint64_t buf = 0, off = 0, len = 0, lo[3] = {0}, hi[3] = {0};
  unsigned nlo = 0, nhi = 0, seen = 0;
  const char *sp = NULL, *md = NULL;
  size_t nsp = 0, nmd = 0;
  if (!f_lit(c, '{'))
    return 0;
  do {
    int k = f_key(c, f_acc_keys);
    if (k < 0 || seen & 1u << k)
      return 0;
    seen |= 1u << k;
    int ok = k == 0   ? f_uint(c, &buf)
             : k == 1 ? f_str(c, &sp, &nsp)
             : k == 2 ? f_str(c, &md, &nmd)
             : k == 3 ? f_uint(c, &off)
             : k == 4 ? f_uint(c, &len)
                      : 0;
    if (k == 5) {
      unsigned bs = 0;
      if (!f_lit(c, '{'))
        return 0;
      do {
        int b = f_key(c, f_box_keys);
        if (b < 0 || bs & 1u << b ||
            !f_dims(c, b ? hi : lo, b ? &nhi : &nlo))
          return 0;
        bs |= 1u << b;
      } while (f_lit(c, ','));
      ok = bs == 3 && f_lit(c, '}');
    }
    if (!ok)
      return 0;
  } while (f_lit(c, ','));
  if (!f_lit(c, '}') || (seen & 7) != 7 || buf >= r->g->nbuf || nsp > 15)
    return 0;
  char space[16];
  memcpy(space, sp, nsp);
  space[nsp] = '\0';
  if (parse_space(r, space, "", &a->space))
    return 0;
  a->mode = f_is(md, nmd, "in")      ? RP_IN
            : f_is(md, nmd, "out")   ? RP_OUT
            : f_is(md, nmd, "inout") ? RP_INOUT
                                     : RP_SCALAR;
  if (a->mode == RP_SCALAR)
    return 0;
  const rp__buffer *b = &r->g->buf[buf];
  int has_off = !!(seen & 8), has_len = !!(seen & 16), has_box = !!(seen & 32);
  if (has_off != has_len || (has_box && has_off))
    return 0;
  if (has_off) {
    if (off > b->bytes || len > b->bytes - off)
      return 0;
    a->region = rp_bytes((rp_buf)buf, off, len);
  } else if (!has_box) {
    a->region = rp_bytes((rp_buf)buf, 0, b->bytes);
  } else {
    if (!b->ndims || nlo != b->ndims || nhi != b->ndims)
      return 0;
    for (unsigned d = 0; d < nlo; d++)
      if (lo[d] > hi[d] || hi[d] > b->dims[d])
        return 0;
    a->region = rp_box((rp_buf)buf, nlo, lo, hi);
  }
  return 1;
}

enum { F_ID, F_NAME, F_TYPE, F_DEVICE, F_SRC, F_DST, F_KERNEL, F_SPACE,
       F_COST, F_INSERTED, F_ACCESS, F_AFTER };
static const char *const f_op_keys[] = {
    "id", "name", "type", "device", "src_device", "dst_device", "kernel",
    "space", "cost_us", "inserted", "access", "after", NULL};

/* Operation i at [c, e): RP_OK or the recording's error in *st, and 1;
 * 0 to leave it to the cJSON path. */
static int fast_op(rd *r, const char *c, const char *e, uint32_t i,
                   rp_status *st) {
  uint64_t id = 0, dev = 0, src = 0, dst = 0, sp[3] = {1, 1, 1};
  unsigned nsp = 0, seen = 0;
  const char *name = NULL, *kern = NULL;
  size_t nname = 0, nkern = 0;
  uint32_t nacc = 0, nafter = 0;
  rp__proto p;
  memset(&p, 0, sizeof p);
  p.cost_us = -1;
  int type = -1;
  if (!f_lit(&c, '{'))
    return 0;
  do {
    int k = f_key(&c, f_op_keys);
    if (k < 0 || seen & 1u << k)
      return 0;
    seen |= 1u << k;
    const char *a;
    size_t n;
    switch (k) {
    case F_ID:
      if (!f_uint(&c, &id) || id != i)
        return 0;
      break;
    case F_NAME:
      if (!f_str(&c, &name, &nname))
        return 0;
      break;
    case F_TYPE:
      if (!f_str(&c, &a, &n))
        return 0;
      for (int t = 0; t < 5; t++)
        if (f_is(a, n, type_names[t]))
          type = t;
      if (type < 0)
        return 0;
      break;
    case F_DEVICE:
    case F_SRC:
    case F_DST:
      if (!f_uint(&c, k == F_DEVICE ? &dev : k == F_SRC ? &src : &dst))
        return 0;
      break;
    case F_KERNEL:
      if (!f_str(&c, &kern, &nkern))
        return 0;
      break;
    case F_SPACE:
      if (!f_dims(&c, sp, &nsp))
        return 0;
      break;
    case F_COST:
      if (!f_num(&c, &p.cost_us) || !isfinite(p.cost_us) || p.cost_us < 0)
        return 0;
      break;
    case F_INSERTED:
      f_ws(&c);
      if (!strncmp(c, "true", 4))
        p.inserted = true, c += 4;
      else if (!strncmp(c, "false", 5))
        c += 5;
      else
        return 0;
      break;
    case F_ACCESS:
      if (!f_lit(&c, '['))
        return 0;
      if (!f_lit(&c, ']')) {
        do {
          if (rp__grow((void **)&r->acc, &r->cap_acc, nacc + 1,
                       sizeof *r->acc))
            return 0;
          memset(&r->acc[nacc], 0, sizeof r->acc[nacc]);
          if (!f_access(r, &c, &r->acc[nacc]))
            return 0;
          nacc++;
        } while (f_lit(&c, ','));
        if (!f_lit(&c, ']'))
          return 0;
      }
      break;
    case F_AFTER:
      if (!f_lit(&c, '['))
        return 0;
      if (!f_lit(&c, ']')) {
        do {
          uint64_t v;
          if (rp__grow((void **)&r->after, &r->cap_after, nafter + 1,
                       sizeof *r->after) ||
              !f_uint(&c, &v) || v >= i)
            return 0;
          r->after[nafter++] = (rp_node)v;
        } while (f_lit(&c, ','));
        if (!f_lit(&c, ']'))
          return 0;
      }
      break;
    }
  } while (f_lit(&c, ','));
  if (!f_lit(&c, '}') || (f_ws(&c), c != e) || !(seen & 1u << F_ID) ||
      type < 0 || !(seen & 1u << F_ACCESS))
    return 0;
  p.type = (rp_op_type)type;
  int has_dev = !!(seen & 1u << F_DEVICE);
  /* load_devices() and load_kernel_fields(), as conditions. */
  if (p.type != RP_OP_COPY_D2D && seen & (1u << F_SRC | 1u << F_DST))
    return 0;
  if (p.type != RP_OP_KERNEL && seen & (1u << F_KERNEL | 1u << F_SPACE))
    return 0;
  if (p.type == RP_OP_HOST) {
    p.device = p.dst_device = 0;
  } else if (p.type != RP_OP_COPY_D2D) {
    if (!has_dev || dev >= RP_MAX_DEVICES)
      return 0;
    p.device = p.dst_device = (int)dev;
  } else {
    if ((has_dev && (dev >= RP_MAX_DEVICES || dev != src)) ||
        !(seen & 1u << F_SRC) || !(seen & 1u << F_DST) ||
        src >= RP_MAX_DEVICES || dst >= RP_MAX_DEVICES || src == dst)
      return 0;
    p.device = (int)src;
    p.dst_device = (int)dst;
  }
  if (p.type == RP_OP_KERNEL) {
    for (unsigned k = 0; k < 3; k++)
      if (!sp[k])
        sp[k] = 1;
    p.space = rp_dims3(sp[0], sp[1], sp[2]);
  }
  if (p.type != RP_OP_KERNEL && p.type != RP_OP_HOST && nacc != 2)
    return 0;
  for (uint32_t k = 0; k < nacc; k++)
    if (check_role(r, &p, &r->acc[k], k, ""))
      return 0;
  /* The strings end where their quotes are, for as long as they are
   * needed (the text is not read again). */
  char *nend = name ? (char *)name + nname : NULL;
  char *kend = kern ? (char *)kern + nkern : NULL;
  if (nend)
    *nend = '\0';
  if (kend)
    *kend = '\0';
  p.kernel_name = (char *)kern;
  rp_op_opts o = {name, 0, r->after, nafter};
  rp_node node = RP_NONE;
  rp_status s = RP_OK;
  if (r->trust) {
    for (uint32_t k = 0; k < nacc && !s; k++)
      s = rp__region_check(r->g, &r->acc[k].region, "access");
    if (!s)
      s = rp__load_op(r->g, &p, r->acc, nacc, r->after, nafter, name, &node);
  } else {
    s = rp__record_op(r->g, &p, r->acc, nacc, NULL, &o, &node);
  }
  if (nend)
    *nend = '"';
  if (kend)
    *kend = '"';
  r->quiet = 0;
  if (s)
    *st = bad(r, s == RP_ENOMEM ? s : RP_EPARSE, "ops[%u]: %s", i,
              rp_graph_error(r->g));
  else if (node != i)
    *st = bad(r, RP_EPARSE, "ops[%u]: recorded as node %u", i, node);
  else
    *st = RP_OK;
  return 1;
}

static const char *const f_edge_keys[] = {"from", "to", "kind", "buffer",
                                          NULL};

/* Edge i at [c, e): 1 when it is one as written (then kept, if the saved
 * edges are pending); 0 to leave it to the cJSON path. */
static int fast_edge(rd *r, const char *c, const char *e, uint32_t i,
                     rp_status *st) {
  uint64_t v[4] = {0, 0, 0, RP_NONE};
  unsigned seen = 0;
  int kind = -1;
  (void)i;
  if (!f_lit(&c, '{'))
    return 0;
  do {
    int k = f_key(&c, f_edge_keys);
    const char *a;
    size_t n;
    if (k < 0 || seen & 1u << k)
      return 0;
    seen |= 1u << k;
    if (k == 2) {
      if (!f_str(&c, &a, &n))
        return 0;
      for (int x = 0; x < 4; x++)
        if (f_is(a, n, rp_edge_kind_name((rp_edge_kind)x)))
          kind = x;
      if (kind < 0)
        return 0;
    } else if (!f_uint(&c, &v[k])) {
      return 0;
    }
  } while (f_lit(&c, ','));
  if (!f_lit(&c, '}') || (f_ws(&c), c != e) || (seen & 7) != 7 ||
      v[0] >= RP_NONE || v[1] >= RP_NONE ||
      (seen & 8 && v[3] >= RP__MAX_BUFFERS))
    return 0;
  *st = RP_OK;
  if (!r->trust || r->fe_bad)
    return 1;
  if (rp__grow((void **)&r->fe, &r->cap_fe, r->nfe + 1, sizeof *r->fe)) {
    r->fe_bad = 1;
    return 1;
  }
  r->fe[r->nfe++] = (rp_edge){(rp_node)v[0], (rp_node)v[1],
                              (rp_edge_kind)kind, (rp_buf)v[3]};
  return 1;
}

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
  rp_status s = check_keys(r, j, path, rp__keys_edge);
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
      f->valuedouble < 0 || f->valuedouble >= RP_NONE ||
      t->valuedouble < 0 || t->valuedouble >= RP_NONE ||
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
    if (i && (e[-1].from > e->from ||
              (e[-1].from == e->from && e[-1].to >= e->to)))
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
    return bad(r, s, "out of memory");
  for (uint32_t i = 0; i < old->nbuf && !s; i++) {
    const rp__buffer *b = &old->buf[i];
    rp_buffer_desc d = {b->name, NULL, b->bytes, b->elem, b->ndims,
                        {b->dims[0], b->dims[1], b->dims[2]}};
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
    rp_op_opts o = {op->name, 0, old->after + op->after0, op->nafter};
    s = rp__record_op(g, &p, acc, op->nacc, NULL, &o, NULL);
  }
  free(acc);
  if (s) {
    bad(r, s, "ops: %s", rp_graph_error(g));
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
static const char *const top_keys[K_N] = {"format", "version", "edges_check",
                                          "buffers", "ops", "edges"};

/* Calls @p fn on each element of the array at @p *pp, parsed by cJSON;
 * *pp ends past the array. A NULL @p fn only checks that each element is
 * JSON. */
typedef int (*fast_fn)(rd *, const char *, const char *, uint32_t,
                       rp_status *);

static rp_status each_element(rd *r, size_t *pp, const char *key,
                              rp_status (*fn)(rd *, const cJSON *,
                                              uint32_t), fast_fn fast) {
  size_t p = *pp;
  if (r->s[p] != '[')
    return bad(r, RP_EPARSE, "%s: expected an array, got %s", key,
               span_type(r, p));
  p = skip_ws(r, p + 1);
  if (p < r->n && r->s[p] == ']') {
    *pp = p + 1;
    return RP_OK;
  }
  for (uint32_t i = 0;; i++) {
    size_t ea = skip_ws(r, p), eb;
    char path[48];
    rp_status s;
    cJSON *j;
    if (i == UINT32_MAX - 1)
      return bad(r, RP_EPARSE, "%s: too many entries", key);
    slide(r, &ea);
    if ((s = skip_value(r, ea, 2, &eb)))
      return s;
    r->quiet = 1;
    int done = fast && rp__json_fast && fast(r, r->s + ea, r->s + eb, i, &s);
    r->quiet = 0;
    if (!done) {
      snprintf(path, sizeof path, "%s[%u]", key, i);
      if ((s = parse_span(r, (span){ea, eb}, path, &j)))
        return s;
      s = fn ? fn(r, j, i) : RP_OK;
      cJSON_Delete(j);
    }
    if (s)
      return s;
    p = skip_ws(r, eb);
    if (p < r->n && r->s[p] == ',') {
      p++;
      continue;
    }
    if (p < r->n && r->s[p] == ']') {
      *pp = p + 1;
      return RP_OK;
    }
    return bad_at(r, p, "expected ',' or ']'");
  }
}

static rp_status check_format(rd *r, const cJSON *j) {
  if (!cJSON_IsString(j) || strcmp(j->valuestring, "reprise-graph"))
    return cJSON_IsString(j)
               ? bad(r, RP_EPARSE, "format: expected \"reprise-graph\", got "
                     "\"%.64s\"", j->valuestring)
               : bad(r, RP_EPARSE, "format: expected \"reprise-graph\", got "
                     "%s", json_type(j));
  return RP_OK;
}

static rp_status check_version(rd *r, const cJSON *j) {
  if (!cJSON_IsNumber(j) || j->valuedouble != 1)
    return cJSON_IsNumber(j)
               ? bad(r, RP_EPARSE, "version: unsupported version %.17g (this "
                     "library reads version 1)", j->valuedouble)
               : bad(r, RP_EPARSE, "version: expected a number, got %s",
                     json_type(j));
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
    int c = v[k], d = c >= '0' && c <= '9' ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0)
      break;
    h = h << 4 | (uint64_t)d;
  }
  if (k != 16 || v[k])
    return bad(r, RP_EPARSE, "edges_check: expected 16 hexadecimal digits, "
               "got %s", json_type(j));
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
  rp_status s = each_element(r, &p, "ops", load_op, fast_op);
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
  if (at_end(r, va))
    return bad_at(r, va, "");
  if ((k == K_BUFFERS || k == K_EDGES || (k == K_OPS && r->seen_buffers)) &&
      r->s[va] == '[') {
    if (k == K_BUFFERS) {
      s = each_element(r, pp, "buffers", load_buffer, NULL);
      r->seen_buffers = 1;
      if (!s && r->deferred)
        s = load_deferred(r);
    } else if (k == K_OPS) {
      r->seen_ops = 1;
      s = each_element(r, pp, "ops", load_op, fast_op);
    } else {
      s = each_element(r, pp, "edges", r->opts || r->trust ? load_edge
                                                           : NULL,
                       fast_edge);
    }
    return s;
  }
  if ((s = skip_value(r, va, 1, &vb)))
    return s;
  *pp = vb;
  if (k == K_OPS) { /* before the buffers: kept until they come */
    r->seen_ops = 1;
    if (r->s[va] != '[')
      return bad(r, RP_EPARSE, "ops: expected an array, got %s",
                 span_type(r, va));
    if (!(r->deferred = malloc(vb - va + 1)))
      return bad(r, RP_ENOMEM, "out of memory");
    memcpy(r->deferred, r->s + va, vb - va);
    r->deferred[vb - va] = '\0';
    r->ndeferred = vb - va;
    line_col(r, va, &r->dline, &r->dcol);
    return RP_OK;
  }
  if (k == K_BUFFERS || k == K_EDGES)
    return bad(r, RP_EPARSE, "%s: expected an array, got %s", top_keys[k],
               span_type(r, va));
  /* A scalar (or an unknown key's value) is checked once the syntax
   * after it is, so that a syntax error comes first. */
  return parse_span(r, (span){va, vb},
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
  size_t p = skip_ws(r, 0);
  rp_status s;
  if (p >= r->n)
    return r->nul || r->io || r->oom ? bad_at(r, p, "")
                                     : bad(r, RP_EPARSE, "empty file");
  if (r->s[p] != '{')
    return bad_at(r, p, "expected an object ('{') at the top level");
  p = skip_ws(r, p + 1);
  if (p < r->n && r->s[p] == '}') {
    p++;
  } else {
    for (;;) {
      size_t ka = skip_ws(r, p), kb;
      slide(r, &ka);
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
      if (k < K_N && seen[k]) {
        char m[64];
        snprintf(m, sizeof m, "duplicate key \"%s\"", top_keys[k]);
        return bad_at(r, ka, m);
      }
      if (k < K_N)
        seen[k] = 1;
      p = skip_ws(r, kb);
      if (p >= r->n || r->s[p] != ':')
        return bad_at(r, p, "expected ':'");
      p = skip_ws(r, p + 1);
      cJSON *x = NULL;
      if ((s = top_value(r, k, &p, &x)))
        return s;
      p = skip_ws(r, p);
      int c = p < r->n ? r->s[p] : 0;
      if (c != ',' && c != '}') {
        cJSON_Delete(x);
        return bad_at(r, p, "expected ',' or '}'");
      }
      if (x && (s = top_scalar(r, k, x)))
        return s;
      p++;
      if (c == '}')
        break;
    }
  }
  p = skip_ws(r, p);
  if (p < r->n)
    return bad_at(r, p, "unexpected data after the graph");
  if (r->nul || r->io || r->oom)
    return bad_at(r, r->n, "");
  return RP_OK;
}

static rp_status load_all(rd *r) {
  int seen[K_N] = {0};
  rp_status s;
  if ((s = rp_graph_create(&r->g, RP_GRAPH_NO_COHERENCE)))
    return bad(r, s, "out of memory");
  if ((s = read_top(r, seen)))
    return s;
  for (int k = 0; k < K_N; k++)
    if (!seen[k] && k != K_EDGES && k != K_CHECK)
      return bad(r, RP_EPARSE, "missing key \"%s\"", top_keys[k]);
  if (r->trust) {
    if (!r->fe_bad && saved_edges_sane(r) &&
        edges_check(r->g, r->fe, r->nfe) == r->check) {
      if ((s = rp__load_edges(r->g, r->fe, r->nfe)))
        return bad(r, s, "%s", rp_graph_error(r->g));
      free(r->fe); /* copied: not held while the graph ends */
      r->fe = NULL;
    } else {
      if (r->opts && r->opts->warn)
        r->opts->warn(r->opts->user, "edges_check: the saved edges do not "
                      "match the file's operations (edited?): derived again");
      if ((s = rederive(r)))
        return s;
    }
  }
  if ((s = rp_graph_end(r->g)))
    return bad(r, s, "%s", rp_graph_error(r->g));
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
  if (!out || !fp || (o && (o->size != sizeof *o || o->flags & ~3u))) {
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
