#pragma once
// The implementation behind the public rivetkit::WebSocket handle given to on_websocket.
// Lives on the actor's strand; sends go through the connection's output gate. It holds only weak
// references, so a handle kept by user code never keeps an instance or connection alive.

#include "core/connection.hpp"
#include <rivetkit/websocket.hpp>

#include <functional>
#include <memory>

namespace rivetkit {

class WebSocket::Impl {
 public:
  Impl(std::weak_ptr<void> owner_of_conn, std::weak_ptr<core::Connection> connection, Request req)
      : owner(std::move(owner_of_conn)), conn(std::move(connection)), request(std::move(req)) {}

  /// The actor instance that owns the connection (a send needs both alive).
  std::weak_ptr<void> owner;
  std::weak_ptr<core::Connection> conn;
  Request request;
  bool restored = false;
  std::function<Task<void>(WebSocketMessage)> on_message;
  std::function<Task<void>(std::uint16_t, std::string)> on_close;
};

}  // namespace rivetkit
