#include "serverless/serverless_server.hpp"

#include "core/errors.hpp"
#include "core/ids.hpp"
#include "core/notifier.hpp"
#include "engine/envoy_driver.hpp"
#include "engine/envoy_link.hpp"
#include "net/http_server.hpp"
#include "protocol/json/json.hpp"
#include "util/log.hpp"
#include "util/metrics.hpp"
#include "util/spawn.hpp"
#include "util/url.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <vector>

namespace rivetkit::serverless {

namespace asio = boost::asio;
namespace envoy = protocol::envoy;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

constexpr const char* kPing = "event: ping\ndata:\n\n";
constexpr const char* kStopping = "event: stopping\ndata:\n\n";
constexpr const char* kBanner = "This is a RivetKit server.\n\nLearn more at https://rivet.dev";

net::HttpResponse text(unsigned status,
                       std::string body,
                       std::string type = "text/plain; charset=utf-8") {
  net::HttpResponse res;
  res.status = status;
  res.set_header("content-type", std::move(type));
  res.body = std::move(body);
  return res;
}

// RivetKit's error shape: {group, code, message, metadata}.
net::HttpResponse error_response(const Error& e, unsigned status) {
  Value doc = Value::object({{"group", e.group}, {"code", e.code}, {"message", e.message}});
  doc.set("metadata", e.metadata.value_or(Value{nullptr}));
  return text(status, protocol::json_stringify(doc), "application/json");
}

// The base path ("/api/rivet", no trailing slash; "" for the root) and the route under it.
std::string normalize_base(std::string base) {
  while (!base.empty() && base.back() == '/') {
    base.pop_back();
  }
  if (!base.empty() && base.front() != '/') {
    base.insert(base.begin(), '/');
  }
  return base;
}

std::optional<std::string> route_under(const std::string& base, std::string_view target) {
  auto path = util::split_target(target).path;
  if (path.substr(0, base.size()) != base) {
    return std::nullopt;
  }
  std::string_view rest = path.substr(base.size());
  if (!rest.empty() && rest.front() != '/') {
    return std::nullopt;  // "/api/rivetx"
  }
  return std::string(rest);
}

// Fires `event` (a steady_timer used as an event) once the generation stopped.
Task<void> watch_generation(std::shared_ptr<engine::EnvoyDriver> driver,
                            std::string actor_id,
                            std::uint32_t generation,
                            std::shared_ptr<bool> stopped,
                            std::shared_ptr<asio::steady_timer> event) {
  auto wait_op = driver->wait_stopped(std::move(actor_id), generation);
  co_await std::move(wait_op);
  asio::post(event->get_executor(), [stopped, event] {
    *stopped = true;
    event->cancel();
  });
}

// The `/start` stream: a ping at once and every interval, `event: stopping` once the generation
// stopped; it ends then, or when the engine went away.
Task<void> start_stream(std::shared_ptr<engine::EnvoyDriver> driver,
                        std::string actor_id,
                        std::uint32_t generation,
                        std::shared_ptr<util::Clock> clock,
                        std::chrono::milliseconds interval,
                        asio::any_io_executor io,
                        net::ResponseStream& out) {
  auto ex = co_await asio::this_coro::executor;
  auto stopped = std::make_shared<bool>(false);
  auto event = std::make_shared<asio::steady_timer>(ex, asio::steady_timer::time_point::max());
  util::spawn(io, watch_generation(driver, actor_id, generation, stopped, event),
              "serverless start watch");
  auto first_op = out.write(kPing);
  if (!co_await std::move(first_op)) {
    co_return;
  }
  while (true) {
    if (*stopped) {
      auto stopping_op = out.write(kStopping);
      co_await std::move(stopping_op);
      log::debug("serverless: actor {} generation {} stopped: stream ends", actor_id, generation);
      co_return;
    }
    auto event_op = event->async_wait(asio::as_tuple(asio::use_awaitable));
    auto tick_op = clock->wait_for(interval);
    co_await (std::move(event_op) || std::move(tick_op));
    if (*stopped) {
      continue;
    }
    auto ping_op = out.write(kPing);
    if (!co_await std::move(ping_op)) {
      log::info("serverless: the engine closed the start stream of actor {} generation {}",
                actor_id, generation);
      co_return;
    }
  }
}

}  // namespace

// The cached envoy: its connection and the driver of the actors it starts.
struct Envoy {
  std::shared_ptr<engine::EnvoyLink> link;
  std::shared_ptr<engine::EnvoyDriver> driver;
};

struct ServerlessServer::Impl : std::enable_shared_from_this<ServerlessServer::Impl> {
  Impl(asio::io_context& io_context, core::Runtime& rt, ServerlessOptions opts)
      : io(io_context),
        runtime(rt),
        options(std::move(opts)),
        base(normalize_base(options.base_path)),
        strand(asio::make_strand(io_context)),
        envoy_changed(strand) {}

  asio::io_context& io;
  core::Runtime& runtime;
  ServerlessOptions options;
  const std::string base;
  // The cached envoy, on `strand`.
  asio::strand<asio::any_io_executor> strand;
  core::Notifier envoy_changed;
  bool connecting = false;
  std::shared_ptr<engine::EnvoyLink> link;
  std::shared_ptr<engine::EnvoyDriver> driver;
  /// Envoys whose connection failed: kept, since their link may still call its driver while it
  /// winds down.
  std::vector<Envoy> retired;
  std::atomic<bool> stopping{false};
  std::atomic<std::uint64_t> starts{0};  // accepted /start requests
  std::unique_ptr<net::HttpServer> http;

  Task<net::HttpResponse> on_http(net::HttpRequest req);
  /// The refusal of a start decided from its head (stopping, headers, declared size), if any;
  /// else its headers go to `headers`.
  std::optional<net::HttpResponse> refuse_start(const net::HttpRequest& head,
                                                std::optional<StartHeaders>* headers = nullptr);
  Task<net::HttpResponse> start(net::HttpRequest req);
  Task<net::HttpResponse> health();
  static Task<Result<Envoy>> ensure_envoy(std::shared_ptr<Impl> self, StartHeaders headers);
};

Task<net::HttpResponse> ServerlessServer::Impl::on_http(net::HttpRequest req) {
  auto route = route_under(base, req.target);
  if (!route) {
    co_return text(404, "Not Found (RivetKit)");
  }
  const std::string& method = req.method;
  if (method == "OPTIONS") {
    net::HttpResponse res;
    res.status = 204;
    co_return res;
  }
  if (*route == "/start" && (method == "POST" || method == "GET")) {
    auto op = start(std::move(req));
    co_return co_await std::move(op);
  }
  if (method != "GET") {
    co_return text(404, "Not Found (RivetKit)");
  }
  if (route->empty() || *route == "/") {
    co_return text(200, kBanner);
  }
  if (*route == "/health") {
    auto op = health();
    co_return co_await std::move(op);
  }
  if (*route == "/metadata") {
    co_return text(200, metadata_json(options.metadata), "application/json");
  }
  if (*route == "/metrics") {
    co_return text(200,
                   "# HELP rivetkit_info The RivetKit runtime serving here.\n"
                   "# TYPE rivetkit_info gauge\n"
                   "rivetkit_info{runtime=\"rivetkit-cpp\",version=\"2.3.19\",mode=\"serverless\"} 1\n"
                   "# HELP rivetkit_actors Actors with an instance here (running, starting or "
                   "stopping).\n"
                   "# TYPE rivetkit_actors gauge\n"
                   "rivetkit_actors "
                       + std::to_string(runtime.slot_count())
                       + "\n# HELP rivetkit_serverless_starts_total Actor starts accepted through "
                         "/start.\n# TYPE rivetkit_serverless_starts_total counter\n"
                         "rivetkit_serverless_starts_total "
                       + std::to_string(starts.load()) + "\n" + metrics::registry().render(),
                   std::string(metrics::kContentType));
  }
  co_return text(404, "Not Found (RivetKit)");
}

Task<net::HttpResponse> ServerlessServer::Impl::health() {
  // Healthy before the first start, and while the envoy holds its engine connection; 503 (a
  // container host's signal to recycle the process) once it has lost it.
  auto task = [](std::shared_ptr<Impl> self) -> Task<std::shared_ptr<engine::EnvoyLink>> {
    co_return self->link;
  };
  auto link_op = asio::co_spawn(strand, task(shared_from_this()), asio::use_awaitable);
  auto current = co_await std::move(link_op);
  if (current) {
    auto connected_task = [](std::shared_ptr<engine::EnvoyLink> l) -> Task<bool> {
      co_return l->connected();
    };
    auto connected_op =
        asio::co_spawn(current->strand(), connected_task(current), asio::use_awaitable);
    if (!co_await std::move(connected_op)) {
      co_return text(503, health_json("engine_ping_stale"), "application/json");
    }
  }
  co_return text(200, health_json("ok"), "application/json");
}

Task<Result<Envoy>> ServerlessServer::Impl::ensure_envoy(std::shared_ptr<Impl> self,
                                                         StartHeaders headers) {
  while (self->connecting) {
    auto wait_op = self->envoy_changed.wait();
    co_await std::move(wait_op);
  }
  if (self->driver) {
    co_return Envoy{self->link, self->driver};
  }
  self->connecting = true;
  engine::EnvoyLinkOptions link_options;
  link_options.endpoint = headers.endpoint;
  link_options.namespace_name = headers.namespace_name;
  link_options.token = headers.token ? headers.token : self->options.token;
  link_options.pool = headers.pool;
  link_options.envoy_key = core::new_uuid_v4();
  link_options.version = self->options.envoy_version;
  link_options.actor_names = self->runtime.actor_names();
  link_options.clock = self->runtime.config().clock;
  engine::EngineApiOptions api;
  api.endpoint = headers.endpoint;
  api.namespace_name = headers.namespace_name;
  api.token = link_options.token;
  api.pool = headers.pool;
  auto link = std::make_shared<engine::EnvoyLink>(self->io.get_executor(), std::move(link_options));
  auto driver = std::make_shared<engine::EnvoyDriver>(self->io.get_executor(), self->runtime, link,
                                                      std::move(api));
  driver->start();
  log::info("serverless: connecting to the engine at {} (namespace {}, pool {})", headers.endpoint,
            headers.namespace_name, headers.pool);
  auto connect_op = link->wait_connected(self->options.connect_timeout);
  auto connected = co_await std::move(connect_op);
  self->connecting = false;
  if (!connected) {
    link->stop();
    self->retired.push_back(Envoy{link, driver});
    self->envoy_changed.notify_all();
    co_return fail(connected.error());
  }
  self->link = link;
  self->driver = driver;
  self->envoy_changed.notify_all();
  co_return Envoy{std::move(link), std::move(driver)};
}

std::optional<net::HttpResponse> ServerlessServer::Impl::refuse_start(
    const net::HttpRequest& head, std::optional<StartHeaders>* headers) {
  if (stopping) {
    return error_response(
        Error{"registry", "shut_down", "Registry is shut down; no new requests can be accepted.",
              std::nullopt, true},
        503);
  }
  auto parsed = parse_start_headers(head.headers, options.expected);
  if (!parsed) {
    return error_response(parsed.error(), start_error_status(parsed.error()));
  }
  std::size_t size = head.body.size();
  if (auto length = head.header("content-length")) {
    size = std::max<std::size_t>(size, std::strtoull(std::string(*length).c_str(), nullptr, 10));
  }
  if (size > options.max_start_payload) {
    const Error too_long{
        "message", "incoming_too_long",
        "Incoming message too long. Exceeded limit of " + std::to_string(options.max_start_payload)
            + " bytes.",
        Value::object({{"limit", static_cast<std::int64_t>(options.max_start_payload)}}), true};
    return error_response(too_long, 413);
  }
  if (headers != nullptr) {
    *headers = std::move(*parsed);
  }
  return std::nullopt;
}

Task<net::HttpResponse> ServerlessServer::Impl::start(net::HttpRequest req) {
  std::optional<StartHeaders> headers;
  if (auto refused = refuse_start(req, &headers)) {
    co_return std::move(*refused);
  }
  auto command = parse_start_body(req.body);
  if (!command) {
    co_return error_response(command.error(), start_error_status(command.error()));
  }
  const auto& start_actor = std::get<envoy::CommandStartActor>(command->inner);
  if (!runtime.definition(start_actor.config.name)) {
    co_return error_response(core::unknown_actor_name(start_actor.config.name), 400);
  }
  auto envoy_op = asio::co_spawn(strand, ensure_envoy(shared_from_this(), std::move(*headers)),
                                 asio::use_awaitable);
  auto ready = co_await std::move(envoy_op);
  if (!ready) {
    log::warn("serverless: no envoy connection for a start: {}", ready.error().message);
    co_return error_response(
        Error{"serverless", "envoy_unavailable",
              "Could not connect to the engine: " + ready.error().message, std::nullopt, true},
        503);
  }
  auto started_on = ready->driver;
  const std::string actor_id = command->checkpoint.actor_id;
  const std::uint32_t generation = command->checkpoint.generation;
  log::info("serverless: start of actor {} ({}) generation {}", actor_id, start_actor.config.name,
            generation);
  ready->link->deliver_commands(envoy::ToEnvoyCommands{{std::move(*command)}});
  starts.fetch_add(1);

  net::HttpResponse res;
  res.set_header("content-type", "text/event-stream");
  res.set_header("cache-control", "no-cache");
  res.stream = [started_on, actor_id, generation, clock = runtime.config().clock,
                interval = options.ping_interval,
                io_ex = io.get_executor()](net::ResponseStream& out) {
    return start_stream(started_on, actor_id, generation, clock, interval, io_ex, out);
  };
  co_return res;
}

ServerlessServer::ServerlessServer(asio::io_context& io,
                                   core::Runtime& runtime,
                                   ServerlessOptions options)
    : impl_(std::make_shared<Impl>(io, runtime, std::move(options))) {}

ServerlessServer::~ServerlessServer() {
  stop();
}

Result<std::uint16_t> ServerlessServer::listen(const std::string& host, std::uint16_t port) {
  net::HttpHandlers handlers;
  std::weak_ptr<Impl> weak = impl_;
  handlers.on_http = [weak](net::HttpRequest req) -> Task<net::HttpResponse> {
    auto self = weak.lock();
    if (!self) {
      co_return text(503, "shutting down");
    }
    auto op = self->on_http(std::move(req));
    co_return co_await std::move(op);
  };
  // A start is refused from its head (headers, declared size) before its body is read.
  handlers.answer_head = [weak](const net::HttpRequest& head) -> std::optional<net::HttpResponse> {
    auto self = weak.lock();
    if (!self) {
      return std::nullopt;
    }
    auto route = route_under(self->base, head.target);
    if (!route || *route != "/start") {
      return std::nullopt;
    }
    return self->refuse_start(head);
  };
  net::HttpServerConfig config;
  // A start body over the limit gets RivetKit's 413 from the handler; far larger ones the
  // server's own.
  config.max_body_bytes = std::max<std::size_t>(impl_->options.max_start_payload * 2, 64u << 10);
  impl_->http = std::make_unique<net::HttpServer>(impl_->io, config, std::move(handlers));
  return impl_->http->listen(host, port);
}

void ServerlessServer::stop() {
  if (!impl_ || impl_->stopping.exchange(true)) {
    return;
  }
  auto take = [](std::shared_ptr<Impl> self) -> Task<Envoy> {
    while (self->connecting) {
      auto wait_op = self->envoy_changed.wait();
      co_await std::move(wait_op);
    }
    co_return Envoy{self->link, self->driver};
  };
  auto envoy_future = asio::co_spawn(impl_->strand, take(impl_), asio::use_future);
  Envoy current;
  if (envoy_future.wait_for(impl_->options.connect_timeout + std::chrono::seconds(5))
      == std::future_status::ready) {
    current = envoy_future.get();
  }
  if (current.driver) {
    // Bounded by the engine's stop threshold, never longer than a minute (as engine mode).
    auto limit = std::chrono::milliseconds(
        std::min<std::int64_t>(current.link->metadata().actor_stop_threshold, 60'000));
    auto done = asio::co_spawn(impl_->io, current.driver->shutdown(limit), asio::use_future);
    if (done.wait_for(limit + std::chrono::seconds(10)) != std::future_status::ready) {
      log::error("serverless shutdown timed out");
    }
  }
  if (impl_->http) {
    impl_->http->stop_accepting();
    impl_->http->close_all();
  }
}

}  // namespace rivetkit::serverless
