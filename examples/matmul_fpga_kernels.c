/* Blocked matmul for the FPGA example: C += A * B over 32 x 32 tiles, one
 * kernel per tile product, as an XRT kernel "matmul" with a CPU body. */
#include <stdlib.h>
#include <string.h>
#include "examples.h"
#include "reprise/kernel.h"

/* One tile product: C[oc..] += A[oa..] * B[ob..], tiles row-major, the
 * offsets in floats. Point (x, y) computes element (y, x) of the tile. */
RP_KERNEL(ex_matmul_tile_k, {
  const float *a = RP_PTR(const float, 0) + RP_VAL(uint64_t, 3);
  const float *b = RP_PTR(const float, 1) + RP_VAL(uint64_t, 4);
  float *c = RP_PTR(float, 2) + RP_VAL(uint64_t, 5);
  float acc = c[RP_Y * EX_MM_BS + RP_X];
  for (unsigned k = 0; k < EX_MM_BS; k++)
    acc += a[RP_Y * EX_MM_BS + k] * b[k * EX_MM_BS + RP_X];
  c[RP_Y * EX_MM_BS + RP_X] = acc;
})

static const rp_param ex_matmul_params[] = {
    {"A", RP_IN},      {"B", RP_IN},      {"C", RP_INOUT},
    {"oa", RP_SCALAR}, {"ob", RP_SCALAR}, {"oc", RP_SCALAR}};

/* Built by hand to name the XRT kernel; its arguments are the parameters
 * in order (no argument map). */
const rp_kernel ex_matmul_tile =
    RP_KERNEL_WITH(.name = "ex_matmul_tile",
                   .nparams = (unsigned)(sizeof(ex_matmul_params) /
                                         sizeof(ex_matmul_params[0])),
                   .params = ex_matmul_params, .cpu = ex_matmul_tile_k_rp_cpu,
                   .cuda = RP_KERNEL_CUDA_FN(ex_matmul_tile_k),
                   .block = {EX_MM_BS, EX_MM_BS, 1}, .xrt = "matmul");

static uint64_t tile_off(unsigned nb, unsigned i, unsigned j) {
  return ((uint64_t)i * nb + j) * EX_MM_BS * EX_MM_BS;
}

uint64_t ex_matmul_index(const ex_matmul *p, unsigned r, unsigned c) {
  unsigned nb = p->n / EX_MM_BS;
  return tile_off(nb, r / EX_MM_BS, c / EX_MM_BS) +
         (uint64_t)(r % EX_MM_BS) * EX_MM_BS + c % EX_MM_BS;
}

void ex_matmul_init(const ex_matmul *p, float *a, float *b, float *c) {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (unsigned r = 0; r < p->n; r++)
    for (unsigned col = 0; col < p->n; col++) {
      uint64_t i = ex_matmul_index(p, r, col);
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      /* Small integers: every sum is exact, so any order of the additions
       * gives the same bits. */
      a[i] = (float)(s % 4);
      b[i] = (float)((s >> 8) % 4);
      c[i] = (float)((s >> 16) % 3);
    }
}

/* The tile products C_ij += A_ik * B_kj on p->device, then C home. */
static rp_status record_tiles(rp_graph *g, const ex_matmul *p, rp_buf A,
                              rp_buf B, rp_buf C) {
  unsigned nb = p->n / EX_MM_BS;
  uint64_t tb = EX_MM_BS * EX_MM_BS * sizeof(float);
  rp_status s;
  for (unsigned i = 0; i < nb; i++)
    for (unsigned j = 0; j < nb; j++)
      for (unsigned k = 0; k < nb; k++) {
        uint64_t oa = tile_off(nb, i, k), ob = tile_off(nb, k, j);
        uint64_t oc = tile_off(nb, i, j);
        rp_arg args[6];
        args[0] = rp_arg_buf(rp_range_bytes(A, oa * sizeof(float), tb));
        args[1] = rp_arg_buf(rp_range_bytes(B, ob * sizeof(float), tb));
        args[2] = rp_arg_buf(rp_range_bytes(C, oc * sizeof(float), tb));
        args[3] = rp_arg_i64((int64_t)oa);
        args[4] = rp_arg_i64((int64_t)ob);
        args[5] = rp_arg_i64((int64_t)oc);
        s = rp_record_kernel(g, &ex_matmul_tile, p->device,
                             rp_dims3(EX_MM_BS, EX_MM_BS, 1), args, NULL, NULL);
        if (s != RP_OK)
          return s;
      }
  return rp_record_sync_host(g, rp_whole(C), NULL);
}

rp_status ex_matmul_record(rp_graph *g, const ex_matmul *p, float *a, float *b,
                           float *c) {
  if (!p->n || p->n % EX_MM_BS)
    return RP_EINVAL;
  uint64_t bytes = (uint64_t)p->n * p->n * sizeof(float);
  rp_buf A, B, C;
  rp_status s;
  if ((s = rp_buffer_register(g, "A", a, bytes, &A)) != RP_OK ||
      (s = rp_buffer_register(g, "B", b, bytes, &B)) != RP_OK ||
      (s = rp_buffer_register(g, "C", c, bytes, &C)) != RP_OK)
    return s;
  return record_tiles(g, p, A, B, C);
}

/* The verification step: row RP_X of the tiled n x n matrices: want =
 * C0 + A * B, bad[row] = the elements of C that differ from it. */
RP_HD static inline uint64_t mm_at(uint64_t n, uint64_t r, uint64_t c) {
  uint64_t nb = n / EX_MM_BS;
  return ((r / EX_MM_BS) * nb + c / EX_MM_BS) * EX_MM_BS * EX_MM_BS +
         (r % EX_MM_BS) * EX_MM_BS + c % EX_MM_BS;
}
RP_KERNEL(ex_mm_verify_k, {
  const float *a = RP_PTR(const float, 0), *b = RP_PTR(const float, 1);
  const float *c0 = RP_PTR(const float, 2), *c = RP_PTR(const float, 3);
  uint64_t n = RP_VAL(uint64_t, 5), r = RP_X;
  uint32_t bad = 0;
  for (uint64_t j = 0; j < n; j++) {
    float acc = c0[mm_at(n, r, j)];
    for (uint64_t k = 0; k < n; k++)
      acc += a[mm_at(n, r, k)] * b[mm_at(n, k, j)];
    bad += acc != c[mm_at(n, r, j)];
  }
  RP_PTR(uint32_t, 4)[r] = bad;
})
static const rp_param ex_mm_verify_params[] = {
    {"A", RP_IN}, {"B", RP_IN},    {"C0", RP_IN},
    {"C", RP_IN}, {"bad", RP_OUT}, {"n", RP_SCALAR}};
static const rp_kernel ex_mm_verify =
    RP_KERNEL_DESC(ex_mm_verify_k, ex_mm_verify_params);

/* C0 = C (a whole-buffer copy, as a kernel: point x copies element x). */
RP_KERNEL(ex_mm_save_k, {
  RP_PTR(float, 1)[RP_X] = RP_PTR(const float, 0)[RP_X];
})
static const rp_param ex_mm_save_params[] = {{"C", RP_IN}, {"C0", RP_OUT}};
static const rp_kernel ex_mm_save =
    RP_KERNEL_DESC(ex_mm_save_k, ex_mm_save_params);

rp_status ex_matmul_record_verified(rp_graph *g, const ex_matmul *p,
                                    int cpu_device, float *a, float *b,
                                    float *c, uint32_t *bad) {
  if (cpu_device < 0 || cpu_device == p->device || !p->n || p->n % EX_MM_BS)
    return RP_EINVAL;
  uint64_t nel = (uint64_t)p->n * p->n;
  rp_status s;
  rp_buf A, B, C, C0, BAD;
  rp_buffer_desc d0 = {"C0",          NULL, nel * sizeof(float),
                       sizeof(float), 0,    {0, 0, 0}};
  if ((s = rp_graph_set_device_kind(g, cpu_device, RP_DEVICE_CPU)) ||
      (s = rp_buffer_add(g, &d0, &C0)))
    return s;
  if ((s = rp_buffer_register(g, "A", a, nel * sizeof(float), &A)) ||
      (s = rp_buffer_register(g, "B", b, nel * sizeof(float), &B)) ||
      (s = rp_buffer_register(g, "C", c, nel * sizeof(float), &C)) ||
      (s = rp_buffer_register(g, "bad", bad, p->n * sizeof(uint32_t), &BAD)))
    return s;
  /* C as the replay starts, kept on the CPU device; then the tiles; then
   * the check of C against C0 + A * B on the CPU device. */
  rp_arg sv[2] = {rp_arg_buf(rp_whole(C)), rp_arg_buf(rp_whole(C0))};
  if ((s = rp_record_kernel(g, &ex_mm_save, cpu_device, rp_dims3(nel, 1, 1), sv,
                            NULL, NULL)))
    return s;
  if ((s = record_tiles(g, p, A, B, C)))
    return s;
  rp_arg vf[6] = {rp_arg_buf(rp_whole(A)),   rp_arg_buf(rp_whole(B)),
                  rp_arg_buf(rp_whole(C0)),  rp_arg_buf(rp_whole(C)),
                  rp_arg_buf(rp_whole(BAD)), rp_arg_i64((int64_t)p->n)};
  if ((s = rp_record_kernel(g, &ex_mm_verify, cpu_device, rp_dims3(p->n, 1, 1),
                            vf, NULL, NULL)))
    return s;
  return rp_record_sync_host(g, rp_whole(BAD), NULL);
}

void ex_matmul_check(const ex_matmul *p, unsigned replays, const float *a,
                     const float *b, float *c) {
  for (unsigned it = 0; it < replays; it++)
    for (unsigned i = 0; i < p->n; i++)
      for (unsigned j = 0; j < p->n; j++) {
        float acc = c[ex_matmul_index(p, i, j)];
        for (unsigned k = 0; k < p->n; k++)
          acc += a[ex_matmul_index(p, i, k)] * b[ex_matmul_index(p, k, j)];
        c[ex_matmul_index(p, i, j)] = acc;
      }
}

#ifdef EX_KERNEL_LIBRARY
/* The kernel library libmatmul_fpga_kernels.so (examples/CMakeLists.txt): its
 * graphs replay with `reprise run --kernels` (reprise/library.h). */
static const rp_kernel *const ex_lib_kernels[] = {
    &ex_matmul_tile, &ex_mm_verify, &ex_mm_save, NULL};
RP_KERNEL_LIBRARY(ex_lib_kernels, NULL)
#endif
