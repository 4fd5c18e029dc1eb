# cmake --install: library (static + shared), public headers, ringflow.pc and a CMake package
# config, so both `pkg-config --cflags --libs ringflow` and `find_package(ringflow)` work.
# Exported: ringflow::ringflow (shared) and ringflow::ringflow_static; nothing internal (the
# warnings target ringflow_flags is build-only).
include(CMakePackageConfigHelpers)

install(TARGETS ringflow_static ringflow_shared EXPORT ringflowTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/ringflow DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT ringflowTargets NAMESPACE ringflow:: FILE ringflowTargets.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringflow)
configure_package_config_file(cmake/ringflowConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/ringflowConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringflow)
# SameMajorVersion: the major version is the SOVERSION, and within one SOVERSION the ABI only
# grows (docs/abi.md), so any 1.y satisfies a request for 1.x with x <= y.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ringflowConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ringflowConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/ringflowConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringflow)

configure_file(cmake/ringflow.pc.in ${CMAKE_CURRENT_BINARY_DIR}/ringflow.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ringflow.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
