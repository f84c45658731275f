/* The examples' timing (examples/common.c, issue 31): --pairs N alternating
 * serial/overlapped pairs, each side's median printed with its spread, the
 * cold first overlapped replay apart, the achieved speedup the median of
 * the N pairs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util.h"
#ifdef RP_HAVE_EXAMPLES
#include "examples.h"

TestSuite(example_pairs, .timeout = 60);

static int parse(const char *const *v, int n, ex_opts *o) {
  memset(o, 0, sizeof *o);
  return ex_parse(n, (char **)v, "t", NULL, 0, o);
}

Test(example_pairs, the_option_takes_1_to_31) {
  ex_opts o;
  const char *ok[] = {"t", "--pairs", "3"}, *zero[] = {"t", "--pairs", "0"},
             *big[] = {"t", "--pairs", "32"}, *none[] = {"t", "--pairs"};
  cr_assert_eq(parse(ok, 3, &o), 0);
  cr_assert_eq(parse(zero, 3, &o), 2);
  cr_assert_eq(parse(big, 3, &o), 2);
  cr_assert_eq(parse(none, 2, &o), 2);
}

/* A chain of two host tasks on one line. */
static uint64_t line[8];
static void bump(void *u, void *const *p) {
  (void)u;
  ((uint64_t *)p[0])[0] = ((uint64_t *)p[0])[0] * 3 + 1;
}
static void reset(void *c) {
  (void)c;
  memset(line, 0, sizeof line);
}

/* The line of out that starts with prefix (NULL if none). */
static const char *line_of(const char *out, const char *prefix) {
  for (const char *l = out; l && *l;
       l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (!strncmp(l, prefix, strlen(prefix)))
      return l;
  return NULL;
}

/* ex_run_compare(g, o) with its stdout returned (malloc'ed). */
static char *compare_captured(rp_graph *g, const ex_opts *o) {
  FILE *tmp = tmpfile();
  cr_assert(tmp);
  fflush(stdout);
  int saved = dup(1);
  dup2(fileno(tmp), 1);
  int rc = ex_run_compare(g, o, reset, NULL, NULL);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  cr_assert_eq(rc, 0);
  long n = ftell(tmp);
  char *out = calloc((size_t)n + 1, 1);
  rewind(tmp);
  cr_assert(out && fread(out, 1, (size_t)n, tmp) == (size_t)n);
  fclose(tmp);
  return out;
}

Test(example_pairs, medians_with_their_spreads_and_the_first_apart) {
  char dir[] = "/tmp/rp_pairs_XXXXXX";
  cr_assert(mkdtemp(dir));
  setenv("XDG_CACHE_HOME", dir, 1); /* the model: calibrated here, once */
  rp_graph *g;
  rp_buf b;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "L", line, sizeof line, &b));
  rp_access a = {rp_whole(b), RP_INOUT};
  for (int i = 0; i < 2; i++)
    TU_OK(g, rp_record_host(g, bump, NULL, &a, 1, NULL, NULL));
  TU_OK(g, rp_graph_end(g));
  ex_opts o;
  const char *v[] = {"t",       "--backend", "openmp",  "--threads", "2",
                     "--pairs", "3",         "--iters", "4"};
  cr_assert_eq(parse(v, 9, &o), 0);
  char *out = compare_captured(g, &o);
  const char *s = line_of(out, "serial replay"),
             *p = line_of(out, "overlapped replay"),
             *ach = line_of(out, "achieved speedup");
  cr_assert(s && p && ach, "%s", out);
  double med, lo, hi, first;
  unsigned np, it;
  cr_assert_eq(sscanf(s,
                      "serial replay %lf ms (%u replays, one at a time, "
                      "program order; median of %u, %lf - %lf ms)",
                      &med, &it, &np, &lo, &hi),
               5, "%s", s);
  cr_assert_eq(it, 4);
  cr_assert_eq(np, 3);
  cr_assert(lo <= med && med <= hi, "%s", s);
  cr_assert_eq(sscanf(p,
                      "overlapped replay %lf ms (openmp; median of %u, "
                      "%lf - %lf ms; the first, untimed in the pairs: "
                      "%lf ms)",
                      &med, &np, &lo, &hi, &first),
               5, "%s", p);
  cr_assert_eq(np, 3);
  cr_assert(lo <= med && med <= hi && first > 0, "%s", p);
  cr_assert(strstr(ach, "(median of 3 timed pairs"), "%s", ach);
  /* a later parse without the option is back to 5 pairs */
  const char *plain[] = {"t", "--backend", "openmp", "--threads", "2"};
  cr_assert_eq(parse(plain, 5, &o), 0);
  char *out5 = compare_captured(g, &o);
  cr_assert(strstr(out5, "(median of 5 timed pairs"), "%s", out5);
  free(out5);
#ifdef __linux__
  /* the time the threads waited for a CPU, serial and overlapped apart */
  const char *q = line_of(out, "run-queue wait");
  double ws = -1, wo = -1;
  cr_assert(q, "%s", out);
  cr_assert_eq(sscanf(q,
                      "run-queue wait %lf ms serial, %lf ms overlapped "
                      "(this process's threads runnable, their CPU "
                      "another's; %u pairs)",
                      &ws, &wo, &np),
               3, "%s", q);
  cr_assert(ws >= 0 && wo >= 0 && np == 3, "%s", q);
#endif
  free(out);
  rp_graph_destroy(g);
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_assert_eq(system(cmd), 0);
}
#else
Test(example_pairs, needs_the_examples) {}
#endif
