/* Helpers shared by the Criterion tests. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"
#include "record/hazard.h"

RP_KERNEL(tu_mix_k, {
  const uint8_t *a = RP_PTR(const uint8_t, 0);
  uint8_t *b = RP_PTR(uint8_t, 1);
  uint64_t oa = RP_VAL(uint64_t, 2), ob = RP_VAL(uint64_t, 3);
  b[ob + RP_X] = (uint8_t)(3 * b[ob + RP_X] + a[oa + RP_X] + 1);
})
static const rp_param tu_mix_params[] = {
    {"a", RP_IN}, {"b", RP_INOUT}, {"offa", RP_SCALAR}, {"offb", RP_SCALAR}};
const rp_kernel tu_mix = RP_KERNEL_DESC(tu_mix_k, tu_mix_params);

RP_KERNEL(tu_bump_k, {
  uint8_t *a = RP_PTR(uint8_t, 0);
  uint64_t o = RP_VAL(uint64_t, 1);
  a[o + RP_X] = (uint8_t)(a[o + RP_X] * 5 + 7);
})
static const rp_param tu_bump_params[] = {{"a", RP_INOUT}, {"off", RP_SCALAR}};
const rp_kernel tu_bump = RP_KERNEL_DESC(tu_bump_k, tu_bump_params);

static void nop_cpu(const rp_kargs *a, const uint64_t lo[3],
                    const uint64_t hi[3]) {
  (void)a, (void)lo, (void)hi;
}

rp_kernel tu_nop_kernel(const char *name, unsigned n, const rp_mode *modes,
                        rp_param *storage) {
  for (unsigned i = 0; i < n; i++) {
    storage[i].name = "p";
    storage[i].mode = modes[i];
  }
  rp_kernel k = RP_KERNEL_WITH(.name = name, .nparams = n, .params = storage,
                               .cpu = nop_cpu);
  return k;
}

void tu_host_bump(void *user, void *const *ptrs) {
  const tu_host_arg *h = user;
  uint8_t *a = ptrs[0];
  for (uint64_t i = 0; i < h->len; i++)
    a[h->off + i] = (uint8_t)(a[h->off + i] * 5 + 7);
}

rp_graph *tu_one_host_task(unsigned char *m, uint64_t size, uint64_t len,
                           rp_host_fn fn, void *user, const char *name) {
  rp_graph *g;
  rp_buf b;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, rp_buffer_register(g, "M", m, size, &b));
  rp_access acc = {rp_bytes(b, 0, len), RP_INOUT};
  rp_op_opts o = RP_OP_OPTS_WITH(.name = name);
  TU_OK(g, rp_record_host(g, fn, user, &acc, 1, &o, NULL));
  TU_OK(g, rp_graph_end(g));
  return g;
}

rp_graph *tu_two_bumps(unsigned char *m) {
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "m", m, 64, &b));
  for (int d = 0; d < 2; d++) {
    rp_arg a[2] = {rp_arg_buf(rp_range_bytes(b, 32 * (uint64_t)d, 32)),
                   rp_arg_i64(32 * d)};
    TU_OK(g,
          rp_record_kernel(g, &tu_bump, d, rp_dims3(32, 1, 1), a, NULL, NULL));
  }
  TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
  TU_OK(g, rp_graph_end(g));
  return g;
}

double tu_stat(const rp_exec *x, const char *name) {
  double v = -1;
  rp_status s = rp_exec_stat_get(x, name, &v);
  cr_assert_eq(s, RP_OK, "%s: %s", name, rp_last_error());
  return v;
}

uint64_t tu_rand(uint64_t *s) {
  uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

void tu_random_reset(tu_random *r, uint64_t seed) {
  uint64_t s = seed * 2654435761u + 1;
  for (unsigned b = 0; b < r->nbuf; b++)
    for (uint64_t i = 0; i < r->bsize; i++)
      r->buf[b][i] = (uint8_t)tu_rand(&s);
}

int tu_random_graph(tu_random *r, uint64_t seed, unsigned nbuf, uint64_t bsize,
                    unsigned nops, unsigned ndev, unsigned flags, int copies) {
  return tu_random_graph_w(r, seed, nbuf, bsize, nops, ndev, flags, copies, 0);
}

int tu_random_graph_w(tu_random *r, uint64_t seed, unsigned nbuf,
                      uint64_t bsize, unsigned nops, unsigned ndev,
                      unsigned flags, int copies, uint32_t window) {
  memset(r, 0, sizeof *r);
  r->nbuf = nbuf;
  r->bsize = bsize;
  r->buf = calloc(nbuf, sizeof *r->buf);
  r->hargs = calloc(nops + 1, sizeof *r->hargs);
  if (rp_graph_create(&r->g, flags) != RP_OK)
    return -1;
  if (window)
    rp__hazard_window(r->g, window);
  for (unsigned b = 0; b < nbuf; b++) {
    char name[16];
    snprintf(name, sizeof name, "B%u", b);
    r->buf[b] = malloc(bsize);
    if (rp_buffer_register(r->g, name, r->buf[b], bsize, NULL) != RP_OK)
      return -1;
  }
  tu_random_reset(r, seed);
  uint64_t s = seed + 77;
  for (unsigned i = 0; i < nops; i++) {
    unsigned kind = (unsigned)(tu_rand(&s) % 10);
    if (!copies && kind >= 6 && kind <= 8)
      kind = kind == 8 ? 9 : kind - 6;
    unsigned dev = (unsigned)(tu_rand(&s) % ndev);
    rp_buf a = (rp_buf)(tu_rand(&s) % nbuf), b = (rp_buf)(tu_rand(&s) % nbuf);
    uint64_t len = 1 + tu_rand(&s) % (bsize / 2);
    uint64_t oa = tu_rand(&s) % (bsize - len + 1);
    uint64_t ob = tu_rand(&s) % (bsize - len + 1);
    if (a == b) { /* keep the two regions apart */
      oa = 0;
      ob = len + tu_rand(&s) % (bsize - 2 * len + 1);
      if (2 * len > bsize) {
        len = bsize / 2;
        ob = len;
      }
    }
    rp_node after[1];
    rp_op_opts o = RP_OP_OPTS_WITH(.cost_us = (double)(1 + tu_rand(&s) % 20),
                                   .after = after);
    uint32_t nn = rp_graph_num_nodes(r->g);
    if (nn && tu_rand(&s) % 8 == 0) {
      after[0] = (rp_node)(tu_rand(&s) % nn);
      o.nafter = 1;
    }
    rp_status st;
    if (kind < 4) {
      rp_arg args[4] = {rp_arg_buf(rp_bytes(a, oa, len)),
                        rp_arg_buf(rp_bytes(b, ob, len)), rp_arg_i64(0),
                        rp_arg_i64(0)};
      args[2].value.u64 = oa;
      args[3].value.u64 = ob;
      st = rp_record_kernel(r->g, &tu_mix, (int)dev, rp_dims3(len, 1, 1), args,
                            &o, NULL);
    } else if (kind < 6) {
      rp_arg args[2] = {rp_arg_buf(rp_bytes(b, ob, len)), rp_arg_i64(0)};
      args[1].value.u64 = ob;
      st = rp_record_kernel(r->g, &tu_bump, (int)dev, rp_dims3(len, 1, 1), args,
                            &o, NULL);
    } else if (kind == 6) {
      st = rp_record_copy_to_device(r->g, rp_bytes(a, oa, len), (int)dev, &o,
                                    NULL);
    } else if (kind == 7) {
      st = rp_record_copy_to_host(r->g, rp_bytes(a, oa, len), (int)dev, &o,
                                  NULL);
    } else if (kind == 8 && ndev > 1) {
      unsigned d2 = (dev + 1) % ndev;
      st = rp_record_copy_peer(r->g, rp_bytes(a, oa, len), (int)dev, (int)d2,
                               &o, NULL);
    } else {
      tu_host_arg *h = &r->hargs[i];
      h->off = ob;
      h->len = len;
      rp_access acc = {rp_bytes(b, ob, len), RP_INOUT};
      st = rp_record_host(r->g, tu_host_bump, h, &acc, 1, &o, NULL);
    }
    if (st != RP_OK)
      return -1;
  }
  /* Bring every buffer home so the host images hold the results. */
  if (!(flags & RP_GRAPH_NO_COHERENCE))
    for (unsigned b = 0; b < nbuf; b++)
      if (rp_record_sync_host(r->g, rp_whole(b), NULL) != RP_OK)
        return -1;
  return 0;
}

void tu_random_free(tu_random *r) {
  rp_graph_destroy(r->g);
  for (unsigned b = 0; r->buf && b < r->nbuf; b++)
    free(r->buf[b]);
  free(r->buf);
  free(r->hargs);
  memset(r, 0, sizeof *r);
}

int tu_has_edge(const rp_graph *g, rp_node from, rp_node to, rp_edge_kind kind,
                rp_buf buf) {
  for (uint32_t i = 0; i < rp_graph_num_edges(g); i++) {
    rp_edge e;
    rp_graph_edge(g, i, &e);
    if (e.from == from && e.to == to && e.kind == kind && e.buf == buf)
      return 1;
  }
  return 0;
}

const char *tu_edges_str(const rp_graph *g, char *buf, size_t n) {
  size_t w = 0;
  buf[0] = 0;
  for (uint32_t i = 0; i < rp_graph_num_edges(g) && w < n; i++) {
    rp_edge e;
    rp_graph_edge(g, i, &e);
    rp_buffer_desc d = {0};
    if (e.buf != RP_NONE)
      rp_buffer_info(g, e.buf, &d);
    w += (size_t)snprintf(buf + w, n - w, "%u->%u %s %s; ", e.from, e.to,
                          rp_edge_kind_name(e.kind), d.name ? d.name : "-");
  }
  return buf;
}

unsigned char *tu_snapshot(const rp_graph *g, size_t *len) {
  size_t tot = 0;
  for (rp_buf b = 0; b < rp_graph_num_buffers(g); b++) {
    rp_buffer_desc d;
    rp_buffer_info(g, b, &d);
    tot += d.host ? d.bytes : 0;
  }
  unsigned char *s = malloc(tot + 1), *p = s;
  for (rp_buf b = 0; s && b < rp_graph_num_buffers(g); b++) {
    rp_buffer_desc d;
    rp_buffer_info(g, b, &d);
    if (d.host) {
      memcpy(p, d.host, d.bytes);
      p += d.bytes;
    }
  }
  *len = tot;
  return s;
}

unsigned tu_seed_range(unsigned dflt, uint64_t *first, uint64_t *last) {
  const char *r = getenv("RP_TEST_SEEDS"), *np = getenv("RP_TEST_PROGRAMS");
  unsigned long long a, b;
  if (r && sscanf(r, "%llu-%llu", &a, &b) == 2 && a >= 1 && b >= a) {
    *first = a;
    *last = b;
  } else {
    *first = 1;
    *last = np && atoi(np) > 0 ? (uint64_t)atoi(np) : dflt;
  }
  return (unsigned)(*last - *first + 1);
}

/* Not inlined: GCC 12 at -O2 then takes the memstream's buffer for the
 * local variable holding its address (-Wdangling-pointer). */
__attribute__((noinline)) char *tu_speedup_svg(const rp_speedup_point *p,
                                               unsigned n, const char *title) {
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  cr_assert_not_null(fp);
  cr_assert_eq(rp_speedup_write_svg(p, n, title, NULL, fp), RP_OK);
  fclose(fp);
  return buf;
}
