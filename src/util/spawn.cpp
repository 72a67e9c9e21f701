#include "util/spawn.hpp"

#include <boost/system/system_error.hpp>

namespace rivetkit::util::detail {

void log_spawn_failure(const std::string& what, std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const boost::system::system_error& err) {
    if (err.code() == boost::asio::error::operation_aborted) {
      log::debug("task cancelled: {}", what);
      return;
    }
    log::error("task failed: {}: {}", what, err.what());
  } catch (const std::exception& err) {
    log::error("task failed: {}: {}", what, err.what());
  } catch (...) {
    log::error("task failed: {}: unknown exception", what);
  }
}

}  // namespace rivetkit::util::detail
