# First contact (issue 27): the demo builds only what it runs, and the
# Spack recipe matches the CMake options (its configure check runs in the
# stage "package" of scripts/test.sh, with the Debian packages). Neither
# runs code of the library: not repeated under the sanitizers.
if(NOT RP_SANITIZE)
  add_test(NAME demo_builds_what_it_runs
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/packaging/demo_plan.sh
            ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/demo_plan)
  add_test(NAME spack_recipe
    COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/check_spack.sh)
  add_test(NAME deps_sets_link
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/packaging/deps_sets.sh
            ${CMAKE_SOURCE_DIR})
  set_tests_properties(demo_builds_what_it_runs spack_recipe deps_sets_link
                       PROPERTIES TIMEOUT ${RP_TEST_TIMEOUT})
endif()

# The time-budget guard of scripts/test.sh (issue 21) on synthetic logs.
if(NOT RP_SANITIZE)
  add_test(NAME test_budget_script
    COMMAND bash ${CMAKE_SOURCE_DIR}/tests/scripts/test_budget_script.sh
            ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/budget_script)
  set_tests_properties(test_budget_script PROPERTIES TIMEOUT ${RP_TEST_TIMEOUT})
endif()
