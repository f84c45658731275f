# The prediction suite: its workloads (predict_workloads.c) are a library
# of their own, built as CUDA where the toolkit is, so that the generic
# kernels run on a GPU too (bench_predict --backend cuda).
if(TARGET bench_predict)
  add_library(rp_predict_workloads STATIC
              ${CMAKE_CURRENT_SOURCE_DIR}/predict_workloads.c
              ${CMAKE_CURRENT_SOURCE_DIR}/predict_check_workloads.c)
  if(RP_HAVE_CUDA)
    set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/predict_workloads.c
                                ${CMAKE_CURRENT_SOURCE_DIR}/predict_check_workloads.c
                                PROPERTIES LANGUAGE CUDA)
    # Exact against the reference (bench_predict compares every buffer
    # byte for byte): no fused multiply-adds the CPU build does not make,
    # as the examples' kernels (on the H200, cholesky and lu differed
    # from the reference without it).
    target_compile_options(rp_predict_workloads PRIVATE
                           $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false>)
  else()
    target_compile_options(rp_predict_workloads PRIVATE ${RP_WARN})
  endif()
  target_link_libraries(rp_predict_workloads PUBLIC reprise_static m)
  target_link_libraries(bench_predict PRIVATE rp_predict_workloads)
endif()
