#pragma once
// rivetkit::spawn: co_spawn that never swallows an exception (asio::detached does, cpp-guide
// §2.5). A failure is logged with the given description; the optional on_error callback runs on
// the coroutine's executor.

#include <rivetkit/task.hpp>

#include <boost/asio/co_spawn.hpp>

#include <exception>
#include <functional>
#include <string>
#include <utility>

#include "util/log.hpp"

namespace rivetkit::util {

namespace detail {
void log_spawn_failure(const std::string& what, std::exception_ptr e);
}

template <class Executor>
void spawn(Executor ex, Task<void> task, std::string what,
           std::function<void(std::exception_ptr)> on_error = nullptr) {
  boost::asio::co_spawn(std::move(ex), std::move(task),
                        [what = std::move(what), on_error = std::move(on_error)](
                            std::exception_ptr e) {
                          if (e) {
                            detail::log_spawn_failure(what, e);
                            if (on_error) {
                              on_error(e);
                            }
                          }
                        });
}

}  // namespace rivetkit::util
