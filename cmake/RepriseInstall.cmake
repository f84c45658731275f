# Installation: the libraries, the public headers, a CMake package
# (find_package(reprise): targets reprise::reprise and reprise::static) and
# a pkg-config file (reprise.pc). Included by the top CMakeLists.txt.
include(CMakePackageConfigHelpers)

set(RP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/reprise)
install(TARGETS reprise reprise_static EXPORT repriseTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT repriseTargets NAMESPACE reprise::
        DESTINATION ${RP_CMAKE_DIR})

# What the static library's private dependencies need in the consumer.
set(RP_CONFIG_DEPS "find_dependency(Threads)\n")
if(RP_OMP_ON)
  string(APPEND RP_CONFIG_DEPS "find_dependency(OpenMP COMPONENTS C)\n")
endif()
if("cuda" IN_LIST RP_PLUGINS)
  string(APPEND RP_CONFIG_DEPS "find_dependency(CUDAToolkit)\n")
endif()
configure_package_config_file(cmake/repriseConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/repriseConfig.cmake
  INSTALL_DESTINATION ${RP_CMAKE_DIR})
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/repriseConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/repriseConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/repriseConfigVersion.cmake
        DESTINATION ${RP_CMAKE_DIR})

# pkg-config: relocatable (prefix from the file's own folder). Libs.private
# lists what the static library needs.
file(RELATIVE_PATH RP_PC_TO_PREFIX
     ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" RP_PC_TO_PREFIX "${RP_PC_TO_PREFIX}")
set(RP_PC_PRIVATE "")
foreach(l ${CJSON_LIBRARIES} ${RP_STATIC_PLUGIN_LIBS} ${CMAKE_DL_LIBS} m)
  if(l MATCHES "^CUDA::(.*)")       # FindCUDAToolkit's CUDA_<lib>_LIBRARY
    get_filename_component(d "${CUDA_${CMAKE_MATCH_1}_LIBRARY}" DIRECTORY)
    list(APPEND RP_PC_PRIVATE "-L${d}" "-l${CMAKE_MATCH_1}")
  elseif(IS_ABSOLUTE "${l}")
    get_filename_component(d ${l} DIRECTORY)
    get_filename_component(n ${l} NAME)
    # libstarpu-1.3.so -> starpu-1.3 (NAME_WE would cut at the first dot)
    string(REGEX REPLACE "^lib(.*)\\.(so(\\..*)?|a)$" "\\1" n ${n})
    if(NOT d MATCHES "^/usr/lib|^/lib")
      list(APPEND RP_PC_PRIVATE "-L${d}")
    endif()
    list(APPEND RP_PC_PRIVATE "-l${n}")
  elseif(NOT l MATCHES "::")
    list(APPEND RP_PC_PRIVATE "-l${l}")
  endif()
endforeach()
if(RP_OMP_ON)
  list(APPEND RP_PC_PRIVATE ${OpenMP_C_FLAGS})
endif()
list(APPEND RP_PC_PRIVATE -pthread)
list(REMOVE_DUPLICATES RP_PC_PRIVATE)
string(REPLACE ";" " " RP_PC_PRIVATE "${RP_PC_PRIVATE}")
configure_file(cmake/reprise.pc.in ${CMAKE_CURRENT_BINARY_DIR}/reprise.pc
               @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/reprise.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
