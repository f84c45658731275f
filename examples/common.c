/* The common driver of the example programs: options, the reference
 * comparison, timing, analysis. Valid C and C++ (built by nvcc). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <dirent.h>
#endif
#include "examples.h"
#include "reprise/backend.h"

/* Prints "  --name ARG" padded, then the help. */
static void put_flag(FILE *fp, const char *name, const char *arg,
                     const char *help) {
  char left[40];
  snprintf(left, sizeof left, "%s%s%s", name, arg ? " " : "", arg ? arg : "");
  fprintf(fp, "  %-17s %s\n", left, help);
}

static void usage(FILE *fp, const char *prog, const ex_flag *f, unsigned nf) {
  fprintf(fp, "usage: %s [options]\n", prog);
  for (unsigned k = 0; k < nf; k++)
    put_flag(fp, f[k].name, f[k].arg, f[k].help);
  put_flag(fp, "--backend", "NAME",
           "openmp, cuda, xrt, starpu, reference or auto (default;\n"
           "                    RP_BACKEND; starpu only when named)");
  put_flag(fp, "--iters", "N", "replays of the recorded graph");
  put_flag(fp, "--threads", "N", "openmp threads (default: all cores)");
  put_flag(fp, "--pairs", "N",
           "timed serial/overlapped pairs, alternating (default 5, <= 31)");
  put_flag(fp, "--dot", "FILE", "write the analysed graph (Graphviz)");
  put_flag(fp, "--trace", "FILE", "write the schedule (Chrome trace JSON)");
  put_flag(fp, "--save", "FILE",
           "write the graph with its measured costs (JSON)");
  put_flag(fp, "--calibrate", NULL,
           "calibrate the machine model again (else: once, cached)");
  put_flag(fp, "--reshape-copies", NULL,
           "merge small copies in, split copies back per writer (the "
           "default on cuda)");
  put_flag(fp, "--no-reshape", NULL, "keep the copies as recorded");
  put_flag(fp, "--help", NULL, "this text");
}

/* Timed pairs of a serial and an overlapped run, alternating: at most
 * EX_PAIRS_MAX, --pairs (default EX_PAIRS). */
#define EX_PAIRS 5
#define EX_PAIRS_MAX 31
static unsigned ex_pairs = EX_PAIRS;

/* A whole decimal number in [min, max], or -1. */
static int number(const char *v, uint64_t min, uint64_t max, uint64_t *out) {
  char *end;
  if (!v || !*v || *v == '-')
    return -1;
  unsigned long long x = strtoull(v, &end, 10);
  if (*end || x < min || x > max)
    return -1;
  *out = x;
  return 0;
}

int ex_parse(int argc, char **argv, const char *prog, const ex_flag *f,
             unsigned nf, ex_opts *o) {
  ex_pairs = EX_PAIRS; /* each parse starts from the default */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    uint64_t x;
    unsigned k = 0;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout, prog, f, nf);
      return 1;
    }
    if (!strcmp(a, "--backend") || !strcmp(a, "--dot") ||
        !strcmp(a, "--trace") || !strcmp(a, "--save")) {
      if (!v)
        goto bad_value;
      *(a[2] == 'b'   ? &o->backend
        : a[2] == 'd' ? &o->dot
        : a[2] == 's' ? &o->save
                      : &o->trace) = v;
      i++;
      continue;
    }
    if (!strcmp(a, "--iters") || !strcmp(a, "--threads")) {
      if (number(v, a[2] == 'i', 1000000, &x))
        goto bad_value;
      if (a[2] == 'i')
        o->iters = (unsigned)x;
      else
        o->threads = (int)x;
      i++;
      continue;
    }
    if (!strcmp(a, "--pairs")) {
      if (number(v, 1, EX_PAIRS_MAX, &x))
        goto bad_value;
      ex_pairs = (unsigned)x;
      i++;
      continue;
    }
    if (!strcmp(a, "--calibrate")) {
      o->calibrate = 1;
      continue;
    }
    if (!strcmp(a, "--reshape-copies") || !strcmp(a, "--no-reshape")) {
      o->reshape = a[2] == 'r' ? 1 : -1;
      continue;
    }
    while (k < nf && strcmp(a, f[k].name))
      k++;
    if (k == nf) {
      fprintf(stderr, "%s: unknown option '%s'\n", prog, a);
      usage(stderr, prog, f, nf);
      return 2;
    }
    if (!f[k].arg) { /* a switch */
      *(int *)f[k].value = 1;
      continue;
    }
    if (number(v, f[k].min, f[k].max, &x))
      goto bad_value;
    if (f[k].wide)
      *(uint64_t *)f[k].value = x;
    else
      *(unsigned *)f[k].value = (unsigned)x;
    i++;
    continue;
  bad_value:
    fprintf(stderr, "%s: %s needs %s\n", prog, a,
            !strcmp(a, "--backend") || !strcmp(a, "--dot") ||
                    !strcmp(a, "--trace") || !strcmp(a, "--save")
                ? "a value"
                : "a whole number in range");
    return 2;
  }
  return 0;
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
static const char *snap_diff(const ex_snap *s, const rp_graph *g, double rtol,
                             double *worst) {
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

/* Median of n times (n <= EX_PAIRS_MAX). */
static double ex_median(const double *t, unsigned n) {
  double v[EX_PAIRS_MAX];
  memcpy(v, t, n * sizeof *v);
  for (unsigned i = 1; i < n; i++)
    for (unsigned j = i; j > 0 && v[j] < v[j - 1]; j--) {
      double w = v[j];
      v[j] = v[j - 1];
      v[j - 1] = w;
    }
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The fewest and the most of n times. */
static void ex_range(const double *t, unsigned n, double *lo, double *hi) {
  *lo = *hi = t[0];
  for (unsigned i = 1; i < n; i++) {
    *lo = t[i] < *lo ? t[i] : *lo;
    *hi = t[i] > *hi ? t[i] : *hi;
  }
}

/* How long this process's threads have waited runnable on a CPU's run
 * queue, in ms (Linux: the second field of /proc/self/task/<tid>/schedstat;
 * a thread waits there while the CPU runs another thread, of this process
 * or not); -1 where unknown. */
static double ex_runq_ms(void) {
#ifdef __linux__
  DIR *d = opendir("/proc/self/task");
  double ns = 0;
  int any = 0;
  struct dirent *e;
  if (!d)
    return -1;
  while ((e = readdir(d))) {
    char path[64];
    unsigned long long run, wait;
    FILE *fp;
    if (e->d_name[0] == '.')
      continue;
    snprintf(path, sizeof path, "/proc/self/task/%.20s/schedstat", e->d_name);
    if (!(fp = fopen(path, "r")))
      continue;
    if (fscanf(fp, "%llu %llu", &run, &wait) == 2) {
      ns += (double)wait;
      any = 1;
    }
    fclose(fp);
  }
  closedir(d);
  return any ? ns / 1e6 : -1;
#else
  return -1;
#endif
}

/* Init, then iters replays on x, timed (*us); waited non-NULL: adds the
 * run-queue wait of the replays to it (-1 once unknown). */
static int timed_run(rp_exec *x, unsigned iters, ex_init_fn init, void *ctx,
                     double *us, double *waited) {
  init(ctx);
  double w0 = waited ? ex_runq_ms() : 0;
  rp_status rc = rp_exec_run(x, iters);
  double w1 = waited ? ex_runq_ms() : 0;
  *us = rp_exec_last_us(x);
  if (waited)
    *waited = w0 < 0 || w1 < 0 || *waited < 0 ? -1 : *waited + (w1 - w0);
  if (rc)
    fprintf(stderr, "replay failed: %s: %s\n", rp_strerror(rc),
            rp_exec_error(x));
  return rc ? 2 : 0;
}

static rp_exec *make_exec(const rp_graph *g, const rp_backend *be,
                          const ex_opts *o, const char *mode) {
  rp_exec_opts eo;
  rp_exec *x = NULL;
  rp_exec_opts_init(&eo);
  eo.mode = mode;
  /* --threads is the openmp backend's (rp_exec_create() refuses an
   * option the backend does not take). */
  if (!mode && (rp_backend_options(be) & RP_EXEC_OPT_NTHREADS))
    eo.nthreads = o->threads;
  /* Several logical GPUs on a machine with fewer: fold them onto the GPUs
   * present, and say so (the backend's note). */
  eo.device_fold = 1;
  /* --reshape-copies, --no-reshape, else the backend's default (cuda
   * reshapes): the serial replay too, so that its profile is of the graph
   * the overlapped replay runs (the analysis describes that one). */
  if (o->reshape)
    eo.reshape_copies =
        o->reshape > 0 ? RP_EXEC_RESHAPE_AUTO : RP_EXEC_RESHAPE_NONE;
  rp_status rc = rp_exec_create(&x, g, be, &eo);
  if (rc) {
    fprintf(stderr, "%s backend: %s: %s\n", rp_backend_name(be),
            rp_strerror(rc), rp_last_error());
    rp_exec_destroy(x);
    return NULL;
  }
  if (!mode && rp_exec_notice(x)[0]) /* the backend's note (folding) */
    printf("%s\n", rp_exec_notice(x));
  return x;
}

/* The serial baseline: the backend's mode "serial" (one thread, one
 * stream, program order). A backend that refuses the mode (starpu: its
 * modes are explicit, implicit and mpi) is compared with the reference
 * backend's sequential replay instead, and the program says so. */
static rp_exec *serial_exec(const rp_graph *g, const rp_backend *be,
                            const ex_opts *o) {
  const rp_backend *ref = NULL;
  rp_exec_opts eo;
  rp_exec *x = NULL;
  rp_exec_opts_init(&eo);
  eo.mode = "serial";
  eo.device_fold = 1;
  rp_status rc = rp_exec_create(&x, g, be, &eo);
  char why[256];
  snprintf(why, sizeof why, "%s", rp_last_error());
  if (rc != RP_EINVAL || rp_backend_find("reference", &ref) != RP_OK)
    return rc ? make_exec(g, be, o, "serial") : x;
  printf("serial baseline: the reference backend (%s)\n", why);
  return make_exec(g, ref, o, "serial");
}

/* What the backend runs: the plan's size, and the recorder's coherence
 * warnings. */
static void print_plan(const rp_graph *g, const rp_exec *x) {
  const rp_plan *p = rp_exec_plan(x);
  printf("plan: %u nodes from %u recorded operations (%u copies elided: "
         "their spaces share memory), %u images\n",
         p->nnode, rp_graph_num_nodes(g), p->nelided, p->nimage);
  uint32_t merged, split;
  if (rp_exec_copies_reshaped(x, &merged, &split))
    printf("copies reshaped: %u merged into an earlier copy, %u split per "
           "writer\n",
           merged, split);
  for (unsigned i = 0; i < rp_graph_num_warnings(g); i++)
    printf("warning: %s\n", rp_graph_warning(g, i));
  /* Device memory: the byte spans the images touch, against whole
   * buffers (a backend may allocate only the spans: cuda does). */
  for (unsigned d = 0; d < p->ndev && d < 64; d++) {
    uint64_t span = 0, whole = 0;
    for (uint32_t i = 0; i < p->nimage; i++) {
      const rp_plan_image *im = &p->image[i];
      if (im->space != (int)d || (im->flags & RP_IMAGE_HOST_MEMORY))
        continue;
      span += im->hi - im->lo;
      whole += im->bytes;
    }
    if (whole)
      printf("device %u images: %.3f MiB touched of %.3f MiB whole "
             "buffers\n",
             d, span / 1048576.0, whole / 1048576.0);
  }
}

/* The launch geometry the backend chose per distinct kernel (CUDA): "block
 * shapes: name WxHxD (occupancy X%, reason)"; nothing where the backend
 * has none. */
static void print_blocks(const rp_graph *g, rp_exec *x) {
  uint32_t nn = rp_graph_num_nodes(g);
  const rp_kernel **seen = (const rp_kernel **)calloc(nn + 1, sizeof *seen);
  unsigned ns = 0;
  if (!seen)
    return;
  for (rp_node n = 0; n < nn; n++) {
    rp_node_info ni;
    rp_kernel_block kb;
    if (rp_node_info_get(g, n, &ni) != RP_OK || !ni.kernel)
      continue;
    unsigned i = 0;
    while (i < ns && seen[i] != ni.kernel)
      i++;
    if (i < ns || rp_exec_kernel_block(x, n, &kb) != RP_OK)
      continue;
    seen[ns++] = ni.kernel;
    if (ns == 1)
      printf("block shapes:\n");
    char occ[32] = "occupancy unknown";
    if (kb.occupancy >= 0)
      snprintf(occ, sizeof occ, "occupancy %.0f%%", kb.occupancy * 100);
    printf("  %-16s %ux%ux%u (%s, %s)\n", ni.kernel->name, kb.block[0],
           kb.block[1], kb.block[2], occ, kb.reason);
  }
  free(seen);
}

/* Costs at both thread counts, as bench_predict takes them: EX_ROUNDS
 * alternating rounds of a profiled serial replay (one operation at a
 * time) and, on a team of threads, an overlapped replay timed per
 * operation (rp_exec_profile_team()), so that a change of the load moves
 * one round, not one profile; per operation the median, smallest and
 * largest of the rounds (s: serial, t: team), and the team's share of its
 * cores, the median over its rounds (one preempted round does not
 * withhold a quiet machine's prediction). */
#define EX_ROUNDS 5
typedef struct ex_prof {
  double *s[3], *t[3]; /* median, min, max per op; t[0] NULL: no team */
  double share;
} ex_prof;

static void prof_free(ex_prof *p) {
  for (int i = 0; i < 3; i++) {
    free(p->s[i]);
    free(p->t[i]);
  }
}

/* Per op v of n, the median, smallest and largest of the EX_ROUNDS
 * rounds r[k * n + v] into out[0..2]. */
static void round_stats(const double *r, uint32_t n, double *const out[3]) {
  double col[EX_ROUNDS];
  for (uint32_t v = 0; v < n; v++) {
    for (unsigned k = 0; k < EX_ROUNDS; k++)
      col[k] = r[(size_t)k * n + v];
    out[0][v] = ex_median(col, EX_ROUNDS);
    ex_range(col, EX_ROUNDS, &out[1][v], &out[2][v]);
  }
}

static int profile_rounds(rp_exec *xs, rp_exec *x, int team, uint32_t nn,
                          ex_prof *p) {
  double *rs = (double *)calloc((size_t)nn * EX_ROUNDS + 1, sizeof *rs);
  double *rt = (double *)calloc((size_t)nn * EX_ROUNDS + 1, sizeof *rt);
  int bad = !rs || !rt;
  unsigned nsh = 0;
  double shs[EX_ROUNDS];
  for (int i = 0; i < 3 && !bad; i++)
    bad = !(p->s[i] = (double *)calloc(nn + 1, sizeof(double))) ||
          (team && !(p->t[i] = (double *)calloc(nn + 1, sizeof(double))));
  rp_profile_opts po = RP_PROFILE_OPTS_INIT;
  po.runs = 1;
  rp_status rc = RP_OK;
  for (unsigned k = 0; k < EX_ROUNDS && !bad && rc == RP_OK; k++) {
    double sh = 0;
    rc = rp_exec_profile_opts(xs, &po, rs + (size_t)k * nn, NULL, NULL);
    if (rc == RP_OK && team)
      rc = rp_exec_profile_team(x, 1, rt + (size_t)k * nn, NULL, NULL, &sh);
    if (sh > 0)
      shs[nsh++] = sh;
  }
  if (!bad && rc == RP_OK) {
    round_stats(rs, nn, p->s);
    if (team)
      round_stats(rt, nn, p->t);
    p->share = nsh ? ex_median(shs, nsh) : 0;
  }
  free(rs);
  free(rt);
  if (bad || rc) {
    fprintf(stderr, "profile: %s\n", bad ? "out of memory" : rp_strerror(rc));
    return 1;
  }
  return 0;
}

/* The profile's figures of the operations plan p elides set to 0. */
static void zero_elided(const rp_plan *p, uint32_t nn, ex_prof *prof) {
  for (uint32_t v = 0; p && p->node_of && v < nn; v++)
    for (int i = 0; i < 3 && p->node_of[v] == RP_NONE; i++) {
      prof->s[i][v] = 0;
      if (prof->t[i])
        prof->t[i][v] = 0;
    }
}

/* Writes g with the costs of the profile attached: the serial ones, and
 * the team's with its threads, for `reprise analyze --backend`. */
static int save_measured(rp_graph *g, const char *path, const ex_prof *p,
                         const rp_backend *be, unsigned threads) {
  FILE *fp;
  const char *name = rp_backend_name(be);
  rp_status rc = rp_graph_set_measured_all(g, p->s[0], p->s[1], p->s[2],
                                           EX_ROUNDS, name, NULL);
  if (!rc && p->t[0] && threads)
    rc = rp_graph_set_team_measured_all(g, p->t[0], p->t[1], p->t[2], EX_ROUNDS,
                                        threads, p->share, name, NULL);
  if (rc || !(fp = fopen(path, "w"))) {
    fprintf(stderr, "cannot save %s: %s\n", path,
            rc ? rp_strerror(rc) : "cannot open");
    return 1;
  }
  rc = rp_graph_write_json(g, fp);
  if (fclose(fp) || rc) {
    fprintf(stderr, "cannot write %s\n", path);
    return 1;
  }
  return 0;
}

/* The progress line of a calibration on first use. */
static void progress(void *user, const char *line) {
  (void)user;
  printf("%s\n", line);
  fflush(stdout);
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
  double t_ser[EX_PAIRS_MAX], t_par[EX_PAIRS_MAX], t_first = 0, worst = 0;
  double lo, hi, wait_ser = 0, wait_par = 0;
  const unsigned np = ex_pairs;
  unsigned units[RP_MAX_DEVICES];
  char within[96] = "";
  const char *bad = NULL;
  int chk = 0;
  rp_analysis_opts ao;
  rp_analysis_opts_init(&ao);
  rp_model model;
  rp_model_opts mo;
  rp_achieved ach;
  ex_prof prof;
  memset(&prof, 0, sizeof prof);
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
  if (!(x = make_exec(g, be, o, NULL)) ||
      timed_run(x, iters, init, ctx, &t_first, NULL))
    goto out;
  print_plan(g, x);
  bad = snap_diff(&snap, g, o->rtol, &worst);
  chk = bad || !check ? 0 : check(ctx);
  if (!bad && worst > 0)
    snprintf(within, sizeof within,
             " within %.0e (largest relative "
             "difference %.1e)",
             o->rtol, worst);
  printf("%s replay vs reference: %s%s%s%s\n", rp_backend_name(be),
         bad ? "DIFFERENT in buffer " : "identical", bad ? bad : "", within,
         check ? (chk ? "; plain C check: DIFFERENT"
                      : "; plain C check: identical")
               : "");
  if (bad || chk) {
    ret = 1;
    goto out;
  }
  /* Serial baseline (one thread / one stream, program order) and the
   * overlapped replay, timed in alternating pairs (the first overlapped
   * run above, cold, is not one of them); then the profile. */
  if (!(xs = serial_exec(g, be, o)))
    goto out;
  for (unsigned k = 0; k < np; k++)
    if (timed_run(xs, iters, init, ctx, &t_ser[k], &wait_ser) ||
        timed_run(x, iters, init, ctx, &t_par[k], &wait_par))
      goto out;
  /* Costs: alternating rounds of the serial profile and, on a team of
   * threads, of the team's (the costs at the replay's thread count). The
   * analysis is told what the overlapped exec really runs (threads,
   * device groups, mode) and the machine model calibrated for the
   * backend, if any. */
  if (profile_rounds(xs, x, !strcmp(rp_backend_name(be), "openmp"), nn, &prof))
    goto out;
  /* The machine model of the backend as x runs it: cached, or
   * calibrated now (once per machine and configuration). */
  rp_model_opts_init(&mo);
  mo.flags = o->calibrate ? RP_MODEL_REFRESH : 0;
  mo.progress = progress;
  if ((rc = rp_analysis_opts_calibrated(&ao, &model, units, x, &mo)))
    fprintf(stderr, "calibration: %s (the model stays uncalibrated)\n",
            rp_strerror(rc));
  /* --save: the graph with these costs (the team's with its threads),
   * for `reprise analyze --backend` later: the same prediction. A copy
   * the plan elides costs nothing in the analysis of the exec, whatever
   * its profile says (its bookkeeping): saved so, the file's analysis,
   * which has no plan, elides it too. */
  if (rp_exec_graph(x) == g)
    zero_elided(rp_exec_plan(x), nn, &prof);
  if (o->save && save_measured(g, o->save, &prof, be, model.host_units))
    goto out;
  ao.measured_us = prof.s[0];
  ao.measured_min_us = prof.s[1];
  ao.measured_max_us = prof.s[2];
  ao.team_us = prof.t[0];
  ao.team_min_us = prof.t[1];
  ao.team_max_us = prof.t[2];
  ao.team_share = prof.t[0] ? prof.share : 0;
  /* The graph the exec really replays (its copies reshaped on cuda),
   * with the serial replay's costs carried onto it. */
  if ((rc = rp_analyze_exec(x, &ao, &an))) {
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
  /* Where the backend records an achieved timeline: the trace shows it
   * beside the prediction, and the largest departures are listed. */
  if (o->trace && rp_exec_graph(x) != g)
    printf("trace: the achieved timeline is per recorded operation, the "
           "analysis of the replayed graph (--no-reshape gives both)\n");
  if (o->trace && rp_exec_graph(x) == g) {
    double *ts = (double *)calloc(nn + 1, sizeof(double));
    double *te = (double *)calloc(nn + 1, sizeof(double));
    FILE *fp;
    if (ts && te && rp_exec_timeline(x, ts, te) == RP_OK &&
        (fp = fopen(o->trace, "w"))) {
      rp_analysis_write_trace_achieved(an, ts, te, fp);
      fclose(fp);
      rp_analysis_write_departures(an, ts, te, 5, stdout);
    }
    free(ts);
    free(te);
  }
  /* Each median with its spread, apart: a spread of the achieved speedup
   * is then seen to come from the serial or the overlapped replays. */
  ex_range(t_ser, np, &lo, &hi);
  printf("\nserial replay      %10.3f ms  (%u replays, one at a time, "
         "program order; median of %u, %.3f - %.3f ms)\n",
         ex_median(t_ser, np) / 1e3, iters, np, lo / 1e3, hi / 1e3);
  ex_range(t_par, np, &lo, &hi);
  printf("overlapped replay  %10.3f ms  (%s; median of %u, %.3f - %.3f ms; "
         "the first, untimed in the pairs: %.3f ms)\n",
         ex_median(t_par, np) / 1e3, rp_backend_name(be), np, lo / 1e3,
         hi / 1e3, t_first / 1e3);
  /* Threads runnable but not running while the pairs ran: a CPU shared
   * with another thread (another process's, or two of the team's). */
  if (wait_ser >= 0 && wait_par >= 0)
    printf("run-queue wait     %10.3f ms  serial, %.3f ms overlapped (this "
           "process's threads runnable, their CPU another's; %u pairs)\n",
           wait_ser, wait_par, np);
  if (rp_achieved_compute(an, t_ser, t_par, np, &ach) == RP_OK) {
    rp_achieved_compare_serial(&ach, an, ex_median(t_ser, np) / iters);
    rp_analysis_write_achieved(an, &ach, stdout);
  }
  print_blocks(g, x);
  ret = 0;
out:
  rp_analysis_destroy(an);
  rp_exec_destroy(x);
  rp_exec_destroy(xs);
  snap_free(&snap);
  prof_free(&prof);
  return ret;
}
