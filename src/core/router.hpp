#pragma once
// The actor router (client-protocol.md §6): the paths a client reaches inside one actor, the same
// in local and engine mode. The driver resolves the actor and the router path
// (`/action/increment`, `/connect`, `/request/x?y=1`, ...), and the router does the rest:
//
//   POST /action/{name}    HTTP action, run on a short-lived connection
//   ANY  /request[/...]    raw HTTP to on_request
//   WS   /connect          the connection protocol (Init, actions, subscriptions, events)
//   WS   /websocket[/...]  raw WebSocket to on_websocket (any path but /connect)
//   GET  /metadata, /health, /   framework routes
//
// Runs on the caller's executor and hops to the actor's strand for actor work. Every response
// carries x-rivet-actor, x-rivet-actor-generation and x-rivet-actor-key.

#include "core/actor_instance.hpp"
#include "core/socket_registry.hpp"
#include "net/http_types.hpp"
#include "net/websocket.hpp"
#include "protocol/client/messages.hpp"
#include <rivetkit/task.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace rivetkit::core {

/// What the client asked for in its WebSocket subprotocols (client-protocol.md §6.8).
struct WsProtocols {
  std::optional<std::string> encoding;     // value after "rivet_encoding."
  std::optional<std::string> conn_params;  // percent-decoded JSON after "rivet_conn_params."
  bool offered_any = false;
  bool offered_rivet = false;
};
WsProtocols parse_ws_protocols(const net::HttpRequest& req);

/// One actor as the driver resolved it, and how to find it again: work that meets a stopping
/// instance re-resolves (waking the actor) and runs on the next instance; socket sessions
/// re-resolve for every message, because the actor may sleep between messages.
struct ActorTarget {
  using Resolver = std::function<Task<Result<std::shared_ptr<ActorInstance>>>()>;
  std::shared_ptr<ActorInstance> instance;
  Resolver resolve;
  /// Where hibernatable sockets wait while the actor sleeps.
  SocketRegistry* sockets = nullptr;
};

class ActorRouter {
 public:
  /// `path` is the router path with its query string.
  static Task<net::HttpResponse> handle_http(ActorTarget target,
                                             net::HttpRequest request,
                                             std::string path);
  static Task<void> handle_websocket(ActorTarget target,
                                     net::HttpRequest request,
                                     std::string path,
                                     std::shared_ptr<net::WebSocket> socket);

  /// Runs the session of a hibernated socket this process did not hold before: the actor's new
  /// instance already restored its connection `conn_id` (LifecycleDriver::hibernated_socket)
  /// and the socket carries the client's next messages (engine mode, after the actor moved).
  static Task<void> resume_websocket(ActorTarget target,
                                     std::string conn_id,
                                     bool raw,
                                     protocol::client::Encoding encoding,
                                     std::shared_ptr<net::WebSocket> socket);

  /// An error response in the request's encoding (router errors use the x-rivet-encoding of the
  /// request; status from public_status_code).
  static net::HttpResponse error_response(const Error& error,
                                          protocol::client::Encoding encoding,
                                          const ActorInstance* instance);
};

}  // namespace rivetkit::core
