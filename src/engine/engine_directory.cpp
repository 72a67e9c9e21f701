#include "engine/engine_directory.hpp"

#include "net/http_client.hpp"
#include "protocol/compat.hpp"
#include "protocol/json/json.hpp"
#include "util/url.hpp"

#include <span>

namespace rivetkit::engine {

namespace {

Error api_failed(std::string message) {
  return Error{"engine", "api_failed", std::move(message), std::nullopt, false};
}

// The actor object of client-protocol.md §4.2.
Result<core::ActorRecord> record_of(const Value& actor) {
  const Value* id = actor.is_object() ? actor.find("actor_id") : nullptr;
  const Value* name = actor.is_object() ? actor.find("name") : nullptr;
  if (id == nullptr || !id->is_string() || name == nullptr || !name->is_string()) {
    return fail(api_failed("The engine answered an actor without actor_id or name"));
  }
  core::ActorRecord r;
  r.actor_id = id->as_string();
  r.name = name->as_string();
  r.generation = 0;
  if (const Value* key = actor.find("key"); key != nullptr && key->is_string()) {
    r.key = key->as_string();
  }
  if (const Value* policy = actor.find("crash_policy"); policy != nullptr && policy->is_string()) {
    r.crash_policy = policy->as_string();
  }
  if (const Value* ts = actor.find("create_ts"); ts != nullptr && ts->is_int()) {
    r.create_ts = ts->as_int();
  }
  if (const Value* ts = actor.find("destroy_ts"); ts != nullptr && ts->is_int()) {
    r.destroy_ts = ts->as_int();
  }
  return r;
}

Result<std::vector<core::ActorRecord>> records_of(const Value& page) {
  const Value* actors = page.is_object() ? page.find("actors") : nullptr;
  if (actors == nullptr || !actors->is_array()) {
    return fail(api_failed("The engine answered a list without actors"));
  }
  std::vector<core::ActorRecord> out;
  for (const auto& a : actors->as_array()) {
    auto r = record_of(a);
    if (!r) {
      return fail(r.error());
    }
    out.push_back(std::move(*r));
  }
  return out;
}

// The body of a create or get-or-create (client-protocol.md §4.3).
std::string create_body(const core::ActorRecord& wanted, const std::string& pool) {
  Value body = Value::object({{"name", wanted.name}, {"runner_name_selector", pool}});
  if (!wanted.key.empty()) {
    body.set("key", wanted.key);
  }
  if (wanted.input) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(wanted.input->data());
    body.set("input", protocol::base64_encode(std::span(bytes, wanted.input->size())));
  }
  body.set("crash_policy",
           wanted.crash_policy.empty() ? std::string("sleep") : wanted.crash_policy);
  return protocol::json_stringify(body);
}

bool is_not_found(const Error& e) {
  return (e.group == "actor" || e.group == "api") && e.code == "not_found";
}

}  // namespace

EngineDirectory::EngineDirectory(boost::asio::any_io_executor ex, EngineApiOptions options)
    : ex_(std::move(ex)), options_(std::move(options)) {
  while (!options_.endpoint.empty() && options_.endpoint.back() == '/') {
    options_.endpoint.pop_back();
  }
}

std::string EngineDirectory::with_namespace(std::string path) const {
  path += path.find('?') == std::string::npos ? '?' : '&';
  return path + "namespace=" + util::percent_encode(options_.namespace_name);
}

Task<Result<Value>> EngineDirectory::call(std::string method, std::string path, std::string body) {
  net::HttpClientRequest req;
  req.method = std::move(method);
  req.url = options_.endpoint + with_namespace(std::move(path));
  const std::string token =
      options_.token && !options_.token->empty() ? *options_.token : std::string("dev");
  req.headers.push_back(net::Header{"authorization", "Bearer " + token});
  req.headers.push_back(net::Header{"accept", "application/json"});
  if (!body.empty()) {
    req.headers.push_back(net::Header{"content-type", "application/json"});
    req.body = std::move(body);
  }
  req.timeout = options_.request_timeout;
  auto op = net::http_request(ex_, std::move(req));
  auto resp = co_await std::move(op);
  if (!resp) {
    co_return fail(api_failed("The engine's actor API did not answer: " + resp.error().message));
  }
  auto parsed = protocol::json_parse(resp->body);
  if (resp->status >= 200 && resp->status < 300) {
    if (!parsed) {
      co_return fail(api_failed("The engine answered " + std::to_string(resp->status)
                                + " with a body that is not JSON"));
    }
    co_return std::move(*parsed);
  }
  // RivetKit's error shape (§4.6): kept as the engine gave it.
  if (parsed && parsed->is_object()) {
    const Value* group = parsed->find("group");
    const Value* code = parsed->find("code");
    const Value* message = parsed->find("message");
    if (group != nullptr && group->is_string() && code != nullptr && code->is_string()) {
      std::optional<Value> metadata;
      if (const Value* m = parsed->find("metadata")) {
        metadata = *m;
      }
      co_return fail(
          Error{group->as_string(), code->as_string(),
                message != nullptr && message->is_string() ? message->as_string() : std::string(),
                std::move(metadata), true});
    }
  }
  co_return fail(api_failed("The engine answered " + std::to_string(resp->status) + ": "
                            + resp->body.substr(0, 300)));
}

Task<Result<std::vector<core::ActorRecord>>> EngineDirectory::lookup(std::string path) {
  auto op = call("GET", std::move(path));
  auto page = co_await std::move(op);
  if (!page) {
    if (is_not_found(page.error())) {
      co_return std::vector<core::ActorRecord>();  // the client reads not_found as "none" too
    }
    co_return fail(page.error());
  }
  co_return records_of(*page);
}

Task<Result<std::optional<core::ActorRecord>>> EngineDirectory::get_for_id(std::string actor_id) {
  auto op = lookup("/actors?actor_ids=" + util::percent_encode(actor_id));
  auto records = co_await std::move(op);
  if (!records) {
    co_return fail(records.error());
  }
  for (auto& r : *records) {
    if (r.actor_id == actor_id) {
      co_return std::optional<core::ActorRecord>(std::move(r));
    }
  }
  co_return std::optional<core::ActorRecord>();
}

Task<Result<std::optional<core::ActorRecord>>> EngineDirectory::get_with_key(std::string name,
                                                                             std::string key) {
  if (key.empty()) {
    co_return std::optional<core::ActorRecord>();  // a keyless actor is never found by key
  }
  auto op =
      lookup("/actors?name=" + util::percent_encode(name) + "&key=" + util::percent_encode(key));
  auto records = co_await std::move(op);
  if (!records) {
    co_return fail(records.error());
  }
  for (auto& r : *records) {
    if (!r.destroy_ts) {
      co_return std::optional<core::ActorRecord>(std::move(r));
    }
  }
  co_return std::optional<core::ActorRecord>();
}

Task<Result<EngineDirectory::GetOrCreated>> EngineDirectory::get_or_create(
    core::ActorRecord wanted) {
  // rivet-engine 2.3.19 answers some of the concurrent get-or-creates of a new key with
  // actor.destroyed_during_creation: their own create lost to another one (tests/js/README.md).
  // Asking again finds the winner.
  constexpr int kAttempts = 4;
  Result<Value> answer = fail(api_failed("no attempt"));
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    auto op = call("PUT", "/actors", create_body(wanted, options_.pool));
    answer = co_await std::move(op);
    if (answer || answer.error().group != "actor"
        || answer.error().code != "destroyed_during_creation") {
      break;
    }
  }
  if (!answer) {
    co_return fail(answer.error());
  }
  const Value* actor = answer->is_object() ? answer->find("actor") : nullptr;
  const Value* created = answer->is_object() ? answer->find("created") : nullptr;
  if (actor == nullptr) {
    co_return fail(api_failed("The engine's get-or-create answer has no actor"));
  }
  auto record = record_of(*actor);
  if (!record) {
    co_return fail(record.error());
  }
  co_return GetOrCreated{std::move(*record),
                         created != nullptr && created->is_bool() && created->as_bool()};
}

Task<Result<core::ActorRecord>> EngineDirectory::create(core::ActorRecord wanted) {
  auto op = call("POST", "/actors", create_body(wanted, options_.pool));
  auto answer = co_await std::move(op);
  if (!answer && answer.error().group == "actor"
      && answer.error().code == "destroyed_during_creation" && !wanted.key.empty()) {
    // rivet-engine 2.3.19 sometimes answers a create on a used key this way (its create lost
    // inside the engine) instead of actor.duplicate_key. A live actor with the key makes it the
    // duplicate it is; otherwise the answer stands.
    auto existing_op = get_with_key(wanted.name, wanted.key);
    auto existing = co_await std::move(existing_op);
    if (existing && *existing) {
      co_return fail(
          Error{"actor", "duplicate_key", "Actor already exists with this key",
                Value::object({{"existing_actor_id", (*existing)->actor_id}, {"key", wanted.key}}),
                true});
    }
  }
  if (!answer) {
    co_return fail(answer.error());
  }
  const Value* actor = answer->is_object() ? answer->find("actor") : nullptr;
  if (actor == nullptr) {
    co_return fail(api_failed("The engine's create answer has no actor"));
  }
  co_return record_of(*actor);
}

Task<Result<bool>> EngineDirectory::destroy(std::string actor_id) {
  // The engine stops the actor wherever it runs (its envoy gets the stop) and drops its data.
  auto get_op = get_for_id(actor_id);
  auto existing = co_await std::move(get_op);
  if (!existing) {
    co_return fail(existing.error());
  }
  if (!*existing || (*existing)->destroy_ts) {
    co_return false;
  }
  auto op = call("DELETE", "/actors/" + util::percent_encode(actor_id));
  auto answer = co_await std::move(op);
  if (!answer) {
    if (is_not_found(answer.error())) {
      co_return false;
    }
    co_return fail(answer.error());
  }
  co_return true;
}

Task<Result<std::vector<core::ActorRecord>>> EngineDirectory::list(core::ActorListQuery query) {
  std::string path = "/actors?name=" + util::percent_encode(query.name);
  if (query.key) {
    path += "&key=" + util::percent_encode(*query.key);
  }
  path += "&limit=" + std::to_string(query.limit);
  if (query.before_create_ts) {
    path += "&cursor=" + std::to_string(*query.before_create_ts);
  }
  if (query.include_destroyed) {
    path += "&include_destroyed=true";
  }
  auto op = lookup(std::move(path));
  co_return co_await std::move(op);
}

}  // namespace rivetkit::engine
