/* Workloads over several logical devices (issue 7): heat 2D decomposed by
 * rows, matmul partitioned by rows of A, two independent kernels. */
#ifndef RP_MULTIDEV_H
#define RP_MULTIDEV_H

#include "examples.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each record function takes a fresh graph in the recording phase,
 * registers the host arrays it is given (names below), records its kernels
 * on devices 0 .. devices-1 and leaves the graph recording (the caller
 * calls rp_graph_end). Each ends by bringing its outputs home, so after a
 * replay the host arrays hold the results. Each *_check is a plain
 * sequential C computation of `replays` replays of the graph, bit-identical
 * to it on any backend: the kernels multiply only by powers of two or by
 * small integers, so an FMA contraction rounds exactly as the CPU does. */

/* ---- Heat 2D (heat2d_kernels.c): explicit heat equation on an n x n grid
 * of doubles, ping-pong between "U" and "V" (n x n): step s reads U and
 * writes V when s is even, the other way round when odd. Rows are cut in
 * `devices` contiguous blocks (ex_heat2d_rows); device d's kernel writes
 * its rows whole (the boundary of the grid copied, the interior updated
 * u + (sum of 4 neighbours - 4u) / 8) from its rows plus one halo row above
 * and below (boxes: rows [r0 - 1, r1 + 1) in, [r0, r1) out).
 * explicit_halo 0: automatic coherence inserts the initial copies to the
 * devices, the halo peer copies of every step and the copies home.
 * explicit_halo 1: records all of these by hand (halo rows r0 - 1 from
 * device d - 1 and r1 from d + 1 before every step but the first); meant
 * for a graph created with RP_GRAPH_NO_COHERENCE (with coherence on, the
 * recorder finds everything valid and inserts nothing). Needs n >= 3 and
 * 1 <= devices <= n. */
typedef struct ex_heat2d {
  uint64_t n;
  unsigned steps, devices;
  int explicit_halo;
} ex_heat2d;
/* Rows [*r0, *r1) of device d. */
void ex_heat2d_rows(const ex_heat2d *p, unsigned d, uint64_t *r0, uint64_t *r1);
void ex_heat2d_init(const ex_heat2d *p, double *u, double *v);
rp_status ex_heat2d_record(rp_graph *g, const ex_heat2d *p, double *u,
                           double *v);
void ex_heat2d_check(const ex_heat2d *p, unsigned replays, double *u,
                     double *v);

/* ---- Matmul by rows (matmul_rows_kernels.c): C = A * B on n x n doubles
 * (buffers "A", "B", "C"); device d computes C's rows [r0, r1) (the same
 * cut as heat 2D) from A's rows [r0, r1) and the whole of B, which
 * automatic coherence copies to every device. Small integer entries, so
 * the sums are exact. Replays recompute the same C. */
typedef struct ex_mmrows {
  uint64_t n;
  unsigned devices;
} ex_mmrows;
void ex_mmrows_init(const ex_mmrows *p, double *a, double *b, double *c);
rp_status ex_mmrows_record(rp_graph *g, const ex_mmrows *p, double *a,
                           double *b, double *c);
/* The plain triple loop into c. */
void ex_mmrows_check(const ex_mmrows *p, const double *a, const double *b,
                     double *c);

/* ---- Two independent kernels (twokernels_kernels.c): "X" on device 0 and
 * "Y" on device 1 (n uint64 each); every element goes `inner` times
 * through x <- x * 6364136223846793005 + 1442695040888963407 (mod 2^64)
 * per kernel, `rounds` kernels per device per replay. Nothing links the
 * two chains: two compute lanes, bound 2x when they cost the same. */
typedef struct ex_twok {
  uint64_t n;
  unsigned inner, rounds;
} ex_twok;
void ex_twok_init(const ex_twok *p, uint64_t *x, uint64_t *y);
rp_status ex_twok_record(rp_graph *g, const ex_twok *p, uint64_t *x,
                         uint64_t *y);
void ex_twok_check(const ex_twok *p, unsigned replays, uint64_t *x,
                   uint64_t *y);

#ifdef __cplusplus
}
#endif
#endif
