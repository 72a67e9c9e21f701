#pragma once
// ActionCaller: how a mode hands work to an actor it found, for actor-to-actor calls: an action
// or a queue send (ClientWork), or a connection's socket. Local mode hands it to the runtime in
// process (DispatchCaller); engine mode sends it through the engine's gateway, which runs it
// wherever the actor is placed.

#include "net/websocket.hpp"
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace rivetkit::core {

/// An action call; answered with the action's output.
struct ActionWork {
  std::string name;
  Array args;
};

/// A queue send; answered with RivetKit's reply document, {status: "completed" | "timedOut",
/// response?} (client-protocol.md §6.4).
struct QueueWork {
  std::string name;
  Value body;
  bool wait = false;
  std::optional<std::uint64_t> timeout_ms;
};

using ClientWork = std::variant<ActionWork, QueueWork>;

/// The reply document of a queue send.
inline Value queue_reply(bool timed_out, const std::optional<Value>& response) {
  Value doc{Object{}};
  doc.set("status", timed_out ? "timedOut" : "completed");
  if (response) {
    doc.set("response", *response);
  }
  return doc;
}

class ActionCaller {
 public:
  virtual ~ActionCaller() = default;
  /// Runs `work` on actor `actor_id` as a short-lived connection with `params`, waking the actor
  /// if it sleeps. The error is the callee's (or actor.not_found), unsanitized.
  virtual Task<Result<Value>> call(std::string actor_id, ClientWork work, Value params) = 0;

  /// Opens a WebSocket to `path` (with its query) of actor `actor_id`, offering `protocols` as a
  /// client does (client-protocol.md §6.8); the actor router serves it as any client's socket.
  /// An actor that cannot be reached is an error here, or the socket's first close.
  virtual Task<Result<std::shared_ptr<net::WebSocket>>> open_socket(
      std::string actor_id, std::string path, std::vector<std::string> protocols) = 0;

  /// Whether call_query runs this get / get-or-create query in one request, the mode resolving
  /// it on the way (engine mode's gateway does; local mode finds actors in process anyway).
  virtual bool routes_query(const detail::ActorQuery& query) const {
    (void)query;
    return false;
  }
  /// Runs `work` on the actor `query` names (only when routes_query said so).
  virtual Task<Result<Value>> call_query(detail::ActorQuery query, ClientWork work, Value params) {
    (void)query;
    (void)work;
    (void)params;
    co_return fail(
        Error{"core", "internal_error", "This mode does not route queries", std::nullopt, false});
  }
};

}  // namespace rivetkit::core
