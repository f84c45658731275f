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
  char space[16];
  memcpy(space, sp, nsp);
  space[nsp] = '\0';
  if (rp__json_parse_space(r, space, "", &a->space))
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
    "id",         "name",   "type",  "device",  "src_device",
    "dst_device", "kernel", "space", "cost_us", "inserted",
    "access",     "after",  "scalars", NULL};

/* Operation i at [c, e): RP_OK or the recording's error in *st, and 1;
 * 0 to leave it to the cJSON path. */
int rp__json_fast_op(rd *r, const char *c, const char *e, uint32_t i,
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
        if (f_is(a, n, rp__json_type_names[t]))
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
          if (rp__grow((void **)&r->acc, &r->cap_acc, nacc + 1, sizeof *r->acc))
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
    case F_SCALARS:
      if (!f_lit(&c, '['))
        return 0;
      if (!f_lit(&c, ']')) {
        do {
          if (p.nscalars == RP_MAX_PARAMS || !f_str(&c, &a, &n) ||
              rp__json_scalar(a, n, &r->scalars[p.nscalars]))
            return 0;
          p.nscalars++;
        } while (f_lit(&c, ','));
        if (!f_lit(&c, ']'))
          return 0;
      }
      p.scalars = r->scalars;
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
  /* rp__json_load_devices() and rp__json_load_kernel_fields(), as conditions. */
  if (p.type != RP_OP_COPY_D2D && seen & (1u << F_SRC | 1u << F_DST))
    return 0;
  if (p.type != RP_OP_KERNEL &&
      seen & (1u << F_KERNEL | 1u << F_SPACE | 1u << F_SCALARS))
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
    if (rp__json_check_role(r, &p, &r->acc[k], k, ""))
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
    *st = rp__json_bad(r, s == RP_ENOMEM ? s : RP_EPARSE, "ops[%u]: %s", i,
                       rp_graph_error(r->g));
  else if (node != i)
    *st = rp__json_bad(r, RP_EPARSE, "ops[%u]: recorded as node %u", i, node);
  else
    *st = RP_OK;
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
  r->fe[r->nfe++] =
      (rp_edge){(rp_node)v[0], (rp_node)v[1], (rp_edge_kind)kind, (rp_buf)v[3]};
  return 1;
}
