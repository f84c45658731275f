/* Kernels of the split tests (tests/test_split.c), built by nvcc when the
 * cuda backend is, so that the test also replays them on the GPU. */
#ifndef RP_TEST_SPLIT_KERNELS_H
#define RP_TEST_SPLIT_KERNELS_H

#include "reprise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Elementwise over x, split along x: params (in X, inout Y, scalar u32 a);
 * Y[i] = Y[i] * a + X[i] + i + RP_NX (uint32). X and Y follow. */
extern const rp_kernel ts_ew;
/* The same body, not declared splittable. */
extern const rp_kernel ts_ew_whole;
/* Row blocks: space (cols, rows), split along y: params (in A rows x cols,
 * in B cols (read whole), inout C rows x cols, scalar u32 a);
 * C[y][x] = C[y][x] * a + A[y][x] * B[x] + y * RP_NY + x. A, C follow. */
extern const rp_kernel ts_rows;
/* Two rows per point: space x = rows / 2, split along x: params (in A,
 * out D, both rows x cols of uint32, cols a scalar u32);
 * D[2i + r][c] = A[2i + r][c] * 7 + i + r (m = 2 rows per point). */
extern const rp_kernel ts_pairs;

#ifdef __cplusplus
}
#endif
#endif
