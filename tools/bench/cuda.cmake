# CUDA benchmark: its kernels are built by nvcc; bench_cuda links them and
# the CUDA runtime. Without the CUDA backend bench_cuda is not built.
if(TARGET bench_cuda)
  if("cuda" IN_LIST RP_BACKENDS_BUILT)
    add_library(rp_bench_cuda_kernels STATIC
                ${CMAKE_CURRENT_SOURCE_DIR}/bench_cuda_kernels.cu)
    target_link_libraries(rp_bench_cuda_kernels PUBLIC reprise_static)
    target_link_libraries(bench_cuda PRIVATE rp_bench_cuda_kernels
                          CUDA::cudart)
    # The device loop case runs examples/converge's graph.
    if(TARGET rp_examples)
      target_link_libraries(bench_cuda PRIVATE rp_examples)
      target_compile_definitions(bench_cuda PRIVATE RP_BENCH_EXAMPLES=1)
    endif()
  else()
    set_target_properties(bench_cuda PROPERTIES EXCLUDE_FROM_ALL ON)
  endif()
endif()
# The seed examples against the same kernels launched by hand.
if("cuda" IN_LIST RP_BACKENDS_BUILT AND TARGET rp_examples)
  add_executable(bench_cuda_examples
                 ${CMAKE_CURRENT_SOURCE_DIR}/bench_cuda_examples.cu)
  target_link_libraries(bench_cuda_examples PRIVATE rp_examples
                        reprise_static CUDA::cudart)
endif()
# (g) a captured CUDA graph imported (rp_cuda_graph_import) against the
# capture itself: the tiny kernel, the importer's header.
if(TARGET bench_cuda_import)
  if("cuda" IN_LIST RP_BACKENDS_BUILT)
    target_link_libraries(bench_cuda_import PRIVATE rp_bench_cuda_kernels
                          CUDA::cudart)
    target_include_directories(bench_cuda_import PRIVATE
                               ${CMAKE_SOURCE_DIR}/backends/cuda)
  else()
    set_target_properties(bench_cuda_import PROPERTIES EXCLUDE_FROM_ALL ON)
  endif()
endif()
