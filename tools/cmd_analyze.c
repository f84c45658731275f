/* reprise analyze: bound, schedule and reports of a graph file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static void usage(FILE *fp) {
  fprintf(fp,
          "usage: reprise analyze [OPTIONS] FILE.json\n\n"
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
          "  --host-us X         cost of a host task without one "
          "(default 10)\n"
          "  --compute-units K   K compute lanes per device (FPGA compute "
          "units),\n"
          "                      kernels taken in turn (default 1)\n"
          "  --dot OUT           write Graphviz dot of the schedule to OUT\n"
          "  --trace OUT         write a Chrome trace-event timeline to OUT "
          "(Perfetto);\n"
          "                      over --trace-events operations, as "
          "numbered files\n"
          "                      OUT.1.json, OUT.2.json, ... (OUT less its "
          ".json)\n"
          "  --trace-events N    operations per trace file (default "
          "500000: the viewers\n"
          "                      stop at about 1 M events or 256 MB)\n"
          "  --svg OUT           write an SVG Gantt chart to OUT\n"
          "  --costs FILE        measured costs of the graph in FILE, applied "
          "by operation\n                      name (the k-th op named X gets "
          "the k-th one's)\n"
          "  --model FILE        machine model (docs/model.md): adds the "
          "calibrated\n                      prediction beside the bounds "
          "(--*-gbps override it)\n"
          "  --backend B         predict for backend B on this machine: "
          "its model (cached,\n                      or calibrated on first "
          "use: a few seconds, once) and\n                      its threads "
          "and devices\n"
          "  --threads N         with --backend openmp: a team of N threads "
          "(default: the\n                      OpenMP default); the graph's "
          "team times (saved by the\n                      examples' --save) "
          "are used when they are of N threads\n                      on "
          "that backend, else serial costs (the report says which)\n"
          "  --calibrate         with --backend: calibrate again now, even "
          "if cached\n"
          "  --mode M            overlapped mode predicted (graph, streams, "
          "parallel)\n"
          "  --ranks N           the graph runs over N MPI ranks (starpu "
          "mode \"mpi\": host on\n"
          "                      rank 0, device d on rank d %% N); copies "
          "between ranks go on\n"
          "                      a lane net:a-b per pair of ranks\n"
          "  --net-latency-us X  one-way message latency, us (default 2)\n"
          "  --net-gbps X        bandwidth between ranks, GB/s (default 10; "
          "both from\n"
          "                      tools/bench/bench_mpi_pingpong)\n"
          "  --split NAME:AXIS:P[,P...]\n"
          "                      after the report, advise how many chunks "
          "to cut the kernel\n"
          "                      operations named NAME into along AXIS (x, "
          "y, z), their\n"
          "                      accesses P following the cut "
          "(docs/split.md):\n"
          "                      \"split NAME in K: predicted S\"\n"
          "  --progress          show progress on standard error (default: "
          "when it is a\n                      terminal, for work over a "
          "second)\n"
          "  --strict            unknown keys in FILE.json are errors, not "
          "warnings\n"
          "  -h, --help          print this help\n\n"
          "Options take their value as --opt VALUE or --opt=VALUE. OUT may "
          "be \"-\" for\nstandard output: the report is then not printed, "
          "so that the two never mix\n(one OUT at most may be \"-\").\n"
          "Exit status: 0 success, 1 unreadable graph, failed analysis or "
          "failed write,\n2 bad usage.\n");
}

/* rp_analyze() on a thread of its own (rp_cli_busy), its message kept. */
typedef struct an_job {
  const rp_graph *g;
  const rp_analysis_opts *o;
  rp_analysis **a;
  rp_status s;
  char err[512];
} an_job;

static void an_run(void *v) {
  an_job *j = v;
  j->s = rp_analyze(j->g, j->o, j->a);
  snprintf(j->err, sizeof j->err, "%s", rp_last_error());
}

typedef rp_status (*writer)(const rp_analysis *, FILE *);

static int write_to(const char *path, writer w, const rp_analysis *a) {
  FILE *fp = rp_cli_open_out(path);
  if (!fp)
    return 1;
  rp_status s = w(a, fp);
  int rc = rp_cli_close_out(fp, path, s == RP_OK);
  if (s != RP_OK) {
    fprintf(stderr, "reprise analyze: %s: %s\n", path ? path : "stdout",
            rp_strerror(s));
    rc = 1;
  }
  return rc;
}

/* The trace, in numbered files of at most @p max events when it has more
 * (not on standard output: one stream stays whole). */
static int write_trace(const char *path, const rp_analysis *a, uint32_t max,
                       uint32_t nops) {
  uint32_t parts = rp_analysis_trace_parts(a, max);
  if (parts == 1 || !strcmp(path, "-"))
    return write_to(path, rp_analysis_write_trace, a);
  size_t len = strlen(path), stem = len;
  if (len > 5 && !strcmp(path + len - 5, ".json"))
    stem = len - 5;
  char *name = malloc(len + 32);
  if (!name) {
    fprintf(stderr, "reprise analyze: out of memory\n");
    return 1;
  }
  int rc = 0;
  for (uint32_t k = 0; k < parts && !rc; k++) {
    snprintf(name, len + 32, "%.*s.%u.json", (int)stem, path, k + 1);
    FILE *fp = rp_cli_open_out(name);
    if (!fp) {
      rc = 1;
      break;
    }
    rp_status s = rp_analysis_write_trace_part(a, fp, k * max, max);
    rc = rp_cli_close_out(fp, name, s == RP_OK);
    if (s != RP_OK) {
      fprintf(stderr, "reprise analyze: %s: %s\n", name, rp_strerror(s));
      rc = 1;
    }
  }
  if (!rc)
    fprintf(stderr,
            "reprise analyze: trace of %u operations written as %u "
            "files of at most %u: %.*s.1.json to %s\n",
            nops, parts, max, (int)stem, path, name);
  free(name);
  return rc;
}

enum {
  O_JSON = 256,
  O_ENGINES,
  O_H2D,
  O_D2H,
  O_P2P,
  O_KERNEL,
  O_HOST,
  O_UNITS,
  O_DOT,
  O_TRACE,
  O_SVG,
  O_STRICT,
  O_COSTS,
  O_MODEL,
  O_BACKEND,
  O_CALIBRATE,
  O_MODE,
  O_RANKS,
  O_NETLAT,
  O_NETBW,
  O_SPLIT,
  O_TRACE_EVENTS,
  O_PROGRESS,
  O_THREADS
};

/* What the command line asked for. */
typedef struct an_cli {
  const char *dot, *trace, *svg;
  const char *costs, *model, *backend, *split, *in;
  uint32_t trace_events;
  int json, calibrate, to_stdout;
  int set_h2d, set_d2h, set_p2p;
  unsigned threads;
  rp_model m;
  rp_analysis_opts o;
} an_cli;

/* One option @p c (getopt_long's answer, its value in optarg) into @p a:
 * -1 to go on, else the exit status. */
static int parse_option(an_cli *a, int c, char **argv) {
  static const char *const cmd = "analyze";
  static unsigned units[RP_MAX_DEVICES];
  rp_analysis_opts *o = &a->o;
  unsigned long k;
  int bad = 0;
  switch (c) {
  case 'h':
    usage(stdout);
    return 0;
  case O_JSON:
    a->json = 1;
    break;
  case O_STRICT:
    rp_cli_strict = 1;
    break;
  case O_CALIBRATE:
    a->calibrate = 1;
    break;
  case O_COSTS:
    a->costs = optarg;
    break;
  case O_MODEL:
    a->model = optarg;
    break;
  case O_BACKEND:
    a->backend = optarg;
    break;
  case O_MODE:
    o->mode = optarg;
    break;
  case O_SPLIT:
    a->split = optarg;
    break;
  case O_PROGRESS:
    rp_cli_show_progress = 1;
    break;
  case O_THREADS:
    bad = rp_cli_uint(cmd, "--threads", optarg, 1, 4096, &k);
    a->threads = (unsigned)k;
    break;
  case O_RANKS:
    bad = rp_cli_uint(cmd, "--ranks", optarg, 1, 4096, &k);
    o->nranks = (unsigned)k;
    break;
  case O_NETLAT:
    bad = rp_cli_number(cmd, "--net-latency-us", optarg, 0, &o->net_latency_us);
    break;
  case O_NETBW:
    bad = rp_cli_number(cmd, "--net-gbps", optarg, 1, &o->net_gbps);
    break;
  case O_ENGINES:
    bad = rp_cli_uint(cmd, "--copy-engines", optarg, 1, 2, &k);
    o->copy_engines = (unsigned)k;
    break;
  case O_H2D:
    bad = rp_cli_number(cmd, "--h2d-gbps", optarg, 1, &o->h2d_gbps);
    a->set_h2d = 1;
    break;
  case O_D2H:
    bad = rp_cli_number(cmd, "--d2h-gbps", optarg, 1, &o->d2h_gbps);
    a->set_d2h = 1;
    break;
  case O_P2P:
    bad = rp_cli_number(cmd, "--p2p-gbps", optarg, 1, &o->p2p_gbps);
    a->set_p2p = 1;
    break;
  case O_KERNEL:
    bad = rp_cli_number(cmd, "--kernel-us", optarg, 0, &o->kernel_us);
    break;
  case O_HOST:
    bad = rp_cli_number(cmd, "--host-us", optarg, 0, &o->host_us);
    break;
  case O_TRACE_EVENTS:
    if (!(bad = rp_cli_uint(cmd, "--trace-events", optarg, 1, UINT32_MAX, &k)))
      a->trace_events = (uint32_t)k;
    break;
  case O_UNITS:
    if (!(bad = rp_cli_uint(cmd, "--compute-units", optarg, 1, 4096, &k))) {
      for (unsigned d = 0; d < RP_MAX_DEVICES; d++)
        units[d] = (unsigned)k;
      o->compute_units = units;
      o->ncompute_units = RP_MAX_DEVICES;
    }
    break;
  case O_DOT:
  case O_TRACE:
  case O_SVG:
    if (!optarg[0]) {
      fprintf(stderr, "reprise analyze: %s needs a file name (or \"-\")\n",
              c == O_DOT     ? "--dot"
              : c == O_TRACE ? "--trace"
                             : "--svg");
      return 2;
    }
    *(c == O_DOT ? &a->dot : c == O_TRACE ? &a->trace : &a->svg) = optarg;
    break;
  default:
    return rp_cli_bad_option(cmd, c, argv);
  }
  return bad ? 2 : -1;
}

/* The options and the one graph file: -1 to go on, else the exit status. */
static int parse_args(an_cli *a, int argc, char **argv) {
  static const struct option opts[] = {
      {"json", no_argument, NULL, O_JSON},
      {"copy-engines", required_argument, NULL, O_ENGINES},
      {"h2d-gbps", required_argument, NULL, O_H2D},
      {"d2h-gbps", required_argument, NULL, O_D2H},
      {"p2p-gbps", required_argument, NULL, O_P2P},
      {"kernel-us", required_argument, NULL, O_KERNEL},
      {"host-us", required_argument, NULL, O_HOST},
      {"compute-units", required_argument, NULL, O_UNITS},
      {"dot", required_argument, NULL, O_DOT},
      {"trace", required_argument, NULL, O_TRACE},
      {"trace-events", required_argument, NULL, O_TRACE_EVENTS},
      {"svg", required_argument, NULL, O_SVG},
      {"strict", no_argument, NULL, O_STRICT},
      {"costs", required_argument, NULL, O_COSTS},
      {"model", required_argument, NULL, O_MODEL},
      {"backend", required_argument, NULL, O_BACKEND},
      {"calibrate", no_argument, NULL, O_CALIBRATE},
      {"mode", required_argument, NULL, O_MODE},
      {"ranks", required_argument, NULL, O_RANKS},
      {"net-latency-us", required_argument, NULL, O_NETLAT},
      {"net-gbps", required_argument, NULL, O_NETBW},
      {"split", required_argument, NULL, O_SPLIT},
      {"progress", no_argument, NULL, O_PROGRESS},
      {"threads", required_argument, NULL, O_THREADS},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  int c;
  rp_cli_getopt_reset();
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    int rc = parse_option(a, c, argv);
    if (rc >= 0)
      return rc;
  }
  if (optind != argc - 1) {
    if (optind < argc)
      fprintf(stderr, "reprise analyze: one graph file at a time\n");
    else
      fprintf(stderr, "reprise analyze: no graph file given\n");
    fprintf(stderr, "Try 'reprise help analyze'.\n");
    return 2;
  }
  a->in = argv[optind];
  return -1;
}

/* Options that exclude or need each other: 0, or 2 (said why). */
static int check_combinations(an_cli *a) {
  a->to_stdout = (a->dot && !strcmp(a->dot, "-")) +
                 (a->trace && !strcmp(a->trace, "-")) +
                 (a->svg && !strcmp(a->svg, "-"));
  if (a->to_stdout > 1) {
    fprintf(stderr, "reprise analyze: only one of --dot, --trace, --svg may "
                    "write to standard output\n");
    return 2;
  }
  if (a->model && a->backend) {
    fprintf(stderr, "reprise analyze: --model or --backend, not both\n");
    return 2;
  }
  if (a->threads && !a->backend) {
    fprintf(stderr, "reprise analyze: --threads needs --backend\n");
    return 2;
  }
  return 0;
}

/* The machine model of --model or --backend (if any) into the options,
 * with the bandwidths of the command line, and --mode checked against it:
 * -1 to go on, else the exit status. */
static int load_model(an_cli *a) {
  rp_model *m = &a->m;
  rp_analysis_opts *o = &a->o;
  if (rp_cli_model_threads(a->model, a->backend, a->calibrate, a->threads, m))
    return 1;
  if (a->model || a->backend) {
    /* Bandwidths given on the command line override the model's. */
    if (a->set_h2d)
      m->h2d.gbps = o->h2d_gbps;
    if (a->set_d2h)
      m->d2h.gbps = o->d2h_gbps;
    if (a->set_p2p)
      m->p2p.gbps = o->p2p_gbps;
    o->model = m;
  }
  if (o->mode && (!o->model || !rp_model_find_mode(m, o->mode))) {
    /* Said here: unchecked, it was ignored (no model) or "not found". */
    fprintf(stderr, "reprise analyze: --mode %s: ", o->mode);
    if (!o->model) {
      fprintf(stderr, "needs --model or --backend (a mode's overhead comes "
                      "from a machine model)\n");
      return 2;
    }
    fprintf(stderr, "no such mode in the model (its modes:");
    for (unsigned i = 0; i < m->nmode && i < RP_MODEL_MAX_MODES; i++)
      fprintf(stderr, " %s", m->mode[i].name);
    fprintf(stderr, ")\n");
    return 1; /* as the analysis' "not found" was */
  }
  return -1;
}

/* The graph with its costs and the backend's options: NULL on failure
 * (said why). */
static rp_graph *load_graph(an_cli *a) {
  static unsigned bunits[RP_MAX_DEVICES];
  rp_graph *g = rp_cli_load(a->in);
  if (!g || rp_cli_apply_costs(g, a->costs) ||
      (a->backend &&
       rp_cli_backend_opts(g, a->backend, a->threads, &a->m, bunits, &a->o))) {
    rp_graph_destroy(g);
    return NULL;
  }
  return g;
}

/* rp_analyze() with its progress shown: NULL on failure (said why). */
static rp_analysis *analyse(an_cli *a, const rp_graph *g) {
  rp_analysis *an = NULL;
  an_job job = {g, &a->o, &an, RP_OK, ""};
  char what[300];
  snprintf(what, sizeof what, "analysing %s", a->in);
  rp_cli_busy(what, rp_cli_show_progress, an_run, &job, NULL, NULL);
  if (job.s != RP_OK) {
    fprintf(stderr, "reprise analyze: %s: cannot analyse: %s (%s)\n", a->in,
            rp_strerror(job.s), job.err);
    return NULL;
  }
  return an;
}

/* The report and every file asked for, then the split advice: 0, 1 (a
 * write or the advice failed) or 2 (bad --split). */
static int write_outputs(an_cli *a, const rp_graph *g, const rp_analysis *an) {
  int rc = a->to_stdout ? 0
                        : write_to(NULL,
                                   a->json ? rp_analysis_write_json
                                           : rp_analysis_write_text,
                                   an);
  if (a->dot)
    rc |= write_to(a->dot, rp_analysis_write_dot, an);
  if (a->trace)
    rc |= write_trace(a->trace, an, a->trace_events, rp_graph_num_nodes(g));
  if (a->svg)
    rc |= write_to(a->svg, rp_analysis_write_svg, an);
  if (a->split && !rc) {
    int r = rp_cli_split_advice(g, a->split, &a->o,
                                a->to_stdout || a->json ? stderr : stdout);
    if (r == 2)
      return 2;
    rc |= r;
  }
  return rc ? 1 : 0;
}

int rp_cmd_analyze(int argc, char **argv) {
  an_cli a = {.trace_events = RP_TRACE_PART_EVENTS};
  rp_analysis_opts_init(&a.o);
  int rc = parse_args(&a, argc, argv);
  if (rc >= 0)
    return rc;
  if ((rc = check_combinations(&a)) != 0)
    return rc;
  if ((rc = load_model(&a)) >= 0)
    return rc;
  rp_graph *g = load_graph(&a);
  if (!g)
    return 1;
  rp_analysis *an = analyse(&a, g);
  if (!an) {
    rp_graph_destroy(g);
    return 1;
  }
  rc = write_outputs(&a, g, an);
  rp_analysis_destroy(an);
  rp_graph_destroy(g);
  return rc;
}
