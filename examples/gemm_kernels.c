/* Tiled matrix product with a library kernel: one recorded operation per
 * tile product C_ij += A_ik B_kj, whose CUDA body is cuBLAS dgemm on the
 * node's stream (when reprise was built with cuBLAS) and whose CPU body is
 * a plain loop; both read their tile through the region accessors. Valid C
 * and C++ (built by nvcc). */
#include <string.h>
#include "examples.h"
#include "reprise/kernel.h"
#if defined(__CUDACC__) && defined(RP_HAVE_CUBLAS)
#include <cublas_v2.h>
#endif

/* One point of the tile: element (y, x) of C's box. */
RP_KERNEL(gemm_tile, {
  const double *a = RP_REGION_PTR(const double, 0);
  const double *b = RP_REGION_PTR(const double, 1);
  double *c = RP_REGION_PTR(double, 2);
  uint64_t ld = RP_BOX_LD(2), kk = RP_BOX_N(0, 1);
  double t = c[RP_Y * ld + RP_X];
  for (uint64_t k = 0; k < kk; k++)
    t += a[RP_Y * ld + k] * b[k * ld + RP_X];
  c[RP_Y * ld + RP_X] = t;
})
static const rp_param gemm_tile_params[] = {
    {"A", RP_IN}, {"B", RP_IN}, {"C", RP_INOUT}};

#if defined(__CUDACC__) && defined(RP_HAVE_CUBLAS)
static cublasHandle_t handle;
static unsigned users; /* registrations (ex_gemm_library_init) */

/* Without a GPU the cuda backend cannot run, nor is cuBLAS needed. */
int ex_gemm_library_init(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();
    return 0;
  }
  if (!handle && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    handle = NULL;
    return -1;
  }
  users++;
  return 0;
}

/* The library's state goes with its last user: the handle and its
 * workspace (64 MiB of device memory that compute-sanitizer's leak check
 * reported while the handle lived to the process' end). */
void ex_gemm_library_fini(void) {
  if (users && --users == 0 && handle) {
    cublasDestroy(handle);
    handle = NULL;
  }
}

/* Row-major C = A B is column-major C^T = B^T A^T: dgemm with B first. */
static int gemm_cublas(const rp_kargs *a, void *stream) {
  const double one = 1.0;
  const double *pa = (const double *)((const char *)a->a[0].p + a->r[0].offset);
  const double *pb = (const double *)((const char *)a->a[1].p + a->r[1].offset);
  double *pc = (double *)((char *)a->a[2].p + a->r[2].offset);
  int m = (int)a->r[2].n[1], n = (int)a->r[2].n[0], k = (int)a->r[0].n[1];
  int ld = (int)a->r[2].ld;
  if (cublasSetStream(handle, (cudaStream_t)stream) != CUBLAS_STATUS_SUCCESS)
    return -1;
  return cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, pb, ld,
                     pa, ld, &one, pc, ld) == CUBLAS_STATUS_SUCCESS
             ? 0
             : -1;
}
static rp_kernel make_gemm(void) {
  rp_kernel k = RP_KERNEL_DESC(gemm_tile, gemm_tile_params);
  k.cuda = NULL;
  k.cuda_args = NULL;
  k.cuda_host = gemm_cublas;
  return k;
}
extern "C" const rp_kernel ex_gemm_tile_k = make_gemm();
const int ex_gemm_uses_library = 1;
#else
int ex_gemm_library_init(void) { return 0; }
void ex_gemm_library_fini(void) {}
#ifdef __cplusplus
extern "C"
#endif
    const rp_kernel ex_gemm_tile_k =
        RP_KERNEL_DESC(gemm_tile, gemm_tile_params);
#ifdef __cplusplus
extern "C"
#endif
    const int ex_gemm_uses_library = 0;
#endif

void ex_gemm_init(const ex_gemm *p, double *a, double *b, double *c) {
  uint64_t n = p->n;
  for (uint64_t i = 0; i < n * n; i++) {
    a[i] = (double)((i * 37) % 17) - 8.0;
    b[i] = (double)((i * 11) % 13) - 6.0;
  }
  memset(c, 0, n * n * sizeof *c);
}

rp_status ex_gemm_record(rp_graph *g, const ex_gemm *p, double *a, double *b,
                         double *c) {
  uint64_t n = p->n, t = p->tile, nt;
  rp_buf A, B, C;
  rp_status rc;
  if (!t || n % t)
    return RP_EINVAL;
  nt = n / t;
  if ((rc = rp_buffer_register_2d(g, "A", a, n, n, 8, &A)) ||
      (rc = rp_buffer_register_2d(g, "B", b, n, n, 8, &B)) ||
      (rc = rp_buffer_register_2d(g, "C", c, n, n, 8, &C)))
    return rc;
  for (uint64_t k = 0; k < nt; k++)
    for (uint64_t i = 0; i < nt; i++)
      for (uint64_t j = 0; j < nt; j++) {
        rp_arg args[3];
        args[0] =
            rp_arg_buf(rp_box2_elems(A, i * t, i * t + t, k * t, k * t + t));
        args[1] =
            rp_arg_buf(rp_box2_elems(B, k * t, k * t + t, j * t, j * t + t));
        args[2] =
            rp_arg_buf(rp_box2_elems(C, i * t, i * t + t, j * t, j * t + t));
        if ((rc = rp_record_kernel(g, &ex_gemm_tile_k, p->device,
                                   rp_dims3(t, t, 1), args, NULL, NULL)))
          return rc;
      }
  return rp_record_sync_host(g, rp_whole(C), NULL);
}

void ex_gemm_check(const ex_gemm *p, unsigned replays, const double *a,
                   const double *b, double *c) {
  uint64_t n = p->n;
  for (unsigned r = 0; r < replays; r++)
    for (uint64_t i = 0; i < n; i++)
      for (uint64_t j = 0; j < n; j++) {
        double t = c[i * n + j];
        for (uint64_t k = 0; k < n; k++)
          t += a[i * n + k] * b[k * n + j];
        c[i * n + j] = t;
      }
}

#ifdef EX_KERNEL_LIBRARY
/* The kernel library libgemm_kernels.so (examples/CMakeLists.txt): its
 * graphs replay with `reprise run --kernels` (reprise/library.h). */
static const rp_kernel *const ex_lib_kernels[] = {&ex_gemm_tile_k, NULL};
RP_KERNEL_LIBRARY(ex_lib_kernels, NULL)
#endif
