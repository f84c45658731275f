/* Breakpoint segmentation of byte intervals (core/core.h): the coherence
 * model and the plan's image sharing both cut a buffer's bytes at the ends
 * of every interval its accesses touch. */
#include <stdlib.h>
#include "core/core.h"

static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return (a > b) - (a < b);
}

uint64_t rp__segs_sort(uint64_t *bp, uint64_t n) {
  if (n)
    qsort(bp, n, sizeof *bp, cmp_u64);
  uint64_t u = 0;
  for (uint64_t i = 0; i < n; i++)
    if (!u || bp[u - 1] != bp[i])
      bp[u++] = bp[i];
  return u;
}

uint64_t rp__segs_find(const uint64_t *bp, uint64_t n, uint64_t v) {
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    uint64_t mid = (lo + hi) / 2;
    if (bp[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}
