# starpu backend tests: the test reads the backend's figures
# (backends/starpu/rp_starpu.h); StarPU starts with two CPU workers and no
# banner.
if(TARGET test_starpu)
  target_include_directories(test_starpu PRIVATE
    ${CMAKE_SOURCE_DIR}/backends/starpu)
  set_property(TEST test_starpu APPEND PROPERTY ENVIRONMENT
    "STARPU_NCPU=2;STARPU_SILENT=1")
endif()
