/* Chunked pipelining advice: how many chunks the split rewrite
 * (transform/split.c) should cut the splittable kernels into, from the lane
 * model: each candidate k is rewritten and analysed, the smallest k within
 * 3 % of the best predicted time wins. */
#include <stdlib.h>
#include <string.h>
#include "analyze/analysis.h"
#include "transform/split.h"

/* Predicted replay time of an analysis: the model's overlapped time when
 * it has a model, else the list schedule's makespan. */
static double predicted(const rp_analysis *a) {
  rp_summary s;
  rp_analysis_summary(a, &s);
  return s.modelled ? s.model_overlap_us : s.makespan_us;
}

/* Analyse the split of g in k; *t its predicted time. Chunks cost their
 * share of the whole op's cost unless the model prices them (copies). */
static rp_status try_k(const rp_graph *g, const rp_analysis *base,
                       const rp_analysis_opts *o, unsigned k, double *t,
                       rp__rewrite *keep) {
  rp__rewrite sp;
  rp_status s = rp__split_build(g, k, 0, &sp, NULL, 0);
  if (s != RP_OK)
    return s;
  if (!sp.g) {
    *t = predicted(base);
    if (keep)
      *keep = sp;
    return RP_OK;
  }
  uint32_t nn = rp_graph_num_nodes(sp.g);
  double *cost = malloc((nn ? nn : 1) * sizeof *cost);
  if (!cost) {
    rp__rewrite_free(&sp);
    return RP_ENOMEM;
  }
  for (uint32_t j = 0; j < nn; j++) {
    rp_node n = sp.orig[j];
    uint32_t pieces = sp.first[n + 1] - sp.first[n];
    cost[j] =
        base->source[n] == RP_COST_MODELLED ? -1.0 : base->cost[n] / pieces;
  }
  rp_analysis_opts so = *o;
  so.measured_us = cost;
  rp_analysis *a;
  s = rp_analyze(sp.g, &so, &a);
  free(cost);
  if (s == RP_OK) {
    *t = predicted(a);
    rp_analysis_destroy(a);
  }
  if (keep && s == RP_OK)
    *keep = sp;
  else
    rp__rewrite_free(&sp);
  return s;
}

rp_status rp_split_advise(const rp_graph *g, const rp_analysis_opts *o,
                          unsigned max_k, rp_split_advice *out) {
  RP_ENTER();
  if (!g || !out)
    return RP_NULL_ARG();
  memset(out, 0, sizeof *out);
  out->k = 1;
  out->first_kernel = RP_NONE;
  if (!rp_graph_ended(g))
    return RP_ESTATE;
  if (!max_k)
    max_k = 16;
  if (max_k > 1024)
    return RP_EINVAL;
  rp_analysis_opts mine;
  rp_status vs = rp__analysis_opts_in(&mine, o, "rp_split_advise");
  if (vs != RP_OK)
    return vs;
  o = &mine;
  rp_analysis *base;
  rp_status s = rp_analyze(g, o, &base);
  if (s != RP_OK)
    return s;
  out->unsplit_us = out->split_us = predicted(base);
  out->speedup = 1;
  for (rp_node n = 0; n < rp_graph_num_nodes(g); n++)
    if (rp__split_eligible(g, n, NULL, NULL, 0)) {
      out->first_kernel = n;
      break;
    }
  double *t = malloc((max_k + 1) * sizeof *t);
  if (!t) {
    rp_analysis_destroy(base);
    return RP_ENOMEM;
  }
  t[1] = out->unsplit_us;
  double best = t[1];
  for (unsigned k = 2; k <= max_k && s == RP_OK && out->first_kernel != RP_NONE;
       k++) {
    s = try_k(g, base, o, k, &t[k], NULL);
    if (s == RP_OK && t[k] < best)
      best = t[k];
  }
  unsigned k = 1;
  if (s == RP_OK && out->first_kernel != RP_NONE)
    for (k = 1; k < max_k && t[k] > best * 1.03; k++)
      ;
  if (s == RP_OK && k > 1) {
    rp__rewrite sp;
    double tk;
    s = try_k(g, base, o, k, &tk, &sp);
    if (s == RP_OK) {
      out->k = k;
      out->split_us = tk;
      out->speedup = tk > 0 ? out->unsplit_us / tk : 1;
      out->nkernels = sp.nkernels;
      out->ncopies = sp.ncopies;
      rp__rewrite_free(&sp);
    }
  }
  free(t);
  rp_analysis_destroy(base);
  return s;
}

rp_status rp_split_write_text(const rp_graph *g, const rp_split_advice *a,
                              FILE *fp) {
  RP_ENTER();
  if (!g || !a || !fp)
    return RP_NULL_ARG();
  if (a->first_kernel == RP_NONE) {
    fprintf(fp, "split: no kernel declared splittable with regions that "
                "follow its axis\n");
    return ferror(fp) ? RP_EIO : RP_OK;
  }
  rp_node_info ni;
  rp_node_info_get(g, a->first_kernel, &ni);
  if (a->k <= 1) {
    fprintf(fp, "split \"%s\": no gain predicted (%.3f ms as recorded)\n",
            ni.name, a->unsplit_us / 1e3);
    return ferror(fp) ? RP_EIO : RP_OK;
  }
  fprintf(fp, "split \"%s\" in %u: predicted %.2fx (%.3f ms -> %.3f ms)",
          ni.name, a->k, a->speedup, a->unsplit_us / 1e3, a->split_us / 1e3);
  if (a->nkernels > 1)
    fprintf(fp, ", with %u other kernel%s", a->nkernels - 1,
            a->nkernels > 2 ? "s" : "");
  fprintf(fp, "; %u cop%s cut with %s\n", a->ncopies,
          a->ncopies == 1 ? "y" : "ies", a->nkernels > 1 ? "them" : "it");
  return ferror(fp) ? RP_EIO : RP_OK;
}
