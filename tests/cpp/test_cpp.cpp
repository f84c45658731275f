// The C++ face (include/reprise.hpp): lambda kernels and host tasks give
// the results of the same loops run by hand on every CPU backend, the
// closures travel with their captures, errors throw reprise::error with
// the library's message, and the owners release what they own.
#include <criterion/criterion.h>

#include <cstring>
#include <string>
#include <vector>

#include <reprise.hpp>

namespace {

const char *const cpu_backends[] = {"reference", "openmp"};

// y = a * x + y over `blocks` blocks, then a host task sums y into s.
void record_axpy(reprise::graph &g, std::vector<double> &x,
                 std::vector<double> &y, std::vector<double> &s, double a,
                 unsigned blocks, rp_node *first) {
  auto X = g.buffer("x", x), Y = g.buffer("y", y), S = g.buffer("s", s);
  uint64_t n = x.size(), per = n / blocks;
  for (unsigned b = 0; b < blocks; b++) {
    uint64_t lo = b * per;
    rp_node k = g.kernel(
        "axpy", {per},
        {reprise::in(X.range(lo, per)), reprise::inout(Y.range(lo, per)),
         reprise::scalar(a)},
        [lo](const reprise::launch &l) {
          const double *xs = l.ptr<const double>(0);
          double *ys = l.ptr<double>(1);
          double av = l.value<double>(2);
          l.for_each([&](uint64_t i) { ys[lo + i] += av * xs[lo + i]; });
        });
    if (b == 0 && first)
      *first = k;
  }
  g.host("sum", {reprise::in(Y), reprise::out(S)}, [n](void *const *p) {
    double t = 0;
    for (uint64_t i = 0; i < n; i++)
      t += static_cast<const double *>(p[0])[i];
    *static_cast<double *>(p[1]) = t;
  });
  g.sync_host(Y);
  g.end();
}

} // namespace

Test(cpp, lambda_kernels_match_the_loop_on_every_cpu_backend) {
  for (const char *be : cpu_backends) {
    const uint64_t n = 1024;
    std::vector<double> x(n), y(n), s(1), ry(n);
    for (uint64_t i = 0; i < n; i++) {
      x[i] = 0.5 * (double)i;
      y[i] = ry[i] = 1.0 / (double)(i + 1);
    }
    reprise::graph g;
    record_axpy(g, x, y, s, 3.0, 4, nullptr);
    reprise::exec e(g, be);
    cr_assert_str_eq(e.backend(), be);
    e.run(3);
    double t = 0;
    for (unsigned r = 0; r < 3; r++)
      for (uint64_t i = 0; i < n; i++)
        ry[i] += 3.0 * x[i];
    for (uint64_t i = 0; i < n; i++)
      t += ry[i];
    cr_assert(std::memcmp(y.data(), ry.data(), n * sizeof(double)) == 0,
              "%s: y differs from the loop", be);
    cr_assert_eq(s[0], t, "%s: the host task summed %g, not %g", be, s[0], t);
  }
}

Test(cpp, set_scalar_counts_the_lambda_arguments) {
  const uint64_t n = 64;
  std::vector<double> x(n, 1.0), y(n, 0.0), s(1);
  reprise::graph g;
  rp_node k0 = RP_NONE;
  record_axpy(g, x, y, s, 2.0, 1, &k0);
  reprise::exec e(g, "openmp");
  e.run(1);
  cr_assert_eq(y[5], 2.0);
  e.set_scalar(k0, 2, 10.0); // argument 2: the scalar a
  e.run(1);
  cr_assert_eq(y[5], 12.0);
  cr_assert_eq(s[0], 12.0 * n);
}

Test(cpp, exec_without_a_backend_takes_openmp_for_lambda_kernels) {
  std::vector<double> x(16, 1.0), y(16, 0.0), s(1);
  reprise::graph g;
  record_axpy(g, x, y, s, 1.0, 2, nullptr);
  cr_assert(g.has_lambda_kernels());
  reprise::exec e(g);
  cr_assert_str_eq(e.backend(), "openmp");
  e.run(2);
  cr_assert_eq(y[15], 2.0);
}

Test(cpp, host_task_without_arguments_sees_the_captured_vectors) {
  std::vector<int> v(8, 0);
  std::vector<int> seen;
  reprise::graph g;
  auto V = g.buffer("v", v);
  g.kernel("fill", {8}, {reprise::out(V)}, [](const reprise::launch &l) {
    l.for_each([&](uint64_t i) { l.ptr<int>(0)[i] = (int)i * 2; });
  });
  g.host("look", {reprise::in(V)}, [&] { seen = v; });
  g.end();
  reprise::exec e(g, "reference");
  e.run(1);
  cr_assert_eq(seen.size(), 8u);
  cr_assert_eq(seen[7], 14, "the host task ran before the kernel it reads");
}

Test(cpp, two_d_index_space_and_boxes) {
  const uint64_t r = 6, c = 5;
  std::vector<float> m(r * c, 0.0f);
  reprise::graph g;
  auto M = g.buffer_2d("m", m, r, c);
  // rows 2..4, columns 1..3: m[y][x] = 10 y + x
  g.kernel("box", {3, 3}, {reprise::out(M.box(2, 5, 1, 4))},
           [c](const reprise::launch &l) {
             float *p = l.ptr<float>(0);
             l.for_each([&](uint64_t x, uint64_t y) {
               p[(2 + y) * c + 1 + x] = (float)(10 * (2 + y) + 1 + x);
             });
           });
  g.sync_host(M);
  g.end();
  reprise::exec e(g, "openmp");
  e.run(1);
  for (uint64_t y = 0; y < r; y++)
    for (uint64_t x = 0; x < c; x++) {
      bool in = y >= 2 && y < 5 && x >= 1 && x < 4;
      cr_assert_eq(m[y * c + x], in ? (float)(10 * y + x) : 0.0f,
                   "m[%lu][%lu] = %g", (unsigned long)y, (unsigned long)x,
                   (double)m[y * c + x]);
    }
}

#if defined(__cpp_lib_span)
Test(cpp, buffers_from_spans) {
  double raw[10] = {0};
  reprise::graph g;
  auto B = g.buffer("raw", std::span<double>(raw));
  cr_assert_eq(B.size, 10u);
  g.kernel("iota", {10}, {reprise::out(B)}, [](const reprise::launch &l) {
    l.for_each([&](uint64_t i) { l.ptr<double>(0)[i] = (double)i; });
  });
  g.sync_host(B);
  g.end();
  reprise::exec(g, "reference").run(1);
  cr_assert_eq(raw[9], 9.0);
}
#endif

Test(cpp, errors_carry_the_status_and_the_library_message) {
  std::vector<double> v(4);
  reprise::graph g;
  g.buffer("v", v);
  try {
    g.buffer("v", v);
    cr_assert_fail("a second buffer named v was accepted");
  } catch (const reprise::error &e) {
    cr_assert_eq(e.status(), RP_EINVAL);
    std::string w = e.what();
    cr_assert(w.find("rp_buffer_add: RP_EINVAL") == 0, "%s", w.c_str());
    cr_assert(w.find(rp_graph_error(g.get())) != std::string::npos &&
                  std::strlen(rp_graph_error(g.get())) > 0,
              "the message lacks the graph's error: %s", w.c_str());
  }
  try {
    reprise::exec e(g, "openmp"); // not ended
    cr_assert_fail("an exec of a graph still recording");
  } catch (const reprise::error &e) {
    cr_assert_eq(e.status(), RP_ESTATE, "%s", e.what());
  }
  g.end();
  try {
    reprise::exec e(g, "no-such-backend");
    cr_assert_fail("an unknown backend was found");
  } catch (const reprise::error &e) {
    cr_assert(std::string(e.what()).find("rp_backend_find") == 0, "%s",
              e.what());
  }
  std::vector<double> w(5);
  reprise::graph h;
  cr_assert_throw(h.buffer_2d("w", w, 2, 2), reprise::error);
}

Test(cpp, a_failing_body_throws_from_run_with_its_message) {
  std::vector<double> v(4);
  reprise::graph g;
  auto V = g.buffer("v", v);
  g.kernel("pivot", {1}, {reprise::inout(V)}, [](const reprise::launch &) {
    rp_task_fail(7, "pivot %d is zero", 3);
  });
  g.end();
  reprise::exec e(g, "openmp");
  try {
    e.run(1);
    cr_assert_fail("run succeeded");
  } catch (const reprise::error &x) {
    cr_assert_eq(x.status(), RP_ETASK);
    cr_assert(std::string(x.what()).find("pivot 3 is zero") !=
                  std::string::npos,
              "%s", x.what());
  }
}

Test(cpp, owners_move_and_the_analysis_reports) {
  std::vector<double> x(32, 1.0), y(32, 0.0), s(1);
  reprise::graph g0;
  record_axpy(g0, x, y, s, 1.0, 2, nullptr);
  reprise::graph g = std::move(g0);
  cr_assert_null(g0.get());
  reprise::exec e0(g, "openmp");
  reprise::exec e = std::move(e0);
  cr_assert_null(e0.get());
  e.run(1);
  cr_assert_eq(y[0], 1.0);
  reprise::analysis an(g);
  cr_assert_gt(an.summary().serial_us, 0.0);
  cr_assert(an.text().find("critical path") != std::string::npos);
}
