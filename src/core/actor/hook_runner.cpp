#include "core/actor/hook_runner.hpp"

#include "core/errors.hpp"
#include "util/log.hpp"

namespace rivetkit::core {

using namespace boost::asio::experimental::awaitable_operators;

Task<Result<void>> guarded(const char* what, std::string actor_id, Task<void> task) {
  std::exception_ptr failure;
  try {
    co_await std::move(task);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    Error e = error_from_exception(failure);
    log::warn("hook failed actor_id={} hook={} error={}.{} message={}", actor_id, what, e.group,
              e.code, e.message);
    co_return fail(std::move(e));
  }
  co_return Result<void>{};
}

Task<Result<Value>> catching(Task<Value> action) {
  std::exception_ptr failure;
  try {
    Value v = co_await std::move(action);
    co_return v;
  } catch (...) {
    failure = std::current_exception();
  }
  co_return fail(error_from_exception(failure));
}

Task<std::exception_ptr> capture(Task<void> task) {
  try {
    co_await std::move(task);
  } catch (...) {
    co_return std::current_exception();
  }
  co_return nullptr;
}

Task<Result<void>> run_hook(util::Clock& clock,
                            std::string actor_id,
                            const char* what,
                            Task<void> task,
                            std::chrono::milliseconds limit) {
  auto hook = guarded(what, actor_id, std::move(task));
  auto timer = clock.wait_for(limit);
  auto raced = co_await (std::move(hook) || std::move(timer));
  if (raced.index() == 0) {
    co_return std::move(std::get<0>(raced));
  }
  std::string message =
      std::string("`") + what + "` timed out after " + std::to_string(limit.count()) + " ms";
  log::warn("hook timed out actor_id={} hook={} limit_ms={}", actor_id, what, limit.count());
  co_return fail(Error{"actor", "callback_timed_out", std::move(message), std::nullopt, false});
}

}  // namespace rivetkit::core
