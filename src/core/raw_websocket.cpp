#include "core/raw_websocket.hpp"

namespace rivetkit {

void WebSocket::send(std::string_view text) const {
  impl_->instance->send_frame(*impl_->conn, net::WsMessage{false, std::string(text)});
}

void WebSocket::send_binary(std::string_view data) const {
  impl_->instance->send_frame(*impl_->conn, net::WsMessage{true, std::string(data)});
}

void WebSocket::close(std::uint16_t code, std::string reason) const {
  impl_->conn->close(code, std::move(reason));
}

void WebSocket::set_message_handler(std::function<Task<void>(WebSocketMessage)> handler) const {
  impl_->on_message = std::move(handler);
}

void WebSocket::on_close(std::function<void(std::uint16_t, std::string)> handler) const {
  impl_->on_close = std::move(handler);
}

const Request& WebSocket::request() const { return impl_->conn->request(); }

}  // namespace rivetkit
