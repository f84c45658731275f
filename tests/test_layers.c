/* The layers (docs/design.md): flow goes one way. src/core uses nothing
 * of the other layers; src/record uses core; src/transform uses record and
 * core; src/analyze uses transform, record and core, and the replay only
 * through the public API; src/replay may use all of them; a backend reads
 * only public headers. A test fails on any include that goes back. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char *const SRC = RP_TEST_DATA "/../..";

/* The folders of src/ a layer may include from, and the public headers
 * it may not. */
typedef struct rule {
  const char *layer;
  const char *allowed; /* space-separated folders of src/ */
  const char *banned;  /* space-separated public headers */
} rule;

static const rule rules[] = {
    {"core", "core",
     "reprise/analyze.h reprise/replay.h reprise/backend.h "
     "reprise/plugin.h"},
    {"record", "core record",
     "reprise/analyze.h reprise/replay.h "
     "reprise/backend.h reprise/plugin.h"},
    {"transform", "core record transform",
     "reprise/analyze.h reprise/replay.h reprise/backend.h reprise/plugin.h"},
    {"analyze", "core record transform analyze", ""},
    {"replay", "core record transform analyze replay", ""},
};

static int word_in(const char *word, size_t n, const char *list) {
  for (const char *p = list; *p;) {
    size_t k = strcspn(p, " ");
    if (k == n && !strncmp(p, word, n))
      return 1;
    p += k;
    p += strspn(p, " ");
  }
  return 0;
}

/* The quoted or bracketed include of a line, or 0. */
static int include_of(const char *line, char *inc, size_t n) {
  char fmt[64];
  snprintf(fmt, sizeof fmt, " # include %%%zu[\"<]%%%zu[^\">]", (size_t)1,
           n - 1);
  char open[2];
  if (sscanf(line, fmt, open, inc) == 2)
    return 1;
  snprintf(fmt, sizeof fmt, " #include %%%zu[\"<]%%%zu[^\">]", (size_t)1,
           n - 1);
  return sscanf(line, fmt, open, inc) == 2;
}

/* Why include `inc` in a file of layer r is wrong, or "" if it is fine.
 * A backend (r NULL) may include no header of src/ at all. */
static const char *check(const rule *r, const char *inc) {
  const char *slash = strchr(inc, '/');
  static const char *const layers[] = {"core", "record", "transform", "analyze",
                                       "replay"};
  if (!strncmp(inc, "src/", 4) || strstr(inc, "../src"))
    return "a path into src/";
  if (!slash)
    return "";
  size_t n = (size_t)(slash - inc);
  for (unsigned i = 0; i < sizeof layers / sizeof *layers; i++)
    if (strlen(layers[i]) == n && !strncmp(inc, layers[i], n))
      return !r                            ? "a private header"
             : word_in(inc, n, r->allowed) ? ""
                                           : "a layer above it";
  if (r && word_in(inc, strlen(inc), r->banned))
    return "a public header of a layer above it";
  return "";
}

static int scan_file(const rule *r, const char *path, char *bad, size_t n) {
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  char line[512], inc[256];
  int found = 0;
  for (unsigned ln = 1; !found && fgets(line, sizeof line, f); ln++) {
    if (!include_of(line, inc, sizeof inc))
      continue;
    const char *why = check(r, inc);
    if (*why) {
      snprintf(bad, n, "%s:%u includes \"%s\": %s", path, ln, inc, why);
      found = 1;
    }
  }
  fclose(f);
  return found;
}

static int scan(const rule *r, const char *dir, char *bad, size_t n,
                unsigned *files) {
  DIR *d = opendir(dir);
  if (!d)
    return 0;
  struct dirent *e;
  int found = 0;
  while (!found && (e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(p, &st))
      continue;
    if (S_ISDIR(st.st_mode)) {
      found = scan(r, p, bad, n, files);
    } else {
      found = scan_file(r, p, bad, n);
      ++*files;
    }
  }
  closedir(d);
  return found;
}

Test(layers, no_include_goes_back) {
  for (unsigned i = 0; i < sizeof rules / sizeof *rules; i++) {
    char dir[1024], bad[1400] = "";
    unsigned files = 0;
    snprintf(dir, sizeof dir, "%s/src/%s", SRC, rules[i].layer);
    cr_assert_eq(scan(&rules[i], dir, bad, sizeof bad, &files), 0, "%s", bad);
    cr_assert_gt(files, 0, "no source in %s", dir);
  }
}

Test(layers, backends_include_no_private_header) {
  char dir[1024], bad[1400] = "";
  unsigned files = 0;
  snprintf(dir, sizeof dir, "%s/backends", SRC);
  cr_assert_eq(scan(NULL, dir, bad, sizeof bad, &files), 0, "%s", bad);
  cr_assert_gt(files, 10);
}

/* The checker itself: what each rule lets through and what it refuses. */
Test(layers, the_rules) {
  cr_assert_str_eq(check(&rules[1], "core/core.h"), "");
  cr_assert_str_eq(check(&rules[1], "record/graph.h"), "");
  cr_assert_str_neq(check(&rules[1], "analyze/analysis.h"), "");
  cr_assert_str_neq(check(&rules[1], "replay/exec.h"), "");
  cr_assert_str_neq(check(&rules[1], "reprise/backend.h"), "");
  cr_assert_str_neq(check(&rules[0], "record/graph.h"), "");
  cr_assert_str_neq(check(&rules[3], "replay/exec.h"), "");
  cr_assert_str_eq(check(&rules[3], "reprise/backend.h"), "");
  cr_assert_str_eq(check(&rules[4], "analyze/analysis.h"), "");
  cr_assert_str_neq(check(NULL, "record/graph.h"), "");
  cr_assert_str_neq(check(NULL, "../src/x.h"), "");
  cr_assert_str_eq(check(NULL, "reprise/backend.h"), "");
  cr_assert_str_eq(check(NULL, "cuda_runtime.h"), "");
  char inc[64];
  cr_assert(include_of("#include \"core/out.h\"\n", inc, sizeof inc));
  cr_assert_str_eq(inc, "core/out.h");
  cr_assert(include_of("  #  include <stdio.h>", inc, sizeof inc) ||
            include_of("# include <stdio.h>", inc, sizeof inc));
  cr_assert(!include_of("int x;", inc, sizeof inc));
}
