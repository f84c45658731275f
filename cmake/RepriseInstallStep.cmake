# Run by `cmake --install` (install(CODE) in RepriseInstall.cmake and
# RepriseDocs.cmake), when the prefix is known: writes the files whose text
# depends on it. Input variables:
#   RP_STEP        "pc" or "man"
#   RP_BIN         the build folder
#   RP_LIBDIR, RP_MANDIR, RP_DOCDIR   install folders (relative: to the
#                  prefix)
#   RP_LIBARCH     CMAKE_LIBRARY_ARCHITECTURE (x86_64-linux-gnu)
#   RP_MAN_PAGES   the manual pages (step "man")
# CMAKE_INSTALL_PREFIX is the prefix installed to; file(INSTALL) adds
# DESTDIR.
function(rp_full var dir)
  if(IS_ABSOLUTE "${dir}")
    set(${var} "${dir}" PARENT_SCOPE)
  else()
    set(${var} "${CMAKE_INSTALL_PREFIX}/${dir}" PARENT_SCOPE)
  endif()
endfunction()

rp_full(libdir "${RP_LIBDIR}")
if(RP_STEP STREQUAL "pc")
  # reprise.pc: a run path for programs linked with `pkg-config --libs`
  # unless the library is in a folder the loader searches anyway.
  set(RP_PC_RPATH " -Wl,-rpath,\${libdir}")
  foreach(d /lib /lib64 /usr/lib /usr/lib64 /lib/${RP_LIBARCH}
            /usr/lib/${RP_LIBARCH})
    if(libdir STREQUAL d)
      set(RP_PC_RPATH "")
    endif()
  endforeach()
  configure_file("${RP_BIN}/reprise.pc.in" "${RP_BIN}/install/reprise.pc"
                 @ONLY)
  file(INSTALL "${RP_BIN}/install/reprise.pc"
       DESTINATION "${libdir}/pkgconfig")
elseif(RP_STEP STREQUAL "man")
  # The manual pages, with the documentation folder in their string Rd.
  rp_full(docdir "${RP_DOCDIR}")
  rp_full(mandir "${RP_MANDIR}")
  foreach(p ${RP_MAN_PAGES})
    get_filename_component(n "${p}" NAME)
    string(REGEX REPLACE ".*\\." "" section "${n}")
    file(READ "${p}" text)
    string(REGEX REPLACE "\n\\.ds Rd [^\n]*" "\n.ds Rd ${docdir}" text
           "${text}")
    file(WRITE "${RP_BIN}/install/${n}" "${text}")
    file(INSTALL "${RP_BIN}/install/${n}" DESTINATION "${mandir}/man${section}")
  endforeach()
endif()
