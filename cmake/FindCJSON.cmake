# Finds cJSON (Debian: libcjson-dev): CJSON_INCLUDE_DIRS, CJSON_LIBRARIES.
find_path(CJSON_INCLUDE_DIR cjson/cJSON.h)
find_library(CJSON_LIBRARY NAMES cjson)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CJSON DEFAULT_MSG CJSON_LIBRARY CJSON_INCLUDE_DIR)
set(CJSON_INCLUDE_DIRS ${CJSON_INCLUDE_DIR})
set(CJSON_LIBRARIES ${CJSON_LIBRARY})
