/* JSON graph files: the fast path for elements as the writer writes them. */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/json_read.h"
#include "record/load.h"

/* --- the fast path: an operation or edge as the writer writes it --- */

/* A hand-written scanner for the elements of "ops" and "edges" in the
 * shape the writer gives them: known keys, each once, integers as plain
 * digits, strings without escapes, no "measured". It decides only
 * whether an element is such a one and valid; anything else (and any
 * problem) goes to the cJSON path above, which then says what is wrong.
 * It never accepts what that path refuses, and stores the same values. */

/* Byte classes, bits: 1 white space, 2 a byte a plain string may hold
 * (not a control byte, '"' or '\\'); ' ' is both. */
#define F_CLASS16(b)                                                           \
  f_class((b) + 0), f_class((b) + 1), f_class((b) + 2), f_class((b) + 3),      \
      f_class((b) + 4), f_class((b) + 5), f_class((b) + 6), f_class((b) + 7),  \
      f_class((b) + 8), f_class((b) + 9), f_class((b) + 10),                   \
      f_class((b) + 11), f_class((b) + 12), f_class((b) + 13),                 \
      f_class((b) + 14), f_class((b) + 15)
#define f_class(b)                                                             \
  (((b) == ' ' || (b) == '\n' || (b) == '\t' || (b) == '\r') |                 \
   ((b) >= 0x20 && (b) != '"' && (b) != '\\') << 1)
static const unsigned char f_cls[256] = {
    F_CLASS16(0),   F_CLASS16(16),  F_CLASS16(32),  F_CLASS16(48),
    F_CLASS16(64),  F_CLASS16(80),  F_CLASS16(96),  F_CLASS16(112),
    F_CLASS16(128), F_CLASS16(144), F_CLASS16(160), F_CLASS16(176),
    F_CLASS16(192), F_CLASS16(208), F_CLASS16(224), F_CLASS16(240)};
#undef f_class
#undef F_CLASS16

static inline void f_ws(const char **c) {
  while (f_cls[(unsigned char)**c] & 1)
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
  while (f_cls[*q] & 2)
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
  const char *dp = n < sizeof t ? localeconv()->decimal_point : NULL;
  if (!dp || dp[0] != '.' || dp[1])
    return 0;
  memcpy(t, *c, n);
  t[n] = '\0';
  *v = strtod(t, NULL);
  *c = p;
  return 1;
}

/* Is [a, a + n) (no NUL in it) the string lit? Compared in place: a
 * shorter lit differs at its NUL, before its end is passed. */
static inline int f_is(const char *a, size_t n, const char *lit) {
  for (size_t i = 0; i < n; i++)
    if (lit[i] != a[i])
      return 0;
  return lit[n] == '\0';
}

/* A key and its colon; the key's index in @p keys (NULL-terminated), or
 * -1 when unknown or not a plain string. *hint: the index tried first
 * (a key's), set to the one found. */
static int f_key(const char **c, const char *const *keys, int8_t *hint) {
  const char *a;
  size_t n;
  /* The key found at this place of the element before first, compared
   * as the string is scanned (one pass; a key holds no '"' nor escape,
   * and the window ends with a NUL, where the comparison stops). */
  f_ws(c);
  const char *s = *c, *lit = keys[*hint];
  if (*s == '"') {
    size_t i = 0;
    while (lit[i] && s[1 + i] == lit[i])
      i++;
    if (!lit[i] && i && s[1 + i] == '"') {
      *c = s + 2 + i;
      return f_lit(c, ':') ? *hint : -1;
    }
  }
  if (!f_str(c, &a, &n) || !f_lit(c, ':') || !n)
    return -1;
  int k = *hint;
  if (keys[k][0] != a[0] || !f_is(a, n, keys[k]))
    for (k = 0; keys[k]; k++)
      if (keys[k][0] == a[0] && f_is(a, n, keys[k]))
        break;
  if (!keys[k])
    return -1;
  *hint = (int8_t)k;
  return k;
}

/* Key sets of the fast path (rd.fkey). */
enum { FK_OP, FK_ACC, FK_BOX, FK_EDGE };

/* The hint of key number pos of an element of key set set. */
static int8_t *f_hint(rd *r, int set, unsigned pos) {
  return &r->fkey[set][pos < 16 ? pos : 15];
}

/* The end of an element just read: e, after white space; or, e NULL,
 * here (r->fast_end). */
static int f_end(rd *r, const char **c, const char *e) {
  if (!e) {
    r->fast_end = *c;
    return 1;
  }
  f_ws(c);
  return *c == e;
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
                                         "bytes",  "box",   NULL};
static const char *const f_box_keys[] = {"lo", "hi", NULL};

/* One access (its role is checked once the op's type is known). */
static int f_access(rd *r, const char **c, rp__access *a) {
  uint64_t buf = 0, off = 0, len = 0, lo[3] = {0}, hi[3] = {0};
  unsigned nlo = 0, nhi = 0, seen = 0;
  const char *sp = NULL, *md = NULL;
  size_t nsp = 0, nmd = 0;
  if (!f_lit(c, '{'))
    return 0;
  unsigned nk = 0;
  do {
    int k = f_key(c, f_acc_keys, f_hint(r, FK_ACC, nk++));
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
      unsigned nb = 0;
      if (!f_lit(c, '{'))
        return 0;
      do {
        int b = f_key(c, f_box_keys, f_hint(r, FK_BOX, nb++));
        if (b < 0 || bs & 1u << b || !f_dims(c, b ? hi : lo, b ? &nhi : &nlo))
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
  if (nsp && nsp == r->nfsp && !memcmp(sp, r->fsp, nsp)) {
    a->space = r->fsp_val; /* the space of the access before */
  } else {
    char space[16];
    memcpy(space, sp, nsp);
    space[nsp] = '\0';
    if (rp__json_parse_space(r, space, "", &a->space))
      return 0;
    memcpy(r->fsp, sp, nsp);
    r->nfsp = nsp;
    r->fsp_val = a->space;
  }
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
    a->region = rp_range_bytes((rp_buf)buf, off, len);
  } else if (!has_box) {
    a->region = rp_range_bytes((rp_buf)buf, 0, b->bytes);
  } else {
    if (!b->ndims || nlo != b->ndims || nhi != b->ndims)
      return 0;
    for (unsigned d = 0; d < nlo; d++)
      if (lo[d] > hi[d] || hi[d] > b->dims[d])
        return 0;
    a->region = rp_box_elems((rp_buf)buf, nlo, lo, hi);
  }
  return 1;
}

enum {
  F_ID,
  F_NAME,
  F_TYPE,
  F_DEVICE,
  F_SRC,
  F_DST,
  F_KERNEL,
  F_SPACE,
  F_COST,
  F_INSERTED,
  F_ACCESS,
  F_AFTER,
  F_SCALARS
};
static const char *const f_op_keys[] = {
    "id",         "name",   "type",    "device",  "src_device",
    "dst_device", "kernel", "space",   "cost_us", "inserted",
    "access",     "after",  "scalars", NULL};

/* An operation as it is read: the proto, and what the checks need. */
typedef struct f_op {
  uint64_t id, dev, src, dst, sp[3];
  unsigned nsp, seen;
  const char *name, *kern;
  size_t nname, nkern;
  uint32_t nacc, nafter;
  int type;
  rp__proto p;
} f_op;

/* A list "[x, ...]" of items read by item(r, c, o, k) (k: the index);
 * 1 if well formed and every item read. */
typedef int (*f_item_fn)(rd *r, const char **c, f_op *o, uint32_t k,
                         uint32_t i);

static int f_list(rd *r, const char **c, f_op *o, uint32_t i, f_item_fn item) {
  if (!f_lit(c, '['))
    return 0;
  if (f_lit(c, ']'))
    return 1;
  uint32_t k = 0;
  do {
    if (!item(r, c, o, k++, i))
      return 0;
  } while (f_lit(c, ','));
  return f_lit(c, ']');
}

static int f_op_access(rd *r, const char **c, f_op *o, uint32_t k, uint32_t i) {
  (void)i;
  if (rp__grow((void **)&r->acc, &r->cap_acc, k + 1, sizeof *r->acc))
    return 0;
  memset(&r->acc[k], 0, sizeof r->acc[k]);
  if (!f_access(r, c, &r->acc[k]))
    return 0;
  o->nacc = k + 1;
  return 1;
}

static int f_op_scalar(rd *r, const char **c, f_op *o, uint32_t k, uint32_t i) {
  const char *a;
  size_t n;
  (void)i;
  if (k == RP_MAX_PARAMS || !f_str(c, &a, &n) ||
      rp__json_scalar(a, n, &r->scalars[k]))
    return 0;
  o->p.nscalars = k + 1;
  return 1;
}

/* An explicit dependency: an earlier operation. */
static int f_op_after(rd *r, const char **c, f_op *o, uint32_t k, uint32_t i) {
  uint64_t v;
  if (rp__grow((void **)&r->after, &r->cap_after, k + 1, sizeof *r->after) ||
      !f_uint(c, &v) || v >= i)
    return 0;
  r->after[k] = (rp_node)v;
  o->nafter = k + 1;
  return 1;
}

/* The value of key k of operation i; 1 if read and valid. */
static int f_op_field(rd *r, const char **c, f_op *o, int k, uint32_t i) {
  const char *a;
  size_t n;
  switch (k) {
  case F_ID:
    return f_uint(c, &o->id) && o->id == i;
  case F_NAME:
    return f_str(c, &o->name, &o->nname);
  case F_TYPE:
    if (!f_str(c, &a, &n))
      return 0;
    for (int t = 0; t < 5; t++)
      if (f_is(a, n, rp__json_type_names[t]))
        o->type = t;
    return o->type >= 0;
  case F_DEVICE:
    return f_uint(c, &o->dev);
  case F_SRC:
    return f_uint(c, &o->src);
  case F_DST:
    return f_uint(c, &o->dst);
  case F_KERNEL:
    return f_str(c, &o->kern, &o->nkern);
  case F_SPACE:
    return f_dims(c, o->sp, &o->nsp);
  case F_COST:
    return f_num(c, &o->p.cost_us) && isfinite(o->p.cost_us) &&
           o->p.cost_us >= 0;
  case F_INSERTED:
    f_ws(c);
    if (!strncmp(*c, "true", 4)) {
      o->p.inserted = true;
      *c += 4;
      return 1;
    }
    if (!strncmp(*c, "false", 5)) {
      *c += 5;
      return 1;
    }
    return 0;
  case F_ACCESS:
    return f_list(r, c, o, i, f_op_access);
  case F_SCALARS:
    o->p.scalars = r->scalars;
    return f_list(r, c, o, i, f_op_scalar);
  default: /* F_AFTER */
    return f_list(r, c, o, i, f_op_after);
  }
}

/* The object of operation i at [c, e), each known key once; 1 if read. */
static int f_op_object(rd *r, const char *c, const char *e, f_op *o,
                       uint32_t i) {
  memset(o, 0, sizeof *o);
  o->sp[0] = o->sp[1] = o->sp[2] = 1;
  o->p.cost_us = -1;
  o->type = -1;
  if (!f_lit(&c, '{'))
    return 0;
  unsigned nk = 0;
  do {
    int k = f_key(&c, f_op_keys, f_hint(r, FK_OP, nk++));
    if (k < 0 || o->seen & 1u << k)
      return 0;
    o->seen |= 1u << k;
    if (!f_op_field(r, &c, o, k, i))
      return 0;
  } while (f_lit(&c, ','));
  if (!f_lit(&c, '}') || !f_end(r, &c, e))
    return 0;
  return o->seen & 1u << F_ID && o->type >= 0 && o->seen & 1u << F_ACCESS;
}

/* The proto's devices, index space and accesses' roles, checked as
 * rp__json_load_devices() and rp__json_load_kernel_fields() check them;
 * 1 if valid. */
static int f_op_proto(rd *r, f_op *o) {
  rp__proto *p = &o->p;
  unsigned seen = o->seen;
  p->type = (rp_op_type)o->type;
  int has_dev = !!(seen & 1u << F_DEVICE);
  if (p->type != RP_OP_COPY_D2D && seen & (1u << F_SRC | 1u << F_DST))
    return 0;
  if (p->type != RP_OP_KERNEL &&
      seen & (1u << F_KERNEL | 1u << F_SPACE | 1u << F_SCALARS))
    return 0;
  if (p->type == RP_OP_HOST) {
    p->device = p->dst_device = 0;
  } else if (p->type != RP_OP_COPY_D2D) {
    if (!has_dev || o->dev >= RP_MAX_DEVICES)
      return 0;
    p->device = p->dst_device = (int)o->dev;
  } else {
    if ((has_dev && (o->dev >= RP_MAX_DEVICES || o->dev != o->src)) ||
        !(seen & 1u << F_SRC) || !(seen & 1u << F_DST) ||
        o->src >= RP_MAX_DEVICES || o->dst >= RP_MAX_DEVICES ||
        o->src == o->dst)
      return 0;
    p->device = (int)o->src;
    p->dst_device = (int)o->dst;
  }
  if (p->type == RP_OP_KERNEL) {
    for (unsigned k = 0; k < 3; k++)
      if (!o->sp[k])
        o->sp[k] = 1;
    p->space = rp_dims3(o->sp[0], o->sp[1], o->sp[2]);
  }
  if (p->type != RP_OP_KERNEL && p->type != RP_OP_HOST && o->nacc != 2)
    return 0;
  for (uint32_t k = 0; k < o->nacc; k++)
    if (rp__json_check_role(r, p, &r->acc[k], k, ""))
      return 0;
  return 1;
}

/* Records (or, trusted, appends) operation i; the file's error, or
 * RP_OK. */
static rp_status f_op_record(rd *r, f_op *o, uint32_t i) {
  rp__proto *p = &o->p;
  /* The strings end where their quotes are, for as long as they are
   * needed (the text is not read again). */
  char *nend = o->name ? (char *)o->name + o->nname : NULL;
  char *kend = o->kern ? (char *)o->kern + o->nkern : NULL;
  if (nend)
    *nend = '\0';
  if (kend)
    *kend = '\0';
  p->kernel_name = (char *)o->kern;
  rp_op_opts opts =
      RP_OP_OPTS_WITH(.name = o->name, .after = r->after, .nafter = o->nafter);
  rp_node node = RP_NONE;
  rp_status s = RP_OK;
  if (r->trust) {
    for (uint32_t k = 0; k < o->nacc && !s; k++)
      s = rp__region_check(r->g, &r->acc[k].region, "access");
    if (!s)
      s = rp__load_op(r->g, p, r->acc, o->nacc, r->after, o->nafter, o->name,
                      &node);
  } else {
    s = rp__record_op(r->g, p, r->acc, o->nacc, NULL, &opts, &node);
  }
  if (nend)
    *nend = '"';
  if (kend)
    *kend = '"';
  r->quiet = 0;
  if (s)
    return rp__json_bad(r, s == RP_ENOMEM ? s : RP_EPARSE, "ops[%u]: %s", i,
                        rp_graph_error(r->g));
  if (node != i)
    return rp__json_bad(r, RP_EPARSE, "ops[%u]: recorded as node %u", i, node);
  return RP_OK;
}

/* Operation i at [c, e): RP_OK or the recording's error in *st, and 1;
 * 0 to leave it to the cJSON path. */
int rp__json_fast_op(rd *r, const char *c, const char *e, uint32_t i,
                     rp_status *st) {
  f_op o;
  if (!f_op_object(r, c, e, &o, i) || !f_op_proto(r, &o))
    return 0;
  *st = f_op_record(r, &o, i);
  return 1;
}

static const char *const f_edge_keys[] = {"from", "to", "kind", "buffer", NULL};

/* Edge i at [c, e): 1 when it is one as written (then kept, if the saved
 * edges are pending); 0 to leave it to the cJSON path. */
int rp__json_fast_edge(rd *r, const char *c, const char *e, uint32_t i,
                       rp_status *st) {
  uint64_t v[4] = {0, 0, 0, RP_NONE};
  unsigned seen = 0;
  int kind = -1;
  (void)i;
  if (!f_lit(&c, '{'))
    return 0;
  unsigned nk = 0;
  do {
    int k = f_key(&c, f_edge_keys, f_hint(r, FK_EDGE, nk++));
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
  if (!f_lit(&c, '}') || !f_end(r, &c, e) || (seen & 7) != 7 ||
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
  r->fe[r->nfe++] =
      (rp_edge){(rp_node)v[0], (rp_node)v[1], (rp_edge_kind)kind, (rp_buf)v[3]};
  return 1;
}
