/* The error rule (docs/design.md, "Errors"; src/core/core.h), walked
 * over every public function that returns an rp_status: called with NULL
 * (and zero) arguments after an earlier failure left its message, each
 * refuses with a status, and rp_last_error() then holds a message of its
 * own that names the call: the earlier message was cleared on entry, and
 * the NULL argument has a message. The list is every `RP_API rp_status`
 * declaration of include/reprise/ (a test below counts them, so that a
 * new function without a row fails). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reprise.h"
#include "reprise/backend.h"

/* Each call with NULL pointers and zero values. */
#define CALLS(X)                                                               \
  X(rp_analyze, rp_analyze(NULL, NULL, NULL))                                  \
  X(rp_analysis_op, rp_analysis_op(NULL, 0, NULL))                             \
  X(rp_analysis_op_model, rp_analysis_op_model(NULL, 0, NULL, NULL))           \
  X(rp_achieved_compute, rp_achieved_compute(NULL, NULL, NULL, 0, NULL))       \
  X(rp_achieved_compare_serial, rp_achieved_compare_serial(NULL, NULL, 0))     \
  X(rp_outfile_open, rp_outfile_open(NULL, NULL, NULL))                        \
  X(rp_outfile_commit, rp_outfile_commit(NULL))                                \
  X(rp_buffer_register_elems,                                                  \
    rp_buffer_register_elems(NULL, NULL, NULL, 0, 0, NULL))                    \
  X(rp_exec_guard_image, rp_exec_guard_image(NULL, 0, NULL))                   \
  X(rp_analysis_write_achieved, rp_analysis_write_achieved(NULL, NULL, NULL))  \
  X(rp_analysis_departures,                                                    \
    rp_analysis_departures(NULL, NULL, NULL, NULL, 0, NULL))                   \
  X(rp_analysis_write_trace_achieved,                                          \
    rp_analysis_write_trace_achieved(NULL, NULL, NULL, NULL))                  \
  X(rp_analysis_write_departures,                                              \
    rp_analysis_write_departures(NULL, NULL, NULL, 0, NULL))                   \
  X(rp_analysis_lane, rp_analysis_lane(NULL, 0, NULL, NULL))                   \
  X(rp_analysis_write_text, rp_analysis_write_text(NULL, NULL))                \
  X(rp_analysis_write_json, rp_analysis_write_json(NULL, NULL))                \
  X(rp_analysis_write_dot, rp_analysis_write_dot(NULL, NULL))                  \
  X(rp_analysis_write_trace, rp_analysis_write_trace(NULL, NULL))              \
  X(rp_analysis_write_trace_part,                                              \
    rp_analysis_write_trace_part(NULL, NULL, 0, 0))                            \
  X(rp_analysis_write_svg, rp_analysis_write_svg(NULL, NULL))                  \
  X(rp_graph_write_dot_limited, rp_graph_write_dot_limited(NULL, NULL, 0))     \
  X(rp_speedup_write_svg, rp_speedup_write_svg(NULL, 0, NULL, NULL, NULL))     \
  X(rp_split_advise, rp_split_advise(NULL, NULL, 0, NULL))                     \
  X(rp_split_write_text, rp_split_write_text(NULL, NULL, NULL))                \
  X(rp_exec_fail_task, rp_exec_fail_task(NULL, 0, 0, 0, NULL))                 \
  X(rp_plan_run_on_host, rp_plan_run_on_host(NULL, 0, NULL, NULL, NULL))       \
  X(rp_plan_may_share, rp_plan_may_share(NULL, 0, 0, NULL))                    \
  X(rp_check_deps, rp_check_deps(NULL, NULL, NULL))                            \
  X(rp_check_race, rp_check_race(NULL, 0, NULL))                               \
  X(rp_check_superfluous, rp_check_superfluous(NULL, 0, NULL))                 \
  X(rp_check_write_text, rp_check_write_text(NULL, NULL))                      \
  X(rp_check_write_json, rp_check_write_json(NULL, NULL))                      \
  X(rp_kernels_load, rp_kernels_load(NULL, NULL))                              \
  X(rp_graph_bind, rp_graph_bind(NULL, NULL, NULL, NULL))                      \
  X(rp_model_calibrate, rp_model_calibrate(NULL, NULL, NULL, 0))               \
  X(rp_model_cache_path, rp_model_cache_path(NULL, NULL, NULL, NULL, 0))       \
  X(rp_model_get_opts, rp_model_get_opts(NULL, NULL, NULL, NULL))              \
  X(rp_model_get, rp_model_get(NULL, NULL, NULL, 0))                           \
  X(rp_analysis_opts_from_exec,                                                \
    rp_analysis_opts_from_exec(NULL, NULL, NULL, NULL))                        \
  X(rp_analysis_opts_calibrated,                                               \
    rp_analysis_opts_calibrated(NULL, NULL, NULL, NULL, NULL))                 \
  X(rp_analysis_opts_for,                                                      \
    rp_analysis_opts_for(NULL, NULL, NULL, NULL, NULL, NULL))                  \
  X(rp_analyze_exec, rp_analyze_exec(NULL, NULL, NULL))                        \
  X(rp_exec_profile_team,                                                      \
    rp_exec_profile_team(NULL, 0, NULL, NULL, NULL, NULL))                     \
  X(rp_model_path, rp_model_path(NULL, NULL, 0))                               \
  X(rp_model_load, rp_model_load(NULL, NULL))                                  \
  X(rp_model_save, rp_model_save(NULL, NULL))                                  \
  X(rp_model_write_json, rp_model_write_json(NULL, NULL))                      \
  X(rp_plugin_load, rp_plugin_load(NULL, NULL))                                \
  X(rp_graph_create, rp_graph_create(NULL, 0))                                 \
  X(rp_graph_end, rp_graph_end(NULL))                                          \
  X(rp_graph_set_device_kind, rp_graph_set_device_kind(NULL, 0, 0))            \
  X(rp_graph_edge, rp_graph_edge(NULL, 0, NULL))                               \
  X(rp_node_info_get, rp_node_info_get(NULL, 0, NULL))                         \
  X(rp_node_access, rp_node_access(NULL, 0, 0, NULL))                          \
  X(rp_node_set_cost, rp_node_set_cost(NULL, 0, 0))                            \
  X(rp_graph_find_buffer, rp_graph_find_buffer(NULL, NULL, NULL))              \
  X(rp_node_host_fn, rp_node_host_fn(NULL, 0, NULL, NULL))                     \
  X(rp_node_scalars, rp_node_scalars(NULL, 0, NULL, 0, NULL))                  \
  X(rp_graph_set_measured, rp_graph_set_measured(NULL, 0, NULL))               \
  X(rp_graph_set_measured_all,                                                 \
    rp_graph_set_measured_all(NULL, NULL, NULL, NULL, 0, NULL, NULL))          \
  X(rp_graph_get_measured, rp_graph_get_measured(NULL, 0, NULL))               \
  X(rp_graph_set_team_measured, rp_graph_set_team_measured(NULL, 0, NULL))     \
  X(rp_graph_set_team_measured_all,                                            \
    rp_graph_set_team_measured_all(NULL, NULL, NULL, NULL, 0, 0, 0, NULL,      \
                                   NULL))                                      \
  X(rp_graph_get_team_measured, rp_graph_get_team_measured(NULL, 0, NULL))     \
  X(rp_graph_apply_costs, rp_graph_apply_costs(NULL, NULL, NULL))              \
  X(rp_buffer_add, rp_buffer_add(NULL, NULL, NULL))                            \
  X(rp_buffer_register, rp_buffer_register(NULL, NULL, NULL, 0, NULL))         \
  X(rp_buffer_register_2d,                                                     \
    rp_buffer_register_2d(NULL, NULL, NULL, 0, 0, 0, NULL))                    \
  X(rp_buffer_info, rp_buffer_info(NULL, 0, NULL))                             \
  X(rp_buffer_distribute, rp_buffer_distribute(NULL, 0, 0, NULL))              \
  X(rp_buffer_part_rows, rp_buffer_part_rows(NULL, 0, 0, NULL, NULL))          \
  X(rp_record_kernel,                                                          \
    rp_record_kernel(NULL, NULL, 0, (rp_dims){0}, NULL, NULL, NULL))           \
  X(rp_record_copy_to_device,                                                  \
    rp_record_copy_to_device(NULL, (rp_region){0}, 0, NULL, NULL))             \
  X(rp_record_copy_to_host,                                                    \
    rp_record_copy_to_host(NULL, (rp_region){0}, 0, NULL, NULL))               \
  X(rp_record_copy_peer,                                                       \
    rp_record_copy_peer(NULL, (rp_region){0}, 0, 0, NULL, NULL))               \
  X(rp_record_host, rp_record_host(NULL, NULL, NULL, NULL, 0, NULL, NULL))     \
  X(rp_record_sync_host, rp_record_sync_host(NULL, (rp_region){0}, NULL))      \
  X(rp_record_task, rp_record_task(NULL, NULL, 0, NULL, NULL, NULL))           \
  X(rp_graph_write_json, rp_graph_write_json(NULL, NULL))                      \
  X(rp_graph_read_json, rp_graph_read_json(NULL, NULL, NULL, 0))               \
  X(rp_graph_read_json_opts,                                                   \
    rp_graph_read_json_opts(NULL, NULL, NULL, NULL, 0))                        \
  X(rp_graph_write_dot, rp_graph_write_dot(NULL, NULL))                        \
  X(rp_backend_find, rp_backend_find(NULL, NULL))                              \
  X(rp_backend_probe, rp_backend_probe(NULL))                                  \
  X(rp_exec_create, rp_exec_create(NULL, NULL, NULL, NULL))                    \
  X(rp_exec_run, rp_exec_run(NULL, 0))                                         \
  X(rp_exec_launch, rp_exec_launch(NULL, 0))                                   \
  X(rp_exec_wait, rp_exec_wait(NULL))                                          \
  X(rp_exec_wait_buffer, rp_exec_wait_buffer(NULL, 0))                         \
  X(rp_exec_run_until, rp_exec_run_until(NULL, NULL, 0, 0, NULL))              \
  X(rp_exec_rebind, rp_exec_rebind(NULL, 0, NULL, 0))                          \
  X(rp_exec_kernel_block, rp_exec_kernel_block(NULL, 0, NULL))                 \
  X(rp_exec_stats, rp_exec_stats(NULL, NULL, 0, NULL))                         \
  X(rp_exec_stat_get, rp_exec_stat_get(NULL, NULL, NULL))                      \
  X(rp_exec_trace, rp_exec_trace(NULL, 0))                                     \
  X(rp_exec_predict, rp_exec_predict(NULL, NULL, 0, NULL, 0, NULL))            \
  X(rp_exec_set_scalar, rp_exec_set_scalar(NULL, 0, 0, (rp_slot){0}))          \
  X(rp_exec_profile, rp_exec_profile(NULL, NULL))                              \
  X(rp_exec_profile_opts, rp_exec_profile_opts(NULL, NULL, NULL, NULL, NULL))  \
  X(rp_exec_timeline, rp_exec_timeline(NULL, NULL, NULL))                      \
  X(rp_replay_reference, rp_replay_reference(NULL, 0))

#define FN(n, c)                                                               \
  static rp_status null_##n(void) { return c; }
CALLS(FN)
#undef FN

static const struct row {
  const char *name;
  rp_status (*call)(void);
} rows[] = {
#define ROW(n, c) {#n, null_##n},
    CALLS(ROW)
#undef ROW
};
#define NROWS (sizeof rows / sizeof *rows)

/* An earlier failure whose message a later call must not show. */
static void stale(void) {
  const rp_backend *be;
  cr_assert_neq(rp_backend_find("no-such-backend-xyz", &be), RP_OK);
  cr_assert(strstr(rp_last_error(), "no-such-backend-xyz"), "%s",
            rp_last_error());
}

Test(error_rule, every_public_call_refuses_null_with_its_own_message) {
  unsigned bad = 0;
  for (size_t i = 0; i < NROWS; i++) {
    stale();
    if (getenv("RP_TEST_TRACE"))
      fprintf(stderr, "%s\n", rows[i].name);
    rp_status s = rows[i].call();
    const char *e = rp_last_error();
    int ok = s != RP_OK && e[0] && !strstr(e, "no-such-backend-xyz") &&
             strstr(e, rows[i].name);
    cr_expect(ok, "%s(NULL...): %s, rp_last_error() \"%s\"", rows[i].name,
              rp_status_name(s), e);
    bad += !ok;
  }
  cr_assert_eq(bad, 0, "%u of %zu calls break the rule", bad, NROWS);
}

/* The table has a row for every status-returning public function: as
 * many as the headers declare. */
Test(error_rule, the_table_is_complete) {
  static const char *const headers[] = {
      "common.h",  "record.h", "model.h",  "analyze.h", "check.h",  "replay.h",
      "measure.h", "kernel.h", "plugin.h", "library.h", "backend.h"};
  unsigned declared = 0;
  for (size_t h = 0; h < sizeof headers / sizeof *headers; h++) {
    char p[1024], line[1024];
    snprintf(p, sizeof p, "%s/reprise/%s", RP_INCLUDE_DIR, headers[h]);
    FILE *f = fopen(p, "r");
    cr_assert(f, "%s", p);
    while (fgets(line, sizeof line, f)) {
      char name[128];
      if (sscanf(line, "RP_API rp_status %127[a-z0-9_]", name) != 1)
        continue;
      declared++;
      int found = 0;
      for (size_t i = 0; i < NROWS && !found; i++)
        found = !strcmp(rows[i].name, name);
      cr_expect(found, "%s (%s) has no row", name, headers[h]);
    }
    fclose(f);
  }
  cr_assert_eq(declared, NROWS);
}

/* Success clears: the calls the probe of issue 34 found leaving an
 * earlier message in place. */
Test(error_rule, successful_calls_clear_the_last_error) {
  rp_graph *g;
  stale();
  cr_assert_eq(rp_graph_create(&g, 0), RP_OK);
  cr_assert_str_empty(rp_last_error());
  static uint8_t a[64];
  rp_buf A;
  stale();
  cr_assert_eq(rp_buffer_register(g, "A", a, sizeof a, &A), RP_OK);
  cr_assert_str_empty(rp_last_error());
  stale();
  cr_assert_eq(rp_record_copy_to_device(g, rp_whole(A), 0, NULL, NULL), RP_OK);
  cr_assert_str_empty(rp_last_error());
  cr_assert_eq(rp_graph_end(g), RP_OK);
  rp_buffer_desc d;
  stale();
  cr_assert_eq(rp_buffer_info(g, A, &d), RP_OK);
  cr_assert_str_empty(rp_last_error());
  rp_node_info ni;
  stale();
  cr_assert_eq(rp_node_info_get(g, 0, &ni), RP_OK);
  cr_assert_str_empty(rp_last_error());
  rp_analysis *an;
  stale();
  cr_assert_eq(rp_analyze(g, NULL, &an), RP_OK);
  cr_assert_str_empty(rp_last_error());
  FILE *fp = tmpfile();
  cr_assert(fp);
  rp_status (*const writers[])(const rp_analysis *, FILE *) = {
      rp_analysis_write_text, rp_analysis_write_json, rp_analysis_write_dot,
      rp_analysis_write_trace, rp_analysis_write_svg};
  for (size_t i = 0; i < sizeof writers / sizeof *writers; i++) {
    stale();
    cr_assert_eq(writers[i](an, fp), RP_OK);
    cr_assert_str_empty(rp_last_error(), "writer %zu", i);
  }
  rp_check *c;
  stale();
  cr_assert_eq(rp_check_deps(g, NULL, &c), RP_OK);
  cr_assert_str_empty(rp_last_error());
  stale();
  cr_assert_eq(rp_check_write_text(c, fp), RP_OK);
  cr_assert_str_empty(rp_last_error());
  rp_check_destroy(c);
  fclose(fp);
  rp_analysis_destroy(an);
  rp_graph_destroy(g);
}
