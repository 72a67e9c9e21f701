#include "net/metrics_endpoint.hpp"

#include "util/metrics.hpp"

namespace rivetkit::net {

HttpResponse metrics_response(std::string_view extra) {
  HttpResponse resp;
  resp.body = metrics::registry().render();
  resp.body.append(extra);
  resp.set_header("content-type", std::string(metrics::kContentType));
  resp.set_header("cache-control", "no-store");
  return resp;
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(boost::asio::io_context& io,
                                                            const std::string& host,
                                                            std::uint16_t port,
                                                            std::string mode) {
  HttpServerConfig config;
  config.max_body_bytes = 4096;  // scrapes have no body
  HttpHandlers handlers;
  handlers.on_http = [mode = std::move(mode)](HttpRequest req) -> Task<HttpResponse> {
    std::string_view path = req.target;
    path = path.substr(0, path.find('?'));
    if (path == "/metrics" && (req.method == "GET" || req.method == "HEAD")) {
      co_return metrics_response();
    }
    HttpResponse resp;
    if (path == "/health" && req.method == "GET") {
      resp.body = R"({"status":"ok","mode":")" + mode + "\"}";
      resp.set_header("content-type", "application/json");
      co_return resp;
    }
    resp.status = 404;
    resp.body = "not found: this port serves GET /metrics and GET /health\n";
    resp.set_header("content-type", "text/plain; charset=utf-8");
    co_return resp;
  };
  auto server = std::make_unique<HttpServer>(io, config, std::move(handlers));
  auto bound = server->listen(host, port);
  if (!bound) {
    Error e = bound.error();
    e.message = "metrics listener on " + host + ":" + std::to_string(port) + ": " + e.message;
    return fail(std::move(e));
  }
  std::unique_ptr<MetricsServer> out(new MetricsServer(std::move(server)));
  out->port_ = *bound;
  return out;
}

MetricsServer::~MetricsServer() {
  stop();
}

void MetricsServer::stop() {
  if (server_) {
    server_->stop_accepting();
    server_->close_all();
    server_.reset();
  }
}

}  // namespace rivetkit::net
