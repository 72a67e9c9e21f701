// The route table (core/router/route_table.hpp), the framework routes, and the router's entry
// points (core/router/router.hpp): route, then hand the request to its surface.

#include "core/router/route_table.hpp"

#include "core/errors.hpp"
#include "core/router/surfaces.hpp"
#include "util/url.hpp"

namespace rivetkit::core {

namespace client = protocol::client;

namespace router {

namespace {

constexpr const char* kBanner = "This is an RivetKit actor.\n\nLearn more at https://rivetkit.org";

// `path` is `prefix` or lies under it; the rest, "/" at least.
bool under(std::string_view path, std::string_view prefix, std::string& rest) {
  if (path != prefix
      && !(starts_with(path, prefix) && path.size() > prefix.size()
           && path[prefix.size()] == '/')) {
    return false;
  }
  rest = path.size() > prefix.size() ? std::string(path.substr(prefix.size())) : "/";
  return true;
}

Route split(std::string_view target) {
  auto parts = util::split_target(target);
  Route route;
  route.path = std::string(parts.path);
  route.search = parts.has_query ? "?" + std::string(parts.query) : std::string();
  return route;
}

}  // namespace

Route route_http(std::string_view method, std::string_view target) {
  Route route = split(target);
  const std::string_view p = route.path;
  if (starts_with(p, "/action/")) {
    route.surface = Surface::kHttpAction;
    route.rest = std::string(p.substr(8));
  } else if (starts_with(p, "/queue/")) {
    route.surface = Surface::kQueueSend;
    route.rest = std::string(p.substr(7));
  } else if (under(p, "/request", route.rest)) {
    route.surface = Surface::kRawHttp;
  } else if (starts_with(p, "/inspector/")) {
    route.surface = Surface::kInspector;
    route.rest = std::string(p.substr(10));  // "/state", "/action/x", ...
  } else if (method == "GET" && p == "/metadata") {
    route.surface = Surface::kMetadata;
  } else if (method == "GET" && p == "/health") {
    route.surface = Surface::kHealth;
  } else if (method == "GET" && p == "/") {
    route.surface = Surface::kBanner;
  }
  return route;
}

Route route_websocket(std::string_view target) {
  Route route = split(target);
  if (route.path == "/connect") {
    route.surface = Surface::kConnect;
    return route;
  }
  if (route.path == "/inspector/connect") {
    route.surface = Surface::kInspectorConnect;
    return route;
  }
  // Any other path is a raw WebSocket; the `/websocket` prefix is removed for the user.
  route.surface = Surface::kRawWebSocket;
  if (!under(route.path, "/websocket", route.rest)) {
    route.rest = route.path.empty() ? "/" : route.path;
  }
  return route;
}

}  // namespace router

Task<net::HttpResponse> ActorRouter::handle_http(ActorTarget target,
                                                 net::HttpRequest request,
                                                 std::string path) {
  auto route = router::route_http(request.method, path);
  auto encoding =
      client::http_encoding_from_header(request.header("x-rivet-encoding").value_or(""));
  net::HttpResponse resp;
  switch (route.surface) {
    case router::Surface::kHttpAction: {
      auto op = router::http_action(std::move(target), std::move(request), std::move(route.rest),
                                    encoding);
      co_return co_await std::move(op);
    }
    case router::Surface::kQueueSend: {
      auto op = router::queue_send(std::move(target), std::move(request), std::move(route.rest),
                                   encoding);
      co_return co_await std::move(op);
    }
    case router::Surface::kRawHttp: {
      auto op = router::raw_http(std::move(target), std::move(request), std::move(route.rest),
                                 std::move(route.search), encoding);
      co_return co_await std::move(op);
    }
    case router::Surface::kInspector: {
      auto op = router::inspector_http(std::move(target), std::move(request), std::move(route.rest),
                                       std::move(route.search));
      co_return co_await std::move(op);
    }
    case router::Surface::kMetadata:
      resp.body = R"({"runtime":"rivetkit","type":"local","version":"2.3.19"})";
      resp.set_header("content-type", "application/json");
      resp.set_header("referrer-policy", "no-referrer");
      break;
    case router::Surface::kHealth:
      resp.body = "ok";
      resp.set_header("content-type", "text/plain; charset=utf-8");
      break;
    case router::Surface::kBanner:
      resp.body = router::kBanner;
      resp.set_header("content-type", "text/plain; charset=utf-8");
      break;
    default:
      co_return error_response(route_not_found(route.path), encoding, target.instance.get());
  }
  router::add_actor_headers(resp, *target.instance);
  co_return resp;
}

Task<void> ActorRouter::handle_websocket(ActorTarget target,
                                         net::HttpRequest request,
                                         std::string path,
                                         std::shared_ptr<net::WebSocket> socket) {
  auto route = router::route_websocket(path);
  if (route.surface == router::Surface::kConnect) {
    auto op = router::connect(std::move(target), std::move(request), std::move(route.search),
                              std::move(socket));
    co_await std::move(op);
  } else if (route.surface == router::Surface::kInspectorConnect) {
    auto op = router::inspector_websocket(std::move(target), std::move(request),
                                          std::move(route.search), std::move(socket));
    co_await std::move(op);
  } else {
    auto op = router::raw_websocket(std::move(target), std::move(request), std::move(route.rest),
                                    std::move(route.search), std::move(socket));
    co_await std::move(op);
  }
}

Task<void> ActorRouter::resume_websocket(ActorTarget target,
                                         std::string conn_id,
                                         bool raw,
                                         protocol::client::Encoding encoding,
                                         std::shared_ptr<net::WebSocket> socket) {
  if (raw) {
    auto op = router::raw_websocket_session(std::move(target), std::move(conn_id), true,
                                            std::move(socket));
    co_await std::move(op);
  } else {
    auto op =
        router::connect_session(std::move(target), std::move(conn_id), encoding, std::move(socket));
    co_await std::move(op);
  }
}

}  // namespace rivetkit::core
