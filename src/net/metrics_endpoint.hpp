#pragma once
// The Prometheus endpoint: GET /metrics answers the process's metrics (util/metrics.hpp) in the
// text format. Local mode serves it on its main port; MetricsServer serves it (and /health) on a
// port of its own (RIVETKIT_METRICS_PORT), the only way in engine and serverless mode, where the
// process has no client-facing port, and a way to keep metrics off the public one.

#include "net/http_server.hpp"
#include "net/http_types.hpp"
#include <rivetkit/result.hpp>

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace rivetkit::net {

/// The /metrics response: every registered family, then `extra` (series the caller computed for
/// this scrape, in the text format).
HttpResponse metrics_response(std::string_view extra = {});

class MetricsServer {
 public:
  /// Listens on host:port (0: any free port). `mode` is reported by /health.
  static Result<std::unique_ptr<MetricsServer>> start(boost::asio::io_context& io,
                                                      const std::string& host,
                                                      std::uint16_t port,
                                                      std::string mode);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  std::uint16_t port() const { return port_; }
  /// Closes the listener and its connections.
  void stop();

 private:
  explicit MetricsServer(std::unique_ptr<HttpServer> server) : server_(std::move(server)) {}
  std::unique_ptr<HttpServer> server_;
  std::uint16_t port_ = 0;
};

}  // namespace rivetkit::net
