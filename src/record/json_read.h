/* The graph file reader's parts (record/json_*.c): the window and the
 * scanner (json_scan.c), buffers and operations as cJSON elements
 * (json_elems.c), the fast path for elements as the writer writes them
 * (json_fast.c), saved edges and the top level (json_read.c). The edges'
 * check (json_check.c) is shared with the writer (json_write.c). */
#ifndef RP_JSON_READ_H
#define RP_JSON_READ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "record/graph.h"
#include "record/json_keys.h"

/* Integers in a graph file are JSON numbers, read as doubles: from 2^53 on
 * they may have lost precision already, so they are refused. */
#define MAX_INT 9007199254740992.0
/* Nesting allowed anywhere in a file; the format itself needs 5 levels. */
#define MAX_DEPTH 512

/* "kernel", "copy_h2d", ... by rp_op_type; "", "in", "out", "inout" by
 * rp_mode (record/json_keys.c). */
extern const char *const rp__json_type_names[5];
extern const char *const rp__json_mode_names[4];

/* The edges' check (json_check.c): a 64-bit hash of what the edges are
 * derived from and of the edges (see there). */
uint64_t rp__json_hash_nodes(const rp_graph *g);
uint64_t rp__json_hash_edge(uint64_t h, const rp_edge *e);
uint64_t rp__json_hash_end(uint64_t h, uint32_t m);
uint64_t rp__json_edges_check(const rp_graph *g, const rp_edge *e, uint32_t m);

typedef struct span {
  size_t a, b; /* [a, b) of the value; a == b: absent */
} span;

typedef struct rd {
  FILE *fp;
  char *s; /* the window; s[n] == '\0' */
  size_t n, cap;
  size_t want;           /* bytes of the next read: grows to rp__json_chunk */
  size_t line, col;      /* of s[0] */
  int eof, nul, io, oom; /* input ended: at its end, at a NUL byte, on a
                            read error (io: errno + 1), out of memory */
  char msg[512];
  rp_graph *g;
  uint32_t *names; /* open-addressing set of buffer indices, by name */
  size_t nnames;   /* capacity, a power of 2 */
  rp__access *acc; /* scratch of one operation */
  uint32_t cap_acc;
  rp_node *after;
  uint32_t cap_after;
  rp_slot scalars[RP_MAX_PARAMS]; /* scratch: a kernel's scalar values */
  const rp_read_opts *opts; /* unknown keys: warn or refuse (NULL: ignore) */
  void (*progress)(void *user, uint64_t bytes_read); /* opts' or NULL */
  uint64_t bytes_read;                               /* so far, for progress */
  /* Saved edges: trusted when "edges_check" came before "ops" and matches
   * (then the ops are loaded without deriving hazards). */
  int trust, has_check, fe_bad, seen_buffers, seen_ops;
  int quiet; /* the fast path is trying: rp__json_bad() records nothing */
  const char *fast_end; /* where the element the fast path read ended */
  /* The fast path's memory of the elements before: per key set (op,
   * access, box, edge) and position in the object, the key found there
   * last (tried first: elements repeat one layout); the last memory space
   * string parsed (nfsp bytes) and its value. */
  int8_t fkey[4][16];
  char fsp[16];
  size_t nfsp;
  int fsp_val;
  uint64_t check;
  rp_edge *fe;
  uint32_t nfe, cap_fe;
  char *deferred; /* "ops" met before "buffers": their text, read later */
  size_t ndeferred, dline, dcol;
} rd;

/* The first problem wins: later ones are consequences. */
rp_status rp__json_bad(rd *r, rp_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Reads one more chunk into the window; 0 at the end of the input (or on
 * a NUL byte, a read error, no memory: the flags say which). */
int rp__json_more(rd *r);
/* 1 if the window ends at or before @p p and the input has no more. */
int rp__json_at_end(rd *r, size_t p);
/* Forgets the bytes before @p *p once they are more than a chunk, keeping
 * count of their lines and columns; *p becomes 0. */
void rp__json_slide(rd *r, size_t *p);
/* A kernel's scalar value as the writer writes it: "0x" and 1 to 16 hex
 * digits (the slot's 64 bits), [a, a + n); 0 on success, -1 if not one
 * (record/json_elems.c). */
int rp__json_scalar(const char *a, size_t n, rp_slot *out);
/* Reports the keys of object @p j not in @p known (record/json_keys.c). */
rp_status rp__json_check_keys(rd *r, const cJSON *j, const char *path,
                              const char *const *known);
void rp__json_line_col(const rd *r, size_t pos, size_t *line, size_t *col);
/* A syntax error at byte @p pos (past the end: what ended the input). */
rp_status rp__json_bad_at(rd *r, size_t pos, const char *what);
size_t rp__json_skip_ws(rd *r, size_t p);
/* Finds the end of the value starting at @p p, at nesting @p depth,
 * reading more input as needed. Only strings and brackets are followed;
 * cJSON validates the rest later. */
rp_status rp__json_skip_value(rd *r, size_t p, unsigned depth, size_t *end);
/* Parses the value at [a, b) with cJSON. */
rp_status rp__json_parse_span(rd *r, span v, const char *path, cJSON **out);
rp_status rp__json_get(rd *r, const cJSON *o, const char *path, const char *key,
                       int required, const cJSON **out);
/* An integer in [0, 2^53): @p j is the value of PATH.KEY[IDX]. */
rp_status rp__json_as_uint(rd *r, const cJSON *j, const char *path,
                           const char *key, int idx, uint64_t *out);
/* Member @p key as an integer; @p present (may be NULL when required)
 * says whether it was there. */
rp_status rp__json_get_uint(rd *r, const cJSON *o, const char *path,
                            const char *key, int required, uint64_t *out,
                            int *present);
rp_status rp__json_get_str(rd *r, const cJSON *o, const char *path,
                           const char *key, int required, const char **out);
/* An array of 1 to 3 integers. */
rp_status rp__json_get_dims(rd *r, const cJSON *j, const char *path,
                            uint64_t v[3], unsigned *n);
/* Device index of "device:N" or a number, 0..RP_MAX_DEVICES-1. */
rp_status rp__json_check_device(rd *r, uint64_t d, const char *path,
                                const char *key);
/* The "space" of access PATH. */
rp_status rp__json_parse_space(rd *r, const char *str, const char *path,
                               int *out);
rp_status rp__json_load_buffer(rd *r, const cJSON *j, uint32_t i);
/* docs/design.md's table: a kernel accesses the space of its device, a host
 * task the host; a copy (as the recorder stores it) reads access[0] in its
 * source space and writes the same region as access[1] in its
 * destination space. */
rp_status rp__json_check_role(rd *r, const rp__proto *p, const rp__access *a,
                              uint32_t k, const char *path);
/* Device fields: "device" for kernels and copies; a peer copy gives
 * "src_device" and "dst_device" ("device", if there, is the source). */
rp_status rp__json_load_devices(rd *r, const cJSON *j, const char *path,
                                rp__proto *p);
rp_status rp__json_load_kernel_fields(rd *r, const cJSON *j, const char *path,
                                      rp__proto *p);
rp_status rp__json_load_op(rd *r, const cJSON *j, uint32_t i);
/* Operation i at [c, e): RP_OK or the recording's error in *st, and 1;
 * 0 to leave it to the cJSON path. e NULL: the element ends where its
 * object does (then r->fast_end; the window ends with a NUL, which no
 * element as written holds, so one cut by the window's end is left). */
int rp__json_fast_op(rd *r, const char *c, const char *e, uint32_t i,
                     rp_status *st);
/* Edge i at [c, e): 1 when it is one as written (then kept, if the saved
 * edges are pending); 0 to leave it to the cJSON path. e NULL: as for
 * rp__json_fast_op. */
int rp__json_fast_edge(rd *r, const char *c, const char *e, uint32_t i,
                       rp_status *st);
/* What a cJSON value is ("a string", "an object", ...), for messages. */
const char *rp__json_type_of(const cJSON *j);
/* The same for the unparsed value starting at window offset a. */
const char *rp__json_span_type(const rd *r, size_t a);
/* Where a value is, formatted only when something is wrong with it:
 * PATH, PATH.KEY, PATH[IDX] or PATH.KEY[IDX]. */
const char *rp__json_where(char *buf, size_t n, const char *path,
                           const char *key, int idx);

/* What a cJSON value is ("a string", "an object", ...), for messages. */
const char *rp__json_type_of(const cJSON *j);
/* The same for the unparsed value starting at window offset a. */
const char *rp__json_span_type(const rd *r, size_t a);
/* Where a value is, formatted only when something is wrong with it:
 * PATH, PATH.KEY, PATH[IDX] or PATH.KEY[IDX]. */
const char *rp__json_where(char *buf, size_t n, const char *path,
                           const char *key, int idx);

#endif
