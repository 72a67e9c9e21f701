#pragma once
// Server-side WebSocket handshake (INTERNAL to src/net). Declared apart from beast_websocket.hpp
// so http_server.cpp does not instantiate any WebSocket operation: those all live in
// websocket.cpp (cpp-guide §2.1: each Beast operation set is instantiated in one TU).

#include "net/http_types.hpp"
#include "net/websocket.hpp"
#include <rivetkit/task.hpp>

#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace rivetkit::net::detail {

struct WsAcceptOptions {
  std::optional<std::string> subprotocol;  // Sec-WebSocket-Protocol of the 101, if any
  Headers extra_headers;                   // added to the 101
  std::size_t max_message_bytes = 0;       // read_message_max
  std::size_t max_send_backlog_bytes =
      0;  // queued outgoing bytes before the socket closes (0: no cap)
  // With a cap: reading pauses past half of it; a pause this long without progress closes.
  std::chrono::milliseconds send_stall_timeout{30'000};
  std::chrono::steady_clock::duration handshake_timeout = std::chrono::seconds(30);
};

/// Completes the upgrade for `request` (already read from `stream`) and returns the started
/// socket, or nullptr if the handshake failed (Beast then answered with an HTTP error status).
/// Must run on the stream's strand; the socket keeps using that strand.
/// permessage-deflate is never negotiated, whatever the client offers.
Task<std::shared_ptr<WebSocket>> accept_server_websocket(
    boost::beast::tcp_stream stream,
    boost::beast::http::request<boost::beast::http::string_body> request,
    WsAcceptOptions options);

}  // namespace rivetkit::net::detail
