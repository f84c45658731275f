# Finds Criterion (Debian: libcriterion-dev): CRITERION_INCLUDE_DIRS,
# CRITERION_LIBRARIES.
find_path(CRITERION_INCLUDE_DIR criterion/criterion.h)
find_library(CRITERION_LIBRARY NAMES criterion)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Criterion DEFAULT_MSG CRITERION_LIBRARY
                                  CRITERION_INCLUDE_DIR)
set(CRITERION_INCLUDE_DIRS ${CRITERION_INCLUDE_DIR})
set(CRITERION_LIBRARIES ${CRITERION_LIBRARY})
