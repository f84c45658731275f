/* reprise run: replay a graph file on a backend with generated data. */
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static void usage(FILE *fp) {
  fprintf(fp,
          "usage: reprise run [OPTIONS] FILE.json\n\n"
          "Replays the graph in FILE.json (\"-\": standard input) on a "
          "backend, with every\nbuffer filled with generated data, and "
          "checks the result against the\nsequential reference replay of "
          "the same graph.\n"
          "A graph file holds no code: kernels and host tasks are stored by "
          "name only,\nand no kernel is registered by name in this tool, so "
          "a graph with kernels or\nhost tasks is refused with the name of "
          "the first one; graphs of copies run.\nPrograms replay their "
          "graphs with kernels themselves (rp_exec_create).\n\n"
          "  -b, --backend NAME  openmp, cuda, xrt, reference, or auto "
          "(default:\n"
          "                      RP_BACKEND, else the best usable one)\n"
          "  -n, --iters N       replays (default 1)\n"
          "  --reshape-copies[=BYTES]\n"
          "                      merge copies in that average fewer than "
          "BYTES (default\n"
          "                      262144) and split copies back per writer "
          "into pieces\n"
          "                      of at least BYTES "
          "(rp_exec_opts.reshape_copies)\n"
          "  --strict            unknown keys in FILE.json are errors, not "
          "warnings\n"
          "  -h, --help          print this help\n\n"
          "Exit status: 0 the replay matches the reference, 1 unreadable or "
          "unrunnable\ngraph, backend failure or mismatch, 2 bad usage.\n");
}

/* A copy of @p g over fresh host arrays (hosts[b], generated data) with
 * the same buffers and operations, recorded as given; NULL with a message
 * when an operation cannot be re-recorded. */
static rp_graph *with_data(const rp_graph *g, const char *in, void **hosts) {
  rp_graph *c;
  if (rp_graph_create(&c, RP_GRAPH_NO_COHERENCE) != RP_OK)
    return NULL;
  rp_status s = RP_OK;
  for (rp_buf b = 0; s == RP_OK && b < rp_graph_num_buffers(g); b++) {
    rp_buffer_desc d;
    rp_buf nb;
    rp_buffer_info(g, b, &d);
    unsigned char *h = malloc(d.bytes ? d.bytes : 1);
    if (!h) {
      s = RP_ENOMEM;
      break;
    }
    for (uint64_t i = 0; i < d.bytes; i++)
      h[i] = (unsigned char)(i * 31u + b * 7u + 1u);
    hosts[b] = h;
    d.host = h;
    s = rp_buffer_add(c, &d, &nb);
  }
  for (rp_node n = 0; s == RP_OK && n < rp_graph_num_nodes(g); n++) {
    rp_node_info ni;
    rp_access_info a;
    rp_node_info_get(g, n, &ni);
    if (ni.type == RP_OP_KERNEL || ni.type == RP_OP_HOST) {
      fprintf(stderr,
              "reprise run: %s: cannot replay op %u (\"%s\"): it is a %s, "
              "and a graph file\nholds no code (no %s is registered by name "
              "in this tool)\n",
              in, n, ni.name, ni.type == RP_OP_KERNEL ? "kernel" : "host task",
              ni.type == RP_OP_KERNEL ? "kernel" : "host task");
      rp_graph_destroy(c);
      return NULL;
    }
    rp_node_access(g, n, 0, &a);
    rp_op_opts o = {0};
    o.name = ni.name;
    o.cost_us = ni.cost_us;
    if (ni.type == RP_OP_COPY_H2D)
      s = rp_record_copy_to_device(c, a.region, ni.device, &o, NULL);
    else if (ni.type == RP_OP_COPY_D2H)
      s = rp_record_copy_to_host(c, a.region, ni.device, &o, NULL);
    else
      s = rp_record_copy_peer(c, a.region, ni.device, ni.dst_device, &o,
                              NULL);
  }
  if (s == RP_OK)
    s = rp_graph_end(c);
  if (s != RP_OK) {
    fprintf(stderr, "reprise run: %s: cannot rebuild the graph: %s (%s)\n",
            in, rp_strerror(s), rp_graph_error(c));
    rp_graph_destroy(c);
    return NULL;
  }
  return c;
}

static void free_hosts(void **h, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    free(h[i]);
  free(h);
}

int rp_cmd_run(int argc, char **argv) {
  static const struct option opts[] = {
      {"backend", required_argument, NULL, 'b'},
      {"iters", required_argument, NULL, 'n'},
      {"strict", no_argument, NULL, 'S'},
      {"reshape-copies", optional_argument, NULL, 'R'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  const char *bname = NULL;
  unsigned long iters = 1, reshape = 0;
  int c;
  rp_cli_getopt_reset();
  while ((c = getopt_long(argc, argv, ":hb:n:", opts, NULL)) != -1) {
    switch (c) {
    case 'h':
      usage(stdout);
      return 0;
    case 'b':
      bname = optarg;
      break;
    case 'n':
      if (rp_cli_uint("run", "--iters", optarg, 1, 1000000, &iters))
        return 2;
      break;
    case 'S':
      rp_cli_strict = 1;
      break;
    case 'R':
      if (!optarg)
        reshape = (unsigned long)RP_EXEC_RESHAPE_AUTO;
      else if (rp_cli_uint("run", "--reshape-copies", optarg, 1,
                           1ul << 40, &reshape))
        return 2;
      break;
    default:
      return rp_cli_bad_option("run", c, argv);
    }
  }
  if (optind != argc - 1) {
    fprintf(stderr, "reprise run: %s\nTry 'reprise help run'.\n",
            optind < argc ? "one graph file at a time" : "no graph file given");
    return 2;
  }
  const char *in = argv[optind];
  rp_graph *g = rp_cli_load(in);
  if (!g)
    return 1;
  const rp_backend *be;
  rp_status s = rp_backend_find(bname, &be);
  if (s != RP_OK) {
    fprintf(stderr, "reprise run: backend %s: %s: %s\n",
            bname ? bname : "auto", rp_strerror(s), rp_last_error());
    rp_graph_destroy(g);
    return 1;
  }
  uint32_t nb = rp_graph_num_buffers(g);
  void **h1 = calloc(nb + 1, sizeof *h1), **h2 = calloc(nb + 1, sizeof *h2);
  rp_graph *run = h1 ? with_data(g, in, h1) : NULL;
  rp_graph *ref = run && h2 ? with_data(g, in, h2) : NULL;
  int rc = 1;
  rp_exec *x = NULL;
  if (!ref)
    goto done;
  rp_exec_opts eo = RP_EXEC_OPTS_INIT;
  eo.reshape_copies = (size_t)reshape;
  if ((s = rp_exec_create(&x, run, be, &eo)) != RP_OK) {
    fprintf(stderr, "reprise run: %s: backend %s: %s: %s\n", in,
            rp_backend_name(be), rp_strerror(s), rp_last_error());
    goto done;
  }
  if ((s = rp_exec_run(x, (unsigned)iters)) != RP_OK) {
    fprintf(stderr, "reprise run: %s: backend %s: %s: %s\n", in,
            rp_backend_name(be), rp_strerror(s), rp_exec_error(x));
    goto done;
  }
  double us = rp_exec_last_us(x);
  if ((s = rp_replay_reference(ref, (unsigned)iters)) != RP_OK) {
    fprintf(stderr, "reprise run: %s: reference replay: %s: %s\n", in,
            rp_strerror(s), rp_last_error());
    goto done;
  }
  rc = 0;
  uint64_t changed = 0;
  for (rp_buf b = 0; b < nb; b++) {
    rp_buffer_desc d;
    rp_buffer_info(g, b, &d);
    const unsigned char *h = h1[b];
    for (uint64_t i = 0; i < d.bytes; i++)
      changed += h[i] != (unsigned char)(i * 31u + b * 7u + 1u);
    if (memcmp(h1[b], h2[b], d.bytes)) {
      fprintf(stderr, "reprise run: %s: buffer \"%s\" differs from the "
              "reference replay\n", in, d.name);
      rc = 1;
    }
  }
  uint32_t merged, split;
  if (rp_exec_copies_reshaped(x, &merged, &split))
    printf("%s: copies reshaped: %u merged into an earlier copy, %u split "
           "per writer\n", in, merged, split);
  printf("%s: %u operations, %lu replays on %s in %.1f us; %llu bytes of "
         "host data changed, %s the reference\n", in, rp_graph_num_nodes(g),
         iters, rp_backend_name(be), us, (unsigned long long)changed,
         rc ? "DIFFERENT from" : "equal to");
done:
  rp_exec_destroy(x);
  rp_graph_destroy(ref);
  rp_graph_destroy(run);
  rp_graph_destroy(g);
  if (h1)
    free_hosts(h1, nb);
  if (h2)
    free_hosts(h2, nb);
  return rc;
}
