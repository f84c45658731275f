/* rp_exec_create: the replay's exec (replay/exec.c) with the chunks of
 * rp_exec_opts.split = RP_EXEC_SPLIT_AUTO chosen by the lane model. The
 * choice needs the machine model and the analysis, so it is made here,
 * above both, and handed to the replay as a function. */
#include "measure/measure.h"

/* The smallest k within 3 % of the best predicted time (rp_split_advise),
 * with the calibrated model of be for xo when the cache has one (and it
 * knows xo's mode); 1 when the advice fails. */
static unsigned split_auto(const rp_graph *g, const rp_backend *be,
                           const rp_exec_opts *xo) {
  rp_model m;
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  if (rp_model_get(&m, be, xo, 0) == RP_OK &&
      (!xo->mode || rp_model_find_mode(&m, xo->mode))) {
    o.model = &m;
    o.mode = xo->mode;
  }
  rp_split_advice adv;
  if (rp_split_advise(g, &o, 0, &adv) != RP_OK)
    return 1;
  return adv.k;
}

rp_status rp_exec_create(rp_exec **out, const rp_graph *g, const rp_backend *be,
                         const rp_exec_opts *o) {
  RP_ENTER();
  if (!out || !g)
    return RP_NULL_ARG();
  return rp__exec_create(out, g, be, o, split_auto);
}
