#pragma once
// ActorQueue: an actor's durable queue (`c.queue()`, include/rivetkit/queue.hpp, core-semantics.md
// §7) as a part of the instance.
//
// Where it lives: in the actor's ordered KV, under the 0x05 namespace (queue_keys below): one key
// per message (its id, big-endian, so keys sort oldest first) and one for the next id, which only
// grows (ids are never reused, even once the queue empties). The messages are also held in
// memory while the actor is awake (at most max_queue_size of at most max_queue_message_size).
//
// How it commits: every change (a message added, taken by a plain receive, completed) is kept
// until the actor's next write takes it (take_changes), with the state of the same turn, through
// the output gate. So a client's send is answered once its message is durable, and a turn that
// takes a message and changes the state commits both or neither.
//
// Redelivery (QueueDelivery, per declared queue): every completable receive counts a delivery in
// the message's record (written with the turn; awaited when the queue has max_deliveries, so a
// handler that crashes the process still counts). A visibility timeout hides a delivered message
// until it passes (in memory: a restart shows every message again). A message delivered
// max_deliveries times is moved to the dead letters (0x03 keys) by the next receive that would
// return it. Dead letters count towards max_queue_size until replayed or dropped.
//
// Waiting: a receive that finds nothing waits (its timer) until a send wakes it, its timeout
// passes, or the actor begins to stop (abort: actor.aborted). A sender that waits for completion
// (send-and-wait) is held in memory only, as in RivetKit; it ends when the message is completed,
// at its deadline, or when the instance closes.
//
// Single strand. Errors are thrown as ActorError (what the typed API expects).

#include "storage/actor_store.hpp"
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::detail {
/// A completable message as its receiver holds it (queue.hpp's QueueMessage).
struct QueueCompletion {
  std::uint64_t id = 0;
  std::string name;
  /// Which delivery of the message this is (its count when it was returned).
  std::uint32_t delivery = 0;
  bool completed = false;
  /// Keeps the actor's writes back until the completion (QueueDelivery::exactly_once).
  std::shared_ptr<void> writes_held;
};
}  // namespace rivetkit::detail

namespace rivetkit::core {

namespace queue_keys {
/// First byte of every key of the queue.
inline constexpr char kPrefix = '\x05';
/// The next id to give (u64 big-endian).
std::string next_id_key();
/// Message `id`: kPrefix, 0x02, id (u64 big-endian).
std::string message_key(std::uint64_t id);
/// Dead letter `id`: kPrefix, 0x03, id (u64 big-endian).
std::string dead_letter_key(std::uint64_t id);
/// The id of a message key; nullopt for any other key.
std::optional<std::uint64_t> id_of(std::string_view key);
/// The id of a dead letter key; nullopt for any other key.
std::optional<std::uint64_t> dead_id_of(std::string_view key);
}  // namespace queue_keys

class ActorQueue final : public detail::QueueApi {
 public:
  class Host {
   public:
    virtual ~Host() = default;
    /// Whether the instance's storage is still open to user calls.
    virtual bool queue_open() const = 0;
    /// Something changed that the next write must take.
    virtual void queue_changed() = 0;
    /// Writes what changed now (ending every hold: an explicit save) and resumes once it is
    /// durable.
    virtual Task<Result<void>> save_now() = 0;
    /// Writes what changed once no hold keeps writes back, and resumes once it is durable.
    virtual Task<Result<void>> save_after_holds() = 0;
    /// Keeps the owner alive for the duration of a call.
    virtual std::shared_ptr<void> hold() = 0;
    virtual std::int64_t queue_now_ms() const = 0;
    /// A receive of the run handler (or a hook: no connection) starts waiting: until the
    /// returned token goes, the run handler does not keep the actor awake.
    virtual std::shared_ptr<void> queue_wait_began() = 0;
    /// Holds the actor's writes back until the token goes or `limit` passes, whichever is
    /// first (output_gate.hpp).
    virtual std::shared_ptr<void> hold_writes(std::chrono::milliseconds limit) = 0;
  };

  /// How long an exactly-once handler may hold writes when its queue has no visibility timeout.
  static constexpr std::chrono::milliseconds kDefaultHoldLimit{30'000};

  /// The size RivetKit measures a message by (its persisted encoding with the name).
  static std::size_t measured_size(std::string_view name, std::string_view body_cbor);

  ActorQueue(boost::asio::any_io_executor strand,
             std::string actor_id,
             const detail::ActorDefinitionData& definition,
             Host& host);
  ActorQueue(const ActorQueue&) = delete;
  ActorQueue& operator=(const ActorQueue&) = delete;

  /// Reads the queue at the start (before any hook can use it).
  Task<Result<void>> load(storage::ActorStore& store);

  /// Whether the actor declares queue `name` (sends to others keep nothing).
  bool declared(std::string_view name) const;
  /// Adds a message (checked against the limits, which throw); the caller's reply waits for the
  /// write that makes it durable. Returns its id.
  std::uint64_t enqueue(std::string name, Value body);
  /// Waits until message `id` is completed (its response, undefined when none was given) or
  /// `deadline` passes (nullopt). The waiter must be registered (expect_completion) before the
  /// message can be taken.
  void expect_completion(std::uint64_t id);
  Task<std::optional<Value>> wait_completion(std::uint64_t id,
                                             std::chrono::steady_clock::time_point deadline);

  /// Moves the changes not yet written into `write`.
  void take_changes(storage::ActorWrite& write);
  bool has_changes() const { return !unsaved_.empty(); }
  /// The actor begins to stop: receives that wait end with actor.aborted, and no new one waits.
  void abort();
  /// The instance is gone: senders still waiting give up.
  void close();

  std::size_t size() const override { return messages_.size(); }
  std::size_t dead_letter_count() const { return dead_.size(); }
  /// The most messages (dead letters included) the queue holds (ActorOptions::max_queue_size).
  std::size_t max_size() const;

  // ---- what the inspector sees and does (core/inspector) ----------------------------------------
  struct Listed {
    std::uint64_t id = 0;
    std::string name;
    std::int64_t created_at_ms = 0;
  };
  /// The first `limit` waiting messages, oldest first.
  std::vector<Listed> list(std::size_t limit) const;
  /// The message `id` as list() shows it (a message just enqueued).
  std::optional<Listed> find(std::uint64_t id) const;
  /// Deletes every waiting message (dead letters stay); ids go on from where they were. The
  /// caller's reply waits for the write that makes it durable.
  void reset();
  /// Test hook: waiting receives and callers with completable messages tracked now.
  std::size_t tracked_for_test() const { return receivers_.size() + outstanding_.size(); }

  // ---- detail::QueueApi -----------------------------------------------------------------------
  Task<void> send(std::string name, Value body) override;
  Task<QueueSendResult> send_and_wait(std::string name,
                                      Value body,
                                      std::optional<std::chrono::milliseconds> timeout) override;
  Task<std::vector<detail::QueueMessageData>> receive(const void* scope,
                                                      QueueReceive options,
                                                      bool wait) override;
  Task<void> complete(std::shared_ptr<detail::QueueCompletion> completion, Value response) override;
  /// complete() for message `id` of queue `name` without its receive's handle (a workflow's
  /// replayed message): as its current delivery. Nothing happens when it is no longer queued.
  Task<void> complete_id(std::uint64_t id, std::string name, Value response);
  Task<void> wait_available(const void* scope, QueueReceive options) override;
  std::vector<QueueDeadLetter> dead_letters() const override;
  Task<std::optional<std::uint64_t>> replay_dead_letter(std::uint64_t id) override;
  Task<bool> drop_dead_letter(std::uint64_t id) override;

 private:
  struct Message {
    std::string name;
    Value body;
    std::int64_t created_at = 0;
    std::uint32_t deliveries = 0;
    // Hidden from receives until then (a delivery under a visibility timeout).
    std::chrono::steady_clock::time_point visible_at{};
  };
  struct CompletionWaiter {
    explicit CompletionWaiter(const boost::asio::any_io_executor& ex) : timer(ex) {}
    boost::asio::steady_timer timer;
    std::optional<Value> response;
  };

  void check_open() const;
  /// How long a completable delivery hides its message (exactly_once hides for the hold).
  static std::optional<std::chrono::milliseconds> visibility_of(const QueueDelivery& delivery);
  /// The redelivery rules of queue `name` (none for a queue no longer declared).
  const QueueDelivery& delivery_of(const std::string& name) const;
  /// Takes up to `count` matching messages now (removed unless completable). `must_save`: a
  /// delivery was counted that must be durable before the messages are handed out.
  std::vector<detail::QueueMessageData> take(const void* scope,
                                             const QueueReceive& options,
                                             bool& must_save);
  /// When the first hidden message matching `names` shows again (max(): none hidden).
  std::chrono::steady_clock::time_point next_visible(const std::vector<std::string>& names) const;
  void put_record(std::uint64_t id, const Message& m, bool dead);
  /// Whether a receive of `names` would return a message now.
  bool available(const std::vector<std::string>& names) const;
  /// One wait of a receive: until a send, a hidden message showing again, `deadline`, the
  /// cancel or the stop.
  Task<void> wait_for_change(const void* scope,
                             const QueueReceive& options,
                             std::chrono::steady_clock::time_point deadline);
  /// Whether a completable message handed out still refuses its caller's next receive (not
  /// completed, and not delivered again after its visibility timeout).
  bool blocks(const detail::QueueCompletion& c) const;
  void wake_receivers();

  boost::asio::any_io_executor strand_;
  std::string actor_id_;  // for logs
  const detail::ActorDefinitionData& definition_;
  Host& host_;
  std::map<std::uint64_t, Message> messages_;
  std::map<std::uint64_t, Message> dead_;
  std::uint64_t next_id_ = 1;
  storage::KvBatch unsaved_;
  bool aborted_ = false;
  bool closed_ = false;
  // Receives waiting for a message: each one's timer, cancelled to wake it.
  std::vector<std::weak_ptr<boost::asio::steady_timer>> receivers_;
  // Senders waiting for their message's completion.
  std::map<std::uint64_t, std::shared_ptr<CompletionWaiter>> completion_waiters_;
  // Completable messages handed out and not completed, per receiving scope (the calling
  // connection): while one lives, that scope's next receive is refused.
  std::map<const void*, std::vector<std::weak_ptr<detail::QueueCompletion>>> outstanding_;
};

}  // namespace rivetkit::core
