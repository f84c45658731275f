/* reprise check: races and superfluous orders of hand-written dependencies. */
#include <string.h>
#include "cli.h"

static void usage(FILE *fp) {
  fprintf(fp,
          "usage: reprise check FILE.json [--json] [--model FILE | --backend "
          "B]\n\n"
          "Checks the hand-written dependencies of the graph in FILE.json "
          "(\"-\": standard\ninput): its operations' `after` lists against "
          "their accesses, ignoring the\nedges derived from them. Reports "
          "every missing order (a race: the two\noperations, the buffer, "
          "the memory space, the first intersecting byte range\nand the "
          "hazard kind) and every `after` order that no hazard needs, with "
          "the\npredicted time saved by dropping it (costs as in "
          "`reprise analyze`).\n\n"
          "  --json        print the reprise-check JSON instead of the text\n"
          "  --model FILE  predict the gains with this machine model\n"
          "  --backend B   ... with the model calibrated for backend B\n"
          "Exit status: 0 no race, 3 races found, 1 unreadable graph or "
          "failed check,\n2 bad usage.\n");
}

int rp_cmd_check(int argc, char **argv) {
  const char *in = NULL, *model = NULL, *backend = NULL;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if ((!strcmp(argv[i], "--model") || !strcmp(argv[i], "--backend")) &&
        i + 1 < argc) {
      *(argv[i][2] == 'm' ? &model : &backend) = argv[i + 1];
      i++;
      continue;
    }
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else if ((argv[i][0] != '-' || !argv[i][1]) && !in) {
      in = argv[i];
    } else {
      fprintf(stderr, "reprise check: unexpected argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (!in) {
    usage(stderr);
    return 2;
  }
  rp_model m;
  rp_analysis_opts o;
  rp_analysis_opts_init(&o);
  if ((model && backend) || rp_cli_model(model, backend, 0, &m))
    return model && backend ? 2 : 1;
  if (model || backend)
    o.model = &m;
  rp_graph *g = rp_cli_load(in);
  if (!g)
    return 1;
  rp_check *c = NULL;
  rp_status s = rp_check_deps(g, &o, &c);
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
