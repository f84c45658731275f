/* reprise analyze: bound, schedule and reports of a graph file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static void usage(FILE *fp) {
  fprintf(fp,
          "usage: reprise analyze FILE.json [--json] [--copy-engines 1|2]\n"
          "         [--h2d-gbps X] [--d2h-gbps X] [--p2p-gbps X]\n"
          "         [--kernel-us X] [--host-us X] [--compute-units K]\n"
          "         [--ranks N] [--net-latency-us X] [--net-gbps X]\n"
          "         [--dot OUT] [--trace OUT] [--svg OUT]\n\n"
          "Analyses the graph in FILE.json (\"-\": standard input): puts "
          "every operation on\na lane (compute:N, h2d:N, d2h:N or copy:N, "
          "p2p:N, host), computes the serial\ntime, the critical path, the "
          "lane loads, the bound, the Amdahl overlap bound\nand a list "
          "schedule, and prints a report on standard output.\n"
          "Operations without a cost_us get a modelled one: copies "
          "bytes / bandwidth,\nkernels and host tasks a default.\n\n"
          "  --json              print the reprise-analysis JSON instead of "
          "the text\n"
          "  --copy-engines N    2 (default): h2d and d2h lanes per device; "
          "1: one copy lane\n"
          "  --h2d-gbps X        host-to-device bandwidth, GB/s (default 25)\n"
          "  --d2h-gbps X        device-to-host bandwidth, GB/s (default 25)\n"
          "  --p2p-gbps X        peer-copy bandwidth, GB/s (default 25)\n"
          "  --kernel-us X       cost of a kernel without one (default 10)\n"
          "  --compute-units K   K compute lanes per device (FPGA compute "
          "units),\n"
          "                      kernels taken in turn (default 1)\n"
          "  --host-us X         cost of a host task without one "
          "(default 10)\n"
          "  --ranks N           the graph runs over N MPI ranks (starpu "
          "mode \"mpi\": host on\n"
          "                      rank 0, device d on rank d %% N); copies "
          "between ranks go on\n"
          "                      a lane net:a-b per pair of ranks\n"
          "  --net-latency-us X  one-way message latency, us (default 2)\n"
          "  --net-gbps X        bandwidth between ranks, GB/s (default 10; "
          "both from\n"
          "                      tools/bench/bench_mpi_pingpong)\n"
          "  --dot OUT           write Graphviz dot of the schedule to OUT\n"
          "  --trace OUT         write a Chrome trace-event timeline to OUT "
          "(Perfetto)\n"
          "  --svg OUT           write an SVG Gantt chart to OUT\n"
          "OUT may be \"-\" for standard output.\n"
          "Exit status: 0 success, 1 unreadable graph, failed analysis or "
          "failed write,\n2 bad usage.\n");
}

/* Parses a number for option @p opt; rate: > 0, else >= 0. */
static int number(const char *opt, const char *s, int rate, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || !isfinite(v) || (rate ? !(v > 0) : !(v >= 0))) {
    fprintf(stderr, "reprise analyze: %s needs a %s number, not '%s'\n",
            opt, rate ? "positive" : "non-negative", s);
    return -1;
  }
  *out = v;
  return 0;
}

typedef rp_status (*writer)(const rp_analysis *, FILE *);

static int write_to(const char *path, writer w, const rp_analysis *a) {
  FILE *fp = rp_cli_open_out(path);
  if (!fp)
    return 1;
  rp_status s = w(a, fp);
  int rc = rp_cli_close_out(fp, path);
  if (s != RP_OK) {
    fprintf(stderr, "reprise analyze: %s: %s\n", path ? path : "stdout",
            rp_strerror(s));
    rc = 1;
  }
  return rc;
}

int rp_cmd_analyze(int argc, char **argv) {
  const char *in = NULL, *dot = NULL, *trace = NULL, *svg = NULL;
  int json = 0;
  rp_analysis_opts o;
  static unsigned units[RP_MAX_DEVICES];
  rp_analysis_opts_init(&o);
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(arg, "--json")) {
      json = 1;
      continue;
    }
    if (arg[0] != '-' || !arg[1]) {
      if (in) {
        fprintf(stderr, "reprise analyze: one graph file at a time\n");
        return 2;
      }
      in = arg;
      continue;
    }
    static const char *const valued[] = {
        "--copy-engines", "--h2d-gbps", "--d2h-gbps", "--p2p-gbps",
        "--kernel-us",    "--host-us",  "--dot",      "--trace",
        "--compute-units", "--ranks", "--net-latency-us", "--net-gbps",
        "--svg"};
    int known = 0;
    for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
      known |= !strcmp(arg, valued[k]);
    if (!known) {
      fprintf(stderr, "reprise analyze: unknown option '%s'\n", arg);
      usage(stderr);
      return 2;
    }
    if (++i >= argc) {
      fprintf(stderr, "reprise analyze: %s needs a value\n", arg);
      return 2;
    }
    const char *v = argv[i];
    int bad = 0;
    if (!strcmp(arg, "--copy-engines")) {
      if (!strcmp(v, "1") || !strcmp(v, "2")) {
        o.copy_engines = (unsigned)(v[0] - '0');
      } else {
        fprintf(stderr, "reprise analyze: --copy-engines is 1 or 2\n");
        bad = 1;
      }
    } else if (!strcmp(arg, "--h2d-gbps")) {
      bad = number(arg, v, 1, &o.h2d_gbps);
    } else if (!strcmp(arg, "--d2h-gbps")) {
      bad = number(arg, v, 1, &o.d2h_gbps);
    } else if (!strcmp(arg, "--p2p-gbps")) {
      bad = number(arg, v, 1, &o.p2p_gbps);
    } else if (!strcmp(arg, "--net-latency-us")) {
      bad = number(arg, v, 0, &o.net_latency_us);
    } else if (!strcmp(arg, "--net-gbps")) {
      bad = number(arg, v, 1, &o.net_gbps);
    } else if (!strcmp(arg, "--ranks")) {
      char *end;
      unsigned long k = strtoul(v, &end, 10);
      if (*end || end == v || k < 1 || k > 4096) {
        fprintf(stderr, "reprise analyze: --ranks is 1 to 4096\n");
        bad = 1;
      }
      o.nranks = (unsigned)k;
    } else if (!strcmp(arg, "--kernel-us")) {
      bad = number(arg, v, 0, &o.kernel_us);
    } else if (!strcmp(arg, "--host-us")) {
      bad = number(arg, v, 0, &o.host_us);
    } else if (!strcmp(arg, "--compute-units")) {
      char *end;
      unsigned long k = strtoul(v, &end, 10);
      if (*end || end == v || k < 1 || k > 4096) {
        fprintf(stderr, "reprise analyze: --compute-units is 1 to 4096\n");
        bad = 1;
      }
      for (unsigned d = 0; d < RP_MAX_DEVICES; d++)
        units[d] = (unsigned)k;
      o.compute_units = units;
      o.ncompute_units = RP_MAX_DEVICES;
    } else if (!strcmp(arg, "--dot")) {
      dot = v;
    } else if (!strcmp(arg, "--trace")) {
      trace = v;
    } else {
      svg = v;
    }
    if (bad)
      return 2;
  }
  if (!in) {
    usage(stderr);
    return 2;
  }
  rp_graph *g = rp_cli_load(in);
  if (!g)
    return 1;
  rp_analysis *a = NULL;
  rp_status s = rp_analyze(g, &o, &a);
  if (s != RP_OK) {
    /* The options were checked here and the graph by its reader: what is
     * left to refuse is costs whose sum overflows. */
    fprintf(stderr, "reprise analyze: %s: cannot analyse: %s%s\n", in,
            rp_strerror(s),
            s == RP_EINVAL ? " (the costs add up to more than a double holds)"
                           : "");
    rp_graph_destroy(g);
    return 1;
  }
  int rc = write_to(NULL, json ? rp_analysis_write_json
                               : rp_analysis_write_text, a);
  if (dot)
    rc |= write_to(dot, rp_analysis_write_dot, a);
  if (trace)
    rc |= write_to(trace, rp_analysis_write_trace, a);
  if (svg)
    rc |= write_to(svg, rp_analysis_write_svg, a);
  rp_analysis_destroy(a);
  rp_graph_destroy(g);
  return rc ? 1 : 0;
}
