#pragma once
// What the runtime asks of the mode it runs in (local mode now, engine mode later). A driver
// owns actor placement: it decides when an instance starts and stops, keeps hibernated sockets
// while their actor sleeps, and wakes actors for their alarms. All calls come from an actor's
// strand and must not block.

#include "net/websocket.hpp"
#include "storage/actor_store.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace rivetkit::core {

class LifecycleDriver {
 public:
  virtual ~LifecycleDriver() = default;
  /// The actor asked to sleep (idle timeout or c.sleep()).
  virtual void request_sleep(const std::string& actor_id) = 0;
  /// The actor asked to be destroyed (c.destroy()).
  virtual void request_destroy(const std::string& actor_id) = 0;
  /// The earliest pending schedule is now `at_ms` (nullopt: none). The driver wakes the actor
  /// then if it is asleep. Called after the change is durable.
  virtual void alarm_changed(const std::string& actor_id, std::optional<std::int64_t> at_ms) = 0;
  /// The live socket of a hibernated connection, when its actor wakes (nullptr: gone). The
  /// record carries what a driver needs to resume a socket this process does not hold (engine
  /// mode: the tunnel ids and message indexes).
  virtual std::shared_ptr<net::WebSocket> hibernated_socket(
      const storage::PersistedConn& record) = 0;
};

}  // namespace rivetkit::core
