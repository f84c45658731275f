/* reprise dot: write a graph file as Graphviz dot. */
#include <string.h>
#include "cli.h"

/* Graphviz draws about a thousand nodes per drawing comfortably. */
#define DOT_LIMIT 2000

static void usage(FILE *fp) {
  fprintf(fp, "usage: reprise dot FILE.json [-o OUT.dot] [--full]\n\n"
              "Writes the graph in FILE.json (\"-\": standard input) as "
              "Graphviz dot: one node\nper operation, edges labelled with "
              "their hazard and buffer, a colour per lane.\n"
              "Over %d operations only the critical path and the operations "
              "next to it\nare drawn, with a note saying what was left out.\n"
              "Render it with: dot -Tsvg OUT.dot -o OUT.svg\n\n"
              "  -o OUT   write to OUT instead of standard output\n"
              "  --full   draw every operation, however many\n", DOT_LIMIT);
}

int rp_cmd_dot(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  int full = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--full")) {
      full = 1;
    } else if (!strcmp(argv[i], "-o")) {
      if (++i >= argc) {
        fprintf(stderr, "reprise dot: -o needs a file name\n");
        return 2;
      }
      out = argv[i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "reprise dot: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    } else if (!in) {
      in = argv[i];
    } else {
      fprintf(stderr, "reprise dot: one graph file at a time\n");
      return 2;
    }
  }
  if (!in) {
    usage(stderr);
    return 2;
  }
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
