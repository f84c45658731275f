/* The reprise command-line tool: dispatches to its subcommands. */
#include <stdio.h>
#include <string.h>
#include "cli.h"

static const struct {
  const char *name;
  int (*fn)(int, char **);
  const char *help;
} cmds[] = {
  {"analyze", rp_cmd_analyze, "analyse a graph file: bound, schedule, reports"},
  {"dot", rp_cmd_dot, "write a graph file as Graphviz dot"},
  {"calibrate", rp_cmd_calibrate, "measure this machine's model for a backend"},
  {"check", rp_cmd_check, "check a graph's hand-written dependencies"},
};

static void usage(FILE *fp) {
  fprintf(fp,
          "usage: reprise [--help] [--version] COMMAND [ARGS]\n\n"
          "Record-once, replay-many execution of operation graphs.\n\n"
          "commands:\n");
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    fprintf(fp, "  %-9s %s\n", cmds[i].name, cmds[i].help);
  fprintf(fp, "\n'reprise COMMAND --help' describes a command.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("reprise %s\n", rp_version());
    return 0;
  }
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    if (!strcmp(argv[1], cmds[i].name))
      return cmds[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "reprise: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
