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
# gpu_gate: runs the GPU tests only where a device is usable, else exit 77
# (SKIP_RETURN_CODE: ctest says Skipped).
add_executable(gpu_gate ${CMAKE_CURRENT_SOURCE_DIR}/backends/gpu_gate.c)
target_compile_definitions(gpu_gate PRIVATE _GNU_SOURCE)
target_compile_options(gpu_gate PRIVATE ${RP_WARN})
target_link_libraries(gpu_gate PRIVATE reprise_static)
