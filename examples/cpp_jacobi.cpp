// Jacobi 2D through the C++ face (include/reprise.hpp): buffers from
// std::vector, kernels and a host task from lambdas, RAII owners, errors
// as exceptions. Records `steps` Jacobi steps over row blocks, replays them
// `iters` times on the openmp backend (or --backend NAME) and compares the
// grid with the same computation done sequentially in plain C++.
//   cpp_jacobi [--n N] [--steps S] [--blocks B] [--iters I] [--backend NAME]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <reprise.hpp>

namespace {

struct options {
  uint64_t n = 256;
  unsigned steps = 8, blocks = 4, iters = 10;
  const char *backend = nullptr;
};

void usage() {
  std::printf(
      "usage: cpp_jacobi [--n N] [--steps S] [--blocks B] [--iters I]"
      " [--backend NAME]\n"
      "  Jacobi 2D on an N x N grid through reprise.hpp: S steps of B row"
      " blocks\n  per replay, I replays on NAME (openmp, reference, starpu;"
      " default openmp),\n  checked against a sequential loop.\n");
}

// One Jacobi step, sequentially: the reference the replay must match.
void step_seq(std::vector<double> &a, std::vector<double> &b, uint64_t n) {
  b = a;
  for (uint64_t i = 1; i + 1 < n; i++)
    for (uint64_t j = 1; j + 1 < n; j++)
      a[i * n + j] = 0.25 * (b[(i - 1) * n + j] + b[(i + 1) * n + j] +
                             b[i * n + j - 1] + b[i * n + j + 1]);
}

} // namespace

int main(int argc, char **argv) {
  options o;
  for (int i = 1; i < argc; i++) {
    std::string s = argv[i];
    auto next = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "cpp_jacobi: %s needs a value\n", s.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (s == "--n")
      o.n = std::strtoull(next(), nullptr, 10);
    else if (s == "--steps")
      o.steps = (unsigned)std::strtoul(next(), nullptr, 10);
    else if (s == "--blocks")
      o.blocks = (unsigned)std::strtoul(next(), nullptr, 10);
    else if (s == "--iters")
      o.iters = (unsigned)std::strtoul(next(), nullptr, 10);
    else if (s == "--backend")
      o.backend = next();
    else if (s == "--help" || s == "-h") {
      usage();
      return 0;
    } else {
      std::fprintf(stderr, "cpp_jacobi: unknown option '%s' (--help)\n",
                   s.c_str());
      return 2;
    }
  }
  if (o.n < 3 || o.blocks == 0 || o.blocks > o.n - 2) {
    std::fprintf(stderr, "cpp_jacobi: needs --n >= 3, 1 <= --blocks <= n-2\n");
    return 2;
  }
  const uint64_t n = o.n;
  std::vector<double> a(n * n), b(n * n), sums(1);
  for (uint64_t i = 0; i < n * n; i++)
    a[i] = (i % n == 0 || i / n == 0) ? 1.0 : 0.0; // hot top and left
  std::vector<double> ref = a, ref_b = b;

  try {
    reprise::graph g;
    auto A = g.buffer_2d("A", a, n, n);
    auto B = g.buffer_2d("B", b, n, n);
    auto S = g.buffer("sums", sums);
    const uint64_t rows = (n - 2 + o.blocks - 1) / o.blocks;
    for (unsigned s = 0; s < o.steps; s++) {
      g.kernel("copy", {n, n}, {reprise::in(A), reprise::out(B)},
               [](const reprise::launch &l) {
                 const double *src = l.ptr<const double>(0);
                 double *dst = l.ptr<double>(1);
                 uint64_t nx = l.extent(0);
                 l.for_each([&](uint64_t x, uint64_t y) {
                   dst[y * nx + x] = src[y * nx + x];
                 });
               });
      for (uint64_t r0 = 1; r0 < n - 1; r0 += rows) {
        uint64_t r1 = r0 + rows < n - 1 ? r0 + rows : n - 1;
        g.kernel("stencil", {n - 2, r1 - r0},
                 {reprise::in(B.row_range(r0 - 1, r1 + 1)),
                  reprise::out(A.box(r0, r1, 1, n - 1))},
                 [n, r0](const reprise::launch &l) { // captures: n, r0
                   const double *src = l.ptr<const double>(0);
                   double *dst = l.ptr<double>(1);
                   l.for_each([&](uint64_t x, uint64_t y) {
                     uint64_t i = (r0 + y) * n + 1 + x;
                     dst[i] = 0.25 * (src[i - n] + src[i + n] + src[i - 1] +
                                      src[i + 1]);
                   });
                 });
      }
    }
    // A host task: a lambda over the host images (coherence brings A home).
    g.host("sum", {reprise::in(A), reprise::inout(S)}, [n](void *const *p) {
      const double *x = static_cast<const double *>(p[0]);
      double t = 0;
      for (uint64_t i = 0; i < n * n; i++)
        t += x[i];
      *static_cast<double *>(p[1]) = t;
    });
    g.sync_host(A);
    g.sync_host(B);
    g.end();
    for (const std::string &w : g.warnings())
      std::printf("warning: %s\n", w.c_str());

    reprise::analysis an(g);
    rp_summary sum = an.summary();
    std::printf("cpp_jacobi: %u operations, %u edges; upper bound %.2fx\n",
                g.num_nodes(), g.num_edges(), sum.bound);

    reprise::exec x(g, o.backend);
    x.run(o.iters);
    std::printf("cpp_jacobi: %u replays on %s in %.3f ms\n", o.iters,
                x.backend(), x.last_us() / 1e3);
  } catch (const reprise::error &e) {
    std::fprintf(stderr, "cpp_jacobi: %s\n", e.what());
    return 1;
  }

  double t = 0;
  for (unsigned r = 0; r < o.iters; r++)
    for (unsigned s = 0; s < o.steps; s++)
      step_seq(ref, ref_b, n);
  for (double v : ref)
    t += v;
  bool same = std::memcmp(a.data(), ref.data(), n * n * sizeof(double)) == 0;
  std::printf("cpp_jacobi: grid %s the sequential loop's; sum %.6f (%s)\n",
              same ? "identical to" : "DIFFERS from", sums[0],
              sums[0] == t ? "identical" : "DIFFERS");
  return same && sums[0] == t ? 0 : 1;
}
