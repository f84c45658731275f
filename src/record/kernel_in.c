/* The size rule (core/versioned.c) for the structs a recording call
 * takes: kernel descriptors (rp_kernel) and operation options
 * (rp_op_opts). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "record/graph.h"

/* The first released layouts: a kernel descriptor up to xrt_nargs (no
 * split, hint nor argument table yet), options with a name and a cost. */
#define KERNEL_MIN offsetof(rp_kernel, split_axis)
#define OP_OPTS_MIN offsetof(rp_op_opts, after)

struct rp__kcopy {
  const rp_kernel *orig;
  rp_kernel *copy;
};

void rp_kernel_init(rp_kernel *k) {
  if (k) {
    memset(k, 0, sizeof *k);
    k->size = sizeof *k;
  }
}

void rp_op_opts_init(rp_op_opts *o) {
  if (o)
    *o = (rp_op_opts)RP_OP_OPTS_INIT;
}

rp_status rp__kernel_in(rp_graph *g, const rp_kernel *k,
                        const rp_kernel **out) {
  if (k->size == sizeof *k) {
    *out = k;
    return RP_OK;
  }
  /* Names only the first bytes, which every layout has. */
  const char *kn = k->size >= KERNEL_MIN && k->name ? k->name : "?";
  if (k->size == 0)
    return rp__fail(g, RP_EINVAL,
                    "kernel \"%s\": size is 0: build the descriptor with "
                    "RP_KERNEL_DESC(), RP_KERNEL_WITH() or rp_kernel_init() "
                    "(they set it)",
                    kn);
  if (k->size < KERNEL_MIN || k->size > sizeof *k)
    return rp__fail(g, RP_EINVAL,
                    "kernel \"%s\": size %zu is not a size of rp_kernel "
                    "that this library knows (%zu to %zu bytes)",
                    kn, k->size, (size_t)KERNEL_MIN, sizeof *k);
  for (uint32_t i = 0; i < g->nkcopy; i++)
    if (g->kcopy[i].orig == k) {
      *out = g->kcopy[i].copy;
      return RP_OK;
    }
  rp_kernel *c = malloc(sizeof *c);
  if (!c || rp__grow((void **)&g->kcopy, &g->capkcopy, g->nkcopy + 1,
                     sizeof *g->kcopy) != 0) {
    free(c);
    return rp__fail(g, RP_ENOMEM, "out of memory recording");
  }
  rp_kernel_init(c);
  memcpy(c, k, k->size);
  c->size = sizeof *c;
  g->kcopy[g->nkcopy].orig = k;
  g->kcopy[g->nkcopy++].copy = c;
  *out = c;
  return RP_OK;
}

rp_status rp__op_opts_in(rp_graph *g, rp_op_opts *dst, const rp_op_opts *src) {
  rp_op_opts_init(dst);
  if (!src)
    return RP_OK;
  rp_status s =
      rp__versioned_load(dst, sizeof *dst, src, OP_OPTS_MIN, "rp_op_opts");
  if (s != RP_OK)
    rp__fail(g, s, "%s", rp_last_error());
  return s;
}

const rp_kernel *rp__kernel_given(const rp_graph *g, const rp_kernel *k) {
  for (uint32_t i = 0; i < g->nkcopy; i++)
    if (g->kcopy[i].copy == k)
      return g->kcopy[i].orig;
  return k;
}

void rp__kcopy_free(rp_graph *g) {
  for (uint32_t i = 0; i < g->nkcopy; i++)
    free(g->kcopy[i].copy);
  free(g->kcopy);
}
