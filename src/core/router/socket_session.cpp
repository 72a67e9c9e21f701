// What the two socket sessions (/connect and raw) share: handing a message to the actor and
// ending the connection when the socket closes.

#include "core/router/surfaces.hpp"

namespace rivetkit::core::router {

Task<bool> deliver(const ActorTarget& target, net::WebSocket& socket, Command command) {
  auto op = target.runtime->dispatch(target.actor_id(), std::move(command));
  auto done = co_await std::move(op);
  if (!done.result) {
    socket.close(1011, done.result.error().qualified_code());
    co_return false;
  }
  co_return true;
}

// Only a hibernatable connection can outlive its instance: then the command wakes the actor (if
// it sleeps) so that on_disconnect runs when the client really leaves.
Task<void> end_session(const ActorTarget& target,
                       std::string conn_id,
                       bool hibernatable,
                       net::WsCloseInfo info) {
  // The socket stays registered until the close is handled: a sleeping actor that wakes for it
  // must find its connection (and then run on_disconnect), not reap it as gone.
  ConnectionClosedCommand command;
  command.conn_id = conn_id;
  command.code = info.code;
  command.reason = std::move(info.reason);
  command.wake = hibernatable;
  auto op = target.runtime->dispatch(target.actor_id(), std::move(command));
  co_await std::move(op);  // an actor destroyed or a runtime stopping meanwhile: nobody to tell
  if (target.sockets != nullptr) {
    target.sockets->remove(conn_id);
  }
}

}  // namespace rivetkit::core::router
