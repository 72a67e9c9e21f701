#pragma once
// Parsing of the gateway forms the official client uses to reach one actor
// (client-protocol.md §5):
//   direct:  /gateway/{pct(actorId)}[@{pct(token)}]PATH
//   query:   /gateway/{pct(name)}PATH?...&rvt-namespace=..&rvt-method=get|getOrCreate&...
// Pure functions: no I/O, so every rule is unit-tested.

#include <rivetkit/result.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rivetkit::local {

struct DirectTarget {
  std::string actor_id;
  std::optional<std::string> token;
};

struct QueryTarget {
  std::string name;
  std::string namespace_name;
  enum class Method { kGet, kGetOrCreate } method = Method::kGet;
  std::vector<std::string> key;  // rvt-key split on ','
  std::optional<std::string> input;  // CBOR bytes decoded from base64url
  std::optional<std::string> pool;
  std::optional<std::string> region;
  std::optional<std::string> crash_policy;
  std::optional<std::string> token;
  bool skip_ready_wait = false;
};

struct GatewayRequest {
  std::optional<DirectTarget> direct;
  std::optional<QueryTarget> query;
  /// The path forwarded to the actor router: the rest after the gateway segment ("/" if empty),
  /// plus the query pairs that are not rvt-*, byte-for-byte and in order.
  std::string actor_path;
};

/// Parses a target starting with "/gateway/". Errors are the engine's guard errors (all 400 apart
/// from routing failures), e.g. guard.query_invalid_params.
Result<GatewayRequest> parse_gateway_target(std::string_view target);

/// True when `path` (no query) is "/request", "/request/..." (header routing is allowed only for
/// these paths, client-protocol.md §5.3).
bool is_raw_request_path(std::string_view path);

}  // namespace rivetkit::local
