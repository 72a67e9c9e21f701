#pragma once
// The actor router (client-protocol.md §6): the paths a client reaches inside one actor, the same
// in local and engine mode. The driver resolves the actor and the router path
// (`/action/increment`, `/connect`, `/request/x?y=1`, ...); the route table (route_table.cpp)
// picks the surface, and each surface, one file each, decodes the request, hands the work to the
// actor as a command (Runtime::dispatch) and encodes the reply:
//
//   POST /action/{name}    HTTP action, run on a short-lived connection     http_action.cpp
//   ANY  /request[/...]    raw HTTP to on_request                           raw_http.cpp
//   WS   /connect          the connection protocol (Init, actions, events)  connect_session.cpp
//   WS   /websocket[/...]  raw WebSocket to on_websocket (any other path) raw_websocket_session.cpp
//   ANY  /inspector/...    the inspector (token required; JSON)             inspector_http.cpp
//   GET  /metadata, /health, /   framework routes                           route_table.cpp
//
// Runs on the caller's executor; the runtime runs the commands on the actor's strand. Every
// response carries x-rivet-actor, x-rivet-actor-generation and x-rivet-actor-key.

#include "core/actor_instance.hpp"
#include "core/runtime.hpp"
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

/// One actor as the driver resolved it. The work goes through the runtime by actor id (the actor
/// may sleep and wake between a socket's messages); the instance the driver resolved gives the
/// identity for answers that need no actor work (framework routes, early errors).
struct ActorTarget {
  Runtime* runtime = nullptr;
  std::shared_ptr<ActorInstance> instance;
  /// Where hibernatable sockets wait while the actor sleeps.
  SocketRegistry* sockets = nullptr;
  /// Engine mode: the generation the gateway sent this request or WebSocket open to. The
  /// gateway sends an HTTP request again when its actor stops before answering, and fails a
  /// WebSocket whose actor stops before the open is acknowledged, so only that generation may
  /// run it (Runtime::dispatch); if it stopped first, an HTTP request's `unanswered` is set and
  /// the driver sends nothing, a socket is closed with actor.generation_gone.
  std::optional<std::uint32_t> generation;
  std::shared_ptr<bool> unanswered;

  const std::string& actor_id() const { return instance->actor_id(); }
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
  /// instance already restored its connection `conn_id` (ActorDriver::hibernated_socket)
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
