/* No tool or example calls an internal (rp__) symbol (issue 34): every
 * object built under tools/ and examples/ (the CLI, the benchmarks, the
 * examples and their shared code), read with nm (RP_NM), references no
 * undefined rp__ symbol, save the two listed below; what a program needs
 * of the library or a backend comes through public calls (a backend's
 * figures, trace and prediction: rp_exec_stats(), rp_exec_trace(),
 * rp_exec_predict()). tests/test_backend_plan_only.c reads the sources
 * for backends' private names and headers. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(tools_public, .timeout = 60);

/* The internal calls two benchmarks of the core keep (docs/design.md,
 * "Closing the API: the audit"): the hazard detector's tuning and the
 * guard words' check, which no program needs. Each must still be there
 * (a stale entry fails), so that the list only shrinks. */
static const struct {
  const char *object, *symbol;
} allowed[] = {{"bench_record.c.o", "rp__hazard_tune"},
               {"bench_guard.c.o", "rp__exec_guards"}};
enum { NALLOWED = sizeof allowed / sizeof *allowed };

Test(tools_public, tools_and_examples_reference_no_internal_symbol) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "find '%s/tools' '%s/examples' -name '*.o' -exec '%s' -P -A -u "
           "{} +",
           RP_BINARY_DIR, RP_BINARY_DIR, RP_NM);
  FILE *p = popen(cmd, "r");
  cr_assert(p);
  static char bad[8192];
  char line[2048], name[512], type[8], seen_obj[2048] = "";
  unsigned objects = 0, cli = 0, jacobi = 0, found[NALLOWED] = {0};
  unsigned present[NALLOWED] = {0};
  while (fgets(line, sizeof line, p)) {
    char *colon = strstr(line, ": ");
    if (!colon || sscanf(colon + 2, "%511s %7s", name, type) != 2)
      continue;
    *colon = 0;
    const char *base = strrchr(line, '/') ? strrchr(line, '/') + 1 : line;
    if (strcmp(line, seen_obj)) { /* a new object */
      snprintf(seen_obj, sizeof seen_obj, "%s", line);
      objects++;
      cli += !strcmp(base, "cmd_run.c.o");
      jacobi += !strcmp(base, "bench_mpi_jacobi.c.o");
      for (unsigned i = 0; i < NALLOWED; i++)
        present[i] += !strcmp(base, allowed[i].object);
    }
    if (strncmp(name, "rp__", 4))
      continue;
    int ok = 0;
    for (unsigned i = 0; i < NALLOWED; i++)
      if (!strcmp(base, allowed[i].object) &&
          !strcmp(name, allowed[i].symbol)) {
        found[i]++;
        ok = 1;
      }
    if (!ok)
      snprintf(bad + strlen(bad), sizeof bad - strlen(bad), "%s: %s\n", line,
               name);
  }
  cr_assert_eq(pclose(p), 0, "%s", cmd);
  cr_assert_gt(objects, 10, "only %u objects read", objects);
  cr_assert_eq(cli, 1, "the CLI's objects were not read");
#ifdef RP_HAVE_STARPU_MPI
  cr_assert_eq(jacobi, 1, "bench_mpi_jacobi's object was not read");
#endif
  cr_assert_str_empty(bad, "internal symbols referenced:\n%s", bad);
  for (unsigned i = 0; i < NALLOWED; i++)
    cr_assert(!present[i] || found[i], "%s no longer calls %s: drop it",
              allowed[i].object, allowed[i].symbol);
}
