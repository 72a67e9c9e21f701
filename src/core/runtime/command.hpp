#pragma once
// Work for one actor: the closed set of commands that reach an actor from outside it, whether a
// client sent them through a driver (local or engine mode) or another actor did. Each command
// names its reply type; Runtime::dispatch hands a command to the actor's current instance (waking
// or waiting for it) and answers with that reply (core/runtime/actor_slot.hpp).
//
// A new kind of work is a new struct here, a case in core/runtime/command_runner.cpp and a
// surface in core/router/.

#include "core/connection.hpp"
#include "core/inspector/inspector_request.hpp"
#include "net/websocket.hpp"
#include "protocol/client/messages.hpp"
#include <rivetkit/http.hpp>
#include <rivetkit/value.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

namespace rivetkit::core {

class ActorInstance;

/// A connection that opened: its id, and whether it survives the actor's sleep.
struct OpenedConnection {
  std::string conn_id;
  bool hibernatable = false;
};

/// The message was taken by the instance that holds the connection.
struct Delivered {};

/// An action over HTTP, on a connection that lives for the call (client-protocol.md §6.3). The
/// reply leaves once the state it depends on is durable.
struct HttpActionCommand {
  using Reply = Value;
  Value params;
  Request request;
  protocol::client::Encoding encoding = protocol::client::Encoding::kJson;
  std::string name;
  Array args;
};

/// What a queue send answers (client-protocol.md §6.4): completed, with the consumer's response
/// when the sender waited for it, or timed out waiting.
struct QueueSent {
  bool timed_out = false;
  std::optional<Value> response;
};

/// A message for one of the actor's queues (`POST /queue/{name}`, `handle.send`), on a connection
/// that lives for the send: the connection hooks run as for an action. `wait`: the reply waits
/// for the consumer to complete the message (at most `timeout_ms`, and the action timeout).
struct QueueSendCommand {
  using Reply = QueueSent;
  Value params;
  Request request;
  protocol::client::Encoding encoding = protocol::client::Encoding::kJson;
  std::string name;
  Value body;
  bool wait = false;
  std::optional<std::uint64_t> timeout_ms;
};

/// A raw HTTP request for on_request, on a connection that lives for the request.
struct RawRequestCommand {
  using Reply = Response;
  Value params;
  Request request;
};

/// Opens a connection over `socket`: kActorConnect (the connection protocol: the client gets
/// Init) or kRawWebSocket (on_websocket gets the socket).
struct OpenConnectionCommand {
  using Reply = OpenedConnection;
  ConnKind kind = ConnKind::kActorConnect;
  Value params;
  Request request;
  protocol::client::Encoding encoding = protocol::client::Encoding::kJson;
  std::shared_ptr<net::WebSocket> socket;
};

/// A frame of the connection protocol from the client of `conn_id`. Fails with
/// actor.connection_lost when no instance holds that connection any more.
struct ConnectionMessageCommand {
  using Reply = Delivered;
  std::string conn_id;
  protocol::client::ToServer message;
};

/// A message on the raw WebSocket of `conn_id` (same failure as ConnectionMessageCommand).
struct RawMessageCommand {
  using Reply = Delivered;
  std::string conn_id;
  net::WsMessage message;
};

/// The socket of `conn_id` closed. The instance that holds the connection ends it (close
/// handler, on_disconnect). `wake`: a hibernatable connection outlives its instance, so the
/// actor is woken if it sleeps and its next instance ends it; otherwise an actor that is not
/// running has nothing to end. The reply says whether an instance ended the connection.
struct ConnectionClosedCommand {
  using Reply = bool;
  std::string conn_id;
  std::uint16_t code = 1005;
  std::string reason;
  bool wake = false;
};

/// A request of the actor's inspector (core/inspector), with the token it presented. RunAction
/// runs on a connection that lives for the call, as an HTTP action.
struct InspectorCommand {
  using Reply = Value;
  std::optional<std::string> token;
  /// The token was checked when the inspector WebSocket this request came on attached.
  bool preauthorized = false;
  inspector::InspectorRequest request;
  Value params;
  protocol::client::Encoding encoding = protocol::client::Encoding::kJson;
};

using Command = std::variant<HttpActionCommand,
                             QueueSendCommand,
                             RawRequestCommand,
                             OpenConnectionCommand,
                             ConnectionMessageCommand,
                             RawMessageCommand,
                             ConnectionClosedCommand,
                             InspectorCommand>;

using Reply = std::variant<Value, QueueSent, Response, OpenedConnection, Delivered, bool>;

/// What a dispatch answers: the command's reply or the error that refused or failed it, and the
/// instance that ran it (nullptr when none did), whose identity goes into the response headers.
template <class T>
struct Dispatched {
  Result<T> result;
  std::shared_ptr<ActorInstance> instance;
};

}  // namespace rivetkit::core
