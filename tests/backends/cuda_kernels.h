/* Test-only CUDA kernels for tests/backends/test_cuda.c (built by nvcc). */
#ifndef RP_TEST_CUDA_KERNELS_H
#define RP_TEST_CUDA_KERNELS_H

#include "reprise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Same bodies as tests/util.c's tu_mix and tu_bump, with CUDA slots. */
extern const rp_kernel tc_mix;
extern const rp_kernel tc_bump;
/* tc_bump with a 2048-thread block: every launch is invalid. */
extern const rp_kernel tc_bad;
/* 2-d float kernel over an index space (x cols, y rows) of a rows x cols
 * buffer: a[y][x] = a[y][x] * 2 + y (params: inout a, scalar cols). */
extern const rp_kernel tc_grid2;
/* tc_bump issued through a host wrapper (cuda_host slot, captured). */
extern const rp_kernel tc_bump_host;

#ifdef __cplusplus
}
#endif
#endif
