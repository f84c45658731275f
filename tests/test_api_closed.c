/* The closed API: the shared library exports only the public names (rp_
 * and one letter, each declared in a public header), never an internal
 * rp__ one; the version macros and rp_version() agree with each other
 * and with the project's version. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"

/* The text of every public header, concatenated. */
static char *headers(void) {
  static const char *const names[] = {
      "reprise.h",        "reprise/common.h",  "reprise/record.h",
      "reprise/model.h",  "reprise/analyze.h", "reprise/check.h",
      "reprise/replay.h", "reprise/measure.h", "reprise/kernel.h",
      "reprise/plugin.h", "reprise/library.h", "reprise/backend.h"};
  size_t cap = 1 << 20, n = 0;
  char *all = malloc(cap);
  cr_assert(all);
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", RP_INCLUDE_DIR, names[i]);
    FILE *f = fopen(p, "r");
    cr_assert(f, "cannot open %s", p);
    size_t k;
    while ((k = fread(all + n, 1, cap - n - 1, f)) > 0) {
      n += k;
      if (n + 1 >= cap) {
        cap *= 2;
        all = realloc(all, cap);
        cr_assert(all);
      }
    }
    fclose(f);
  }
  all[n] = 0;
  return all;
}

/* Whether the headers' text declares `name` (as a function or an object:
 * the name followed by '(' or ';', or a backend table's "extern"). */
static int declared(const char *text, const char *name) {
  size_t n = strlen(name);
  for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
    char before = p == text ? ' ' : p[-1];
    char after = p[n];
    if ((before == ' ' || before == '*' || before == '\n' || before == '(') &&
        (after == '(' || after == ';' || after == '['))
      return 1;
  }
  return 0;
}

Test(api_closed, exports_only_declared_public_names) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' -D --defined-only '%s'", RP_NM,
           RP_SHARED_LIB);
  FILE *p = popen(cmd, "r");
  cr_assert(p);
  char *text = headers();
  char line[512], addr[64], type[8], name[400];
  unsigned seen = 0;
  while (fgets(line, sizeof line, p)) {
    if (sscanf(line, "%63s %7s %399s", addr, type, name) != 3)
      continue;
    if (strchr("Tt", type[0]) == NULL && strchr("DdBbRrVW", type[0]) == NULL)
      continue;
    seen++;
    cr_expect(!strncmp(name, "rp_", 3) && name[3] != '_',
              "libreprise.so exports %s, not a public rp_ name", name);
    cr_expect(declared(text, name),
              "libreprise.so exports %s, which no "
              "public header declares",
              name);
  }
  cr_assert_eq(pclose(p), 0, "%s failed", cmd);
  /* The reading works: the library's core entries are there. */
  cr_assert_gt(seen, 100, "only %u exports read", seen);
  cr_assert(declared(text, "rp_graph_create"));
  cr_assert(!declared(text, "rp__set_last_error"));
  cr_assert(!declared(text, "rp__now_us"));
  free(text);
}

Test(api_closed, version) {
  char v[64];
  snprintf(v, sizeof v, "%d.%d.%d", RP_VERSION_MAJOR, RP_VERSION_MINOR,
           RP_VERSION_PATCH);
  cr_assert_str_eq(v, RP_VERSION_STRING);
  cr_assert_str_eq(rp_version(), RP_VERSION_STRING);
  cr_assert_str_eq(RP_VERSION_STRING, RP_PROJECT_VERSION);
  cr_assert_eq(RP_VERSION, RP_VERSION_MAJOR * 10000 + RP_VERSION_MINOR * 100 +
                               RP_VERSION_PATCH);
#if RP_VERSION < 100
#error "RP_VERSION is not usable in #if"
#endif
}

/* rp_model_opts under the size rule (src/core/versioned.c): a
 * zero-filled one is refused, saying how to initialise it; one from its
 * init function is read. */
Test(api_closed, model_opts_has_a_size) {
  rp_model_opts zero;
  memset(&zero, 0, sizeof zero);
  char path[4200];
  cr_assert_eq(rp_model_cache_path(NULL, NULL, &zero, path, sizeof path),
               RP_EINVAL);
  cr_assert(strstr(rp_last_error(), "rp_model_opts"), "%s", rp_last_error());
  cr_assert(strstr(rp_last_error(), "size is 0"), "%s", rp_last_error());
  rp_model m;
  cr_assert_eq(rp_model_get_opts(&m, NULL, NULL, &zero), RP_EINVAL);
  rp_model_opts mo = RP_MODEL_OPTS_INIT;
  cr_assert_eq(mo.size, sizeof mo);
  mo.cache_dir = "/reprise-test-cache";
  cr_assert_eq(rp_model_cache_path(NULL, NULL, &mo, path, sizeof path), RP_OK);
  cr_assert(!strncmp(path, "/reprise-test-cache/", 20), "%s", path);
  rp_model_opts o2;
  memset(&o2, 0xff, sizeof o2);
  rp_model_opts_init(&o2);
  cr_assert_eq(o2.size, sizeof o2);
  cr_assert_eq(o2.flags, 0);
  cr_assert_null(o2.cache_dir);
  cr_assert_null(o2.progress);
}
