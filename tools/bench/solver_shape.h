/* The solver shape of issue 12, shared by bench_hazards and bench_io: 64
 * buffers of 1 MiB, each operation reads one whole buffer and updates a
 * 4 KiB piece of another (a blocked solver reading a full vector and
 * writing one block), drawn by a fixed xorshift so that every run records
 * the same graph. */
#ifndef RP_BENCH_SOLVER_SHAPE_H
#define RP_BENCH_SOLVER_SHAPE_H

#include <stdio.h>
#include "reprise.h"

static const rp_param solver_p_upd[] = {{"x", RP_IN}, {"y", RP_INOUT}};
static const rp_kernel solver_k_upd =
    RP_KERNEL_WITH(.name = "upd", .nparams = 2, .params = solver_p_upd);

/* Records and ends a graph of @p ops operations of the solver shape. */
static inline rp_status solver_graph(uint32_t ops, rp_graph **out) {
  static char host[1];
  rp_graph *g;
  rp_status s = rp_graph_create(&g, RP_GRAPH_NO_COHERENCE);
  for (int b = 0; s == RP_OK && b < 64; b++) {
    char name[16];
    snprintf(name, sizeof name, "v%d", b);
    rp_buffer_desc d = {name, host, 1 << 20, 1, 0, {0, 0, 0}};
    s = rp_buffer_add(g, &d, NULL);
  }
  uint64_t x = 88172645463325252ull;
  for (uint32_t i = 0; s == RP_OK && i < ops; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    rp_buf a = (rp_buf)(x % 64), b = (rp_buf)((x >> 8) % 64);
    if (a == b)
      b = (b + 1) % 64;
    uint64_t off = ((x >> 20) % 256) * 4096;
    rp_arg args[2] = {rp_arg_buf(rp_whole(a)),
                      rp_arg_buf(rp_range_bytes(b, off, 4096))};
    s = rp_record_kernel(g, &solver_k_upd, 0, rp_dims3(1, 1, 1), args, NULL,
                         NULL);
  }
  if (s == RP_OK)
    s = rp_graph_end(g);
  if (s != RP_OK && g) {
    rp_graph_destroy(g);
    g = NULL;
  }
  *out = g;
  return s;
}

#endif
