// oneTBB flow graph peer of the CPU benchmarks (tools/bench/peer.h): the
// recorded graph as continue_nodes, replayed by a task_arena of a given
// number of threads.
#include <tbb/flow_graph.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <memory>
#include <vector>
#include "peer.h"

namespace flow = tbb::flow;

struct peer_tbb {
  tbb::task_arena arena;
  std::unique_ptr<flow::graph> g;
  std::unique_ptr<flow::broadcast_node<flow::continue_msg>> start;
  std::vector<std::unique_ptr<flow::continue_node<flow::continue_msg>>> node;
  explicit peer_tbb(int threads) : arena(threads) {}
};

extern "C" peer_tbb *peer_tbb_create(const pdag *d, int threads) {
  /* TBB sizes its worker pool once, from the first arena or the machine:
   * allow any arena size asked for later (oversubscribed runs too). */
  static tbb::global_control most(tbb::global_control::max_allowed_parallelism,
                                  256);
  peer_tbb *t = new peer_tbb(threads);
  t->arena.execute([&] {
    t->g.reset(new flow::graph);
    t->start.reset(new flow::broadcast_node<flow::continue_msg>(*t->g));
    std::vector<char> has_pred(d->n, 0);
    for (uint32_t v = 0; v < d->n; v++)
      for (uint32_t k = d->s0[v]; k < d->s0[v + 1]; k++)
        has_pred[d->succ[k]] = 1;
    t->node.reserve(d->n);
    peer_fn run = d->run;
    void *ctx = d->ctx;
    for (uint32_t v = 0; v < d->n; v++)
      t->node.emplace_back(new flow::continue_node<flow::continue_msg>(
          *t->g, [run, ctx, v](const flow::continue_msg &) { run(ctx, v); }));
    for (uint32_t v = 0; v < d->n; v++) {
      if (!has_pred[v])
        flow::make_edge(*t->start, *t->node[v]);
      for (uint32_t k = d->s0[v]; k < d->s0[v + 1]; k++)
        flow::make_edge(*t->node[v], *t->node[d->succ[k]]);
    }
  });
  return t;
}

extern "C" void peer_tbb_run(peer_tbb *t, int passes) {
  t->arena.execute([&] {
    for (int p = 0; p < passes; p++) {
      t->start->try_put(flow::continue_msg());
      t->g->wait_for_all();
    }
  });
}

extern "C" void peer_tbb_destroy(peer_tbb *t) {
  if (!t)
    return;
  t->arena.execute([&] {
    t->node.clear();
    t->start.reset();
    t->g.reset();
  });
  delete t;
}
