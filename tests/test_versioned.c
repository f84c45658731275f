/* The one versioning rule for the structs a caller fills in (issue 22;
 * src/core/versioned.c): rp_exec_opts, rp_read_opts and rp_analysis_opts
 * start with their size, set by their init; size 0 (zero-filled without
 * init) is refused, an older size is read no further than it says (the
 * members past it keep their defaults), and a function that fills a
 * caller's struct in writes no more than its size. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "reprise.h"
#include "reprise/backend.h"
#include "util.h"

static rp_graph *one_host_task(unsigned char *m, size_t n) {
  static tu_host_arg arg = {0, 8};
  return tu_one_host_task(m, n, 8, tu_host_bump, &arg, NULL);
}

/* A struct of an older, smaller layout: the bytes past its size are
 * garbage that the library must not read. */
#define POISON 0xA5

Test(versioned, exec_opts_zero_filled_is_refused) {
  static unsigned char m[8];
  rp_graph *g = one_host_task(m, sizeof m);
  rp_exec_opts o;
  memset(&o, 0, sizeof o);
  rp_exec *x = NULL;
  cr_assert_eq(rp_exec_create(&x, g, NULL, &o), RP_EINVAL);
  cr_assert_null(x);
  cr_assert(strstr(rp_last_error(), "rp_exec_opts: size is 0: initialise"),
            "%s", rp_last_error());
  rp_graph_destroy(g);
}

Test(versioned, exec_opts_older_size_reads_no_further) {
  static unsigned char m[8];
  rp_graph *g = one_host_task(m, sizeof m);
  /* The layout before `check` existed, then garbage. */
  size_t old = offsetof(rp_exec_opts, check);
  unsigned char raw[sizeof(rp_exec_opts) + 64];
  memset(raw, POISON, sizeof raw);
  rp_exec_opts init;
  rp_exec_opts_init(&init);
  init.size = old;
  init.nthreads = 4;
  memcpy(raw, &init, old);
  const rp_backend *ref;
  cr_assert_eq(rp_backend_find("reference", &ref), RP_OK);
  rp_exec *x;
  cr_assert_eq(rp_exec_create(&x, g, ref, (const rp_exec_opts *)raw), RP_EINVAL,
               "nthreads is refused by reference: read");
  init.nthreads = 0;
  memcpy(raw, &init, old);
  cr_assert_eq(rp_exec_create(&x, g, ref, (const rp_exec_opts *)raw), RP_OK,
               "%s", rp_last_error());
  const rp_exec_opts *seen = rp_exec_opts_get(x);
  cr_assert_eq(seen->size, sizeof(rp_exec_opts));
  cr_assert_eq(seen->check, 0, "check past the old size: its default");
  cr_assert_null(seen->progress, "progress past the old size: its default");
  cr_assert_eq(rp_exec_run(x, 1), RP_OK, "%s", rp_exec_error(x));
  cr_assert_eq(m[0], 7, "the host task ran once");
  rp_exec_destroy(x);
  /* Shorter than the first layout, or longer than this library's. */
  init.size = sizeof(size_t);
  memcpy(raw, &init, sizeof init);
  cr_assert_eq(rp_exec_create(&x, g, ref, (const rp_exec_opts *)raw),
               RP_EINVAL);
  init.size = sizeof(rp_exec_opts) + 8;
  memcpy(raw, &init, sizeof init);
  cr_assert_eq(rp_exec_create(&x, g, ref, (const rp_exec_opts *)raw),
               RP_EINVAL);
  cr_assert(strstr(rp_last_error(), "is not a size of this struct"), "%s",
            rp_last_error());
  rp_graph_destroy(g);
}

Test(versioned, exec_opts_init_matches_the_macro) {
  rp_exec_opts a = RP_EXEC_OPTS_INIT, b;
  memset(&b, POISON, sizeof b);
  rp_exec_opts_init(&b);
  cr_assert_eq(memcmp(&a, &b, sizeof a), 0);
  cr_assert_eq(b.size, sizeof b);
}

static const char small_graph[] =
    "{\"format\":\"reprise-graph\",\"version\":1,\"buffers\":[],\"ops\":[]}";

static rp_status read_with(const void *o, char *err) {
  FILE *fp = fmemopen((void *)small_graph, sizeof small_graph - 1, "r");
  cr_assert_not_null(fp);
  rp_graph *g = NULL;
  rp_status s = rp_graph_read_json_opts(&g, fp, o, err, 256);
  fclose(fp);
  rp_graph_destroy(g);
  return s;
}

static unsigned progress_calls;
static void count_progress(void *user, uint64_t n) {
  (void)user;
  (void)n;
  progress_calls++;
}

Test(versioned, read_opts_zero_older_and_current) {
  char err[256];
  rp_read_opts o;
  memset(&o, 0, sizeof o);
  cr_assert_eq(read_with(&o, err), RP_EINVAL);
  cr_assert(strstr(err, "size is 0"), "%s", err);
  /* The size before `progress`: a poisoned progress is never called. */
  unsigned char raw[sizeof(rp_read_opts) + 16];
  memset(raw, POISON, sizeof raw);
  rp_read_opts_init(&o);
  o.size = offsetof(rp_read_opts, progress);
  memcpy(raw, &o, o.size);
  cr_assert_eq(read_with(raw, err), RP_OK, "%s", err);
  rp_read_opts_init(&o);
  cr_assert_eq(o.size, sizeof o);
  o.progress = count_progress;
  progress_calls = 0;
  cr_assert_eq(read_with(&o, err), RP_OK, "%s", err);
  cr_assert_geq(progress_calls, 1u);
}

Test(versioned, analysis_opts_zero_refused_everywhere) {
  static unsigned char m[8];
  rp_graph *g = one_host_task(m, sizeof m);
  rp_analysis_opts o;
  memset(&o, 0, sizeof o);
  rp_analysis *a = (rp_analysis *)1;
  cr_assert_eq(rp_analyze(g, &o, &a), RP_EINVAL);
  cr_assert_null(a);
  cr_assert(strstr(rp_last_error(), "size is 0"), "%s", rp_last_error());
  rp_split_advice adv;
  cr_assert_eq(rp_split_advise(g, &o, 0, &adv), RP_EINVAL);
  rp_model mod;
  rp_model_init(&mod);
  unsigned units[RP_MAX_DEVICES];
  /* A function that fills o in reads its size first, and refuses 0 ... */
  cr_assert_eq(rp_analysis_opts_for(&o, &mod, units, g, NULL, NULL), RP_EINVAL);
  /* ... and with it set writes no byte past the struct. */
  unsigned char raw[sizeof(rp_analysis_opts) + 32];
  memset(raw, POISON, sizeof raw);
  rp_analysis_opts_init((rp_analysis_opts *)raw);
  cr_assert_eq(
      rp_analysis_opts_for((rp_analysis_opts *)raw, &mod, units, g, NULL, NULL),
      RP_OK, "%s", rp_last_error());
  for (size_t i = sizeof(rp_analysis_opts); i < sizeof raw; i++)
    cr_assert_eq(raw[i], POISON, "byte %zu past the struct written", i);
  cr_assert_eq(rp_analyze(g, (rp_analysis_opts *)raw, &a), RP_OK, "%s",
               rp_last_error());
  rp_analysis_destroy(a);
  /* An exec options struct given beside it follows the same rule. */
  rp_exec_opts xo;
  memset(&xo, 0, sizeof xo);
  rp_analysis_opts_init(&o);
  cr_assert_eq(rp_analysis_opts_for(&o, &mod, units, g, NULL, &xo), RP_EINVAL);
  cr_assert(strstr(rp_last_error(), "rp_exec_opts: size is 0"), "%s",
            rp_last_error());
  rp_graph_destroy(g);
}
