// Beast WebSocket operations for the plain (TCP) stream: the explicit instantiation of
// BeastWebSocket<PlainWsStream> and the server handshake. The only TU that instantiates
// WebSocket read/write/close/accept on the plain stream (cpp-guide §2.1).

#include "net/beast_websocket.hpp"
#include "net/ws_accept.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/websocket/error.hpp>

#include <utility>

namespace rivetkit::net::detail {

namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
namespace asio = boost::asio;

std::string truncate_utf8(std::string reason, std::size_t max) {
  if (reason.size() <= max) {
    return reason;
  }
  std::size_t cut = max;
  // Step back over continuation bytes (10xxxxxx) so the cut lands on a sequence start.
  while (cut > 0 && (static_cast<unsigned char>(reason[cut]) & 0xC0u) == 0x80u) {
    --cut;
  }
  reason.resize(cut);
  return reason;
}

std::uint16_t sendable_close_code(std::uint16_t code) {
  if (code == 1005) {
    return code;  // sent as a close frame without a code
  }
  if (is_valid_close_code(code)) {
    // 1014 is valid per IANA but Beast peers reject it; keep it off the wire.
    return code == 1014 ? std::uint16_t{1011} : code;
  }
  return 1011;
}

std::uint16_t close_code_for_read_error(const boost::system::error_code& ec) {
  if (ec == websocket::error::message_too_big) {
    return 1009;
  }
  if (ec == websocket::error::bad_frame_payload) {
    return 1007;
  }
  if (ec == websocket::condition::protocol_violation) {
    return 1002;
  }
  return 1006;
}

Task<std::shared_ptr<WebSocket>> accept_server_websocket(
    beast::tcp_stream stream,
    beast::http::request<beast::http::string_body> request,
    WsAcceptOptions options) {
  // The websocket stream has its own timeouts; the tcp_stream deadline must be off.
  stream.expires_never();
  auto socket = std::make_shared<BeastWebSocket<PlainWsStream>>(PlainWsStream(std::move(stream)));
  PlainWsStream& ws = socket->stream();
  ws.set_option(ws_timeouts(options.handshake_timeout));
  ws.set_option(websocket::permessage_deflate{});  // defaults: never negotiated
  ws.read_message_max(options.max_message_bytes);
  socket->set_send_backlog_limit(options.max_send_backlog_bytes, options.send_stall_timeout);
  ws.auto_fragment(false);
  ws.set_option(websocket::stream_base::decorator(
      [subprotocol = options.subprotocol,
       extra = options.extra_headers](websocket::response_type& res) {
        if (subprotocol) {
          res.set(beast::http::field::sec_websocket_protocol, *subprotocol);
        }
        for (const auto& h : extra) {
          res.insert(h.name, h.value);
        }
      }));
  auto [ec] = co_await ws.async_accept(request, asio::as_tuple(asio::use_awaitable));
  if (ec) {
    log::debug("websocket handshake failed: {}", ec.message());
    co_return nullptr;
  }
  socket->start();
  co_return socket;
}

template class BeastWebSocket<PlainWsStream>;

}  // namespace rivetkit::net::detail
