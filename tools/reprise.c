/* The reprise command-line tool: dispatches to its subcommands. */
#include <stdio.h>
#include <string.h>
#include "cli.h"

static int cmd_help(int argc, char **argv);

/* One line per subcommand (each in its own tools/cmd_NAME.c). */
static const struct {
  const char *name;
  int (*fn)(int, char **);
  const char *help;
} cmds[] = {
  {"analyze", rp_cmd_analyze, "analyse a graph file: bound, schedule, reports"},
  {"dot", rp_cmd_dot, "write a graph file as Graphviz dot"},
  {"calibrate", rp_cmd_calibrate, "measure this machine's model for a backend"},
  {"check", rp_cmd_check, "check a graph's hand-written dependencies"},
  {"run", rp_cmd_run, "replay a graph file on a backend"},
  {"plot", rp_cmd_plot, "draw predicted and achieved speedup against threads"},
  {"help", cmd_help, "describe the tool or one command"},
};
enum { NCMDS = sizeof cmds / sizeof cmds[0] };

static void usage(FILE *fp) {
  fprintf(fp,
          "usage: reprise [-h | --help] [-V | --version] COMMAND [ARGS]\n\n"
          "Record-once, replay-many execution of operation graphs: "
          "analyses and replays\ngraph files (format: docs/format.md).\n\n"
          "commands:\n");
  for (size_t i = 0; i < NCMDS; i++)
    fprintf(fp, "  %-10s %s\n", cmds[i].name, cmds[i].help);
  fprintf(fp, "\n'reprise help COMMAND' (or 'reprise COMMAND --help') "
              "describes a command.\n"
              "Environment: RP_BACKEND (default backend), "
              "REPRISE_PLUGIN_PATH (folders of\nbackend plugins), "
              "RP_NO_AUTOCALIBRATE=1 (no calibration on first use).\n");
}

static int find(const char *name) {
  for (size_t i = 0; i < NCMDS; i++)
    if (!strcmp(name, cmds[i].name))
      return (int)i;
  return -1;
}

static int cmd_help(int argc, char **argv) {
  if (argc < 2) {
    usage(stdout);
    return 0;
  }
  int i = find(argv[1]);
  if (argc > 2 || i < 0) {
    fprintf(stderr, argc > 2 ? "reprise help: one command at a time\n"
                             : "reprise help: unknown command '%s'\n",
            argv[1]);
    return 2;
  }
  if (cmds[i].fn == cmd_help) {
    usage(stdout);
    return 0;
  }
  char name[32], opt[] = "--help";
  snprintf(name, sizeof name, "%s", cmds[i].name);
  char *av[] = {name, opt, NULL};
  return cmds[i].fn(2, av);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *a = argv[1];
  if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
    printf("reprise %s\n", rp_version());
    return 0;
  }
  if (a[0] == '-') {
    fprintf(stderr, "reprise: unknown option '%s'\nTry 'reprise --help'.\n",
            a);
    return 2;
  }
  int i = find(a);
  if (i >= 0)
    return cmds[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "reprise: unknown command '%s'\nTry 'reprise --help'.\n",
          a);
  return 2;
}
