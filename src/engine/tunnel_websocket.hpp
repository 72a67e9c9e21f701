#pragma once
// A client WebSocket carried through the engine's gateway (envoy-protocol.md §4.11), seen by the
// actor router as a plain net::WebSocket.
//
// - Outgoing frames become ToRivetWebSocketMessage with a per-socket index; close() sends
//   ToRivetWebSocketClose{hibernate: false}.
// - Incoming messages are numbered by the gateway; an index at or below the last one seen is a
//   re-send after a wake and is dropped. A hibernatable socket acknowledges each message once
//   the router has taken it, well inside the gateway's 30 s deadline.
// - While its actor sleeps the socket simply waits: the gateway holds the client, and when the
//   engine starts the actor again with this request in `hibernatingRequests` the driver calls
//   reopen() and messages flow again into the same session.
//
// Every member runs on the link's strand; the net::WebSocket functions are thread-safe.

#include "engine/envoy_link.hpp"
#include "net/websocket.hpp"

#include <boost/asio/steady_timer.hpp>

#include <deque>
#include <memory>

namespace rivetkit::engine {

class TunnelWebSocket final : public net::WebSocket,
                              public std::enable_shared_from_this<TunnelWebSocket> {
 public:
  TunnelWebSocket(std::shared_ptr<EnvoyLink> link,
                  envoy::GatewayId gateway_id,
                  envoy::RequestId request_id,
                  bool can_hibernate);

  // net::WebSocket
  void send(net::WsMessage msg) override;
  void close(std::uint16_t code, std::string reason) override;
  Task<std::optional<net::WsMessage>> receive() override;
  net::WsCloseInfo close_info() const override;
  std::size_t buffered_bytes() const override { return 0; }

  // Driver side (on the link strand).
  /// Sends ToRivetWebSocketOpen (at open, and again when a hibernated socket is restored).
  void open();
  void on_message(envoy::MessageIndex index, net::WsMessage msg);
  void on_remote_close(std::uint16_t code, std::string reason);
  bool can_hibernate() const { return can_hibernate_; }
  bool closed() const { return closed_; }

 private:
  envoy::MessageId next_id();
  void finish(std::uint16_t code, std::string reason);

  std::shared_ptr<EnvoyLink> link_;
  envoy::GatewayId gateway_id_;
  envoy::RequestId request_id_;
  bool can_hibernate_;
  envoy::MessageIndex out_index_ = 0;
  std::optional<envoy::MessageIndex> last_in_;
  std::deque<std::pair<envoy::MessageIndex, net::WsMessage>> inbox_;
  bool closed_ = false;
  net::WsCloseInfo close_info_;
  boost::asio::steady_timer wake_;
};

}  // namespace rivetkit::engine
