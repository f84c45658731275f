/* reprise for C++: a header-only layer over the C API (reprise.h).
 *
 *   reprise::graph g;                          // owns the rp_graph
 *   std::vector<double> x(n), y(n);
 *   auto X = g.buffer("x", x), Y = g.buffer("y", y);
 *   g.kernel("axpy", {n}, {reprise::in(X), reprise::inout(Y)},
 *            [a](const reprise::launch &l) {   // a CPU body: any lambda
 *              const double *xs = l.ptr<const double>(0);
 *              double *ys = l.ptr<double>(1);
 *              l.for_each([&](uint64_t i) { ys[i] += a * xs[i]; });
 *            });
 *   g.host("print", {reprise::in(Y)}, [&] { std::printf("%g\n", y[0]); });
 *   g.end();
 *   reprise::exec e(g);                        // owns the rp_exec
 *   e.run(100);
 *
 * Needs C++17; buffers from std::span too under C++20 (__cpp_lib_span).
 * Every failing call throws reprise::error, which carries the status and
 * the library's message (rp_graph_error, rp_exec_error or rp_last_error).
 *
 * Lambda kernels have a CPU body only (the openmp, reference and starpu
 * backends run them; an exec of a graph that has them takes the openmp
 * backend when none is named). The closure travels to the body as a hidden
 * first scalar parameter "fn": launch::ptr(i) and launch::value(i) count
 * the parameters given, from 0; the C API's rp_exec_set_scalar() counts it
 * (parameter i is i + 1 there). The openmp backend calls a body from
 * several threads at once on disjoint parts of the index space: the call
 * must be const (a lambda without `mutable`). A graph with lambda kernels
 * saved to a file replays only with a kernel library, as any other.
 *
 * The graph must outlive its execs; it owns the closures, descriptors
 * and names its kernels and host tasks use. docs/cpp.md has the guide.
 *
 * Thread safety: as the C objects they own (reprise/record.h,
 * reprise/replay.h): a reprise::graph is recorded from one thread at a
 * time and read by any number once ended; a reprise::exec is driven from
 * one thread at a time; distinct objects are independent. */
#ifndef REPRISE_HPP
#define REPRISE_HPP

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#if __has_include(<version>)
#include <version>
#endif
#if defined(__cpp_lib_span)
#include <span>
#endif

#include "reprise.h"

#if __cplusplus < 201703L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201703L)
#error "reprise.hpp needs C++17 or later"
#endif

namespace reprise {

/** A failed call: the status and the library's message. */
class error : public std::runtime_error {
public:
  error(rp_status s, const std::string &what)
      : std::runtime_error(what), status_(s) {}
  /** The C API's status (RP_EINVAL, ...). */
  rp_status status() const noexcept { return status_; }

private:
  rp_status status_;
};

namespace detail {
/* "CALL: STATUS_NAME (message): DETAIL" */
inline void check(rp_status s, const char *call, const char *detail) {
  if (s == RP_OK)
    return;
  std::string m = std::string(call) + ": " + rp_status_name(s) + " (" +
                  rp_strerror(s) + ")";
  if (detail && *detail)
    m += std::string(": ") + detail;
  throw error(s, m);
}
} // namespace detail

/** An index space (x fastest); 0 counts as 1: {n}, {nx, ny}, ... */
struct dims {
  uint64_t x = 1, y = 1, z = 1;
  dims(uint64_t x_ = 1, uint64_t y_ = 1, uint64_t z_ = 1)
      : x(x_), y(y_), z(z_) {}
  operator rp_dims() const { return rp_dims3(x, y, z); }
};

/** A registered buffer of elements T: names its regions in elements. */
template <class T>
struct buffer {
  rp_buf id = RP_NONE;
  uint64_t rows = 0, cols = 0; /**< 2-d: rows x cols; 1-d: rows = 0 */
  uint64_t size = 0;           /**< elements */
  /** The whole buffer. */
  rp_region all() const { return rp_whole(id); }
  /** Elements [first, first + count) (row-major for a 2-d buffer). */
  rp_region range(uint64_t first, uint64_t count) const {
    return rp_range_elems(id, first, count);
  }
  /** Rows [r0, r1), columns [c0, c1) of a 2-d buffer. */
  rp_region box(uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1) const {
    return rp_box2_elems(id, r0, r1, c0, c1);
  }
  /** Rows [r0, r1), every column, of a 2-d buffer. */
  rp_region row_range(uint64_t r0, uint64_t r1) const {
    return rp_box2_elems(id, r0, r1, 0, cols);
  }
  operator rp_buf() const { return id; }
};

/** One argument of a kernel or access of a host task: a region and its
 * mode, or a scalar value (kernels only). Made by in(), out(), inout(),
 * scalar(). */
struct arg {
  rp_mode mode;
  rp_arg a;
};
inline arg in(rp_region r) { return {RP_IN, rp_arg_buf(r)}; }
inline arg out(rp_region r) { return {RP_OUT, rp_arg_buf(r)}; }
inline arg inout(rp_region r) { return {RP_INOUT, rp_arg_buf(r)}; }
template <class T>
arg in(const buffer<T> &b) {
  return in(b.all());
}
template <class T>
arg out(const buffer<T> &b) {
  return out(b.all());
}
template <class T>
arg inout(const buffer<T> &b) {
  return inout(b.all());
}
/** A scalar of at most 8 bytes (a double, an int64_t, a float ...). */
template <class T>
arg scalar(T v) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8,
                "a scalar is a trivially copyable value of 8 bytes or less");
  arg x{RP_SCALAR, rp_arg_i64(0)};
  std::memcpy(&x.a.value, &v, sizeof v);
  return x;
}

/** What a lambda kernel's body receives: the part of the index space it
 * runs ([lo, hi) per axis, in the whole space) and its arguments, counted
 * as given to graph::kernel() from 0. */
class launch {
public:
  launch(const rp_kargs *a, const uint64_t *lo, const uint64_t *hi)
      : a_(a), lo_(lo), hi_(hi) {}
  /** Base of buffer argument i's image, as T* (index it with the
   * buffer's element numbers). */
  template <class T>
  T *ptr(unsigned i) const {
    return static_cast<T *>(a_->a[i + 1].p);
  }
  /** First element of buffer argument i's region, as T*. */
  template <class T>
  T *region_ptr(unsigned i) const {
    return reinterpret_cast<T *>(static_cast<char *>(a_->a[i + 1].p) +
                                 a_->r[i + 1].offset);
  }
  /** Scalar argument i. */
  template <class T>
  T value(unsigned i) const {
    T v;
    std::memcpy(&v, &a_->a[i + 1], sizeof v);
    return v;
  }
  uint64_t lo(unsigned d) const { return a_->origin[d] + lo_[d]; }
  uint64_t hi(unsigned d) const { return a_->origin[d] + hi_[d]; }
  /** Extent of the whole index space along axis d. */
  uint64_t extent(unsigned d) const {
    return a_->whole[d] ? a_->whole[d] : a_->n[d];
  }
  /** Calls f(x), f(x, y) or f(x, y, z) for every point of this part. */
  template <class F>
  void for_each(F &&f) const {
    for (uint64_t z = lo(2); z < hi(2); z++)
      for (uint64_t y = lo(1); y < hi(1); y++)
        for (uint64_t x = lo(0); x < hi(0); x++) {
          if constexpr (std::is_invocable<F &, uint64_t, uint64_t,
                                          uint64_t>::value)
            f(x, y, z);
          else if constexpr (std::is_invocable<F &, uint64_t, uint64_t>::value)
            f(x, y);
          else
            f(x);
        }
  }
  const rp_kargs &kargs() const { return *a_; }

private:
  const rp_kargs *a_;
  const uint64_t *lo_, *hi_;
};

namespace detail {
struct closure {
  virtual ~closure() = default;
};
template <class F>
struct held final : closure {
  explicit held(F f_) : f(std::move(f_)) {}
  F f;
};
template <class F>
void cpu_trampoline(const rp_kargs *a, const uint64_t lo[3],
                    const uint64_t hi[3]) {
  const held<F> *h = static_cast<const held<F> *>(a->a[0].p);
  h->f(launch(a, lo, hi));
}
template <class F>
void host_trampoline(void *user, void *const *ptrs) {
  const held<F> *h = static_cast<const held<F> *>(user);
  if constexpr (std::is_invocable<const F &, void *const *>::value)
    h->f(ptrs);
  else
    h->f();
}
/* A kernel's descriptor, parameter table and name, owned by its graph. */
struct kernel_rec {
  std::string name;
  rp_param params[RP_MAX_PARAMS];
  rp_kernel k;
  std::unique_ptr<closure> fn;
};
inline const char *param_name(unsigned i) {
  static const char *const names[RP_MAX_PARAMS] = {
      "fn", "a0", "a1", "a2", "a3",  "a4",  "a5",
      "a6", "a7", "a8", "a9", "a10", "a11", "a12"};
  return names[i];
}
} // namespace detail

/** Owns an rp_graph: recording, then (after end()) what execs replay. */
class graph {
public:
  /** An empty graph (flags: RP_GRAPH_NO_COHERENCE, RP_GRAPH_STRICT). */
  explicit graph(unsigned flags = 0) {
    detail::check(rp_graph_create(&g_, flags), "rp_graph_create",
                  rp_last_error());
  }
  ~graph() { rp_graph_destroy(g_); }
  graph(graph &&o) noexcept
      : g_(std::exchange(o.g_, nullptr)), kernels_(std::move(o.kernels_)),
        hosts_(std::move(o.hosts_)), lambda_kernels_(o.lambda_kernels_) {}
  graph &operator=(graph &&o) noexcept {
    if (this != &o) {
      rp_graph_destroy(g_);
      g_ = std::exchange(o.g_, nullptr);
      kernels_ = std::move(o.kernels_);
      hosts_ = std::move(o.hosts_);
      lambda_kernels_ = o.lambda_kernels_;
    }
    return *this;
  }
  graph(const graph &) = delete;
  graph &operator=(const graph &) = delete;

  rp_graph *get() const noexcept { return g_; }

  /** Registers n elements at p (the graph never owns them). */
  template <class T>
  reprise::buffer<T> buffer_of(const char *name, T *p, uint64_t n) {
    reprise::buffer<T> b;
    rp_buffer_desc d{};
    d.name = name;
    d.host = static_cast<void *>(const_cast<std::remove_const_t<T> *>(p));
    d.bytes = n * sizeof(T);
    d.elem = sizeof(T); // regions count elements of T
    check(rp_buffer_add(g_, &d, &b.id), "rp_buffer_add");
    b.size = n;
    return b;
  }
  /** Registers a vector's elements (it must not reallocate while the
   * graph or an exec uses them: rebind an exec to new memory). */
  template <class T>
  reprise::buffer<T> buffer(const char *name, std::vector<T> &v) {
    return buffer_of(name, v.data(), v.size());
  }
#if defined(__cpp_lib_span)
  template <class T, std::size_t E>
  reprise::buffer<T> buffer(const char *name, std::span<T, E> s) {
    return buffer_of(name, s.data(), s.size());
  }
#endif
  /** Registers a vector as a rows x cols row-major 2-d buffer. */
  template <class T>
  reprise::buffer<T> buffer_2d(const char *name, std::vector<T> &v,
                               uint64_t rows, uint64_t cols) {
    if (v.size() != rows * cols)
      throw error(RP_EINVAL, std::string("buffer_2d ") + name + ": " +
                                 std::to_string(v.size()) + " elements, not " +
                                 std::to_string(rows) + " x " +
                                 std::to_string(cols));
    reprise::buffer<T> b;
    check(
        rp_buffer_register_2d(g_, name, v.data(), rows, cols, sizeof(T), &b.id),
        "rp_buffer_register_2d");
    b.rows = rows;
    b.cols = cols;
    b.size = rows * cols;
    return b;
  }

  /** Records a kernel whose CPU body is @p body, a callable taking a
   * const launch & (see launch). @return its node. */
  template <class F>
  rp_node kernel(const std::string &name, dims space,
                 std::initializer_list<arg> args, F &&body, int device = 0,
                 const rp_op_opts *o = nullptr) {
    using Fn = std::decay_t<F>;
    static_assert(std::is_invocable<const Fn &, const launch &>::value,
                  "a kernel body is callable as body(const reprise::launch "
                  "&) const");
    if (args.size() + 1 > RP_MAX_PARAMS)
      throw error(RP_EINVAL, "kernel " + name + ": more than " +
                                 std::to_string(RP_MAX_PARAMS - 1) +
                                 " arguments");
    auto rec = std::make_unique<detail::kernel_rec>();
    rec->name = name;
    rec->fn = std::make_unique<detail::held<Fn>>(std::forward<F>(body));
    rp_arg a[RP_MAX_PARAMS];
    rec->params[0] = {detail::param_name(0), RP_SCALAR};
    a[0] = rp_arg_i64(0);
    a[0].value.p = rec->fn.get();
    unsigned i = 1;
    for (const arg &x : args) {
      rec->params[i] = {detail::param_name(i), x.mode};
      a[i++] = x.a;
    }
    rp_kernel_init(&rec->k);
    rec->k.name = rec->name.c_str();
    rec->k.nparams = i;
    rec->k.params = rec->params;
    rec->k.cpu = &detail::cpu_trampoline<Fn>;
    rp_node n = RP_NONE;
    check(rp_record_kernel(g_, &rec->k, device, space, a, o, &n),
          ("rp_record_kernel " + name).c_str());
    kernels_.push_back(std::move(rec));
    lambda_kernels_ = true;
    return n;
  }
  /** Records a kernel of the C API (RP_KERNEL_DESC ...; it must outlive
   * the graph); args as the descriptor's parameters. @return its node. */
  rp_node kernel(const rp_kernel &k, dims space,
                 std::initializer_list<arg> args, int device = 0,
                 const rp_op_opts *o = nullptr) {
    std::vector<rp_arg> a;
    for (const arg &x : args)
      a.push_back(x.a);
    rp_node n = RP_NONE;
    check(rp_record_kernel(g_, &k, device, space, a.data(), o, &n),
          (std::string("rp_record_kernel ") + k.name).c_str());
    return n;
  }
  /** Records a host task over the host images of @p acc: fn() or
   * fn(void *const *ptrs) (ptrs[i]: the host image of access i, which
   * rebinding changes). @return its node. */
  template <class F>
  rp_node host(const std::string &name, std::initializer_list<arg> acc,
               F &&fn) {
    using Fn = std::decay_t<F>;
    std::vector<rp_access> ac;
    for (const arg &x : acc) {
      if (x.mode == RP_SCALAR)
        throw error(RP_EINVAL, "host task " + name +
                                   ": an access is a region, not a scalar");
      ac.push_back({x.a.region, x.mode});
    }
    auto h = std::make_unique<detail::held<Fn>>(std::forward<F>(fn));
    auto nm = std::make_unique<std::string>(name);
    rp_op_opts o;
    rp_op_opts_init(&o);
    o.name = nm->c_str();
    rp_node n = RP_NONE;
    check(rp_record_host(g_, &detail::host_trampoline<Fn>, h.get(), ac.data(),
                         static_cast<unsigned>(ac.size()), &o, &n),
          ("rp_record_host " + name).c_str());
    hosts_.push_back(std::move(h));
    return n;
  }
  /** Brings region @p r home where it is stale. @return copies recorded. */
  unsigned sync_host(rp_region r) {
    unsigned c = 0;
    check(rp_record_sync_host(g_, r, &c), "rp_record_sync_host");
    return c;
  }
  template <class T>
  unsigned sync_host(const reprise::buffer<T> &b) {
    return sync_host(b.all());
  }
  /** Ends the recording (hazard edges, coherence checks). */
  void end() { check(rp_graph_end(g_), "rp_graph_end"); }
  /** The warnings rp_graph_end() left (coherence, ...). */
  std::vector<std::string> warnings() const {
    std::vector<std::string> w;
    for (unsigned i = 0; i < rp_graph_num_warnings(g_); i++)
      w.emplace_back(rp_graph_warning(g_, i));
    return w;
  }
  uint32_t num_nodes() const { return rp_graph_num_nodes(g_); }
  uint32_t num_edges() const { return rp_graph_num_edges(g_); }
  /** Writes the graph file (docs/format.md) to @p path. */
  void save(const std::string &path) const {
    std::FILE *fp = std::fopen(path.c_str(), "w");
    if (!fp)
      throw error(RP_EIO, "cannot write " + path);
    rp_status s = rp_graph_write_json(g_, fp);
    if (std::fclose(fp) != 0 && s == RP_OK)
      s = RP_EIO;
    check(s, ("rp_graph_write_json " + path).c_str());
  }
  /** Some kernel has a lambda body (a CPU body only). */
  bool has_lambda_kernels() const noexcept { return lambda_kernels_; }

private:
  void check(rp_status s, const char *call) const {
    detail::check(s, call, g_ ? rp_graph_error(g_) : rp_last_error());
  }
  rp_graph *g_ = nullptr;
  std::deque<std::unique_ptr<detail::kernel_rec>> kernels_;
  std::deque<std::unique_ptr<detail::closure>> hosts_;
  bool lambda_kernels_ = false;
};

/** Owns an rp_exec: an ended graph instantiated on a backend. */
class exec {
public:
  /** @param backend a name ("openmp", "cuda", "reference", ...) or
   *   nullptr: the automatic choice (RP_BACKEND, else cuda, else openmp),
   *   except that a graph with lambda kernels takes openmp.
   * @param o options (rp_exec_opts_init) or nullptr. */
  explicit exec(const graph &g, const char *backend = nullptr,
                const rp_exec_opts *o = nullptr) {
    const rp_backend *be = nullptr;
    if (!backend && g.has_lambda_kernels())
      backend = "openmp";
    if (backend)
      detail::check(rp_backend_find(backend, &be), "rp_backend_find",
                    rp_last_error());
    detail::check(rp_exec_create(&x_, g.get(), be, o), "rp_exec_create",
                  rp_last_error());
  }
  ~exec() { rp_exec_destroy(x_); }
  exec(exec &&o) noexcept : x_(std::exchange(o.x_, nullptr)) {}
  exec &operator=(exec &&o) noexcept {
    if (this != &o) {
      rp_exec_destroy(x_);
      x_ = std::exchange(o.x_, nullptr);
    }
    return *this;
  }
  exec(const exec &) = delete;
  exec &operator=(const exec &) = delete;

  rp_exec *get() const noexcept { return x_; }
  /** Replays @p iterations times and waits. */
  void run(unsigned iterations = 1) {
    check(rp_exec_run(x_, iterations), "rp_exec_run");
  }
  /** Starts @p iterations replays and returns at once (then wait()). */
  void launch(unsigned iterations = 1) {
    check(rp_exec_launch(x_, iterations), "rp_exec_launch");
  }
  void wait() { check(rp_exec_wait(x_), "rp_exec_wait"); }
  /** Returns once buffer @p b's final value is home. */
  void wait_buffer(rp_buf b) {
    check(rp_exec_wait_buffer(x_, b), "rp_exec_wait_buffer");
  }
  /** Points buffer @p b at new memory of the same size. */
  template <class T>
  void rebind(const buffer<T> &b, std::vector<T> &v) {
    check(rp_exec_rebind(x_, b.id, v.data(), v.size() * sizeof(T)),
          "rp_exec_rebind");
  }
  /** Changes scalar argument @p i (counted as given to graph::kernel) of
   * the lambda kernel @p n for the next replays. */
  template <class T>
  void set_scalar(rp_node n, unsigned i, T v) {
    rp_slot s;
    s.u64 = 0;
    std::memcpy(&s, &v, sizeof v);
    check(rp_exec_set_scalar(x_, n, i + 1, s), "rp_exec_set_scalar");
  }
  /** Microseconds the last run/wait took. */
  double last_us() const { return rp_exec_last_us(x_); }
  const char *backend() const { return rp_backend_name(rp_exec_backend(x_)); }

private:
  void check(rp_status s, const char *call) const {
    detail::check(s, call, rp_exec_error(x_));
  }
  rp_exec *x_ = nullptr;
};

/** Replays the graph @p iterations times on the sequential reference. */
inline void replay_reference(const graph &g, unsigned iterations = 1) {
  detail::check(rp_replay_reference(g.get(), iterations), "rp_replay_reference",
                rp_graph_error(g.get()));
}

/** Owns an rp_analysis of an ended graph (which must outlive it). */
class analysis {
public:
  /** @param o options (rp_analysis_opts_init ...) or nullptr: defaults,
   *   no machine model (a bound only). */
  explicit analysis(const graph &g, const rp_analysis_opts *o = nullptr) {
    detail::check(rp_analyze(g.get(), o, &a_), "rp_analyze", rp_last_error());
  }
  ~analysis() { rp_analysis_destroy(a_); }
  analysis(const analysis &) = delete;
  analysis &operator=(const analysis &) = delete;
  rp_analysis *get() const noexcept { return a_; }
  rp_summary summary() const {
    rp_summary s;
    rp_analysis_summary(a_, &s);
    return s;
  }
  /** The text report (rp_analysis_write_text). */
  std::string text() const {
    std::FILE *fp = std::tmpfile();
    if (!fp)
      throw error(RP_EIO, "rp_analysis_write_text: no temporary file");
    rp_status s = rp_analysis_write_text(a_, fp);
    std::string t;
    if (s == RP_OK) {
      std::rewind(fp);
      char buf[4096];
      size_t k;
      while ((k = std::fread(buf, 1, sizeof buf, fp)) > 0)
        t.append(buf, k);
    }
    std::fclose(fp);
    detail::check(s, "rp_analysis_write_text", rp_last_error());
    return t;
  }

private:
  rp_analysis *a_ = nullptr;
};

} // namespace reprise

#endif
