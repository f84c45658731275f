/* reprise dot: write a graph file as Graphviz dot. */
#include <string.h>
#include "cli.h"

/* --critical: Graphviz draws about a thousand nodes per drawing
 * comfortably. The default draws every operation, grouped by step. */
#define DOT_LIMIT 2000

static void usage(FILE *fp) {
  fprintf(
      fp,
      "usage: reprise dot [OPTIONS] FILE.json\n\n"
      "Writes the graph in FILE.json (\"-\": standard input) as "
      "Graphviz dot, a colour\nper lane and a legend. Up to 64 "
      "operations: one node per operation, edges\nlabelled with "
      "their hazard and buffer. Beyond: a cluster per step (the\n"
      "repetitions of the program's loop; alike steps drawn once), "
      "the operations\nof one name and lane in a step as one node "
      "(\"name x8\"), one edge per pair of\nnodes with its hazards "
      "in the tooltip (SVG); many steps: the middle ones as\none "
      "node. Every size is drawn so, grouped: readable at 25 000 operations\n"
      "as at 100 (--critical: only the critical path and the "
      "operations next to it).\n"
      "Render it with: dot -Tsvg OUT.dot -o OUT.svg\n\n"
      "  -o, --output OUT    write to OUT instead of standard output\n"
      "  --critical          over 2000 operations, draw only the "
      "critical path and the\n"
      "                      operations next to it, up to 2000\n"
      "  --full              every operation, grouped (the "
      "default)\n"
      "  --progress          show progress on standard error "
      "(default: when it is a\n                      terminal, for "
      "work over a second)\n"
      "  --strict            unknown keys in FILE.json are errors, "
      "not warnings\n"
      "  -h, --help          print this help\n\n"
      "Exit status: 0 success, 1 unreadable graph or failed write, "
      "2 bad usage.\n");
}

/* The drawing on a thread of its own (rp_cli_busy). */
typedef struct dot_job {
  const rp_graph *g;
  FILE *fp;
  uint32_t limit;
  rp_status s;
} dot_job;

static void dot_run(void *v) {
  dot_job *j = v;
  j->s = rp_graph_write_dot_limited(j->g, j->fp, j->limit);
}

int rp_cmd_dot(int argc, char **argv) {
  static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                       {"strict", no_argument, NULL, 'S'},
                                       {"full", no_argument, NULL, 'F'},
                                       {"critical", no_argument, NULL, 'C'},
                                       {"progress", no_argument, NULL, 'P'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  const char *out = NULL;
  int c, critical = 0;
  rp_cli_getopt_reset();
  while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
    switch (c) {
    case 'h':
      usage(stdout);
      return 0;
    case 'o':
      if (!optarg[0]) {
        fprintf(stderr, "reprise dot: -o needs a file name\n");
        return 2;
      }
      out = optarg;
      break;
    case 'S':
      rp_cli_strict = 1;
      break;
    case 'F':
      critical = 0;
      break;
    case 'C':
      critical = 1;
      break;
    case 'P':
      rp_cli_show_progress = 1;
      break;
    default:
      return rp_cli_bad_option("dot", c, argv);
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "reprise dot: %s\nTry 'reprise help dot'.\n",
            optind < argc ? "one graph file at a time" : "no graph file given");
    return 2;
  }
  const char *in = argv[optind];
  rp_graph *g = rp_cli_load(in);
  if (!g)
    return 1;
  FILE *fp = rp_cli_open_out(out);
  int rc = 1;
  if (fp) {
    dot_job job = {g, fp, critical ? DOT_LIMIT : 0, RP_OK};
    char what[300];
    snprintf(what, sizeof what, "drawing %s", in);
    rp_cli_busy(what, rp_cli_show_progress, dot_run, &job, NULL, NULL);
    rp_status s = job.s;
    rc = rp_cli_close_out(fp, out, s == RP_OK);
    if (s != RP_OK) {
      fprintf(stderr, "reprise dot: %s\n", rp_strerror(s));
      rc = 1;
    }
  }
  rp_graph_destroy(g);
  return rc;
}
