#pragma once
// Makes sure a Rivet Engine answers at the configured endpoint, starting a local one when allowed
// (envoy-protocol.md §1.1: rivetkit spawns its own engine only for loopback endpoints).
//
// Spawn modes (RIVETKIT_ENGINE_SPAWN):
//   auto    loopback endpoint (localhost, 127.0.0.0/8, ::1, 0.0.0.0, ::): reuse the engine that
//           answers GET {endpoint}/health, otherwise start one. Remote endpoint: never start one,
//           and do not probe it (the operator runs it); the handle owns nothing.
//   always  always start one. The endpoint must be loopback, and nothing may answer /health there
//           yet (error engine.already_running): the new engine could not bind its port, and
//           silently reusing the old one would hide that the caller asked for a fresh engine.
//   never   never start one. If the endpoint is http:// and nothing answers /health: error
//           engine.not_running. (https:// endpoints are not probed.)
//
// A started engine ("owned"): rivet-engine `start --config <data_dir>/engine/config.json`,
// configured like shared/reference/peer-bench/start-engine.sh: guard on the endpoint's host and
// port (tcp_nodelay on), api_peer on port+1, metrics on port+10, file-system storage in
// <data_dir>/engine/db, telemetry off, `runtime.worker_cpu_max` 1,000,000 (no CPU load shedding,
// which stalls actor creation on 2-core machines), one datacenter "default" with label 1. Output
// goes to <data_dir>/engine/logs/engine.{stdout,stderr}.log; RUST_LOG=warn (override with
// RIVETKIT_ENGINE_RUST_LOG). The child runs in its own process group with stdin from /dev/null
// and gets SIGTERM if the thread that started it exits (PR_SET_PDEATHSIG), so a crashed runtime
// leaves no engine behind. ensure() waits for /health (polled every 250 ms, up to
// health_timeout) and fails early, with the tail of the engine's logs, if the child exits.
//
// Binary: opts.binary_path, else $RIVET_ENGINE_BINARY_PATH, else the first
// node_modules/@rivetkit/engine-cli-linux-x64-{musl,gnu}/rivet-engine found walking up from the
// current directory, then from the executable's directory. An explicit path that is not an
// executable file is an error (no fallback to the search).
//
// Errors: group "engine"; codes invalid_spawn_mode, invalid_endpoint, binary_not_found,
// already_running, not_running, port_in_use, spawn_failed, exited_early, health_timeout.

#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rivetkit::engine {

enum class SpawnMode { kAuto, kAlways, kNever };

/// "auto" | "always" | "never" (case-insensitive, surrounding blanks ignored).
Result<SpawnMode> parse_spawn_mode(std::string_view text);

struct EngineProcessOptions {
  std::string endpoint;  // http://host:port of the engine's guard
  SpawnMode mode = SpawnMode::kAuto;
  std::optional<std::string> binary_path;  // overrides $RIVET_ENGINE_BINARY_PATH and the search
  std::string data_dir;                    // the engine's files go to <data_dir>/engine/
  std::chrono::milliseconds health_timeout{60'000};
};

/// A handle on the engine at an endpoint. If this process started it (owned()), stop() or the
/// destructor stops it: SIGTERM to its process group, SIGKILL after 5 s, then reaps it. Not
/// thread-safe; stop() blocks (normally well under a second).
class EngineProcess {
 public:
  /// Finds or starts the engine according to opts.mode (see the file comment). Runs on `ex`;
  /// blocks nothing but the short fork/exec.
  static Task<Result<std::unique_ptr<EngineProcess>>> ensure(boost::asio::any_io_executor ex,
                                                             EngineProcessOptions opts);

  ~EngineProcess();
  EngineProcess(const EngineProcess&) = delete;
  EngineProcess& operator=(const EngineProcess&) = delete;

  /// True if this process started the engine (stays true after stop()).
  bool owned() const { return owned_; }
  /// The engine's pid (also its process group id) while owned and not stopped; -1 otherwise.
  int pid() const { return pid_; }
  const std::string& endpoint() const { return endpoint_; }
  /// <data_dir>/engine/logs when owned; empty otherwise.
  const std::string& log_dir() const { return log_dir_; }
  /// False once an owned engine exited or was stopped (never reaps; stop() does). Always true
  /// for a non-owning handle.
  bool running();
  /// Stops an owned engine and waits for it (idempotent). No-op for a non-owning handle.
  void stop();

 private:
  EngineProcess(std::string endpoint, int pid, std::string log_dir);

  std::string endpoint_;
  bool owned_ = false;
  int pid_ = -1;
  std::string log_dir_;
};

/// The rivet-engine binary to run (resolution order in the file comment).
/// Error engine.binary_not_found, whose message says how to get one.
Result<std::string> find_engine_binary(const std::optional<std::string>& explicit_path);

/// True for localhost, 127.0.0.0/8, ::1 and the unspecified addresses 0.0.0.0 and ::.
bool is_loopback_host(std::string_view host);

/// The last `max_lines` lines of a text file ("" if unreadable).
std::string tail_file(const std::string& path, std::size_t max_lines);

}  // namespace rivetkit::engine
