#include "core/inspector/inspector_watchers.hpp"

#include <algorithm>

namespace rivetkit::core::inspector {

namespace wire = protocol::inspector;

InspectorWatchers::InspectorWatchers(util::Clock& clock, Host& host) : clock_(clock), host_(host) {}

std::string InspectorWatchers::encode(const wire::ToClient& message, Wire w) {
  return w.embedded ? wire::encode_to_client_embedded(message, w.version)
                    : wire::encode_to_client(message, w.version);
}

void InspectorWatchers::attach(std::shared_ptr<net::WebSocket> socket, Wire w) {
  sockets_.push_back(Attached{std::move(socket), w});
  if (!last_queue_size_) {
    last_queue_size_ = host_.inspector_queue_size();
  }
}

void InspectorWatchers::detach(const net::WebSocket* socket) {
  const auto before = sockets_.size();
  std::erase_if(sockets_, [socket](const Attached& a) { return a.socket.get() == socket; });
  if (before != sockets_.size() && sockets_.empty()) {
    pending_.clear();
    last_queue_size_.reset();
    host_.inspector_detached();
  }
}

void InspectorWatchers::queue_changed() {
  if (sockets_.empty()) {
    return;
  }
  signal(Kind::kQueue);
}

void InspectorWatchers::signal(Kind kind) {
  if (sockets_.empty()) {
    return;  // nobody watches: nothing is kept
  }
  if (std::find(pending_.begin(), pending_.end(), kind) == pending_.end()) {
    pending_.push_back(kind);
  }
  if (!flush_armed_) {
    flush_armed_ = true;
    host_.inspector_spawn(flush_later());
  }
}

Task<void> InspectorWatchers::flush_later() {
  auto wait = clock_.wait_for(kDebounce);
  co_await std::move(wait);
  flush_armed_ = false;
  flush();
}

void InspectorWatchers::flush() {
  auto kinds = std::exchange(pending_, {});
  for (Kind kind : kinds) {
    if (sockets_.empty()) {
      return;
    }
    switch (kind) {
      case Kind::kState:
        if (auto state = host_.inspector_state()) {
          send_all(wire::StateUpdated{std::move(*state)});
        }
        break;
      case Kind::kConnections:
        send_all(wire::ConnectionsUpdated{host_.inspector_connections()});
        break;
      case Kind::kWorkflow:
        if (auto history = host_.inspector_workflow_history()) {
          send_all(wire::WorkflowHistoryUpdated{std::move(*history)});
        }
        break;
      case Kind::kQueue: {
        const auto size = host_.inspector_queue_size();
        if (size != last_queue_size_) {
          last_queue_size_ = size;
          send_all(wire::QueueUpdated{size});
        }
        break;
      }
    }
  }
}

void InspectorWatchers::send_all(const wire::ToClient& message) {
  for (const auto& a : sockets_) {
    a.socket->send(net::WsMessage{true, encode(message, a.wire)});
  }
}

void InspectorWatchers::close_all(std::uint16_t code, std::string reason) {
  auto sockets = std::exchange(sockets_, {});
  pending_.clear();
  for (auto& a : sockets) {
    a.socket->close(code, reason);
  }
}

}  // namespace rivetkit::core::inspector
