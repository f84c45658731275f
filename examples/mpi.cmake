# MPI examples (examples/mpi_*.c): the distributed replay, on the mpi
# backend by default where it is built, else (and with
# REPRISE_MPI_BACKEND=starpu) the starpu backend's mode "mpi". Built when
# the library has StarPU-MPI; each runs under mpirun with 1, 2 and 4 ranks
# in ctest (--oversubscribe: CI has 2 cores; --allow-run-as-root: CI runs
# as root), StarPU on one CPU worker per rank and silent.
if(NOT RP_HAVE_STARPU_MPI)
  return()
endif()
find_package(MPI COMPONENTS C REQUIRED)
foreach(n mpi_jacobi2d mpi_heat2d)
  if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${n}.c)
    continue()
  endif()
  add_executable(${n} ${CMAKE_CURRENT_SOURCE_DIR}/${n}.c
                 ${CMAKE_CURRENT_SOURCE_DIR}/mpi_common.c)
  target_compile_options(${n} PRIVATE ${RP_WARN})
  target_link_libraries(${n} PRIVATE rp_examples reprise_static MPI::MPI_C)
  if(RP_HAVE_MPI_BACKEND) # the mpi backend by default (exm_backend)
    target_compile_definitions(${n} PRIVATE RP_HAVE_MPI_BACKEND=1)
  endif()
endforeach()
if(NOT RP_BUILD_TESTS)
  return()
endif()
find_program(RP_MPIRUN NAMES mpirun mpiexec)
if(NOT RP_MPIRUN)
  return()
endif()
set(rp_mpi_env "STARPU_NCPU=1;STARPU_SILENT=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mpi_yield_when_idle=1")
if(RP_SANITIZE)
  # Open MPI's and hwloc's plugins (dlopen'ed, unnamed frames) leave
  # allocations LeakSanitizer reports at exit; none of them is reprise's
  # (checked: no frame of the library or the examples). Memory errors and
  # undefined behaviour are still caught.
  list(APPEND rp_mpi_env "ASAN_OPTIONS=detect_leaks=0")
endif()
set(rp_mpi_tests
  "heat2d_np2 2 mpi_heat2d --n 64 --steps 4 --iters 3"
  "heat2d_np4 4 mpi_heat2d --n 61 --steps 5 --iters 2 --devices-per-rank 2"
  "heat2d_explicit_np2 2 mpi_heat2d --n 64 --steps 4 --iters 2 --explicit-halo"
  "jacobi2d_np2 2 mpi_jacobi2d --n 64 --steps 4 --every 2 --iters 3"
  "jacobi2d_np4 4 mpi_jacobi2d --n 80 --steps 4 --every 0 --iters 2"
  # distributed grids (rp_buffer_distribute): each rank holds its rows,
  # gathered once at the end for the check; rows not dividing by ranks, a
  # rank with no rows (--parts 1, --empty-part), one rank
  "jacobi2d_dist_np2 2 mpi_jacobi2d --n 64 --steps 4 --iters 3 --distributed"
  "jacobi2d_dist_np4 4 mpi_jacobi2d --n 80 --steps 4 --iters 2 --distributed"
  "jacobi2d_dist_np1 1 mpi_jacobi2d --n 40 --steps 4 --iters 2 --distributed"
  "heat2d_dist_np2 2 mpi_heat2d --n 64 --steps 4 --iters 3 --distributed"
  "heat2d_dist_np4 4 mpi_heat2d --n 61 --steps 5 --iters 2 --devices-per-rank 2 --distributed"
  "heat2d_dist_parts1_np4 4 mpi_heat2d --n 61 --steps 5 --iters 2 --distributed --parts 1"
  "heat2d_dist_empty_np4 4 mpi_heat2d --n 61 --steps 5 --iters 2 --distributed --empty-part 2"
  "heat2d_dist_explicit_np2 2 mpi_heat2d --n 64 --steps 4 --iters 2 --explicit-halo --distributed"
  "heat2d_dist_np1 1 mpi_heat2d --n 61 --steps 5 --iters 2 --distributed")
# Registers tests "name np program args..." (ARGN) as mpi_<prefix><name>:
# the program under mpirun -np np (with mpirun flags FLAGS, a list), the
# environment rp_mpi_env plus ENV (a list); RUN_SERIAL when SERIAL.
function(rp_mpi_tests prefix timeout serial env flags)
  set(_env ${rp_mpi_env} ${env})
  foreach(t ${ARGN})
    separate_arguments(args UNIX_COMMAND "${t}")
    list(GET args 0 name)
    list(GET args 1 np)
    list(GET args 2 prog)
    list(REMOVE_AT args 0 1 2)
    if(TARGET ${prog})
      add_test(NAME mpi_${prefix}${name}
               COMMAND ${RP_MPIRUN} --oversubscribe --allow-run-as-root
                       ${flags} -np ${np} $<TARGET_FILE:${prog}> ${args})
      set_tests_properties(mpi_${prefix}${name} PROPERTIES TIMEOUT ${timeout}
                           RUN_SERIAL ${serial} ENVIRONMENT "${_env}")
    endif()
  endforeach()
endfunction()
rp_mpi_tests("" 120 FALSE "REPRISE_MPI_BACKEND=starpu" "" ${rp_mpi_tests})
# The same programs on the mpi backend (backends/mpi: the openmp engine,
# nonblocking MPI messages; REPRISE_MPI_BACKEND=mpi): results identical to
# the reference on 1, 2 and 4 ranks, replicated and distributed, and each
# rank's tasks, sends and receives as the placement says. One thread per
# rank where the ranks fill the CI's 2 cores, 2 on one rank; RUN_SERIAL: 4
# ranks polling their receives beside another test slow both down.
if(RP_HAVE_MPI_BACKEND)
  rp_mpi_tests(own_ 60 TRUE "REPRISE_MPI_BACKEND=mpi" ""
    "heat2d_np1 1 mpi_heat2d --n 48 --steps 4 --iters 2"
    "heat2d_np2 2 mpi_heat2d --n 64 --steps 4 --iters 3"
    "heat2d_np4 4 mpi_heat2d --n 61 --steps 5 --iters 2 --devices-per-rank 2"
    "jacobi2d_np2 2 mpi_jacobi2d --n 64 --steps 4 --every 2 --iters 3"
    "jacobi2d_np4 4 mpi_jacobi2d --n 80 --steps 4 --every 0 --iters 2"
    "jacobi2d_dist_np1 1 mpi_jacobi2d --n 40 --steps 4 --iters 2 --distributed"
    "jacobi2d_dist_np2 2 mpi_jacobi2d --n 64 --steps 4 --iters 3 --distributed"
    "jacobi2d_dist_np4 4 mpi_jacobi2d --n 80 --steps 4 --iters 2 --distributed"
    "heat2d_dist_np4 4 mpi_heat2d --n 61 --steps 5 --iters 2 --devices-per-rank 2 --distributed"
    "heat2d_dist_empty_np4 4 mpi_heat2d --n 61 --steps 5 --iters 2 --distributed --empty-part 2"
    "heat2d_dist_explicit_np2 2 mpi_heat2d --n 64 --steps 4 --iters 2 --explicit-halo --distributed")
  # Two threads per rank: the stealing engine, receives that wait for the
  # tasks before them (no deadlock with threads blocked in receives).
  rp_mpi_tests(own_threads2_ 60 TRUE
    "REPRISE_MPI_BACKEND=mpi;REPRISE_MPI_THREADS=2" "--bind-to;none"
    "heat2d_np2 2 mpi_heat2d --n 64 --steps 6 --iters 3 --devices-per-rank 2 --distributed"
    "jacobi2d_np2 2 mpi_jacobi2d --n 64 --steps 6 --every 3 --iters 3 --blocks-per-rank 3")
endif()
