# Run by the headers.clang test: compiles each public header alone (so each is
# self-contained), then all of them in one translation unit.
# Inputs: CLANGXX, INCLUDE_DIRS (the dependencies' include directories), HEADER_DIR
# (include/rivetkit), WORK_DIR.
file(GLOB _headers RELATIVE ${HEADER_DIR} ${HEADER_DIR}/*.hpp)
list(SORT _headers)
# HEADER_DIR's parent with -I, so that warnings in the public headers count.
get_filename_component(_public_include ${HEADER_DIR} DIRECTORY)
set(_flags -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I${_public_include})
foreach(_dir ${INCLUDE_DIRS})
  # The compiler's own system directories stay where they are: named again with -isystem they
  # would move before the C++ library's and break its #include_next.
  if(NOT _dir MATCHES "^/usr(/local)?/include/?$")
    list(APPEND _flags -isystem ${_dir})
  endif()
endforeach()

set(_all "")
set(_failed "")
foreach(_h ${_headers})
  set(_tu ${WORK_DIR}/header_check_${_h}.cpp)
  file(WRITE ${_tu} "#include <rivetkit/${_h}>\n")
  string(APPEND _all "#include <rivetkit/${_h}>\n")
  execute_process(COMMAND ${CLANGXX} ${_flags} ${_tu} RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message("rivetkit/${_h} does not compile on its own:\n${_err}")
    list(APPEND _failed ${_h})
  endif()
endforeach()

set(_tu ${WORK_DIR}/header_check_all.cpp)
file(WRITE ${_tu} "${_all}")
execute_process(COMMAND ${CLANGXX} ${_flags} ${_tu} RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message("the public headers together do not compile:\n${_err}")
  list(APPEND _failed "(all)")
endif()

list(LENGTH _headers _n)
if(_failed)
  message(FATAL_ERROR "clang header check failed for: ${_failed}")
endif()
message(STATUS "${_n} public headers compile with ${CLANGXX}")
