/* Buffered text output for the writers of big files (dot, traces): bytes
 * gathered in a local buffer and written with one fwrite per 32 KiB, with
 * integers formatted by hand, instead of a formatted call per field. */
#ifndef RP_OUT_H
#define RP_OUT_H

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
    rp__out_u64(w, (uint64_t)-(int64_t)v);
  } else {
    rp__out_u64(w, (uint64_t)v);
  }
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
