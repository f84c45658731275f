/* File and option helpers shared by the reprise tool's subcommands. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"

int rp_cli_strict;
int rp_cli_show_progress;

/* What the reader's callbacks get. */
typedef struct load_ctx {
  const char *path;
  rp_cli_progress p;
  double total;
} load_ctx;

static void warn_key(void *user, const char *msg) {
  load_ctx *c = user;
  rp_cli_progress_end(&c->p); /* the warning on a line of its own */
  fprintf(stderr, "reprise: %s: warning: %s\n", c->path, msg);
}

static void read_progress(void *user, uint64_t bytes) {
  load_ctx *c = user;
  rp_cli_progress_update(&c->p, (double)bytes, c->total);
}

rp_graph *rp_cli_load(const char *path) {
  int std = !strcmp(path, "-");
  struct stat st;
  memset(&st, 0, sizeof st);
  if (!std && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    fprintf(stderr, "reprise: %s: is a directory, not a graph file\n", path);
    return NULL;
  }
  FILE *fp = std ? stdin : fopen(path, "rb");
  if (!fp) {
    fprintf(stderr, "reprise: %s: cannot open: %s\n", path, strerror(errno));
    return NULL;
  }
  char err[512] = "", what[300];
  rp_graph *g = NULL;
  rp_read_opts o = RP_READ_OPTS_INIT;
  load_ctx c;
  snprintf(what, sizeof what, "reading %s", path);
  rp_cli_progress_start(&c.p, what, rp_cli_show_progress);
  c.p.bytes = 1;
  c.path = path;
  c.total = !std && S_ISREG(st.st_mode) ? (double)st.st_size : 0;
  o.flags = rp_cli_strict ? RP_READ_STRICT : 0;
  o.warn = warn_key;
  o.progress = read_progress;
  o.user = &c;
  rp_status s = rp_graph_read_json_opts(&g, fp, &o, err, sizeof err);
  rp_cli_progress_end(&c.p);
  if (!std)
    fclose(fp);
  if (s != RP_OK) {
    fprintf(stderr, "reprise: %s: %s%s%s\n", path, rp_strerror(s),
            err[0] ? ": " : "", err);
    return NULL;
  }
  return g;
}

/* The files being written: their stream and atomic file (cli.h). */
enum { OUTS = 8 };
static struct {
  FILE *fp;
  rp_outfile *f;
} outs[OUTS];

FILE *rp_cli_open_out(const char *path) {
  if (!path || !strcmp(path, "-"))
    return stdout;
  int k = 0;
  while (k < OUTS && outs[k].fp)
    k++;
  FILE *fp = NULL;
  rp_outfile *f = NULL;
  rp_outfile_cleanup_on_signal();
  rp_status s = k < OUTS ? rp_outfile_open(&f, path, &fp) : RP_ENOMEM;
  if (s != RP_OK) {
    const char *e = rp_last_error();
    if (e[0])
      fprintf(stderr, "reprise: %s\n", e);
    else
      fprintf(stderr, "reprise: %s: cannot write: %s\n", path, rp_strerror(s));
    return NULL;
  }
  outs[k].fp = fp;
  outs[k].f = f;
  return fp;
}

int rp_cli_close_out(FILE *fp, const char *path, int keep) {
  if (fp == stdout) {
    if (ferror(fp) | (fflush(fp) != 0)) {
      fprintf(stderr, "reprise: stdout: write failed: %s\n", strerror(errno));
      return 1;
    }
    return 0;
  }
  int k = 0;
  while (k < OUTS && outs[k].fp != fp)
    k++;
  if (k == OUTS) { /* not ours: a plain close */
    int bad = ferror(fp) | (fclose(fp) != 0);
    if (bad)
      fprintf(stderr, "reprise: %s: write failed\n", path ? path : "?");
    return bad;
  }
  rp_outfile *f = outs[k].f;
  outs[k].fp = NULL;
  outs[k].f = NULL;
  if (!keep) {
    rp_outfile_abort(f);
    return 1;
  }
  if (rp_outfile_commit(f) != RP_OK) {
    fprintf(stderr, "reprise: %s\n", rp_last_error());
    return 1;
  }
  return 0;
}

void rp_cli_getopt_reset(void) {
  optind = 0; /* GNU: full reinitialisation */
  opterr = 0;
}

int rp_cli_bad_option(const char *cmd, int c, char **argv) {
  const char *arg = argv[optind - 1];
  if (c == ':')
    fprintf(stderr, "reprise %s: option '%s' needs a value\n", cmd, arg);
  else if (optopt && arg[0] == '-' && arg[1] != '-')
    fprintf(stderr, "reprise %s: unknown option '-%c'\n", cmd, optopt);
  else
    fprintf(stderr, "reprise %s: unknown option '%s'\n", cmd, arg);
  fprintf(stderr, "Try 'reprise help %s'.\n", cmd);
  return 2;
}

int rp_cli_number(const char *cmd, const char *opt, const char *s, int rate,
                  double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !isfinite(v) ||
      (rate ? !(v > 0) : !(v >= 0))) {
    fprintf(stderr, "reprise %s: %s needs a %s number, not '%s'\n", cmd, opt,
            rate ? "positive" : "non-negative", s);
    return -1;
  }
  *out = v;
  return 0;
}

int rp_cli_uint(const char *cmd, const char *opt, const char *s,
                unsigned long lo, unsigned long hi, unsigned long *out) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (end == s || *end || errno || s[0] == '-' || v < lo || v > hi) {
    fprintf(stderr,
            "reprise %s: %s is an integer from %lu to %lu, not "
            "'%s'\n",
            cmd, opt, lo, hi, s);
    return -1;
  }
  *out = v;
  return 0;
}
