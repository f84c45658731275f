# starpu backend tests: the test reads the backend's figures
# (backends/starpu/rp_starpu.h); StarPU starts with two CPU workers and no
# banner.
if(TARGET test_starpu)
  target_include_directories(test_starpu PRIVATE
    ${CMAKE_SOURCE_DIR}/backends/starpu)
  set_property(TEST test_starpu APPEND PROPERTY ENVIRONMENT
    "STARPU_NCPU=2;STARPU_SILENT=1")
endif()
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
