# Installation: the libraries, the public headers, a CMake package
# (find_package(reprise)), a pkg-config file (reprise.pc), the manuals and
# the documentation. Included by the top CMakeLists.txt.
#
# The CMake package is split so that each target asks only for what it
# needs (docs/install.md):
#   repriseTargets.cmake             reprise::reprise, the shared library:
#                                    needs nothing (vendor backends are
#                                    plugins it loads at run time);
#   reprise_staticTargets.cmake      reprise::static (component "static"):
#                                    core and built-in backends, needs
#                                    Threads, OpenMP and cJSON;
#   reprise_static_<p>Targets.cmake  reprise::static_<p> (component
#                                    "static_<p>"): plugin backend <p> for
#                                    static programs, needs its vendor
#                                    libraries (CUDAToolkit for cuda).
include(CMakePackageConfigHelpers)

set(RP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/reprise)
install(TARGETS reprise EXPORT repriseTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS reprise_static EXPORT reprise_staticTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT repriseTargets NAMESPACE reprise:: DESTINATION ${RP_CMAKE_DIR})
install(EXPORT reprise_staticTargets NAMESPACE reprise::
        DESTINATION ${RP_CMAKE_DIR})

# Per component: the find_package calls its imported targets need, run by
# repriseConfig.cmake only when the component is asked for.
set(RP_STATIC_DEPS "Threads")
if(RP_OMP_ON)
  list(APPEND RP_STATIC_DEPS "OpenMP|COMPONENTS|C")
endif()
set(RP_CONFIG_COMPONENTS "static")
set(RP_CONFIG_DEPS "set(_reprise_deps_static \"${RP_STATIC_DEPS}\")\n")
foreach(p ${RP_PLUGINS})
  install(TARGETS reprise_static_${p} EXPORT reprise_static_${p}Targets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT reprise_static_${p}Targets NAMESPACE reprise::
          DESTINATION ${RP_CMAKE_DIR})
  set(deps "")
  if(p STREQUAL "cuda")
    set(deps "CUDAToolkit")
  endif()
  list(APPEND RP_CONFIG_COMPONENTS static_${p})
  string(APPEND RP_CONFIG_DEPS "set(_reprise_deps_static_${p} \"${deps}\")\n")
endforeach()
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
# lists what the static library libreprise.a needs (no vendor library: the
# vendor backends' archives are for CMake's reprise::static_<name>).
file(RELATIVE_PATH RP_PC_TO_PREFIX
     ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" RP_PC_TO_PREFIX "${RP_PC_TO_PREFIX}")
set(RP_PC_PRIVATE "")
foreach(l ${CJSON_LIBRARIES} ${CMAKE_DL_LIBS} m)
  if(IS_ABSOLUTE "${l}")
    get_filename_component(d ${l} DIRECTORY)
    get_filename_component(n ${l} NAME)
    string(REGEX REPLACE "^lib(.*)\\.(so(\\..*)?|a)$" "\\1" n ${n})
    if(NOT d MATCHES "^/usr/lib|^/lib")
      list(APPEND RP_PC_PRIVATE "-L${d}")
    endif()
    list(APPEND RP_PC_PRIVATE "-l${n}")
  else()
    list(APPEND RP_PC_PRIVATE "-l${l}")
  endif()
endforeach()
if(RP_OMP_ON)
  list(APPEND RP_PC_PRIVATE ${OpenMP_C_FLAGS})
endif()
list(APPEND RP_PC_PRIVATE -pthread)
list(REMOVE_DUPLICATES RP_PC_PRIVATE)
string(REPLACE ";" " " RP_PC_PRIVATE "${RP_PC_PRIVATE}")
# The run path is decided at install time, for the prefix actually used
# (cmake --install --prefix): programs built with `pkg-config --libs` start
# without LD_LIBRARY_PATH when the library is outside the loader's system
# folders. Placeholders @RP_PC_RPATH@ survive this first pass.
set(RP_PC_RPATH "@RP_PC_RPATH@")
configure_file(cmake/reprise.pc.in ${CMAKE_CURRENT_BINARY_DIR}/reprise.pc.in
               @ONLY)
install(CODE "
  set(RP_STEP pc)
  set(RP_BIN \"${CMAKE_CURRENT_BINARY_DIR}\")
  set(RP_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(RP_LIBARCH \"${CMAKE_LIBRARY_ARCHITECTURE}\")
  include(\"${CMAKE_CURRENT_LIST_DIR}/RepriseInstallStep.cmake\")")

# Manuals (tools/man: hand-written pages whose OPTIONS sections
# scripts/gen_man.sh keeps in step with the tool's help texts) and the
# documentation (docs/*.md) in ${docdir}, which the manuals name.
include(${CMAKE_CURRENT_LIST_DIR}/RepriseDocs.cmake)
