/* JSON graph files: buffers and operations read from cJSON elements. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record/json_read.h"
#include "record/load.h"

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
    return rp__json_bad(r, RP_ENOMEM, "out of memory");
  }
  memset(r->names, 0xff, cap * sizeof *r->names);
  r->nnames = cap;
  for (size_t i = 0; i < oldn; i++)
    if (old[i] != RP_NONE)
      r->names[name_slot(r, r->g->buf[old[i]].name)] = old[i];
  free(old);
  return RP_OK;
}

rp_status rp__json_load_buffer(rd *r, const cJSON *j, uint32_t i) {
  char path[48], kp[64];
  snprintf(path, sizeof path, "buffers[%u]", i);
  if (!cJSON_IsObject(j))
    return rp__json_bad(r, RP_EPARSE, "%s: expected an object, got %s", path,
                        rp__json_type_of(j));
  rp_buffer_desc d = {0};
  uint64_t id, elem = 1;
  int has_elem;
  const cJSON *dims = NULL;
  rp_status s;
  if ((s = rp__json_check_keys(r, j, path, rp__keys_buffer)) ||
      (s = rp__json_get_uint(r, j, path, "id", 1, &id, NULL)))
    return s;
  if (id != i)
    return rp__json_bad(r, RP_EPARSE,
                        "%s.id: expected %u (buffer ids are 0, 1, 2, "
                        "... in order), got %llu",
                        path, i, (unsigned long long)id);
  if ((s = rp__json_get_str(r, j, path, "name", 1, &d.name)) ||
      (s = rp__json_get_uint(r, j, path, "bytes", 1, &d.bytes, NULL)) ||
      (s = rp__json_get_uint(r, j, path, "elem", 0, &elem, &has_elem)) ||
      (s = rp__json_get(r, j, path, "dims", 0, &dims)))
    return s;
  if (!d.name[0])
    return rp__json_bad(r, RP_EPARSE, "%s.name: empty", path);
  if (d.bytes == 0)
    return rp__json_bad(r, RP_EPARSE, "%s.bytes: must be positive", path);
  if (elem == 0)
    return rp__json_bad(r, RP_EPARSE, "%s.elem: must be positive", path);
  d.elem = elem;
  if (dims) {
    snprintf(kp, sizeof kp, "%s.dims", path);
    if ((s = rp__json_get_dims(r, dims, kp, d.dims, &d.ndims)))
      return s;
    uint64_t prod = elem;
    for (unsigned k = 0; k < d.ndims; k++) {
      if (d.dims[k] == 0)
        return rp__json_bad(r, RP_EPARSE, "%s[%u]: must be positive", kp, k);
      if (prod > UINT64_MAX / d.dims[k])
        return rp__json_bad(r, RP_EPARSE, "%s: elem x dims overflows 64 bits",
                            kp);
      prod *= d.dims[k];
    }
    if (prod != d.bytes)
      return rp__json_bad(
          r, RP_EPARSE, "%s.bytes: %llu, but elem x dims = %llu", path,
          (unsigned long long)d.bytes, (unsigned long long)prod);
  } else if (d.bytes % elem) {
    return rp__json_bad(r, RP_EPARSE,
                        "%s.bytes: %llu is not a multiple of elem %llu", path,
                        (unsigned long long)d.bytes, (unsigned long long)elem);
  }
  if ((s = names_reserve(r)))
    return s;
  size_t slot = name_slot(r, d.name);
  if (r->names[slot] != RP_NONE)
    return rp__json_bad(r, RP_EPARSE,
                        "%s.name: duplicate buffer name \"%s\" (also "
                        "buffers[%u])",
                        path, d.name, r->names[slot]);
  /* Loaded buffers have no host memory: a program binds its own arrays
   * before replaying (rp_exec_rebind). */
  if ((s = rp_buffer_add(r->g, &d, NULL)))
    return rp__json_bad(r, s == RP_ENOMEM ? s : RP_EPARSE, "%s: %s", path,
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
  if ((s = rp__json_get(r, j, path, "offset", 0, &off)) ||
      (s = rp__json_get(r, j, path, "bytes", 0, &len)) ||
      (s = rp__json_get(r, j, path, "box", 0, &box)))
    return s;
  if (box && (off || len))
    return rp__json_bad(r, RP_EPARSE, "%s: both a byte range and a box", path);
  if (!off != !len)
    return rp__json_bad(r, RP_EPARSE, "%s: \"%s\" without \"%s\"", path,
                        off ? "offset" : "bytes", off ? "bytes" : "offset");
  if (off) {
    if ((s = rp__json_get_uint(r, j, path, "offset", 1, &o, NULL)) ||
        (s = rp__json_get_uint(r, j, path, "bytes", 1, &n, NULL)))
      return s;
    if (o > b->bytes || n > b->bytes - o)
      return rp__json_bad(r, RP_EPARSE,
                          "%s: region ends past buffer \"%s\" (%llu "
                          "bytes)",
                          path, b->name, (unsigned long long)b->bytes);
    *reg = rp_range_bytes(reg->buf, o, n);
    return RP_OK;
  }
  if (!box) {
    *reg = rp_range_bytes(reg->buf, 0, b->bytes);
    return RP_OK;
  }
  char bp[128], kp[140];
  snprintf(bp, sizeof bp, "%s.box", path);
  if (!cJSON_IsObject(box))
    return rp__json_bad(r, RP_EPARSE, "%s: expected an object, got %s", bp,
                        rp__json_type_of(box));
  if (!b->ndims)
    return rp__json_bad(r, RP_EPARSE, "%s: buffer \"%s\" has no dims", bp,
                        b->name);
  const cJSON *lo = NULL, *hi = NULL;
  uint64_t vlo[3] = {0}, vhi[3] = {0};
  unsigned nlo, nhi;
  if ((s = rp__json_check_keys(r, box, bp, rp__keys_box)) ||
      (s = rp__json_get(r, box, bp, "lo", 1, &lo)) ||
      (s = rp__json_get(r, box, bp, "hi", 1, &hi)))
    return s;
  snprintf(kp, sizeof kp, "%s.lo", bp);
  if ((s = rp__json_get_dims(r, lo, kp, vlo, &nlo)))
    return s;
  snprintf(kp, sizeof kp, "%s.hi", bp);
  if ((s = rp__json_get_dims(r, hi, kp, vhi, &nhi)))
    return s;
  if (nlo != b->ndims || nhi != b->ndims)
    return rp__json_bad(r, RP_EPARSE,
                        "%s: rank %u, but buffer \"%s\" has %u dims", bp,
                        nlo != b->ndims ? nlo : nhi, b->name, b->ndims);
  for (unsigned k = 0; k < nlo; k++) {
    if (vlo[k] > vhi[k])
      return rp__json_bad(r, RP_EPARSE, "%s: lo[%u] = %llu > hi[%u] = %llu", bp,
                          k, (unsigned long long)vlo[k], k,
                          (unsigned long long)vhi[k]);
    if (vhi[k] > b->dims[k])
      return rp__json_bad(r, RP_EPARSE,
                          "%s: hi[%u] = %llu is past buffer \"%s\" "
                          "(dims[%u] = %llu)",
                          bp, k, (unsigned long long)vhi[k], b->name, k,
                          (unsigned long long)b->dims[k]);
  }
  *reg = rp_box_elems(reg->buf, nlo, vlo, vhi);
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
rp_status rp__json_check_role(rd *r, const rp__proto *p, const rp__access *a,
                              uint32_t k, const char *path) {
  char want[16], got[16];
  int src = p->device, dst = p->device;
  const char *what = "a copy to device";
  switch (p->type) {
  case RP_OP_KERNEL:
    if (a->space != p->device)
      return rp__json_bad(r, RP_EPARSE,
                          "%s.space: a kernel on device %d accesses "
                          "\"%s\", not \"%s\"",
                          path, p->device, space_str(p->device, want),
                          space_str(a->space, got));
    return RP_OK;
  case RP_OP_HOST:
    if (a->space != RP_SPACE_HOST)
      return rp__json_bad(r, RP_EPARSE,
                          "%s.space: a host task accesses \"host\", "
                          "not \"%s\"",
                          path, space_str(a->space, got));
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
    return rp__json_bad(r, RP_EPARSE,
                        "%s: a copy has exactly 2 accesses (source, "
                        "destination)",
                        path);
  int sp = k ? dst : src;
  if (a->space != sp)
    return rp__json_bad(r, RP_EPARSE, "%s.space: %s %d %s \"%s\", not \"%s\"",
                        path, what, p->device, k ? "writes" : "reads",
                        space_str(sp, want), space_str(a->space, got));
  if (a->mode != (k ? RP_OUT : RP_IN))
    return rp__json_bad(r, RP_EPARSE,
                        "%s.mode: a copy %s: expected \"%s\", got "
                        "\"%s\"",
                        path, k ? "writes its destination" : "reads its source",
                        k ? "out" : "in", rp__json_mode_names[a->mode]);
  if (k == 1) {
    const rp_region *x = &a[-1].region, *y = &a->region;
    int same = x->buf == y->buf && x->kind == y->kind && x->ndims == y->ndims &&
               x->offset == y->offset && x->bytes == y->bytes;
    for (unsigned d = 0; same && d < 3; d++)
      same = x->lo[d] == y->lo[d] && x->hi[d] == y->hi[d];
    if (!same)
      return rp__json_bad(r, RP_EPARSE,
                          "%s: a copy writes the region it reads "
                          "(access[0]'s)",
                          path);
  }
  return RP_OK;
}

static rp_status load_access(rd *r, const cJSON *j, const char *path,
                             const rp__proto *p, rp__access *a, uint32_t k) {
  if (!cJSON_IsObject(j))
    return rp__json_bad(r, RP_EPARSE, "%s: expected an object, got %s", path,
                        rp__json_type_of(j));
  uint64_t b;
  const char *space, *mode;
  rp_status s;
  if ((s = rp__json_check_keys(r, j, path, rp__keys_access)) ||
      (s = rp__json_get_uint(r, j, path, "buffer", 1, &b, NULL)))
    return s;
  if (b >= r->g->nbuf)
    return rp__json_bad(r, RP_EPARSE,
                        "%s.buffer: unknown buffer %llu (the file has "
                        "%u)",
                        path, (unsigned long long)b, r->g->nbuf);
  if ((s = rp__json_get_str(r, j, path, "space", 1, &space)))
    return s;
  if ((s = rp__json_parse_space(r, space, path, &a->space)))
    return s;
  if ((s = rp__json_get_str(r, j, path, "mode", 1, &mode)))
    return s;
  if (!strcmp(mode, "in"))
    a->mode = RP_IN;
  else if (!strcmp(mode, "out"))
    a->mode = RP_OUT;
  else if (!strcmp(mode, "inout"))
    a->mode = RP_INOUT;
  else
    return rp__json_bad(r, RP_EPARSE,
                        "%s.mode: bad mode \"%s\" (expected \"in\", "
                        "\"out\" or \"inout\")",
                        path, mode);
  a->region.buf = (rp_buf)b;
  if ((s = load_region(r, j, path, &a->region)))
    return s;
  return rp__json_check_role(r, p, a, k, path);
}

static rp_status load_type(rd *r, const cJSON *j, const char *path,
                           rp__proto *p) {
  const char *t;
  rp_status s = rp__json_get_str(r, j, path, "type", 1, &t);
  if (s)
    return s;
  for (int k = 0; k < 5; k++)
    if (!strcmp(t, rp__json_type_names[k])) {
      p->type = (rp_op_type)k;
      return RP_OK;
    }
  return rp__json_bad(r, RP_EPARSE,
                      "%s.type: unknown type \"%s\" (expected kernel, "
                      "copy_h2d, copy_d2h, copy_d2d or host)",
                      path, t);
}

/* Device fields: "device" for kernels and copies; a peer copy gives
 * "src_device" and "dst_device" ("device", if there, is the source). */
rp_status rp__json_load_devices(rd *r, const cJSON *j, const char *path,
                                rp__proto *p) {
  uint64_t d = 0, src = 0, dst = 0;
  int has_d;
  rp_status s;
  if (p->type == RP_OP_HOST) {
    if ((s = rp__json_get_uint(r, j, path, "device", 0, &d, &has_d)))
      return s;
    p->device = p->dst_device = 0; /* as rp_record_host() stores it */
    return RP_OK;
  }
  if (p->type != RP_OP_COPY_D2D) {
    if ((s = rp__json_get_uint(r, j, path, "device", 1, &d, NULL)) ||
        (s = rp__json_check_device(r, d, path, "device")))
      return s;
    p->device = p->dst_device = (int)d;
    return RP_OK;
  }
  if ((s = rp__json_get_uint(r, j, path, "device", 0, &d, &has_d)) ||
      (has_d && (s = rp__json_check_device(r, d, path, "device"))) ||
      (s = rp__json_get_uint(r, j, path, "src_device", 1, &src, NULL)) ||
      (s = rp__json_check_device(r, src, path, "src_device")) ||
      (s = rp__json_get_uint(r, j, path, "dst_device", 1, &dst, NULL)) ||
      (s = rp__json_check_device(r, dst, path, "dst_device")))
    return s;
  if (has_d && d != src)
    return rp__json_bad(r, RP_EPARSE, "%s.device: %llu, but src_device is %llu",
                        path, (unsigned long long)d, (unsigned long long)src);
  if (src == dst)
    return rp__json_bad(r, RP_EPARSE,
                        "%s.dst_device: a peer copy needs two devices "
                        "(both are %llu)",
                        path, (unsigned long long)src);
  p->device = (int)src;
  p->dst_device = (int)dst;
  return RP_OK;
}

int rp__json_scalar(const char *a, size_t n, rp_slot *out) {
  uint64_t v = 0;
  if (n < 3 || n > 18 || a[0] != '0' || a[1] != 'x')
    return -1;
  for (size_t i = 2; i < n; i++) {
    char c = a[i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0)
      return -1;
    v = v << 4 | (uint64_t)d;
  }
  out->u64 = v;
  return 0;
}

rp_status rp__json_load_kernel_fields(rd *r, const cJSON *j, const char *path,
                                      rp__proto *p) {
  const cJSON *sp = NULL, *sc = NULL;
  const char *kn;
  rp_status s;
  if ((s = rp__json_get_str(r, j, path, "kernel", 0, &kn)) ||
      (s = rp__json_get(r, j, path, "space", 0, &sp)) ||
      (s = rp__json_get(r, j, path, "scalars", 0, &sc)))
    return s;
  p->kernel_name = (char *)kn;
  p->scalars = r->scalars;
  p->nscalars = 0;
  if (sc && !cJSON_IsArray(sc))
    return rp__json_bad(r, RP_EPARSE, "%s.scalars: expected an array, got %s",
                        path, rp__json_type_of(sc));
  for (const cJSON *c = sc ? sc->child : NULL; c; c = c->next) {
    if (p->nscalars == RP_MAX_PARAMS)
      return rp__json_bad(r, RP_EPARSE, "%s.scalars: more than %d values", path,
                          RP_MAX_PARAMS);
    if (!cJSON_IsString(c) ||
        rp__json_scalar(c->valuestring, strlen(c->valuestring),
                        &r->scalars[p->nscalars]))
      return rp__json_bad(r, RP_EPARSE,
                          "%s.scalars[%u]: expected a string \"0x\" and 1 "
                          "to 16 hex digits (the value's 64 bits)",
                          path, p->nscalars);
    p->nscalars++;
  }
  p->space = rp_dims3(1, 1, 1);
  if (sp) {
    uint64_t v[3] = {1, 1, 1};
    unsigned n;
    char kp[96];
    snprintf(kp, sizeof kp, "%s.space", path);
    if ((s = rp__json_get_dims(r, sp, kp, v, &n)))
      return s;
    for (unsigned k = 0; k < 3; k++)
      if (!v[k])
        v[k] = 1;
    p->space = rp_dims3(v[0], v[1], v[2]);
  }
  return RP_OK;
}

rp_status rp__json_load_op(rd *r, const cJSON *j, uint32_t i) {
  char path[48], kp[96];
  snprintf(path, sizeof path, "ops[%u]", i);
  if (!cJSON_IsObject(j))
    return rp__json_bad(r, RP_EPARSE, "%s: expected an object, got %s", path,
                        rp__json_type_of(j));
  rp__proto p;
  memset(&p, 0, sizeof p);
  p.cost_us = -1;
  uint64_t id;
  const char *name;
  const cJSON *cost = NULL, *ins = NULL, *acc = NULL, *after = NULL;
  rp_status s;
  if ((s = rp__json_check_keys(r, j, path, rp__keys_op)) ||
      (s = rp__json_get_uint(r, j, path, "id", 1, &id, NULL)))
    return s;
  if (id != i)
    return rp__json_bad(r, RP_EPARSE,
                        "%s.id: expected %u (op ids are their program "
                        "order: 0, 1, 2, ...), got %llu",
                        path, i, (unsigned long long)id);
  if ((s = rp__json_get_str(r, j, path, "name", 0, &name)) ||
      (s = load_type(r, j, path, &p)) ||
      (s = rp__json_load_devices(r, j, path, &p)))
    return s;
  if (p.type == RP_OP_KERNEL &&
      (s = rp__json_load_kernel_fields(r, j, path, &p)))
    return s;
  if ((s = rp__json_get(r, j, path, "inserted", 0, &ins)))
    return s;
  if (ins && !cJSON_IsBool(ins))
    return rp__json_bad(r, RP_EPARSE, "%s.inserted: expected a boolean, got %s",
                        path, rp__json_type_of(ins));
  p.inserted = ins && cJSON_IsTrue(ins);
  if ((s = rp__json_get(r, j, path, "cost_us", 0, &cost)))
    return s;
  if (cost) {
    if (!cJSON_IsNumber(cost))
      return rp__json_bad(r, RP_EPARSE, "%s.cost_us: expected a number, got %s",
                          path, rp__json_type_of(cost));
    if (!isfinite(cost->valuedouble) || cost->valuedouble < 0)
      return rp__json_bad(r, RP_EPARSE,
                          "%s.cost_us: must be finite and >= 0 (got "
                          "%.17g)",
                          path, cost->valuedouble);
    p.cost_us = cost->valuedouble;
  }

  if ((s = rp__json_get(r, j, path, "access", 1, &acc)))
    return s;
  if (!cJSON_IsArray(acc))
    return rp__json_bad(r, RP_EPARSE, "%s.access: expected an array, got %s",
                        path, rp__json_type_of(acc));
  uint32_t nacc = 0;
  for (const cJSON *c = acc->child; c; c = c->next, nacc++) {
    if (rp__grow((void **)&r->acc, &r->cap_acc, nacc + 1, sizeof *r->acc))
      return rp__json_bad(r, RP_ENOMEM, "out of memory");
    snprintf(kp, sizeof kp, "%s.access[%u]", path, nacc);
    memset(&r->acc[nacc], 0, sizeof r->acc[nacc]);
    if ((s = load_access(r, c, kp, &p, &r->acc[nacc], nacc)))
      return s;
  }
  if (p.type != RP_OP_KERNEL && p.type != RP_OP_HOST && nacc != 2)
    return rp__json_bad(r, RP_EPARSE,
                        "%s.access: a copy has exactly 2 accesses "
                        "(source, destination), got %u",
                        path, nacc);

  if ((s = rp__json_get(r, j, path, "after", 0, &after)))
    return s;
  uint32_t nafter = 0;
  if (after) {
    if (!cJSON_IsArray(after))
      return rp__json_bad(r, RP_EPARSE, "%s.after: expected an array, got %s",
                          path, rp__json_type_of(after));
    for (const cJSON *c = after->child; c; c = c->next, nafter++) {
      uint64_t a;
      if (rp__grow((void **)&r->after, &r->cap_after, nafter + 1,
                   sizeof *r->after))
        return rp__json_bad(r, RP_ENOMEM, "out of memory");
      if ((s = rp__json_as_uint(r, c, path, "after", (int)nafter, &a)))
        return s;
      if (a >= i)
        return rp__json_bad(r, RP_EPARSE,
                            "%s.after[%u]: %llu is not an earlier op "
                            "(after must point backwards)",
                            path, nafter, (unsigned long long)a);
      r->after[nafter] = (rp_node)a;
    }
  }

  /* The cost travels in the prototype: a given cost of 0 stays given. */
  rp_op_opts o =
      RP_OP_OPTS_WITH(.name = name, .after = r->after, .nafter = nafter);
  rp_node node = RP_NONE;
  if (r->trust) { /* as rp__record_op() checks and stores them */
    for (uint32_t k = 0; k < nacc; k++)
      if ((s = rp__region_check(r->g, &r->acc[k].region, "access")))
        return rp__json_bad(r, s == RP_ENOMEM ? s : RP_EPARSE, "%s: %s", path,
                            rp_graph_error(r->g));
    s = rp__load_op(r->g, &p, r->acc, nacc, r->after, nafter, name, &node);
  } else {
    s = rp__record_op(r->g, &p, r->acc, nacc, NULL, &o, &node);
  }
  if (s)
    return rp__json_bad(r, s == RP_ENOMEM ? s : RP_EPARSE, "%s: %s", path,
                        rp_graph_error(r->g));
  if (node != i)
    return rp__json_bad(r, RP_EPARSE, "%s: recorded as node %u", path, node);
  char why[160]; /* hook: record/measured.c */
  if ((s = rp__measured_load(r->g, node,
                             cJSON_GetObjectItemCaseSensitive(j, "measured"),
                             why, sizeof why)))
    return rp__json_bad(r, s, "%s.measured: %s", path, why);
  if ((s = rp__team_load(r->g, node,
                         cJSON_GetObjectItemCaseSensitive(j, "team"), why,
                         sizeof why)))
    return rp__json_bad(r, s, "%s.team: %s", path, why);
  return RP_OK;
}
