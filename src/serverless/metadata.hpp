#pragma once
// The serverless metadata the engine polls (`GET {base}/metadata`, envoy-protocol.md §5:
// ServerlessMetadataPayload) and the health answer (`GET {base}/health`).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::serverless {

struct MetadataOptions {
  std::vector<std::string> actor_names;
  std::uint32_t envoy_version = 1;
  /// Public endpoint hints for clients (RIVET_PUBLIC_ENDPOINT and friends); omitted when unset.
  std::optional<std::string> client_endpoint;
  std::optional<std::string> client_namespace;
  std::optional<std::string> client_token;
};

/// The payload as JSON: runtime "rivetkit", version "2.3.19", envoy protocol version 8, the
/// actor names (each with empty metadata), envoy kind serverless.
std::string metadata_json(const MetadataOptions& options);

/// `{"runtime":"rivetkit","status":<status>,"version":"2.3.19"}`.
std::string health_json(const std::string& status);

}  // namespace rivetkit::serverless
