# cmake --install puts headers, the module libraries and a package config in place, so a game
# project writes find_package(handoff) and links handoff::handoff (see examples/consumer).
include(CMakePackageConfigHelpers)

install(DIRECTORY include/handoff DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS handoff ${HANDOFF_MODULES} EXPORT handoffTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT handoffTargets NAMESPACE handoff:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/handoff)

configure_package_config_file(cmake/handoffConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/handoffConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/handoff)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/handoffConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/handoffConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/handoffConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/handoff)

# The program the importer reads files with (src/rig/assimp_read.h), where the library looks for it.
install(TARGETS handoff_import_worker RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/handoff)
