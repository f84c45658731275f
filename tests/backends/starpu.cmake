# starpu backend tests: the tests read the backend's figures
# (backends/starpu/rp_starpu.h; test_starpu_stats against rp_exec_stats(),
# test_starpu_trace against rp_exec_trace() and rp_exec_predict());
# StarPU starts with two CPU workers and no banner.
foreach(t test_starpu test_starpu_stats test_starpu_trace)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE
      ${CMAKE_SOURCE_DIR}/backends/starpu)
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT
      "STARPU_NCPU=2;STARPU_SILENT=1")
  endif()
endforeach()
# The chains of messages per rank (test_starpu_chain.c) and the predicted
# time per rank (test_starpu_predict.c): fake ranks, no StarPU started, no
# MPI.
foreach(t test_starpu_chain test_starpu_predict)
  if(TARGET ${t})
    target_include_directories(${t} PRIVATE
      ${CMAKE_SOURCE_DIR}/backends/starpu)
  endif()
endforeach()
# The CUDA bodies (backends/starpu/sp_cuda.c) are compiled only where
# StarPU has CUDA, which Debian's StarPU does not: check here that they
# and the code around them compile as if it had (STARPU_USE_CUDA defined,
# the CUDA toolkit's headers), warnings as errors.
if(TARGET test_starpu AND CUDAToolkit_FOUND)
  set(_inc)
  foreach(d ${RP_PLUGIN_starpu_INCLUDES} ${CUDAToolkit_INCLUDE_DIRS}
            ${CMAKE_SOURCE_DIR}/include)
    list(APPEND _inc -I${d})
  endforeach()
  foreach(f sp_cuda rp_starpu sp_runtime)
    add_test(NAME starpu_with_cuda_compiles_${f}
             COMMAND ${CMAKE_C_COMPILER} -std=c11 -D_GNU_SOURCE
                     -DSTARPU_USE_CUDA -DRP_STARPU_MPI=1 -fsyntax-only
                     ${RP_WARN} -Werror -Wno-deprecated-declarations ${_inc}
                     ${CMAKE_SOURCE_DIR}/backends/starpu/${f}.c)
  endforeach()
endif()
# Mode "mpi" builds no chain through the ranks (issue 35): an MPI program
# (not a Criterion test) on 4 ranks, one worker each, whose stencils sleep;
# it checks the results against the reference replay and that no rank
# waits beyond its neighbours (tests/backends/starpu_mpi_chain.c).
if(TARGET test_starpu AND RP_HAVE_STARPU_MPI)
  find_package(MPI COMPONENTS C QUIET)
  find_program(RP_MPIRUN NAMES mpirun mpiexec)
  if(MPI_C_FOUND AND RP_MPIRUN)
    add_executable(starpu_mpi_chain
                   ${CMAKE_CURRENT_SOURCE_DIR}/backends/starpu_mpi_chain.c)
    target_compile_options(starpu_mpi_chain PRIVATE ${RP_WARN})
    target_include_directories(starpu_mpi_chain PRIVATE
      ${CMAKE_SOURCE_DIR}/backends/starpu)
    target_link_libraries(starpu_mpi_chain PRIVATE reprise_static
                          MPI::MPI_C)
    add_test(NAME starpu_mpi_no_chain_np4
             COMMAND ${RP_MPIRUN} --oversubscribe --allow-run-as-root
                     -np 4 $<TARGET_FILE:starpu_mpi_chain>)
    set(_env "STARPU_NCPU=1;STARPU_SILENT=1;OMPI_MCA_mpi_yield_when_idle=1")
    if(RP_SANITIZE)
      # Open MPI's plugins leave allocations LeakSanitizer reports at exit
      # (none of reprise's: see examples/mpi.cmake)
      list(APPEND _env "ASAN_OPTIONS=detect_leaks=0")
    endif()
    # Timed: 4 ranks on a 2-core machine beside another test missed the
    # 1.5-stencil margin once (ctest -j2, 2026-12-04); alone it holds.
    set_tests_properties(starpu_mpi_no_chain_np4 PROPERTIES TIMEOUT 60
      ENVIRONMENT "${_env}" RUN_SERIAL TRUE)
    # the same on the mpi backend (REPRISE_MPI_BACKEND=mpi: its lowering
    # reuses the starpu lowering's placement; the program links both)
    if(RP_HAVE_MPI_BACKEND)
      add_test(NAME mpi_own_no_chain_np4
               COMMAND ${RP_MPIRUN} --oversubscribe --allow-run-as-root
                       -np 4 $<TARGET_FILE:starpu_mpi_chain>)
      set_tests_properties(mpi_own_no_chain_np4 PROPERTIES TIMEOUT 60
        ENVIRONMENT "${_env};REPRISE_MPI_BACKEND=mpi" RUN_SERIAL TRUE)
    endif()
  endif()
endif()
