/* The checking mode of the CPU backends (rp_exec_opts.check, RP_CHECK=1):
 * a kernel that writes one element past its region, one that reads
 * before it, one that reads a gap of a box, one that writes its `in`
 * region, a host task writing outside its access: each fails with
 * RP_EACCESS naming the operation, the parameter and the byte; a correct
 * program (the Jacobi example) gives the same results as without. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"
#include "util.h"
#ifdef RP_HAVE_EXAMPLES
#include "examples.h"
#endif

TestSuite(checking, .timeout = 60);

enum { N = 64 };

/* dst[i] = src[i] + 1 for i < NX: the index space decides how far. */
static void copy1_cpu(const rp_kargs *a, const uint64_t lo[3],
                      const uint64_t hi[3]) {
  const double *s = a->a[0].p;
  double *d = a->a[1].p;
  for (uint64_t i = lo[0]; i < hi[0]; i++)
    d[i] = s[i] + 1;
}
/* dst[i] = src[i - 1] for i in [1, NX]: reads one element before. */
static void shift_cpu(const rp_kargs *a, const uint64_t lo[3],
                      const uint64_t hi[3]) {
  const double *s = a->a[0].p;
  double *d = a->a[1].p;
  for (uint64_t i = lo[0] + 1; i <= hi[0]; i++)
    d[i] = s[i - 1];
}
/* A 2-d stencil over rows [1, N-1) and columns [1, N-1), reading the
 * left neighbour from row 2 on: column 0 of rows 2.. is read, though the
 * box declares columns [1, N-1); those bytes lie between declared ones,
 * on readable pages. */
static void left_cpu(const rp_kargs *a, const uint64_t lo[3],
                     const uint64_t hi[3]) {
  const double *s = a->a[0].p;
  double *d = a->a[1].p;
  for (uint64_t y = lo[1]; y < hi[1]; y++)
    for (uint64_t x = lo[0]; x < hi[0]; x++) {
      uint64_t i = (y + 1) * N + x + 1;
      d[i] = 2 * (y ? s[i - 1] : s[i]) + s[i];
    }
}
/* Writes its `in` parameter. */
static void scribble_cpu(const rp_kargs *a, const uint64_t lo[3],
                         const uint64_t hi[3]) {
  double *s = a->a[0].p;
  double *d = a->a[1].p;
  for (uint64_t i = lo[0]; i < hi[0]; i++)
    d[i] = s[i]++;
}

static const rp_param p_sd[] = {{"src", RP_IN}, {"dst", RP_OUT}};
static const rp_kernel k_copy1 =
    RP_KERNEL_WITH(.name = "copy1", .nparams = 2, .params = p_sd,
                   .cpu = copy1_cpu);
static const rp_kernel k_shift =
    RP_KERNEL_WITH(.name = "shift", .nparams = 2, .params = p_sd,
                   .cpu = shift_cpu);
static const rp_kernel k_left = RP_KERNEL_WITH(.name = "left", .nparams = 2,
                                               .params = p_sd, .cpu = left_cpu);
static const rp_kernel k_scrib =
    RP_KERNEL_WITH(.name = "scribble", .nparams = 2, .params = p_sd,
                   .cpu = scribble_cpu);

static double A[N * N], B[N * N];

static void fill(void) {
  for (int i = 0; i < N * N; i++) {
    A[i] = i * 0.5;
    B[i] = -1;
  }
}

/* One kernel over A (in) and B (out), regions and space given, replayed
 * on backend `be` in checking mode (by option, or by RP_CHECK=1 when
 * by_env); its status, and rp_exec_error() in msg. */
static rp_status one_kernel(const rp_kernel *k, rp_region ra, rp_region rb,
                            rp_dims sp, const char *be, int by_env, char *msg,
                            size_t n) {
  rp_graph *g;
  rp_buf a, b;
  fill();
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, rp_buffer_register_2d(g, "A", A, N, N, sizeof(double), &a));
  TU_OK(g, rp_buffer_register_2d(g, "B", B, N, N, sizeof(double), &b));
  ra.buf = a;
  rb.buf = b;
  rp_arg args[2] = {rp_arg_buf(ra), rp_arg_buf(rb)};
  TU_OK(g, rp_record_kernel(g, k, 0, sp, args, NULL, NULL));
  TU_OK(g, rp_record_sync_host(g, rp_whole(b), NULL));
  TU_OK(g, rp_graph_end(g));
  const rp_backend *bk;
  cr_assert_eq(rp_backend_find(be, &bk), RP_OK);
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  o.check = by_env ? 0 : 1;
  if (by_env)
    setenv("RP_CHECK", "1", 1);
  rp_exec *x;
  cr_assert_eq(rp_exec_create(&x, g, bk, &o), RP_OK, "%s", rp_last_error());
  unsetenv("RP_CHECK");
  cr_assert(strstr(rp_exec_error(x), "checking mode"), "%s", rp_exec_error(x));
  cr_assert_str_eq(rp_backend_name(rp_exec_backend(x)), be);
  rp_status s = rp_exec_run(x, 1);
  snprintf(msg, n, "%s", rp_exec_error(x));
  rp_exec_destroy(x);
  rp_graph_destroy(g);
  return s;
}

Test(checking, write_one_element_past_the_region) {
  char msg[512];
  /* Bytes [0, 512): 64 doubles, but 65 points. */
  rp_status s = one_kernel(&k_copy1, rp_bytes(0, 0, 512), rp_bytes(0, 0, 512),
                           rp_dims3(65, 1, 1), "openmp", 0, msg, sizeof msg);
  cr_assert_eq(s, RP_EACCESS, "%s", msg);
  /* The read of src[64] comes first and faults. */
  cr_assert(strstr(msg, "op 1 \"copy1\" (kernel copy1): parameter 0 'src' "
                        "reads byte 512 (element [1, 0]) of buffer \"A\""),
            "%s", msg);
  cr_assert(strstr(msg, "outside its region bytes [0, 512)"), "%s", msg);
  /* src declared over 65 elements: the write is the fault. */
  s = one_kernel(&k_copy1, rp_bytes(0, 0, 520), rp_bytes(0, 0, 512),
                 rp_dims3(65, 1, 1), "reference", 1, msg, sizeof msg);
  cr_assert_eq(s, RP_EACCESS, "%s", msg);
  cr_assert(strstr(msg, "parameter 1 'dst' writes byte 512 (element [1, 0]) "
                        "of buffer \"B\" (32768 bytes), outside its region "
                        "bytes [0, 512)"),
            "%s", msg);
}

Test(checking, read_before_the_region) {
  char msg[512];
  /* src declared [8, 520): element 0 is read too. */
  rp_status s = one_kernel(&k_shift, rp_bytes(0, 8, 512), rp_bytes(0, 8, 512),
                           rp_dims3(64, 1, 1), "openmp", 0, msg, sizeof msg);
  cr_assert_eq(s, RP_EACCESS, "%s", msg);
  cr_assert(strstr(msg, "op 1 \"shift\" (kernel shift): parameter 0 'src' "
                        "reads byte 0 (element [0, 0]) of buffer \"A\""),
            "%s", msg);
  cr_assert(strstr(msg, "outside its region bytes [8, 520)"), "%s", msg);
}

Test(checking, read_in_a_gap_of_a_box) {
  char msg[512];
  /* Rows and columns [1, 63): column 0 of row 2 is read but lies on a
   * page of declared bytes: found by its effect on the result, the byte
   * by bisecting the canaries. */
  uint64_t lo[2] = {1, 1}, hi[2] = {N - 1, N - 1};
  rp_status s =
      one_kernel(&k_left, rp_box(0, 2, lo, hi), rp_box(0, 2, lo, hi),
                 rp_dims3(N - 2, N - 2, 1), "openmp", 0, msg, sizeof msg);
  cr_assert_eq(s, RP_EACCESS, "%s", msg);
  cr_assert(strstr(msg, "op 1 \"left\" (kernel left): parameter 0 'src' "
                        "reads byte "),
            "%s", msg);
  cr_assert(strstr(msg, "(element [2, 0]) of buffer \"A\" (32768 bytes), "
                        "outside its region box [1, 63) x [1, 63) (elements) "
                        "(found by its effect on the results)"),
            "%s", msg);
}

Test(checking, write_to_an_in_region) {
  char msg[512];
  rp_status s = one_kernel(&k_scrib, rp_bytes(0, 0, 512), rp_bytes(0, 0, 512),
                           rp_dims3(64, 1, 1), "openmp", 0, msg, sizeof msg);
  cr_assert_eq(s, RP_EACCESS, "%s", msg);
  cr_assert(strstr(msg, "parameter 0 'src' writes byte 6 (element [0, 0]) of "
                        "buffer \"A\" (32768 bytes), inside its region bytes "
                        "[0, 512), which it declares in (read only)"),
            "%s", msg);
}

/* Writes one byte past its access. */
static void host_over(void *user, void *const *ptrs) {
  (void)user;
  ((unsigned char *)ptrs[0])[100] = 7;
}

Test(checking, host_task_writing_outside) {
  static unsigned char m[4096];
  rp_graph *g = tu_one_host_task(m, sizeof m, 100, host_over, NULL, "over");
  rp_exec_opts eo = RP_EXEC_OPTS_INIT;
  eo.check = 1;
  rp_exec *x;
  cr_assert_eq(rp_exec_create(&x, g, NULL, &eo), RP_OK);
  cr_assert_eq(rp_exec_run(x, 1), RP_EACCESS);
  cr_assert(strstr(rp_exec_error(x), "op 0 \"over\" (host task): access 0 "
                                     "writes byte 100 of buffer \"M\""),
            "%s", rp_exec_error(x));
  cr_assert_eq(m[100], 0, "the write stayed in the shadow");
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

static void host_touch(void *user, void *const *ptrs) {
  (void)user;
  ((unsigned char *)ptrs[0])[63] += 1;
}

/* With no backend named, checking mode takes the best CPU backend even
 * where "auto" would pick a device backend (on a GPU machine it picked
 * cuda and refused: caught on the H200). RP_BACKEND=xrt stands in for a
 * device default; "cpu" is not overridden by it. */
Test(checking, no_backend_named_takes_a_cpu_backend) {
  static unsigned char m[64];
  rp_graph *g = tu_one_host_task(m, sizeof m, 64, host_touch, NULL, "touch");
  setenv("RP_BACKEND", "xrt", 1);
  const rp_backend *cpu;
  cr_assert_eq(rp_backend_find("cpu", &cpu), RP_OK, "%s", rp_last_error());
  const rp_backend *omp;
  cr_assert_str_eq(rp_backend_name(cpu),
                   rp_backend_find("openmp", &omp) == RP_OK ? "openmp"
                                                            : "reference");
  rp_exec_opts eo = RP_EXEC_OPTS_INIT;
  eo.check = 1;
  rp_exec *x;
  cr_assert_eq(rp_exec_create(&x, g, NULL, &eo), RP_OK, "%s", rp_last_error());
  cr_assert_eq(rp_exec_run(x, 1), RP_OK, "%s", rp_exec_error(x));
  cr_assert_eq(m[63], 1);
  unsetenv("RP_BACKEND");
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

Test(checking, device_backends_refuse_the_option) {
  rp_graph *g;
  rp_buf b;
  static char m[64];
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, rp_buffer_register(g, "M", m, sizeof m, &b));
  TU_OK(g, rp_record_copy_to_device(g, rp_whole(b), 0, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  const rp_backend *be;
  if (rp_backend_find("xrt", &be) != RP_OK) {
    rp_graph_destroy(g);
    cr_skip_test("no xrt backend");
  }
  setenv("RP_XRT_EMULATE", "1", 1);
  rp_exec_opts o = RP_EXEC_OPTS_INIT;
  o.check = 1;
  rp_exec *x = NULL;
  cr_assert_eq(rp_exec_create(&x, g, be, &o), RP_ENOTSUP);
  cr_assert(strstr(rp_last_error(), "checking mode runs on the CPU backends"),
            "%s", rp_last_error());
  /* RP_CHECK=1 leaves it alone. */
  setenv("RP_CHECK", "1", 1);
  o.check = 0;
  cr_assert_eq(rp_exec_create(&x, g, be, &o), RP_OK, "%s", rp_last_error());
  unsetenv("RP_CHECK");
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

#ifdef RP_HAVE_EXAMPLES
/* The Jacobi example, host task and coherence copies included, gives
 * identical results in checking mode and out of it. */
Test(checking, correct_program_passes_unchanged) {
  ex_jacobi2d p = {48, 3, 1, 4, 0, 0};
  uint64_t nn = p.n * p.n, ns = ex_jacobi2d_nsums(&p);
  double *a = malloc(nn * 8), *b = malloc(nn * 8), *s = malloc(ns * 8);
  double *ca = malloc(nn * 8), *cb = malloc(nn * 8), *cs = malloc(ns * 8);
  rp_graph *g;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  TU_OK(g, ex_jacobi2d_record(g, &p, a, b, s));
  TU_OK(g, rp_graph_end(g));
  static const char *const bes[] = {"openmp", "reference"};
  for (int i = 0; i < 2; i++) {
    const rp_backend *be;
    cr_assert_eq(rp_backend_find(bes[i], &be), RP_OK);
    rp_exec_opts o = RP_EXEC_OPTS_INIT;
    o.check = 1;
    rp_exec *x;
    cr_assert_eq(rp_exec_create(&x, g, be, &o), RP_OK, "%s", rp_last_error());
    ex_jacobi2d_init(&p, a, b, s);
    cr_assert_eq(rp_exec_run(x, 2), RP_OK, "%s", rp_exec_error(x));
    rp_exec_destroy(x);
    ex_jacobi2d_init(&p, ca, cb, cs);
    ex_jacobi2d_check(&p, 2, ca, cb, cs);
    cr_assert(!memcmp(a, ca, nn * 8) && !memcmp(b, cb, nn * 8) &&
                  !memcmp(s, cs, ns * 8),
              "%s: results differ", bes[i]);
  }
  rp_graph_destroy(g);
  free(a), free(b), free(s), free(ca), free(cb), free(cs);
}
#endif
