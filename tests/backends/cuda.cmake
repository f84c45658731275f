# CUDA backend tests: test-only kernels built by nvcc, linked into
# test_cuda (included by tests/CMakeLists.txt when the backend is built).
if(TARGET test_cuda)
  add_library(rp_test_cuda_kernels STATIC
              ${CMAKE_CURRENT_SOURCE_DIR}/backends/cuda_kernels.cu)
  target_link_libraries(rp_test_cuda_kernels PUBLIC reprise_static)
  target_include_directories(rp_test_cuda_kernels PUBLIC
                             ${CMAKE_CURRENT_SOURCE_DIR}/backends)
  target_link_libraries(test_cuda PRIVATE rp_test_cuda_kernels CUDA::cudart)
endif()
if(TARGET test_cuda_mixed)
  target_link_libraries(test_cuda_mixed PRIVATE rp_test_cuda_kernels
                        CUDA::cudart)
endif()
