# Smoke tests of the CPU examples at small sizes: each replays with the
# reference and the default backend and exits 1 on any difference.
if(RP_BUILD_TESTS)
  enable_testing()
  set(rp_ex_smoke
    "jacobi2d --n 64 --steps 4 --every 2 --blocks 4 --iters 3"
    "jacobi2d --mixed --n 64 --steps 4 --every 2 --blocks 4 --iters 3"
    "matpow --n 48 --steps 4 --blocks 4 --iters 2"
    "recurrence --rows 64 --cols 64 --inner 5 --rounds 3 --blocks 8 --iters 2"
    "blackscholes --n 5000 --blocks 8 --iters 2"
    "gemm --n 64 --tile 16 --iters 2"
    "converge --n 24 --blocks 3 --tol 5"
    # The copies reshaped, on the reference backend (separate images):
    # recurrence's and gemm's copies in merge.
    "recurrence --reshape-copies --backend reference --rows 64 --cols 64 --inner 5 --rounds 3 --blocks 8 --iters 2"
    "gemm --reshape-copies --backend reference --n 64 --tile 16 --iters 2")
  foreach(cmd ${rp_ex_smoke})
    separate_arguments(args UNIX_COMMAND "${cmd}")
    list(GET args 0 prog)
    list(REMOVE_AT args 0)
    if(TARGET ${prog})
      # A second run of one program is named after its first switch
      # (example_jacobi2d_mixed for "jacobi2d --mixed ...").
      set(tname example_${prog})
      if(TEST ${tname})
        list(GET args 0 sw)
        string(REGEX REPLACE "^--" "_" sw "${sw}")
        set(tname ${tname}${sw})
      endif()
      add_test(NAME ${tname} COMMAND ${prog} ${args})
      # The model calibrates on first use: in the build tree, not $HOME.
      set_tests_properties(${tname} PROPERTIES TIMEOUT 120 ENVIRONMENT
                           "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache")
    endif()
  endforeach()
endif()
include(${CMAKE_CURRENT_LIST_DIR}/tests_multidev.cmake)
# Every example on every backend it lists (issue 27, item 10): each exits
# 0 only when the backend's replay equals the reference's byte for byte
# (and the plain C check), 1 on a difference, 2 on an error (a mode the
# backend refuses, say). xrt runs emulated (RP_XRT_EMULATE=1); cuda runs
# under gpu_gate, Skipped without a GPU. Sizes keep each under a second.
if(RP_BUILD_TESTS)
  set(rp_ex_matrix
    "jacobi2d --n 48 --steps 2 --every 2 --blocks 4 --iters 2"
    "matpow --n 32 --steps 2 --blocks 2 --iters 2"
    "recurrence --rows 32 --cols 32 --inner 3 --rounds 2 --blocks 4 --iters 2"
    "blackscholes --n 2000 --blocks 4 --iters 2"
    "gemm --n 32 --tile 16 --iters 2"
    "converge --n 16 --blocks 2 --tol 2"
    "heat2d --n 32 --steps 2 --devices 2 --iters 2"
    "matmul_rows --n 32 --devices 2 --iters 2"
    "twokernels --n 1024 --inner 5 --rounds 2 --iters 2")
  foreach(cmd ${rp_ex_matrix})
    separate_arguments(args UNIX_COMMAND "${cmd}")
    list(GET args 0 prog)
    list(REMOVE_AT args 0)
    if(NOT TARGET ${prog})
      continue()
    endif()
    foreach(be ${RP_BACKENDS_BUILT})
      set(tname example_${prog}_on_${be})
      if(be STREQUAL "cuda")
        add_test(NAME ${tname} COMMAND $<TARGET_FILE:gpu_gate>
                 $<TARGET_FILE:${prog}> ${args} --backend ${be})
        set_tests_properties(${tname} PROPERTIES SKIP_RETURN_CODE 77)
      elseif(be STREQUAL "mpi")
        # The mpi backend runs only under an MPI launcher: one rank here
        # (several ranks: examples/mpi.cmake's mpi_own_* tests).
        find_program(RP_MPIRUN NAMES mpirun mpiexec)
        if(NOT RP_MPIRUN)
          continue()
        endif()
        add_test(NAME ${tname}
                 COMMAND ${RP_MPIRUN} --oversubscribe --allow-run-as-root
                         -np 1 $<TARGET_FILE:${prog}> ${args} --backend ${be})
      else()
        add_test(NAME ${tname} COMMAND ${prog} ${args} --backend ${be})
      endif()
      set(_ex_env "RP_XRT_EMULATE=1")
      if(be STREQUAL "mpi")
        list(APPEND _ex_env "OMPI_MCA_mpi_yield_when_idle=1")
        if(RP_SANITIZE) # Open MPI's plugins' allocations (examples/mpi.cmake)
          list(APPEND _ex_env "ASAN_OPTIONS=detect_leaks=0")
        endif()
      endif()
      set_tests_properties(${tname} PROPERTIES TIMEOUT 60
                           ENVIRONMENT "${_ex_env}")
    endforeach()
  endforeach()
endif()
