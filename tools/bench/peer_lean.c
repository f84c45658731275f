/* The anchors' lean C engine as a peer of bench_omp (tools/bench/peer.h):
 * dag_replay_cont of ../shared/anchors/cpu/dag_replay.c over the recorded
 * graph, built only where that folder is given (RP_ANCHORS_CPU). */
#include <omp.h>
#include <stdlib.h>
#include "dag.h"
#include "peer.h"

struct peer_lean {
  dag_t g;
  const pdag *d;
};

static void lean_body(void *const *b, long v) {
  const pdag *d = (const pdag *)b[0];
  d->run(d->ctx, (uint32_t)v);
}

peer_lean *peer_lean_create(const pdag *d) {
  peer_lean *l = calloc(1, sizeof *l);
  if (!l)
    return NULL;
  int n = (int)d->n;
  l->d = d;
  l->g.n = n;
  l->g.ops = calloc((size_t)n + 1, sizeof *l->g.ops);
  l->g.soff = malloc(((size_t)n + 1) * sizeof *l->g.soff);
  l->g.succ = malloc(((size_t)d->s0[n] + 1) * sizeof *l->g.succ);
  l->g.indeg0 = calloc((size_t)n + 1, sizeof *l->g.indeg0);
  l->g.roots = malloc(((size_t)n + 1) * sizeof *l->g.roots);
  if (!l->g.ops || !l->g.soff || !l->g.succ || !l->g.indeg0 || !l->g.roots) {
    peer_lean_destroy(l);
    return NULL;
  }
  for (int v = 0; v <= n; v++)
    l->g.soff[v] = (int)d->s0[v];
  for (uint32_t k = 0; k < d->s0[n]; k++) {
    l->g.succ[k] = (int)d->succ[k];
    l->g.indeg0[d->succ[k]]++;
  }
  l->g.nedges = (long)d->s0[n];
  for (int v = 0; v < n; v++) {
    l->g.ops[v].fn = lean_body;
    l->g.ops[v].arg = v;
    l->g.ops[v].b[0] = (void *)d;
    if (!l->g.indeg0[v])
      l->g.roots[l->g.nroots++] = v;
  }
  return l;
}

void peer_lean_run(peer_lean *l, int threads, int passes) {
  omp_set_num_threads(threads);
  dag_replay_cont(&l->g, passes);
}

void peer_lean_destroy(peer_lean *l) {
  if (!l)
    return;
  dag_rt_free(&l->g);
  free(l->g.ops);
  free(l->g.soff);
  free(l->g.succ);
  free(l->g.indeg0);
  free(l->g.roots);
  free(l);
}
