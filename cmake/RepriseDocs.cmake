# The manuals and the documentation, installed (included by
# RepriseInstall.cmake):
#   tools/man/*.1, *.3, *.7  -> ${mandir}/man1, man3, man7
#   docs/*.md, README.md, CHANGELOG.md, LICENSE -> ${docdir}
#                               (share/doc/reprise)
# The pages name the documentation folder through the roff string Rd
# (`.ds Rd PATH`); the install step writes the folder of the prefix
# actually installed to (cmake --install --prefix) into it.
file(GLOB RP_MAN_PAGES CONFIGURE_DEPENDS
     ${CMAKE_CURRENT_SOURCE_DIR}/tools/man/*.[137])
file(GLOB RP_DOC_FILES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/docs/*.md)
install(FILES ${RP_DOC_FILES} ${CMAKE_CURRENT_SOURCE_DIR}/README.md
              ${CMAKE_CURRENT_SOURCE_DIR}/CHANGELOG.md
              ${CMAKE_CURRENT_SOURCE_DIR}/LICENSE
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(CODE "
  set(RP_STEP man)
  set(RP_BIN \"${CMAKE_CURRENT_BINARY_DIR}\")
  set(RP_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(RP_MANDIR \"${CMAKE_INSTALL_MANDIR}\")
  set(RP_DOCDIR \"${CMAKE_INSTALL_DOCDIR}\")
  set(RP_MAN_PAGES \"${RP_MAN_PAGES}\")
  include(\"${CMAKE_CURRENT_LIST_DIR}/RepriseInstallStep.cmake\")")
