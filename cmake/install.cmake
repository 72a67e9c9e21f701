# Installing rivetkit-cpp (cmake --install <build> --prefix <dir>):
#   lib/librivetkit.a                        every module in one static library
#   include/rivetkit/...                     the public headers
#   lib/cmake/rivetkit/rivetkitConfig.cmake  find_package(rivetkit): target rivetkit::rivetkit
#   lib/pkgconfig/rivetkit.pc                pkg-config --cflags --libs rivetkit
#
# Inside the tree the library is ten module libraries (cmake/modules.cmake) so that each keeps
# its own dependencies; a consumer gets one archive and one target instead. The archive reuses
# the modules' object files (nothing is compiled twice). Its interface carries what a consumer's
# translation units must agree on: C++20, the Asio/Beast separate-compilation definitions, the
# include directory and the libraries the code calls into.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_rivetkit_modules util protocol storage sql net core local engine serverless registry)
set(_rivetkit_objects "")
foreach(_module ${_rivetkit_modules})
  list(APPEND _rivetkit_objects $<TARGET_OBJECTS:rivetkit_${_module}>)
endforeach()

add_library(rivetkit_bundle STATIC ${_rivetkit_objects})
set_target_properties(rivetkit_bundle PROPERTIES OUTPUT_NAME rivetkit EXPORT_NAME rivetkit
                                                 LINKER_LANGUAGE CXX)
target_include_directories(rivetkit_bundle INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(rivetkit_bundle INTERFACE cxx_std_20)
target_compile_definitions(rivetkit_bundle INTERFACE ${RIVETKIT_PUBLIC_DEFINITIONS})
target_link_libraries(rivetkit_bundle INTERFACE Boost::headers Threads::Threads spdlog::spdlog
                                                tl::expected SQLite::SQLite3)

install(TARGETS rivetkit_bundle EXPORT rivetkitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/rivetkit
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(_rivetkit_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/rivetkit)
install(EXPORT rivetkitTargets NAMESPACE rivetkit:: DESTINATION ${_rivetkit_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/rivetkitConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/rivetkitConfig.cmake
                              INSTALL_DESTINATION ${_rivetkit_cmake_dir})
# 0.x: a minor version may change the API, so only the same minor version satisfies a request.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rivetkitConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rivetkitConfig.cmake
              ${PROJECT_BINARY_DIR}/rivetkitConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/rivetkit_types.cmake
        DESTINATION ${_rivetkit_cmake_dir})

# pkg-config: the prefix is found from the .pc file's own place (${pcfiledir}), so it is right
# for `cmake --install --prefix <any>` and an installed tree can move.
file(RELATIVE_PATH _rivetkit_pc_to_prefix "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" _rivetkit_pc_to_prefix "${_rivetkit_pc_to_prefix}")
string(REPLACE ";" " -D" _rivetkit_pc_definitions "-D${RIVETKIT_PUBLIC_DEFINITIONS}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/rivetkit.pc.in ${PROJECT_BINARY_DIR}/rivetkit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/rivetkit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
