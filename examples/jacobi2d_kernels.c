/* Jacobi 2D workload (kernels, recording, sequential check) and the common
 * driver of the CPU example programs. Valid C and C++ (built by nvcc). */
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
static const rp_kernel jac_sten_k = RP_KERNEL_DESC(jac_sten, jac_sten_params);

/* The host task's user pointer packs n (low 48 bits) and the slot k. */
static void jac_sum(void *user, void *const *ptrs) {
  uint64_t u = (uint64_t)(uintptr_t)user, n = u & 0xffffffffffffull;
  const double *a = (const double *)ptrs[0];
  double s = 0;
  for (uint64_t i = 0; i < n * n; i++)
    s += a[i];
  ((double *)ptrs[1])[u >> 48] = s;
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

rp_status ex_jacobi2d_record(rp_graph *g, const ex_jacobi2d *p, double *a,
                             double *b, double *sums) {
  uint64_t n = p->n, nb = p->blocks ? p->blocks : 1;
  rp_buf A, B, S;
  rp_status rc;
  if (n < 3 || nb > n - 2 || ex_jacobi2d_nsums(p) >= 65536 ||
      n >= (1ull << 24))
    return RP_EINVAL;
  if ((rc = rp_buffer_register_2d(g, "A", a, n, n, 8, &A)) ||
      (rc = rp_buffer_register_2d(g, "B", b, n, n, 8, &B)) ||
      (rc = rp_buffer_register(g, "sums", sums, 8 * ex_jacobi2d_nsums(p),
                               &S)))
    return rc;
  for (unsigned s = 1; s <= p->steps; s++) {
    for (uint64_t i = 0; i < nb; i++) {
      uint64_t r0 = n * i / nb, r1 = n * (i + 1) / nb;
      rp_arg args[4];
      args[0] = rp_arg_buf(rp_box2(A, r0, r1, 0, n));
      args[1] = rp_arg_buf(rp_box2(B, r0, r1, 0, n));
      args[2] = rp_arg_i64((int64_t)n);
      args[3] = rp_arg_i64((int64_t)r0);
      rc = rp_record_kernel(g, &jac_copy_k, p->device,
                            rp_dims3(n, r1 - r0, 1), args, NULL, NULL);
      if (rc)
        return rc;
    }
    for (uint64_t i = 0; i < nb; i++) {
      uint64_t r0 = 1 + (n - 2) * i / nb, r1 = 1 + (n - 2) * (i + 1) / nb;
      rp_arg args[4];
      args[0] = rp_arg_buf(rp_box2(B, r0 - 1, r1 + 1, 0, n));
      args[1] = rp_arg_buf(rp_box2(A, r0, r1, 1, n - 1));
      args[2] = rp_arg_i64((int64_t)n);
      args[3] = rp_arg_i64((int64_t)r0);
      rc = rp_record_kernel(g, &jac_sten_k, p->device,
                            rp_dims3(n - 2, r1 - r0, 1), args, NULL, NULL);
      if (rc)
        return rc;
    }
    if (p->every && s % p->every == 0) {
      uint64_t k = s / p->every - 1;
      rp_access acc[2];
      acc[0].region = rp_whole(A);
      acc[0].mode = RP_IN;
      acc[1].region = rp_bytes(S, 8 * k, 8);
      acc[1].mode = RP_OUT;
      rc = rp_record_host(g, jac_sum, (void *)(uintptr_t)((k << 48) | n), acc,
                          2, NULL, NULL);
      if (rc)
        return rc;
    }
  }
  if ((rc = rp_record_sync_host(g, rp_whole(A), NULL)))
    return rc;
  return rp_record_sync_host(g, rp_whole(B), NULL);
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

/* ---- the common driver of the example programs ---- */

void ex_usage_common(FILE *fp) {
  fprintf(fp,
          "  --backend NAME  openmp, cuda, xrt, reference or auto (default)\n"
          "  --iters N       replays of the recorded graph\n"
          "  --threads N     openmp threads (default: all cores)\n"
          "  --dot FILE      write the analysed graph (Graphviz)\n"
          "  --trace FILE    write the schedule (Chrome trace JSON)\n"
          "  --help          this text\n");
}

int ex_parse_common(int argc, char **argv, int *i, ex_opts *o) {
  const char *f = argv[*i];
  const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
  int known = !strcmp(f, "--backend") || !strcmp(f, "--iters") ||
              !strcmp(f, "--threads") || !strcmp(f, "--dot") ||
              !strcmp(f, "--trace");
  if (!known)
    return 0;
  if (!v)
    return -1;
  (*i)++;
  if (!strcmp(f, "--backend"))
    o->backend = v;
  else if (!strcmp(f, "--dot"))
    o->dot = v;
  else if (!strcmp(f, "--trace"))
    o->trace = v;
  else {
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < 0 || x > 1000000)
      return -1;
    if (!strcmp(f, "--iters"))
      o->iters = (unsigned)x;
    else
      o->threads = (int)x;
  }
  return 1;
}

typedef struct ex_snap {
  uint32_t nb;
  void **host;
  uint64_t *bytes;
  unsigned char **copy;
} ex_snap;

static void snap_free(ex_snap *s) {
  for (uint32_t b = 0; b < s->nb; b++)
    free(s->copy[b]);
  free(s->copy);
  free(s->host);
  free(s->bytes);
}

static int snap_init(ex_snap *s, const rp_graph *g) {
  s->nb = rp_graph_num_buffers(g);
  s->host = (void **)calloc(s->nb + 1, sizeof(void *));
  s->bytes = (uint64_t *)calloc(s->nb + 1, sizeof(uint64_t));
  s->copy = (unsigned char **)calloc(s->nb + 1, sizeof(unsigned char *));
  if (!s->host || !s->bytes || !s->copy)
    return -1;
  for (uint32_t b = 0; b < s->nb; b++) {
    rp_buffer_desc d;
    rp_buffer_info(g, b, &d);
    s->host[b] = d.host;
    s->bytes[b] = d.bytes;
    if (d.host && !(s->copy[b] = (unsigned char *)malloc(d.bytes)))
      return -1;
    if (d.host)
      memcpy(s->copy[b], d.host, d.bytes);
  }
  return 0;
}

/* Name of the first buffer whose host image differs from the snapshot. */
int ex_close(const double *a, const double *b, uint64_t n, double rtol,
             double *worst) {
  int ok = 1;
  for (uint64_t i = 0; i < n; i++) {
    double d = fabs(a[i] - b[i]), m = fmax(fabs(a[i]), fabs(b[i]));
    double r = m > 0 ? d / m : 0;
    if (r > *worst)
      *worst = r;
    if (d > rtol * m)
      ok = 0;
  }
  return ok;
}

/* The first buffer that differs from the snapshot (beyond rtol, for
 * buffers of doubles, when rtol > 0), or NULL; *worst gets the largest
 * relative difference of doubles that are not bit-identical. */
static const char *snap_diff(const ex_snap *s, const rp_graph *g,
                             double rtol, double *worst) {
  *worst = 0;
  for (uint32_t b = 0; b < s->nb; b++) {
    if (!s->host[b] || !memcmp(s->copy[b], s->host[b], s->bytes[b]))
      continue;
    if (rtol > 0 && s->bytes[b] % sizeof(double) == 0 &&
        ex_close((const double *)s->copy[b], (const double *)s->host[b],
                 s->bytes[b] / sizeof(double), rtol, worst))
      continue;
    static rp_buffer_desc d;
    rp_buffer_info(g, b, &d);
    return d.name;
  }
  return NULL;
}

static int timed_run(rp_exec *x, unsigned iters, ex_init_fn init, void *ctx,
                     double *us) {
  init(ctx);
  rp_status rc = rp_exec_run(x, iters);
  *us = rp_exec_last_us(x);
  if (rc)
    fprintf(stderr, "replay failed: %s: %s\n", rp_strerror(rc),
            rp_exec_error(x));
  return rc ? 2 : 0;
}

static rp_exec *make_exec(const rp_graph *g, const rp_backend *be,
                          const ex_opts *o, const char *mode) {
  rp_exec_opts eo;
  rp_exec *x = NULL;
  memset(&eo, 0, sizeof eo);
  eo.mode = mode;
  eo.nthreads = mode ? 0 : o->threads;
  rp_status rc = rp_exec_create(&x, g, be, &eo);
  if (rc) {
    fprintf(stderr, "%s backend: %s: %s\n", rp_backend_name(be),
            rp_strerror(rc), rp_last_error());
    rp_exec_destroy(x);
    return NULL;
  }
  return x;
}

/* The openmp backend runs a device's kernels on its group of threads: the
 * analysis gets one compute lane per thread (its "compute units"), kernels
 * taken in turn. A kernel the backend splits over the team is still
 * counted whole on one lane: the model sees concurrency between kernels,
 * not inside one. */
static void cpu_lanes(const rp_graph *g, const ex_opts *o,
                      rp_analysis_opts *ao, unsigned *units) {
  long t = o->threads > 0 ? o->threads : sysconf(_SC_NPROCESSORS_ONLN);
  unsigned nd = rp_graph_num_devices(g) ? rp_graph_num_devices(g) : 1;
  long per = t / (long)nd > 1 ? t / (long)nd : 1;
  for (unsigned d = 0; d < nd; d++)
    units[d] = (unsigned)per;
  ao->compute_units = units;
  ao->ncompute_units = nd;
}

int ex_run_compare(rp_graph *g, const ex_opts *o, ex_init_fn init,
                   int (*check)(void *ctx), void *ctx) {
  const rp_backend *be = NULL, *ref = NULL;
  rp_exec *x = NULL, *xs = NULL;
  rp_analysis *an = NULL;
  ex_snap snap;
  int ret = 2;
  unsigned iters = o->iters ? o->iters : 1;
  uint32_t nn = rp_graph_num_nodes(g);
  double *op_us = (double *)calloc(nn + 1, sizeof(double));
  double t_ser = 0, t_par = 0, worst = 0;
  unsigned units[RP_MAX_DEVICES];
  char within[96] = "";
  const char *bad = NULL;
  int chk = 0;
  rp_analysis_opts ao;
  rp_summary sm;
  memset(&snap, 0, sizeof snap);
  rp_status rc = rp_backend_find(o->backend, &be);
  if (rc || rp_backend_find("reference", &ref)) {
    fprintf(stderr, "backend %s: %s\n", o->backend ? o->backend : "auto",
            rp_strerror(rc));
    goto out;
  }
  /* The oracle: the reference replay, snapshotted. */
  init(ctx);
  if ((rc = rp_replay_reference(g, iters)) || snap_init(&snap, g)) {
    fprintf(stderr, "reference replay failed: %s\n", rp_strerror(rc));
    goto out;
  }
  if (!(x = make_exec(g, be, o, NULL)) || timed_run(x, iters, init, ctx,
                                                    &t_par))
    goto out;
  bad = snap_diff(&snap, g, o->rtol, &worst);
  chk = bad || !check ? 0 : check(ctx);
  if (!bad && worst > 0)
    snprintf(within, sizeof within, " within %.0e (largest relative "
             "difference %.1e)", o->rtol, worst);
  printf("%s replay vs reference: %s%s%s%s\n", rp_backend_name(be),
         bad ? "DIFFERENT in buffer " : "identical", bad ? bad : "", within,
         check ? (chk ? "; plain C check: DIFFERENT" :
                  "; plain C check: identical") : "");
  if (bad || chk) {
    ret = 1;
    goto out;
  }
  /* Serial baseline (one thread / one stream, program order), profile. */
  if (!(xs = make_exec(g, be, o, "serial")) ||
      timed_run(xs, iters, init, ctx, &t_ser) ||
      timed_run(x, iters, init, ctx, &t_par))
    goto out;
  if ((rc = rp_exec_profile(xs, op_us))) {
    fprintf(stderr, "profile: %s\n", rp_strerror(rc));
    goto out;
  }
  rp_analysis_opts_init(&ao);
  ao.measured_us = op_us;
  if (!strcmp(rp_backend_name(be), "openmp"))
    cpu_lanes(g, o, &ao, units);
  if ((rc = rp_analyze(g, &ao, &an))) {
    fprintf(stderr, "analysis: %s\n", rp_strerror(rc));
    goto out;
  }
  rp_analysis_write_text(an, stdout);
  if (o->dot || o->trace) {
    FILE *fp;
    fp = fopen(o->dot ? o->dot : o->trace, "w");
    if (!fp || (o->dot ? rp_analysis_write_dot(an, fp)
                       : rp_analysis_write_trace(an, fp)))
      fprintf(stderr, "cannot write %s\n", o->dot ? o->dot : o->trace);
    if (fp)
      fclose(fp);
    if (o->dot && o->trace && (fp = fopen(o->trace, "w"))) {
      rp_analysis_write_trace(an, fp);
      fclose(fp);
    }
  }
  rp_analysis_summary(an, &sm);
  printf("serial replay      %10.3f ms  (%u replays, one at a time, "
         "program order)\n", t_ser / 1e3, iters);
  printf("overlapped replay  %10.3f ms  (%s)\n", t_par / 1e3,
         rp_backend_name(be));
  printf("achieved speedup   %10.2fx\n", t_par > 0 ? t_ser / t_par : 0.0);
  printf("predicted speedup  %10.2fx  bound %.2fx (limited by %s)\n",
         sm.predicted_speedup, sm.bound, sm.limited_by);
  ret = 0;
out:
  rp_analysis_destroy(an);
  rp_exec_destroy(x);
  rp_exec_destroy(xs);
  snap_free(&snap);
  free(op_us);
  return ret;
}
