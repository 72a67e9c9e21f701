#pragma once
// Inside the actor router: the surfaces (one file each) and what they share. Each surface decodes
// its request, dispatches one command per unit of work (core/runtime/command.hpp) and encodes the
// reply; none of them calls into an instance.

#include "core/errors.hpp"
#include "core/router/router.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace rivetkit::core::router {

// ---- shared by the surfaces (router_support.cpp)
// -------------------------------------------------

bool starts_with(std::string_view s, std::string_view prefix);
/// The user's view of the request: the path inside the actor and the query ("?..." or "").
Request to_user_request(const net::HttpRequest& req, std::string path, std::string search);
void add_actor_headers(net::HttpResponse& resp, const ActorInstance& instance);
/// The name a path segment gives (`/action/{name}`, `/queue/{name}`): percent-decoded, UTF-8,
/// without '/'; nullopt when it cannot name anything (no route).
std::optional<std::string> route_name(std::string_view raw_name);
/// to_user_request with the request's own path and query.
Request user_request_of(const net::HttpRequest& req);
/// The percent-decoded value of query parameter `name` in `search` ("?a=1&b=2" or "a=1").
std::optional<std::string> query_value(std::string_view search, std::string_view name);
/// Connection params: JSON text (header or decoded subprotocol); absent -> null.
Result<Value> parse_params(std::optional<std::string_view> text);
protocol::client::ErrorMessage to_error_message(const Error& e,
                                                std::optional<std::uint64_t> action_id,
                                                const ActorInstance* instance);
/// Dispatches an HTTP request's command, bound to the target's generation if it has one (a
/// generation_gone failure marks the target unanswered).
template <class C>
Task<Dispatched<typename C::Reply>> dispatch_request(const ActorTarget& target, C command) {
  auto op = target.runtime->dispatch(target.actor_id(), std::move(command), target.generation);
  auto done = co_await std::move(op);
  if (!done.result && is_generation_gone(done.result.error()) && target.unanswered) {
    *target.unanswered = true;
  }
  co_return done;
}
/// The instance for an answer's headers: the one that ran the command, else the resolved one.
const ActorInstance* answered_by(const ActorTarget& target,
                                 const std::shared_ptr<ActorInstance>& ran);

// ---- socket sessions (socket_session.cpp)
// --------------------------------------------------------

/// Hands one message to the actor; false (with the socket closed) when the connection cannot
/// continue.
Task<bool> deliver(const ActorTarget& target, net::WebSocket& socket, Command command);
/// The socket ended: the instance that holds the connection ends it; a hibernatable connection
/// outlives its instance, so then the actor is woken to end it. Unregisters the socket.
Task<void> end_session(const ActorTarget& target,
                       std::string conn_id,
                       bool hibernatable,
                       net::WsCloseInfo info);

// ---- the surfaces
// --------------------------------------------------------------------------------

Task<net::HttpResponse> http_action(ActorTarget target,
                                    net::HttpRequest req,
                                    std::string raw_name,
                                    protocol::client::Encoding encoding);
Task<net::HttpResponse> queue_send(ActorTarget target,
                                   net::HttpRequest req,
                                   std::string raw_name,
                                   protocol::client::Encoding encoding);
Task<net::HttpResponse> raw_http(ActorTarget target,
                                 net::HttpRequest req,
                                 std::string path,
                                 std::string search,
                                 protocol::client::Encoding encoding);
Task<net::HttpResponse> inspector_http(ActorTarget target,
                                       net::HttpRequest req,
                                       std::string path,
                                       std::string search);
Task<void> inspector_websocket(ActorTarget target,
                               net::HttpRequest req,
                               std::string search,
                               std::shared_ptr<net::WebSocket> socket);
Task<void> connect(ActorTarget target,
                   net::HttpRequest req,
                   std::string search,
                   std::shared_ptr<net::WebSocket> socket);
Task<void> connect_session(ActorTarget target,
                           std::string conn_id,
                           protocol::client::Encoding encoding,
                           std::shared_ptr<net::WebSocket> socket);
Task<void> raw_websocket(ActorTarget target,
                         net::HttpRequest req,
                         std::string path,
                         std::string search,
                         std::shared_ptr<net::WebSocket> socket);
Task<void> raw_websocket_session(ActorTarget target,
                                 std::string conn_id,
                                 bool hibernatable,
                                 std::shared_ptr<net::WebSocket> socket);

}  // namespace rivetkit::core::router
