/* Operation costs at the replay's thread count (issue 33): each
 * operation timed within overlapped replays of the team that will run
 * it, so that the prediction sees the contention of that replay (the
 * other threads' memory traffic, their share of the cores, a split's own
 * cost) instead of guessing it from a profile taken one operation at a
 * time; and the team's real share of its cores while it ran. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "measure/measure.h"

/* Running and waiting-for-a-core nanoseconds of all of this process's
 * threads so far (/proc/self/task/T/schedstat): 0 when the kernel does
 * not say (no schedstat). */
static int team_times(double *run, double *wait) {
  *run = *wait = 0;
  DIR *d = opendir("/proc/self/task");
  if (!d)
    return 0;
  int k = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    char f[300];
    snprintf(f, sizeof f, "/proc/self/task/%s/schedstat", e->d_name);
    FILE *fp = fopen(f, "r");
    if (!fp)
      continue;
    unsigned long long r, w;
    if (fscanf(fp, "%llu %llu", &r, &w) == 2) {
      *run += (double)r;
      *wait += (double)w;
      k++;
    }
    fclose(fp);
  }
  closedir(d);
  return k > 0;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

double rp__team_share(double run, double wait) {
  return run + wait > 0 ? run / (run + wait) : 0;
}

void rp__team_stats(const double *t, unsigned runs, uint32_t n, double *col,
                    double *median, double *min, double *max) {
  for (uint32_t v = 0; v < n; v++) {
    for (unsigned r = 0; r < runs; r++)
      col[r] = t[(size_t)r * n + v];
    qsort(col, runs, sizeof *col, cmp_double);
    if (median)
      /* NOLINTNEXTLINE(bugprone-integer-division): indices of the middle */
      median[v] =
          runs % 2 ? col[runs / 2] : (col[runs / 2 - 1] + col[runs / 2]) / 2;
    if (min)
      min[v] = col[0];
    if (max)
      max[v] = col[runs - 1];
  }
}

/* Host arrays of x as they are, to put back after the runs (NULL out of
 * memory). */
static void **snapshot(const rp_exec *x, uint32_t nb) {
  void **c = calloc(nb ? nb : 1, sizeof *c);
  for (uint32_t b = 0; c && b < nb; b++) {
    uint64_t bytes = x->g->buf[b].bytes;
    if (!x->host[b])
      continue;
    if (!(c[b] = malloc(bytes ? bytes : 1))) {
      for (uint32_t k = 0; k < b; k++)
        free(c[k]);
      free(c);
      return NULL;
    }
    memcpy(c[b], x->host[b], bytes);
  }
  return c;
}

static void restore(rp_exec *x, void **c, uint32_t nb) {
  for (uint32_t b = 0; b < nb; b++) {
    if (c[b])
      memcpy(x->host[b], c[b], x->g->buf[b].bytes);
    free(c[b]);
  }
  free(c);
}

rp_status rp_exec_profile_team(rp_exec *x, unsigned runs, double *median_us,
                               double *min_us, double *max_us, double *share) {
  RP_ENTER();
  if (!x)
    return RP_NULL_ARG();
  if (runs > 1000)
    return RP_BAD_ARG();
  if (!runs)
    runs = 5;
  if (x->g != x->ug && !x->rw.g) {
    rp_exec_set_error(x, "profile_team: the exec replays a rewrite of its "
                         "graph that does not map back to it");
    return RP_ENOTSUP;
  }
  uint32_t n = rp_graph_num_nodes(x->ug);
  uint32_t nb = rp_graph_num_buffers(x->g);
  /* rp_exec_timeline() gives one entry per node of the graph the exec
   * replays, or of the user's graph when a split maps chunks back. */
  uint32_t ne = rp_graph_num_nodes(x->g);
  size_t k = (n > ne ? n : ne) + 1;
  double *t = malloc(sizeof *t * n * runs + 1);
  double *st = malloc(sizeof *st * k), *en = malloc(sizeof *en * k);
  double *col = malloc(sizeof *col * runs);
  void **snap = snapshot(x, nb);
  if (!t || !st || !en || !col || !snap) {
    free(t);
    free(st);
    free(en);
    free(col);
    if (snap)
      restore(x, snap, nb);
    return RP_ENOMEM;
  }
  double r0 = 0, w0 = 0, r1 = 0, w1 = 0;
  int have = team_times(&r0, &w0);
  rp_status s = RP_OK;
  for (unsigned r = 0; r < runs && s == RP_OK; r++) {
    s = rp_exec_timeline(x, st, en);
    for (uint32_t v = 0; s == RP_OK && v < n; v++) {
      double d = en[v] - st[v];
      t[(size_t)r * n + v] = d > 0 ? d : 0;
    }
  }
  have = have && team_times(&r1, &w1);
  restore(x, snap, nb);
  if (s == RP_OK) {
    rp__team_stats(t, runs, n, col, median_us, min_us, max_us);
    if (share)
      *share = have ? rp__team_share(r1 - r0, w1 - w0) : 0;
  }
  free(t);
  free(st);
  free(en);
  free(col);
  return s;
}
