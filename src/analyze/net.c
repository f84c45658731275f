/* The analysis over MPI ranks (opts.nranks > 1): where the starpu
 * backend's mode "mpi" places a copy (backends/starpu/sp_part.c). Device d
 * lives on rank d % nranks, the host on rank 0, except the rows of a
 * distributed buffer (rp_buffer_distribute), part p's on rank p % nranks.
 * A copy between two ranks is a transfer on the net lane of the pair; a
 * copy within one rank whose two spaces that rank keeps in one memory (the
 * user's array, when the coherence model says nothing can tell: the same
 * test the backend makes) moves nothing. */
#include <stdlib.h>
#include "analyze/analysis.h"
#include "record/coherence.h"

struct rp__net {
  const rp_graph *g;
  unsigned nr, ndev;
  uint8_t *memo; /* per buffer and rank: 0 not tested, 1 one memory,
                      2 not (NULL: never one memory) */
  rp__coh *coh;
};

rp_status rp__net_init(const rp_graph *g, unsigned nranks, rp__net **out) {
  rp__net *n = calloc(1, sizeof *n);
  if (!n)
    return RP_ENOMEM;
  n->g = g;
  n->nr = nranks;
  n->ndev = rp_graph_num_devices(g);
  uint64_t cells = (uint64_t)rp_graph_num_buffers(g) * nranks;
  if (cells && cells < (64u << 20) && !(n->memo = calloc(cells, 1))) {
    free(n);
    return RP_ENOMEM;
  }
  *out = n;
  return RP_OK;
}

void rp__net_free(rp__net *n) {
  if (!n)
    return;
  rp__coh_free(n->coh);
  free(n->memo);
  free(n);
}

/* The ranks holding the rows of bytes [off, off + len) of buffer b's host
 * array: *first the first of them other than `not` (or `not`), returns
 * whether any is other than `not`. */
static int foreign_rows(const rp_graph *g, rp_buf b, uint64_t off, uint64_t len,
                        unsigned nr, int not, int *first) {
  unsigned np = rp_buffer_num_parts(g, b);
  *first = not ;
  if (!np)
    return not != 0 ? (*first = 0, 1) : 0;
  uint64_t last, rows;
  rp_buffer_part_rows(g, b, np - 1, &last, &rows);
  rp_buffer_desc d;
  rp_buffer_info(g, b, &d);
  uint64_t rb = d.bytes / (rows ? rows : 1);
  uint64_t r0 = off / rb, r1 = len ? (off + len - 1) / rb + 1 : r0;
  for (unsigned p = 0; p < np; p++) {
    uint64_t q0, q1;
    rp_buffer_part_rows(g, b, p, &q0, &q1);
    if (q0 < q1 && q0 < r1 && r0 < q1 && (int)(p % nr) != not ) {
      *first = (int)(p % nr);
      return 1;
    }
  }
  return 0;
}

/* Whether rank r keeps buffer b's spaces (its devices, its host rows) in
 * one memory, as the backend does (rp__sp_alias). */
static int one_memory(rp__net *n, rp_buf b, int r) {
  rp_buffer_desc d;
  rp_buffer_info(n->g, b, &d);
  int dist = rp_buffer_num_parts(n->g, b) > 0;
  if (!d.host || !n->memo || (!dist && r != 0))
    return 0;
  uint8_t *m = &n->memo[(size_t)b * n->nr + (size_t)r];
  if (*m)
    return *m == 1;
  *m = 2;
  if (!n->coh && rp__coh_build(n->g, &n->coh) != RP_OK)
    return 0;
  uint64_t devs = 0;
  for (unsigned k = 0; k < n->ndev && k < 63; k++)
    if ((int)(k % n->nr) == r)
      devs |= 1ull << k;
  bool ok = false, ok2 = true;
  if (rp__coh_share(n->coh, b, (1ull << 63) | devs, &ok) != RP_OK)
    return 0;
  if (ok && dist && (devs & (devs - 1)) &&
      rp__coh_share(n->coh, b, devs, &ok2) != RP_OK)
    return 0;
  if (ok && ok2)
    *m = 1;
  return *m == 1;
}

int rp__net_place(rp__net *n, uint32_t op, int *lo, int *hi) {
  rp_node_info ni;
  rp_node_info_get(n->g, op, &ni);
  if (ni.type == RP_OP_KERNEL || ni.type == RP_OP_HOST || ni.naccess < 2)
    return RP__NET_LOCAL;
  rp_access_info s, t;
  rp_node_access(n->g, op, 0, &s);
  rp_node_access(n->g, op, 1, &t);
  int nr = (int)n->nr, a, c;
  if (s.space >= 0 && t.space >= 0) {
    a = s.space % nr;
    c = t.space % nr;
  } else { /* one end is the host: its rows' ranks */
    const rp_access_info *h = s.space < 0 ? &s : &t;
    a = (s.space < 0 ? t.space : s.space) % nr; /* the device's rank */
    /* the span of its byte runs */
    uint64_t k = rp_region_intervals(n->g, &h->region, NULL, 0);
    uint64_t *iv = malloc((2 * k + 2) * sizeof *iv), off = 0, end = 0;
    if (iv && k) {
      rp_region_intervals(n->g, &h->region, iv, k);
      off = iv[0];
      end = iv[2 * (k - 1)] + iv[2 * (k - 1) + 1];
    }
    free(iv);
    if (!foreign_rows(n->g, h->region.buf, off, end - off, n->nr, a, &c))
      c = a;
  }
  if (a != c) {
    *lo = a < c ? a : c;
    *hi = a < c ? c : a;
    return RP__NET_PAIR;
  }
  return one_memory(n, s.region.buf, a) ? RP__NET_SAME_MEMORY : RP__NET_LOCAL;
}
