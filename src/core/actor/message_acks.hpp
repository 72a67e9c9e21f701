#pragma once
// MessageAcks: when the inbound message indexes of resumable sockets are saved (engine mode,
// envoy-protocol.md §4.11).
//
// The gateway re-sends every message it has not had acknowledged, and a message is acknowledged
// once its index is durable with its connection's record. So each taken message makes its
// connection "due": its record must be saved again. The index rides along with the next write
// that holds outputs back (so an action's state, its reply and its acknowledgement become durable
// together); with nothing else to write, a write of only the due records follows within
// kSaveDelay (a stream of read-only messages costs one write per interval, not one per message,
// and holds no reply back), or at once once kSaveBytes of inbound data wait.
//
// Two rules keep a completed action from running twice (a crash after its state is durable but
// before its index is would make the gateway re-send the message to the next instance):
// - An action's message is due from its delivery, so the write of the action's own state change
//   (which can start before the action returns: the save its change asked for runs at the end of
//   that turn) carries the index too, and both become durable together. Such a write, one that
//   holds outputs back, records the index it saved per connection (written).
// - When the reply is about to be queued, an index that a write holding outputs back already
//   carries needs nothing more (the reply waits for that write or a later one). Otherwise, while
//   a write that holds replies back is under way or queued, the index joins the next write and
//   that write holds outputs back, the reply included. A reply held by nothing (a read-only
//   action, or durable_replies off) keeps the debounced save: re-running a read after a crash
//   changes nothing.
//
// Single strand. The Host is the instance: it asks for a save and spawns the delay.

#include "storage/actor_store.hpp"
#include "util/clock.hpp"
#include <rivetkit/task.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rivetkit::core {

class MessageAcks {
 public:
  /// How long a due index may wait for a write of its own. The socket acknowledges at most once
  /// a second anyway (engine/tunnel_websocket.hpp), so saving more often buys nothing; RivetKit
  /// acknowledges within 5 s, the gateway drops a client after 30 s.
  static constexpr std::chrono::milliseconds kSaveDelay{1000};
  /// ... unless this much inbound data waits for its acknowledgement (RivetKit's threshold for
  /// acknowledging buffered hibernatable messages at once), so the gateway's buffer for the
  /// client does not grow by a second of a fast stream.
  static constexpr std::size_t kSaveBytes = 500'000;

  class Host {
   public:
    virtual ~Host() = default;
    /// Asks for a write at the end of the current turn.
    virtual void acks_need_save() = 0;
    /// Whether a reply queued now would be held back by a write under way or queued (one that
    /// changed something outputs depend on).
    virtual bool replies_held() const = 0;
    /// Runs `task` on the strand, keeping the owner alive until it ends.
    virtual void spawn_task(Task<void> task, const char* what) = 0;
  };

  MessageAcks(util::Clock& clock, Host& host);
  MessageAcks(const MessageAcks&) = delete;
  MessageAcks& operator=(const MessageAcks&) = delete;

  /// A message of connection `conn_id` was taken (`bytes` of it). `reply_follows`: a reply to
  /// it, message `index`, is about to be queued.
  void taken(const std::string& conn_id,
             std::size_t bytes,
             bool reply_follows,
             std::optional<std::uint16_t> index = std::nullopt);
  /// A write that holds outputs back carries `conn_id`'s record, saved with message `index`.
  void written(const std::string& conn_id, std::uint16_t index);
  /// The connection's record is gone.
  void forget(const std::string& conn_id);
  /// `write` was taken: the indexes of the records it carries (when it holds outputs back,
  /// `gating`) and the records it deletes, as written() and forget().
  void wrote(const storage::ActorWrite& write, bool gating);

  /// Whether the next write must hold outputs back because of a due index.
  bool gates_output() const { return gates_output_; }
  /// The connections whose record the next write carries: every due one when that write holds
  /// outputs back anyway (`write_gating`) or a save of indexes is due; else none yet.
  std::vector<std::string> take(bool write_gating);
  bool any_due() const { return !due_.empty(); }

 private:
  Task<void> delay();

  util::Clock& clock_;
  Host& host_;
  std::set<std::string> due_;
  /// Per connection, the index its record had in the latest write that holds outputs back.
  std::map<std::string, std::uint16_t, std::less<>> gated_index_;
  std::size_t due_bytes_ = 0;
  bool delay_armed_ = false;
  bool save_due_ = false;      // the delay ran out, or kSaveBytes wait
  bool gates_output_ = false;  // a reply waits for the next write (see the file comment)
};

}  // namespace rivetkit::core
