#include "core/router.hpp"

#include "core/errors.hpp"
#include "core/raw_websocket.hpp"
#include "protocol/compat.hpp"
#include "protocol/json/json.hpp"
#include "protocol/text/utf8.hpp"
#include "util/log.hpp"
#include "util/spawn.hpp"
#include "util/url.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <deque>

namespace rivetkit::core {

namespace asio = boost::asio;
namespace client = protocol::client;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

constexpr const char* kBanner = "This is an RivetKit actor.\n\nLearn more at https://rivetkit.org";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

Request to_user_request(const net::HttpRequest& req, std::string path, std::string search) {
  Request out;
  out.method = req.method;
  out.path = std::move(path);
  out.search = std::move(search);
  out.headers.reserve(req.headers.size());
  for (const auto& h : req.headers) {
    out.headers.push_back(HttpHeader{h.name, h.value});
  }
  out.body = req.body;
  return out;
}

void add_actor_headers(net::HttpResponse& resp, const ActorInstance& instance) {
  resp.set_header("x-rivet-actor", instance.actor_id());
  resp.set_header("x-rivet-actor-generation", std::to_string(instance.generation()));
  const std::string& key = instance.key_string();
  if (key.find_first_of("\r\n") == std::string::npos) {
    resp.set_header("x-rivet-actor-key", key);
  }
}

/// Connection params: JSON text (header or decoded subprotocol); absent -> null.
Result<Value> parse_params(std::optional<std::string_view> text) {
  if (!text || text->empty()) {
    return Value{};
  }
  auto parsed = protocol::json_parse(*text);
  if (!parsed) {
    return fail(Error{"actor", "invalid_params", "Connection params are not valid JSON",
                      std::nullopt, true});
  }
  return protocol::compat_decode(*parsed);
}

client::ErrorMessage to_error_message(const Error& e,
                                      std::optional<std::uint64_t> action_id,
                                      const ActorInstance* instance) {
  client::ErrorMessage msg;
  msg.group = e.group;
  msg.code = e.code;
  msg.message = e.message;
  msg.metadata = e.metadata;
  msg.action_id = action_id;
  if (instance != nullptr) {
    msg.actor = instance->specifier();
  }
  return msg;
}

template <class T>
Task<T> on_strand(const std::shared_ptr<ActorInstance>& instance, Task<T> task) {
  auto op = asio::co_spawn(instance->strand(), std::move(task), asio::use_awaitable);
  co_return co_await std::move(op);
}

// ---- retries across instances ------------------------------------------------------------------

bool is_stopping(const Error& e) {
  return e.group == "actor" && e.code == "stopping";
}

// Work that meets a stopping instance is handed to the next one. An instance that asked for its
// own stop (c.sleep(), c.destroy()) refuses new work before its driver stops it (engine mode:
// once the engine answers the intent), so resolving may give the same instance again: wait a
// little between attempts, up to kInstanceRetryLimit.
constexpr auto kInstanceRetryLimit = std::chrono::seconds(30);

Task<void> retry_pause(const std::shared_ptr<ActorInstance>& instance, int attempt) {
  auto op = instance->config().clock->wait_for(
      std::chrono::milliseconds(std::min(100, 5 << std::min(attempt, 5))));
  co_await std::move(op);
}

// Resolves the actor again after `current` refused work as stopping. Returns the instance to try
// next, or the error that ends the attempt (also when the retry limit is reached).
Task<Result<std::shared_ptr<ActorInstance>>> next_instance(ActorTarget& target,
                                                           util::SteadyTime give_up,
                                                           int attempt) {
  const auto& clock = target.instance->config().clock;
  if (clock->steady_now() >= give_up) {
    co_return fail(Error{"actor", "stopping", "The actor is stopping", std::nullopt, false});
  }
  auto resolve_op = target.resolve();
  auto next = co_await std::move(resolve_op);
  if (next && *next == target.instance) {
    auto pause_op = retry_pause(target.instance, attempt);
    co_await std::move(pause_op);
  }
  co_return next;
}

// Runs `make(instance)` on the actor's strand; when the instance was stopping, resolves the actor
// again (waiting for the stop, waking the next instance) and tries there.
template <class T, class Make>
Task<Result<T>> on_current_instance(ActorTarget& target, Make make) {
  const auto give_up = target.instance->config().clock->steady_now() + kInstanceRetryLimit;
  for (int attempt = 0;; ++attempt) {
    auto task = make(target.instance);
    auto result = co_await on_strand(target.instance, std::move(task));
    if (result || !is_stopping(result.error())) {
      co_return result;
    }
    auto next_op = next_instance(target, give_up, attempt);
    auto next = co_await std::move(next_op);
    if (!next) {
      co_return fail(next.error());
    }
    target.instance = std::move(*next);
  }
}

// ---- HTTP action ------------------------------------------------------------------------------

// Ends the short-lived connection of an HTTP call, then applies the output gate: the response
// leaves only once the state it depends on is durable.
Task<Result<void>> finish_transient(std::shared_ptr<ActorInstance> instance,
                                    std::shared_ptr<Connection> conn) {
  auto close_op = instance->connection_lifecycle().close(std::move(conn));
  co_await std::move(close_op);
  std::uint64_t seq = instance->checkpoint();
  auto durable_op = instance->wait_durable(seq);
  co_return co_await std::move(durable_op);
}

Task<Result<Value>> http_action_on_strand(std::shared_ptr<ActorInstance> instance,
                                          Value params,
                                          Request request,
                                          client::Encoding encoding,
                                          std::string name,
                                          Array args) {
  auto open_op = instance->connection_lifecycle().open(ConnKind::kHttp, params, std::move(request),
                                                       encoding, nullptr);
  auto conn = co_await std::move(open_op);
  if (!conn) {
    co_return fail(conn.error());
  }
  auto action_op = instance->run_action(conn->get(), std::move(name), std::move(args));
  auto result = co_await std::move(action_op);
  auto finish_op = finish_transient(instance, std::move(*conn));
  auto finished = co_await std::move(finish_op);
  if (!finished) {
    co_return fail(finished.error());
  }
  co_return result;
}

Task<net::HttpResponse> handle_action(ActorTarget target,
                                      net::HttpRequest req,
                                      std::string raw_name,
                                      client::Encoding encoding) {
  auto instance = target.instance;
  const auto& config = instance->config();
  if (req.method != "POST") {
    co_return ActorRouter::error_response(method_not_allowed(), encoding, instance.get());
  }
  auto name = util::percent_decode(raw_name);
  // An action name that is not UTF-8 cannot name an action (names are protocol strings); like a
  // malformed escape, it is no route.
  if (!name || raw_name.find('/') != std::string::npos || !protocol::text::is_valid_utf8(*name)) {
    co_return ActorRouter::error_response(route_not_found(req.target), encoding, instance.get());
  }
  if (req.body.size() > config.max_incoming_message_size) {
    co_return ActorRouter::error_response(incoming_too_long(), encoding, instance.get());
  }
  auto args = client::decode_http_action_request(encoding, req.body);
  if (!args) {
    // rivetkit answers an undecodable body with 400 and the generic internal error
    // (client-protocol.md §6.3); the reason goes to the log.
    log::info("undecodable action body actor_id={} encoding={}: {}", instance->actor_id(),
              client::encoding_name(encoding), args.error().message);
    auto resp = ActorRouter::error_response(internal_error(), encoding, instance.get());
    resp.status = 400;
    co_return resp;
  }
  auto params = parse_params(req.header("x-rivet-conn-params"));
  if (!params) {
    co_return ActorRouter::error_response(params.error(), encoding, instance.get());
  }
  auto target_parts = util::split_target(req.target);
  Request user_req =
      to_user_request(req, std::string(target_parts.path),
                      target_parts.has_query ? "?" + std::string(target_parts.query) : "");
  auto op = on_current_instance<Value>(target, [&](std::shared_ptr<ActorInstance> inst) {
    return http_action_on_strand(std::move(inst), *params, user_req, encoding, *name, *args);
  });
  auto result = co_await std::move(op);
  instance = target.instance;
  if (!result) {
    co_return ActorRouter::error_response(sanitize_for_client(result.error()), encoding,
                                          instance.get());
  }
  net::HttpResponse resp;
  resp.body = client::encode_http_action_response(encoding, *result);
  if (resp.body.size() > config.max_outgoing_message_size) {
    co_return ActorRouter::error_response(outgoing_too_long(), encoding, instance.get());
  }
  resp.status = 200;
  resp.set_header("content-type", std::string(client::content_type(encoding)));
  add_actor_headers(resp, *instance);
  co_return resp;
}

// ---- raw HTTP ---------------------------------------------------------------------------------

// See ActorInstance::run_action: never let the raced operand throw.
Task<Result<Response>> catching_request(Task<std::optional<Response>> handler) {
  std::exception_ptr failure;
  try {
    std::optional<Response> r = co_await std::move(handler);
    if (!r) {
      // RivetKit answers an onRequest that returns nothing with a 500 that says so.
      co_return fail(Error{"core", "internal_error", "onRequest handler must return a Response",
                           std::nullopt, true});
    }
    co_return std::move(*r);
  } catch (...) {
    failure = std::current_exception();
  }
  co_return fail(error_from_exception(failure));
}

Task<Result<Response>> raw_request_on_strand(std::shared_ptr<ActorInstance> instance,
                                             Value params,
                                             Request request) {
  const auto& hooks = instance->definition().hooks;
  auto open_op = instance->connection_lifecycle().open(ConnKind::kRawRequest, params, request,
                                                       client::Encoding::kJson, nullptr);
  auto conn = co_await std::move(open_op);
  if (!conn) {
    co_return fail(conn.error());
  }
  Result<Response> result = fail(route_not_found("/request" + request.path));
  if (hooks.on_request) {
    auto handler =
        catching_request(hooks.on_request(instance.get(), conn->get(), std::move(request)));
    auto timeout =
        instance->config().clock->wait_for(instance->definition().options.action_timeout);
    auto raced = co_await (std::move(handler) || std::move(timeout));
    if (raced.index() == 0) {
      result = std::move(std::get<0>(raced));
    } else {
      result = fail(action_timed_out());
    }
  }
  auto finish_op = finish_transient(instance, std::move(*conn));
  auto finished = co_await std::move(finish_op);
  if (!finished) {
    co_return fail(finished.error());
  }
  co_return result;
}

Task<net::HttpResponse> handle_raw_request(ActorTarget target,
                                           net::HttpRequest req,
                                           std::string path,
                                           std::string search,
                                           client::Encoding encoding) {
  auto params = parse_params(req.header("x-rivet-conn-params"));
  if (!params) {
    co_return ActorRouter::error_response(params.error(), encoding, target.instance.get());
  }
  Request user_req = to_user_request(req, std::move(path), std::move(search));
  auto op = on_current_instance<Response>(target, [&](std::shared_ptr<ActorInstance> inst) {
    return raw_request_on_strand(std::move(inst), *params, user_req);
  });
  auto result = co_await std::move(op);
  if (!result) {
    co_return ActorRouter::error_response(sanitize_for_client(result.error()), encoding,
                                          target.instance.get());
  }
  net::HttpResponse resp;
  resp.status = result->status;
  for (auto& h : result->headers) {
    resp.headers.push_back(net::Header{h.name, std::move(h.value)});
  }
  resp.body = std::move(result->body);
  add_actor_headers(resp, *target.instance);
  co_return resp;
}

// ---- socket sessions (/connect and raw) ---------------------------------------------------------

Task<ActorInstance::Delivery> deliver_on_strand(std::shared_ptr<ActorInstance> instance,
                                                std::string conn_id,
                                                client::ToServer message) {
  co_return instance->deliver(conn_id, std::move(message));
}

Task<ActorInstance::Delivery> deliver_raw_on_strand(std::shared_ptr<ActorInstance> instance,
                                                    std::string conn_id,
                                                    net::WsMessage message) {
  auto op = instance->connection_lifecycle().deliver_raw(std::move(conn_id), std::move(message));
  co_return co_await std::move(op);
}

Task<bool> closed_on_strand(std::shared_ptr<ActorInstance> instance,
                            std::string conn_id,
                            std::uint16_t code,
                            std::string reason) {
  auto op =
      instance->connection_lifecycle().socket_closed(std::move(conn_id), code, std::move(reason));
  co_return co_await std::move(op);
}

// Hands one message to whichever instance is current, waking the actor if it sleeps. Returns
// false (with the socket closed) when the connection cannot continue.
template <class Make>
Task<bool> deliver_to_current(ActorTarget& target, net::WebSocket& socket, Make make) {
  const auto give_up = target.instance->config().clock->steady_now() + kInstanceRetryLimit;
  for (int attempt = 0;; ++attempt) {
    auto task = make(target.instance);
    auto delivery = co_await on_strand(target.instance, std::move(task));
    if (delivery == ActorInstance::Delivery::kAccepted) {
      co_return true;
    }
    if (delivery == ActorInstance::Delivery::kGone) {
      socket.close(1011, "actor.connection_lost");
      co_return false;
    }
    auto next_op = next_instance(target, give_up, attempt);
    auto next = co_await std::move(next_op);
    if (!next) {
      socket.close(1011, next.error().qualified_code());
      co_return false;
    }
    target.instance = std::move(*next);
  }
}

// The socket ended (the client went away, or the actor closed it). The instance that holds the
// connection handles it (close handler, on_disconnect). Only a hibernatable connection can
// outlive its instance: then the actor is resolved again (woken if it sleeps) so that
// on_disconnect runs when the client really leaves. A connection the actor itself ended (on
// sleep, destroy or disconnect()) is already gone and wakes nothing.
Task<void> end_session(ActorTarget target,
                       std::string conn_id,
                       bool hibernatable,
                       net::WsCloseInfo info) {
  // The socket stays registered until the close is handled: a sleeping actor that wakes for it
  // must find its connection (and then run on_disconnect), not reap it as gone.
  bool handled = false;
  if (!target.instance->lifecycle().is(LifecycleState::kTerminated)) {
    auto task = closed_on_strand(target.instance, conn_id, info.code, info.reason);
    handled = co_await on_strand(target.instance, std::move(task));
  }
  if (!handled && hibernatable) {
    auto resolve_op = target.resolve();
    auto next = co_await std::move(resolve_op);
    // Not resolved: destroyed, or the process is stopping; nothing left to notify.
    if (next && *next != target.instance) {
      auto task = closed_on_strand(*next, conn_id, info.code, std::move(info.reason));
      co_await on_strand(*next, std::move(task));
    }
  }
  if (target.sockets != nullptr) {
    target.sockets->remove(conn_id);
  }
}

Task<Result<std::shared_ptr<Connection>>> connect_on_strand(
    std::shared_ptr<ActorInstance> instance,
    Value params,
    Request request,
    client::Encoding encoding,
    std::shared_ptr<net::WebSocket> socket) {
  auto open_op = instance->connection_lifecycle().open(ConnKind::kActorConnect, std::move(params),
                                                       std::move(request), encoding, socket);
  auto conn = co_await std::move(open_op);
  if (conn) {
    instance->connections().send_message(
        **conn, client::ToClient{client::Init{instance->actor_id(), (*conn)->id()}});
  }
  co_return conn;
}

Task<void> connect_session(ActorTarget target,
                           std::string conn_id,
                           client::Encoding encoding,
                           std::shared_ptr<net::WebSocket> socket);
Task<void> raw_session(ActorTarget target,
                       std::string conn_id,
                       bool hibernatable,
                       std::shared_ptr<net::WebSocket> socket);

Task<void> handle_connect(ActorTarget target,
                          net::HttpRequest req,
                          std::string search,
                          std::shared_ptr<net::WebSocket> socket) {
  WsProtocols protocols = parse_ws_protocols(req);
  auto encoding = client::parse_encoding(protocols.encoding.value_or("json"));
  if (!encoding) {
    socket->close(1003, "actor.unsupported_websocket_encoding");
    co_return;
  }
  auto send_error = [&](const Error& e) {
    // Setup errors are sent as they are (core does not mask them), then the socket closes.
    socket->send(net::WsMessage{
        !client::is_text(*encoding),
        client::encode_to_client(*encoding, client::ToClient{to_error_message(
                                                e, std::nullopt, target.instance.get())})});
    socket->close(1011, e.qualified_code());
  };
  auto params = parse_params(protocols.conn_params);
  if (!params) {
    send_error(params.error());
    co_return;
  }
  Request user_req = to_user_request(req, "/connect", std::move(search));
  auto open_op = on_current_instance<std::shared_ptr<Connection>>(
      target, [&](std::shared_ptr<ActorInstance> inst) {
        return connect_on_strand(std::move(inst), *params, user_req, *encoding, socket);
      });
  auto opened = co_await std::move(open_op);
  if (!opened) {
    send_error(opened.error());
    co_return;
  }
  const std::string conn_id = (*opened)->id();
  opened->reset();
  auto session_op = connect_session(std::move(target), conn_id, *encoding, socket);
  co_await std::move(session_op);
}

// The message loop of a `/connect` socket whose connection exists: registers the socket for
// hibernation, hands each frame to the current instance, and ends the connection at close.
Task<void> connect_session(ActorTarget target,
                           std::string conn_id,
                           client::Encoding encoding,
                           std::shared_ptr<net::WebSocket> socket) {
  if (target.sockets != nullptr) {
    target.sockets->add(conn_id, socket);
  }
  const auto max_incoming = target.instance->config().max_incoming_message_size;
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
      log::info("undecodable connection frame actor_id={} conn_id={}: {}",
                target.instance->actor_id(), conn_id, decoded.error().message);
      socket->close(1011, "actor.invalid_request");
      continue;
    }
    // In arrival order: each message is taken by exactly one instance; actions then run
    // concurrently on it.
    auto delivered_op =
        deliver_to_current(target, *socket, [&](std::shared_ptr<ActorInstance> inst) {
          return deliver_on_strand(std::move(inst), conn_id, *decoded);
        });
    if (!co_await std::move(delivered_op)) {
      continue;
    }
  }
  auto end_op = end_session(target, conn_id, true, socket->close_info());
  co_await std::move(end_op);
}

Task<Result<std::shared_ptr<Connection>>> raw_ws_open_on_strand(
    std::shared_ptr<ActorInstance> instance,
    Value params,
    Request request,
    std::shared_ptr<net::WebSocket> socket) {
  auto open_op =
      instance->connection_lifecycle().open(ConnKind::kRawWebSocket, std::move(params),
                                            std::move(request), client::Encoding::kBare, socket);
  auto conn = co_await std::move(open_op);
  if (!conn) {
    co_return fail(conn.error());
  }
  auto attach_op = instance->connection_lifecycle().attach_raw(*conn, false);
  auto attached = co_await std::move(attach_op);
  if (!attached) {
    auto close_op = instance->connection_lifecycle().close(*conn);
    co_await std::move(close_op);
    co_return fail(attached.error());
  }
  co_return conn;
}

Task<void> handle_raw_websocket(ActorTarget target,
                                net::HttpRequest req,
                                std::string path,
                                std::string search,
                                std::shared_ptr<net::WebSocket> socket) {
  WsProtocols protocols = parse_ws_protocols(req);
  auto params = parse_params(protocols.conn_params);
  if (!params) {
    socket->close(1011, params.error().qualified_code());
    co_return;
  }
  Request user_req = to_user_request(req, std::move(path), std::move(search));
  auto open_op = on_current_instance<std::shared_ptr<Connection>>(
      target, [&](std::shared_ptr<ActorInstance> inst) {
        return raw_ws_open_on_strand(std::move(inst), *params, user_req, socket);
      });
  auto opened = co_await std::move(open_op);
  if (!opened) {
    socket->close(1011, opened.error().qualified_code());
    co_return;
  }
  const std::string conn_id = (*opened)->id();
  const bool hibernatable = (*opened)->is_hibernatable();
  opened->reset();
  auto session_op = raw_session(std::move(target), conn_id, hibernatable, socket);
  co_await std::move(session_op);
}

// Test mode (RivetKit's `test.enabled`): `{"__rivetkitTestHibernatableAckStateV1": true}` on a
// raw socket asks where its acknowledgements stand. The session answers it (it is not delivered,
// and not counted among the actor's messages, though it takes an index on the wire) from what it
// delivered, which outlives the actor's sleeps: the last delivered index, the last one the
// gateway has acknowledged (local sockets: all of them), and those in between.
struct AckProbeState {
  std::deque<std::uint16_t> delivered;  // newest last, bounded

  void note(std::uint16_t index) {
    delivered.push_back(index);
    if (delivered.size() > 1024) {
      delivered.pop_front();
    }
  }
  bool answer(const net::WsMessage& message, net::WebSocket& socket) const {
    constexpr std::string_view kProbe = "__rivetkitTestHibernatableAckStateV1";
    if (message.binary || message.data.find(kProbe) == std::string::npos) {
      return false;
    }
    auto parsed = protocol::json_parse(message.data);
    const Value* flag = parsed && parsed->is_object() ? parsed->find(kProbe) : nullptr;
    if (flag == nullptr || !flag->is_bool() || !flag->as_bool()) {
      return false;
    }
    const std::int64_t last_sent = delivered.empty() ? 0 : delivered.back();
    std::int64_t acked = last_sent;
    if (socket.resume_point()) {
      auto a = socket.acked_index();
      acked = a ? std::min<std::int64_t>(*a, last_sent) : 0;
    }
    Array pending;
    for (auto index : delivered) {
      if (index > acked) {
        pending.emplace_back(static_cast<std::int64_t>(index));
      }
    }
    Value reply = Value::object({{std::string(kProbe), true},
                                 {"lastSentIndex", last_sent},
                                 {"lastAckedIndex", acked},
                                 {"pendingIndexes", Value(std::move(pending))}});
    socket.send(net::WsMessage{false, protocol::json_stringify(reply)});
    return true;
  }
};

// The message loop of a raw socket whose connection exists (see connect_session).
Task<void> raw_session(ActorTarget target,
                       std::string conn_id,
                       bool hibernatable,
                       std::shared_ptr<net::WebSocket> socket) {
  if (hibernatable && target.sockets != nullptr) {
    target.sockets->add(conn_id, socket);
  }
  // A hibernatable socket of this process (local mode) numbers its messages here, as the
  // gateway numbers them in engine mode; the session outlives the actor's sleeps, so the
  // numbering continues across them.
  std::uint16_t local_index = 0;
  const bool test_mode = target.instance->config().test_mode;
  AckProbeState probe;
  while (true) {
    auto receive_op = socket->receive();
    auto msg = co_await std::move(receive_op);
    if (!msg) {
      break;
    }
    if (hibernatable && !msg->index) {
      msg->index = ++local_index;
    }
    if (test_mode && probe.answer(*msg, *socket)) {
      continue;
    }
    if (msg->index) {
      probe.note(*msg->index);
    }
    auto delivered_op =
        deliver_to_current(target, *socket, [&](std::shared_ptr<ActorInstance> inst) {
          return deliver_raw_on_strand(std::move(inst), conn_id, *msg);
        });
    co_await std::move(delivered_op);
  }
  auto end_op = end_session(target, conn_id, hibernatable, socket->close_info());
  co_await std::move(end_op);
}

}  // namespace

WsProtocols parse_ws_protocols(const net::HttpRequest& req) {
  WsProtocols out;
  auto header = req.header("sec-websocket-protocol");
  if (!header) {
    return out;
  }
  std::string_view rest = *header;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.empty()) {
      continue;
    }
    out.offered_any = true;
    if (item == "rivet") {
      out.offered_rivet = true;
    } else if (starts_with(item, "rivet_encoding.") && !out.encoding) {
      out.encoding = std::string(item.substr(15));
    } else if (starts_with(item, "rivet_conn_params.") && !out.conn_params) {
      if (auto decoded = util::percent_decode(item.substr(18))) {
        out.conn_params = std::move(*decoded);
      } else {
        out.conn_params = std::string("\x01");  // forces a params error (not valid JSON)
      }
    }
  }
  return out;
}

net::HttpResponse ActorRouter::error_response(const Error& error,
                                              client::Encoding encoding,
                                              const ActorInstance* instance) {
  net::HttpResponse resp;
  resp.status = public_status_code(error.group, error.code);
  resp.body = client::encode_http_error(encoding, to_error_message(error, std::nullopt, instance));
  resp.set_header("content-type", std::string(client::content_type(encoding)));
  if (instance != nullptr) {
    add_actor_headers(resp, *instance);
  }
  return resp;
}

Task<net::HttpResponse> ActorRouter::handle_http(ActorTarget target,
                                                 net::HttpRequest request,
                                                 std::string path) {
  auto split = util::split_target(path);
  std::string p(split.path);
  std::string search = split.has_query ? "?" + std::string(split.query) : std::string();
  auto encoding =
      client::http_encoding_from_header(request.header("x-rivet-encoding").value_or(""));
  const auto& instance = target.instance;

  if (starts_with(p, "/action/")) {
    auto task = handle_action(std::move(target), std::move(request), p.substr(8), encoding);
    co_return co_await std::move(task);
  }
  if (p == "/request" || starts_with(p, "/request/")) {
    std::string rest = p.substr(8);
    if (rest.empty()) {
      rest = "/";
    }
    auto task = handle_raw_request(std::move(target), std::move(request), std::move(rest),
                                   std::move(search), encoding);
    co_return co_await std::move(task);
  }
  if (request.method == "GET" && p == "/metadata") {
    net::HttpResponse resp;
    resp.body = R"({"runtime":"rivetkit","type":"local","version":"2.3.19"})";
    resp.set_header("content-type", "application/json");
    resp.set_header("referrer-policy", "no-referrer");
    add_actor_headers(resp, *instance);
    co_return resp;
  }
  if (request.method == "GET" && p == "/health") {
    net::HttpResponse resp;
    resp.body = "ok";
    resp.set_header("content-type", "text/plain; charset=utf-8");
    add_actor_headers(resp, *instance);
    co_return resp;
  }
  if (request.method == "GET" && p == "/") {
    net::HttpResponse resp;
    resp.body = kBanner;
    resp.set_header("content-type", "text/plain; charset=utf-8");
    add_actor_headers(resp, *instance);
    co_return resp;
  }
  co_return error_response(route_not_found(p), encoding, instance.get());
}

Task<void> ActorRouter::handle_websocket(ActorTarget target,
                                         net::HttpRequest request,
                                         std::string path,
                                         std::shared_ptr<net::WebSocket> socket) {
  auto split = util::split_target(path);
  std::string p(split.path);
  std::string search = split.has_query ? "?" + std::string(split.query) : std::string();
  if (p == "/connect") {
    auto task =
        handle_connect(std::move(target), std::move(request), std::move(search), std::move(socket));
    co_await std::move(task);
    co_return;
  }
  // Any other path is a raw WebSocket; the `/websocket` prefix is removed for the user.
  std::string rest = p;
  if (p == "/websocket" || starts_with(p, "/websocket/")) {
    rest = p.substr(10);
  }
  if (rest.empty()) {
    rest = "/";
  }
  auto task = handle_raw_websocket(std::move(target), std::move(request), std::move(rest),
                                   std::move(search), std::move(socket));
  co_await std::move(task);
}

Task<void> ActorRouter::resume_websocket(ActorTarget target,
                                         std::string conn_id,
                                         bool raw,
                                         protocol::client::Encoding encoding,
                                         std::shared_ptr<net::WebSocket> socket) {
  if (raw) {
    auto op = raw_session(std::move(target), std::move(conn_id), true, std::move(socket));
    co_await std::move(op);
  } else {
    auto op = connect_session(std::move(target), std::move(conn_id), encoding, std::move(socket));
    co_await std::move(op);
  }
}

}  // namespace rivetkit::core
