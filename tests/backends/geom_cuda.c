/* The cuda backend's launch geometry, CPU side (no GPU needed): threads per
 * block from occupancy figures and hints, the block shape from threads and
 * the index space (backends/cuda/rp_cuda_geom.c). */
#include <criterion/criterion.h>

#include "rp_cuda_geom.h"
#include "reprise/record.h"

static void shape(unsigned t, uint64_t x, uint64_t y, uint64_t z, unsigned ex,
                  unsigned ey, unsigned ez) {
  uint64_t n[3] = {x, y, z};
  unsigned b[3] = {0, 0, 0};
  rp__cu_shape(t, n, b);
  cr_expect(b[0] == ex && b[1] == ey && b[2] == ez,
            "threads %u over %llux%llux%llu: %ux%ux%u, expected %ux%ux%u", t,
            (unsigned long long)x, (unsigned long long)y, (unsigned long long)z,
            b[0], b[1], b[2], ex, ey, ez);
}

Test(geom_cuda, shape_by_rank) {
  shape(256, 1 << 20, 1, 1, 256, 1, 1);
  shape(512, 1 << 20, 1, 1, 512, 1, 1);
  shape(256, 1024, 1024, 1, 32, 8, 1);
  shape(1024, 1024, 1024, 1, 32, 32, 1);
  shape(256, 128, 128, 128, 32, 4, 2);
  shape(512, 128, 128, 128, 32, 4, 4);
  shape(64, 64, 64, 64, 32, 4, 1); /* t / 128 rounds to one slice */
}

Test(geom_cuda, shape_never_larger_than_needed) {
  shape(256, 100, 1, 1, 128, 1, 1);
  shape(256, 10, 1, 1, 32, 1, 1); /* one warp at least */
  shape(1024, 1, 1, 1, 32, 1, 1);
  shape(256, 1000, 3, 1, 32, 4, 1);
  shape(256, 8, 1000, 1, 8, 8, 1); /* x shrinks below a warp in rank 2 */
  shape(512, 1000, 1000, 2, 32, 4, 2);
  shape(1024, 1000, 2, 3, 32, 2, 4);
  shape(0, 1 << 20, 1, 1, 256, 1, 1); /* 0 threads: the 256 default */
}

Test(geom_cuda, pick_highest_occupancy) {
  /* 2048 threads per SM: 8 blocks of 256 fill it, 1 block of 1024 half */
  int blocks[RP_CU_NCAND] = {8, 8, 8, 2, 1};
  double occ = 0;
  cr_expect_eq(rp__cu_pick_threads(blocks, RP_CU_NCAND, 2048, 0, &occ), 256);
  cr_expect_float_eq(occ, 1.0, 1e-12);
  /* register pressure: only 512 reaches 0.75 */
  int b2[RP_CU_NCAND] = {16, 8, 4, 3, 1};
  cr_expect_eq(rp__cu_pick_threads(b2, RP_CU_NCAND, 2048, 0, &occ), 512);
  cr_expect_float_eq(occ, 0.75, 1e-12);
  /* blocks capped by count: 64-thread blocks reach only 32 * 64 / 2048 */
  int b3[RP_CU_NCAND] = {16, 16, 8, 4, 2};
  cr_expect_eq(
      rp__cu_pick_threads(b3, RP_CU_NCAND, 2048, RP_HINT_COMPUTE_BOUND, &occ),
      128);
  cr_expect_float_eq(occ, 1.0, 1e-12);
}

Test(geom_cuda, ties_follow_hint) {
  int full[RP_CU_NCAND] = {32, 16, 8, 4, 2};
  double occ = 0;
  cr_expect_eq(rp__cu_pick_threads(full, RP_CU_NCAND, 2048, 0, &occ), 256);
  cr_expect_eq(
      rp__cu_pick_threads(full, RP_CU_NCAND, 2048, RP_HINT_MEMORY_BOUND, &occ),
      512);
  cr_expect_eq(
      rp__cu_pick_threads(full, RP_CU_NCAND, 2048, RP_HINT_COMPUTE_BOUND, &occ),
      128);
  /* only the candidates the kernel may use (maxThreadsPerBlock 128) */
  cr_expect_eq(rp__cu_pick_threads(full, 2, 2048, RP_HINT_MEMORY_BOUND, &occ),
               128);
  cr_expect_eq(rp__cu_pick_threads(full, 0, 2048, 0, &occ), 0);
  cr_expect_float_eq(occ, 0.0, 1e-12);
  /* nothing fits (blocks 0): occupancy 0, still a size */
  int none[RP_CU_NCAND] = {0, 0, 0, 0, 0};
  cr_expect_eq(rp__cu_pick_threads(none, RP_CU_NCAND, 2048, 0, &occ), 256);
  cr_expect_float_eq(occ, 0.0, 1e-12);
}
