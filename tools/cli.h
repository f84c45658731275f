/* Shared declarations of the reprise command-line tool's subcommands. */
#ifndef RP_CLI_H
#define RP_CLI_H

#include <stdio.h>
#include "reprise.h"

/* Each subcommand gets argv[0] = its own name; returns the exit status:
 * 0 success, 1 failure of the work, 2 bad usage. */
int rp_cmd_dot(int argc, char **argv);
int rp_cmd_analyze(int argc, char **argv);
int rp_cmd_calibrate(int argc, char **argv);
int rp_cmd_check(int argc, char **argv);

/* Reads a graph file ("-" is standard input); prints why on stderr and
 * returns NULL on failure. */
rp_graph *rp_cli_load(const char *path);

/* The model for analyze: read from path, or the calibration of backend
 * (calibrated and saved first with calibrate and no file); neither: m is
 * left uninitialised. Prints why and returns 1 on failure, else 0. */
int rp_cli_model(const char *path, const char *backend, int calibrate,
                 rp_model *m);
/* Applies the measured costs of graph file `path` (NULL: nothing) to g by
 * operation name; prints how many matched on stderr. Returns 0 or 1. */
int rp_cli_apply_costs(rp_graph *g, const char *path);

/* Opens an output file ("-" or NULL is standard output); prints why on
 * stderr and returns NULL on failure. */
FILE *rp_cli_open_out(const char *path);
/* Closes what rp_cli_open_out returned; returns 0 or prints and returns 1. */
int rp_cli_close_out(FILE *fp, const char *path);

#endif
