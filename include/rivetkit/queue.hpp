#pragma once
/// The actor's queue (`c.queue()`, RivetKit's `c.queue`): a durable FIFO of named messages that
/// clients (`handle.send(name, body)`, `POST /queue/{name}`) and actors send to, and the actor
/// takes from in its actions or its `run` loop.
///
///     rivetkit::actor<State>("worker")
///         .queue("jobs")                                  // declared: sends to it are kept
///         .run([](auto& c) -> rivetkit::Task<void> {
///           while (auto msg = co_await c.queue().next({.names = {"jobs"}, .completable = true})) {
///             c.state().done += 1;
///             co_await msg->complete(rivetkit::Value::object({{"ok", true}}));
///           }                                              // nullopt: the actor is stopping
///         });
///
/// Declared queues: a send to a queue the actor does not declare completes and keeps nothing
/// (RivetKit's rule). A declared queue may carry a `can_publish(c)` rule for client sends; false
/// refuses the send with `auth.forbidden` (403).
///
/// Receiving: `next` / `next_batch` wait up to `timeout` (none: until a message comes or the
/// actor stops), `try_next` / `try_next_batch` do not wait. `names` filters by exact name (empty:
/// every name); messages come oldest first. A plain receive removes what it returns. A
/// completable receive (`completable = true`) leaves the message queued until
/// `complete(response)`, which removes it and answers a sender waiting with `send_and_wait`;
/// until then the message is returned again by the next receive (after a restart too). While a
/// call holds a completable message it has not completed, its next receive throws
/// `queue.previous_message_not_completed`; a second `complete` throws `queue.already_completed`.
/// A receive waiting when the actor begins to stop, or when its `cancel` (QueueReceive) fires,
/// ends with `actor.aborted`. A waiting receive of the `run` handler does not keep the actor awake.
///
/// Durability: a message is durable before the send that made it returns (the client's send,
/// or `c.queue().send`), and a receive's removal and a completion commit with the state of the
/// same turn (the output gate), so a reply never reports a message taken that a crash could
/// give back, nor the other way round.
///
/// Redelivery (beyond RivetKit, per declared queue: `.queue(name, QueueDelivery{...})`): a
/// visibility timeout hides a completable message from other receives while its handler runs and
/// delivers it again if it is not completed in time; `max_deliveries` moves a message that keeps
/// failing to the dead letters (`dead_letters`, `replay_dead_letter`, `drop_dead_letter`).
/// `QueueMessage::deliveries()` says how many times a message was delivered, restarts included.
///
/// Limits (ActorOptions): at most `max_queue_size` messages, dead letters included (1000;
/// `queue.full`, "Queue is full. Limit is N"), each at most `max_queue_message_size` bytes as
/// RivetKit measures it (64 KiB; `queue.message_too_large`).

#include <rivetkit/convert.hpp>
#include <rivetkit/detail/access.hpp>
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/error.hpp>
#include <rivetkit/queue_types.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rivetkit {

namespace detail {
/// `queue.timed_out`: a wait_for_names / wait_for_names_available whose timeout passed.
inline Error queue_timed_out(std::optional<std::chrono::milliseconds> timeout) {
  const auto ms = timeout ? timeout->count() : 0;
  return Error{"queue", "timed_out",
               "Waiting for a queue message timed out after " + std::to_string(ms) + " ms.",
               Value::object({{"timeoutMs", static_cast<std::int64_t>(ms)}}), true};
}
}  // namespace detail

/// One message taken from the queue. Valid while the actor instance that returned it runs.
class QueueMessage {
 public:
  std::uint64_t id() const { return data_.id; }
  const std::string& name() const { return data_.name; }
  const Value& body() const { return data_.body; }
  /// The body converted to T (throws ConversionError when it does not fit).
  template <class T>
  T body_as() const {
    return from_value<T>(data_.body);
  }
  /// When it was sent (ms since the epoch).
  std::int64_t created_at() const { return data_.created_at; }
  bool completable() const { return data_.completion != nullptr; }
  /// How many times the message was delivered, this delivery included (1 the first time; a
  /// completable message not completed before a restart or its visibility timeout comes again
  /// with a higher count).
  std::uint32_t deliveries() const { return data_.deliveries; }
  /// Completes a completable message: it leaves the queue, and a sender waiting on it gets
  /// `response`. Throws queue.already_completed the second time, queue.not_completable for a
  /// message taken by a plain receive, queue.delivery_expired when its visibility timeout passed
  /// and it was delivered again since.
  Task<void> complete(Value response = Value(Undefined{})) const {
    return api_->complete(data_.completion, std::move(response));
  }

 private:
  friend struct detail::Access;
  friend class Queue;
  QueueMessage(detail::QueueApi* api, detail::QueueMessageData data)
      : api_(api), data_(std::move(data)) {}
  detail::QueueApi* api_;
  detail::QueueMessageData data_;
};

class Queue {
 public:
  /// Sends `body` to this actor's queue `name`; resumes once the message is durable.
  template <class T>
  Task<void> send(std::string name, const T& body) const {
    return api_->send(std::move(name), to_value(body));
  }
  /// Sends and waits until a consumer completes the message (at most `timeout`; none: no limit
  /// but the actor's stop). The result's status is "completed" (with the response) or
  /// "timedOut".
  template <class T>
  Task<QueueSendResult> send_and_wait(
      std::string name,
      const T& body,
      std::optional<std::chrono::milliseconds> timeout = std::nullopt) const {
    return api_->send_and_wait(std::move(name), to_value(body), timeout);
  }
  /// The oldest matching message, waiting up to `options.timeout`; nullopt on timeout.
  Task<std::optional<QueueMessage>> next(QueueReceive options = {}) const;
  /// Up to `options.count` matching messages, oldest first, waiting up to `options.timeout` for
  /// the first; empty on timeout.
  Task<std::vector<QueueMessage>> next_batch(QueueReceive options = {}) const {
    return wrapped(api_, api_->receive(scope_, std::move(options), true));
  }
  /// As next / next_batch, without waiting.
  Task<std::optional<QueueMessage>> try_next(QueueReceive options = {}) const;
  /// The oldest message named one of `names` (RivetKit's waitForNames): as next, but a timeout
  /// throws `queue.timed_out` instead of returning nothing. `options.names` is replaced.
  Task<QueueMessage> wait_for_names(std::vector<std::string> names,
                                    QueueReceive options = {}) const;
  /// Resumes once a message named one of `names` is queued and visible, taking nothing
  /// (RivetKit's waitForNamesAvailable); `options.timeout` passing throws `queue.timed_out`,
  /// `options.cancel` or the actor's stop `actor.aborted`. Empty `names`: any message.
  Task<void> wait_for_names_available(std::vector<std::string> names,
                                      QueueReceive options = {}) const {
    options.names = std::move(names);
    return api_->wait_available(scope_, std::move(options));
  }
  Task<std::vector<QueueMessage>> try_next_batch(QueueReceive options = {}) const {
    return wrapped(api_, api_->receive(scope_, std::move(options), false));
  }
  /// Messages queued now (dead letters not included).
  std::size_t size() const { return api_->size(); }
  /// The messages moved aside after `max_deliveries` deliveries (QueueDelivery), oldest first.
  std::vector<QueueDeadLetter> dead_letters() const { return api_->dead_letters(); }
  /// Moves dead letter `id` back to the end of its queue under a new id, with its delivery count
  /// reset (a sender still waiting for it follows it); nullopt when there is no such dead letter.
  /// Resumes once durable.
  Task<std::optional<std::uint64_t>> replay_dead_letter(std::uint64_t id) const {
    return api_->replay_dead_letter(id);
  }
  /// Deletes dead letter `id`; false when there is none. Resumes once durable.
  Task<bool> drop_dead_letter(std::uint64_t id) const { return api_->drop_dead_letter(id); }

 private:
  static Task<std::vector<QueueMessage>> wrapped(
      detail::QueueApi* api, Task<std::vector<detail::QueueMessageData>> received) {
    auto list = co_await std::move(received);
    std::vector<QueueMessage> out;
    out.reserve(list.size());
    for (auto& m : list) {
      out.push_back(QueueMessage(api, std::move(m)));
    }
    co_return out;
  }
  static Task<QueueMessage> required(detail::QueueApi* api,
                                     Task<std::vector<detail::QueueMessageData>> received,
                                     std::optional<std::chrono::milliseconds> timeout);
  static Task<std::optional<QueueMessage>> first(
      detail::QueueApi* api, Task<std::vector<detail::QueueMessageData>> received) {
    auto list = co_await std::move(received);
    if (list.empty()) {
      co_return std::nullopt;
    }
    co_return QueueMessage(api, std::move(list.front()));
  }

  friend struct detail::Access;
  /// `scope`: whose completable messages block whose receives (the calling connection).
  Queue(detail::QueueApi* api, const void* scope) : api_(api), scope_(scope) {}

  detail::QueueApi* api_;
  const void* scope_;
};

inline Task<std::optional<QueueMessage>> Queue::next(QueueReceive options) const {
  options.count = 1;
  return first(api_, api_->receive(scope_, std::move(options), true));
}

inline Task<std::optional<QueueMessage>> Queue::try_next(QueueReceive options) const {
  options.count = 1;
  return first(api_, api_->receive(scope_, std::move(options), false));
}

inline Task<QueueMessage> Queue::required(detail::QueueApi* api,
                                          Task<std::vector<detail::QueueMessageData>> received,
                                          std::optional<std::chrono::milliseconds> timeout) {
  auto list = co_await std::move(received);
  if (list.empty()) {
    throw ActorError(detail::queue_timed_out(timeout));
  }
  co_return QueueMessage(api, std::move(list.front()));
}

inline Task<QueueMessage> Queue::wait_for_names(std::vector<std::string> names,
                                                QueueReceive options) const {
  options.names = std::move(names);
  options.count = 1;
  auto timeout = options.timeout;
  return required(api_, api_->receive(scope_, std::move(options), true), timeout);
}

}  // namespace rivetkit
