#include "storage/worker.hpp"

#include "util/log.hpp"

#include <fmt/format.h>

namespace rivetkit::storage::detail {

Error closed_error() {
  return Error{"storage", "closed", "The local store is closed", std::nullopt, false};
}

Error exception_error(std::string_view where, std::exception_ptr e) {
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(std::move(e));
  } catch (const std::exception& err) {
    what = err.what();
  } catch (...) {
  }
  return Error{"storage", "internal_error", fmt::format("{}: {}", where, what), std::nullopt,
               false};
}

void log_storage_failure(std::string_view what, std::exception_ptr e) noexcept {
  try {
    log::error("storage: {}", exception_error(what, std::move(e)).message);
  } catch (...) {
  }
}

}  // namespace rivetkit::storage::detail
