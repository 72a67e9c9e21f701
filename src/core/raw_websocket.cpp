#include "core/raw_websocket.hpp"

#include "net/websocket.hpp"

#include <stdexcept>
#include <string>

namespace rivetkit {

namespace {
void send_frame(const std::shared_ptr<WebSocket::Impl>& impl, net::WsMessage msg) {
  auto owner = impl->owner.lock();
  auto conn = impl->conn.lock();
  if (owner && conn) {
    conn->send_frame(std::move(msg));
  }
}
}  // namespace

void WebSocket::send(std::string_view text) const {
  send_frame(impl_, net::WsMessage{false, std::string(text)});
}

void WebSocket::send_binary(std::string_view data) const {
  send_frame(impl_, net::WsMessage{true, std::string(data)});
}

void WebSocket::close(std::uint16_t code, std::string reason) const {
  if (!net::is_valid_close_code(code)) {
    // Never put a reserved or undefined code on the wire: the peer would fail the connection.
    throw std::invalid_argument("WebSocket close code " + std::to_string(code)
                                + " may not be sent (RFC 6455 §7.4: use 1000-1003, 1007-1014 or "
                                  "3000-4999)");
  }
  if (auto conn = impl_->conn.lock()) {
    conn->close(code, std::move(reason));
  }
}

void WebSocket::set_message_handler(std::function<Task<void>(WebSocketMessage)> handler) const {
  impl_->on_message = std::move(handler);
}

void WebSocket::set_close_handler(
    std::function<Task<void>(std::uint16_t, std::string)> handler) const {
  impl_->on_close = std::move(handler);
}

const Request& WebSocket::request() const {
  return impl_->request;
}

bool WebSocket::restored() const {
  return impl_->restored;
}

}  // namespace rivetkit
