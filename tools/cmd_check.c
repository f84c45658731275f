/* reprise check: races and superfluous orders of hand-written dependencies. */
#include <string.h>
#include "cli.h"

static void usage(FILE *fp) {
  fprintf(fp,
          "usage: reprise check [OPTIONS] FILE.json\n\n"
          "Checks the hand-written dependencies of the graph in FILE.json "
          "(\"-\": standard\ninput): a program transcribed with its own "
          "orders (streams and events\nbecome `after` lists). Its "
          "operations' `after` lists are checked against\ntheir accesses, "
          "ignoring the edges reprise derives. Reports every missing\n"
          "order (a race: the two operations, the buffer, the memory space, "
          "the first\nintersecting byte range and the hazard kind) and "
          "every `after` order that no\nhazard needs, with the predicted "
          "time saved by dropping it (costs as in\n`reprise analyze`). "
          "Copies that automatic coherence inserted are ordered by\nthe "
          "recorder, never in a race. A graph without any `after` list (a "
          "program\nrecorded with the library: every order is derived) has "
          "nothing to check: the\ncheck says so and exits 0.\n\n"
          "  --json        print the reprise-check JSON instead of the text\n"
          "  --model FILE  predict the gains with this machine model\n"
          "  --backend B   ... with the model calibrated for backend B\n"
          "  --progress    show progress on standard error (default: when "
          "it is a\n                terminal, for work over a second)\n"
          "  --strict      unknown keys in FILE.json are errors, not "
          "warnings\n"
          "  -h, --help    print this help\n\n"
          "Exit status: 0 no race (or no hand-written order to check), 3 "
          "races found,\n1 unreadable graph or failed check, 2 bad "
          "usage.\n");
}

/* The check on a thread of its own (rp_cli_busy). */
typedef struct check_job {
  const rp_graph *g;
  const rp_analysis_opts *o;
  rp_check **c;
  rp_status s;
} check_job;

static void check_run(void *v) {
  check_job *j = v;
  j->s = rp_check_deps(j->g, j->o, j->c);
}

int rp_cmd_check(int argc, char **argv) {
  static const struct option opts[] = {
      {"json", no_argument, NULL, 'j'},
      {"model", required_argument, NULL, 'm'},
      {"backend", required_argument, NULL, 'b'},
      {"strict", no_argument, NULL, 'S'},
      {"progress", no_argument, NULL, 'P'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  const char *model = NULL, *backend = NULL;
  int json = 0, opt;
  rp_cli_getopt_reset();
  while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (opt) {
    case 'h':
      usage(stdout);
      return 0;
    case 'j':
      json = 1;
      break;
    case 'm':
      model = optarg;
      break;
    case 'b':
      backend = optarg;
      break;
    case 'S':
      rp_cli_strict = 1;
      break;
    case 'P':
      rp_cli_show_progress = 1;
      break;
    default:
      return rp_cli_bad_option("check", opt, argv);
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "reprise check: %s\nTry 'reprise help check'.\n",
            optind < argc ? "one graph file at a time" : "no graph file given");
    return 2;
  }
  if (model && backend) {
    fprintf(stderr, "reprise check: --model or --backend, not both\n");
    return 2;
  }
  const char *in = argv[optind];
  rp_model m;
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  if (rp_cli_model(model, backend, 0, &m))
    return 1;
  if (model || backend)
    o.model = &m;
  rp_graph *g = rp_cli_load(in);
  if (!g)
    return 1;
  rp_check *c = NULL;
  check_job job = {g, &o, &c, RP_OK};
  char what[300];
  snprintf(what, sizeof what, "checking %s", in);
  rp_cli_busy(what, rp_cli_show_progress, check_run, &job, NULL, NULL);
  rp_status s = job.s;
  int rc = 1;
  if (s != RP_OK) {
    fprintf(stderr, "reprise check: %s: %s\n", in, rp_strerror(s));
  } else {
    s = json ? rp_check_write_json(c, stdout) : rp_check_write_text(c, stdout);
    rc = s != RP_OK ? 1 : rp_check_num_races(c) ? 3 : 0;
  }
  rp_check_destroy(c);
  rp_graph_destroy(g);
  return rc;
}
