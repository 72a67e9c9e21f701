#pragma once
// The threads SQL runs on. SQLite calls block (a long query, a page read from storage), so
// they never run on the I/O threads that carry every actor's sockets and timers: an actor hands
// each statement to this pool and awaits it, and the other actors' code keeps running meanwhile.
// One pool per process, shared by every runtime in it (SQLite's own state is per process too);
// each actor's statements still run one at a time, in order (core/actor/actor_database.hpp).

#include <boost/asio/any_io_executor.hpp>

namespace rivetkit::sql {

/// The pool's executor (started on first use; as many threads as cores, at least two).
boost::asio::any_io_executor sql_executor();

}  // namespace rivetkit::sql
