#include "sql/sql_workers.hpp"

#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <thread>

namespace rivetkit::sql {

boost::asio::any_io_executor sql_executor() {
  // Never destroyed: a job may still be blocked in SQLite when the process exits, and joining it
  // from a static destructor could wait for ever. The threads end with the process.
  static auto* pool =
      new boost::asio::thread_pool(std::max(2U, std::thread::hardware_concurrency()));
  return pool->get_executor();
}

}  // namespace rivetkit::sql
