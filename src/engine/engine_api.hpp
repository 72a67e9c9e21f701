#pragma once
// The engine's HTTP control plane as engine mode needs it before connecting (envoy-protocol.md
// §1.1): make sure the namespace's runner config ("pool") exists.

#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::engine {

struct EngineApiOptions {
  std::string endpoint;  // http://host:port (a trailing '/' is ignored)
  std::string namespace_name = "default";
  std::optional<std::string> token;  // Authorization: Bearer <token>; "dev" when unset or empty
  std::string pool = "default";
  /// Retry policy: attempts and the pause between them (§1.1: 60 x 500 ms).
  int max_attempts = 60;
  std::chrono::milliseconds retry_delay{500};
  /// Bound of each HTTP call.
  std::chrono::milliseconds request_timeout{10'000};
};

/// GET /datacenters?namespace=ns, then PUT /runner-configs/{pool}?namespace=ns with
/// {"datacenters":{"<each dc>":{"normal":{},"drain_on_version_upgrade":true}}}.
/// Each attempt does both calls; an attempt is retried (up to max_attempts, retry_delay apart)
/// on connection errors and timeouts, on 404/429/5xx, on a JSON body whose "code" is "not_found",
/// and on an empty datacenter list. Any other non-2xx answer fails at once.
/// Errors: group "engine"; code runner_config_failed (message: last status/body or net error).
Task<Result<void>> ensure_runner_config(boost::asio::any_io_executor ex, EngineApiOptions opts);

/// The datacenter names of GET /datacenters?namespace=ns (one attempt, no retry).
/// Errors: group "engine", code api_failed (or the net.* error of the request).
Task<Result<std::vector<std::string>>> list_datacenters(boost::asio::any_io_executor ex,
                                                        EngineApiOptions opts);

}  // namespace rivetkit::engine
