#include "local/local_server.hpp"

#include "core/driver.hpp"
#include "core/errors.hpp"
#include "core/ids.hpp"
#include "core/router/router.hpp"
#include "local/local_context.hpp"
#include "local/local_driver.hpp"
#include "net/http_server.hpp"
#include "protocol/json/json.hpp"
#include "protocol/text/utf8.hpp"
#include "util/log.hpp"
#include "util/spawn.hpp"
#include "util/url.hpp"

#include <boost/asio/strand.hpp>

namespace rivetkit::local {

namespace {

constexpr const char* kVersion = "2.3.19";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// CORS as the engine answers it (client-protocol.md §4.1, §5.4). Gateway responses reflect the
// Origin (or "*"); REST responses echo Origin, methods and headers.
void add_gateway_cors(const net::HttpRequest& req, net::HttpResponse& resp) {
  auto origin = req.header("origin");
  resp.set_header("access-control-allow-origin", origin ? std::string(*origin) : "*");
  resp.set_header("access-control-allow-credentials", "true");
  resp.set_header("access-control-expose-headers", "*");
  if (origin) {
    resp.set_header("vary", "Origin");
  }
}

void add_rest_cors(const net::HttpRequest& req, net::HttpResponse& resp) {
  resp.set_header("vary", "origin, access-control-request-method, access-control-request-headers");
  resp.set_header("access-control-allow-credentials", "true");
  if (auto origin = req.header("origin")) {
    resp.set_header("access-control-allow-origin", std::string(*origin));
  }
}

net::HttpResponse preflight(const net::HttpRequest& req) {
  net::HttpResponse resp;
  resp.status = 204;
  auto origin = req.header("origin");
  resp.set_header("access-control-allow-origin", origin ? std::string(*origin) : "*");
  resp.set_header("access-control-allow-credentials", "true");
  resp.set_header("access-control-expose-headers", "*");
  resp.set_header("access-control-allow-methods", "GET, POST, PUT, DELETE, OPTIONS, PATCH");
  auto requested = req.header("access-control-request-headers");
  resp.set_header("access-control-allow-headers", requested ? std::string(*requested) : "*");
  resp.set_header("access-control-max-age", "86400");
  if (origin) {
    resp.set_header("vary", "Origin");
  }
  return resp;
}

std::string_view path_of(const net::HttpRequest& req) {
  return util::split_target(req.target).path;
}

bool header_routed(const net::HttpRequest& req) {
  auto target = req.header("x-rivet-target");
  return target && *target == "actor";
}

}  // namespace

unsigned engine_status(const Error& e) {
  if ((e.group == "actor" && (e.code == "not_found" || e.code == "kv_key_not_found"))
      || (e.group == "guard" && e.code == "no_route")
      || (e.group == "api" && e.code == "not_found")) {
    return 404;
  }
  if (e.group == "api" && e.code == "unauthorized") {
    return 401;
  }
  if (e.group == "api" && e.code == "forbidden") {
    return 403;
  }
  if (e.group == "guard") {
    if (e.code == "service_unavailable" || e.code == "actor_ready_timeout") {
      return 503;
    }
    if (e.code == "invalid_request_body") {
      return 413;
    }
  }
  // A fault of this server (storage, anything not meant for clients) is never the client's:
  // 500, whatever its code (a full disk once answered 400 storage.sqlite_error).
  if ((e.group == "core" && e.code == "internal_error") || !e.is_public) {
    return 500;
  }
  return 400;
}

net::HttpResponse engine_error(const Error& error) {
  if (!error.is_public) {
    // The client sees only core.internal_error: the cause goes to the log.
    log::error("request failed: {}: {}", error.qualified_code(), error.message);
  }
  Error shown = sanitize_for_client(error);
  net::HttpResponse resp;
  resp.status = engine_status(error);
  Value body =
      Value::object({{"group", shown.group}, {"code", shown.code}, {"message", shown.message}});
  if (shown.metadata) {
    body.set("metadata", *shown.metadata);
  }
  resp.body = protocol::json_stringify(body);
  resp.set_header("content-type", "application/json");
  resp.set_header("x-rivet-error", error.qualified_code());
  return resp;
}

// The HTTP front door: metadata, REST API, gateway and CORS. The actors behind it are the local
// driver's (local_driver.*) and the directory's (local_directory.*).
struct LocalServer::Impl : std::enable_shared_from_this<Impl> {
  Impl(boost::asio::io_context& io,
       RegistryConfig config,
       core::Runtime& runtime,
       std::shared_ptr<storage::LocalStore> store)
      : ctx(std::make_shared<LocalContext>(std::move(config), runtime, std::move(store))),
        io_(io),
        driver(std::make_shared<LocalDriver>(io, ctx)) {}

  std::shared_ptr<LocalContext> ctx;
  boost::asio::io_context& io_;
  std::shared_ptr<LocalDriver> driver;
  std::unique_ptr<net::HttpServer> server;

  static Task<net::HttpResponse> on_http(std::shared_ptr<Impl> self, net::HttpRequest req);
  static Task<net::HttpResponse> route_http(std::shared_ptr<Impl> self, net::HttpRequest req);
  static Task<void> on_websocket(std::shared_ptr<Impl> self,
                                 net::HttpRequest req,
                                 std::shared_ptr<net::WebSocket> socket);
  net::HttpResponse metadata() const;
};

net::HttpResponse LocalServer::Impl::metadata() const {
  Value names{Object{}};
  for (const auto& name : ctx->runtime.actor_names()) {
    names.set(name, Value::object({{"metadata", Value{Object{}}}}));
  }
  // The fields the engine and a rivetkit app answer with; `actorNames` is required by the Swift
  // client (client-protocol.md §3). No `clientEndpoint`: clients keep talking to us.
  Value body = Value::object({{"runtime", "rivetkit"},
                              {"version", kVersion},
                              {"mode", "local"},
                              {"implementation", "rivetkit-cpp"},
                              {"envoyProtocolVersion", 8},
                              {"actorNames", names}});
  net::HttpResponse resp;
  resp.body = protocol::json_stringify(body);
  resp.set_header("content-type", "application/json");
  return resp;
}

Task<net::HttpResponse> LocalServer::Impl::on_http(std::shared_ptr<Impl> self,
                                                   net::HttpRequest req) {
  if (!self) {
    co_return engine_error(
        Error{"guard", "service_unavailable", "The server is stopping", std::nullopt, true});
  }
  std::string ray_id = core::new_ray_id();
  bool gateway = starts_with(path_of(req), "/gateway/") || header_routed(req);
  net::HttpRequest copy_for_cors;
  copy_for_cors.headers = req.headers;
  net::HttpResponse resp;
  if (req.method == "OPTIONS") {
    resp = preflight(req);
  } else {
    req.headers.push_back(net::Header{"x-rivet-ray-id", ray_id});
    auto task = route_http(self, std::move(req));
    resp = co_await std::move(task);
    if (gateway) {
      add_gateway_cors(copy_for_cors, resp);
    } else {
      add_rest_cors(copy_for_cors, resp);
    }
  }
  resp.set_header("x-rivet-ray-id", ray_id);
  co_return resp;
}

Task<net::HttpResponse> LocalServer::Impl::route_http(std::shared_ptr<Impl> self,
                                                      net::HttpRequest req) {
  std::string path(path_of(req));
  if (starts_with(path, "/gateway/")) {
    auto parsed = parse_gateway_target(req.target);
    if (!parsed) {
      co_return engine_error(parsed.error());
    }
    std::string actor_path = parsed->actor_path;
    auto resolve_op = resolve_gateway(self->ctx, std::move(*parsed));
    auto instance = co_await std::move(resolve_op);
    if (!instance) {
      co_return engine_error(instance.error());
    }
    auto op = core::ActorRouter::handle_http(make_target(self->ctx, std::move(*instance)),
                                             std::move(req), std::move(actor_path));
    co_return co_await std::move(op);
  }
  if (header_routed(req)) {
    // Header routing is only for raw requests (client-protocol.md §5.3).
    auto actor_id = req.header("x-rivet-actor");
    if (!actor_id || !is_raw_request_path(path)) {
      co_return engine_error(Error{"guard", "no_route", "No route found", std::nullopt, true});
    }
    auto acquire_op = acquire_actor_id(self->ctx, std::string(*actor_id));
    auto instance = co_await std::move(acquire_op);
    if (!instance) {
      co_return engine_error(instance.error());
    }
    std::string target = req.target;
    auto op = core::ActorRouter::handle_http(make_target(self->ctx, std::move(*instance)),
                                             std::move(req), std::move(target));
    co_return co_await std::move(op);
  }
  if (path == "/metadata" && req.method == "GET") {
    co_return self->metadata();
  }
  if (path == "/metrics" && req.method == "GET") {
    auto op = local_metrics(self->ctx);
    co_return co_await std::move(op);
  }
  if (path == "/health" && req.method == "GET") {
    net::HttpResponse resp;
    resp.body =
        std::string(R"({"runtime":"rivetkit","status":"ok","version":")") + kVersion + "\"}";
    resp.set_header("content-type", "application/json");
    co_return resp;
  }
  if (path == "/" && req.method == "GET") {
    net::HttpResponse resp;
    resp.body = "rivetkit-cpp local mode. Point a RivetKit client at this address.\n";
    resp.set_header("content-type", "text/plain; charset=utf-8");
    co_return resp;
  }
  auto op = handle_rest(self->ctx, std::move(req));
  co_return co_await std::move(op);
}

Task<void> LocalServer::Impl::on_websocket(std::shared_ptr<Impl> self,
                                           net::HttpRequest req,
                                           std::shared_ptr<net::WebSocket> socket) {
  if (!self) {
    socket->close(1001, "ws.going_away");
    co_return;
  }
  std::string ray_id = core::new_ray_id();
  std::string path(path_of(req));
  auto close_with = [&](const Error& e) {
    // Routing failures arrive as a close after the 101, as from the engine (§5.5).
    std::string reason = e.qualified_code() + "#" + ray_id;
    if (reason.size() > 123) {
      reason.resize(123);
    }
    socket->close(1011, std::move(reason));
  };
  std::shared_ptr<core::ActorInstance> instance;
  std::string actor_path;
  if (starts_with(path, "/gateway/")) {
    auto parsed = parse_gateway_target(req.target);
    if (!parsed) {
      close_with(parsed.error());
      co_return;
    }
    actor_path = parsed->actor_path;
    auto resolve_op = resolve_gateway(self->ctx, std::move(*parsed));
    auto resolved = co_await std::move(resolve_op);
    if (!resolved) {
      close_with(resolved.error());
      co_return;
    }
    instance = std::move(*resolved);
  } else {
    // Subprotocol routing: rivet_target.actor + rivet_actor.<pct id> (§5.3).
    auto protocols = req.header("sec-websocket-protocol").value_or("");
    std::optional<std::string> actor_id;
    bool target_actor = false;
    std::string_view rest = protocols;
    while (!rest.empty()) {
      auto comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      while (!item.empty() && item.front() == ' ') {
        item.remove_prefix(1);
      }
      while (!item.empty() && item.back() == ' ') {
        item.remove_suffix(1);
      }
      if (item == "rivet_target.actor") {
        target_actor = true;
      } else if (starts_with(item, "rivet_actor.")) {
        actor_id = util::percent_decode(item.substr(12));
        if (actor_id && !protocol::text::is_valid_utf8(*actor_id)) {
          actor_id.reset();  // ids are protocol strings: not UTF-8 means no such actor
        }
      }
    }
    if (!target_actor || !actor_id || actor_id->empty()) {
      close_with(Error{"guard", "no_route", "No route found", std::nullopt, true});
      co_return;
    }
    auto acquire_op = acquire_actor_id(self->ctx, *actor_id);
    auto resolved = co_await std::move(acquire_op);
    if (!resolved) {
      close_with(resolved.error());
      co_return;
    }
    instance = std::move(*resolved);
    actor_path = req.target;
  }
  auto op = core::ActorRouter::handle_websocket(make_target(self->ctx, std::move(instance)),
                                                std::move(req), std::move(actor_path), socket);
  co_await std::move(op);
}

LocalServer::LocalServer(boost::asio::io_context& io,
                         RegistryConfig config,
                         core::Runtime& runtime,
                         std::shared_ptr<storage::LocalStore> store)
    : impl_(std::make_shared<Impl>(io, std::move(config), runtime, std::move(store))) {}

LocalServer::~LocalServer() {
  stop();
}

Result<std::uint16_t> LocalServer::start() {
  const auto& config = impl_->ctx->config;
  net::HttpServerConfig server_config;
  // Each route's limit applies before its body or message is buffered. Raw routes take up to
  // max_raw_message_size; everything else is held to twice max_incoming_message_size (plus
  // framing): within that the router answers RivetKit's message.incoming_too_long itself, beyond
  // it the transport refuses at once (413, or 1009 on a socket) without reading it.
  const std::size_t framed_limit = 2 * config.max_incoming_message_size + (64u << 10);
  server_config.max_body_bytes = std::max(config.max_raw_message_size, framed_limit);
  server_config.max_ws_message_bytes = server_config.max_body_bytes;
  server_config.max_ws_send_backlog_bytes =
      std::max(config.max_send_backlog, 2 * config.max_outgoing_message_size);
  server_config.ws_send_stall_timeout = std::chrono::milliseconds(config.send_stall_timeout_ms);
  server_config.max_connections = config.max_connections;
  // /gateway/<actor>/request[/...] and /gateway/<actor>/websocket[/...] (gateway_path.hpp).
  auto is_raw = [](std::string_view target) {
    auto path = target.substr(0, target.find('?'));
    constexpr std::string_view kGateway = "/gateway/";
    if (!path.starts_with(kGateway)) {
      return false;
    }
    path.remove_prefix(kGateway.size());
    const auto slash = path.find('/');
    if (slash == std::string_view::npos) {
      return false;
    }
    path.remove_prefix(slash + 1);
    const auto route = path.substr(0, path.find('/'));
    return route == "request" || route == "websocket";
  };
  const std::size_t raw_limit = config.max_raw_message_size;
  std::weak_ptr<Impl> weak = impl_;
  net::HttpHandlers handlers;
  handlers.on_http = [weak](net::HttpRequest req) -> Task<net::HttpResponse> {
    return Impl::on_http(weak.lock(), std::move(req));
  };
  handlers.body_limit = [is_raw, raw_limit, framed_limit](std::string_view target) {
    return is_raw(target) ? raw_limit : framed_limit;
  };
  handlers.accept_websocket = [is_raw, raw_limit, framed_limit](const net::HttpRequest& req) {
    net::WsAccept accept;
    accept.max_message_bytes = is_raw(req.target) ? raw_limit : framed_limit;
    auto protocols = core::parse_ws_protocols(req);
    // Browsers and `ws` fail the handshake when protocols were offered and none is returned;
    // the engine always answers "rivet" (client-protocol.md §5.5).
    if (protocols.offered_rivet) {
      accept.subprotocol = "rivet";
    } else if (auto header = req.header("sec-websocket-protocol");
               header && protocols.offered_any) {
      std::string_view first = header->substr(0, header->find(','));
      while (!first.empty() && first.back() == ' ') {
        first.remove_suffix(1);
      }
      accept.subprotocol = std::string(first);
    }
    return accept;
  };
  handlers.on_websocket = [weak](net::HttpRequest req,
                                 std::shared_ptr<net::WebSocket> socket) -> Task<void> {
    return Impl::on_websocket(weak.lock(), std::move(req), std::move(socket));
  };
  impl_->server = std::make_unique<net::HttpServer>(impl_->io_, server_config, std::move(handlers));
  auto port = impl_->server->listen(impl_->ctx->config.host, impl_->ctx->config.port);
  if (!port) {
    return port;
  }
  impl_->ctx->config.port = *port;
  impl_->driver->start();
  return port;
}

void LocalServer::stop_accepting() {
  if (impl_ && impl_->server) {
    impl_->server->stop_accepting();
  }
  if (impl_) {
    impl_->driver->stop_alarms();
  }
}

void LocalServer::drain() {
  if (impl_ && impl_->server) {
    impl_->server->drain();
  }
  if (impl_) {
    impl_->driver->stop_alarms();
  }
}

void LocalServer::close_all() {
  if (impl_ && impl_->server) {
    impl_->server->close_all();
  }
}

std::size_t LocalServer::open_connections() const {
  return impl_ && impl_->server ? impl_->server->open_connections() : 0;
}

void LocalServer::stop() {
  stop_accepting();
  if (impl_ && impl_->server) {
    impl_->server->close_all();
  }
}

}  // namespace rivetkit::local
