/* File helpers shared by the reprise tool's subcommands. */
#include <errno.h>
#include <string.h>
#include "cli.h"

rp_graph *rp_cli_load(const char *path) {
  FILE *fp = strcmp(path, "-") ? fopen(path, "rb") : stdin;
  if (!fp) {
    fprintf(stderr, "reprise: %s: %s\n", path, strerror(errno));
    return NULL;
  }
  char err[512] = "";
  rp_graph *g = NULL;
  rp_status s = rp_graph_read_json(&g, fp, err, sizeof err);
  if (fp != stdin)
    fclose(fp);
  if (s != RP_OK) {
    fprintf(stderr, "reprise: %s: %s%s%s\n", path, rp_strerror(s),
            err[0] ? ": " : "", err);
    return NULL;
  }
  return g;
}

FILE *rp_cli_open_out(const char *path) {
  if (!path || !strcmp(path, "-"))
    return stdout;
  FILE *fp = fopen(path, "w");
  if (!fp)
    fprintf(stderr, "reprise: %s: %s\n", path, strerror(errno));
  return fp;
}

int rp_cli_close_out(FILE *fp, const char *path) {
  int bad = ferror(fp);
  if (fp == stdout)
    bad |= fflush(fp) != 0;
  else
    bad |= fclose(fp) != 0;
  if (bad) {
    fprintf(stderr, "reprise: %s: write failed\n", path ? path : "stdout");
    return 1;
  }
  return 0;
}
