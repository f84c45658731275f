# The model of a replay (test_mpi_model.c: rp__mpi_simulate on lists made
# by hand; backends/mpi/rp_mpi.h, no MPI started).
if(TARGET test_mpi_model)
  target_include_directories(test_mpi_model PRIVATE
    ${CMAKE_SOURCE_DIR}/backends/mpi)
endif()
# The mpi backend's overlap of halos with computation (issue 35, item 2):
# an MPI program (not a Criterion test) on 2 and 4 ranks, one thread each,
# checking the interior and boundary slices of a stencil with a halo, the
# results against the reference replay, and that a rank's interior runs
# before its receive completes (tests/backends/mpi_split.c).
find_package(MPI COMPONENTS C QUIET)
find_program(RP_MPIRUN NAMES mpirun mpiexec)
if(NOT MPI_C_FOUND OR NOT RP_MPIRUN)
  return()
endif()
set(_env "OMPI_MCA_mpi_yield_when_idle=1")
if(RP_SANITIZE)
  # Open MPI's plugins leave allocations LeakSanitizer reports at exit
  # (none of reprise's: see examples/mpi.cmake)
  list(APPEND _env "ASAN_OPTIONS=detect_leaks=0")
endif()
# rp_mpi_program(NAME TEST): tests/backends/NAME.c built against the mpi
# backend's archive, run as TEST_np2 and TEST_np4 under mpirun.
function(rp_mpi_program name test)
  add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/backends/${name}.c)
  target_compile_options(${name} PRIVATE ${RP_WARN})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/backends/mpi)
  target_link_libraries(${name} PRIVATE reprise_static MPI::MPI_C)
  foreach(np 2 4)
    add_test(NAME ${test}_np${np}
             COMMAND ${RP_MPIRUN} --oversubscribe --allow-run-as-root
                     -np ${np} $<TARGET_FILE:${name}>)
    set_tests_properties(${test}_np${np} PROPERTIES TIMEOUT 60
      ENVIRONMENT "${_env}" RUN_SERIAL TRUE)
  endforeach()
endfunction()
rp_mpi_program(mpi_split mpi_own_split)
# The mpi backend's prediction of its own replay over the lists it lowered
# (rp__mpi_predict, backends/mpi/rp_mpi.h; rp_exec_predict()): exact
# figures on 2 and 4 ranks, cut and whole (tests/backends/mpi_predict.c).
rp_mpi_program(mpi_predict mpi_own_predict)
