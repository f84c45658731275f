# xrt backend tests: the test reads the backend's internal header (the
# xclbin writer, the per-compute-unit counters); the FPGA example runs as a
# smoke test in its noop emulation.
if(TARGET test_xrt)
  target_include_directories(test_xrt PRIVATE
    ${CMAKE_SOURCE_DIR}/backends/xrt)
endif()
if(TARGET matmul_fpga)
  add_test(NAME example_matmul_fpga
           COMMAND matmul_fpga -n 128 --iters 2 --delay-us 100)
  set_tests_properties(example_matmul_fpga PROPERTIES TIMEOUT ${RP_TEST_TIMEOUT})
endif()
# The plan's differential test compares every backend whose probe passes:
# xrt through its noop emulation.
if(TARGET test_plan)
  set_property(TEST test_plan APPEND PROPERTY ENVIRONMENT RP_XRT_EMULATE=1)
endif()
