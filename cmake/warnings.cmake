# Strict warnings for our own targets only (linked PRIVATE), so consumers and
# third-party headers are unaffected. -Wnull-dereference is left out: it fires
# inside Asio at -O2 (cpp-guide §2.10).
add_library(rivetkit_warnings INTERFACE)
target_compile_options(rivetkit_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wconversion -Wsign-conversion -Wdouble-promotion -Wformat=2
  -Wimplicit-fallthrough
  $<$<BOOL:${RIVETKIT_WERROR}>:-Werror>)
