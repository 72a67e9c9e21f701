#pragma once
// Connection: one client attached to an actor instance (core-semantics.md §4). Kinds:
// - kActorConnect: a `/connect` WebSocket speaking the client protocol (events, actions);
// - kHttp: the short-lived connection every HTTP action / queue send runs on;
// - kRawRequest / kRawWebSocket: the connection of a raw `/request` or `/websocket` call.
//
// Owned by its actor's ConnectionSet (core/actor/connection_set.hpp) and touched only on the
// actor's strand. Outgoing frames go through
// an outbox that releases each frame once the state write it follows is durable (the output
// gate), preserving order.

#include "net/websocket.hpp"
#include "protocol/client/messages.hpp"
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/http.hpp>
#include <rivetkit/websocket.hpp>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace rivetkit::core {

class ConnectionSet;

enum class ConnKind { kActorConnect, kHttp, kRawRequest, kRawWebSocket };

class Connection final : public detail::ConnApi {
 public:
  Connection(ConnectionSet& owner,
             std::string id,
             ConnKind kind,
             Value params,
             Request request,
             protocol::client::Encoding encoding,
             std::shared_ptr<net::WebSocket> transport);

  // detail::ConnApi
  const std::string& id() const override { return id_; }
  const Value& params() const override { return params_; }
  detail::UserConnData* user_data() override { return data_.get(); }
  void mark_state_dirty() override;
  void send(std::string event, Array args) override;
  void disconnect(std::string reason) override;
  bool is_hibernatable() const override { return hibernatable_; }
  const Request& request() const override { return request_; }

  /// Queues a frame behind the actor's current checkpoint (ConnectionSet::send_frame).
  void send_frame(net::WsMessage frame);

  ConnKind kind() const { return kind_; }
  void set_hibernatable(bool h) { hibernatable_ = h; }
  const std::set<std::string, std::less<>>& subscriptions() const { return subscriptions_; }
  const std::shared_ptr<net::WebSocket>& transport() const { return transport_; }
  /// The last inbound message index the transport's resume point names (engine mode), if any.
  std::optional<std::uint16_t> received_index() const;
  /// Forgets the transport without closing it (the actor sleeps; the driver keeps the socket).
  void detach() {
    transport_.reset();
    closed_ = true;
  }
  /// The raw-socket handle of a kRawWebSocket connection.
  std::shared_ptr<WebSocket::Impl> raw_socket;
  /// Ending it has begun (ActorInstance::end_connection) for it (its close handler runs once).
  bool ending = false;
  protocol::client::Encoding encoding() const { return encoding_; }
  void set_user_data(std::unique_ptr<detail::UserConnData> data) { data_ = std::move(data); }

  bool subscribed(const std::string& event) const { return subscriptions_.count(event) != 0; }
  void subscribe(std::string event);
  void unsubscribe(const std::string& event);

  /// Queues a frame to leave once save `needs_seq` is durable.
  void enqueue(net::WsMessage frame, std::uint64_t needs_seq);
  /// Sends every queued frame whose write is durable (called when durability advances).
  void release(std::uint64_t durable_seq);
  /// Drops queued frames that depend on a failed save (at or below `failed_seq`) and closes the
  /// connection: the client must not see output whose state was not persisted.
  void fail_pending(std::uint64_t failed_seq);
  /// Closes the transport (if any); further frames are dropped.
  void close(std::uint16_t code, std::string reason);
  bool closed() const { return closed_; }
  /// Nothing queued and no close waiting for the queue.
  bool flushed() const { return outbox_.empty() && !pending_close_; }

 private:
  ConnectionSet& owner_;
  std::string id_;
  ConnKind kind_;
  Value params_;
  Request request_;
  protocol::client::Encoding encoding_;
  std::shared_ptr<net::WebSocket> transport_;
  std::unique_ptr<detail::UserConnData> data_;
  std::set<std::string, std::less<>> subscriptions_;
  std::deque<std::pair<std::uint64_t, net::WsMessage>> outbox_;
  std::optional<std::pair<std::uint16_t, std::string>> pending_close_;
  bool closed_ = false;
  bool hibernatable_ = false;
};

}  // namespace rivetkit::core
