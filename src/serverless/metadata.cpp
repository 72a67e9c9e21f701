#include "serverless/metadata.hpp"

#include "protocol/envoy/messages.hpp"
#include "protocol/json/json.hpp"
#include <rivetkit/value.hpp>

namespace rivetkit::serverless {

namespace {
constexpr const char* kVersion = "2.3.19";
}

std::string metadata_json(const MetadataOptions& options) {
  Value names{Object{}};
  for (const auto& name : options.actor_names) {
    names.set(name, Value::object({{"metadata", Value{Object{}}}}));
  }
  // Keys in the order the engine's own serializer writes them (sorted).
  Value doc{Object{}};
  doc.set("actorNames", std::move(names));
  if (options.client_endpoint) {
    doc.set("clientEndpoint", *options.client_endpoint);
  }
  if (options.client_namespace) {
    doc.set("clientNamespace", *options.client_namespace);
  }
  if (options.client_token) {
    doc.set("clientToken", *options.client_token);
  }
  doc.set("envoy", Value::object({{"kind", Value::object({{"serverless", Value{Object{}}}})},
                                  {"version", static_cast<std::int64_t>(options.envoy_version)}}));
  doc.set("envoyProtocolVersion", static_cast<std::int64_t>(protocol::envoy::kProtocolVersion));
  doc.set("runtime", "rivetkit");
  doc.set("version", kVersion);
  return protocol::json_stringify(doc);
}

std::string health_json(const std::string& status) {
  return protocol::json_stringify(
      Value::object({{"runtime", "rivetkit"}, {"status", status}, {"version", kVersion}}));
}

}  // namespace rivetkit::serverless
