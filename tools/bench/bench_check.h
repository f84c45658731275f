/* The benchmarks' check of reprise's calls: a failing one (RK) ends the
 * benchmark with where and why. Valid C and C++. */
#ifndef RP_BENCH_CHECK_H
#define RP_BENCH_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include "reprise.h"

#define RK(x)                                                              \
  do {                                                                     \
    rp_status s_ = (x);                                                    \
    if (s_ != RP_OK) {                                                     \
      fprintf(stderr, "%s:%d %s: %s: %s\n", __FILE__, __LINE__, #x,        \
              rp_status_name(s_), rp_last_error());                        \
      exit(2);                                                             \
    }                                                                      \
  } while (0)

#endif
