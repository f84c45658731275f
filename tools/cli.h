/* Shared declarations of the reprise command-line tool's subcommands. */
#ifndef RP_CLI_H
#define RP_CLI_H

#include <getopt.h>
#include <stdatomic.h>
#include <stdio.h>
#include "reprise.h"

/* Each subcommand gets argv[0] = its own name; returns the exit status:
 * 0 success, 1 failure of the work, 2 bad usage. `--help` prints its usage
 * on standard output (`reprise help CMD` does that, and the option list of
 * the man page tools/man/reprise-CMD.1 is generated from it by
 * scripts/gen_man.sh). Options are parsed with
 * getopt_long: `--opt value`, `--opt=value`, options after operands. */
int rp_cmd_dot(int argc, char **argv);
int rp_cmd_analyze(int argc, char **argv);
int rp_cmd_calibrate(int argc, char **argv);
int rp_cmd_check(int argc, char **argv);
int rp_cmd_run(int argc, char **argv);
int rp_cmd_plot(int argc, char **argv);

/* Set by --strict: unknown keys in graph files are errors, not warnings. */
extern int rp_cli_strict;

/* Reads a graph file ("-" is standard input); prints why on stderr (a
 * directory, an unreadable file, a malformed graph) and returns NULL on
 * failure; prints a warning per unknown key (an error with rp_cli_strict). */
rp_graph *rp_cli_load(const char *path);

/* The model for analyze: read from path, or the calibration of backend
 * (cached, or calibrated on first use; calibrate: again); neither: m is
 * left uninitialised. Prints why and returns 1 on failure, else 0. */
int rp_cli_model(const char *path, const char *backend, int calibrate,
                 rp_model *m);
/* The same for a team of `threads` (0: the backend's default); with a
 * backend, the model is calibrated on first use (a progress line on
 * stderr; calibrate: again, even if cached). */
int rp_cli_model_threads(const char *path, const char *backend, int calibrate,
                         unsigned threads, rp_model *m);
/* Puts in o what `backend` run with `threads` would run g with: the model
 * m with its devices' units and physical devices, the compute lanes in
 * units (unless o has some). Returns 0, or prints why and returns 1. */
int rp_cli_backend_opts(const rp_graph *g, const char *backend,
                        unsigned threads, rp_model *m, unsigned *units,
                        rp_analysis_opts *o);
/* Applies the measured costs of graph file `path` (NULL: nothing) to g by
 * operation name; prints how many matched on stderr. Returns 0 or 1. */
int rp_cli_apply_costs(rp_graph *g, const char *path);

/* analyze --split NAME:AXIS:P[,P...]: records g again with the kernel
 * operations named NAME declared splittable along AXIS, accesses P
 * following, and prints rp_split_advise()'s line to fp. Returns the exit
 * status (0, 1, 2 for a bad spec). */
int rp_cli_split_advice(const rp_graph *g, const char *spec,
                        const rp_analysis_opts *o, FILE *fp);

/* Opens an output file ("-" or NULL is standard output); prints why on
 * stderr and returns NULL on failure. */
FILE *rp_cli_open_out(const char *path);
/* Closes what rp_cli_open_out returned: a file is renamed over @p path
 * when @p keep and every write went through (rp_outfile_commit), else
 * removed with the previous file left intact; returns 0, or prints why
 * and returns 1 (always 1 when !keep). */
int rp_cli_close_out(FILE *fp, const char *path, int keep);

/* A progress line on standard error (item 9 of issue 27): shown when
 * `forced` (--progress: every update, newline-terminated lines when
 * standard error is no terminal) or when standard error is a terminal and
 * the work has taken a second; updated in place on a terminal, at most
 * ten times a second; erased by rp_cli_progress_end(). The library never
 * prints: the tool draws the line from the library's progress callbacks
 * or between the calls it makes. */
typedef struct rp_cli_progress {
  const char *what; /* "replay", "reading FILE" ... */
  int on, forced, tty, shown;
  int bytes;       /* amounts are bytes: printed in MB */
  double t0, last; /* us */
} rp_cli_progress;
void rp_cli_progress_start(rp_cli_progress *p, const char *what, int forced);
/* done of total (total 0: unknown). */
void rp_cli_progress_update(rp_cli_progress *p, double done, double total);
void rp_cli_progress_end(rp_cli_progress *p);
/* Runs fn(arg) while a line says "WHAT (1.3 s)", or "WHAT: N UNIT (1.3
 * s)" with *count (updated by fn from its thread), shown as above; without
 * a line to show, fn runs on the calling thread. */
void rp_cli_busy(const char *what, int forced, void (*fn)(void *), void *arg,
                 const atomic_ulong *count, const char *unit);
/* Set by --progress: show progress lines even when standard error is no
 * terminal, and at once. */
extern int rp_cli_show_progress;

/* Starts getopt_long over a subcommand's arguments (resets its state). */
void rp_cli_getopt_reset(void);
/* Prints the error getopt_long signalled with @p c ('?' unknown option or
 * ':' missing value) for command @p cmd; returns 2. */
int rp_cli_bad_option(const char *cmd, int c, char **argv);
/* Parses a non-negative (rate: positive) finite number for option @p opt;
 * prints why and returns -1 when it is not one. */
int rp_cli_number(const char *cmd, const char *opt, const char *s, int rate,
                  double *out);
/* Parses an unsigned integer in [lo, hi]; prints why and returns -1. */
int rp_cli_uint(const char *cmd, const char *opt, const char *s,
                unsigned long lo, unsigned long hi, unsigned long *out);

#endif
