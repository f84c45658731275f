/* The reprise tool as a user meets it: getopt_long syntax (--opt=value,
 * options after the file), -V, help, clear errors for directories, bad
 * values and unknown options, --svg - never mixed with the report,
 * unknown JSON keys (warning, --strict error), and `run` replaying a graph
 * file of copies on each backend against the reference. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "reprise.h"
#ifdef RP_HAVE_EXAMPLES
#include "examples.h"
#endif

#define DATA RP_TEST_DATA
#define JACOBI DATA "/jacobi.json"

/* Runs the tool with @p args; stdout in *out, stderr in *err (both freed by
 * the caller); returns the exit status. */
static int tool(const char *args, char **out, char **err) {
  char ep[] = "/tmp/rp_cli_errXXXXXX";
  int fd = mkstemp(ep);
  cr_assert(fd >= 0);
  close(fd);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s %s 2>%s", RP_TEST_TOOL, args, ep);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t cap = 1 << 20, len = 0, r;
  char *buf = malloc(cap);
  while ((r = fread(buf + len, 1, cap - 1 - len, p)) > 0)
    len += r;
  buf[len] = 0;
  int st = pclose(p);
  FILE *fe = fopen(ep, "r");
  char *eb = calloc(1, 65536);
  if (fe) {
    size_t n = fread(eb, 1, 65535, fe);
    eb[n] = 0;
    fclose(fe);
  }
  unlink(ep);
  *out = buf;
  *err = eb;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void expect(const char *args, int rc, const char *in_out,
                   const char *in_err) {
  char *o, *e;
  int got = tool(args, &o, &e);
  cr_assert_eq(got, rc,
               "reprise %s: exit %d, expected %d\nstdout: %s\n"
               "stderr: %s",
               args, got, rc, o, e);
  if (in_out)
    cr_assert(strstr(o, in_out), "reprise %s: stdout lacks \"%s\":\n%s", args,
              in_out, o);
  if (in_err)
    cr_assert(strstr(e, in_err), "reprise %s: stderr lacks \"%s\":\n%s", args,
              in_err, e);
  free(o);
  free(e);
}

Test(cli, version_and_help) {
  char v[64];
  snprintf(v, sizeof v, "reprise %s\n", rp_version());
  expect("-V", 0, v, NULL);
  expect("--version", 0, v, NULL);
  expect("help", 0, "commands:", NULL);
  expect("help analyze", 0, "--copy-engines", NULL);
  expect("analyze --help", 0, "--copy-engines", NULL);
  expect("help run", 0, "--backend", NULL);
  expect("help dot", 0, "--output", NULL);
  expect("help nosuch", 2, NULL, "unknown command 'nosuch'");
  expect("--nosuch", 2, NULL, "unknown option '--nosuch'");
  expect("nosuch", 2, NULL, "unknown command 'nosuch'");
  expect("", 2, NULL, "usage:");
}

Test(cli, option_syntax) {
  char *a, *b, *e1, *e2;
  /* --opt=value, --opt value and options after the file mean the same */
  cr_assert_eq(
      tool("analyze --json --copy-engines=1 --kernel-us=5 " JACOBI, &a, &e1), 0,
      "%s", e1);
  cr_assert_eq(
      tool("analyze " JACOBI " --kernel-us 5 --copy-engines 1 --json", &b, &e2),
      0, "%s", e2);
  cr_assert_str_eq(a, b);
  cr_assert(strstr(a, "\"copy:0\""), "one copy lane: %s", a);
  free(a), free(b), free(e1), free(e2);
}

Test(cli, clear_errors) {
  expect("analyze " DATA, 1, NULL, "is a directory");
  expect("analyze " DATA "/no_such.json", 1, NULL, "No such file");
  expect("analyze --kernel-us=abc " JACOBI, 2, NULL,
         "--kernel-us needs a non-negative number, not 'abc'");
  expect("analyze --h2d-gbps=0 " JACOBI, 2, NULL, "positive number");
  expect("analyze --copy-engines=3 " JACOBI, 2, NULL, "from 1 to 2");
  expect("analyze --compute-units=-1 " JACOBI, 2, NULL, "--compute-units");
  expect("analyze --dot", 2, NULL, "'--dot' needs a value");
  expect("analyze --bogus " JACOBI, 2, NULL, "unknown option '--bogus'");
  expect("analyze -x " JACOBI, 2, NULL, "unknown option '-x'");
  expect("analyze", 2, NULL, "no graph file given");
  expect("analyze " JACOBI " " JACOBI, 2, NULL, "one graph file at a time");
  expect("dot " DATA "/bad_truncated.json", 1, NULL, "malformed graph file");
  expect("run --iters=0 " DATA "/copies.json", 2, NULL, "--iters");
}

Test(cli, svg_to_stdout_is_not_mixed_with_the_report) {
  char *o, *e;
  cr_assert_eq(tool("analyze " JACOBI " --svg -", &o, &e), 0, "%s", e);
  cr_assert(!strncmp(o, "<?xml", 5), "starts with: %.40s", o);
  cr_assert_null(strstr(o, "reprise analysis"));
  free(o), free(e);
  expect("analyze " JACOBI " --svg - --dot -", 2, NULL,
         "only one of --dot, --trace, --svg");
}

Test(cli, unknown_keys_warn_or_fail_with_strict) {
  char path[] = "/tmp/rp_cli_keysXXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  FILE *fp = fdopen(fd, "w");
  fputs("{\"format\": \"reprise-graph\", \"version\": 1, \"colour\": 1,\n"
        " \"buffers\": [{\"id\": 0, \"name\": \"A\", \"bytes\": 64, "
        "\"dims\": [64], "
        "\"owner\": \"me\"}],\n"
        " \"ops\": [{\"id\": 0, \"type\": \"copy_h2d\", \"device\": 0, "
        "\"acess\": [], \"access\": [\n"
        "  {\"buffer\": 0, \"space\": \"host\", \"mode\": \"in\", "
        "\"box\": {\"lo\": [0], \"hi\": [64]}},\n"
        "  {\"buffer\": 0, \"space\": \"device:0\", \"mode\": \"out\", "
        "\"box\": {\"lo\": [0], \"hi\": [64], \"step\": [1]}}]}],\n"
        " \"edges\": [{\"from\": 0, \"to\": 0, \"weight\": 2}]}\n",
        fp);
  fclose(fp);
  char args[256], *o, *e;
  snprintf(args, sizeof args, "dot %s", path);
  cr_assert_eq(tool(args, &o, &e), 0, "%s", e);
  cr_assert(strstr(e, "warning: \"colour\": unknown key"), "%s", e);
  cr_assert(strstr(e, "buffers[0].\"owner\": unknown key"), "%s", e);
  cr_assert(strstr(e, "ops[0].\"acess\": unknown key"), "%s", e);
  cr_assert(strstr(e, ".box.\"step\": unknown key"), "%s", e);
  cr_assert(strstr(e, "edges[0].\"weight\": unknown key"), "%s", e);
  free(o), free(e);
  snprintf(args, sizeof args, "dot --strict %s", path);
  cr_assert_eq(tool(args, &o, &e), 1);
  cr_assert(strstr(e, "\"colour\": unknown key (strict reading)"), "%s", e);
  free(o), free(e);
  /* a file the library wrote has no unknown key */
  cr_assert_eq(tool("analyze --strict " JACOBI, &o, &e), 0, "%s", e);
  cr_assert_eq(e[0], 0, "%s", e);
  free(o), free(e);
  unlink(path);
}

Test(cli, run_copies_on_each_backend) {
  static const char *const bes[] = {"reference", "openmp", "xrt"};
  for (size_t i = 0; i < sizeof bes / sizeof bes[0]; i++) {
    const rp_backend *be;
    if (rp_backend_find(bes[i], &be) != RP_OK)
      continue;
    char args[256];
    snprintf(args, sizeof args,
             "run --iters=3 --backend %s " DATA "/copies.json", bes[i]);
    setenv("RP_XRT_EMULATE", "1", 1);
    expect(args, 0, "1020 bytes of host data changed, equal to the reference",
           NULL);
  }
}

Test(cli, run_reshapes_copies) {
  /* Four quarters of A up, A down whole: the quarters merge at a
   * threshold above 1 KiB; at 1 byte the copy back splits per quarter. */
  expect("run -b reference --reshape-copies " DATA "/copies_pieces.json", 0,
         "copies reshaped: 3 merged into an earlier copy, 0 split", NULL);
  expect("run -b reference --reshape-copies=1 " DATA "/copies_pieces.json", 0,
         "copies reshaped: 0 merged into an earlier copy, 1 split", NULL);
  /* At 1 KiB exactly: the quarters do not average fewer (no merge), and
   * are big enough to leave on their own (split). */
  expect("run -b reference --reshape-copies=1024 " DATA "/copies_pieces.json",
         0, "0 merged into an earlier copy, 1 split", NULL);
  expect("run -b reference --reshape-copies=1025 " DATA "/copies_pieces.json",
         0, "3 merged into an earlier copy, 0 split", NULL);
  expect("run --reshape-copies=0 " DATA "/copies_pieces.json", 2, NULL,
         "--reshape-copies");
}

Test(cli, run_needs_kernel_libraries_and_known_backends) {
  expect("run " JACOBI, 1, NULL,
         "op 2 (\"jacobi 0\"): no kernel named \"jacobi\" (no kernel "
         "library loaded)");
  expect("run " JACOBI, 1, NULL, "with --kernels LIB.so");
  expect("run -k /no/such/lib.so " JACOBI, 1, NULL,
         "kernel library /no/such/lib.so cannot be loaded");
  expect("run -b nosuch " DATA "/copies.json", 1, NULL,
         "no backend named \"nosuch\"");
  expect("run --load-buffer A " DATA "/copies.json", 2, NULL,
         "--load-buffer wants NAME=FILE, not 'A'");
}

#if defined(RP_HAVE_EXAMPLES) && defined(RP_TEST_KLIB_JACOBI)
static void write_file(const char *path, const void *p, size_t n) {
  FILE *fp = fopen(path, "wb");
  cr_assert_not_null(fp, "%s", path);
  cr_assert_eq(fwrite(p, 1, n, fp), n);
  fclose(fp);
}

static void read_file(const char *path, void *p, size_t n) {
  FILE *fp = fopen(path, "rb");
  cr_assert_not_null(fp, "%s", path);
  cr_assert_eq(fread(p, 1, n, fp), n, "%s", path);
  fclose(fp);
}

/* A Jacobi graph saved by the example's own recording (kernels, a host
 * task summing the grid, coherence copies) replays from the command line
 * with the example's kernel library, on the reference and on openmp: the
 * buffers it writes back equal the plain C loop's, bit for bit. */
Test(cli, run_saved_jacobi_with_its_kernel_library) {
  ex_jacobi2d p = {48, 4, 2, 4, 0, 0};
  uint64_t nn = p.n * p.n, ns = ex_jacobi2d_nsums(&p);
  double *a = malloc(nn * 8), *b = malloc(nn * 8), *sm = malloc(ns * 8);
  double *ca = malloc(nn * 8), *cb = malloc(nn * 8), *cs = malloc(ns * 8);
  rp_graph *g;
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_eq(ex_jacobi2d_record(g, &p, a, b, sm), RP_OK);
  cr_assert_eq(rp_graph_end(g), RP_OK);
  char dir[] = "/tmp/rp_cli_runXXXXXX", path[256], args[2048];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/j.json", dir);
  FILE *fp = fopen(path, "w");
  cr_assert_eq(rp_graph_write_json(g, fp), RP_OK);
  fclose(fp);
  rp_graph_destroy(g);
  ex_jacobi2d_init(&p, a, b, sm);
  snprintf(path, sizeof path, "%s/a0", dir);
  write_file(path, a, nn * 8);
  snprintf(path, sizeof path, "%s/b0", dir);
  write_file(path, b, nn * 8);
  snprintf(path, sizeof path, "%s/s0", dir);
  write_file(path, sm, ns * 8);
  ex_jacobi2d_init(&p, ca, cb, cs);
  ex_jacobi2d_check(&p, 3, ca, cb, cs);
  static const char *const bes[] = {"reference", "openmp"};
  for (int i = 0; i < 2; i++) {
    snprintf(args, sizeof args,
             "run -b %s --iters 3 --kernels " RP_TEST_KLIB_JACOBI
             " --load-buffer A=%s/a0 --load-buffer "
             "B=%s/b0 --load-buffer=sums=%s/s0 --save-buffer A=%s/a "
             "--save-buffer B=%s/b --save-buffer sums=%s/s %s/j.json",
             bes[i], dir, dir, dir, dir, dir, dir, dir);
    expect(args, 0, "replays on", NULL);
    expect(args, 0, "equal to the reference", NULL);
    snprintf(path, sizeof path, "%s/a", dir);
    read_file(path, a, nn * 8);
    snprintf(path, sizeof path, "%s/b", dir);
    read_file(path, b, nn * 8);
    snprintf(path, sizeof path, "%s/s", dir);
    read_file(path, sm, ns * 8);
    cr_assert(!memcmp(a, ca, nn * 8), "%s: A differs", bes[i]);
    cr_assert(!memcmp(b, cb, nn * 8), "%s: B differs", bes[i]);
    cr_assert(!memcmp(sm, cs, ns * 8), "%s: sums differ", bes[i]);
  }
  /* The checking mode replays it too (a correct program passes). */
  snprintf(args, sizeof args,
           "run --check -k " RP_TEST_KLIB_JACOBI " %s/j.json", dir);
  expect(args, 0, "(checking mode)", NULL);
  /* Progress lines, asked for. */
  snprintf(args, sizeof args,
           "run --progress --iters 20 -k " RP_TEST_KLIB_JACOBI " %s/j.json",
           dir);
  expect(args, 0, "20 replays", "replay 20 of 20 (100%");
  expect(args, 0, NULL, "reading ");
  /* The wrong library names the missing kernel; bad buffer files. */
  snprintf(args, sizeof args, "run -k " RP_TEST_KLIB_MATPOW " %s/j.json", dir);
  expect(args, 1, NULL,
         "op 1 (\"jac_copy\"): no kernel named "
         "\"jac_copy\" in " RP_TEST_KLIB_MATPOW);
  snprintf(args, sizeof args,
           "run -k " RP_TEST_KLIB_JACOBI " --load-buffer "
           "A=%s/s0 %s/j.json",
           dir, dir);
  expect(args, 1, NULL, "holds fewer bytes, the buffer 18432");
  snprintf(args, sizeof args,
           "run -k " RP_TEST_KLIB_JACOBI " --save-buffer "
           "Q=%s/q %s/j.json",
           dir, dir);
  expect(args, 1, NULL,
         "--save-buffer: no buffer named \"Q\" (the "
         "graph's buffers: A B sums)");
  const char *files[] = {"j.json", "a0", "b0", "s0", "a", "b", "s"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    unlink(path);
  }
  rmdir(dir);
  free(a), free(b), free(sm), free(ca), free(cb), free(cs);
}
#endif

/* Progress lines (issue 27, item 9): on standard error, never in the
 * output; with --progress even when standard error is no terminal. */
Test(cli, progress_on_stderr_when_asked) {
  char *o, *e;
  cr_assert_eq(tool("analyze --progress --json " JACOBI, &o, &e), 0, "%s", e);
  cr_assert(strstr(e, "reading " JACOBI), "%s", e);
  cr_assert(strstr(e, "(100%"), "%s", e);
  cr_assert_null(strstr(o, "reading"), "%s", o);
  free(o), free(e);
  cr_assert_eq(tool("analyze --json " JACOBI, &o, &e), 0, "%s", e);
  cr_assert_eq(e[0], 0, "no terminal, no --progress: nothing: %s", e);
  free(o), free(e);
  expect("calibrate --progress --runs 1 --out - --quiet", 0, NULL,
         "calibrating ");
}

/* Times in dot labels are rounded (4 significant digits), not printed with
 * every digit of a double: 4096 bytes at 3 GB/s is 1.3653333... us. */
Test(cli, dot_labels_rounded) {
  char *o, *e;
  cr_assert_eq(
      tool("analyze --h2d-gbps=3 --dot=- " DATA "/copies.json", &o, &e), 0,
      "%s", e);
  cr_assert(strstr(o, "B up\\n0 .. 1.365 us"), "%s", o);
  cr_assert(strstr(o, "critical path 1.386 us"), "%s", o);
  cr_assert_null(strstr(o, "1.36533"), "%s", o);
  free(o), free(e);
}

/* analyze --split: copy in, kernel, copy out of 100 us each: split in k
 * the schedule is 100 + 200 / k, the smallest k within 3 % of the best up
 * to 16 is 13 (docs/split.md). */
Test(cli, analyze_split_advice) {
  expect("analyze --split burn:x:0 " DATA "/pipeline.json", 0,
         "split \"burn\" in 13: predicted 2.60x (0.300 ms -> 0.115 ms); 2 "
         "copies cut with it\n",
         NULL);
  expect("analyze --split nope:x:0 " DATA "/pipeline.json", 1, NULL,
         "no kernel operation is named \"nope\"");
  expect("analyze --split burn:q:0 " DATA "/pipeline.json", 2, NULL,
         "--split wants NAME:AXIS:P");
  /* The written access does not follow: never split. */
  expect("analyze --split 'jacobi 0:y:0' " JACOBI, 0,
         "split: no kernel declared splittable", NULL);
}

/* A trace over --trace-events operations comes as numbered files, each a
 * trace of its own; at or under the limit, one file as asked. --strict
 * stays a flag (it once fell through into --compute-units). */
Test(cli, trace_split_into_numbered_files) {
  char dir[] = "/tmp/rp_cli_traceXXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char args[512], path[600];
  snprintf(args, sizeof args,
           "analyze --strict --trace %s/t.json "
           "--trace-events 3 " JACOBI,
           dir);
  expect(args, 0, "critical path", "written as 3 files of at most 3");
  unsigned events = 0;
  for (int k = 1; k <= 4; k++) {
    snprintf(path, sizeof path, "%s/t.%d.json", dir, k);
    FILE *fp = fopen(path, "rb");
    if (k == 4) {
      cr_assert_null(fp, "a fourth part");
      break;
    }
    cr_assert_not_null(fp, "no %s", path);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, fp);
    text[n] = '\0';
    fclose(fp);
    for (const char *p = text; (p = strstr(p, "\"ph\": \"X\"")); p++)
      events++;
    cr_assert(strstr(text, "\"thread_name\""), "%s", path);
    unlink(path);
  }
  cr_assert_eq(events, 7);
  snprintf(args, sizeof args,
           "analyze --trace %s/t.json --trace-events 7 " JACOBI, dir);
  expect(args, 0, NULL, NULL);
  snprintf(path, sizeof path, "%s/t.json", dir);
  cr_assert_eq(access(path, R_OK), 0);
  unlink(path);
  snprintf(args, sizeof args, "analyze --trace-events 0 " JACOBI);
  expect(args, 2, NULL, "--trace-events");
  rmdir(dir);
}
