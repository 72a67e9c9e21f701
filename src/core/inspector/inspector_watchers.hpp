#pragma once
// InspectorWatchers: the inspector WebSockets attached to one actor instance, and what they are
// told as it happens (core-semantics.md §9): StateUpdated when a write carried a changed state,
// ConnectionsUpdated when a connection opened or ended, QueueUpdated when the queue's size
// changed. Signals within 50 ms go out together, in the order they first happened, each with the
// value of the moment they are sent (RivetKit's serialize debounce).
//
// While a socket is attached the actor does not idle-sleep (someone is watching it); a stop
// closes every attached socket (1001, the client reconnects and wakes the actor).
//
// Single strand: every call on the owner's strand.

#include "net/websocket.hpp"
#include "protocol/inspector/inspector_messages.hpp"
#include "util/clock.hpp"
#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core::inspector {

class InspectorWatchers {
 public:
  /// The owner's side: the current values pushes carry.
  class Host {
   public:
    virtual ~Host() = default;
    virtual std::optional<std::string> inspector_state() = 0;
    virtual std::vector<protocol::inspector::Connection> inspector_connections() = 0;
    virtual std::uint64_t inspector_queue_size() = 0;
    /// The workflow's history as the WebSocket carries it (none: no workflow, or not loaded).
    virtual std::optional<std::string> inspector_workflow_history() = 0;
    /// The last socket went (the idle rule applies again).
    virtual void inspector_detached() = 0;
    /// Runs `task` in the background on the owner's strand while the owner lives.
    virtual void inspector_spawn(Task<void> task) = 0;
  };

  /// How a socket speaks: its protocol version, and whether frames carry it (legacy framing).
  struct Wire {
    std::uint16_t version = protocol::inspector::kMaxVersion;
    bool embedded = false;
  };

  static constexpr std::chrono::milliseconds kDebounce{50};

  InspectorWatchers(util::Clock& clock, Host& host);
  InspectorWatchers(const InspectorWatchers&) = delete;
  InspectorWatchers& operator=(const InspectorWatchers&) = delete;

  /// Encodes `message` for `wire`.
  static std::string encode(const protocol::inspector::ToClient& message, Wire wire);

  void attach(std::shared_ptr<net::WebSocket> socket, Wire wire);
  void detach(const net::WebSocket* socket);
  bool empty() const { return sockets_.empty(); }
  std::size_t size() const { return sockets_.size(); }

  void state_changed() { signal(Kind::kState); }
  void connections_changed() { signal(Kind::kConnections); }
  void queue_changed();
  void workflow_changed() { signal(Kind::kWorkflow); }

  /// The instance stops: every attached socket is closed.
  void close_all(std::uint16_t code, std::string reason);

 private:
  enum class Kind : std::uint8_t { kState, kConnections, kQueue, kWorkflow };
  struct Attached {
    std::shared_ptr<net::WebSocket> socket;
    Wire wire;
  };

  void signal(Kind kind);
  Task<void> flush_later();
  void flush();
  void send_all(const protocol::inspector::ToClient& message);

  util::Clock& clock_;
  Host& host_;
  std::vector<Attached> sockets_;
  std::vector<Kind> pending_;  // in the order first signalled
  bool flush_armed_ = false;
  std::optional<std::uint64_t> last_queue_size_;
};

}  // namespace rivetkit::core::inspector
