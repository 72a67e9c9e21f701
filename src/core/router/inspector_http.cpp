// /inspector/...: the inspector's HTTP routes (core-semantics.md §9). Decodes the route into an
// inspector request, dispatches it with the token the request presents (core/inspector) and
// answers JSON, whatever encoding the request names, as RivetKit does.

#include "core/errors.hpp"
#include "core/inspector/inspector.hpp"
#include "core/inspector/inspector_token.hpp"
#include "core/router/surfaces.hpp"
#include "util/url.hpp"
#include <rivetkit/json.hpp>

#include <charconv>

namespace rivetkit::core::router {

namespace {

using namespace inspector;

// A whole number from the query; `fallback` when absent, not a number or not positive (RivetKit
// falls back the same way).
std::int64_t number_param(std::string_view search, std::string_view name, std::int64_t fallback) {
  auto text = query_value(search, name);
  if (!text) {
    return fallback;
  }
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec == std::errc::result_out_of_range) {
    return text->front() == '-' ? fallback : std::numeric_limits<std::int64_t>::max();
  }
  if (ec != std::errc() || end == text->data()) {
    return fallback;
  }
  return value;
}

Result<Value> json_body(const net::HttpRequest& req) {
  auto parsed = parse_json(req.body);
  if (!parsed) {
    return fail(invalid_request("Invalid inspector JSON body: " + parsed.error().message));
  }
  if (!parsed->is_object()) {
    return fail(invalid_request("The inspector's request body must be a JSON object"));
  }
  return parsed;
}

Value take_member(Value& body, std::string_view key) {
  Value* v = body.find(key);
  return v != nullptr ? std::move(*v) : Value(Undefined{});
}

// `args` (an array) or `properties` (an object, the single argument), not both.
Result<Array> action_args(Value body) {
  Value args = take_member(body, "args");
  Value properties = take_member(body, "properties");
  if (!args.is_undefined() && !properties.is_undefined()) {
    return fail(invalid_request("use either args or properties, not both"));
  }
  if (!properties.is_undefined()) {
    if (!properties.is_object()) {
      return fail(invalid_request("properties must be an object"));
    }
    return Array{std::move(properties)};
  }
  if (args.is_undefined() || args.is_null()) {
    return Array{};
  }
  if (!args.is_array()) {
    return Array{std::move(args)};  // a single argument, as RivetKit normalizes it
  }
  return std::move(args.as_array());
}

Result<SqlParams> sql_params(Value& body) {
  Value args = take_member(body, "args");
  Value properties = take_member(body, "properties");
  SqlParams params;
  if (args.is_array() && properties.is_object()) {
    return fail(invalid_request("use either args or properties, not both"));
  }
  if (properties.is_object()) {
    params.named = std::move(properties.as_object());
  } else if (args.is_array()) {
    params.positional = std::move(args.as_array());
  }
  return params;
}

// The request a route names; nullopt: no such route.
Result<std::optional<InspectorRequest>> decode(const net::HttpRequest& req,
                                               std::string_view path,
                                               std::string_view search) {
  using Decoded = std::optional<InspectorRequest>;
  const std::string_view m = req.method;
  if (path == "/state" && m == "GET") {
    return Decoded(GetState{});
  }
  if (path == "/state" && m == "PATCH") {
    auto body = json_body(req);
    if (!body) {
      return fail(body.error());
    }
    Value state = take_member(*body, "state");
    if (state.is_undefined()) {
      return fail(invalid_request("The body must carry the new state as `state`"));
    }
    return Decoded(PatchState{std::move(state)});
  }
  if (path == "/connections" && m == "GET") {
    return Decoded(GetConnections{});
  }
  if (path == "/rpcs" && m == "GET") {
    return Decoded(GetRpcs{});
  }
  if (path == "/queue" && m == "GET") {
    const auto limit = number_param(search, "limit", 100);
    return Decoded(GetQueue{static_cast<std::size_t>(limit > 0 ? limit : 100)});
  }
  if (path == "/queue" && m == "POST") {
    auto body = json_body(req);
    if (!body) {
      return fail(body.error());
    }
    Value name = take_member(*body, "name");
    if (!name.is_undefined() && !name.is_null() && !name.is_string()) {
      return fail(invalid_request("Queue message name must be a string"));
    }
    Value message = take_member(*body, "body");
    return Decoded(SendQueue{name.is_string() ? name.as_string() : std::string(),
                             message.is_undefined() ? Value(nullptr) : std::move(message)});
  }
  if (path == "/queue" && m == "DELETE") {
    return Decoded(ResetQueue{});
  }
  if (path == "/traces" && m == "GET") {
    return Decoded(GetTraces{});
  }
  if (path == "/workflow-history" && m == "GET") {
    return Decoded(GetWorkflowHistory{});
  }
  if (path == "/workflow/replay" && m == "POST") {
    ReplayWorkflow replay;
    if (!req.body.empty()) {
      auto body = json_body(req);
      if (!body) {
        return fail(body.error());
      }
      if (Value entry = take_member(*body, "entryId"); entry.is_string()) {
        replay.entry_id = entry.as_string();
      }
    }
    return Decoded(std::move(replay));
  }
  if (path == "/database/schema" && m == "GET") {
    return Decoded(GetDatabaseSchema{});
  }
  if (path == "/database/rows" && m == "GET") {
    auto table = query_value(search, "table");
    if (!table || table->empty()) {
      return fail(invalid_request("Missing required table query parameter"));
    }
    GetDatabaseRows rows;
    rows.table = std::move(*table);
    rows.limit = number_param(search, "limit", 100);
    rows.offset = number_param(search, "offset", 0);
    return Decoded(std::move(rows));
  }
  if (path == "/database/execute" && m == "POST") {
    auto body = json_body(req);
    if (!body) {
      return fail(body.error());
    }
    Value sql = take_member(*body, "sql");
    if (!sql.is_string() || sql.as_string().find_first_not_of(" \t\r\n") == std::string::npos) {
      return fail(invalid_request("sql is required"));
    }
    auto params = sql_params(*body);
    if (!params) {
      return fail(params.error());
    }
    return Decoded(ExecuteSql{std::move(sql.as_string()), std::move(*params)});
  }
  if (path == "/summary" && m == "GET") {
    return Decoded(GetSummary{});
  }
  if (starts_with(path, "/action/") && m == "POST") {
    auto name = route_name(path.substr(8));
    if (!name || name->empty()) {
      return Decoded();
    }
    Value body = Value(Object{});
    if (!req.body.empty()) {
      auto parsed = json_body(req);
      if (!parsed) {
        return fail(parsed.error());
      }
      body = std::move(*parsed);
    }
    auto args = action_args(std::move(body));
    if (!args) {
      return fail(args.error());
    }
    RunAction action;
    action.name = std::move(*name);
    action.args = std::move(*args);
    action.request = user_request_of(req);
    return Decoded(std::move(action));
  }
  return Decoded();
}

net::HttpResponse json_response(unsigned status, const Value& body, const ActorInstance* instance) {
  net::HttpResponse resp;
  resp.status = status;
  resp.body = to_json(body);
  resp.set_header("content-type", "application/json");
  resp.set_header("referrer-policy", "no-referrer");
  if (instance != nullptr) {
    add_actor_headers(resp, *instance);
  }
  return resp;
}

net::HttpResponse error_json(const Error& error, const ActorInstance* instance) {
  const Error shown = sanitize_for_client(error);
  return json_response(
      status_of(error),
      Value::object({{"group", shown.group},
                     {"code", shown.code},
                     {"message", shown.message},
                     {"metadata", shown.metadata ? *shown.metadata : Value(nullptr)}}),
      instance);
}

}  // namespace

Task<net::HttpResponse> inspector_http(ActorTarget target,
                                       net::HttpRequest req,
                                       std::string path,
                                       std::string search) {
  const auto* resolved = target.instance.get();
  const auto& config = target.runtime->config();
  if (!config.inspector_enabled) {
    co_return error_json(disabled(), resolved);
  }
  if (req.body.size() > config.max_incoming_message_size) {
    co_return error_json(incoming_too_long(), resolved);
  }
  auto decoded = decode(req, path, search);
  if (!decoded) {
    co_return error_json(decoded.error(), resolved);
  }
  if (!*decoded) {
    co_return error_json(
        Error{"actor", "not_found", "Inspector route was not found", std::nullopt, true}, resolved);
  }
  auto params = parse_params(req.header("x-rivet-conn-params"));
  if (!params) {
    co_return error_json(params.error(), resolved);
  }
  InspectorCommand command;
  if (auto auth = req.header("authorization")) {
    command.token = bearer_token(*auth);
  }
  command.request = std::move(**decoded);
  command.params = std::move(*params);
  auto op = dispatch_request(target, std::move(command));
  auto done = co_await std::move(op);
  const auto* instance = answered_by(target, done.instance);
  if (!done.result) {
    co_return error_json(done.result.error(), instance);
  }
  auto resp = json_response(200, *done.result, instance);
  if (resp.body.size() > config.max_outgoing_message_size) {
    co_return error_json(outgoing_too_long(), instance);
  }
  co_return resp;
}

}  // namespace rivetkit::core::router
