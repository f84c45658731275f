# Backends as plugins: the core library's dependencies (no vendor library),
# and test_plugin, linked with the SHARED library, finding test plugins
# built here (<build>/tests/plugins) and the real ones (<build>/reprise).
set(_pd ${CMAKE_CURRENT_BINARY_DIR}/plugins)
set(_plugins "")
foreach(p ${RP_PLUGINS})
  list(APPEND _plugins $<TARGET_FILE:reprise_${p}>)
endforeach()
add_test(NAME core_needs_no_vendor_library
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/plugin/check_core_deps.sh
                 $<TARGET_FILE:reprise> ${_plugins})

add_library(rp_novendor SHARED ${CMAKE_CURRENT_SOURCE_DIR}/plugin/novendor.c)
set_target_properties(rp_novendor PROPERTIES OUTPUT_NAME novendor
  LIBRARY_OUTPUT_DIRECTORY ${_pd}/vendor)
# name|define|define...
set(_fakes "fake|FAKE_NAME=\"fake\"" "badabi|FAKE_NAME=\"badabi\"|FAKE_ABI=999"
    "noentry|FAKE_NAME=\"noentry\"|FAKE_NO_ENTRY"
    "misnamed|FAKE_NAME=\"other\""
    "vendor|FAKE_NAME=\"vendor\"|FAKE_VENDOR")
set(_fake_targets "")
foreach(f ${_fakes})
  string(REPLACE "|" ";" f "${f}")
  list(GET f 0 n)
  list(REMOVE_AT f 0)
  add_library(rp_fake_${n} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/plugin/fake_plugin.c)
  target_include_directories(rp_fake_${n} PRIVATE ${CMAKE_SOURCE_DIR}/include)
  target_compile_definitions(rp_fake_${n} PRIVATE ${f})
  set_target_properties(rp_fake_${n} PROPERTIES OUTPUT_NAME reprise-${n}
    LIBRARY_OUTPUT_DIRECTORY ${_pd} C_VISIBILITY_PRESET hidden)
  list(APPEND _fake_targets rp_fake_${n})
endforeach()
# The vendor library is linked but not found at run time (no RPATH).
target_link_libraries(rp_fake_vendor PRIVATE rp_novendor)
set_target_properties(rp_fake_vendor PROPERTIES SKIP_BUILD_RPATH ON)

add_executable(test_plugin ${CMAKE_CURRENT_SOURCE_DIR}/plugin/test_plugin.c)
add_dependencies(test_plugin ${_fake_targets})
foreach(p ${RP_PLUGINS})
  add_dependencies(test_plugin reprise_${p})
  string(TOUPPER ${p} P)
  target_compile_definitions(test_plugin PRIVATE RP_TEST_${P}_PLUGIN)
endforeach()
target_include_directories(test_plugin PRIVATE ${CRITERION_INCLUDE_DIRS})
target_compile_definitions(test_plugin PRIVATE _GNU_SOURCE
                           RP_TEST_PLUGINS="${_pd}")
target_compile_options(test_plugin PRIVATE ${RP_WARN})
target_link_libraries(test_plugin PRIVATE reprise ${CRITERION_LIBRARIES}
                      ${CMAKE_DL_LIBS})
add_test(NAME test_plugin COMMAND test_plugin --jobs 2)
set_tests_properties(test_plugin PROPERTIES TIMEOUT ${RP_TEST_TIMEOUT}
  ENVIRONMENT "REPRISE_PLUGIN_PATH=${_pd};XRT_INI_PATH=${CMAKE_CURRENT_SOURCE_DIR}/plugin/xrt.ini")
if(RP_SANITIZE)
  set_property(TEST test_plugin APPEND PROPERTY ENVIRONMENT
    "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan.supp")
endif()
