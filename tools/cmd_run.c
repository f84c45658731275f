/* reprise run: replay a graph file on a backend, its kernels from kernel
 * libraries, its buffers from files or generated data. */
#include <errno.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static void usage(FILE *fp) {
  fprintf(fp,
          "usage: reprise run [OPTIONS] FILE.json\n\n"
          "Replays the graph in FILE.json (\"-\": standard input) on a "
          "backend and checks\nthe result against the sequential reference "
          "replay of the same graph from\nthe same data.\n"
          "A graph file holds no code: its kernels come from kernel "
          "libraries given with\n--kernels, shared objects exporting their "
          "rp_kernel descriptors by name\n(RP_KERNEL_LIBRARY, "
          "reprise/library.h; the examples build one each, e.g.\n"
          "build/examples/libjacobi2d_kernels.so); a host task runs the host "
          "task a\nlibrary exports under the operation's name. Each buffer "
          "starts with the bytes\nof its --load-buffer file, or generated "
          "bytes.\n\n"
          "  -b, --backend NAME  openmp, cuda, xrt, starpu, reference, or "
          "auto (default:\n"
          "                      RP_BACKEND, else the best usable one)\n"
          "  -n, --iters N       replays (default 1)\n"
          "  -k, --kernels LIB   load kernels and host tasks from the "
          "shared object LIB\n"
          "                      (repeatable; the first library naming a "
          "kernel wins)\n"
          "  --load-buffer NAME=FILE\n"
          "                      buffer NAME starts with the raw bytes of "
          "FILE, which must\n"
          "                      hold exactly the buffer's size "
          "(repeatable)\n"
          "  --save-buffer NAME=FILE\n"
          "                      after the replays, write buffer NAME's "
          "bytes (the\n"
          "                      backend's result) to FILE (repeatable)\n"
          "  --no-reference      do not replay the reference to compare "
          "with\n"
          "  --check             checking mode (RP_CHECK=1): each kernel "
          "and host task runs\n"
          "                      on shadow memory, one at a time; an "
          "access outside its\n"
          "                      declared regions fails the replay naming "
          "the operation,\n"
          "                      the parameter and the byte (CPU backends:\n"
          "                      the best one unless --backend names one)\n"
          "  --reshape-copies[=BYTES]\n"
          "                      merge copies in that average fewer than "
          "BYTES (default\n"
          "                      262144) and split copies back per writer "
          "into pieces\n"
          "                      of at least BYTES "
          "(rp_exec_opts.reshape_copies)\n"
          "  --progress          show progress on standard error (default: "
          "when it is a\n"
          "                      terminal, for replays that take over a "
          "second)\n"
          "  --strict            unknown keys in FILE.json are errors, not "
          "warnings\n"
          "  -h, --help          print this help\n\n"
          "Exit status: 0 the replay matches the reference, 1 unreadable or "
          "unrunnable\ngraph, missing kernel, backend failure or mismatch, "
          "2 bad usage.\n");
}

/* One NAME=FILE option. */
typedef struct bufarg {
  const char *name, *file;
} bufarg;

typedef struct run_opts {
  const char *bname;
  unsigned long iters, reshape;
  const char *libs[64];
  unsigned nlibs;
  bufarg load[64], save[64];
  unsigned nload, nsave;
  int no_ref, check, progress;
} run_opts;

static int add_bufarg(bufarg *list, unsigned *n, const char *opt, char *arg) {
  char *eq = strchr(arg, '=');
  if (!eq || eq == arg || !eq[1]) {
    fprintf(stderr, "reprise run: %s wants NAME=FILE, not '%s'\n", opt, arg);
    return -1;
  }
  if (*n == 64) {
    fprintf(stderr, "reprise run: at most 64 %s options\n", opt);
    return -1;
  }
  *eq = '\0';
  list[*n].name = arg;
  list[(*n)++].file = eq + 1;
  return 0;
}

/* The generated contents of buffer b (the same on every run). */
static void generate(unsigned char *h, uint64_t bytes, rp_buf b) {
  for (uint64_t i = 0; i < bytes; i++)
    h[i] = (unsigned char)(i * 31u + b * 7u + 1u);
}

/* Reads FILE whole into h, which holds exactly `bytes`. */
static int load_file(const char *in, const char *buf, const char *path,
                     unsigned char *h, uint64_t bytes) {
  FILE *fp = fopen(path, "rb");
  struct stat st;
  if (fp && (stat(path, &st) || S_ISDIR(st.st_mode))) {
    fclose(fp);
    fp = NULL;
    errno = EISDIR;
  }
  if (!fp) {
    fprintf(stderr, "reprise run: %s: --load-buffer %s: cannot open %s: %s\n",
            in, buf, path, strerror(errno));
    return -1;
  }
  size_t got = bytes ? fread(h, 1, (size_t)bytes, fp) : 0;
  int extra = fgetc(fp) != EOF;
  fclose(fp);
  if (got != bytes || extra) {
    fprintf(stderr,
            "reprise run: %s: --load-buffer %s: %s holds %s bytes, "
            "the buffer %llu\n",
            in, buf, path, extra ? "more than" : "fewer",
            (unsigned long long)bytes);
    return -1;
  }
  return 0;
}

static int save_file(const char *in, const char *buf, const char *path,
                     const void *h, uint64_t bytes) {
  rp_outfile *f;
  FILE *fp;
  rp_outfile_cleanup_on_signal();
  rp_status s = rp_outfile_open(&f, path, &fp);
  if (s == RP_OK) {
    /* A short write marks the stream: the commit then says why (EFBIG,
     * ENOSPC, ...) and keeps the old file. */
    size_t put = bytes ? fwrite(h, 1, (size_t)bytes, fp) : 0;
    (void)put;
    s = rp_outfile_commit(f);
  }
  if (s != RP_OK)
    fprintf(stderr, "reprise run: %s: --save-buffer %s: %s\n", in, buf,
            rp_last_error()[0] ? rp_last_error() : rp_strerror(s));
  return s == RP_OK ? 0 : -1;
}

/* The buffer named `name` of g, or prints why not and returns RP_NONE. */
static rp_buf find_buf(const rp_graph *g, const char *in, const char *opt,
                       const char *name) {
  rp_buf b;
  if (rp_graph_find_buffer(g, name, &b) == RP_OK)
    return b;
  fprintf(stderr,
          "reprise run: %s: %s: no buffer named \"%s\" (the graph's "
          "buffers:",
          in, opt, name);
  for (rp_buf i = 0; i < rp_graph_num_buffers(g) && i < 16; i++) {
    rp_buffer_desc d;
    rp_buffer_info(g, i, &d);
    fprintf(stderr, " %s", d.name);
  }
  fprintf(stderr, "%s)\n", rp_graph_num_buffers(g) > 16 ? " ..." : "");
  return RP_NONE;
}

/* Host arrays for every buffer of g: generated, or from --load-buffer;
 * NULL after saying why. */
static unsigned char **make_hosts(const rp_graph *g, const char *in,
                                  const run_opts *ro) {
  uint32_t nb = rp_graph_num_buffers(g);
  unsigned char **h = calloc(nb + 1, sizeof *h);
  if (!h)
    return NULL;
  for (rp_buf b = 0; b < nb; b++) {
    rp_buffer_desc d;
    rp_buffer_info(g, b, &d);
    if (!(h[b] = malloc(d.bytes ? d.bytes : 1))) {
      fprintf(stderr, "reprise run: %s: out of memory for buffer \"%s\"\n", in,
              d.name);
      goto fail;
    }
    generate(h[b], d.bytes, b);
  }
  for (unsigned i = 0; i < ro->nload; i++) {
    rp_buf b = find_buf(g, in, "--load-buffer", ro->load[i].name);
    rp_buffer_desc d;
    if (b == RP_NONE)
      goto fail;
    rp_buffer_info(g, b, &d);
    if (load_file(in, ro->load[i].name, ro->load[i].file, h[b], d.bytes))
      goto fail;
  }
  return h;
fail:
  for (rp_buf b = 0; b < nb; b++)
    free(h[b]);
  free(h);
  return NULL;
}

static void free_hosts(unsigned char **h, uint32_t n) {
  for (uint32_t i = 0; h && i < n; i++)
    free(h[i]);
  free(h);
}

/* g bound to the kernel libraries over the arrays h; NULL after saying
 * why. */
static rp_graph *bind(const rp_graph *g, const rp_kernels *set,
                      unsigned char **h, const char *in, int nlibs) {
  rp_graph *b = NULL;
  rp_status s = rp_graph_bind(g, set, (void *const *)h, &b);
  if (s == RP_OK)
    return b;
  fprintf(stderr, "reprise run: %s: %s\n", in, rp_last_error());
  if (s == RP_ENOTFOUND && !nlibs)
    fprintf(stderr, "A graph file holds no code: give the kernel library "
                    "that exports its kernels\n(and host tasks) with --kernels "
                    "LIB.so; see 'reprise help run'.\n");
  return NULL;
}

/* o->iters replays of x; with progress, in batches of about a quarter of a
 * second, the line updated after each. The time of the replays in *us. */
static rp_status replay(rp_exec *x, const run_opts *o, double *us) {
  rp_cli_progress pr;
  unsigned done = 0, batch = 1, total = (unsigned)o->iters;
  rp_status s = RP_OK;
  *us = 0;
  rp_cli_progress_start(&pr, "replay", o->progress);
  if (!pr.on)
    batch = total;
  while (s == RP_OK && done < total) {
    unsigned k = batch < total - done ? batch : total - done;
    s = rp_exec_run(x, k);
    *us += rp_exec_last_us(x);
    done += k;
    rp_cli_progress_update(&pr, done, total);
    /* Batches of about 0.25 s: progress that moves, few extra waits. */
    double per = *us / done;
    batch = per > 0 ? (unsigned)(250000.0 / per) : total;
    batch = batch < 1 ? 1 : batch;
  }
  rp_cli_progress_end(&pr);
  return s;
}

static int parse(int argc, char **argv, run_opts *ro) {
  static const struct option opts[] = {
      {"backend", required_argument, NULL, 'b'},
      {"iters", required_argument, NULL, 'n'},
      {"kernels", required_argument, NULL, 'k'},
      {"load-buffer", required_argument, NULL, 'L'},
      {"save-buffer", required_argument, NULL, 'W'},
      {"no-reference", no_argument, NULL, 'N'},
      {"check", no_argument, NULL, 'C'},
      {"progress", no_argument, NULL, 'P'},
      {"strict", no_argument, NULL, 'S'},
      {"reshape-copies", optional_argument, NULL, 'R'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  int c;
  rp_cli_getopt_reset();
  while ((c = getopt_long(argc, argv, ":hb:n:k:", opts, NULL)) != -1) {
    switch (c) {
    case 'h':
      usage(stdout);
      return 0;
    case 'b':
      ro->bname = optarg;
      break;
    case 'n':
      if (rp_cli_uint("run", "--iters", optarg, 1, 1000000, &ro->iters))
        return 2;
      break;
    case 'k':
      if (ro->nlibs == 64) {
        fprintf(stderr, "reprise run: at most 64 --kernels\n");
        return 2;
      }
      ro->libs[ro->nlibs++] = optarg;
      break;
    case 'L':
    case 'W':
      if (add_bufarg(c == 'L' ? ro->load : ro->save,
                     c == 'L' ? &ro->nload : &ro->nsave,
                     c == 'L' ? "--load-buffer" : "--save-buffer", optarg))
        return 2;
      break;
    case 'N':
      ro->no_ref = 1;
      break;
    case 'C':
      ro->check = 1;
      break;
    case 'P':
      ro->progress = rp_cli_show_progress = 1;
      break;
    case 'S':
      rp_cli_strict = 1;
      break;
    case 'R':
      if (!optarg)
        ro->reshape = (unsigned long)RP_EXEC_RESHAPE_AUTO;
      else if (rp_cli_uint("run", "--reshape-copies", optarg, 1, 1ul << 40,
                           &ro->reshape))
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
  return -1;
}

int rp_cmd_run(int argc, char **argv) {
  run_opts ro;
  memset(&ro, 0, sizeof ro);
  ro.iters = 1;
  int rc = parse(argc, argv, &ro);
  if (rc >= 0)
    return rc;
  rc = 1;
  const char *in = argv[optind];
  rp_kernels *set = NULL;
  for (unsigned i = 0; i < ro.nlibs; i++)
    if (rp_kernels_load(&set, ro.libs[i]) != RP_OK) {
      fprintf(stderr, "reprise run: %s\n", rp_last_error());
      rp_kernels_destroy(set);
      return 1;
    }
  rp_graph *g = rp_cli_load(in), *run = NULL, *ref = NULL;
  const rp_backend *be = NULL;
  unsigned char **h1 = NULL, **h2 = NULL;
  uint32_t nb = g ? rp_graph_num_buffers(g) : 0;
  rp_exec *x = NULL;
  rp_status s;
  if (!g)
    goto done;
  /* --check without --backend: the best CPU backend, which can check. */
  if ((s = rp_backend_find(ro.bname   ? ro.bname
                           : ro.check ? "cpu"
                                      : NULL,
                           &be)) != RP_OK) {
    fprintf(stderr, "reprise run: backend %s: %s: %s\n",
            ro.bname ? ro.bname : "auto", rp_strerror(s), rp_last_error());
    goto done;
  }
  for (unsigned i = 0; i < ro.nsave; i++)
    if (find_buf(g, in, "--save-buffer", ro.save[i].name) == RP_NONE)
      goto done;
  if (!(h1 = make_hosts(g, in, &ro)) ||
      (!ro.no_ref && !(h2 = make_hosts(g, in, &ro))) ||
      !(run = bind(g, set, h1, in, (int)ro.nlibs)) ||
      (!ro.no_ref && !(ref = bind(g, set, h2, in, (int)ro.nlibs))))
    goto done;
  rp_exec_opts eo = RP_EXEC_OPTS_INIT;
  eo.reshape_copies = (size_t)ro.reshape;
  eo.check = ro.check;
  if ((s = rp_exec_create(&x, run, be, &eo)) != RP_OK) {
    fprintf(stderr, "reprise run: %s: backend %s: %s: %s\n", in,
            rp_backend_name(be), rp_strerror(s), rp_last_error());
    goto done;
  }
  double us;
  if ((s = replay(x, &ro, &us)) != RP_OK) {
    fprintf(stderr, "reprise run: %s: backend %s: %s: %s\n", in,
            rp_backend_name(be), rp_strerror(s), rp_exec_error(x));
    goto done;
  }
  if (ref && (s = rp_replay_reference(ref, (unsigned)ro.iters)) != RP_OK) {
    fprintf(stderr, "reprise run: %s: reference replay: %s: %s\n", in,
            rp_strerror(s), rp_last_error());
    goto done;
  }
  rc = 0;
  uint64_t changed = 0;
  unsigned char **h0 = make_hosts(g, in, &ro); /* the initial bytes */
  for (rp_buf b = 0; h0 && b < nb; b++) {
    rp_buffer_desc d;
    rp_buffer_info(g, b, &d);
    for (uint64_t i = 0; i < d.bytes; i++)
      changed += h1[b][i] != h0[b][i];
    if (ref && memcmp(h1[b], h2[b], d.bytes)) {
      fprintf(stderr,
              "reprise run: %s: buffer \"%s\" differs from the "
              "reference replay\n",
              in, d.name);
      rc = 1;
    }
  }
  free_hosts(h0, nb);
  for (unsigned i = 0; i < ro.nsave; i++) {
    rp_buf b = find_buf(g, in, "--save-buffer", ro.save[i].name);
    rp_buffer_desc d;
    rp_buffer_info(g, b, &d);
    if (save_file(in, ro.save[i].name, ro.save[i].file, h1[b], d.bytes))
      rc = 1;
  }
  uint32_t merged, split;
  if (rp_exec_copies_reshaped(x, &merged, &split))
    printf("%s: copies reshaped: %u merged into an earlier copy, %u split "
           "per writer\n",
           in, merged, split);
  printf("%s: %u operations, %lu replays on %s%s in %.1f us; %llu bytes of "
         "host data changed, %s\n",
         in, rp_graph_num_nodes(g), ro.iters, rp_backend_name(be),
         ro.check ? " (checking mode)" : "", us, (unsigned long long)changed,
         !ref ? "not compared with the reference"
         : rc ? "DIFFERENT from the reference"
              : "equal to the reference");
done:
  rp_exec_destroy(x);
  rp_graph_destroy(ref);
  rp_graph_destroy(run);
  rp_graph_destroy(g);
  free_hosts(h1, nb);
  free_hosts(h2, nb);
  rp_kernels_destroy(set);
  return rc;
}
