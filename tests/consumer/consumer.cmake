# Install into a temporary prefix and build a project outside reprise
# against it with find_package and with pkg-config (tests/consumer/run.sh).
# Not under the sanitizers: the consumer is built without them.
if(NOT RP_SANITIZE)
  add_test(NAME install_consumer
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/consumer/run.sh ${CMAKE_BINARY_DIR}
            ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/consumer_work)
  set_tests_properties(install_consumer PROPERTIES TIMEOUT ${RP_TEST_TIMEOUT})
endif()
