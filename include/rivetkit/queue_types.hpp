#pragma once
/// What a receive from the actor's queue asks for (queue.hpp).

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rivetkit {

/// The caller's own way to end a waiting receive early (RivetKit's `signal` option of a receive).
/// Copies share one state; use it on the actor's strand. Once cancel() is called, a receive given
/// it throws `actor.aborted`: at once when it was cancelled before the receive began, else when it
/// would otherwise go on waiting.
class ReceiveCancel {
 public:
  void cancel() const {
    if (state_->cancelled) {
      return;
    }
    state_->cancelled = true;
    auto listeners = std::move(state_->listeners);
    state_->listeners.clear();
    for (auto& listener : listeners) {
      listener();
    }
  }
  bool cancelled() const { return state_->cancelled; }
  /// Runs `listener` at the cancel (the runtime wakes a waiting receive with it).
  void on_cancel(std::function<void()> listener) const {
    state_->listeners.push_back(std::move(listener));
  }

 private:
  struct State {
    bool cancelled = false;
    std::vector<std::function<void()>> listeners;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

struct QueueReceive {
  /// The queue names to take from; empty: every name.
  std::vector<std::string> names;
  /// The most messages `next_batch` / `try_next_batch` return (at least 1).
  std::size_t count = 1;
  /// How long `next` / `next_batch` wait for a first message; none: until one comes or the actor
  /// stops. Ignored by the try_ forms.
  std::optional<std::chrono::milliseconds> timeout;
  /// Leave the messages queued until complete() (queue.hpp).
  bool completable = false;
  /// Ends the receive with `actor.aborted` when cancelled (none: only the actor's stop does).
  std::optional<ReceiveCancel> cancel;
};

}  // namespace rivetkit
