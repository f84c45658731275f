/* Two independent kernel chains on devices 0 and 1: kernel, recording and
 * sequential check. Valid C and C++. */
#include "multidev.h"

#define TK_MUL 6364136223846793005ull
#define TK_ADD 1442695040888963407ull

RP_KERNEL(tk_spin, {
  uint64_t *x = RP_PTR(uint64_t, 0);
  uint64_t v = x[RP_X];
  int64_t inner = RP_VAL(int64_t, 1);
  for (int64_t k = 0; k < inner; k++)
    v = v * TK_MUL + TK_ADD;
  x[RP_X] = v;
})
static const rp_param tk_params[] = {{"x", RP_INOUT}, {"inner", RP_SCALAR}};
static const rp_kernel tk_k = RP_KERNEL_DESC(tk_spin, tk_params);

void ex_twok_init(const ex_twok *p, uint64_t *x, uint64_t *y) {
  for (uint64_t i = 0; i < p->n; i++) {
    x[i] = i * 2654435761u + 1;
    y[i] = i ^ 0x5bd1e995u;
  }
}

rp_status ex_twok_record(rp_graph *g, const ex_twok *p, uint64_t *x,
                         uint64_t *y) {
  rp_buf X, Y;
  rp_status rc;
  if (!p->n)
    return RP_EINVAL;
  if ((rc = rp_buffer_register(g, "X", x, p->n * 8, &X)) ||
      (rc = rp_buffer_register(g, "Y", y, p->n * 8, &Y)))
    return rc;
  for (unsigned r = 0; r < p->rounds; r++)
    for (int d = 0; d < 2; d++) {
      rp_arg args[2];
      args[0] = rp_arg_buf(rp_whole(d ? Y : X));
      args[1] = rp_arg_i64((int64_t)p->inner);
      rc =
          rp_record_kernel(g, &tk_k, d, rp_dims3(p->n, 1, 1), args, NULL, NULL);
      if (rc)
        return rc;
    }
  if ((rc = rp_record_sync_host(g, rp_whole(X), NULL)))
    return rc;
  return rp_record_sync_host(g, rp_whole(Y), NULL);
}

void ex_twok_check(const ex_twok *p, unsigned replays, uint64_t *x,
                   uint64_t *y) {
  uint64_t k = (uint64_t)replays * p->rounds * p->inner;
  for (uint64_t i = 0; i < p->n; i++)
    for (uint64_t j = 0; j < k; j++) {
      x[i] = x[i] * TK_MUL + TK_ADD;
      y[i] = y[i] * TK_MUL + TK_ADD;
    }
}

#ifdef EX_KERNEL_LIBRARY
/* The kernel library libtwokernels_kernels.so (examples/CMakeLists.txt): its
 * graphs replay with `reprise run --kernels` (reprise/library.h). */
static const rp_kernel *const ex_lib_kernels[] = {&tk_k, NULL};
RP_KERNEL_LIBRARY(ex_lib_kernels, NULL)
#endif
