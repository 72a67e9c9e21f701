#pragma once
// A message-oriented WebSocket, independent of how it is carried. Local mode implements it over a
// Beast socket (this module); engine mode over the envoy tunnel. The actor router only sees this.

#include <rivetkit/task.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace rivetkit::net {

struct WsMessage {
  bool binary = false;
  std::string data;
  /// Inbound only: the message's index on a hibernatable socket (engine mode: the gateway's
  /// numbering; local mode: assigned by the socket session), else nullopt.
  std::optional<std::uint16_t> index = std::nullopt;
};

/// Where a socket carried through a gateway tunnel stands (engine mode, envoy-protocol.md §4.11):
/// enough to persist with its connection and resume it, possibly in another process, after the
/// actor slept. Plain sockets have none.
struct WsResumePoint {
  /// The transport's own id of the socket, opaque to everything but the driver that made it
  /// (engine mode: the gateway id and the request id, 8 bytes): what finds the socket again.
  std::string tunnel_id;
  /// The last inbound message index handed to the application.
  std::uint16_t last_received = 0;
  /// The next outbound message index.
  std::uint16_t next_sent = 0;
};

/// RFC 6455 §7.4: the codes an endpoint may put in a close frame (1000-1003, 1007-1014 and
/// 3000-4999). 1004-1006 and 1015 are reserved, 1016-2999 unassigned, <1000 and >4999 undefined.
constexpr bool is_valid_close_code(std::uint16_t code) {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014)
         || (code >= 3000 && code <= 4999);
}

struct WsCloseInfo {
  std::uint16_t code = 1005;  // 1005: no status received; 1006: abnormal (no close frame)
  std::string reason;
};

/// Contract:
/// - send() and close() are thread-safe and never block; frames leave in call order.
/// - close() sends the close frame after every frame queued before it; later sends are dropped.
/// - receive() has a single consumer; it returns nullopt once the socket is closed (by either side
///   or by an error), after which close_info() tells why.
class WebSocket {
 public:
  virtual ~WebSocket() = default;
  virtual void send(WsMessage msg) = 0;
  virtual void close(std::uint16_t code, std::string reason) = 0;
  virtual Task<std::optional<WsMessage>> receive() = 0;
  virtual WsCloseInfo close_info() const = 0;
  /// Number of bytes queued but not yet written (for back-pressure decisions).
  virtual std::size_t buffered_bytes() const = 0;
  /// Thread-safe. nullopt for sockets that cannot be resumed elsewhere.
  virtual std::optional<WsResumePoint> resume_point() const { return std::nullopt; }
  /// Thread-safe. The last inbound index acknowledged to the gateway (engine mode, hibernatable
  /// sockets), or nullopt: nothing acknowledged yet, or nothing to acknowledge (local sockets).
  virtual std::optional<std::uint16_t> acked_index() const { return std::nullopt; }
};

}  // namespace rivetkit::net
