/* The layers (docs/design.md): flow goes one way. src/core uses nothing
 * of the other layers; src/record uses core; src/transform uses record and
 * core; src/analyze and src/replay each use transform, record and core,
 * and nothing of each other; src/measure, above both, may use all of
 * them; a backend reads only public headers. A test fails on any include
 * that goes back, and on any symbol an object of one layer needs that an
 * object of a layer it may not use defines (the built objects' symbol
 * tables, read with nm). */
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
    {"analyze", "core record transform analyze",
     "reprise/replay.h reprise/backend.h reprise/plugin.h "
     "reprise/measure.h"},
    {"replay", "core record transform replay",
     "reprise/analyze.h reprise/check.h reprise/model.h "
     "reprise/measure.h"},
    {"measure", "core record transform analyze replay measure", ""},
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
  static const char *const layers[] = {"core",    "record", "transform",
                                       "analyze", "replay", "measure"};
  if (!strncmp(inc, "src/", 4) || strstr(inc, "../src"))
    return "a path into src/";
  if (!slash)
    return "";
  size_t n = (size_t)(slash - inc);
  for (unsigned i = 0; i < sizeof layers / sizeof *layers; i++)
    if (strlen(layers[i]) == n && !strncmp(inc, layers[i], n))
      return !r                            ? "a private header"
             : word_in(inc, n, r->allowed) ? ""
                                           : "a layer it may not use";
  if (r && word_in(inc, strlen(inc), r->banned))
    return "a public header of a layer it may not use";
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
  cr_assert_str_neq(check(&rules[3], "reprise/replay.h"), "");
  cr_assert_str_neq(check(&rules[3], "measure/measure.h"), "");
  cr_assert_str_eq(check(&rules[3], "reprise/model.h"), "");
  cr_assert_str_neq(check(&rules[4], "analyze/analysis.h"), "");
  cr_assert_str_neq(check(&rules[4], "reprise/analyze.h"), "");
  cr_assert_str_eq(check(&rules[4], "reprise/backend.h"), "");
  cr_assert_str_eq(check(&rules[5], "analyze/analysis.h"), "");
  cr_assert_str_eq(check(&rules[5], "replay/exec.h"), "");
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

/* ---- The symbols: who calls whom, as the linker sees it ----
 * tests/CMakeLists.txt writes the list of the library's objects
 * (RP_LAYER_OBJECTS); each is read with nm (RP_NM), grouped by its folder
 * of src/ (or "backends" for the backends built into the library). */

#define NLAYER (sizeof rules / sizeof *rules + 1) /* + the backends */
#define MAXSYM 8192

typedef struct syms {
  char *name[MAXSYM];
  char *obj[MAXSYM];
  unsigned n;
} syms;

typedef struct layer_syms {
  syms def, und;
  unsigned objects;
} layer_syms;

/* The layer an object belongs to: index into rules, NLAYER - 1 for the
 * backends, -1 for none. */
static int layer_of(const char *path) {
  for (unsigned i = 0; i < sizeof rules / sizeof *rules; i++) {
    char dir[64];
    snprintf(dir, sizeof dir, "/src/%s/", rules[i].layer);
    if (strstr(path, dir))
      return (int)i;
  }
  return strstr(path, "/backends/") ? (int)NLAYER - 1 : -1;
}

static const char *layer_name(unsigned i) {
  return i < NLAYER - 1 ? rules[i].layer : "backends";
}

/* Whether layer a may use what layer b defines. The backends (in the
 * library) may use what the replay may; no layer uses the backends. */
static int may_use(unsigned a, unsigned b) {
  if (a == b)
    return 1;
  if (b == NLAYER - 1)
    return 0;
  const char *allowed =
      a == NLAYER - 1 ? "core record transform replay" : rules[a].allowed;
  return word_in(rules[b].layer, strlen(rules[b].layer), allowed);
}

static void add(syms *s, const char *name, const char *obj) {
  if (s->n < MAXSYM) {
    s->name[s->n] = strdup(name);
    s->obj[s->n++] = strdup(obj);
  }
}

/* def sorted by name (sort_syms), for find's binary search. */
static void sort_syms(syms *s) {
  for (unsigned i = 1; i < s->n; i++) /* insertion sort: a few thousand */
    for (unsigned j = i; j > 0 && strcmp(s->name[j - 1], s->name[j]) > 0; j--) {
      char *t = s->name[j];
      s->name[j] = s->name[j - 1];
      s->name[j - 1] = t;
      t = s->obj[j];
      s->obj[j] = s->obj[j - 1];
      s->obj[j - 1] = t;
    }
}

static const char *find(const syms *s, const char *name) {
  unsigned lo = 0, hi = s->n;
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    int c = strcmp(s->name[mid], name);
    if (!c)
      return s->obj[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* One nm -P -A over every object of the list: the defined text and data
 * symbols of each layer into its def, the undefined ones into its und. */
static void read_layers(layer_syms *ls) {
  FILE *f = fopen(RP_LAYER_OBJECTS, "r");
  cr_assert(f, "cannot read %s", RP_LAYER_OBJECTS);
  static char cmd[1 << 16];
  size_t n = (size_t)snprintf(cmd, sizeof cmd, "'%s' -P -A", RP_NM);
  char path[1024];
  while (fgets(path, sizeof path, f)) {
    path[strcspn(path, "\n")] = 0;
    int l = layer_of(path);
    if (!*path || l < 0)
      continue;
    ls[l].objects++;
    n += (size_t)snprintf(cmd + n, sizeof cmd - n, " '%s'", path);
    cr_assert_lt(n, sizeof cmd);
  }
  fclose(f);
  FILE *p = popen(cmd, "r");
  cr_assert(p);
  char line[1600], name[400], type[8];
  while (fgets(line, sizeof line, p)) {
    char *colon = strstr(line, ": ");
    if (!colon)
      continue;
    *colon = 0;
    int l = layer_of(line);
    if (l < 0 || sscanf(colon + 2, "%399s %7s", name, type) != 2)
      continue;
    const char *base = strrchr(line, '/') ? strrchr(line, '/') + 1 : line;
    if (type[0] == 'U')
      add(&ls[l].und, name, base);
    else if (strchr("TDBRVW", type[0]))
      add(&ls[l].def, name, base);
  }
  cr_assert_eq(pclose(p), 0, "%s failed", RP_NM);
  for (int i = 0; i < (int)NLAYER; i++)
    sort_syms(&ls[i].def);
}

/* The first symbol that layer a needs and layer b defines, written to
 * bad; 0 if none. One crossing is the design's: the registry
 * (replay/registry.c) lists the backends built into the library, their
 * tables rp_backend_<name>. */
static int crossing(const layer_syms *ls, unsigned a, unsigned b, char *bad,
                    size_t n) {
  for (unsigned i = 0; i < ls[a].und.n; i++) {
    const char *obj = find(&ls[b].def, ls[a].und.name[i]);
    if (obj && a == 4 && b == NLAYER - 1 &&
        !strncmp(ls[a].und.name[i], "rp_backend_", 11) &&
        !strcmp(ls[a].und.obj[i], "registry.c.o"))
      continue;
    if (obj) {
      snprintf(bad, n, "src/%s (%s) uses %s, defined in %s (%s)", layer_name(a),
               ls[a].und.obj[i], ls[a].und.name[i], layer_name(b), obj);
      return 1;
    }
  }
  return 0;
}

static layer_syms layers_read[NLAYER];

Test(layers, no_symbol_goes_back) {
  read_layers(layers_read);
  for (unsigned a = 0; a < NLAYER - 1; a++)
    cr_assert_gt(layers_read[a].objects, 0, "no object of src/%s in %s",
                 layer_name(a), RP_LAYER_OBJECTS);
  /* The reading works: calls that go the right way are seen. */
  char seen[600];
  cr_assert(crossing(layers_read, 4, 1, seen, sizeof seen), "replay->record");
  cr_assert(crossing(layers_read, 5, 3, seen, sizeof seen), "measure->analyze");
  cr_assert(crossing(layers_read, 5, 4, seen, sizeof seen), "measure->replay");
  cr_assert(crossing(layers_read, 3, 0, seen, sizeof seen), "analyze->core");
  for (unsigned a = 0; a < NLAYER; a++)
    for (unsigned b = 0; b < NLAYER; b++) {
      char bad[600] = "";
      if (!may_use(a, b))
        cr_expect_eq(crossing(layers_read, a, b, bad, sizeof bad), 0, "%s",
                     bad);
    }
}

/* The pairs: analyze and replay use nothing of each other, nor anything
 * of measure; measure uses both. */
Test(layers, the_pairs) {
  cr_assert(!may_use(3, 4) && !may_use(4, 3));
  cr_assert(!may_use(3, 5) && !may_use(4, 5) && !may_use(0, 1));
  cr_assert(may_use(5, 3) && may_use(5, 4) && may_use(4, 2));
  cr_assert(!may_use(NLAYER - 1, 3) && may_use(NLAYER - 1, 4));
  cr_assert(!may_use(4, NLAYER - 1));
  cr_assert_eq(layer_of("/b/CMakeFiles/rp_obj.dir/src/replay/exec.c.o"), 4);
  cr_assert_eq(layer_of("/b/rp_obj.dir/backends/openmp/x.c.o"),
               (int)NLAYER - 1);
  cr_assert_eq(layer_of("/b/tools/x.c.o"), -1);
}
