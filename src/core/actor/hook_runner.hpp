#pragma once
// Running user code from the runtime: whatever it throws becomes an Error (never an exception
// through the runtime), and a hook has a time limit (`actor.callback_timed_out`,
// core-semantics.md §1.3).
//
// Races: awaitable_operators' `||` waits for the first operand that *succeeds*, so a user task
// raced against a timer must not throw, or the race would last until the timer. Each helper here
// wraps the task so that it ends normally with what it threw.

#include "util/clock.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <chrono>
#include <exception>
#include <optional>
#include <string>

namespace rivetkit::core {

/// Runs a hook; what it throws is logged (with `what` and the actor) and returned as an Error.
Task<Result<void>> guarded(const char* what, std::string actor_id, Task<void> task);

/// Runs an action; what it throws is returned as an Error (not logged: the caller decides).
Task<Result<Value>> catching(Task<Value> action);

/// Runs a task and returns what it threw (null: it returned).
Task<std::exception_ptr> capture(Task<void> task);

/// guarded() within `limit`: `actor.callback_timed_out` when the hook is still running then (it is
/// cancelled at its next suspension point).
Task<Result<void>> run_hook(util::Clock& clock,
                            std::string actor_id,
                            const char* what,
                            Task<void> task,
                            std::chrono::milliseconds limit);

/// Runs `task` until `deadline`: its result, or nullopt when the deadline came first (the task is
/// then cancelled). `task` must not throw (see the file comment).
template <class T>
Task<std::optional<T>> with_deadline(util::Clock& clock, Task<T> task, util::SteadyTime deadline) {
  using namespace boost::asio::experimental::awaitable_operators;
  auto timer = clock.wait_until(deadline);
  auto raced = co_await (std::move(task) || std::move(timer));
  if (raced.index() == 0) {
    co_return std::move(std::get<0>(raced));
  }
  co_return std::nullopt;
}

}  // namespace rivetkit::core
