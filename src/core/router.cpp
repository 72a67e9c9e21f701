#include "core/router.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/errors.hpp"
#include "core/raw_websocket.hpp"
#include "protocol/compat.hpp"
#include "protocol/json/json.hpp"
#include "util/log.hpp"
#include "util/spawn.hpp"
#include "util/url.hpp"

namespace rivetkit::core {

namespace asio = boost::asio;
namespace client = protocol::client;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

constexpr const char* kBanner =
    "This is an RivetKit actor.\n\nLearn more at https://rivetkit.org";

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

client::ErrorMessage to_error_message(const Error& e, std::optional<std::uint64_t> action_id,
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

// ---- HTTP action ------------------------------------------------------------------------------

// Ends the short-lived connection of an HTTP call, then applies the output gate: the response
// leaves only once the state it depends on is durable.
Task<Result<void>> finish_transient(std::shared_ptr<ActorInstance> instance,
                                    std::shared_ptr<Connection> conn) {
  auto close_op = instance->close_connection(std::move(conn));
  co_await std::move(close_op);
  std::uint64_t seq = instance->checkpoint();
  auto durable_op = instance->wait_durable(seq);
  co_return co_await std::move(durable_op);
}

Task<Result<Value>> http_action_on_strand(std::shared_ptr<ActorInstance> instance, Value params,
                                          Request request, client::Encoding encoding,
                                          std::string name, Array args) {
  auto open_op = instance->open_connection(ConnKind::kHttp, params, std::move(request), encoding,
                                           nullptr);
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

Task<net::HttpResponse> handle_action(std::shared_ptr<ActorInstance> instance,
                                      net::HttpRequest req, std::string_view raw_name,
                                      client::Encoding encoding) {
  const auto& config = instance->config();
  if (req.method != "POST") {
    co_return ActorRouter::error_response(method_not_allowed(), encoding, instance.get());
  }
  auto name = util::percent_decode(raw_name);
  if (!name || raw_name.find('/') != std::string_view::npos) {
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
  auto target = util::split_target(req.target);
  Request user_req = to_user_request(
      req, std::string(target.path), target.has_query ? "?" + std::string(target.query) : "");
  auto task = http_action_on_strand(instance, std::move(*params), std::move(user_req), encoding,
                                    std::move(*name), std::move(*args));
  auto result = co_await on_strand(instance, std::move(task));
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
Task<Result<Response>> catching_request(Task<Response> handler) {
  std::exception_ptr failure;
  try {
    Response r = co_await std::move(handler);
    co_return r;
  } catch (...) {
    failure = std::current_exception();
  }
  co_return fail(error_from_exception(failure));
}

Task<Result<Response>> raw_request_on_strand(std::shared_ptr<ActorInstance> instance, Value params,
                                             Request request) {
  const auto& hooks = instance->definition().hooks;
  auto open_op = instance->open_connection(ConnKind::kRawRequest, params, request,
                                           client::Encoding::kJson, nullptr);
  auto conn = co_await std::move(open_op);
  if (!conn) {
    co_return fail(conn.error());
  }
  Result<Response> result = fail(route_not_found("/request" + request.path));
  if (hooks.on_request) {
    asio::steady_timer timer(instance->strand(), instance->definition().options.action_timeout);
    auto handler = catching_request(hooks.on_request(instance.get(), conn->get(), std::move(request)));
    auto timeout = timer.async_wait(asio::as_tuple(asio::use_awaitable));
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

Task<net::HttpResponse> handle_raw_request(std::shared_ptr<ActorInstance> instance,
                                           net::HttpRequest req, std::string path,
                                           std::string search, client::Encoding encoding) {
  auto params = parse_params(req.header("x-rivet-conn-params"));
  if (!params) {
    co_return ActorRouter::error_response(params.error(), encoding, instance.get());
  }
  Request user_req = to_user_request(req, std::move(path), std::move(search));
  auto task = raw_request_on_strand(instance, std::move(*params), std::move(user_req));
  auto result = co_await on_strand(instance, std::move(task));
  if (!result) {
    co_return ActorRouter::error_response(sanitize_for_client(result.error()), encoding,
                                          instance.get());
  }
  net::HttpResponse resp;
  resp.status = result->status;
  for (auto& h : result->headers) {
    resp.headers.push_back(net::Header{h.name, std::move(h.value)});
  }
  resp.body = std::move(result->body);
  add_actor_headers(resp, *instance);
  co_return resp;
}

// ---- /connect ---------------------------------------------------------------------------------

Task<Result<std::shared_ptr<Connection>>> connect_on_strand(std::shared_ptr<ActorInstance> instance,
                                                            Value params, Request request,
                                                            client::Encoding encoding,
                                                            std::shared_ptr<net::WebSocket> socket) {
  auto open_op = instance->open_connection(ConnKind::kActorConnect, std::move(params),
                                           std::move(request), encoding, socket);
  auto conn = co_await std::move(open_op);
  if (conn) {
    instance->send_message(**conn, client::ToClient{client::Init{instance->actor_id(), (*conn)->id()}});
  }
  co_return conn;
}

Task<void> ws_action_on_strand(std::shared_ptr<ActorInstance> instance,
                               std::shared_ptr<Connection> conn, client::ActionRequest request) {
  auto action_op = instance->run_action(conn.get(), request.name, std::move(request.args));
  auto result = co_await std::move(action_op);
  const auto encoding = conn->encoding();
  if (result) {
    std::string frame = client::encode_to_client(
        encoding, client::ToClient{client::ActionResponse{request.id, std::move(*result)}});
    if (frame.size() <= instance->config().max_outgoing_message_size) {
      instance->send_frame(*conn, net::WsMessage{!client::is_text(encoding), std::move(frame)});
      co_return;
    }
    result = fail(outgoing_too_long());
  }
  Error e = sanitize_for_client(result.error());
  instance->send_message(*conn, client::ToClient{to_error_message(e, request.id, instance.get())});
}

Task<void> ws_subscribe_on_strand(std::shared_ptr<Connection> conn,
                                  client::SubscriptionRequest request) {
  if (request.subscribe) {
    conn->subscribe(std::move(request.event_name));
  } else {
    conn->unsubscribe(request.event_name);
  }
  co_return;
}

Task<void> disconnect_on_strand(std::shared_ptr<ActorInstance> instance,
                                std::shared_ptr<Connection> conn, std::uint16_t code,
                                std::string reason) {
  conn->close(code, std::move(reason));
  auto op = instance->close_connection(conn);
  co_await std::move(op);
}

Task<void> handle_connect(std::shared_ptr<ActorInstance> instance, net::HttpRequest req,
                          std::string search, std::shared_ptr<net::WebSocket> socket) {
  WsProtocols protocols = parse_ws_protocols(req);
  auto encoding = client::parse_encoding(protocols.encoding.value_or("json"));
  if (!encoding) {
    socket->close(1003, "actor.unsupported_websocket_encoding");
    co_return;
  }
  auto params = parse_params(protocols.conn_params);
  if (!params) {
    socket->send(net::WsMessage{!client::is_text(*encoding),
                                client::encode_to_client(*encoding, client::ToClient{to_error_message(
                                                                        params.error(), std::nullopt,
                                                                        instance.get())})});
    socket->close(1011, params.error().qualified_code());
    co_return;
  }
  auto task = connect_on_strand(instance, std::move(*params),
                                to_user_request(req, "/connect", std::move(search)), *encoding,
                                socket);
  auto opened = co_await on_strand(instance, std::move(task));
  if (!opened) {
    // Setup errors are sent as they are (core does not mask them), then the socket closes.
    const Error& e = opened.error();
    socket->send(net::WsMessage{
        !client::is_text(*encoding),
        client::encode_to_client(*encoding,
                                 client::ToClient{to_error_message(e, std::nullopt, instance.get())})});
    socket->close(1011, e.qualified_code());
    co_return;
  }
  std::shared_ptr<Connection> conn = std::move(*opened);
  const auto& config = instance->config();
  std::uint16_t close_code = 1000;
  std::string close_reason;
  while (true) {
    auto receive_op = socket->receive();
    auto msg = co_await std::move(receive_op);
    if (!msg) {
      break;
    }
    if (msg->data.size() > config.max_incoming_message_size) {
      close_code = 1011;
      close_reason = "message.incoming_too_long";
      break;
    }
    auto decoded = client::decode_to_server(*encoding, msg->data);
    if (!decoded) {
      log::info("undecodable connection frame actor_id={} conn_id={}: {}", instance->actor_id(),
                conn->id(), decoded.error().message);
      close_code = 1011;
      close_reason = "actor.invalid_request";
      break;
    }
    // Posted to the actor's strand in arrival order; actions then run concurrently.
    if (auto* action = std::get_if<client::ActionRequest>(&*decoded)) {
      util::spawn(instance->strand(), ws_action_on_strand(instance, conn, std::move(*action)),
                  "connection action");
    } else {
      auto& sub = std::get<client::SubscriptionRequest>(*decoded);
      util::spawn(instance->strand(), ws_subscribe_on_strand(conn, std::move(sub)),
                  "connection subscription");
    }
  }
  if (close_reason.empty()) {
    close_reason = socket->close_info().reason;
    close_code = 1000;
  }
  auto task2 = disconnect_on_strand(instance, conn, close_code, std::move(close_reason));
  co_await on_strand(instance, std::move(task2));
}

// ---- raw WebSocket ----------------------------------------------------------------------------

Task<Result<std::shared_ptr<WebSocket::Impl>>> raw_ws_open_on_strand(
    std::shared_ptr<ActorInstance> instance, Value params, Request request,
    std::shared_ptr<net::WebSocket> socket) {
  const auto& hooks = instance->definition().hooks;
  auto open_op = instance->open_connection(ConnKind::kRawWebSocket, std::move(params),
                                           std::move(request), client::Encoding::kBare, socket);
  auto conn = co_await std::move(open_op);
  if (!conn) {
    co_return fail(conn.error());
  }
  auto impl = std::make_shared<WebSocket::Impl>(instance, *conn);
  if (!hooks.on_websocket) {
    auto close_op = instance->close_connection(*conn);
    co_await std::move(close_op);
    co_return fail(route_not_found("/websocket" + (*conn)->request().path));
  }
  std::exception_ptr failure;
  try {
    auto handler = hooks.on_websocket(instance.get(), conn->get(), WebSocket(impl));
    co_await std::move(handler);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    auto close_op = instance->close_connection(*conn);
    co_await std::move(close_op);
    co_return fail(error_from_exception(failure));
  }
  co_return impl;
}

Task<Result<void>> raw_ws_message_on_strand(std::shared_ptr<WebSocket::Impl> impl,
                                            net::WsMessage msg) {
  if (!impl->on_message) {
    co_return Result<void>{};
  }
  std::exception_ptr failure;
  try {
    auto handler = impl->on_message(WebSocketMessage{msg.binary, std::move(msg.data)});
    co_await std::move(handler);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    co_return fail(error_from_exception(failure));
  }
  co_return Result<void>{};
}

Task<void> raw_ws_close_on_strand(std::shared_ptr<WebSocket::Impl> impl, std::uint16_t code,
                                  std::string reason) {
  if (impl->on_close) {
    try {
      impl->on_close(code, reason);
    } catch (const std::exception& e) {
      log::warn("websocket close handler failed actor_id={}: {}", impl->instance->actor_id(),
                e.what());
    }
  }
  impl->conn->close(code, reason);
  auto op = impl->instance->close_connection(impl->conn);
  co_await std::move(op);
  impl->on_message = nullptr;
  impl->on_close = nullptr;
}

Task<void> handle_raw_websocket(std::shared_ptr<ActorInstance> instance, net::HttpRequest req,
                                std::string path, std::string search,
                                std::shared_ptr<net::WebSocket> socket) {
  WsProtocols protocols = parse_ws_protocols(req);
  auto params = parse_params(protocols.conn_params);
  if (!params) {
    socket->close(1011, params.error().qualified_code());
    co_return;
  }
  auto task = raw_ws_open_on_strand(instance, std::move(*params),
                                    to_user_request(req, std::move(path), std::move(search)), socket);
  auto opened = co_await on_strand(instance, std::move(task));
  if (!opened) {
    socket->close(1011, opened.error().qualified_code());
    co_return;
  }
  std::shared_ptr<WebSocket::Impl> impl = std::move(*opened);
  while (true) {
    auto receive_op = socket->receive();
    auto msg = co_await std::move(receive_op);
    if (!msg) {
      break;
    }
    auto handle = raw_ws_message_on_strand(impl, std::move(*msg));
    auto handled = co_await on_strand(instance, std::move(handle));
    if (!handled) {
      socket->close(1011, handled.error().qualified_code());
      break;
    }
  }
  net::WsCloseInfo info = socket->close_info();
  auto close_task = raw_ws_close_on_strand(impl, info.code, info.reason);
  co_await on_strand(instance, std::move(close_task));
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

net::HttpResponse ActorRouter::error_response(const Error& error, client::Encoding encoding,
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

Task<net::HttpResponse> ActorRouter::handle_http(std::shared_ptr<ActorInstance> instance,
                                                 net::HttpRequest request, std::string path) {
  auto target = util::split_target(path);
  std::string_view p = target.path;
  std::string search = target.has_query ? "?" + std::string(target.query) : std::string();
  auto encoding = client::http_encoding_from_header(request.header("x-rivet-encoding").value_or(""));

  if (starts_with(p, "/action/")) {
    auto task = handle_action(instance, std::move(request), p.substr(8), encoding);
    co_return co_await std::move(task);
  }
  if (p == "/request" || starts_with(p, "/request/")) {
    std::string rest(p.substr(8));
    if (rest.empty()) {
      rest = "/";
    }
    auto task = handle_raw_request(instance, std::move(request), std::move(rest),
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

Task<void> ActorRouter::handle_websocket(std::shared_ptr<ActorInstance> instance,
                                         net::HttpRequest request, std::string path,
                                         std::shared_ptr<net::WebSocket> socket) {
  auto target = util::split_target(path);
  std::string p(target.path);
  std::string search = target.has_query ? "?" + std::string(target.query) : std::string();
  if (p == "/connect") {
    auto task = handle_connect(instance, std::move(request), std::move(search), std::move(socket));
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
  auto task = handle_raw_websocket(instance, std::move(request), std::move(rest),
                                   std::move(search), std::move(socket));
  co_await std::move(task);
}

}  // namespace rivetkit::core
