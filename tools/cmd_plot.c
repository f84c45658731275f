/* reprise plot: predicted (and achieved) speedup of a graph file against
 * the thread count, as an SVG. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

#define MAXPTS 64

static void usage(FILE *fp) {
  fprintf(fp,
          "usage: reprise plot [OPTIONS] FILE.json\n\n"
          "Draws the predicted speedup of the graph in FILE.json (\"-\": "
          "standard input)\nagainst the thread count of backend B, with "
          "the achieved speedups when\ngiven, as an SVG: one curve each, "
          "the achieved spread (min-max) as error\nbars, the band from 1 "
          "up to the upper bound. Each thread count's prediction\nuses "
          "its machine model (cached, or calibrated on first use: a few "
          "seconds\neach) and the graph's costs (measured ones, e.g. saved "
          "by an example's\n--save). A table of the figures goes to "
          "standard error.\n\n"
          "  --backend B         a backend with a team of threads (default "
          "openmp)\n"
          "  --threads LIST      thread counts, comma-separated (default "
          "1,2,4,... up to\n"
          "                      the online cores)\n"
          "  --achieved FILE     measured speedups, a line per thread count: "
          "\"THREADS MEDIAN\n"
          "                      [MIN MAX]\" (blank or comma-separated; "
          "'#' starts a comment)\n"
          "  --costs FILE        measured costs of the graph in FILE, "
          "applied by name\n"
          "  --no-calibrate      cached models only: an uncalibrated model "
          "where none is\n"
          "                      cached (as RP_NO_AUTOCALIBRATE=1)\n"
          "  --title TEXT        the picture's title (default: the file "
          "name)\n"
          "  -o, --out OUT       write the SVG to OUT (default: standard "
          "output)\n"
          "  -h, --help          print this help\n\n"
          "Exit status: 0 success, 1 unreadable input, failed analysis or "
          "write, 2 bad\nusage.\n");
}

/* "1,2,4" into t (at most MAXPTS); returns the count, or 0 and prints. */
static unsigned parse_list(const char *s, unsigned *t) {
  unsigned n = 0;
  const char *p = s;
  while (*p) {
    char *end;
    errno = 0;
    unsigned long v = strtoul(p, &end, 10);
    if (end == p || errno || v < 1 || v > 4096 || n == MAXPTS ||
        (*end && *end != ',')) {
      fprintf(stderr,
              "reprise plot: --threads: '%s' is not a list of "
              "thread counts (1 to 4096, at most %d)\n",
              s, MAXPTS);
      return 0;
    }
    t[n++] = (unsigned)v;
    p = *end ? end + 1 : end;
  }
  if (!n)
    fprintf(stderr, "reprise plot: --threads: an empty list\n");
  return n;
}

/* The achieved file into pts (matched by x); returns 0 or 1. */
static int read_achieved(const char *path, rp_speedup_point *pts, unsigned n) {
  FILE *fp = fopen(path, "r");
  if (!fp) {
    fprintf(stderr, "reprise plot: %s: cannot open: %s\n", path,
            strerror(errno));
    return 1;
  }
  char line[512];
  unsigned ln = 0;
  int rc = 0;
  while (!rc && fgets(line, sizeof line, fp)) {
    ln++;
    char *h = strchr(line, '#');
    if (h)
      *h = 0;
    for (char *c = line; *c; c++)
      if (*c == ',')
        *c = ' ';
    double v[4] = {0, 0, 0, 0};
    int k = sscanf(line, "%lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3]);
    if (k <= 0)
      continue;
    if (k < 2 || k == 3 || !(v[0] > 0) || !(v[1] > 0) || !isfinite(v[1])) {
      fprintf(stderr,
              "reprise plot: %s:%u: expected \"THREADS MEDIAN "
              "[MIN MAX]\"\n",
              path, ln);
      rc = 1;
      break;
    }
    for (unsigned i = 0; i < n; i++)
      if (pts[i].x == v[0]) {
        pts[i].achieved = v[1];
        pts[i].achieved_min = k == 4 ? v[2] : v[1];
        pts[i].achieved_max = k == 4 ? v[3] : v[1];
      }
  }
  fclose(fp);
  return rc;
}

static void progress(void *user, const char *line) {
  (void)user;
  fprintf(stderr, "%s\n", line);
}

enum { O_BACKEND = 256, O_THREADS, O_ACHIEVED, O_COSTS, O_NOCAL, O_TITLE };

int rp_cmd_plot(int argc, char **argv) {
  static const struct option opts[] = {
      {"backend", required_argument, NULL, O_BACKEND},
      {"threads", required_argument, NULL, O_THREADS},
      {"achieved", required_argument, NULL, O_ACHIEVED},
      {"costs", required_argument, NULL, O_COSTS},
      {"no-calibrate", no_argument, NULL, O_NOCAL},
      {"title", required_argument, NULL, O_TITLE},
      {"out", required_argument, NULL, 'o'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  const char *backend = "openmp", *achieved = NULL, *costs = NULL,
             *title = NULL, *out = NULL;
  unsigned th[MAXPTS], nth = 0;
  int nocal = 0, c;
  rp_cli_getopt_reset();
  while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
    switch (c) {
    case 'h':
      usage(stdout);
      return 0;
    case O_BACKEND:
      backend = optarg;
      break;
    case O_THREADS:
      if (!(nth = parse_list(optarg, th)))
        return 2;
      break;
    case O_ACHIEVED:
      achieved = optarg;
      break;
    case O_COSTS:
      costs = optarg;
      break;
    case O_NOCAL:
      nocal = 1;
      break;
    case O_TITLE:
      title = optarg;
      break;
    case 'o':
      out = optarg;
      break;
    default:
      return rp_cli_bad_option("plot", c, argv);
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "reprise plot: %s\nTry 'reprise help plot'.\n",
            optind < argc ? "one graph file at a time" : "no graph file given");
    return 2;
  }
  const char *in = argv[optind];
  if (!nth) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    for (unsigned t = 1; nth < MAXPTS && (long)t <= (cores > 1 ? cores : 1);
         t *= 2)
      th[nth++] = t;
  }
  const rp_backend *be = NULL;
  rp_status s = rp_backend_find(backend, &be);
  if (s != RP_OK) {
    fprintf(stderr, "reprise plot: backend %s: %s\n", backend, rp_strerror(s));
    return 1;
  }
  rp_graph *g = rp_cli_load(in);
  if (!g || rp_cli_apply_costs(g, costs)) {
    rp_graph_destroy(g);
    return 1;
  }
  rp_speedup_point pts[MAXPTS];
  memset(pts, 0, sizeof pts);
  int rc = 0;
  fprintf(stderr, "%8s %10s %10s  model\n", "threads", "predicted", "bound");
  for (unsigned i = 0; i < nth && !rc; i++) {
    rp_exec_opts xo;
    rp_exec_opts_init(&xo);
    xo.nthreads = (int)th[i];
    rp_model m;
    rp_model_opts mo;
    rp_model_opts_init(&mo);
    mo.flags = nocal ? RP_MODEL_NO_AUTO : 0;
    mo.progress = progress;
    s = rp_model_get_opts(&m, be, &xo, &mo);
    if (s == RP_ENOTFOUND) {
      rp_model_init(&m);
    } else if (s != RP_OK) {
      fprintf(stderr, "reprise plot: model of %s at %u threads: %s\n", backend,
              th[i], rp_strerror(s));
      rc = 1;
      break;
    }
    rp_analysis_opts o;
    rp_analysis_opts_init(&o);
    unsigned units[RP_MAX_DEVICES];
    rp_analysis *a = NULL;
    if ((s = rp_analysis_opts_for(&o, &m, units, g, be, &xo)) != RP_OK ||
        (s = rp_analyze(g, &o, &a)) != RP_OK) {
      fprintf(stderr, "reprise plot: %s: cannot analyse: %s (%s)\n", in,
              rp_strerror(s), rp_last_error());
      rc = 1;
      break;
    }
    rp_summary sm;
    rp_analysis_summary(a, &sm);
    rp_analysis_destroy(a);
    pts[i].x = th[i];
    pts[i].predicted = sm.predicted_speedup;
    pts[i].bound = sm.bound;
    fprintf(stderr, "%8u %9.3fx %9.3fx  %s%s\n", th[i], sm.predicted_speedup,
            sm.bound, m.calibrated ? "calibrated" : "uncalibrated",
            sm.withheld ? " (machine busy: a quiet machine's figure)" : "");
  }
  if (!rc && achieved)
    rc = read_achieved(achieved, pts, nth);
  if (!rc) {
    FILE *fp = rp_cli_open_out(out);
    if (!fp) {
      rc = 1;
    } else {
      char t[512];
      snprintf(t, sizeof t, "%s: speedup on %s", title ? title : in, backend);
      s = rp_speedup_write_svg(pts, nth, t, "threads", fp);
      rc = rp_cli_close_out(fp, out, s == RP_OK);
      if (s != RP_OK) {
        fprintf(stderr, "reprise plot: %s\n", rp_strerror(s));
        rc = 1;
      }
    }
  }
  rp_graph_destroy(g);
  return rc;
}
