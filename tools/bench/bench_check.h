/* What the benchmarks share: the check of reprise's calls (a failing one,
 * RK, ends the benchmark with where and why), a monotonic clock in
 * microseconds and the median of timings. Valid C and C++; a C file
 * defines _POSIX_C_SOURCE (or _GNU_SOURCE) before it for clock_gettime. */
#ifndef RP_BENCH_CHECK_H
#define RP_BENCH_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "reprise.h"

#define RK(x)                                                                  \
  do {                                                                         \
    rp_status s_ = (x);                                                        \
    if (s_ != RP_OK) {                                                         \
      fprintf(stderr, "%s:%d %s: %s: %s\n", __FILE__, __LINE__, #x,            \
              rp_status_name(s_), rp_last_error());                            \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

static inline double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static inline int rp_bench_cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0 .. n) (the upper one for even n); sorts v. */
static inline double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, rp_bench_cmpd);
  return v[n / 2];
}

#endif
