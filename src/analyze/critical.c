/* Critical path: the longest cost-weighted path through the edges. */
#include <stdlib.h>
#include "analyze/analysis.h"

/* Operation ids are program order and every edge (hazard or `after`) goes
 * from an earlier to a later operation, so increasing id is a topological
 * order: one forward pass gives the top levels (earliest starts with
 * unlimited lanes), one backward pass the bottom levels (the longest path
 * from an operation's start to the end of the graph), both O(V + E). */
rp_status rp__analysis_critical(rp_analysis *a) {
  const rp_graph *g = a->g;
  uint32_t nop = a->nop;
  a->sum.critical_path_us = 0;
  a->ncrit = 0;
  if (nop == 0)
    return RP_OK;
  double *top = malloc(sizeof *top * nop);
  uint32_t *via = malloc(sizeof *via * nop);
  if (!top || !via) {
    free(top);
    free(via);
    return RP_ENOMEM;
  }
  /* Forward: top[n] and the predecessor it came through (the smallest id
   * among equals, so that the path is deterministic). */
  double best = -1;
  uint32_t last = 0;
  for (uint32_t n = 0; n < nop; n++) {
    uint32_t np;
    const rp_node *p = rp_graph_preds(g, n, &np);
    double t = 0;
    uint32_t v = RP_NONE;
    for (uint32_t i = 0; i < np; i++) {
      if (p[i] >= n) {
        free(top);
        free(via);
        return RP_EINVAL;
      }
      double f = top[p[i]] + a->cost[p[i]];
      if (v == RP_NONE || f > t || (f == t && p[i] < v)) {
        t = f;
        v = p[i];
      }
    }
    top[n] = t;
    via[n] = v;
    double f = t + a->cost[n];
    if (f > best) {
      best = f;
      last = n;
    }
  }
  a->sum.critical_path_us = best;

  /* The path, walked back from the first op that ends last. */
  uint32_t len = 0;
  for (uint32_t n = last; n != RP_NONE; n = via[n])
    len++;
  a->crit = malloc(sizeof *a->crit * len);
  if (!a->crit) {
    free(top);
    free(via);
    return RP_ENOMEM;
  }
  a->ncrit = len;
  for (uint32_t n = last, i = len; n != RP_NONE; n = via[n]) {
    a->crit[--i] = n;
    a->critical[n] = 1;
  }
  free(via);
  free(top);

  /* Backward: bottom levels, the schedule's priorities. */
  for (uint32_t n = nop; n-- > 0;) {
    uint32_t ns;
    const rp_node *s = rp_graph_succs(g, n, &ns);
    double b = 0;
    for (uint32_t i = 0; i < ns; i++) {
      if (s[i] <= n || s[i] >= nop)
        return RP_EINVAL;
      if (a->bottom[s[i]] > b)
        b = a->bottom[s[i]];
    }
    a->bottom[n] = b + a->cost[n];
  }
  return RP_OK;
}
