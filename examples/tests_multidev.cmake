# Smoke tests of the several-device examples (issue 7) at small sizes: each
# replays with the reference and the default backend (logical devices on
# core groups, or all on GPU 0) and exits 1 on any difference.
if(RP_BUILD_TESTS)
  set(rp_md_smoke
    "heat2d_auto heat2d --n 64 --steps 4 --devices 2 --iters 3"
    "heat2d_4dev heat2d --n 61 --steps 5 --devices 4 --iters 2"
    "heat2d_explicit heat2d --n 64 --steps 4 --devices 3 --explicit-halo
     --iters 2"
    "heat2d_scaling heat2d --n 96 --steps 4 --devices 2 --scaling --iters 2"
    "matmul_rows matmul_rows --n 48 --devices 3 --iters 2"
    "twokernels twokernels --n 4096 --inner 20 --rounds 2 --iters 2")
  foreach(cmd ${rp_md_smoke})
    separate_arguments(args UNIX_COMMAND "${cmd}")
    list(GET args 0 name)
    list(GET args 1 prog)
    list(REMOVE_AT args 0 1)
    if(TARGET ${prog})
      add_test(NAME example_${name} COMMAND ${prog} ${args})
      set_tests_properties(example_${name} PROPERTIES TIMEOUT 120 ENVIRONMENT
                           "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache")
    endif()
  endforeach()
endif()
