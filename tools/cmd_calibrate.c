/* reprise calibrate: measure a backend's machine model and save it. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static void usage(FILE *fp) {
  fprintf(fp,
          "usage: reprise calibrate [--backend B] [--threads N] [--runs N]\n"
          "         [--out FILE] [--quiet] [--progress]\n\n"
          "Measures the machine model of backend B (default: auto) on this "
          "machine by\nreplaying small graphs: the overhead of an operation "
          "in each replay mode,\ncopy bandwidth and latency in each "
          "direction alone and both at once, peer\ncopies, host tasks. "
          "Saves it as JSON (docs/model.md) in the cache,\n"
          "$XDG_CACHE_HOME/reprise/<backend>-<host>[-t<threads>].json "
          "(else\n~/.cache/reprise/...), where the examples, `reprise "
          "analyze --backend B` and\nrp_analysis_opts_calibrated() find "
          "it, and prints it. The analyses calibrate\non first use "
          "anyway (unless RP_NO_AUTOCALIBRATE=1): this refreshes the\n"
          "model, after the machine changed under the same name.\n\n"
          "  --backend B   openmp, cuda, xrt, reference (default: auto)\n"
          "  --threads N   openmp: team size (default: the OpenMP default)\n"
          "  --runs N      timed replays per figure, the median kept "
          "(default 5, max 63)\n"
          "  -o, --out FILE  write there instead of the cache (\"-\": only "
          "print)\n"
          "  --quiet       do not print the model\n"
          "  --progress    show progress on standard error (default: when "
          "it is a\n                terminal, for work over a second)\n"
          "  -h, --help    print this help\n\n"
          "Exit status: 0 success, 1 failed measurement or write, 2 bad "
          "usage.\n");
}

static void count_replays(void *user, unsigned replays) {
  atomic_fetch_add((atomic_ulong *)user, replays);
}

/* The calibration on a thread of its own (rp_cli_busy). */
typedef struct cal_job {
  rp_model *m;
  const rp_backend *be;
  const rp_exec_opts *xo;
  unsigned runs;
  const rp_model_opts *mo; /* the cache refreshed; NULL: calibrate only */
  rp_status s;
} cal_job;

static void cal_run(void *v) {
  cal_job *j = v;
  j->s = j->mo ? rp_model_get_opts(j->m, j->be, j->xo, j->mo)
               : rp_model_calibrate(j->m, j->be, j->xo, j->runs);
}

int rp_cmd_calibrate(int argc, char **argv) {
  static const struct option opts[] = {
      {"backend", required_argument, NULL, 'b'},
      {"threads", required_argument, NULL, 't'},
      {"runs", required_argument, NULL, 'r'},
      {"out", required_argument, NULL, 'o'},
      {"quiet", no_argument, NULL, 'q'},
      {"progress", no_argument, NULL, 'P'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  const char *backend = NULL, *out = NULL;
  unsigned long threads = 0, runs = 0;
  int quiet = 0, c;
  rp_cli_getopt_reset();
  while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
    int bad = 0;
    switch (c) {
    case 'h':
      usage(stdout);
      return 0;
    case 'q':
      quiet = 1;
      break;
    case 'P':
      rp_cli_show_progress = 1;
      break;
    case 'b':
      backend = optarg;
      break;
    case 'o':
      out = optarg;
      break;
    case 't':
      bad = rp_cli_uint("calibrate", "--threads", optarg, 1, 4096, &threads);
      break;
    case 'r':
      bad = rp_cli_uint("calibrate", "--runs", optarg, 1, 63, &runs);
      break;
    default:
      return rp_cli_bad_option("calibrate", c, argv);
    }
    if (bad)
      return 2;
  }
  if (optind < argc) {
    fprintf(stderr,
            "reprise calibrate: unexpected argument '%s'\nTry "
            "'reprise help calibrate'.\n",
            argv[optind]);
    return 2;
  }
  const rp_backend *be = NULL;
  rp_status s = rp_backend_find(backend, &be);
  if (s != RP_OK) {
    fprintf(stderr, "reprise calibrate: backend %s: %s (%s)\n",
            backend ? backend : "auto", rp_strerror(s), rp_last_error());
    return 1;
  }
  rp_exec_opts xo = RP_EXEC_OPTS_INIT;
  xo.nthreads = (int)threads;
  rp_model m;
  /* The replays of the calibration, counted for the progress line: every
   * exec it creates takes these options. */
  atomic_ulong replays = 0;
  xo.progress = count_replays;
  xo.progress_user = &replays;
  /* Without --out: the cache that rp_analysis_opts_calibrated() and
   * `reprise analyze --backend` use, refreshed. */
  char path[4096];
  rp_model_opts mo;
  rp_model_opts_init(&mo);
  mo.flags = RP_MODEL_REFRESH;
  mo.runs = (unsigned)runs;
  if (!out && rp_model_cache_path(be, &xo, NULL, path, sizeof path) != RP_OK) {
    fprintf(stderr, "reprise calibrate: no cache directory (set "
                    "XDG_CACHE_HOME or HOME, or give --out)\n");
    return 1;
  }
  cal_job job = {&m, be, &xo, (unsigned)runs, out ? NULL : &mo, RP_OK};
  char what[96];
  snprintf(what, sizeof what, "calibrating %s", rp_backend_name(be));
  rp_cli_busy(what, rp_cli_show_progress, cal_run, &job, &replays,
              "timed replays");
  s = job.s;
  if (!out && s == RP_OK) {
    if (access(path, R_OK) != 0) {
      fprintf(stderr, "reprise calibrate: cannot write %s\n", path);
      return 1;
    }
    fprintf(stderr, "reprise calibrate: saved %s\n", path);
    if (!quiet)
      rp_model_write_json(&m, stdout);
    return 0;
  }
  if (s != RP_OK) {
    fprintf(stderr, "reprise calibrate: %s: %s\n", rp_backend_name(be),
            rp_strerror(s));
    return 1;
  }
  if (strcmp(out, "-")) {
    rp_outfile_cleanup_on_signal(); /* a full disk: EFBIG, said */
    if ((s = rp_model_save(&m, out)) != RP_OK) {
      fprintf(stderr, "reprise calibrate: %s\n",
              rp_last_error()[0] ? rp_last_error() : rp_strerror(s));
      return 1;
    }
    fprintf(stderr, "reprise calibrate: saved %s\n", out);
  }
  if (!quiet || !strcmp(out, "-"))
    rp_model_write_json(&m, stdout);
  return 0;
}
