# Strict warnings for our own targets only (linked PRIVATE), so consumers and
# third-party headers are unaffected. -Wnull-dereference is left out: it fires
# inside Asio at -O2 (cpp-guide §2.10).
#
# Two g++ 12 false positives are switched off for every target rather than file by file:
# -Wmismatched-new-delete fires on Asio's awaitable frame allocator (aligned_alloc paired with
# its own operator delete) once coroutines are inlined at -O2 or under ASan, and
# -Wmaybe-uninitialized fires when a std::variant-based Value is moved at -O1/-O2.
add_library(rivetkit_warnings INTERFACE)
target_compile_options(rivetkit_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wconversion -Wsign-conversion -Wdouble-promotion -Wformat=2
  -Wimplicit-fallthrough
  $<$<CXX_COMPILER_ID:GNU>:-Wno-mismatched-new-delete -Wno-maybe-uninitialized>
  $<$<BOOL:${RIVETKIT_WERROR}>:-Werror>)
