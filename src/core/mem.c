/* Memory and growable arrays. */
#include <stdlib.h>
#include <string.h>
#include "core/core.h"

char *rp__strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d)
    memcpy(d, s, n);
  return d;
}

int rp__grow(void **p, uint32_t *cap, uint32_t n, size_t sz) {
  if (n <= *cap)
    return 0;
  uint64_t c = *cap ? *cap : 16;
  while (c < n)
    c *= 2;
  if (c > UINT32_MAX)
    c = UINT32_MAX;
  if (c < n)
    return -1;
  void *q = realloc(*p, (size_t)c * sz);
  if (!q)
    return -1;
  *p = q;
  *cap = (uint32_t)c;
  return 0;
}

int rp__growz(void **p, size_t *cap, size_t n, size_t sz) {
  if (n <= *cap)
    return 0;
  size_t c = *cap ? *cap : 64;
  while (c < n)
    c *= 2;
  void *q = realloc(*p, c * sz);
  if (!q)
    return -1;
  *p = q;
  *cap = c;
  return 0;
}
