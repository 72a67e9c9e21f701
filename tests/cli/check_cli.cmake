# One command-line check (tests/cli/CMakeLists.txt): runs BINARY with ARGS and the environment
# ENV (NAME=VALUE pairs), then checks its exit code (EXIT) and that its stdout and stderr together
# match every regular expression of EXPECT. The three lists come joined with "@@".
string(REPLACE "@@" ";" _args "${ARGS}")
string(REPLACE "@@" ";" _env_args "${ENV}")
string(REPLACE "@@" ";" EXPECT "${EXPECT}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env ${_env_args} ${BINARY} ${_args}
  RESULT_VARIABLE _rc
  OUTPUT_VARIABLE _out
  ERROR_VARIABLE _err
  TIMEOUT 60)
set(_all "${_out}${_err}")
if(NOT "${_rc}" STREQUAL "${EXIT}")
  message(FATAL_ERROR "exit code ${_rc}, expected ${EXIT}; output:\n${_all}")
endif()
foreach(_re IN LISTS EXPECT)
  if(NOT _all MATCHES "${_re}")
    message(FATAL_ERROR "output does not match '${_re}':\n${_all}")
  endif()
endforeach()
