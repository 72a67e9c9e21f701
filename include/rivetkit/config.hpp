#pragma once
/// Registry configuration: where local mode listens and stores data, message limits, threads.
/// Every field can come from the environment and from command-line flags (README, Configuration;
/// a server's --help lists them).

#include <rivetkit/result.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace rivetkit {

struct RegistryConfig {
  /// RIVETKIT_HOST / --host
  std::string host = "127.0.0.1";
  /// RIVETKIT_PORT / --port (0 picks an ephemeral port)
  std::uint16_t port = 6420;
  /// RIVETKIT_DATA_DIR / --data-dir
  std::string data_dir = ".rivetkit";
  /// RIVETKIT_WORKER_THREADS / --threads (0: one per core)
  unsigned worker_threads = 0;
  /// RIVETKIT_MAX_INCOMING_MESSAGE_SIZE: largest action/queue body or connection frame (bytes).
  std::size_t max_incoming_message_size = 65'536;
  /// RIVETKIT_MAX_OUTGOING_MESSAGE_SIZE: largest action response or event (bytes).
  std::size_t max_outgoing_message_size = 1'048'576;
  /// RIVETKIT_MAX_RAW_MESSAGE_SIZE: largest raw HTTP body (`on_request`) or raw WebSocket message
  /// (`on_websocket`) accepted (bytes; 20 MiB, what the engine's gateway forwards).
  std::size_t max_raw_message_size = 20u << 20;
  /// RIVETKIT_MAX_SEND_BACKLOG: outgoing bytes a WebSocket client may leave unread before it is
  /// closed (1008 "ws.send_backlog_exceeded"); bounds the memory a client that never reads costs.
  /// Past half of it the server stops reading the client's messages until it catches up.
  std::size_t max_send_backlog = 16u << 20;
  /// RIVETKIT_SEND_STALL_TIMEOUT_MS: how long a WebSocket client may leave that half unread
  /// without taking any of it before it is closed the same way (ms; 0: never).
  std::size_t send_stall_timeout_ms = 30'000;
  /// RIVETKIT_MAX_CONNECTIONS: open client connections at most; beyond, new ones get 503 and a
  /// close (0: the file descriptor limit less a reserve).
  std::size_t max_connections = 0;
  /// RIVETKIT_SYNC=full|normal: fsync every commit (survives power loss) or not (survives process
  /// crashes only).
  bool fsync = true;

  /// RIVETKIT_METRICS_PORT / --metrics-port: also serve Prometheus metrics (GET /metrics) and
  /// /health on this port (0: any free port; the chosen one is printed). Local mode serves
  /// /metrics on its main port as well; engine and serverless mode only here.
  std::optional<std::uint16_t> metrics_port;
  /// RIVETKIT_METRICS_HOST / --metrics-host: the metrics listener's address (default: host).
  std::optional<std::string> metrics_host;

  /// RIVETKIT_TEST_MODE=1: test mode, as RivetKit's `test.enabled`: raw hibernatable WebSockets
  /// answer the ack-state probe `{"__rivetkitTestHibernatableAckStateV1":true}` (for Rivet's
  /// driver test suite) and create_vars sees DriverContext::is_test. Never for production.
  bool test_mode = false;

  /// RIVET_INSPECTOR_DISABLE=1: the inspector (`/inspector/...` of every actor) is not served.
  bool inspector = true;
  /// _RIVET_TEST_INSPECTOR_TOKEN: a token every actor's inspector accepts instead of its own, as
  /// RivetKit's test override (Rivet's driver suite); in test mode (test_mode) it defaults to
  /// `token`, as RivetKit's. Never for production.
  std::optional<std::string> inspector_test_token;

  /// RIVET_ENDPOINT / --endpoint: when set, engine mode: this process is an envoy of that engine.
  std::optional<std::string> endpoint;
  /// RIVET_NAMESPACE, RIVET_TOKEN, RIVET_POOL
  std::string namespace_name = "default";
  std::optional<std::string> token;
  std::string pool = "default";
  /// RIVET_REGION: the region this process runs in, as actors see it (`c.region()`).
  std::string region;

  /// RIVETKIT_RUNTIME_MODE=serverless (or `envoy`, the default): serverless mode. The engine
  /// starts actors here on demand through `{serverless_base_path}/start` on host:port; endpoint,
  /// namespace and token (when set) are the engine starts are accepted from.
  bool serverless = false;
  /// RIVETKIT_SERVERLESS_BASE_PATH: where serverless mode's routes are.
  std::string serverless_base_path = "/api/rivet";
  /// RIVET_PUBLIC_ENDPOINT: the endpoint clients should use, announced in serverless metadata.
  std::optional<std::string> public_endpoint;

  /// Reads the environment over the defaults.
  static Result<RegistryConfig> from_env();
};

}  // namespace rivetkit
