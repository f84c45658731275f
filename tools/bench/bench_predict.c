/* The prediction suite (issue 24): workloads the machine model was never
 * tuned on (tools/bench/predict_workloads.c), each replayed on a backend
 * at several thread counts; per row the headline prediction of the
 * analysis (the model calibrated on first use; costs, per operation the
 * median of 7 alternating rounds of a profiled serial replay and, on a
 * team, an overlapped replay timed per operation: issue 33) with the
 * range of the rounds' own predictions, the achieved speedup (median of alternating timed pairs,
 * serial / overlapped, with its min-max) and the error
 * (predicted - achieved) / achieved; "withheld" (with the load measured
 * and the error the withheld figure would have) when the machine was busy;
 * the serial replay timed over the one predicted from the profile ("off"
 * beyond 20 %); the team share: its threads' running time over running
 * plus waiting for a core during the profiled and during the timed
 * overlapped replays (1: never preempted). Prints a Markdown table and, per thread count, the median
 * and the largest |error|.
 *
 * usage: bench_predict [--backend B] [--threads 1,2,...] [--pairs N]
 *                      [--iters N] [--only NAME,...] [--scale N]
 *                      [--save DIR] [--no-check]
 * scripts/bench_predict.sh regenerates docs/benchmarks.md's table. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <string.h>
#include <unistd.h>
#include "bench_check.h"
#include "predict_workloads.h"

#define MAXT 16
#define MAXPAIRS 31
#define ROUNDS 7 /* profiled rounds: a serial and a team replay each */

typedef struct cfg {
  const char *backend, *only, *save, *set;
  unsigned threads[MAXT], nthreads, pairs, iters, scale;
  int check;
} cfg;

static void progress(void *user, const char *line) {
  (void)user;
  fprintf(stderr, "%s\n", line);
}

static int wanted(const cfg *c, const char *name) {
  if (!c->only)
    return 1;
  size_t n = strlen(name);
  for (const char *p = c->only; *p;) {
    const char *e = strchr(p, ',');
    size_t k = e ? (size_t)(e - p) : strlen(p);
    if (k == n && !strncmp(p, name, n))
      return 1;
    p += k + (e ? 1 : 0);
  }
  return 0;
}

/* The host arrays after one replay of x, against one of the reference,
 * from the same data: 0 when identical byte for byte. */
static int differs(rp_graph *g, const pw_workload *w, void *st, rp_exec *x) {
  uint32_t nb = rp_graph_num_buffers(g);
  unsigned char **ref = (unsigned char **)calloc(nb + 1, sizeof *ref);
  int bad = !ref;
  w->reset(st);
  RK(rp_replay_reference(g, 1));
  for (uint32_t b = 0; !bad && b < nb; b++) {
    rp_buffer_desc d;
    RK(rp_buffer_info(g, b, &d));
    if (!d.host)
      continue;
    if (!(ref[b] = (unsigned char *)malloc(d.bytes)))
      bad = 1;
    else
      memcpy(ref[b], d.host, d.bytes);
  }
  w->reset(st);
  RK(rp_exec_run(x, 1));
  for (uint32_t b = 0; !bad && b < nb; b++) {
    rp_buffer_desc d;
    RK(rp_buffer_info(g, b, &d));
    if (ref[b] && memcmp(ref[b], d.host, d.bytes)) {
      fprintf(stderr, "%s: buffer %s differs from the reference\n", w->name,
              d.name);
      bad = 1;
    }
  }
  for (uint32_t b = 0; ref && b < nb; b++)
    free(ref[b]);
  free(ref);
  return bad;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Per operation v of n: the median, smallest and largest of the ROUNDS
 * rounds t[k * n + v] (mn, mx may be NULL); col: ROUNDS scratch. */
static void stats(const double *t, uint32_t n, double *col, double *med,
                  double *mn, double *mx) {
  for (uint32_t v = 0; v < n; v++) {
    for (unsigned k = 0; k < ROUNDS; k++)
      col[k] = t[(size_t)k * n + v];
    qsort(col, ROUNDS, sizeof *col, cmp_dbl);
    med[v] = col[ROUNDS / 2];
    if (mn)
      mn[v] = col[0];
    if (mx)
      mx[v] = col[ROUNDS - 1];
  }
}

typedef struct row {
  double pred, plo, phi, ach, lo, hi, err, bound, serial_ratio, share, pshare;
  int withheld, serial_off;
  double runnable;
  unsigned cpus;
} row;

/* One workload at one thread count (0: the backend's default). */
static int measure(const cfg *c, const rp_backend *be, rp_graph *g,
                   const pw_workload *w, void *st, unsigned threads, int check,
                   row *r) {
  rp_exec_opts xo = RP_EXEC_OPTS_INIT, xs_o = RP_EXEC_OPTS_INIT;
  xo.nthreads = (int)threads;
  xs_o.mode = "serial";
  rp_exec *x = NULL, *xs = NULL;
  /* A team of threads: its operations timed within it as well. */
  const int team = !strcmp(rp_backend_name(be), "openmp");
  RK(rp_exec_create(&x, g, be, &xo));
  RK(rp_exec_create(&xs, g, be, &xs_o));
  if (check && differs(g, w, st, x)) {
    rp_exec_destroy(x);
    rp_exec_destroy(xs);
    return 1;
  }
  w->reset(st);
  RK(rp_exec_run(x, 1)); /* warm: the first launch chooses its owners */
  RK(rp_exec_run(xs, 1));
  uint32_t nn = rp_graph_num_nodes(g);
  double *med = (double *)calloc(nn + 1, sizeof *med);
  double *mn = (double *)calloc(nn + 1, sizeof *mn);
  double *mx = (double *)calloc(nn + 1, sizeof *mx);
  double *tmed = (double *)calloc(nn + 1, sizeof *tmed);
  double *sr = (double *)calloc((size_t)nn * ROUNDS + 1, sizeof *sr);
  double *tr = (double *)calloc((size_t)nn * ROUNDS + 1, sizeof *tr);
  double *col = (double *)calloc(ROUNDS, sizeof *col);
  if (!med || !mn || !mx || !tmed || !sr || !tr || !col) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  /* Costs at both thread counts, in alternating rounds (a change of the
   * load moves one round, not one of the profiles): a profiled serial
   * replay (one operation at a time) and an overlapped replay of the
   * team timed per operation (rp_exec_profile_team()); per operation the
   * median of the rounds, and the team's share of its cores, the median
   * of the rounds too. */
  rp_profile_opts po = RP_PROFILE_OPTS_INIT;
  po.runs = 1;
  double shs[ROUNDS];
  unsigned nsh = 0;
  for (unsigned k = 0; k < ROUNDS; k++) {
    double sh = 0;
    RK(rp_exec_profile_opts(xs, &po, sr + (size_t)k * nn, NULL, NULL));
    if (team)
      RK(rp_exec_profile_team(x, 1, tr + (size_t)k * nn, NULL, NULL, &sh));
    if (sh > 0)
      shs[nsh++] = sh;
  }
  stats(sr, nn, col, med, mn, mx);
  stats(tr, nn, col, tmed, NULL, NULL);
  /* the share: the median of the rounds (one preempted round does not
   * withhold a quiet machine's prediction) */
  qsort(shs, nsh, sizeof *shs, cmp_dbl);
  r->pshare = !nsh      ? 0
              : nsh % 2 ? shs[nsh / 2]
                        : (shs[nsh / 2 - 1] + shs[nsh / 2]) / 2;
  rp_analysis_opts ao;
  rp_analysis_opts_init(&ao);
  rp_model m;
  unsigned units[RP_MAX_DEVICES];
  rp_model_opts mo;
  rp_model_opts_init(&mo);
  mo.progress = progress;
  RK(rp_analysis_opts_calibrated(&ao, &m, units, x, &mo));
  ao.measured_us = med;
  /* The spread: the prediction of each round's own costs. */
  r->plo = r->phi = 0;
  for (unsigned k = 0; team && k < ROUNDS; k++) {
    rp_analysis *ak = NULL;
    ao.measured_us = sr + (size_t)k * nn;
    ao.team_us = tr + (size_t)k * nn;
    RK(rp_analyze_exec(x, &ao, &ak));
    rp_summary sk;
    rp_analysis_summary(ak, &sk);
    if (!k || sk.predicted_speedup < r->plo)
      r->plo = sk.predicted_speedup;
    if (!k || sk.predicted_speedup > r->phi)
      r->phi = sk.predicted_speedup;
    rp_analysis_destroy(ak);
  }
  ao.measured_us = med;
  ao.team_us = team ? tmed : NULL;
  ao.team_share = team ? r->pshare : 0;
  rp_analysis *an = NULL;
  /* The graph x really replays (cuda reshapes its copies), the serial
   * replay's costs carried onto it, the team's for the overlapped one. */
  RK(rp_analyze_exec(x, &ao, &an));
  double ts[MAXPAIRS], tp[MAXPAIRS], run = 0, wait = 0;
  for (unsigned k = 0; k < c->pairs; k++) {
    RK(rp_exec_run(xs, c->iters));
    ts[k] = rp_exec_last_us(xs);
    double r0, w0, r1, w1;
    rp_sched_times(&r0, &w0);
    RK(rp_exec_run(x, c->iters));
    tp[k] = rp_exec_last_us(x);
    rp_sched_times(&r1, &w1);
    run += r1 - r0;
    wait += w1 - w0;
  }
  /* The team's real share of the cores it wanted during the overlapped
   * replays: its threads' running time over running plus waiting. */
  r->share = run + wait > 0 ? run / (run + wait) : 0;
  rp_achieved ach;
  RK(rp_achieved_compute(an, ts, tp, c->pairs, &ach));
  double tsm[MAXPAIRS];
  memcpy(tsm, ts, sizeof ts[0] * c->pairs);
  qsort(tsm, c->pairs, sizeof tsm[0], cmp_dbl);
  RK(rp_achieved_compare_serial(&ach, an, tsm[c->pairs / 2] / c->iters));
  rp_summary sm;
  rp_analysis_summary(an, &sm);
  r->withheld = sm.withheld;
  r->runnable = sm.runnable;
  r->cpus = sm.usable_cpus;
  r->serial_ratio = ach.serial_ratio;
  r->serial_off = ach.serial_off;
  r->pred = sm.predicted_speedup;
  r->bound = sm.bound;
  r->ach = ach.speedup;
  r->lo = ach.min;
  r->hi = ach.max;
  r->err = (r->pred - r->ach) / r->ach;
  if (c->save) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", c->save, w->name);
    FILE *fp = fopen(path, "w");
    if (fp && rp_graph_set_measured_all(g, med, mn, mx, ROUNDS,
                                        rp_backend_name(be), NULL) == RP_OK)
      rp_graph_write_json(g, fp);
    if (fp)
      fclose(fp);
    snprintf(path, sizeof path, "%s/%s.csv", c->save, w->name);
    fp = fopen(path, threads == c->threads[0] ? "w" : "a");
    if (fp) {
      if (threads == c->threads[0])
        fprintf(fp, "# threads achieved min max (%s)\n", w->name);
      fprintf(fp, "%u %.4f %.4f %.4f\n", threads ? threads : 1, r->ach, r->lo,
              r->hi);
      fclose(fp);
    }
  }
  rp_analysis_destroy(an);
  free(tmed);
  free(sr);
  free(tr);
  free(col);
  free(med);
  free(mn);
  free(mx);
  rp_exec_destroy(x);
  rp_exec_destroy(xs);
  return 0;
}

static int cmp_abs(const void *a, const void *b) {
  double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
  return (x > y) - (x < y);
}

/* The median of |e[0 .. n)| (sorts e), 0 when n is 0. */
static double median_abs(double *e, unsigned n) {
  if (!n)
    return 0;
  qsort(e, n, sizeof e[0], cmp_abs);
  return n % 2 ? fabs(e[n / 2]) : (fabs(e[n / 2 - 1]) + fabs(e[n / 2])) / 2;
}

static void usage(void) {
  fprintf(stderr,
          "usage: bench_predict [--backend B] [--threads 1,2,...] "
          "[--pairs N]\n"
          "                     [--iters N] [--only NAME,...] [--scale N] "
          "[--save DIR]\n"
          "                     [--no-check] [--set tuned|check|all]\n"
          "workloads:");
  for (unsigned i = 0; i < pw_nworkloads; i++)
    fprintf(stderr, " %s", pw_workloads[i].name);
  fprintf(stderr, "\ncheck workloads (issue 33, never tuned on):");
  for (unsigned i = 0; i < pc_nworkloads; i++)
    fprintf(stderr, " %s", pc_workloads[i].name);
  fprintf(stderr, "\n");
}

static int parse(int argc, char **argv, cfg *c) {
  c->backend = "openmp";
  c->threads[0] = 1;
  c->threads[1] = 2;
  c->nthreads = 2;
  c->pairs = 7;
  c->iters = 3;
  c->scale = 1;
  c->check = 1;
  c->set = "all";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--no-check")) {
      c->check = 0;
      continue;
    }
    if (!v) {
      usage();
      return 2;
    }
    i++;
    if (!strcmp(a, "--backend")) {
      c->backend = v;
    } else if (!strcmp(a, "--set")) {
      if (strcmp(v, "tuned") && strcmp(v, "check") && strcmp(v, "all")) {
        usage();
        return 2;
      }
      c->set = v;
    } else if (!strcmp(a, "--only")) {
      c->only = v;
    } else if (!strcmp(a, "--save")) {
      c->save = v;
    } else if (!strcmp(a, "--threads")) {
      c->nthreads = 0;
      for (const char *p = v; *p && c->nthreads < MAXT;) {
        char *e;
        unsigned long t = strtoul(p, &e, 10);
        if (e == p || t > 4096) {
          usage();
          return 2;
        }
        c->threads[c->nthreads++] = (unsigned)t;
        p = *e == ',' ? e + 1 : e;
      }
    } else if (!strcmp(a, "--pairs") || !strcmp(a, "--iters") ||
               !strcmp(a, "--scale")) {
      unsigned long n = strtoul(v, NULL, 10);
      if (n < 1 || n > (a[2] == 'p' ? (unsigned long)MAXPAIRS : 1000)) {
        usage();
        return 2;
      }
      *(a[2] == 'p'   ? &c->pairs
        : a[2] == 'i' ? &c->iters
                      : &c->scale) = (unsigned)n;
    } else {
      usage();
      return 2;
    }
  }
  if (c->pairs < 5)
    fprintf(stderr, "note: fewer than 5 timed pairs\n");
  return 0;
}

static void loadavg(char *out, size_t n) {
  FILE *fp = fopen("/proc/loadavg", "r");
  out[0] = 0;
  if (fp) {
    double a, b, d;
    if (fscanf(fp, "%lf %lf %lf", &a, &b, &d) == 3)
      snprintf(out, n, "%.2f %.2f %.2f", a, b, d);
    fclose(fp);
  }
}

int main(int argc, char **argv) {
  cfg c;
  memset(&c, 0, sizeof c);
  int rc = parse(argc, argv, &c);
  if (rc)
    return rc;
  const rp_backend *be = NULL;
  RK(rp_backend_find(c.backend, &be));
  int team = !strcmp(rp_backend_name(be), "openmp");
  if (!team) { /* no thread count: one row per workload */
    c.nthreads = 1;
    c.threads[0] = 0;
  }
  char host[64], l0[64], l1[64];
  gethostname(host, sizeof host);
  host[63] = 0;
  loadavg(l0, sizeof l0);
  unsigned long cal0 = rp_model_calibrations();
  double err[MAXT][64];
  unsigned nerr[MAXT] = {0}, nwh[MAXT] = {0}, noff[MAXT] = {0};
  double eall[MAXT][64]; /* withheld rows too */
  unsigned nall[MAXT] = {0};
  const char *worst[MAXT] = {0};
  double wv[MAXT] = {0};
  printf("| workload | backend | threads | predicted (rounds' min-max) | "
         "achieved (min-max) | error | bound | serial / profile | team "
         "share profiled / timed |\n");
  printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  int tuned = strcmp(c.set, "check"), chk = strcmp(c.set, "tuned");
  for (unsigned i = 0; i < pw_nworkloads + pc_nworkloads; i++) {
    const pw_workload *w =
        i < pw_nworkloads ? &pw_workloads[i] : &pc_workloads[i - pw_nworkloads];
    if (!(i < pw_nworkloads ? tuned : chk))
      continue;
    if (!wanted(&c, w->name))
      continue;
    rp_graph *g = NULL;
    void *st = NULL;
    RK(rp_graph_create(&g, 0));
    RK(w->record(g, 0, c.scale, &st));
    RK(rp_graph_end(g));
    for (unsigned t = 0; t < c.nthreads; t++) {
      row r;
      if (measure(&c, be, g, w, st, c.threads[t], c.check && t == 0, &r)) {
        rc = 1;
        break;
      }
      char th[16] = "-";
      if (c.threads[t])
        snprintf(th, sizeof th, "%u", c.threads[t]);
      char et[64];
      snprintf(et, sizeof et, "%+.1f%%", 100 * r.err);
      if (r.withheld)
        snprintf(et, sizeof et,
                 "withheld (%.0f runnable on %u CPUs, share %.2f; "
                 "%+.1f%%)",
                 r.runnable, r.cpus, r.pshare, 100 * r.err);
      printf("| %s | %s | %s | %.2fx (%.2f-%.2f) | %.2fx (%.2f-%.2f) | %s | "
             "%.2fx | %.2f%s | %.2f / %.2f |\n",
             w->name, rp_backend_name(be), th, r.pred, r.plo, r.phi, r.ach,
             r.lo, r.hi, et, r.bound, r.serial_ratio,
             r.serial_off ? " (off)" : "", r.pshare, r.share);
      fflush(stdout);
      noff[t] += r.serial_off;
      if (nall[t] < 64)
        eall[t][nall[t]++] = r.err;
      if (r.withheld) {
        nwh[t]++;
        continue;
      }
      if (nerr[t] < 64)
        err[t][nerr[t]++] = r.err;
      if (fabs(r.err) > wv[t]) {
        wv[t] = fabs(r.err);
        worst[t] = w->name;
      }
    }
    w->release(st);
    rp_graph_destroy(g);
  }
  loadavg(l1, sizeof l1);
  printf("\n");
  for (unsigned t = 0; t < c.nthreads; t++) {
    char th[16] = "default";
    if (c.threads[t])
      snprintf(th, sizeof th, "%u", c.threads[t]);
    double md = median_abs(err[t], nerr[t]);
    /* One line per thread count, the same with or without figures (the
     * device script's summary table reads it). */
    if (nerr[t])
      printf("%s threads %s: median |error| %.1f%%, largest %.1f%% (%s) over "
             "%u workloads; ",
             rp_backend_name(be), th, 100 * md, 100 * wv[t],
             worst[t] ? worst[t] : "-", nerr[t]);
    else
      printf("%s threads %s: median |error| -, largest - over 0 "
             "workloads; ",
             rp_backend_name(be), th);
    printf("%u withheld (machine busy), %u serial replays >20%% off their "
           "profile",
           nwh[t], noff[t]);
    if (nwh[t])
      printf("; withheld rows too: median |error| %.1f%%",
             100 * median_abs(eall[t], nall[t]));
    printf("\n");
  }
  printf("%s, %ld cores; load average before %s, after %s; %lu "
         "calibrations run (0: every model was cached)\n",
         host, sysconf(_SC_NPROCESSORS_ONLN), l0, l1,
         rp_model_calibrations() - cal0);
  return rc;
}
