# Peers of the CPU benchmarks (tools/bench/peer.h), each built when found:
# oneTBB's flow graph (C++: the language is enabled here only, when TBB
# is found), the anchors' lean C engine (RP_ANCHORS_CPU: a copy of
# ../shared/anchors/cpu; default .anchors/cpu in the source tree, which
# git ignores) and OpenBLAS for bench_cholesky's tiles.
set(rp_peer_users bench_omp bench_cholesky)
find_package(OpenMP COMPONENTS C QUIET)
if(TARGET bench_cholesky)
  if(OpenMP_C_FOUND)
    target_link_libraries(bench_cholesky PRIVATE OpenMP::OpenMP_C)
  else()
    set_target_properties(bench_cholesky PROPERTIES EXCLUDE_FROM_ALL TRUE)
  endif()
endif()
find_package(TBB CONFIG QUIET)
if(TBB_FOUND)
  include(CheckLanguage)
  check_language(CXX)
  if(CMAKE_CXX_COMPILER)
    enable_language(CXX)
    add_library(rp_bench_tbb STATIC peer_tbb.cpp)
    target_compile_features(rp_bench_tbb PRIVATE cxx_std_11)
    target_include_directories(rp_bench_tbb PRIVATE ${CMAKE_SOURCE_DIR}/include)
    target_link_libraries(rp_bench_tbb PUBLIC TBB::tbb)
    foreach(t ${rp_peer_users})
      if(TARGET ${t})
        target_link_libraries(${t} PRIVATE rp_bench_tbb)
        target_compile_definitions(${t} PRIVATE RP_HAVE_TBB=1)
      endif()
    endforeach()
    message(STATUS "bench: oneTBB flow graph peer ${TBB_VERSION}")
  endif()
endif()

set(RP_ANCHORS_CPU ${CMAKE_SOURCE_DIR}/.anchors/cpu CACHE PATH
    "A copy of ../shared/anchors/cpu (the lean C engine peer of bench_omp)")
if(EXISTS ${RP_ANCHORS_CPU}/dag_replay.c AND TARGET bench_omp AND
   OpenMP_C_FOUND)
  add_library(rp_bench_lean STATIC peer_lean.c ${RP_ANCHORS_CPU}/dag_replay.c)
  target_include_directories(rp_bench_lean PRIVATE ${RP_ANCHORS_CPU}
                             ${CMAKE_SOURCE_DIR}/include)
  target_link_libraries(rp_bench_lean PUBLIC OpenMP::OpenMP_C)
  target_link_libraries(bench_omp PRIVATE rp_bench_lean)
  target_compile_definitions(bench_omp PRIVATE RP_HAVE_LEAN=1)
  message(STATUS "bench: lean engine peer from ${RP_ANCHORS_CPU}")
endif()

if(TARGET bench_cholesky)
  find_path(RP_CBLAS_INCLUDE cblas.h
            PATH_SUFFIXES x86_64-linux-gnu/openblas-pthread openblas)
  find_library(RP_OPENBLAS_LIB NAMES openblas
               PATH_SUFFIXES openblas-pthread)
  if(RP_CBLAS_INCLUDE AND RP_OPENBLAS_LIB)
    target_include_directories(bench_cholesky PRIVATE ${RP_CBLAS_INCLUDE})
    target_link_libraries(bench_cholesky PRIVATE ${RP_OPENBLAS_LIB})
    target_compile_definitions(bench_cholesky PRIVATE RP_HAVE_CBLAS=1)
    message(STATUS "bench: Cholesky tiles by ${RP_OPENBLAS_LIB}")
  endif()
endif()
