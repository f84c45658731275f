/* Launch geometry of the cuda backend: see rp_cuda_geom.h. */
#include "rp_cuda_geom.h"

#include <stdbool.h>

#include "reprise/record.h"

const unsigned rp__cu_cand[RP_CU_NCAND] = {64, 128, 256, 512, 1024};

static unsigned dist(unsigned a, unsigned b) { return a > b ? a - b : b - a; }

unsigned rp__cu_pick_threads(const int *blocks, unsigned ncand, int sm_threads,
                             unsigned hint, double *occ) {
  unsigned target = hint & RP_HINT_MEMORY_BOUND    ? 512
                    : hint & RP_HINT_COMPUTE_BOUND ? 128
                                                   : 256;
  unsigned best = 0;
  double bo = -1;
  for (unsigned i = 0; i < ncand && i < RP_CU_NCAND; i++) {
    unsigned t = rp__cu_cand[i];
    double o = sm_threads > 0 && blocks[i] > 0
                   ? (double)blocks[i] * t / (double)sm_threads
                   : 0;
    if (o > 1)
      o = 1;
    /* equal up to rounding: the hint's target decides */
    if (o > bo + 1e-9 ||
        (o > bo - 1e-9 && dist(t, target) < dist(best, target))) {
      best = t;
      bo = o;
    }
  }
  if (occ)
    *occ = best ? bo : 0;
  return best;
}

static unsigned shrink(unsigned b, uint64_t n, unsigned floor) {
  while (b / 2 >= floor && b / 2 >= n && b > 1)
    b /= 2;
  return b;
}

void rp__cu_shape(unsigned threads, const uint64_t n[3], unsigned out[3]) {
  unsigned t = threads ? threads : 256;
  if (n[2] > 1) {
    out[0] = 32;
    out[1] = 4;
    out[2] = t >= 128 ? t / 128 : 1;
  } else if (n[1] > 1) {
    out[0] = 32;
    out[1] = t >= 32 ? t / 32 : 1;
    out[2] = 1;
  } else {
    out[0] = t;
    out[1] = out[2] = 1;
  }
  bool r1 = n[1] <= 1 && n[2] <= 1;
  out[0] = shrink(out[0], n[0], r1 ? 32 : 1);
  out[1] = shrink(out[1], n[1], 1);
  out[2] = shrink(out[2], n[2], 1);
}
