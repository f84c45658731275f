# CUDA backend tests: test-only kernels built by nvcc, linked into
# test_cuda (included by tests/CMakeLists.txt when the backend is built).
if(TARGET test_cuda)
  add_library(rp_test_cuda_kernels STATIC
              ${CMAKE_CURRENT_SOURCE_DIR}/backends/cuda_kernels.cu)
  target_link_libraries(rp_test_cuda_kernels PUBLIC reprise_static)
  target_include_directories(rp_test_cuda_kernels PUBLIC
                             ${CMAKE_CURRENT_SOURCE_DIR}/backends)
  target_link_libraries(test_cuda PRIVATE rp_test_cuda_kernels CUDA::cudart)
  # the launch geometry test computes the expected choice itself
  target_sources(test_cuda PRIVATE
                 ${CMAKE_SOURCE_DIR}/backends/cuda/rp_cuda_geom.c)
  target_include_directories(test_cuda PRIVATE
                             ${CMAKE_SOURCE_DIR}/backends/cuda)
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
# The launch geometry's pure part (no GPU): runs everywhere CUDA builds.
add_executable(geom_cuda ${CMAKE_CURRENT_SOURCE_DIR}/backends/geom_cuda.c
               ${CMAKE_SOURCE_DIR}/backends/cuda/rp_cuda_geom.c)
target_include_directories(geom_cuda PRIVATE ${CRITERION_INCLUDE_DIRS}
                           ${CMAKE_SOURCE_DIR}/backends/cuda)
target_compile_options(geom_cuda PRIVATE ${RP_WARN})
target_link_libraries(geom_cuda PRIVATE reprise_static ${CRITERION_LIBRARIES})
add_test(NAME geom_cuda COMMAND geom_cuda --jobs 2)
# The backend's logic without a GPU: backends/cuda's sources against a
# fake CUDA runtime that runs graphs on the host (fake_cudart.c); runs
# everywhere the backend builds. Its own definitions of the runtime's
# calls are the ones the backend's objects here use.
add_executable(cuda_logic ${CMAKE_CURRENT_SOURCE_DIR}/backends/cuda_logic.c
  ${CMAKE_CURRENT_SOURCE_DIR}/backends/cuda_import_logic.c
  ${CMAKE_CURRENT_SOURCE_DIR}/backends/cuda_pack_logic.c
  ${CMAKE_CURRENT_SOURCE_DIR}/backends/cuda_box_logic.c
  ${CMAKE_CURRENT_SOURCE_DIR}/backends/fake_cudart.c
  ${CMAKE_CURRENT_SOURCE_DIR}/util.c
  ${CMAKE_SOURCE_DIR}/backends/cuda/rp_cuda.c
  ${CMAKE_SOURCE_DIR}/backends/cuda/rp_cuda_geom.c
  ${CMAKE_SOURCE_DIR}/backends/cuda/rp_cuda_update.c
  ${CMAKE_SOURCE_DIR}/backends/cuda/rp_cuda_streams.c
  ${CMAKE_SOURCE_DIR}/backends/cuda/rp_cuda_until.c
  ${CMAKE_SOURCE_DIR}/backends/cuda/rp_cuda_import.c
  ${CMAKE_SOURCE_DIR}/backends/cuda/rp_cuda_pack.c)
target_include_directories(cuda_logic PRIVATE ${CRITERION_INCLUDE_DIRS}
  ${CUDAToolkit_INCLUDE_DIRS} ${CMAKE_SOURCE_DIR}/backends/cuda
  ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/backends
  ${CMAKE_SOURCE_DIR}/src)
target_compile_definitions(cuda_logic PRIVATE _GNU_SOURCE
  RP_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data"
  RP_TEST_TOOL="$<TARGET_FILE:reprise_cli>")
target_compile_options(cuda_logic PRIVATE ${RP_WARN})
target_link_libraries(cuda_logic PRIVATE reprise_static
                      ${CRITERION_LIBRARIES})
add_test(NAME cuda_logic COMMAND cuda_logic --jobs 2)
set_tests_properties(cuda_logic PROPERTIES TIMEOUT ${RP_TEST_TIMEOUT})
if(RP_SANITIZE)
  set_property(TEST cuda_logic APPEND PROPERTY ENVIRONMENT
    "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan.supp")
endif()
