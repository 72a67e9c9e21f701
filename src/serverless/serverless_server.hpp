#pragma once
// Serverless mode (envoy-protocol.md §5): the engine starts this process's actors on demand. It
// polls `GET {base}/metadata` and opens one `POST {base}/start` per actor allocation; the process
// keeps one envoy connection to the engine the first start names (not touching the pool's runner
// config, which the operator owns), starts the actor from the request's body, and answers a
// server-sent-event stream: a ping every second, then `event: stopping` once that generation has
// stopped (slept, moved, destroyed), ending the stream. From then on the actor is served exactly
// as in engine mode (core/ and engine/envoy_driver.*).
//
// Routes under the base path (default /api/rivet): GET / (banner), GET /health (200, or 503 once
// the envoy lost the engine), GET /metadata, GET /metrics, GET|POST /start, OPTIONS (204).

#include "core/runtime.hpp"
#include "serverless/metadata.hpp"
#include "serverless/start_request.hpp"
#include <rivetkit/result.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace rivetkit::serverless {

struct ServerlessOptions {
  std::string base_path = "/api/rivet";
  /// Which engine and namespace starts are accepted from.
  StartExpectations expected;
  /// The token the envoy connects with when a start carries none (RIVET_TOKEN).
  std::optional<std::string> token;
  /// Largest `/start` body (1 MiB, as RivetKit).
  std::size_t max_start_payload = 1u << 20;
  std::uint32_t envoy_version = 1;
  MetadataOptions metadata;
  std::chrono::milliseconds ping_interval{1000};
  /// How long the first start waits for the envoy connection.
  std::chrono::milliseconds connect_timeout{30'000};
};

class ServerlessServer {
 public:
  ServerlessServer(boost::asio::io_context& io, core::Runtime& runtime, ServerlessOptions options);
  ~ServerlessServer();
  ServerlessServer(const ServerlessServer&) = delete;
  ServerlessServer& operator=(const ServerlessServer&) = delete;

  /// Listens on host:port (0: an ephemeral port) and returns the port.
  Result<std::uint16_t> listen(const std::string& host, std::uint16_t port);
  /// Graceful stop, blocking and bounded: no new starts; the envoy tells the engine it stops and
  /// its actors are stopped (their streams end with `event: stopping`); the listener closes.
  void stop();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace rivetkit::serverless
