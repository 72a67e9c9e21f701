#pragma once
// ConnectionSet: the connections of one actor instance, what of them is stored, and how frames
// reach them (core-semantics.md §4 and §2.5).
//
// - Members: the live connections by id. A removed connection whose last frames still wait for
//   a write to become durable drains here until they have left, so its reply or close is not
//   lost with it.
// - Records: a hibernatable connection is stored (storage::PersistedConn: params, state,
//   subscriptions, the opening request, the socket's resume point) so it survives the actor's
//   sleep. Changes are collected here and taken into the instance's next write (take_changes);
//   a restored record becomes a connection again (restore).
// - Outputs: every frame queued for a connection carries the number of the write it depends on
//   (Host::output_seq, the output gate's checkpoint) and leaves once that write is durable
//   (release); a failed write closes the connections whose frames depended on it.
//
// The flows that run user hooks (connect, disconnect, messages) stay with the instance, which
// owns the hooks: this part runs no user code except restoring a connection's typed data.
// Single strand: every call on the owner's strand.

#include "core/connection.hpp"
#include "storage/actor_store.hpp"
#include <rivetkit/detail/runtime_api.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rivetkit::metrics {
class Counter;
class Gauge;
}  // namespace rivetkit::metrics

namespace rivetkit::core {

class ConnectionSet {
 public:
  using Map = std::map<std::string, std::shared_ptr<Connection>, std::less<>>;

  /// The owner's side.
  class Host {
   public:
    virtual ~Host() = default;
    /// A record changed: the next write must carry it (a save at the end of the turn).
    virtual void connections_changed() = 0;
    /// The write number a frame queued now must wait for (takes a checkpoint).
    virtual std::uint64_t output_seq() = 0;
    /// The highest write number that is durable.
    virtual std::uint64_t durable_seq() const = 0;
    /// A connection joined or left the set (the inspector's live view).
    virtual void members_changed() {}
  };

  /// `actor_name` labels the connection metrics (util/metrics.hpp).
  ConnectionSet(std::string actor_id,
                std::size_t max_outgoing_message_size,
                Host& host,
                std::string_view actor_name = "");
  ~ConnectionSet();
  ConnectionSet(const ConnectionSet&) = delete;
  ConnectionSet& operator=(const ConnectionSet&) = delete;

  // ---- members --------------------------------------------------------------------------------

  /// A new connection, owned by this set (its frames go through send_frame).
  std::shared_ptr<Connection> make(std::string id,
                                   ConnKind kind,
                                   Value params,
                                   Request request,
                                   protocol::client::Encoding encoding,
                                   std::shared_ptr<net::WebSocket> transport);
  void add(std::shared_ptr<Connection> conn);
  /// Removes `conn`: false when it is not a member (already removed). A hibernatable one's record
  /// is deleted by the next write; frames it still has queued leave once durable.
  bool remove(const std::shared_ptr<Connection>& conn);
  /// Drops a connection whose connect hook failed: no record, no drain.
  void discard(const std::string& conn_id);
  std::shared_ptr<Connection> find(std::string_view conn_id) const;
  const Map& live() const { return live_; }
  /// Whether the connections keep the actor awake: any that is not hibernatable does
  /// (hibernatable sockets wait in the driver while the actor sleeps).
  bool keep_awake() const;
  /// The connections a stop ends: every one on destroy, the non-hibernatable ones on sleep.
  /// Short-lived HTTP connections are left to the requests that own them.
  std::vector<std::shared_ptr<Connection>> ended_by_stop(bool destroying) const;
  /// The actor stopped: forgets every connection (hibernatable sockets stay with the driver).
  void clear();

  // ---- records --------------------------------------------------------------------------------

  /// The record of `conn_id` changed (state, subscriptions): rewritten by the next write.
  void mark_dirty(const std::string& conn_id);
  /// Puts the current records of these connections into `write` (their message indexes are
  /// due, core/actor/message_acks.hpp); ids that have no record are skipped.
  void add_records(const std::vector<std::string>& conn_ids, storage::ActorWrite& write) const;
  /// Moves the changed records and deletions into `write`.
  void take_changes(storage::ActorWrite& write);
  /// Every hibernatable connection with a socket is rewritten (the actor goes to sleep: their
  /// resume points must be current).
  void save_hibernating();
  /// The stored form of a connection.
  storage::PersistedConn record_of(const Connection& conn) const;
  /// A stored connection as a connection again (hibernatable), on `socket` (nullptr: it went
  /// away while the actor slept). nullptr when the record cannot be read: it is deleted by the
  /// next write. The caller adds it.
  std::shared_ptr<Connection> restore(const storage::PersistedConn& record,
                                      std::shared_ptr<net::WebSocket> socket,
                                      const detail::ActorHooks& hooks);

  // ---- outputs --------------------------------------------------------------------------------

  /// Queues a frame behind the current checkpoint.
  void send_frame(Connection& conn, net::WsMessage frame);
  void send_message(Connection& conn, const protocol::client::ToClient& msg);
  /// An event to one connect socket (dropped for other kinds and closed connections); one over
  /// the size limit closes the connection with message.outgoing_too_long.
  void send_event(Connection& conn, const std::string& name, const Array& args);
  /// An event to every subscribed connect socket, encoded once per encoding in use.
  void broadcast(const std::string& event, const Array& args);
  /// The output gate moved on: frames whose write is durable leave; those depending on a failed
  /// write (`failed` != 0) are dropped and their connection closed.
  void release(std::uint64_t durable, std::uint64_t failed);
  std::uint64_t durable_seq() const { return host_.durable_seq(); }

 private:
  std::string actor_id_;
  std::size_t max_outgoing_;
  Host& host_;
  metrics::Gauge& open_gauge_;  // live_.size(), summed over the actors of this name
  metrics::Counter& opened_;
  Map live_;
  /// Removed connections whose last frames (and close) still wait for a write to be durable.
  std::vector<std::shared_ptr<Connection>> draining_;
  std::vector<storage::PersistedConn> upserts_;
  std::vector<std::string> deletes_;
};

}  // namespace rivetkit::core
