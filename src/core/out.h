/* Buffered text output for the writers of big files (graph JSON, dot,
 * traces): bytes gathered in a local buffer and written with one fwrite
 * per 32 KiB, with integers formatted by hand, instead of a formatted call
 * per field. */
#ifndef RP_OUT_H
#define RP_OUT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rp__out {
  FILE *fp;
  size_t n;
  int bad;
  char buf[1 << 15];
} rp__out;

/* A writer to fp (NULL when out of memory). */
static inline rp__out *rp__out_new(FILE *fp) {
  rp__out *w = malloc(sizeof *w);
  if (w) {
    w->fp = fp;
    w->n = 0;
    w->bad = 0;
  }
  return w;
}

static inline void rp__out_flush(rp__out *w) {
  if (w->n && !w->bad && fwrite(w->buf, 1, w->n, w->fp) != w->n)
    w->bad = 1;
  w->n = 0;
}

static inline void rp__out_mem(rp__out *w, const char *s, size_t n) {
  while (n) {
    if (w->n == sizeof w->buf)
      rp__out_flush(w);
    size_t k = sizeof w->buf - w->n < n ? sizeof w->buf - w->n : n;
    memcpy(w->buf + w->n, s, k);
    w->n += k;
    s += k;
    n -= k;
  }
}

static inline void rp__out_str(rp__out *w, const char *s) {
  rp__out_mem(w, s, strlen(s));
}

static inline void rp__out_u64(rp__out *w, uint64_t v) {
  char t[24];
  int i = (int)sizeof t;
  do {
    t[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  rp__out_mem(w, t + i, sizeof t - (size_t)i);
}

static inline void rp__out_int(rp__out *w, int v) {
  if (v < 0) {
    rp__out_mem(w, "-", 1);
    rp__out_u64(w, (uint64_t) - (int64_t)v);
  } else {
    rp__out_u64(w, (uint64_t)v);
  }
}

/* A quoted JSON string. Bytes >= 0x80 pass through (UTF-8 stays UTF-8). */
/* The one JSON string escape of the tree (graph files, analyses, traces,
 * models): the escape of byte c into e (at most 7 bytes with its NUL) and
 * its length, or 0 when c stands for itself. Quotes and backslashes are
 * escaped, \n \t \r \b \f by name, other control bytes and DEL as
 * \u00XX; other bytes (UTF-8 included) as they are. */
static inline size_t rp__json_escape(unsigned char c, char e[8]) {
  const char *named = c == '"'    ? "\\\""
                      : c == '\\' ? "\\\\"
                      : c == '\n' ? "\\n"
                      : c == '\t' ? "\\t"
                      : c == '\r' ? "\\r"
                      : c == '\b' ? "\\b"
                      : c == '\f' ? "\\f"
                                  : NULL;
  if (named) {
    strcpy(e, named);
    return strlen(named);
  }
  if (c >= 0x20 && c != 0x7f)
    return 0;
  snprintf(e, 8, "\\u%04x", c);
  return 6;
}

/* s as a JSON string. */
static inline void rp__out_jstr(rp__out *w, const char *s) {
  rp__out_mem(w, "\"", 1);
  const char *run = s;
  char e[8];
  for (; *s; s++) {
    size_t k = rp__json_escape((unsigned char)*s, e);
    if (!k)
      continue;
    rp__out_mem(w, run, (size_t)(s - run));
    rp__out_mem(w, e, k);
    run = s + 1;
  }
  rp__out_mem(w, run, (size_t)(s - run));
  rp__out_mem(w, "\"", 1);
}

/* The tree's one JSON number text, for a finite v: %.15g when it reads
 * back as the same double, else %.17g, which always does (the check
 * runs in the current locale, whose decimal comma then becomes the point
 * JSON needs: tests/test_json_locale.c). rp__out_num and the analysis'
 * writers (rp__put_num) print it. */
static inline void rp__num_text(char t[40], double v) {
  snprintf(t, 40, "%.15g", v);
  if (strtod(t, NULL) != v)
    snprintf(t, 40, "%.17g", v);
  for (char *c = t; *c; c++)
    if (*c == ',')
      *c = '.';
}

/* A JSON number: whole numbers below 2^32 by hand (most times and costs),
 * else rp__num_text; null when not finite. */
static inline void rp__out_num(rp__out *w, double v) {
  if (!isfinite(v)) {
    rp__out_str(w, "null");
    return;
  }
  if (v >= 0 && v < 4294967296.0 && !signbit(v) && v == (double)(uint32_t)v) {
    rp__out_u64(w, (uint32_t)v);
    return;
  }
  char t[40];
  rp__num_text(t, v);
  rp__out_str(w, t);
}

/* Flushes and frees; 0, or -1 when a write failed. */
static inline int rp__out_end(rp__out *w) {
  FILE *fp = w->fp;
  rp__out_flush(w);
  int bad = w->bad;
  free(w);
  return bad || ferror(fp) ? -1 : 0;
}

#endif
