/* Helpers shared by the Criterion tests. */
#ifndef RP_TEST_UTIL_H
#define RP_TEST_UTIL_H

#include <stdint.h>
#include "reprise.h"

/* Asserts s == RP_OK, printing the graph's error otherwise. */
#define TU_OK(g, expr)                                                         \
  do {                                                                         \
    rp_status tu_s_ = (expr);                                                  \
    cr_assert_eq(tu_s_, RP_OK, "%s -> %s: %s", #expr, rp_status_name(tu_s_),   \
                 (g) ? rp_graph_error(g) : "");                                \
  } while (0)

/* An ended graph over buffer "m" (m, 64 bytes): tu_bump over bytes
 * 0-31 on device 0 and 32-63 on device 1, then m back on the host. */
rp_graph *tu_two_bumps(unsigned char *m);
/* Figure `name` of exec x (rp_exec_stat_get()), asserting it exists. */
double tu_stat(const rp_exec *x, const char *name);

/* A byte kernel over regions: params (in A, inout B, scalar offA, scalar
 * offB); index space x = length; B[offB+i] = 3 * B[offB+i] + A[offA+i] + 1.
 * With A == B it reads and writes one buffer (regions must not overlap). */
extern const rp_kernel tu_mix;
/* A 1-param kernel: inout A over bytes [off, off + n): A[i] = A[i] * 5 + 7
 * (params: inout A, scalar off). */
extern const rp_kernel tu_bump;
/* A kernel of k buffer parameters that does nothing; modes given. */
rp_kernel tu_nop_kernel(const char *name, unsigned n, const rp_mode *modes,
                        rp_param *storage);

/* Host task doing tu_bump on the host: user points to a tu_host_arg. */
typedef struct tu_host_arg {
  uint64_t off, len;
} tu_host_arg;
void tu_host_bump(void *user, void *const *ptrs);

/* An ended graph of one host task named @p name (NULL: none) running
 * fn(user, ptrs) over bytes [0, len) of buffer "M" (m, size bytes),
 * inout. */
rp_graph *tu_one_host_task(unsigned char *m, uint64_t size, uint64_t len,
                           rp_host_fn fn, void *user, const char *name);

/* A random graph over nbuf host buffers of bsize bytes (filled from the
 * seed): kernels on ndev devices over byte ranges, explicit copies, peer
 * copies, host tasks and after edges. Buffers are malloc'ed into bufs
 * (free with tu_random_free). Host task arguments live in *host_args. */
typedef struct tu_random {
  rp_graph *g;
  unsigned nbuf;
  uint64_t bsize;
  uint8_t **buf;
  tu_host_arg *hargs;
} tu_random;
/* copies: also record explicit copies, which may move stale data: a
 * backend whose spaces share memory legitimately differs from the
 * reference on such graphs, so backend comparisons pass copies = 0 and
 * rely on automatic coherence. */
int tu_random_graph(tu_random *r, uint64_t seed, unsigned nbuf, uint64_t bsize,
                    unsigned nops, unsigned ndev, unsigned flags, int copies);
/* The same with the recorder's ancestor window set (0: the default). */
int tu_random_graph_w(tu_random *r, uint64_t seed, unsigned nbuf,
                      uint64_t bsize, unsigned nops, unsigned ndev,
                      unsigned flags, int copies, uint32_t window);
/* Copies the initial contents back (same seed) so a replay restarts. */
void tu_random_reset(tu_random *r, uint64_t seed);
void tu_random_free(tu_random *r);

/* The host arrays of every buffer of g, concatenated (malloc'ed; free
 * it); *len receives the size. */
unsigned char *tu_snapshot(const rp_graph *g, size_t *len);

/* The seeds a long property or differential test covers: RP_TEST_SEEDS
 * "A-B" (inclusive; ctest runs such tests as shards, each a range, see
 * tests/CMakeLists.txt), else RP_TEST_PROGRAMS N (seeds 1..N), else
 * 1..@p dflt. Returns the number of seeds. */
unsigned tu_seed_range(unsigned dflt, uint64_t *first, uint64_t *last);

/* A sanitizer build (RP_SANITIZE) runs every test roughly 10-50x slower:
 * byte-by-byte corruption loops there take every TU_SAN_STRIDE-th step of
 * the plain stage's (which covers every step). */
#ifdef RP_TEST_SANITIZED
#define TU_SAN_STRIDE 4u
#else
#define TU_SAN_STRIDE 1u
#endif

/* xorshift. */
uint64_t tu_rand(uint64_t *s);

/* Does the edge from -> to exist, with this kind and buffer? */
int tu_has_edge(const rp_graph *g, rp_node from, rp_node to, rp_edge_kind kind,
                rp_buf buf);
/* Formats all edges "0->1 raw A; ..." into buf (for messages). */
const char *tu_edges_str(const rp_graph *g, char *buf, size_t n);

/* The speedup picture of n points titled `title` (rp_speedup_write_svg),
 * as a string to free. */
char *tu_speedup_svg(const rp_speedup_point *p, unsigned n, const char *title);

#endif
