#pragma once
/// The actor's abort signal (`c.abort_signal()`, RivetKit's `c.abortSignal`): it fires once, when
/// the actor begins to stop (sleep or destroy). Long-running code (the `run` handler above all)
/// watches it to finish its work and return within the grace period:
///
///     .run([](auto& c) -> rivetkit::Task<void> {
///       auto signal = c.abort_signal();
///       while (!signal.aborted()) {
///         tick(c);
///         co_await signal.wait_for(std::chrono::milliseconds(50));  // returns early on abort
///       }
///       c.state().exited = true;  // saved with the final save
///     })
///
/// Everything runs on the actor's strand. A handle is cheap to copy and valid while the actor
/// instance that gave it runs.

#include <rivetkit/detail/access.hpp>
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/task.hpp>

#include <chrono>
#include <functional>
#include <utility>

namespace rivetkit {

class AbortSignal {
 public:
  /// True once the actor has begun stopping.
  bool aborted() const { return api_->aborted(); }
  /// Calls `listener` (on the actor's strand) when the signal fires; at once if it already has.
  void on_abort(std::function<void()> listener) const { api_->on_abort(std::move(listener)); }
  /// Resumes when the signal fires (at once if it already has).
  Task<void> wait() const { return api_->wait_aborted(); }
  /// Waits up to `timeout`; true when the signal fired first (or had already fired).
  Task<bool> wait_for(std::chrono::milliseconds timeout) const {
    return api_->wait_aborted_for(timeout);
  }

 private:
  friend struct detail::Access;
  explicit AbortSignal(detail::ActorApi* api) : api_(api) {}
  detail::ActorApi* api_;
};

}  // namespace rivetkit
