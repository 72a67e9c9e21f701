#pragma once
// WebSocket client (engine mode's envoy connection; plain ws:// for now). The returned socket
// implements net::WebSocket with the same contract as the server side (websocket.hpp,
// beast_websocket.hpp): thread-safe send()/close() whose frames leave in call order, a single
// consumer receive(), close_info() with the peer's close code and reason. Beast stays in
// ws_client.cpp and websocket.cpp (cpp-guide §2.1).
//
// Errors of connect_websocket are Error{group "net", code ...}: invalid_url, resolve_failed,
// connect_failed, timeout (TCP connect + opening handshake together exceeded
// WsConnectOptions::timeout), handshake_rejected (the server answered with a status other than
// 101; the message includes the status and the start of the body; metadata {"status": n}),
// handshake_failed (any other handshake failure, e.g. a bad Sec-WebSocket-Accept or a subprotocol
// the client did not offer).

#include "net/http_types.hpp"
#include "net/websocket.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rivetkit::net {

struct WsConnectOptions {
  std::string url;                            // ws://host:port/path?query
  std::vector<std::string> subprotocols;      // sent as Sec-WebSocket-Protocol, comma-separated
  Headers headers;                            // extra request headers
  std::chrono::milliseconds timeout{10'000};  // for connect + handshake
  std::size_t max_message_size = 64u << 20;   // larger incoming messages fail the socket (1009)
  /// Called once with the 101 response (status, lower-cased headers; e.g.
  /// `sec-websocket-protocol`, `x-rivet-ray-id`) before connect_websocket returns. Optional.
  std::function<void(const HttpResponse&)> on_handshake_response;
};

/// Connects, sets TCP_NODELAY, performs the opening handshake (no permessage-deflate, no
/// automatic pings, no idle timeout) and returns the started socket.
///
/// The socket runs on its own strand of `ex`'s execution context. Messages are sent unfragmented
/// and masked. Dropping the last reference to the returned socket closes it with 1000 (no
/// reason) if close() was not called; the closing handshake then finishes in the background.
/// close_info(), once receive() returned nullopt: the close frame's code and reason (ours if we
/// closed first, else the peer's; 1005 without a code), 1006 if the TCP connection ended without a
/// close frame, 1009 for an oversize message, 1002/1007 for protocol violations.
Task<Result<std::shared_ptr<WebSocket>>> connect_websocket(boost::asio::any_io_executor ex,
                                                           WsConnectOptions opts);

}  // namespace rivetkit::net
