/* JSON graph files: the reading window and the scanner. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/json_read.h"
#include "record/load.h"

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

rp_status rp__json_bad(rd *r, rp_status st, const char *fmt, ...) {
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
int rp__json_more(rd *r) {
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
  r->bytes_read += got;
  if (r->progress)
    r->progress(r->opts->user, r->bytes_read);
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
int rp__json_at_end(rd *r, size_t p) {
  while (p >= r->n)
    if (!rp__json_more(r))
      return 1;
  return 0;
}

/* Forgets the bytes before @p *p once they are more than a chunk, keeping
 * count of their lines and columns; *p becomes 0. */
void rp__json_slide(rd *r, size_t *p) {
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
rp_status rp__json_check_keys(rd *r, const cJSON *j, const char *path,
                              const char *const *known) {
  for (const cJSON *c = j->child; r->opts && c; c = c->next)
    if (c->string &&
        rp__json_key(r->opts, path, c->string, known, r->msg, sizeof r->msg))
      return RP_EPARSE;
  return RP_OK;
}

void rp__json_line_col(const rd *r, size_t pos, size_t *line, size_t *col) {
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
rp_status rp__json_bad_at(rd *r, size_t pos, const char *what) {
  size_t l, c;
  rp__json_line_col(r, pos, &l, &c);
  if (pos >= r->n) {
    if (r->oom)
      return rp__json_bad(r, RP_ENOMEM, "out of memory reading the file");
    if (r->io)
      return rp__json_bad(r, RP_EIO, "read error: %s", strerror(r->io - 1));
    if (r->nul)
      return rp__json_bad(r, RP_EPARSE,
                          "line %zu, column %zu: NUL byte in the file", l, c);
    return rp__json_bad(r, RP_EPARSE,
                        "line %zu, column %zu: unexpected end of file "
                        "(truncated?)",
                        l, c);
  }
  return rp__json_bad(r, RP_EPARSE, "line %zu, column %zu: %s", l, c, what);
}

size_t rp__json_skip_ws(rd *r, size_t p) {
  for (;;) {
    while (p < r->n && (r->s[p] == ' ' || r->s[p] == '\t' || r->s[p] == '\n' ||
                        r->s[p] == '\r'))
      p++;
    if (p < r->n || !rp__json_more(r))
      return p;
  }
}

/* Bytes rp__json_skip_value() stops at: 1 inside strings, 2 also between them. The
 * window holds no NUL before its end, where it stops too. */
static const unsigned char stop[256] = {
    ['\0'] = 3, ['"'] = 3, ['\\'] = 1, ['{'] = 2,
    ['}'] = 2,  ['['] = 2, [']'] = 2};

/* Finds the end of the value starting at @p p, at nesting @p depth,
 * reading more input as needed. Only strings and brackets are followed;
 * cJSON validates the rest later. */
rp_status rp__json_skip_value(rd *r, size_t p, unsigned depth, size_t *end) {
  size_t start = p;
  unsigned d = 0;
  if (rp__json_at_end(r, p))
    return rp__json_bad_at(r, p, "");
  do {
    unsigned char c = (unsigned char)r->s[p];
    if (c == '"') {
      for (p++;;) {
        const unsigned char *s = (const unsigned char *)r->s;
        while (!(stop[s[p]] & 1))
          p++;
        if (p >= r->n) {
          if (!rp__json_more(r))
            return rp__json_bad_at(r, p, "");
          continue;
        }
        if (s[p] == '"')
          break;
        if (rp__json_at_end(
                r, p + 1)) /* a backslash and the character it escapes */
          return rp__json_bad_at(r, r->n, "");
        p += 2;
      }
      p++;
    } else if (c == '{' || c == '[') {
      if (depth + ++d > MAX_DEPTH) {
        char m[64];
        snprintf(m, sizeof m, "nesting deeper than %d levels", MAX_DEPTH);
        return rp__json_bad_at(r, p, m);
      }
      p++;
    } else if (c == '}' || c == ']') {
      if (!d)
        return rp__json_bad_at(r, p, "expected a value");
      d--;
      p++;
    } else if (d) {
      for (;;) {
        const unsigned char *s = (const unsigned char *)r->s;
        while (!(stop[s[p]] & 2))
          p++;
        if (p < r->n || !rp__json_more(r))
          break;
      }
    } else {
      for (;;) {
        while (p < r->n && !strchr(" \t\r\n,:]}[{\"", r->s[p]))
          p++;
        if (p < r->n || !rp__json_more(r))
          break;
      }
      if (p == start)
        return rp__json_bad_at(r, p, "expected a value");
    }
  } while (d && (p < r->n || rp__json_more(r)));
  if (d)
    return rp__json_bad_at(r, r->n, "");
  *end = p;
  return RP_OK;
}

/* Parses the value at [a, b) with cJSON. */
rp_status rp__json_parse_span(rd *r, span v, const char *path, cJSON **out) {
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithLengthOpts(r->s + v.a, v.b - v.a, &end, 0);
  if (!j || end != r->s + v.b) {
    size_t pos = end && end >= r->s + v.a && end <= r->s + v.b
                     ? (size_t)(end - r->s)
                     : v.a;
    size_t l, c;
    cJSON_Delete(j);
    rp__json_line_col(r, pos, &l, &c);
    return rp__json_bad(
        r, RP_EPARSE, "%s: not valid JSON (line %zu, column %zu)", path, l, c);
  }
  *out = j;
  return RP_OK;
}

const char *rp__json_type_of(const cJSON *j) {
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

const char *rp__json_span_type(const rd *r, size_t a) {
  switch (r->s[a]) {
  case '"':
    return "a string";
  case '{':
    return "an object";
  case '[':
    return "an array";
  case 't':
  case 'f':
    return "a boolean";
  case 'n':
    return "null";
  default:
    return "a number";
  }
}
rp_status rp__json_get(rd *r, const cJSON *o, const char *path, const char *key,
                       int required, const cJSON **out) {
  const cJSON *found = NULL;
  for (const cJSON *c = o->child; c; c = c->next) {
    if (!c->string || c->string[0] != key[0] || strcmp(c->string, key))
      continue;
    if (found)
      return rp__json_bad(r, RP_EPARSE, "%s: duplicate key \"%s\"", path, key);
    found = c;
  }
  if (!found && required)
    return rp__json_bad(r, RP_EPARSE, "%s: missing key \"%s\"", path, key);
  *out = found;
  return RP_OK;
}

/* Where a value is, formatted only when something is wrong with it:
 * PATH, PATH.KEY, PATH[IDX] or PATH.KEY[IDX]. */
const char *rp__json_where(char *buf, size_t n, const char *path,
                           const char *key, int idx) {
  int w = snprintf(buf, n, "%s%s%s", path, key ? "." : "", key ? key : "");
  if (idx >= 0 && w >= 0 && (size_t)w < n)
    snprintf(buf + w, n - (size_t)w, "[%d]", idx);
  return buf;
}

/* An integer in [0, 2^53): @p j is the value of PATH.KEY[IDX]. */
rp_status rp__json_as_uint(rd *r, const cJSON *j, const char *path,
                           const char *key, int idx, uint64_t *out) {
  char w[160];
  if (!cJSON_IsNumber(j))
    return rp__json_bad(r, RP_EPARSE, "%s: expected an integer, got %s",
                        rp__json_where(w, sizeof w, path, key, idx),
                        rp__json_type_of(j));
  double v = j->valuedouble;
  if (v >= 0 && v < MAX_INT && v == floor(v)) {
    *out = (uint64_t)v;
    return RP_OK;
  }
  rp__json_where(w, sizeof w, path, key, idx);
  if (!isfinite(v))
    return rp__json_bad(r, RP_EPARSE, "%s: number out of range", w);
  if (v < 0)
    return rp__json_bad(r, RP_EPARSE, "%s: must not be negative (got %.17g)", w,
                        v);
  if (v != floor(v))
    return rp__json_bad(r, RP_EPARSE, "%s: expected an integer, got %.17g", w,
                        v);
  return rp__json_bad(r, RP_EPARSE, "%s: integer too large (2^53 or more)", w);
}

/* Member @p key as an integer; @p present (may be NULL when required)
 * says whether it was there. */
rp_status rp__json_get_uint(rd *r, const cJSON *o, const char *path,
                            const char *key, int required, uint64_t *out,
                            int *present) {
  const cJSON *j = NULL;
  rp_status s = rp__json_get(r, o, path, key, required, &j);
  if (present)
    *present = j != NULL;
  if (s || !j)
    return s;
  return rp__json_as_uint(r, j, path, key, -1, out);
}

rp_status rp__json_get_str(rd *r, const cJSON *o, const char *path,
                           const char *key, int required, const char **out) {
  const cJSON *j = NULL;
  rp_status s = rp__json_get(r, o, path, key, required, &j);
  *out = NULL;
  if (s || !j)
    return s;
  if (!cJSON_IsString(j))
    return rp__json_bad(r, RP_EPARSE, "%s.%s: expected a string, got %s", path,
                        key, rp__json_type_of(j));
  *out = j->valuestring;
  return RP_OK;
}

/* An array of 1 to 3 integers. */
rp_status rp__json_get_dims(rd *r, const cJSON *j, const char *path,
                            uint64_t v[3], unsigned *n) {
  if (!cJSON_IsArray(j))
    return rp__json_bad(r, RP_EPARSE, "%s: expected an array, got %s", path,
                        rp__json_type_of(j));
  int k = cJSON_GetArraySize(j);
  if (k < 1 || k > 3)
    return rp__json_bad(r, RP_EPARSE, "%s: expected 1 to 3 entries, got %d",
                        path, k);
  int i = 0;
  for (const cJSON *c = j->child; c; c = c->next, i++) {
    rp_status s = rp__json_as_uint(r, c, path, NULL, i, &v[i]);
    if (s)
      return s;
  }
  *n = (unsigned)k;
  return RP_OK;
}

/* Device index of "device:N" or a number, 0..RP_MAX_DEVICES-1. */
rp_status rp__json_check_device(rd *r, uint64_t d, const char *path,
                                const char *key) {
  char w[160];
  if (d >= RP_MAX_DEVICES)
    return rp__json_bad(r, RP_EPARSE, "%s: device %llu out of range (0..%d)",
                        rp__json_where(w, sizeof w, path, key, -1),
                        (unsigned long long)d, RP_MAX_DEVICES - 1);
  return RP_OK;
}

/* The "space" of access PATH. */
rp_status rp__json_parse_space(rd *r, const char *str, const char *path,
                               int *out) {
  if (!strcmp(str, "host")) {
    *out = RP_SPACE_HOST;
    return RP_OK;
  }
  const char *p = str + 7;
  if (strncmp(str, "device:", 7) || *p < '0' || *p > '9' ||
      (p[0] == '0' && p[1]) || strlen(p) > 6)
    return rp__json_bad(r, RP_EPARSE,
                        "%s.space: bad space \"%s\" (expected \"host\" "
                        "or \"device:N\")",
                        path, str);
  uint64_t d = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9')
      return rp__json_bad(r, RP_EPARSE,
                          "%s.space: bad space \"%s\" (expected "
                          "\"host\" or \"device:N\")",
                          path, str);
    d = d * 10 + (uint64_t)(*p - '0');
  }
  rp_status s = rp__json_check_device(r, d, path, "space");
  *out = (int)d;
  return s;
}
