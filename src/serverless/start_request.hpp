#pragma once
// What the engine's serverless `POST {base}/start` asks for (envoy-protocol.md §5): the envoy to
// serve it through (endpoint, namespace, pool, token from the x-rivet-* headers) and the one actor
// generation to start (the body: u16 LE protocol version + BARE ToEnvoyCommands holding exactly
// one CommandStartActor). Checked here, before anything connects or starts; every refusal is a
// RivetKit error with its HTTP status.

#include "net/http_types.hpp"
#include "protocol/envoy/messages.hpp"
#include <rivetkit/result.hpp>

#include <optional>
#include <string>

namespace rivetkit::serverless {

struct StartHeaders {
  std::string endpoint;  // without a trailing slash
  std::string namespace_name;
  std::string pool;
  std::optional<std::string> token;
};

/// What the process is configured with (RIVET_ENDPOINT, RIVET_NAMESPACE); an unset endpoint
/// accepts any engine.
struct StartExpectations {
  std::optional<std::string> endpoint;
  std::string namespace_name = "default";
};

/// The headers, checked against the configuration: request.invalid (400) for a missing one,
/// config.endpoint_mismatch / config.namespace_mismatch (400) for another engine's.
/// `x-rivet-runner-name` is the legacy name of `x-rivet-pool-name`.
Result<StartHeaders> parse_start_headers(const net::Headers& headers,
                                         const StartExpectations& expected);

/// The start command of the body: request.invalid (400) when it is not one CommandStartActor of
/// protocol version 8.
Result<protocol::envoy::CommandWrapper> parse_start_body(std::string_view body);

/// The HTTP status of a refusal made here.
unsigned start_error_status(const Error& error);

/// An endpoint as compared and used: trailing slashes removed.
std::string normalize_endpoint(std::string endpoint);

}  // namespace rivetkit::serverless
