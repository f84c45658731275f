# Every documented command example runs (tests/docs/doc_examples.sh):
# the manual pages' EXAMPLES and the README's command lines, against the
# built tool and examples. Not repeated under the sanitizers.
if(NOT RP_SANITIZE AND TARGET jacobi2d AND TARGET jacobi2d_kernels)
  foreach(part man readme)
    add_test(NAME doc_examples_${part}
      COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/doc_examples.sh
              ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
              ${CMAKE_CURRENT_BINARY_DIR}/doc_examples_${part} ${part})
    set_tests_properties(doc_examples_${part} PROPERTIES
                         TIMEOUT ${RP_TEST_TIMEOUT})
  endforeach()
endif()
# A mistyped command gets the one it most likely meant; a name far from
# every command gets none.
add_test(NAME cli_did_you_mean
  COMMAND sh -c "t=$0; $t analyse 2>&1 | grep -qx \"Did you mean 'reprise analyze'?\" && $t help dott 2>&1 | grep -qx \"Did you mean 'reprise dot'?\" && ! $t foo 2>&1 | grep -q 'Did you mean'"
          $<TARGET_FILE:reprise_cli>)
# The readable grouped view is the default at every size.
if(TARGET jacobi2d)
  add_test(NAME cli_dot_default_grouped
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/dot_default.sh
            $<TARGET_FILE:reprise_cli> $<TARGET_FILE:jacobi2d>
            ${CMAKE_CURRENT_BINARY_DIR}/dot_default)
endif()
# scripts/test.sh prints the reasons of skipped tests (scripts/skip_reasons.sh).
if(NOT RP_SANITIZE)
  add_test(NAME skip_reasons_script
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/skip_reasons_check.sh
            ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/skip_reasons)
endif()
# XRT's banner and messages stay silent when the xrt plugin is probed
# (backends/xrt/rp_xrt.c: quiet_xrt); without a card the probe's reason
# is reprise's own message.
if(TARGET reprise_xrt AND NOT RP_SANITIZE)
  add_test(NAME xrt_probe_is_quiet
    COMMAND sh -c "out=$($0 run $1 --backend xrt 2>&1); echo \"$out\"; ! echo \"$out\" | grep -q 'XRT build version\\|\\[XRT\\]'"
            $<TARGET_FILE:reprise_cli> ${CMAKE_SOURCE_DIR}/tests/data/copies.json)
endif()
