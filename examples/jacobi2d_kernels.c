/* Jacobi 2D workload: kernels, recording, sequential check. Valid C and
 * C++ (built by nvcc). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "examples.h"

RP_KERNEL(jac_copy, {
  uint64_t n = (uint64_t)RP_VAL(int64_t, 2);
  uint64_t i = ((uint64_t)RP_VAL(int64_t, 3) + RP_Y) * n + RP_X;
  RP_PTR(double, 1)[i] = RP_PTR(const double, 0)[i];
})
RP_KERNEL(jac_sten, {
  const double *b = RP_PTR(const double, 0);
  uint64_t n = (uint64_t)RP_VAL(int64_t, 2);
  uint64_t i = ((uint64_t)RP_VAL(int64_t, 3) + RP_Y) * n + 1 + RP_X;
  RP_PTR(double, 1)[i] = 0.25 * (b[i - n] + b[i + n] + b[i - 1] + b[i + 1]);
})
static const rp_param jac_copy_params[] = {
    {"src", RP_IN}, {"dst", RP_OUT}, {"n", RP_SCALAR}, {"r0", RP_SCALAR}};
static const rp_param jac_sten_params[] = {
    {"src", RP_IN}, {"dst", RP_OUT}, {"n", RP_SCALAR}, {"r0", RP_SCALAR}};
static const rp_kernel jac_copy_k = RP_KERNEL_DESC(jac_copy, jac_copy_params);
/* A 5-point stencil over rows (y): a distributed lowering computes the
 * rows that need no neighbour's halo while the halo flies (rp_kernel.halo,
 * docs/mpi.md). */
static const rp_kernel jac_sten_k =
    RP_KERNEL_DESC_HALO(jac_sten, jac_sten_params, 0, 1, 0);

/* sums[k] = the sum of the n x n grid a. */
static void jac_sum_into(const double *a, uint64_t n, double *sums,
                         uint64_t k) {
  double s = 0;
  for (uint64_t i = 0; i < n * n; i++)
    s += a[i];
  sums[k] = s;
}

/* The host task's user pointer packs n (low 48 bits) and the slot k. */
static void jac_sum(void *user, void *const *ptrs) {
  uint64_t u = (uint64_t)(uintptr_t)user, n = u & 0xffffffffffffull;
  jac_sum_into((const double *)ptrs[0], n, (double *)ptrs[1], u >> 48);
}

/* The device of row block i of nb. */
static int jac_device(const ex_jacobi2d *p, uint64_t i, uint64_t nb) {
  return p->devices > 1 ? (int)(i * p->devices / nb) : p->device;
}

uint64_t ex_jacobi2d_nsums(const ex_jacobi2d *p) {
  uint64_t k = p->every ? p->steps / p->every : 0;
  return k ? k : 1;
}

void ex_jacobi2d_init(const ex_jacobi2d *p, double *a, double *b,
                      double *sums) {
  uint64_t nn = p->n * p->n;
  for (uint64_t i = 0; i < nn; i++)
    a[i] = i < p->n ? 1.0 : (double)((i * 7919) % 1000) / 1000.0;
  memset(b, 0, nn * sizeof *b);
  memset(sums, 0, ex_jacobi2d_nsums(p) * sizeof *sums);
}

/* The device of row block i of nb: all on p->device, or with a CPU-kind
 * device (cpu >= 0) the top half of the blocks on it. */
static int block_device(const ex_jacobi2d *p, int cpu, uint64_t i,
                        uint64_t nb) {
  return cpu >= 0 && i < nb / 2 ? cpu : jac_device(p, i, nb);
}

static rp_status record(rp_graph *g, const ex_jacobi2d *p, int cpu, double *a,
                        double *b, double *sums) {
  uint64_t n = p->n, nb = p->blocks ? p->blocks : 1;
  rp_buf A, B, S;
  rp_status rc;
  if (n < 3 || nb > n - 2 || ex_jacobi2d_nsums(p) >= 65536 ||
      p->devices > RP_MAX_DEVICES || n >= (1ull << 24))
    return RP_EINVAL;
  if ((rc = rp_buffer_register_2d(g, "A", a, n, n, 8, &A)) ||
      (rc = rp_buffer_register_2d(g, "B", b, n, n, 8, &B)) ||
      (rc = rp_buffer_register(g, "sums", sums, 8 * ex_jacobi2d_nsums(p), &S)))
    return rc;
  for (unsigned s = 1; s <= p->steps; s++) {
    for (uint64_t i = 0; i < nb; i++) {
      uint64_t r0 = n * i / nb, r1 = n * (i + 1) / nb;
      rp_arg args[4];
      args[0] = rp_arg_buf(rp_box2_elems(A, r0, r1, 0, n));
      args[1] = rp_arg_buf(rp_box2_elems(B, r0, r1, 0, n));
      args[2] = rp_arg_i64((int64_t)n);
      args[3] = rp_arg_i64((int64_t)r0);
      rc = rp_record_kernel(g, &jac_copy_k, block_device(p, cpu, i, nb),
                            rp_dims3(n, r1 - r0, 1), args, NULL, NULL);
      if (rc)
        return rc;
    }
    for (uint64_t i = 0; i < nb; i++) {
      uint64_t r0 = 1 + (n - 2) * i / nb, r1 = 1 + (n - 2) * (i + 1) / nb;
      rp_arg args[4];
      args[0] = rp_arg_buf(rp_box2_elems(B, r0 - 1, r1 + 1, 0, n));
      args[1] = rp_arg_buf(rp_box2_elems(A, r0, r1, 1, n - 1));
      args[2] = rp_arg_i64((int64_t)n);
      args[3] = rp_arg_i64((int64_t)r0);
      rc = rp_record_kernel(g, &jac_sten_k, block_device(p, cpu, i, nb),
                            rp_dims3(n - 2, r1 - r0, 1), args, NULL, NULL);
      if (rc)
        return rc;
    }
    if (p->every && s % p->every == 0) {
      uint64_t k = s / p->every - 1;
      rp_access acc[2];
      acc[0].region = rp_whole(A);
      acc[0].mode = RP_IN;
      acc[1].region = rp_range_bytes(S, 8 * k, 8);
      acc[1].mode = RP_OUT;
      /* The name the kernel library exports it by. */
      rp_op_opts o = RP_OP_OPTS_WITH(.name = "jac_sum");
      rc = rp_record_host(g, jac_sum, (void *)(uintptr_t)((k << 48) | n), acc,
                          2, &o, NULL);
      if (rc)
        return rc;
    }
  }
  if ((rc = rp_record_sync_host(g, rp_whole(A), NULL)))
    return rc;
  return rp_record_sync_host(g, rp_whole(B), NULL);
}

rp_status ex_jacobi2d_record(rp_graph *g, const ex_jacobi2d *p, double *a,
                             double *b, double *sums) {
  return record(g, p, -1, a, b, sums);
}

rp_status ex_jacobi2d_mixed_record(rp_graph *g, const ex_jacobi2d *p,
                                   int cpu_device, double *a, double *b,
                                   double *sums) {
  rp_status rc;
  if (cpu_device < 0 || cpu_device == p->device ||
      (p->blocks ? p->blocks : 1) < 2)
    return RP_EINVAL;
  if ((rc = rp_graph_set_device_kind(g, cpu_device, RP_DEVICE_CPU)))
    return rc;
  return record(g, p, cpu_device, a, b, sums);
}

void ex_jacobi2d_check(const ex_jacobi2d *p, unsigned replays, double *a,
                       double *b, double *sums) {
  uint64_t n = p->n;
  for (unsigned r = 0; r < replays; r++)
    for (unsigned s = 1; s <= p->steps; s++) {
      memcpy(b, a, n * n * sizeof *a);
      for (uint64_t i = 1; i + 1 < n; i++)
        for (uint64_t j = 1; j + 1 < n; j++) {
          uint64_t x = i * n + j;
          a[x] = 0.25 * (b[x - n] + b[x + n] + b[x - 1] + b[x + 1]);
        }
      if (p->every && s % p->every == 0) {
        double t = 0;
        for (uint64_t i = 0; i < n * n; i++)
          t += a[i];
        sums[s / p->every - 1] = t;
      }
    }
}

#ifdef EX_KERNEL_LIBRARY
/* The kernel library libjacobi2d_kernels.so (examples/CMakeLists.txt): a
 * saved Jacobi graph replays with `reprise run --kernels
 * libjacobi2d_kernels.so` (reprise/library.h). Its host task reads n and
 * the slot from its operation (a replay from a file has no user data):
 * access 0 is the whole n x n grid, access 1 the 8 bytes of sums[k]. */
static void jac_sum_site(void *user, void *const *ptrs) {
  const rp_host_site *site = (const rp_host_site *)user;
  rp_access_info grid, slot;
  rp_buffer_desc d;
  if (rp_node_access(site->graph, site->node, 0, &grid) ||
      rp_node_access(site->graph, site->node, 1, &slot) ||
      rp_buffer_info(site->graph, grid.region.buf, &d) || d.ndims != 2) {
    rp_task_fail(1, "jac_sum: not the accesses ex_jacobi2d_record gives");
    return;
  }
  jac_sum_into((const double *)ptrs[0], d.dims[0], (double *)ptrs[1],
               slot.region.offset / 8);
}
static const rp_host_task jac_sum_task = {"jac_sum", jac_sum_site};
static const rp_kernel *const ex_lib_kernels[] = {&jac_copy_k, &jac_sten_k,
                                                  NULL};
static const rp_host_task *const ex_lib_tasks[] = {&jac_sum_task, NULL};
RP_KERNEL_LIBRARY(ex_lib_kernels, ex_lib_tasks)
#endif
