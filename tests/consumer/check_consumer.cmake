# Builds tests/consumer/app the three ways a user consumes rivetkit-cpp, from outside the tree:
#   1. cmake --install, then find_package(rivetkit) + rivetkit::rivetkit     -> WORK/find_package
#      (and the package's rivetkit_emit_types helper)
#   2. the same install, compiled with `pkg-config --cflags --libs rivetkit`  -> WORK/pkg-config
#   3. add_subdirectory of the source tree in a Release build: configured, the subproject
#      defaults checked (no tests, benchmarks or examples; warnings not errors), and the
#      consumer's object and one -O3 library object compiled (not linked: that would compile
#      the whole library a second time)
# In 1 to 3 the consumer's own translation unit must get the Asio/Beast separate-compilation
# definitions from the target: without them it would instantiate Asio header-only next to the
# library's compiled Asio (an ODR violation). tests/js/consumer then runs binaries 1 and 2
# against the official client.
#
#   cmake -DSOURCE_DIR=<repo> -DBUILD_DIR=<build> -DWORK=<dir> -DCXX=<g++> -DGENERATOR=<gen>
#         -P check_consumer.cmake
foreach(_var SOURCE_DIR BUILD_DIR WORK CXX GENERATOR)
  if("${${_var}}" STREQUAL "")
    message(FATAL_ERROR "check_consumer.cmake: -D${_var}=... is required")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${_rc}):\n  ${ARGN}\n${_out}")
  endif()
  set(LAST_OUTPUT "${_out}" PARENT_SCOPE)
endfunction()

# The consumer's compile command must carry every definition the library was built with.
function(expect_definitions what text)
  foreach(_def BOOST_ASIO_SEPARATE_COMPILATION BOOST_BEAST_SEPARATE_COMPILATION)
    if(NOT text MATCHES "-D${_def}")
      message(FATAL_ERROR "${what}: the consumer's compile command lacks -D${_def}:\n${text}")
    endif()
  endforeach()
endfunction()

file(REMOVE_RECURSE ${WORK})
set(_prefix ${WORK}/prefix)
set(_app ${SOURCE_DIR}/tests/consumer/app)

# 1. Install, then find_package.
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${_prefix})
foreach(_file include/rivetkit/rivetkit.hpp lib/librivetkit.a lib/cmake/rivetkit/rivetkitConfig.cmake
              lib/pkgconfig/rivetkit.pc)
  if(NOT EXISTS ${_prefix}/${_file})
    message(FATAL_ERROR "cmake --install did not install ${_file}")
  endif()
endforeach()
# Only the public API: include/rivetkit and nothing of src/.
file(GLOB _installed_includes LIST_DIRECTORIES true ${_prefix}/include/*)
if(NOT _installed_includes STREQUAL "${_prefix}/include/rivetkit")
  message(FATAL_ERROR "include/ holds more than rivetkit/: ${_installed_includes}")
endif()
run("configure (find_package)" ${CMAKE_COMMAND} -S ${_app} -B ${WORK}/find_package -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${_prefix}
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
run("build (find_package)" ${CMAKE_COMMAND} --build ${WORK}/find_package)
file(STRINGS ${WORK}/find_package/guestbook.d.ts _types REGEX "^export interface GuestbookActor ")
if(NOT _types)
  message(FATAL_ERROR "rivetkit_emit_types did not write guestbook.d.ts with GuestbookActor")
endif()
file(READ ${WORK}/find_package/compile_commands.json _commands)
expect_definitions("find_package" "${_commands}")

# 2. pkg-config, as a Makefile would: g++ -std=c++20 app.cpp $(pkg-config --cflags --libs rivetkit)
find_program(_pkg_config pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${_prefix}/lib/pkgconfig)
run("pkg-config" ${_pkg_config} --cflags --libs rivetkit)
string(STRIP "${LAST_OUTPUT}" _pc_flags)
expect_definitions("pkg-config" "${_pc_flags}")
separate_arguments(_pc_flags UNIX_COMMAND "${_pc_flags}")
file(MAKE_DIRECTORY ${WORK}/pkg-config)
run("build (pkg-config)" ${CXX} -std=c++20 -O2 ${_app}/guestbook.cpp -o ${WORK}/pkg-config/guestbook
    ${_pc_flags})

# 3. add_subdirectory in a plain Release build (-O3).
set(_sub ${WORK}/subproject)
run("configure (add_subdirectory)" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer/subproject
    -B ${_sub} -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
    -DRIVETKIT_SOURCE_DIR=${SOURCE_DIR} -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
file(STRINGS ${_sub}/CMakeCache.txt _cache REGEX "^RIVETKIT_(WERROR|BUILD_[A-Z]+|INSTALL):")
foreach(_entry ${_cache})
  if(NOT _entry MATCHES ":BOOL=OFF$")
    message(FATAL_ERROR "as a subproject, ${_entry} (expected OFF by default)")
  endif()
endforeach()
list(LENGTH _cache _options)
if(_options LESS 5)
  message(FATAL_ERROR "subproject options missing from the cache: ${_cache}")
endif()
run("list targets" ${CMAKE_COMMAND} --build ${_sub} --target help)
if(LAST_OUTPUT MATCHES "(rivetkit_[a-z_]+_tests|rivetkit_bench_[a-z]+|rivetkit_counter|gtest)")
  message(FATAL_ERROR "the subproject defines test/bench/example target ${CMAKE_MATCH_1}")
endif()
file(READ ${_sub}/compile_commands.json _commands)
string(REGEX MATCH "\"command\": \"[^\"]*guestbook\\.cpp\"" _guestbook_command "${_commands}")
expect_definitions("add_subdirectory" "${_guestbook_command}")
# The consumer's object, and the library object g++ 12 once failed on at -O3 with -Werror.
run("reconfigure with RIVETKIT_WERROR=ON" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer/subproject
    -B ${_sub} -DRIVETKIT_WERROR=ON)
# Object targets are a Ninja feature (the presets' generator); their names follow the paths.
run("list object targets" ${CMAKE_COMMAND} --build ${_sub} -- -t targets all)
string(REGEX MATCH "[^\n]*guestbook\\.cpp\\.o" _guestbook_object "${LAST_OUTPUT}")
string(REGEX MATCH "[^\n]*cbor_decode\\.cpp\\.o" _cbor_object "${LAST_OUTPUT}")
if(NOT _guestbook_object OR NOT _cbor_object)
  message(FATAL_ERROR "object targets not found in the subproject:\n${LAST_OUTPUT}")
endif()
run("compile (add_subdirectory)" ${CMAKE_COMMAND} --build ${_sub} --target ${_guestbook_object}
    ${_cbor_object})
message(STATUS "consumer projects built in ${WORK}")
