/* Guard zones around the images a backend owns (issue 32): a kernel
 * writing past its region and past the end (or before the start) of an
 * internal image lands in bytes of a known pattern, which the core checks
 * after each replay and at destroy, so the run fails with RP_EACCESS and a
 * message naming the buffer and its writers instead of damaging the heap
 * and crashing later. A few words per image per replay, the whole zones
 * at destroy. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "replay/exec.h"
#include "reprise/backend.h"

enum { GUARD = 64 }; /* bytes of each zone; a multiple of 8 */
#define PATTERN 0xa5u
#define PATTERN64 0xa5a5a5a5a5a5a5a5ull

/* Layout: [GUARD: 8 bytes size, then pattern][bytes][pad to 64, then
 * GUARD of pattern]. The user pointer is 64-byte aligned. */
static uint64_t tail_len(uint64_t bytes) {
  return (64 - bytes % 64) % 64 + GUARD;
}

/* Images of at least this many bytes are mapped (mmap: pages the kernel
 * zeroes when first touched, not zeroed here a second time) on huge
 * pages where the kernel gives them on request (transparent huge pages in
 * mode "madvise": a fault per 2 MiB instead of per 4 KiB). Issue 35: on
 * the 2-core VM a 4096^2 grid's images took 1.5 s to create, in faults
 * and the zeroing of pages the kernel had zeroed. */
#define MAPPED (4u << 20)

/* The 2 MiB-aligned middle of [p, p + n) on huge pages; a hint. */
static void huge_hint(unsigned char *p, size_t n) {
#ifdef MADV_HUGEPAGE
  enum { HUGE = 2u << 20 };
  size_t off = (HUGE - (uintptr_t)p % HUGE) % HUGE;
  size_t len = n > off ? (n - off) / HUGE * HUGE : 0;
  if (n >= 2 * (size_t)HUGE && len)
    (void)madvise(p + off, len, MADV_HUGEPAGE);
#else
  (void)p;
  (void)n;
#endif
}

void *rp_image_alloc(uint64_t bytes) {
  uint64_t body = bytes + tail_len(bytes);
  if (bytes > UINT64_MAX - 2 * GUARD - 64 || body + GUARD > SIZE_MAX)
    return NULL;
  unsigned char *base;
  if (bytes >= MAPPED) { /* zero already: nothing to clear */
    base = mmap(NULL, (size_t)(GUARD + body), PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
      return NULL;
    huge_hint(base, (size_t)(GUARD + body));
  } else {
    if (!(base = aligned_alloc(64, (size_t)(GUARD + body))))
      return NULL;
    memset(base + GUARD, 0, (size_t)bytes);
  }
  memset(base, PATTERN, GUARD);
  memcpy(base, &bytes, sizeof bytes);
  memset(base + GUARD + bytes, PATTERN, (size_t)tail_len(bytes));
  return base + GUARD;
}

void rp_image_free(void *img) {
  if (!img)
    return;
  unsigned char *base = (unsigned char *)img - GUARD;
  uint64_t bytes;
  memcpy(&bytes, base, sizeof bytes);
  if (bytes >= MAPPED)
    munmap(base, (size_t)(GUARD + bytes + tail_len(bytes)));
  else
    free(base);
}

/* The first damaged byte: < 0 before the image, >= bytes after it; 0 with
 * *ok = 1 when intact. */
static int64_t damaged(const void *img, int *ok) {
  const unsigned char *p = img, *head = p - GUARD;
  uint64_t bytes;
  memcpy(&bytes, head, sizeof bytes);
  *ok = 0;
  for (unsigned i = sizeof bytes; i < GUARD; i++)
    if (head[i] != PATTERN)
      return (int64_t)i - GUARD;
  /* The tail: byte by byte up to 8-byte alignment, then in words. */
  const unsigned char *t = p + bytes;
  uint64_t n = tail_len(bytes), i = 0;
  for (; i < n && ((uintptr_t)(t + i) & 7u); i++)
    if (t[i] != PATTERN)
      return (int64_t)(bytes + i);
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, t + i, 8);
    if (w != PATTERN64)
      for (unsigned j = 0; j < 8; j++)
        if (t[i + j] != PATTERN)
          return (int64_t)(bytes + i + j);
  }
  *ok = 1;
  return 0;
}

/* The per-replay check, two words: the one before the image and the one
 * right after its end, which a write running off either end of the image
 * crosses first. Returns 1 when they are intact; the whole zones are
 * checked at destroy. */
static int quick_ok(const void *img) {
  const unsigned char *p = img;
  uint64_t bytes, w0, w1;
  memcpy(&bytes, p - GUARD, sizeof bytes);
  memcpy(&w0, p - 8, 8);
  memcpy(&w1, p + bytes, 8);
  return (w0 == PATTERN64) & (w1 == PATTERN64);
}

int rp_image_guard_ok(const void *img) {
  int ok = 1;
  if (img)
    damaged(img, &ok);
  return ok;
}

/* Put the pattern back, so that one damage is reported once. */
static void rearm(void *img) {
  unsigned char *p = img, *head = p - GUARD;
  uint64_t bytes;
  memcpy(&bytes, head, sizeof bytes);
  memset(head + sizeof bytes, PATTERN, GUARD - sizeof bytes);
  memset(p + bytes, PATTERN, (size_t)tail_len(bytes));
}

rp_status rp_exec_guard_image(rp_exec *x, uint32_t image, void *img) {
  RP_ENTER();
  const rp_plan *p = x ? rp_exec_plan(x) : NULL;
  if (!p || image >= p->nimage)
    return RP_BAD_ARG();
  if (!x->guard) {
    if (!img)
      return RP_OK;
    if (!(x->guard = calloc(p->nimage, sizeof *x->guard)))
      return RP_ENOMEM;
    x->nguard = p->nimage;
  }
  x->guard[image] = img;
  return RP_OK;
}

/* Names of the operations that write image i, as "a", "b" and 2 more. */
static void writers(const rp_plan *p, uint32_t i, char *out, size_t n) {
  size_t len = 0;
  unsigned found = 0;
  out[0] = 0;
  for (uint32_t v = 0; v < p->nnode; v++) {
    const rp_plan_node *nd = &p->node[v];
    int writes = 0;
    for (uint32_t k = 0; k < nd->nacc; k++) {
      const rp_plan_access *a = &p->acc[nd->acc0 + k];
      writes |= a->image == i && a->mode != RP_IN && a->mode != RP_SCALAR;
    }
    if (!writes)
      continue;
    if (found++ < 4) {
      rp_node_info ni;
      rp_node_info_get(p->graph, nd->op, &ni);
      int w = snprintf(out + len, n - len, "%s\"%s\"", found > 1 ? ", " : "",
                       ni.name ? ni.name : "?");
      if (w > 0 && (size_t)w < n - len)
        len += (size_t)w;
    }
  }
  if (found > 4)
    snprintf(out + len, n - len, " and %u more", found - 4);
  else if (!found)
    snprintf(out, n, "none recorded");
}

rp_status rp__exec_guards(rp_exec *x, int full) {
  for (uint32_t i = 0; i < x->nguard; i++) {
    int ok;
    if (!x->guard[i] || (!full && quick_ok(x->guard[i])))
      continue;
    int64_t at = damaged(x->guard[i], &ok);
    if (ok)
      continue;
    const rp_plan *p = rp_exec_plan(x);
    const rp_plan_image *im = &p->image[i];
    rp_buffer_desc d;
    rp_buffer_info(p->graph, im->buf, &d);
    char w[256];
    writers(p, i, w, sizeof w);
    char sp[24];
    if (im->space == RP_SPACE_HOST)
      snprintf(sp, sizeof sp, "host");
    else
      snprintf(sp, sizeof sp, "device %d", im->space);
    rp_exec_set_error(x,
                      "buffer \"%s\": a write %s its %s image (byte "
                      "%lld of %llu) damaged the guard zone; the operations "
                      "writing it: %s (RP_CHECK=1 names the access outside "
                      "its region)",
                      d.name ? d.name : "?",
                      at < 0 ? "before the start of" : "past the end of", sp,
                      (long long)at, (unsigned long long)d.bytes, w);
    rearm(x->guard[i]);
    return RP_EACCESS;
  }
  return RP_OK;
}
