/* The peers of the CPU benchmarks (bench_omp, bench_cholesky): a task
 * graph as plain arrays, built from a recorded reprise graph (its nodes in
 * program order, its edges), that oneTBB's flow graph (peer_tbb.cpp) and
 * the anchors' lean C engine (peer_lean.c) replay with the same task
 * bodies, and the busy processes of the contention mode. */
#ifndef RP_BENCH_PEER_H
#define RP_BENCH_PEER_H

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "reprise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An integer from the environment, d when unset or empty. */
static inline int bench_env_int(const char *n, int d) {
  const char *v = getenv(n);
  return v && *v ? atoi(v) : d;
}

/* BENCH_METHODS: the comma-separated methods to run (default all). */
static inline int bench_wanted(const char *m) {
  const char *w = getenv("BENCH_METHODS");
  if (!w || !*w)
    return 1;
  size_t n = strlen(m);
  for (const char *p = w; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
    if (!strncmp(p, m, n) && (p[n] == ',' || !p[n]))
      return 1;
  return 0;
}

typedef void (*peer_fn)(void *ctx, uint32_t v);

/* n tasks; task v's successors at succ[s0[v] .. s0[v + 1]); run(ctx, v)
 * runs task v. */
typedef struct pdag {
  uint32_t n;
  uint32_t *s0, *succ;
  peer_fn run;
  void *ctx;
} pdag;

/* The graph's operations and edges (after ops too); 0 or -1 (memory). */
static inline int pdag_from_graph(pdag *d, const rp_graph *g, peer_fn run,
                                  void *ctx) {
  uint32_t n = rp_graph_num_nodes(g), ne = rp_graph_num_edges(g);
  d->n = n;
  d->run = run;
  d->ctx = ctx;
  d->s0 = (uint32_t *)calloc((size_t)n + 1, sizeof *d->s0);
  d->succ = (uint32_t *)malloc((ne ? ne : 1) * sizeof *d->succ);
  if (!d->s0 || !d->succ)
    return -1;
  for (uint32_t i = 0; i < ne; i++) {
    rp_edge e;
    rp_graph_edge(g, i, &e);
    d->s0[e.from + 1]++;
  }
  for (uint32_t v = 0; v < n; v++)
    d->s0[v + 1] += d->s0[v];
  uint32_t *fill = (uint32_t *)malloc(((size_t)n + 1) * sizeof *fill);
  if (!fill)
    return -1;
  for (uint32_t v = 0; v <= n; v++)
    fill[v] = d->s0[v];
  for (uint32_t i = 0; i < ne; i++) {
    rp_edge e;
    rp_graph_edge(g, i, &e);
    d->succ[fill[e.from]++] = e.to;
  }
  free(fill);
  return 0;
}

static inline void pdag_free(pdag *d) {
  free(d->s0);
  free(d->succ);
  d->s0 = d->succ = NULL;
}

/* oneTBB flow graph (peer_tbb.cpp, built when TBB is found: RP_HAVE_TBB):
 * one continue_node per task, the graph's edges, a broadcast node feeding
 * the roots, in a task_arena of threads threads; a pass is one try_put
 * and wait_for_all. */
typedef struct peer_tbb peer_tbb;
peer_tbb *peer_tbb_create(const pdag *d, int threads);
void peer_tbb_run(peer_tbb *t, int passes);
void peer_tbb_destroy(peer_tbb *t);

/* The anchors' lean engine (peer_lean.c over ../shared/anchors/cpu's
 * dag_replay.c, built when present: RP_HAVE_LEAN): dag_replay_cont on
 * threads threads, passes replays back to back. */
typedef struct peer_lean peer_lean;
peer_lean *peer_lean_create(const pdag *d);
void peer_lean_run(peer_lean *l, int threads, int passes);
void peer_lean_destroy(peer_lean *l);

/* Contention mode: k processes that spin (each ends itself after
 * seconds at most), started before and stopped after the timed runs. */
typedef struct busy {
  pid_t pid[64];
  int k;
} busy;

static inline void busy_start(busy *b, int k, unsigned seconds) {
  b->k = 0;
  for (int i = 0; i < k && i < 64; i++) {
    pid_t p = fork();
    if (p == 0) {
      alarm(seconds ? seconds : 600);
      volatile unsigned long x = 0;
      for (;;)
        x++;
    }
    if (p > 0)
      b->pid[b->k++] = p;
  }
}

static inline void busy_stop(busy *b) {
  for (int i = 0; i < b->k; i++)
    kill(b->pid[i], SIGKILL);
  for (int i = 0; i < b->k; i++)
    waitpid(b->pid[i], NULL, 0);
  b->k = 0;
}

#ifdef __cplusplus
}
#endif
#endif
