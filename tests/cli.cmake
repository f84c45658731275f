# The man page tools/reprise.1 is the output of scripts/gen_man.sh over the
# tool's help texts: regenerate it when a help text changes.
add_test(NAME man_page_current
  COMMAND sh -c "sh '${CMAKE_SOURCE_DIR}/scripts/gen_man.sh' '$<TARGET_FILE:reprise_cli>' > man.1 && diff -u '${CMAKE_SOURCE_DIR}/tools/reprise.1' man.1 || { echo 'tools/reprise.1 is stale: run scripts/gen_man.sh build/tools/reprise > tools/reprise.1'; exit 1; }")
# `reprise run --kernels`: the examples' kernel libraries (test_cli).
if(TARGET test_cli AND TARGET jacobi2d_kernels AND TARGET matpow_kernels)
  target_compile_definitions(test_cli PRIVATE
    RP_TEST_KLIB_JACOBI="$<TARGET_FILE:jacobi2d_kernels>"
    RP_TEST_KLIB_MATPOW="$<TARGET_FILE:matpow_kernels>")
  add_dependencies(test_cli jacobi2d_kernels matpow_kernels)
endif()
