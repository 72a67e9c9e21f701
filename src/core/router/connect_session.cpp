// WS /connect: the connection protocol (client-protocol.md §6.6): Init, actions, subscriptions
// and events over one socket.

#include "core/router/surfaces.hpp"
#include "util/log.hpp"

namespace rivetkit::core::router {

namespace client = protocol::client;

Task<void> connect(ActorTarget target,
                   net::HttpRequest req,
                   std::string search,
                   std::shared_ptr<net::WebSocket> socket) {
  WsProtocols protocols = parse_ws_protocols(req);
  auto encoding = client::parse_encoding(protocols.encoding.value_or("json"));
  if (!encoding) {
    socket->close(1003, "actor.unsupported_websocket_encoding");
    co_return;
  }
  auto send_error = [&](const Error& e, const ActorInstance* instance) {
    // Setup errors are sent as they are (core does not mask them), then the socket closes.
    socket->send(net::WsMessage{
        !client::is_text(*encoding),
        client::encode_to_client(*encoding,
                                 client::ToClient{to_error_message(e, std::nullopt, instance)})});
    socket->close(1011, e.qualified_code());
  };
  auto params = parse_params(protocols.conn_params);
  if (!params) {
    send_error(params.error(), target.instance.get());
    co_return;
  }
  OpenConnectionCommand command;
  command.kind = ConnKind::kActorConnect;
  command.params = std::move(*params);
  command.request = to_user_request(req, "/connect", std::move(search));
  command.encoding = *encoding;
  command.socket = socket;
  // Engine mode: the open runs only on the generation it was sent to (ActorTarget::generation).
  auto open_op = target.runtime->dispatch(target.actor_id(), std::move(command), target.generation);
  auto opened = co_await std::move(open_op);
  if (!opened.result) {
    send_error(opened.result.error(), answered_by(target, opened.instance));
    co_return;
  }
  auto session_op =
      connect_session(std::move(target), std::move(opened.result->conn_id), *encoding, socket);
  co_await std::move(session_op);
}

// The message loop of a `/connect` socket whose connection exists: registers the socket for
// hibernation, hands each frame to the actor, and ends the connection at close.
Task<void> connect_session(ActorTarget target,
                           std::string conn_id,
                           client::Encoding encoding,
                           std::shared_ptr<net::WebSocket> socket) {
  if (target.sockets != nullptr) {
    target.sockets->add(conn_id, socket);
  }
  const auto max_incoming = target.runtime->config().max_incoming_message_size;
  while (true) {
    auto receive_op = socket->receive();
    auto msg = co_await std::move(receive_op);
    if (!msg) {
      break;
    }
    if (msg->data.size() > max_incoming) {
      socket->close(1011, "message.incoming_too_long");
      continue;  // the next receive reports the close
    }
    auto decoded = client::decode_to_server(encoding, msg->data);
    if (!decoded) {
      log::info("undecodable connection frame actor_id={} conn_id={}: {}", target.actor_id(),
                conn_id, decoded.error().message);
      socket->close(1011, "actor.invalid_request");
      continue;
    }
    // In arrival order: each message is taken by exactly one instance; actions then run
    // concurrently on it.
    auto delivered_op =
        deliver(target, *socket, ConnectionMessageCommand{conn_id, std::move(*decoded)});
    co_await std::move(delivered_op);
  }
  auto end_op = end_session(target, conn_id, true, socket->close_info());
  co_await std::move(end_op);
}

}  // namespace rivetkit::core::router
