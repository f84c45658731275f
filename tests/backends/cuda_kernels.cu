/* Test-only CUDA kernels for tests/backends/test_cuda.c. */
#include "cuda_kernels.h"
#include "reprise/kernel.h"

RP_KERNEL(tc_mix_k, {
  const uint8_t *a = RP_PTR(const uint8_t, 0);
  uint8_t *b = RP_PTR(uint8_t, 1);
  uint64_t oa = RP_VAL(uint64_t, 2), ob = RP_VAL(uint64_t, 3);
  b[ob + RP_X] = (uint8_t)(3 * b[ob + RP_X] + a[oa + RP_X] + 1);
})
static const rp_param tc_mix_params[] = {
    {"a", RP_IN}, {"b", RP_INOUT}, {"offa", RP_SCALAR}, {"offb", RP_SCALAR}};
extern "C" const rp_kernel tc_mix = RP_KERNEL_DESC(tc_mix_k, tc_mix_params);

RP_KERNEL(tc_bump_k, {
  uint8_t *a = RP_PTR(uint8_t, 0);
  uint64_t o = RP_VAL(uint64_t, 1);
  a[o + RP_X] = (uint8_t)(a[o + RP_X] * 5 + 7);
})
static const rp_param tc_bump_params[] = {{"a", RP_INOUT}, {"off", RP_SCALAR}};
extern "C" const rp_kernel tc_bump = RP_KERNEL_DESC(tc_bump_k, tc_bump_params);

static rp_kernel make_bad(void) {
  rp_kernel k = RP_KERNEL_DESC(tc_bump_k, tc_bump_params);
  k.name = "tc_bad";
  k.block[0] = 2048;
  return k;
}
extern "C" const rp_kernel tc_bad = make_bad();

RP_KERNEL(tc_grid2_k, {
  float *a = RP_PTR(float, 0);
  uint64_t cols = RP_VAL(uint64_t, 1);
  a[RP_Y * cols + RP_X] = a[RP_Y * cols + RP_X] * 2.0f + (float)RP_Y;
})
static const rp_param tc_grid2_params[] = {{"a", RP_INOUT},
                                           {"cols", RP_SCALAR}};
extern "C" const rp_kernel tc_grid2 =
    RP_KERNEL_DESC(tc_grid2_k, tc_grid2_params);

static int bump_host(const rp_kargs *a, void *stream) {
  tc_bump_k_rp_cuda<<<(unsigned)((a->n[0] + 127) / 128), 128, 0,
                      (cudaStream_t)stream>>>(*a);
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
static rp_kernel make_bump_host(void) {
  rp_kernel k = RP_KERNEL_DESC(tc_bump_k, tc_bump_params);
  k.name = "tc_bump_host";
  k.cuda = NULL;
  k.cuda_args = NULL;
  k.cuda_host = bump_host;
  return k;
}
extern "C" const rp_kernel tc_bump_host = make_bump_host();
