# The fixture server the official-client suite (tests/js) drives: every actor the tests need.
add_executable(rivetkit_fixture_server ${CMAKE_CURRENT_LIST_DIR}/fixture_server.cpp
                                       ${CMAKE_CURRENT_LIST_DIR}/queue_worker.cpp)
target_link_libraries(rivetkit_fixture_server PRIVATE rivetkit::rivetkit rivetkit_warnings)
