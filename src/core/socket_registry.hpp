#pragma once
// Where the sockets of hibernatable connections wait while their actor sleeps. The socket session
// (router) registers a socket under its connection id for as long as the socket is open; an
// instance that wakes looks its hibernated connections up here (ActorDriver::
// hibernated_socket). Thread-safe.

#include "net/websocket.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace rivetkit::core {

class SocketRegistry {
 public:
  void add(const std::string& conn_id, const std::shared_ptr<net::WebSocket>& socket) {
    std::lock_guard lock(mutex_);
    sockets_[conn_id] = socket;
  }
  void remove(const std::string& conn_id) {
    std::lock_guard lock(mutex_);
    sockets_.erase(conn_id);
    // After a burst of connections, give the bucket array back once most of them are gone.
    if (sockets_.bucket_count() > 64 && sockets_.size() * 8 < sockets_.bucket_count()) {
      sockets_.rehash(0);
    }
  }
  std::shared_ptr<net::WebSocket> find(const std::string& conn_id) const {
    std::lock_guard lock(mutex_);
    auto it = sockets_.find(conn_id);
    return it == sockets_.end() ? nullptr : it->second.lock();
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return sockets_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::weak_ptr<net::WebSocket>> sockets_;
};

}  // namespace rivetkit::core
