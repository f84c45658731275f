/* The pipeline of graph -> graph passes (transform/pass.h). */
#include <stdlib.h>
#include <string.h>
#include "transform/pass.h"
#include "transform/split.h"

rp_status rp__pass_split(const rp_graph *in, const rp__pass_opts *o,
                         rp__rewrite *out, char *err, size_t errlen) {
  return rp__split_build(in, o->split, 0, out, err, errlen);
}

rp_status rp__pass_reshape(const rp_graph *in, const rp__pass_opts *o,
                           rp__rewrite *out, char *err, size_t errlen) {
  return rp__split_build_run(in, 1, o->reshape_bytes, o->reshape_run, out, err,
                             errlen);
}

static int want_split(const rp__pass_opts *o) { return o->split > 1; }
static int want_reshape(const rp__pass_opts *o) { return o->reshape_bytes > 0; }

/* The passes in the order they run. `first_only`: the pass plans on the
 * graph as recorded and is skipped once a pass before it rewrote the
 * graph (reshape: its merges would undo the split's chunks of copies). */
static const struct {
  const char *name;
  rp__pass_fn run;
  int (*wanted)(const rp__pass_opts *o);
  int first_only;
} passes[] = {
    {"split", rp__pass_split, want_split, 0},
    {"reshape", rp__pass_reshape, want_reshape, 1},
};

void rp__rewrite_free(rp__rewrite *r) {
  if (!r)
    return;
  rp_graph_destroy(r->g);
  free(r->first);
  free(r->orig);
  free(r->axis);
  free(r->origin);
  memset(r, 0, sizeof *r);
}

/* a (g0 -> g1) followed by b (g1 -> g2) becomes a (g0 -> g2); b is
 * emptied. Both maps are monotone (each op of the input becomes a run of
 * consecutive ops, in program order), so first[] composes by lookup. */
static rp_status compose(rp__rewrite *a, rp__rewrite *b) {
  uint32_t n2 = rp_graph_num_nodes(b->g);
  for (uint32_t n = 0; n <= a->nop; n++)
    a->first[n] = b->first[a->first[n]];
  for (uint32_t m = 0; m < n2; m++) {
    uint32_t via = b->orig[m];
    b->orig[m] = a->orig[via];
    if (b->axis[m] < 0) {
      b->axis[m] = a->axis[via];
      b->origin[m] = a->origin[via];
    }
  }
  free(a->orig);
  free(a->axis);
  free(a->origin);
  rp_graph_destroy(a->g);
  a->g = b->g;
  a->orig = b->orig;
  a->axis = b->axis;
  a->origin = b->origin;
  a->nkernels += b->nkernels;
  a->ncopies += b->ncopies;
  a->nmerged += b->nmerged;
  a->nsplit += b->nsplit;
  free(b->first);
  memset(b, 0, sizeof *b);
  return RP_OK;
}

rp_status rp__transform(const rp_graph *g, const rp__pass_opts *o,
                        rp__rewrite *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  if (err && errlen)
    err[0] = 0;
  for (unsigned i = 0; i < sizeof passes / sizeof *passes; i++) {
    if (!passes[i].wanted(o) || (passes[i].first_only && out->g))
      continue;
    rp__rewrite step;
    rp_status s = passes[i].run(out->g ? out->g : g, o, &step, err, errlen);
    if (s != RP_OK) {
      rp__rewrite_free(out);
      return s;
    }
    if (!step.g)
      continue;
    if (!out->g)
      *out = step;
    else
      compose(out, &step);
  }
  return RP_OK;
}
