#pragma once
// ActorDriver: what the runtime asks of the mode it runs in (local mode: src/local/local_driver.*;
// engine mode: src/engine/envoy_driver.*). A driver owns actor placement: it carries out the
// stops actors ask for, keeps hibernated sockets while their actor sleeps, wakes actors for their
// alarms and for work (Runtime::dispatch), and says where each generation of an actor keeps its
// data (storage_for). Where a mode keeps its actors is the other interface, core/directory.hpp.
// Calls other than wake() come from an actor's strand; those that are not coroutines must not
// block.

#include "net/websocket.hpp"
#include "storage/actor_store.hpp"
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace rivetkit::core {

class ActorDriver {
 public:
  virtual ~ActorDriver() = default;
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
  /// Work arrived for an actor with no instance here: start it (local mode), or ask for its start
  /// (engine mode: the engine starts it here or elsewhere). The runtime's slot waits for the
  /// instance; an error ends that wait (actor.not_found: there is no such actor).
  virtual Task<Result<void>> wake(std::string actor_id) = 0;
  /// Where one generation of an actor keeps its data, asked once per start (from the actor's
  /// strand, before the instance loads). Local mode: the actor's rows in the process's SQLite
  /// store; engine mode: the actor's engine KV, fenced by generation, with the create input the
  /// engine's start command carried. An error fails the start.
  virtual Task<Result<std::unique_ptr<storage::ActorStore>>> storage_for(
      std::string actor_id, std::uint32_t generation) = 0;
  /// The client actors of this mode call other actors with (`c.client()`; core/client/). It
  /// outlives every instance.
  virtual detail::ClientApi& actor_client() = 0;
};

}  // namespace rivetkit::core
