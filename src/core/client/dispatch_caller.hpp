#pragma once
// DispatchCaller: actor-to-actor calls in process, through Runtime::dispatch (local mode). The
// arguments and the result are copied, never encoded; the callee runs the call as an HTTP action
// or queue send on its own strand (connection hooks, action timeout and the output gate
// included).

#include "core/client/action_caller.hpp"
#include "net/http_types.hpp"

#include <functional>

namespace rivetkit::core {

class Runtime;

class DispatchCaller final : public ActionCaller {
 public:
  /// Serves the server end of an in-process socket (the mode's front door does this for a
  /// network client's socket): resolves the actor, then runs the actor router's session on it.
  /// Answers once the actor is resolved (its error: nothing was served).
  using SocketServer = std::function<Task<Result<void>>(
      std::string actor_id, net::HttpRequest request, std::shared_ptr<net::WebSocket> socket)>;

  DispatchCaller(Runtime& runtime, SocketServer serve_socket)
      : runtime_(runtime), serve_socket_(std::move(serve_socket)) {}

  Task<Result<Value>> call(std::string actor_id, ClientWork work, Value params) override;
  /// An in-memory socket pair (net/pipe_websocket.hpp): the server end goes to `serve_socket`.
  Task<Result<std::shared_ptr<net::WebSocket>>> open_socket(
      std::string actor_id, std::string path, std::vector<std::string> protocols) override;

 private:
  Task<Result<Value>> action(std::string actor_id, ActionWork work, Value params);
  Task<Result<Value>> queue_send(std::string actor_id, QueueWork work, Value params);

  Runtime& runtime_;
  SocketServer serve_socket_;
};

}  // namespace rivetkit::core
