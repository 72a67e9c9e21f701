#pragma once
// The implementation behind the public rivetkit::WebSocket handle given to on_websocket.
// Lives on the actor's strand; sends go through the connection's output gate.

#include <rivetkit/websocket.hpp>

#include <functional>
#include <memory>

#include "core/actor_instance.hpp"
#include "core/connection.hpp"

namespace rivetkit {

class WebSocket::Impl {
 public:
  Impl(std::shared_ptr<core::ActorInstance> owner, std::shared_ptr<core::Connection> connection)
      : instance(std::move(owner)), conn(std::move(connection)) {}

  std::shared_ptr<core::ActorInstance> instance;
  std::shared_ptr<core::Connection> conn;
  std::function<Task<void>(WebSocketMessage)> on_message;
  std::function<void(std::uint16_t, std::string)> on_close;
};

}  // namespace rivetkit
