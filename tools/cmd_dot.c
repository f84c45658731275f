/* reprise dot: write a graph file as Graphviz dot. */
#include <string.h>
#include "cli.h"

/* Graphviz draws about a thousand nodes per drawing comfortably. */
#define DOT_LIMIT 2000

static void usage(FILE *fp) {
  fprintf(fp, "usage: reprise dot [OPTIONS] FILE.json\n\n"
              "Writes the graph in FILE.json (\"-\": standard input) as "
              "Graphviz dot: one node\nper operation, edges labelled with "
              "their hazard and buffer, a colour per lane.\n"
              "Render it with: dot -Tsvg OUT.dot -o OUT.svg\n\n"
              "  -o, --output OUT    write to OUT instead of standard output\n"
              "  --strict            unknown keys in FILE.json are errors, "
              "not warnings\n"
              "  -h, --help          print this help\n\n"
              "Exit status: 0 success, 1 unreadable graph or failed write, "
              "2 bad usage.\n");
}

int rp_cmd_dot(int argc, char **argv) {
  static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                       {"strict", no_argument, NULL, 'S'},
                                       {"full", no_argument, NULL, 'F'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  const char *out = NULL;
  int c, full = 0;
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
      full = 1;
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
    rp_status s = rp_graph_write_dot_limited(g, fp, full ? 0 : DOT_LIMIT);
    rc = rp_cli_close_out(fp, out);
    if (s != RP_OK) {
      fprintf(stderr, "reprise dot: %s\n", rp_strerror(s));
      rc = 1;
    }
  }
  rp_graph_destroy(g);
  return rc;
}
