# Install layout beyond the per-component install(TARGETS) rules: RPATHs so
# the installed tools run from the install tree, a CMake package config
# (find_package(Tremor)) and a pkg-config file (tremor.pc). Included at the
# end of the top-level CMakeLists.txt, once every component target exists.
include(CMakePackageConfigHelpers)

# Keep the non-system link directories (e.g. HDF5's) and the install lib dir.
file(RELATIVE_PATH _tremor_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
foreach(_target tremor tremor_preload tremor_inject)
  if(TARGET ${_target})
    set_target_properties(${_target} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  endif()
endforeach()
if(TARGET tremor)
  set_property(TARGET tremor APPEND PROPERTY INSTALL_RPATH "$ORIGIN/${_tremor_bin_to_lib}")
endif()

set(TREMOR_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Tremor)
set(TREMOR_PRELOAD_NAME ${CMAKE_SHARED_LIBRARY_PREFIX}tremor-${TREMOR_MPI_FLAVOUR}${CMAKE_SHARED_LIBRARY_SUFFIX})
set(TREMOR_INJECT_NAME ${CMAKE_SHARED_LIBRARY_PREFIX}tremor-inject-${TREMOR_MPI_FLAVOUR}${CMAKE_SHARED_LIBRARY_SUFFIX})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/TremorConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/TremorConfig.cmake
  INSTALL_DESTINATION ${TREMOR_CMAKE_INSTALL_DIR}
  PATH_VARS CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/TremorConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/TremorConfig.cmake ${CMAKE_BINARY_DIR}/cmake/TremorConfigVersion.cmake
        DESTINATION ${TREMOR_CMAKE_INSTALL_DIR})

# tremor.pc finds its prefix from its own location, so --prefix moves it too.
set(TREMOR_PKGCONFIG_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH TREMOR_PKGCONFIG_TO_PREFIX ${CMAKE_INSTALL_PREFIX}/${TREMOR_PKGCONFIG_INSTALL_DIR} ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" TREMOR_PKGCONFIG_TO_PREFIX "${TREMOR_PKGCONFIG_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/tremor.pc.in ${CMAKE_BINARY_DIR}/cmake/tremor.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/tremor.pc DESTINATION ${TREMOR_PKGCONFIG_INSTALL_DIR})
