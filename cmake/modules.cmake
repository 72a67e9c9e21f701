# rivetkit_add_module(<name> SOURCES ... DEPENDS ...)
#   A static library rivetkit_<name>: public include dir include/, private src/.
# rivetkit_add_test(<name> SOURCES ... DEPENDS ... [LABELS ...])
#   A gtest binary rivetkit_<name>_tests registered with ctest.
function(rivetkit_add_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPENDS;PUBLIC_DEPENDS" ${ARGN})
  add_library(rivetkit_${name} STATIC ${M_SOURCES})
  target_include_directories(rivetkit_${name}
    PUBLIC ${PROJECT_SOURCE_DIR}/include
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(rivetkit_${name}
    PUBLIC ${M_PUBLIC_DEPENDS}
    PRIVATE rivetkit_warnings ${M_DEPENDS})
  target_compile_features(rivetkit_${name} PUBLIC cxx_std_20)
endfunction()

function(rivetkit_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;DEPENDS;LABELS" ${ARGN})
  if(NOT RIVETKIT_BUILD_TESTS)
    return()
  endif()
  add_executable(rivetkit_${name}_tests ${T_SOURCES})
  target_include_directories(rivetkit_${name}_tests PRIVATE ${PROJECT_SOURCE_DIR}/src
                                                           ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(rivetkit_${name}_tests PRIVATE rivetkit_warnings ${T_DEPENDS}
                                                       GTest::gtest_main GTest::gmock)
  target_compile_definitions(rivetkit_${name}_tests PRIVATE
    RIVETKIT_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data"
    RIVETKIT_VECTORS_DIR="${RIVETKIT_VECTORS_DIR}")
  gtest_discover_tests(rivetkit_${name}_tests DISCOVERY_MODE PRE_TEST
                       TEST_PREFIX "${name}."
                       PROPERTIES LABELS unit)
endfunction()
