/* Workloads shared by the examples, the tests and the benchmarks: each
 * records its graph into a fresh graph through the public API. */
#ifndef RP_EXAMPLES_H
#define RP_EXAMPLES_H

#include "reprise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Declarations are added by each example's owner, one block per
 * examples/NAME_kernels.c. */

/* ---- CPU examples (issue 4): Jacobi 2D, matrix power, recurrence,
 * Black-Scholes. Every record function takes a fresh graph in the
 * recording phase, registers the host arrays it is given (names below),
 * records kernels on device p->device and leaves the graph recording (the
 * caller calls rp_graph_end). Each ends with rp_record_sync_host on its
 * outputs, so after a replay the host arrays hold the results. Each *_check
 * is a plain sequential C computation of `replays` replays of the graph,
 * bit-identical to it on the CPU. Kernels are generic (reprise/kernel.h). */

/* Jacobi 2D on an n x n grid of doubles (boundary fixed). One step: copy
 * kernels B = A over `blocks` row blocks of all rows, then 5-point stencil
 * kernels A = avg4(B) over `blocks` row blocks of the interior. Every
 * `every` steps (0: never) a host task sums A into sums[k] (the automatic
 * coherence inserts the copy back). Buffers "A", "B" (n x n), "sums"
 * (ex_jacobi2d_nsums() doubles, at least 1). */
typedef struct ex_jacobi2d {
  uint64_t n;
  unsigned steps, every, blocks;
  int device;
  unsigned devices; /* > 1: row block i of `blocks` runs on device
                       i * devices / blocks (the grid split by rows over
                       devices 0 .. devices-1; coherence moves the halos);
                       0 or 1: every block on `device` */
} ex_jacobi2d;
uint64_t ex_jacobi2d_nsums(const ex_jacobi2d *p);
void ex_jacobi2d_init(const ex_jacobi2d *p, double *a, double *b, double *sums);
rp_status ex_jacobi2d_record(rp_graph *g, const ex_jacobi2d *p, double *a,
                             double *b, double *sums);
void ex_jacobi2d_check(const ex_jacobi2d *p, unsigned replays, double *a,
                       double *b, double *sums);
/* The same Jacobi 2D over two device kinds: device cpu_device is given
 * the kind RP_DEVICE_CPU and runs the top half of the row blocks (blocks
 * >= 2), device p->device (the backend's own kind: a GPU on cuda) the
 * bottom half; automatic coherence copies the halo rows between them.
 * Results equal ex_jacobi2d_check's bit for bit. */
rp_status ex_jacobi2d_mixed_record(rp_graph *g, const ex_jacobi2d *p,
                                   int cpu_device, double *a, double *b,
                                   double *sums);

/* Matrix power: X <- X * M, `steps` times per replay, ping-pong between
 * "X" and "Y" (n x n doubles; steps even so the result lands in X), each
 * product over `blocks` row blocks of the output. Buffers "M", "X", "Y". */
typedef struct ex_matpow {
  uint64_t n;
  unsigned steps, blocks;
  int device;
} ex_matpow;
void ex_matpow_init(const ex_matpow *p, double *m, double *x, double *y);
rp_status ex_matpow_record(rp_graph *g, const ex_matpow *p, double *m,
                           double *x, double *y);
void ex_matpow_check(const ex_matpow *p, unsigned replays, const double *m,
                     double *x, double *y);

/* Recurrence: every element of the rows x cols matrix "U" (doubles) goes
 * through u <- r * u * (1 - u) + c, `inner` times per kernel; `rounds`
 * rounds of `blocks` row-block kernels per replay. Scalar parameter 2 of
 * every kernel is r (rp_exec_set_scalar changes it), 3 is c. Buffer "U". */
typedef struct ex_recurrence {
  uint64_t rows, cols;
  unsigned inner, rounds, blocks;
  double r, c;
  int device;
} ex_recurrence;
void ex_recurrence_init(const ex_recurrence *p, double *u);
rp_status ex_recurrence_record(rp_graph *g, const ex_recurrence *p, double *u,
                               rp_node *first);
void ex_recurrence_check(const ex_recurrence *p, unsigned replays, double *u);

/* Black-Scholes: call and put prices of n options (spot "S", strike "K",
 * years "T" in, "call", "put" out; doubles), rate r, volatility v, over
 * `blocks` kernels. Replays recompute the same prices. */
typedef struct ex_blackscholes {
  uint64_t n;
  unsigned blocks;
  double r, v;
  int device;
} ex_blackscholes;
void ex_blackscholes_init(const ex_blackscholes *p, double *s, double *k,
                          double *t);
rp_status ex_blackscholes_record(rp_graph *g, const ex_blackscholes *p,
                                 double *s, double *k, double *t, double *call,
                                 double *put);
void ex_blackscholes_check(const ex_blackscholes *p, const double *s,
                           const double *k, const double *t, double *call,
                           double *put);

/* The common driver of the four example programs (jacobi2d_kernels.c). */
/* Rows [r0, r0 + NY) of C = A * B (n x n doubles): params A in, B in,
 * C out, n and r0 scalars (int64); index space (n, rows). */
extern const rp_kernel ex_matmul_rows_k;

typedef struct ex_opts {
  const char *backend; /* NULL: auto */
  unsigned iters;      /* replays */
  int threads;         /* openmp threads, 0: default */
  const char *dot, *trace;
  const char *save; /* --save FILE: the graph with its measured costs */
  int calibrate;    /* --calibrate: measure the machine model now if
                          the cache has none (reprise calibrate) */
  double rtol;      /* 0: results must be identical to the bit; else
                          buffers of doubles may differ by this relative
                          amount (GPU exp/log/erf round differently) */
  int reshape;      /* 1: --reshape-copies, -1: --no-reshape, 0: the
                          backend's default (rp_exec_opts.reshape_copies;
                          cuda reshapes) */
} ex_opts;
/* |a - b| <= rtol * max(|a|, |b|) for every double; returns the largest
 * relative difference seen in *worst. */
int ex_close(const double *a, const double *b, uint64_t n, double rtol,
             double *worst);
/* One option of an example: "--name ARG" (arg NULL: a switch setting the
 * int at value to 1), stored as uint64_t (wide) or unsigned, between min
 * and max. */
typedef struct ex_flag {
  const char *name, *arg, *help;
  void *value;
  int wide;
  uint64_t min, max;
} ex_flag;
/* Parses the example's flags and the common ones (--backend, --iters,
 * --threads, --dot, --trace, --save, --calibrate, --reshape-copies,
 * --no-reshape, --help). Returns 0 to go on, 1 after printing
 * the usage for --help, 2 after saying on stderr what was wrong. */
int ex_parse(int argc, char **argv, const char *prog, const ex_flag *f,
             unsigned nf, ex_opts *o);
/* Re-initialises the host data in place. */
typedef void (*ex_init_fn)(void *ctx);
/* Compares, on ended graph g: o->iters replays by the reference and by the
 * chosen backend from the same initial data (init), byte for byte over
 * every buffer with a host image, then `check` (if not NULL: plain
 * sequential result, 0 when equal) on the backend's result; times a serial
 * and an overlapped replay, profiles, analyses and prints. Returns 0 when
 * everything matched, 1 on a mismatch, 2 on an error. */
int ex_run_compare(rp_graph *g, const ex_opts *o, ex_init_fn init,
                   int (*check)(void *ctx), void *ctx);

/* ---- Blocked FPGA matmul (issue 6, matmul_fpga_kernels.c): C += A * B on
 * n x n float matrices (n a multiple of EX_MM_BS) stored tile by tile: the
 * 32 x 32 tile (i, j) is contiguous, row-major, at float offset
 * (i * n/32 + j) * 1024. One kernel per tile product C_ij += A_ik * B_kj,
 * on device p->device; automatic coherence moves the tiles; ends with
 * rp_record_sync_host(C). Buffers "A", "B", "C". The kernel is the XRT
 * kernel "matmul" (A, B, C, oa, ob, oc: buffers, then the tiles' offsets
 * in floats as 64-bit scalars) with a generic CPU/CUDA body. */
#define EX_MM_BS 32
typedef struct ex_matmul {
  unsigned n;
  int device;
} ex_matmul;
extern const rp_kernel ex_matmul_tile;
/* Index of element (r, c) in the tiled layout. */
uint64_t ex_matmul_index(const ex_matmul *p, unsigned r, unsigned c);
/* Small integer values, so every order of the sums gives the same bits. */
void ex_matmul_init(const ex_matmul *p, float *a, float *b, float *c);
rp_status ex_matmul_record(rp_graph *g, const ex_matmul *p, float *a, float *b,
                           float *c);
/* ex_matmul_record with its verification in the same graph, on CPU-kind
 * device cpu_device: a kernel saves C as the replay starts (internal
 * buffer "C0"), the tiles run on p->device, then a kernel on the CPU
 * device writes into bad[r] (n uint32, buffer "bad", brought home) how
 * many elements of row r of C differ from C0 + A * B. */
rp_status ex_matmul_record_verified(rp_graph *g, const ex_matmul *p,
                                    int cpu_device, float *a, float *b,
                                    float *c, uint32_t *bad);
/* The plain triple loop, `replays` times: c += a * b. */
void ex_matmul_check(const ex_matmul *p, unsigned replays, const float *a,
                     const float *b, float *c);

/* ---- Tiled matrix product with a library kernel (gemm_kernels.c): C +=
 * A B on n x n doubles in t x t tiles, one operation per tile product
 * C_ij += A_ik B_kj (boxes of "A", "B", "C"), whose CUDA body is cuBLAS
 * dgemm on the node's stream when built with cuBLAS (ex_gemm_uses_library)
 * and whose CPU body is a loop; ends with rp_record_sync_host(C). Values
 * are small integers, so every order of the sums gives the same bits. */
typedef struct ex_gemm {
  uint64_t n, tile;
  int device;
} ex_gemm;
extern const rp_kernel ex_gemm_tile_k;
extern const int ex_gemm_uses_library;
/* Registers a user of the library kernel: the first creates the cuBLAS
 * handle (outside any graph capture) when a GPU is there; 0 on success,
 * and without a GPU (nothing to create). */
int ex_gemm_library_init(void);
/* Ends one registration: the last destroys the cuBLAS handle and the
 * device memory it holds (its workspace). Call it once every exec whose
 * graph captured the library's calls is destroyed: those graphs use that
 * memory. */
void ex_gemm_library_fini(void);
void ex_gemm_init(const ex_gemm *p, double *a, double *b, double *c);
rp_status ex_gemm_record(rp_graph *g, const ex_gemm *p, double *a, double *b,
                         double *c);
void ex_gemm_check(const ex_gemm *p, unsigned replays, const double *a,
                   const double *b, double *c);

/* ---- Jacobi 2D converging to a tolerance (issue 15, item 4,
 * converge_kernels.c): on an n x n grid of doubles (boundary cells 1,
 * interior starting at 0), one replay is two Jacobi steps U -> V -> U over
 * `blocks` row blocks, a residual per row max |U - V| (rowres), then its
 * maximum into "res" (one double, brought home each replay): replay with
 * rp_exec_run_until(res < tol). With u NULL the grid "U" is internal (no
 * host copy); else U is the user's array, brought home each replay too.
 * ex_converge_check: the same in plain C (u, v n*n doubles from
 * ex_converge_init), stopping once res < tol or after max replays;
 * returns the replays run. Bit-identical to the graph. */
typedef struct ex_converge {
  uint64_t n;
  unsigned blocks;
  int device;
} ex_converge;
void ex_converge_init(const ex_converge *p, double *u, double *res);
rp_status ex_converge_record(rp_graph *g, const ex_converge *p, double *u,
                             double *res, rp_buf *res_buf);
unsigned ex_converge_check(const ex_converge *p, double tol, unsigned max,
                           double *u, double *v, double *res);

#ifdef __cplusplus
}
#endif
#endif
