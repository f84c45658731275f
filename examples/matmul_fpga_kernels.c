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
const rp_kernel ex_matmul_tile = {
    "ex_matmul_tile",
    (unsigned)(sizeof(ex_matmul_params) / sizeof(ex_matmul_params[0])),
    ex_matmul_params,
    ex_matmul_tile_k_rp_cpu,
    RP_KERNEL_CUDA_FN(ex_matmul_tile_k),
    NULL,
    {EX_MM_BS, EX_MM_BS, 1},
    "matmul",
    NULL,
    0};

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

rp_status ex_matmul_record(rp_graph *g, const ex_matmul *p, float *a,
                           float *b, float *c) {
  if (!p->n || p->n % EX_MM_BS)
    return RP_EINVAL;
  unsigned nb = p->n / EX_MM_BS;
  uint64_t bytes = (uint64_t)p->n * p->n * sizeof(float);
  uint64_t tb = EX_MM_BS * EX_MM_BS * sizeof(float);
  rp_buf A, B, C;
  rp_status s;
  if ((s = rp_buffer_register(g, "A", a, bytes, &A)) != RP_OK ||
      (s = rp_buffer_register(g, "B", b, bytes, &B)) != RP_OK ||
      (s = rp_buffer_register(g, "C", c, bytes, &C)) != RP_OK)
    return s;
  for (unsigned i = 0; i < nb; i++)
    for (unsigned j = 0; j < nb; j++)
      for (unsigned k = 0; k < nb; k++) {
        uint64_t oa = tile_off(nb, i, k), ob = tile_off(nb, k, j);
        uint64_t oc = tile_off(nb, i, j);
        rp_arg args[6];
        args[0] = rp_arg_buf(rp_bytes(A, oa * sizeof(float), tb));
        args[1] = rp_arg_buf(rp_bytes(B, ob * sizeof(float), tb));
        args[2] = rp_arg_buf(rp_bytes(C, oc * sizeof(float), tb));
        args[3] = rp_arg_i64((int64_t)oa);
        args[4] = rp_arg_i64((int64_t)ob);
        args[5] = rp_arg_i64((int64_t)oc);
        s = rp_record_kernel(g, &ex_matmul_tile, p->device,
                             rp_dims3(EX_MM_BS, EX_MM_BS, 1), args, NULL,
                             NULL);
        if (s != RP_OK)
          return s;
      }
  return rp_record_sync_host(g, rp_whole(C), NULL);
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
