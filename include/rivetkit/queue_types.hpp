#pragma once
/// What a receive from the actor's queue asks for (queue.hpp).

#include <rivetkit/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
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

/// How a declared queue redelivers completable messages that are not completed (beyond RivetKit;
/// ActorBuilder::queue). Both unset: RivetKit's rule, where an uncompleted message stays visible
/// and every receive returns it again.
struct QueueDelivery {
  /// Hides a message from every receive for this long after a completable receive returns it;
  /// if it is not completed by then, it is delivered again, and the first delivery's complete()
  /// throws `queue.delivery_expired`. A restart makes every message visible again.
  std::optional<std::chrono::milliseconds> visibility_timeout;
  /// A message returned this many times by completable receives without being completed is not
  /// returned again: the next receive that would return it moves it to the dead letters
  /// (Queue::dead_letters). With this set, a completable receive resumes only once the delivery
  /// is counted durably, so a handler that crashes the process counts too.
  std::optional<std::uint32_t> max_deliveries;
  /// A completable receive's handler commits as one: what the actor changes (state, KV, SQL,
  /// queue, schedules) from the receive until complete() is written in one commit with the
  /// completion, so after a crash at any point the message's effects are applied exactly once
  /// (a crash before the commit leaves none of them, and the message is delivered again).
  /// Meanwhile the actor's other writes, and the replies that depend on them, wait too, and the
  /// message is hidden from other receives. The hold ends at complete(), when the message is
  /// dropped uncompleted (what was changed is then kept), at the visibility timeout (30 s when
  /// none is set; the message is then delivered again, so a handler must finish within it), at
  /// an explicit save anywhere in the actor (c.save_state, an awaited c.kv() write,
  /// c.queue().send: what came before is written) and at the actor's stop.
  bool exactly_once = false;
};

/// A queued message as the actor keeps it: what a receive returns (with its completion) and
/// what a dead letter is.
struct QueueRecord {
  std::uint64_t id = 0;
  std::string name;
  Value body;
  /// When it was sent (ms since the epoch).
  std::int64_t created_at = 0;
  /// How many times it was delivered (as a receive returns it: this delivery included).
  std::uint32_t deliveries = 0;
};

/// A message moved to the dead letters after `max_deliveries` deliveries (Queue::dead_letters).
using QueueDeadLetter = QueueRecord;

}  // namespace rivetkit
