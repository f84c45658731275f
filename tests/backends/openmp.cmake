# The binding tests (test_openmp_binding.c, issue 31) run an OpenMP region
# themselves and measure where threads ran: OpenMP's flags, and the
# machine to themselves (their main runs one Criterion worker).
if(TARGET test_openmp_binding)
  target_link_libraries(test_openmp_binding PRIVATE OpenMP::OpenMP_C)
  set_tests_properties(test_openmp_binding PROPERTIES RUN_SERIAL TRUE)
endif()
