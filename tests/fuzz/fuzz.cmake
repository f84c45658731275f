# libFuzzer target (RP_FUZZ=ON with clang; scripts/fuzz.sh builds and runs
# it): the whole library instrumented, the target linked with libFuzzer.
if(NOT RP_FUZZ)
  return()
endif()
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "RP_FUZZ=ON needs clang (CC=clang)")
endif()
add_executable(fuzz_graph ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_graph.c)
target_compile_definitions(fuzz_graph PRIVATE _GNU_SOURCE)
target_compile_options(fuzz_graph PRIVATE ${RP_WARN} -fsanitize=fuzzer)
target_link_options(fuzz_graph PRIVATE -fsanitize=fuzzer)
target_include_directories(fuzz_graph PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(fuzz_graph PRIVATE reprise_static)
