#include "serverless/start_request.hpp"

#include "protocol/envoy/codec.hpp"
#include "protocol/envoy/engine_id.hpp"

namespace rivetkit::serverless {

namespace envoy = protocol::envoy;

namespace {

Error invalid(std::string reason) {
  return Error{"request", "invalid", "Invalid request: " + std::move(reason), std::nullopt, true};
}

std::optional<std::string> header(const net::Headers& headers, std::string_view name) {
  auto v = net::find_header(headers, name);
  if (!v || v->empty()) {
    return std::nullopt;
  }
  return std::string(*v);
}

}  // namespace

std::string normalize_endpoint(std::string endpoint) {
  while (!endpoint.empty() && endpoint.back() == '/') {
    endpoint.pop_back();
  }
  return endpoint;
}

Result<StartHeaders> parse_start_headers(const net::Headers& headers,
                                         const StartExpectations& expected) {
  StartHeaders out;
  auto endpoint = header(headers, "x-rivet-endpoint");
  if (!endpoint) {
    return fail(invalid("x-rivet-endpoint header is required"));
  }
  out.endpoint = normalize_endpoint(std::move(*endpoint));
  auto pool = header(headers, "x-rivet-pool-name");
  if (!pool) {
    pool = header(headers, "x-rivet-runner-name");
  }
  if (!pool) {
    return fail(invalid("x-rivet-pool-name header is required"));
  }
  out.pool = std::move(*pool);
  auto namespace_name = header(headers, "x-rivet-namespace-name");
  if (!namespace_name) {
    return fail(invalid("x-rivet-namespace-name header is required"));
  }
  out.namespace_name = std::move(*namespace_name);
  out.token = header(headers, "x-rivet-token");

  if (expected.endpoint && normalize_endpoint(*expected.endpoint) != out.endpoint) {
    const std::string want = normalize_endpoint(*expected.endpoint);
    return fail(
        Error{"config", "endpoint_mismatch",
              "Endpoint mismatch: expected \"" + want + "\", received \"" + out.endpoint + "\"",
              Value::object({{"expected", want}, {"received", out.endpoint}}), true});
  }
  if (out.namespace_name != expected.namespace_name) {
    return fail(Error{
        "config", "namespace_mismatch",
        "Namespace mismatch: expected \"" + expected.namespace_name + "\", received \""
            + out.namespace_name + "\"",
        Value::object({{"expected", expected.namespace_name}, {"received", out.namespace_name}}),
        true});
  }
  return out;
}

Result<envoy::CommandWrapper> parse_start_body(std::string_view body) {
  auto decoded = envoy::decode_versioned_to_envoy(body);
  if (!decoded) {
    return fail(invalid("undecodable start payload: " + decoded.error().message));
  }
  auto* commands = std::get_if<envoy::ToEnvoyCommands>(&*decoded);
  if (commands == nullptr) {
    return fail(invalid("the start payload must be ToEnvoyCommands"));
  }
  if (commands->commands.size() != 1) {
    return fail(invalid("the start payload must hold exactly one command, not "
                        + std::to_string(commands->commands.size())));
  }
  auto& command = commands->commands.front();
  if (!std::holds_alternative<envoy::CommandStartActor>(command.inner)) {
    return fail(invalid("the start payload's command must be CommandStartActor"));
  }
  // Only the engine sends starts, with its own ids: any other id would be refused by the engine
  // in the actor's first KV request, and that refusal closes the envoy's connection.
  if (!envoy::is_engine_id(command.checkpoint.actor_id)) {
    return fail(invalid("the start command's actor id \""
                        + command.checkpoint.actor_id.substr(0, 64)
                        + "\" is not an engine actor id (30 base36 characters, version 1)"));
  }
  return std::move(command);
}

unsigned start_error_status(const Error& error) {
  if (error.group == "message" && error.code == "incoming_too_long") {
    return 413;
  }
  if (error.group == "request" || error.group == "config") {
    return 400;
  }
  if (error.group == "registry" && error.code == "shut_down") {
    return 503;
  }
  return 500;
}

}  // namespace rivetkit::serverless
