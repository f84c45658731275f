/* Backends see only the plan (reprise/backend.h, "Backend interface"):
 * every backend (openmp, xrt, cuda, starpu, mpi) includes nothing but
 * public headers and files of the backends' own folders (the reference,
 * part of the core, also its checking mode's), and none calls the
 * recorded graph's inspection functions (rp_graph_*, rp_node_*,
 * rp_buffer_*, rp_exec_graph): read in their sources (comments left
 * out), and in the built objects' undefined symbols (nm): the library's,
 * and the plugins' built here. The one exception is the cuda backend's
 * importer (rp_cuda_import.c), which builds a graph from a CUDA graph: a
 * front end, not the backend. The plan carries what they read instead
 * (names, kernels, host functions, buffer descriptions and parts):
 * checked against the graph below. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "reprise/backend.h"
#include "util.h"

TestSuite(backend_plan_only, .timeout = 60);

static const char *const sources[] = {
    "backends/openmp", "backends/xrt", "backends/cuda",
    "backends/starpu", "backends/mpi", "src/replay/reference.c"};
/* Files of those folders that are no part of a backend's replay. */
static int exempt(const char *path) {
  return strstr(path, "/backends/cuda/rp_cuda_import.c") != NULL;
}
static const char *const public_headers[] = {
    "reprise/backend.h", "reprise/kernel.h", "reprise/common.h",
    "reprise/record.h", "reprise/replay.h"};

/* A graph call by name: what a backend may not use. */
static int forbidden(const char *id) {
  return !strncmp(id, "rp_graph_", 9) || !strncmp(id, "rp_node_", 8) ||
         !strncmp(id, "rp_buffer_", 10) || !strcmp(id, "rp_exec_graph");
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  cr_assert(f, "cannot read %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  cr_assert(s && fread(s, 1, (size_t)n, f) == (size_t)n);
  s[n] = 0;
  fclose(f);
  return s;
}

/* Blanks out comments and string literals (keeping the newlines). */
static void strip(char *s) {
  for (char *p = s; *p; p++) {
    if (p[0] == '/' && p[1] == '*') {
      char *e = strstr(p + 2, "*/");
      e = e ? e + 2 : p + strlen(p);
      for (; p < e; p++)
        if (*p != '\n')
          *p = ' ';
      p--;
    } else if (p[0] == '/' && p[1] == '/') {
      for (; *p && *p != '\n'; p++)
        *p = ' ';
      p--;
    } else if (*p == '"') {
      for (p++; *p && *p != '"' && *p != '\n'; p++) {
        if (*p == '\\' && p[1])
          *p++ = ' ';
        *p = ' ';
      }
      if (!*p)
        break;
    }
  }
}

/* Each #include of file `path` (text kept), and each forbidden call. */
static void scan_file(const char *path, char *bad, size_t n) {
  char *s = slurp(path);
  for (char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : 0) {
    char inc[256];
    if (sscanf(l, " # include \"%255[^\"]\"", inc) != 1)
      continue;
    /* Its own folder; the reference, part of the core, also its
     * checking mode (replay/check_run.h). */
    int ok = !strchr(inc, '/') || (strstr(path, "/src/replay/") &&
                                   !strcmp(inc, "replay/check_run.h"));
    for (size_t i = 0; i < sizeof public_headers / sizeof *public_headers; i++)
      ok |= !strcmp(inc, public_headers[i]);
    if (!ok)
      snprintf(bad + strlen(bad), n - strlen(bad), "%s: #include \"%s\"\n",
               path, inc);
  }
  strip(s);
  for (char *p = s; *p; p++) {
    if (!(p == s || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
                      (p[-1] >= '0' && p[-1] <= '9'))) ||
        strncmp(p, "rp_", 3))
      continue;
    size_t k = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
    char id[128];
    snprintf(id, sizeof id, "%.*s", (int)k, p);
    const char *q = p + k;
    while (*q == ' ' || *q == '\n')
      q++;
    if (*q == '(' && forbidden(id))
      snprintf(bad + strlen(bad), n - strlen(bad), "%s: calls %s\n", path, id);
    p += k - 1;
  }
  free(s);
}

Test(backend_plan_only, sources_include_and_call_only_the_plan) {
  static char bad[8192];
  unsigned files = 0;
  for (size_t i = 0; i < sizeof sources / sizeof *sources; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", RP_SOURCE_DIR, sources[i]);
    DIR *d = opendir(path);
    if (!d) {
      scan_file(path, bad, sizeof bad);
      files++;
      continue;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
      size_t k = strlen(e->d_name);
      if (k < 3 || (strcmp(e->d_name + k - 2, ".c") != 0 &&
                    strcmp(e->d_name + k - 2, ".h") != 0 &&
                    strcmp(e->d_name + k - 3, ".cu") != 0))
        continue;
      char f[2048];
      snprintf(f, sizeof f, "%s/%s", path, e->d_name);
      if (exempt(f))
        continue;
      scan_file(f, bad, sizeof bad);
      files++;
    }
    closedir(d);
  }
  cr_assert_geq(files, 40, "only %u files read", files);
  cr_assert_str_empty(bad, "backends reading more than the plan:\n%s", bad);
}

Test(backend_plan_only, objects_reference_no_graph_call) {
  FILE *f = fopen(RP_BACKEND_OBJECTS, "r");
  cr_assert(f, "cannot read %s", RP_BACKEND_OBJECTS);
  static char cmd[1 << 16];
  size_t n = (size_t)snprintf(cmd, sizeof cmd, "'%s' -P -A -u", RP_NM);
  char path[1024];
  unsigned objs = 0;
  /* The backends the build made (RP_BUILT_BACKENDS, tests/CMakeLists.txt). */
  const char *on = RP_BUILT_BACKENDS;
  const struct {
    const char *dir;
    int on;
  } built[] = {{"/backends/openmp/", !!strstr(on, ",openmp,")},
               {"/backends/cuda/", !!strstr(on, ",cuda,")},
               {"/backends/starpu/", !!strstr(on, ",starpu,")},
               {"/backends/mpi/", !!strstr(on, ",mpi,")},
               {"/backends/xrt/", !!strstr(on, ",xrt,")}};
  unsigned nbuilt[sizeof built / sizeof *built] = {0};
  while (fgets(path, sizeof path, f)) {
    path[strcspn(path, "\n")] = 0;
    if ((!strstr(path, "/backends/") &&
         !strstr(path, "/src/replay/reference.c")) ||
        exempt(path))
      continue;
    objs++;
    for (size_t b = 0; b < sizeof built / sizeof *built; b++)
      nbuilt[b] += strstr(path, built[b].dir) != NULL;
    n += (size_t)snprintf(cmd + n, sizeof cmd - n, " '%s'", path);
    cr_assert_lt(n, sizeof cmd);
  }
  fclose(f);
  cr_assert_geq(objs, 1);
  /* every backend built here had its objects read */
  for (size_t b = 0; b < sizeof built / sizeof *built; b++)
    cr_assert(!built[b].on || nbuilt[b] > 0, "no object of %s read",
              built[b].dir);
  FILE *p = popen(cmd, "r");
  cr_assert(p);
  static char bad[8192];
  char line[1600], name[400];
  unsigned und = 0;
  while (fgets(line, sizeof line, p)) {
    char *colon = strstr(line, ": ");
    if (!colon || sscanf(colon + 2, "%399s", name) != 1)
      continue;
    und++;
    if (forbidden(name)) {
      *colon = 0;
      snprintf(bad + strlen(bad), sizeof bad - strlen(bad), "%s: %s\n",
               strrchr(line, '/') ? strrchr(line, '/') + 1 : line, name);
    }
  }
  cr_assert_eq(pclose(p), 0, "%s failed", RP_NM);
  cr_assert_gt(und, 10, "nm listed %u undefined symbols", und);
  cr_assert_str_empty(bad, "objects calling the graph:\n%s", bad);
}

static void nop(void *u, void *const *p) { (void)u, (void)p; }

Test(backend_plan_only, the_plan_carries_what_they_read) {
  unsigned char m[64] = {0};
  double v[12] = {0};
  rp_graph *g;
  rp_buf bm, bv;
  TU_OK(NULL, rp_graph_create(&g, 0));
  TU_OK(g, rp_buffer_register(g, "m", m, sizeof m, &bm));
  TU_OK(g, rp_buffer_register_2d(g, "v", v, 4, 3, sizeof *v, &bv));
  uint64_t bounds[3] = {0, 1, 4};
  TU_OK(g, rp_buffer_distribute(g, bv, 2, bounds));
  rp_arg a[2] = {rp_arg_buf(rp_whole(bm)), rp_arg_i64(0)};
  TU_OK(g, rp_record_kernel(g, &tu_bump, 0, rp_dims3(8, 1, 1), a, NULL, NULL));
  rp_access acc = {rp_whole(bv), RP_INOUT};
  int user;
  TU_OK(g, rp_record_host(g, nop, &user, &acc, 1,
                          &(rp_op_opts)RP_OP_OPTS_WITH(.name = "task"), NULL));
  TU_OK(g, rp_graph_end(g));
  const rp_backend *be;
  TU_OK(NULL, rp_backend_find("reference", &be));
  rp_exec *x;
  TU_OK(NULL, rp_exec_create(&x, g, be, NULL));
  const rp_plan *p = rp_exec_plan(x);
  cr_assert_eq(p->nbuf, 2);
  cr_assert_str_eq(p->buf[bm].desc.name, "m");
  cr_assert_eq(p->buf[bm].desc.bytes, 64);
  cr_assert_eq(p->buf[bm].nparts, 0);
  cr_assert_null(p->buf[bm].part_rows);
  cr_assert_eq(p->buf[bv].desc.elem, 8);
  cr_assert_eq(p->buf[bv].desc.ndims, 2);
  cr_assert_eq(p->buf[bv].desc.dims[0], 4);
  cr_assert_eq(p->buf[bv].nparts, 2);
  cr_assert_eq(p->buf[bv].part_rows[0], 0);
  cr_assert_eq(p->buf[bv].part_rows[1], 1);
  cr_assert_eq(p->buf[bv].part_rows[2], 4);
  unsigned kernels = 0, hosts = 0;
  for (uint32_t i = 0; i < p->nnode; i++) {
    const rp_plan_node *nd = &p->node[i];
    rp_node_info ni;
    TU_OK(g, rp_node_info_get(p->graph, nd->op, &ni));
    cr_assert_str_eq(nd->name, ni.name);
    if (nd->type == RP_OP_KERNEL) {
      kernels++;
      cr_assert_eq(nd->kernel, &tu_bump);
      cr_assert_null(nd->host_fn);
    } else if (nd->type == RP_OP_HOST) {
      hosts++;
      cr_assert_str_eq(nd->name, "task");
      cr_assert_eq(nd->host_fn, nop);
      cr_assert_eq(nd->host_user, &user);
      cr_assert_null(nd->kernel);
    } else {
      cr_assert_null(nd->kernel);
      cr_assert_null(nd->host_fn);
    }
  }
  cr_assert_eq(kernels, 1);
  cr_assert_eq(hosts, 1);
  rp_exec_destroy(x);
  rp_graph_destroy(g);
}

/* examples/ and tools/ call no private (rp__) function of a backend and
 * include no backend's private header: what a program needs of a backend
 * comes through public calls (rp_exec_stats(), rp_exec_trace(),
 * rp_exec_predict()), with no exception (issue 34: bench_mpi_jacobi.c
 * kept four until then). tests/test_tools_public.c checks the built
 * objects too. */
typedef struct names {
  char (*v)[128];
  unsigned n, cap;
} names;

static int has(const names *s, const char *id) {
  for (unsigned i = 0; i < s->n; i++)
    if (!strcmp(s->v[i], id))
      return 1;
  return 0;
}

static void add(names *s, const char *id) {
  if (has(s, id))
    return;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 256;
    s->v = realloc(s->v, s->cap * sizeof *s->v);
    cr_assert(s->v);
  }
  snprintf(s->v[s->n++], sizeof *s->v, "%s", id);
}

/* Calls fn(path, ctx) for each file of folder dir (under the source
 * tree) with a name ending in .c, .h, .cu or .cpp; returns how many. */
static unsigned each_file(const char *dir, void (*fn)(const char *, void *),
                          void *ctx) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", RP_SOURCE_DIR, dir);
  DIR *d = opendir(path);
  cr_assert(d, "cannot list %s", path);
  unsigned n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    const char *dot = strrchr(e->d_name, '.');
    if (!dot || (strcmp(dot, ".c") && strcmp(dot, ".h") && strcmp(dot, ".cu") &&
                 strcmp(dot, ".cpp")))
      continue;
    char f[2048];
    snprintf(f, sizeof f, "%s/%s", path, e->d_name);
    fn(f, ctx);
    n++;
  }
  closedir(d);
  return n;
}

/* Each rp__ identifier of file path (comments and strings left out). */
static void each_private(const char *path, void (*fn)(const char *, void *),
                         void *ctx) {
  char *s = slurp(path);
  strip(s);
  for (char *p = s; *p; p++) {
    int start = p == s || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
                            (p[-1] >= 'A' && p[-1] <= 'Z') ||
                            (p[-1] >= '0' && p[-1] <= '9'));
    if (!start || strncmp(p, "rp__", 4))
      continue;
    size_t k = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
    char id[128];
    snprintf(id, sizeof id, "%.*s", (int)k, p);
    fn(id, ctx);
    p += k - 1;
  }
  free(s);
}

static void collect_id(const char *id, void *ctx) { add(ctx, id); }
static void collect_file(const char *path, void *ctx) {
  each_private(path, collect_id, ctx);
  const char *base = strrchr(path, '/') + 1;
  if (strstr(base, ".h"))
    add((names *)ctx + 1, base);
}

typedef struct scan {
  names *priv; /* [0] backends' rp__ names, [1] their headers */
  char bad[8192];
  unsigned used; /* rp__ names of a backend seen */
} scan;

static const char *scan_path;
static void check_id(const char *id, void *ctx) {
  scan *c = ctx;
  if (!has(&c->priv[0], id))
    return;
  c->used++;
  snprintf(c->bad + strlen(c->bad), sizeof c->bad - strlen(c->bad), "%s: %s\n",
           scan_path, id);
}

static void check_file(const char *path, void *ctx) {
  scan *c = ctx;
  scan_path = path;
  each_private(path, check_id, c);
  char *s = slurp(path);
  for (char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : 0) {
    char inc[256];
    if (sscanf(l, " # include \"%255[^\"]\"", inc) != 1)
      continue;
    /* the cuda backend's importer is public (installed as
     * reprise/rp_cuda_import.h) */
    if (has(&c->priv[1], inc) && strcmp(inc, "rp_cuda_import.h"))
      snprintf(c->bad + strlen(c->bad), sizeof c->bad - strlen(c->bad),
               "%s: #include \"%s\"\n", path, inc);
  }
  free(s);
}

Test(backend_plan_only, examples_and_tools_call_no_backend_private) {
  static const char *const backends[] = {"backends/openmp", "backends/xrt",
                                         "backends/cuda", "backends/starpu",
                                         "backends/mpi"};
  names priv[2] = {{0}, {0}};
  for (size_t i = 0; i < sizeof backends / sizeof *backends; i++)
    each_file(backends[i], collect_file, priv);
  cr_assert_gt(priv[0].n, 50, "only %u private names", priv[0].n);
  cr_assert(has(&priv[0], "rp__starpu_count"));
  cr_assert(has(&priv[1], "rp_starpu.h"));
  static scan c;
  c.priv = priv;
  unsigned files = each_file("examples", check_file, &c) +
                   each_file("tools", check_file, &c) +
                   each_file("tools/bench", check_file, &c);
  cr_assert_gt(files, 40, "only %u files read", files);
  cr_assert_str_empty(c.bad, "private backend symbols used:\n%s", c.bad);
  cr_assert_eq(c.used, 0);
  /* the scan finds a call and an include: a file calling the starpu
   * backend's trace through its private header */
  char probe[] = "/tmp/rp_plan_only_probe_XXXXXX";
  int fd = mkstemp(probe);
  cr_assert(fd >= 0);
  const char text[] = "#include \"rp_starpu.h\"\n"
                      "void f(rp_exec *x) { rp__starpu_trace(x, 1); }\n";
  cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
  close(fd);
  check_file(probe, &c);
  unlink(probe);
  cr_assert_eq(c.used, 1);
  cr_assert(strstr(c.bad, ": rp__starpu_trace\n"), "%s", c.bad);
  cr_assert(strstr(c.bad, ": #include \"rp_starpu.h\"\n"), "%s", c.bad);
  free(priv[0].v);
  free(priv[1].v);
}
