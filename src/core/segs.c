/* Breakpoint segmentation of byte intervals (core/core.h): the coherence
 * model and the plan's image sharing both cut a buffer's bytes at the ends
 * of every interval its accesses touch. */
#include <string.h>
#include "core/core.h"

/* Sorts v[0 .. n), values at most max, through tmp[0 .. n): insertion
 * for a few, else a radix sort over the bits max needs, in digits of
 * about log2(n) bits (at most 11). */
static void sort_u64(uint64_t *v, uint64_t *tmp, uint64_t n, uint64_t max) {
  if (n < 48) {
    for (uint64_t a = 1; a < n; a++) {
      uint64_t x = v[a], b = a;
      for (; b > 0 && v[b - 1] > x; b--)
        v[b] = v[b - 1];
      v[b] = x;
    }
    return;
  }
  /* Digits of about log2(n) bits: a pass costs n plus its buckets. */
  unsigned bits = 6;
  while (bits < 11 && (1ull << (bits + 1)) <= n)
    bits++;
  uint64_t *src = v, *dst = tmp, nb = 1ull << bits, mask = nb - 1;
  for (unsigned sh = 0; sh < 64 && (max >> sh); sh += bits) {
    uint64_t cnt[2048];
    memset(cnt, 0, nb * sizeof *cnt);
    for (uint64_t i = 0; i < n; i++)
      cnt[(src[i] >> sh) & mask]++;
    for (uint64_t i = 0, sum = 0; i < nb; i++) {
      uint64_t c = cnt[i];
      cnt[i] = sum;
      sum += c;
    }
    for (uint64_t i = 0; i < n; i++)
      dst[cnt[(src[i] >> sh) & mask]++] = src[i];
    uint64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != v)
    memcpy(v, src, n * sizeof *v);
}

/* The breakpoints of regular accesses (tiles, rows, chunks) are multiples
 * of a power of two and few: shifted by the trailing zeros they share,
 * they index a bitmap of at most 64 n bits, which tmp holds; reading its
 * set bits in order gives them sorted, each once, with no sort. 0 when
 * the bitmap would be larger. */
static uint64_t segs_bitmap(uint64_t *bp, uint64_t *tmp, uint64_t n,
                            uint64_t max) {
  uint64_t any = 0;
  for (uint64_t i = 0; i < n; i++)
    any |= bp[i];
  unsigned t = any ? (unsigned)__builtin_ctzll(any) : 0;
  uint64_t words = ((max >> t) >> 6) + 1;
  if (words > n)
    return 0;
  memset(tmp, 0, words * sizeof *tmp);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t v = bp[i] >> t;
    tmp[v >> 6] |= 1ull << (v & 63);
  }
  uint64_t u = 0;
  for (uint64_t w = 0; w < words; w++)
    for (uint64_t x = tmp[w]; x; x &= x - 1)
      bp[u++] = (w << 6 | (unsigned)__builtin_ctzll(x)) << t;
  return u;
}

uint64_t rp__segs_sort(uint64_t *bp, uint64_t *tmp, uint64_t n, uint64_t max) {
  if (n >= 48) {
    uint64_t u = segs_bitmap(bp, tmp, n, max);
    if (u)
      return u;
  }
  sort_u64(bp, tmp, n, max);
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
