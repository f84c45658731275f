# MPI benchmarks (bench_mpi_*.c): run them with mpirun (see docs/mpi.md).
# bench_mpi_pingpong needs MPI only; bench_mpi_jacobi the starpu backend
# with StarPU-MPI.
find_package(MPI COMPONENTS C QUIET)
if(NOT MPI_C_FOUND)
  return()
endif()
add_executable(bench_mpi_pingpong
               ${CMAKE_CURRENT_SOURCE_DIR}/bench_mpi_pingpong.c)
target_compile_options(bench_mpi_pingpong PRIVATE ${RP_WARN})
target_link_libraries(bench_mpi_pingpong PRIVATE MPI::MPI_C)
if(RP_HAVE_STARPU_MPI AND TARGET rp_examples AND
   EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/bench_mpi_jacobi.c)
  add_executable(bench_mpi_jacobi ${CMAKE_CURRENT_SOURCE_DIR}/bench_mpi_jacobi.c
                 ${CMAKE_SOURCE_DIR}/examples/mpi_common.c)
  target_compile_options(bench_mpi_jacobi PRIVATE ${RP_WARN})
  target_include_directories(bench_mpi_jacobi PRIVATE
    ${CMAKE_SOURCE_DIR}/examples)
  target_link_libraries(bench_mpi_jacobi PRIVATE rp_examples reprise_static
                        MPI::MPI_C)
  if(RP_HAVE_MPI_BACKEND) # the mpi backend by default (exm_backend)
    target_compile_definitions(bench_mpi_jacobi PRIVATE RP_HAVE_MPI_BACKEND=1)
  endif()
endif()
