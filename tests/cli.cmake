# The manual pages (tools/man) are written by hand around option lists
# that scripts/gen_man.sh generates from the tool's help texts: they must
# be current, complete (a page per command, its sections, an EXIT STATUS
# entry per code the help names) and render without groff warnings.
add_test(NAME man_page_current
  COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/gen_man.sh --check
          $<TARGET_FILE:reprise_cli> ${CMAKE_SOURCE_DIR}/tools/man)
# `reprise run --kernels`: the examples' kernel libraries (test_cli).
if(TARGET test_cli AND TARGET jacobi2d_kernels AND TARGET matpow_kernels)
  target_compile_definitions(test_cli PRIVATE
    RP_TEST_KLIB_JACOBI="$<TARGET_FILE:jacobi2d_kernels>"
    RP_TEST_KLIB_MATPOW="$<TARGET_FILE:matpow_kernels>")
  add_dependencies(test_cli jacobi2d_kernels matpow_kernels)
endif()
# A kernel library by a bare file name (test_misuse_fixes).
if(TARGET test_misuse_fixes AND TARGET matpow_kernels)
  target_compile_definitions(test_misuse_fixes PRIVATE
    RP_TEST_KLIB_MATPOW="$<TARGET_FILE:matpow_kernels>")
  add_dependencies(test_misuse_fixes matpow_kernels)
endif()
