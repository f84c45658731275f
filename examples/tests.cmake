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
