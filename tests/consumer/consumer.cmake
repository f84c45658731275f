# The installed library as a project outside reprise meets it
# (tests/consumer/run.sh): consumer_install installs this build into a
# fresh prefix (a fixture), then three consumers are built in a cleared
# environment: find_package on the shared library with CUDA hidden,
# find_package on the static library and each static vendor backend, and
# pkg-config (shared, started without LD_LIBRARY_PATH, and static).
# Not under the sanitizers: the consumers are built without them.
if(NOT RP_SANITIZE)
  set(_work ${CMAKE_CURRENT_BINARY_DIR}/consumer_work)
  set(_run sh ${CMAKE_CURRENT_SOURCE_DIR}/consumer/run.sh)
  add_test(NAME consumer_install
           COMMAND ${_run} install ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR} ${_work})
  set_tests_properties(consumer_install PROPERTIES
                       FIXTURES_SETUP reprise_installed)
  set(_forms shared static pkgconfig)
  if(RP_HAVE_CXX)
    list(APPEND _forms cxx)  # reprise.hpp, found by both
  endif()
  foreach(form ${_forms})
    add_test(NAME consumer_${form}
             COMMAND ${_run} ${form} ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR} ${_work})
    set_tests_properties(consumer_${form} PROPERTIES
                         FIXTURES_REQUIRED reprise_installed)
  endforeach()
  list(TRANSFORM _forms PREPEND consumer_)
  set_tests_properties(consumer_install ${_forms} PROPERTIES
                       TIMEOUT ${RP_TEST_TIMEOUT})
endif()
