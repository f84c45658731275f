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
    {"analyze", rp_cmd_analyze,
     "analyse a graph file: bound, schedule, reports"},
    {"dot", rp_cmd_dot, "write a graph file as Graphviz dot"},
    {"calibrate", rp_cmd_calibrate,
     "measure this machine's model for a backend"},
    {"check", rp_cmd_check, "check a graph's hand-written dependencies"},
    {"run", rp_cmd_run, "replay a graph file on a backend"},
    {"plot", rp_cmd_plot,
     "draw predicted and achieved speedup against threads"},
    {"help", cmd_help, "describe the tool or one command"},
};
enum { NCMDS = sizeof cmds / sizeof cmds[0] };

static void usage(FILE *fp) {
  fprintf(fp, "usage: reprise [-h | --help] [-V | --version] COMMAND [ARGS]\n\n"
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

/* Edits (insert, delete, substitute, swap two neighbours) from a to b,
 * for names under 32 characters; 99 beyond. */
static unsigned edits(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n >= 32 || m >= 32)
    return 99;
  unsigned d[33][33];
  for (size_t i = 0; i <= n; i++)
    for (size_t j = 0; j <= m; j++) {
      if (!i || !j) {
        d[i][j] = (unsigned)(i + j);
        continue;
      }
      unsigned c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < c)
        c = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < c)
        c = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < c)
        c = d[i - 2][j - 2] + 1;
      d[i][j] = c;
    }
  return d[n][m];
}

/* The command a mistyped name most likely meant (at most 2 edits, 1 for
 * names of 4 characters or fewer, or a prefix of 3 characters or more),
 * or NULL. */
static const char *did_you_mean(const char *name) {
  const char *best = NULL;
  unsigned bd = strlen(name) <= 4 ? 2 : 3; /* "foo" is not "dot" */
  for (size_t i = 0; i < NCMDS; i++) {
    unsigned e = edits(name, cmds[i].name);
    if (strlen(name) >= 3 && !strncmp(cmds[i].name, name, strlen(name)))
      e = 1;
    if (e < bd) {
      bd = e;
      best = cmds[i].name;
    }
  }
  return best;
}

/* "unknown command 'X'" and, when one is close, "did you mean 'Y'?". */
static void unknown_command(const char *who, const char *name) {
  fprintf(stderr, "%s: unknown command '%s'\n", who, name);
  const char *m = did_you_mean(name);
  if (m)
    fprintf(stderr, "Did you mean 'reprise %s'?\n", m);
}

static int cmd_help(int argc, char **argv) {
  if (argc < 2) {
    usage(stdout);
    return 0;
  }
  int i = find(argv[1]);
  if (argc > 2) {
    fprintf(stderr, "reprise help: one command at a time\n");
    return 2;
  }
  if (i < 0) {
    unknown_command("reprise help", argv[1]);
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
    fprintf(stderr, "reprise: unknown option '%s'\nTry 'reprise --help'.\n", a);
    return 2;
  }
  int i = find(a);
  if (i >= 0)
    return cmds[i].fn(argc - 1, argv + 1);
  unknown_command("reprise", a);
  fprintf(stderr, "Try 'reprise --help'.\n");
  return 2;
}
