// A C++ program outside the project: built against an installed reprise
// with find_package or pkg-config, through the header-only reprise.hpp.
// y += 2 x twice per replay, 3 replays; exits 0 when every element is right.
#include <cstdio>
#include <vector>

#include <reprise.hpp>

int main() {
  const uint64_t n = 1000;
  std::vector<double> x(n), y(n, 1.0);
  for (uint64_t i = 0; i < n; i++)
    x[i] = (double)i;
  try {
    reprise::graph g;
    auto X = g.buffer("x", x), Y = g.buffer("y", y);
    for (int k = 0; k < 2; k++)
      g.kernel("axpy", {n}, {reprise::in(X), reprise::inout(Y)},
               [](const reprise::launch &l) {
                 const double *xs = l.ptr<const double>(0);
                 double *ys = l.ptr<double>(1);
                 l.for_each([&](uint64_t i) { ys[i] += 2.0 * xs[i]; });
               });
    g.sync_host(Y);
    g.end();
    reprise::exec(g).run(3);
  } catch (const reprise::error &e) {
    std::fprintf(stderr, "consumer_cxx: %s\n", e.what());
    return 1;
  }
  for (uint64_t i = 0; i < n; i++)
    if (y[i] != 1.0 + 12.0 * (double)i) {
      std::fprintf(stderr, "consumer_cxx: y[%lu] = %g\n", (unsigned long)i,
                   y[i]);
      return 1;
    }
  std::printf("consumer_cxx: ok\n");
  return 0;
}
