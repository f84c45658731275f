/* The core layer (src/core): what every other layer uses and which uses
 * nothing of theirs. Status names and the per-thread error text
 * (core/error.c), memory and growable arrays (core/mem.c), the monotonic
 * clock (core/clock.c); the buffered writer is core/out.h. */
#ifndef RP_CORE_H
#define RP_CORE_H

#include <stddef.h>
#include <stdint.h>
#include "reprise/record.h"

/* Sets the calling thread's rp_last_error() text ("" clears it). */
void rp__set_last_error(const char *msg);
/* Clears it: every public call that can fail starts with this, so that
 * rp_last_error() always describes the calling thread's last call. */
void rp__clear_last_error(void);
/* The same, formatted. */
void rp__set_last_errorf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The error rule (docs/design.md, "Errors"; reprise/common.h), one for
 * every public function that returns an rp_status, applied by
 * construction:
 *   - its first statement is RP_ENTER(), which clears the calling
 *     thread's rp_last_error();
 *   - an argument that may not be NULL and is refuses with
 *     `return RP_NULL_ARG();`: RP_EINVAL, with a message naming the call;
 *   - every other failure sets its message (rp__set_last_error*) before
 *     it returns.
 * tests/test_error_rule.c walks every such function of the headers. */
#define RP_ENTER() rp__clear_last_error()
#define RP_NULL_ARG() rp__null_arg(__func__)
/* The same for a test that mixes NULL arguments and ranges. */
#define RP_BAD_ARG() rp__bad_arg(__func__)
/* RP_EINVAL, with "<fn>: a required argument is NULL". */
rp_status rp__null_arg(const char *fn);
/* RP_EINVAL, with "<fn>: invalid argument (NULL, or an index out of
 * range)". */
rp_status rp__bad_arg(const char *fn);

/* A malloc'ed copy of s (NULL when out of memory). */
char *rp__strdup(const char *s);
/* Grows *p (elements of size sz, *cap of them) to hold at least n,
 * doubling from 16; returns 0, or -1 (nothing changed) when out of memory
 * or past UINT32_MAX elements. */
int rp__grow(void **p, uint32_t *cap, uint32_t n, size_t sz);
/* The same for size_t capacities (doubling from 64). */
int rp__growz(void **p, size_t *cap, size_t n, size_t sz);

/* Breakpoints (core/segs.c): sorts the n interval ends in bp (each at
 * most max; tmp: room for n more) and keeps each once; returns how many
 * are left. Segment q is [bp[q], bp[q + 1]). */
uint64_t rp__segs_sort(uint64_t *bp, uint64_t *tmp, uint64_t n, uint64_t max);
/* The first of the n sorted breakpoints >= v: the segment starting at v
 * when v is a breakpoint. */
uint64_t rp__segs_find(const uint64_t *bp, uint64_t n, uint64_t v);

/* Versioned structs (core/versioned.c, which states the rule): copies
 * the caller's struct src (its leading size_t says how many bytes it has)
 * over dst, which holds the library's defaults in its `have` bytes;
 * RP_EINVAL, with rp_last_error() naming @p what, for size 0, below
 * @p min or above @p have. */
rp_status rp__versioned_load(void *dst, size_t have, const void *src,
                             size_t min, const char *what);
/* Copies the library's full struct src back into the caller's dst, no
 * more than dst's own size bytes (which it keeps). */
void rp__versioned_store(void *dst, const void *src);

/* Monotonic time in microseconds (exported: plugins time with it). */
double rp__now_us(void);

#endif
