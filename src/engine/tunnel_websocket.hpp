#pragma once
// A client WebSocket carried through the engine's gateway (envoy-protocol.md §4.11), seen by the
// actor router as a plain net::WebSocket.
//
// - Outgoing frames become ToRivetWebSocketMessage with a per-socket index; close() sends
//   ToRivetWebSocketClose{hibernate: false}.
// - Incoming messages are numbered by the gateway; an index at or below the last one seen is a
//   re-send after a wake and is dropped.
// - A hibernatable socket acknowledges an inbound message only after its index is durable with
//   the connection record (the actor saves it, see resume_point(), and the store reports it via
//   ack_durable()), well inside the gateway's 30 s deadline. A message nobody saved within
//   kAckFallback is acknowledged anyway (logged), so a connection is never dropped for it.
// - Acknowledgements are cumulative, so they are sent at most once per kAckInterval per socket
//   (the first after a quiet interval at once, later ones batched at the interval's end), or at
//   once when kAckBytes of inbound data wait: under load an acknowledgement per message would
//   cost the engine a tunnel message per action. Nothing depends on it arriving sooner: what is
//   durable is known here (acked_index()), and a message the gateway re-sends after a wake is
//   dropped by its index.
// - While its actor sleeps the socket simply waits: the gateway holds the client. When the
//   engine starts the actor again with this request in `hibernatingRequests`, open() is sent
//   again and messages flow into the same session. If the actor moved to another process, that
//   process builds the socket from the persisted record (restored(): indexes from the record,
//   a skipped inbound index closes with ws.message_index_skip).
//
// Every member runs on the link's strand; the net::WebSocket functions are thread-safe.

#include "engine/envoy_link.hpp"
#include "net/websocket.hpp"

#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

namespace rivetkit::engine {

class TunnelWebSocket final : public net::WebSocket,
                              public std::enable_shared_from_this<TunnelWebSocket> {
 public:
  TunnelWebSocket(std::shared_ptr<EnvoyLink> link,
                  envoy::GatewayId gateway_id,
                  envoy::RequestId request_id,
                  bool can_hibernate);
  /// A hibernated socket resumed from its persisted record in this process.
  static std::shared_ptr<TunnelWebSocket> restored(std::shared_ptr<EnvoyLink> link,
                                                   envoy::GatewayId gateway_id,
                                                   envoy::RequestId request_id,
                                                   envoy::MessageIndex last_received,
                                                   envoy::MessageIndex next_sent);

  // net::WebSocket
  void send(net::WsMessage msg) override;
  void close(std::uint16_t code, std::string reason) override;
  Task<std::optional<net::WsMessage>> receive() override;
  net::WsCloseInfo close_info() const override;
  std::size_t buffered_bytes() const override { return 0; }
  std::optional<net::WsResumePoint> resume_point() const override;
  std::optional<std::uint16_t> acked_index() const override;

  // Driver side (on the link strand).
  /// Sends ToRivetWebSocketOpen (at open, and again when a hibernated socket is restored).
  void open();
  void on_message(envoy::MessageIndex index, net::WsMessage msg);
  void on_remote_close(std::uint16_t code, std::string reason);
  /// Inbound messages up to `index` are durable with the connection: acknowledge them.
  void ack_durable(envoy::MessageIndex index);
  bool can_hibernate() const { return can_hibernate_; }
  bool closed() const { return closed_; }

 private:
  envoy::MessageId next_id();
  void finish(std::uint16_t code, std::string reason);
  /// Sends the acknowledgement of acked_ now or at the end of the current interval.
  void send_ack_soon();
  void send_ack();

  std::shared_ptr<EnvoyLink> link_;
  envoy::GatewayId gateway_id_;
  envoy::RequestId request_id_;
  bool can_hibernate_;
  void arm_ack_fallback();

  std::atomic<envoy::MessageIndex> out_index_{0};
  std::optional<envoy::MessageIndex> last_in_;
  bool restored_ = false;
  bool opened_ = false;
  std::vector<net::WsMessage> unsent_;         // sends before open() (a restored socket)
  std::atomic<envoy::MessageIndex> taken_{0};  // last index handed to the session
  std::optional<envoy::MessageIndex> acked_;
  std::atomic<std::int32_t> acked_mirror_{-1};  // acked_ for other threads (-1: none)
  /// When the oldest message not yet acknowledged was taken.
  std::optional<boost::asio::steady_timer::time_point> unacked_since_;
  bool ack_fallback_armed_ = false;
  boost::asio::steady_timer ack_fallback_;
  /// The last index acknowledged to the gateway (acked_ is the last durable one), when, and
  /// how many inbound bytes arrived since.
  std::optional<envoy::MessageIndex> ack_sent_;
  std::optional<boost::asio::steady_timer::time_point> ack_sent_at_;
  std::size_t bytes_since_ack_ = 0;
  bool ack_timer_armed_ = false;
  boost::asio::steady_timer ack_timer_;
  std::deque<std::pair<envoy::MessageIndex, net::WsMessage>> inbox_;
  bool closed_ = false;
  net::WsCloseInfo close_info_;
  boost::asio::steady_timer wake_;
};

}  // namespace rivetkit::engine
