// The actor REST API the official clients call (client-protocol.md §4): get by ids, get by key,
// list, get-or-create (PUT), create (POST), destroy (DELETE), plus /actors/names and /datacenters.

#include "core/errors.hpp"
#include "core/ids.hpp"
#include "local/local_context.hpp"
#include "protocol/compat.hpp"
#include "protocol/json/json.hpp"
#include "protocol/text/utf8.hpp"
#include "util/log.hpp"
#include "util/spawn.hpp"
#include "util/url.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <charconv>
#include <set>

namespace rivetkit::local {

namespace {

constexpr std::size_t kMaxListLimit = 10'000;
constexpr std::size_t kMaxActorIds = 32;
constexpr std::size_t kMaxNameLength = 64;
constexpr std::size_t kMaxKeyLength = 1024;

Error bad_request(std::string reason) {
  return Error{"api", "bad_request", "Bad request: " + reason, Value::object({{"reason", reason}}),
               true};
}

Error invalid_input(std::string message) {
  return Error{"validation", "invalid_input", message, Value::object({{"message", message}}), true};
}

net::HttpResponse json_response(const Value& body) {
  net::HttpResponse resp;
  resp.status = 200;
  resp.body = protocol::json_stringify(body);
  resp.set_header("content-type", "application/json");
  return resp;
}

struct Query {
  std::map<std::string, std::string, std::less<>> params;
};

Result<Query> parse_query(std::string_view raw, std::initializer_list<std::string_view> allowed) {
  Query q;
  for (const auto& pair : util::split_query(raw)) {
    auto name = util::percent_decode(pair.raw_name, true);
    auto value = util::percent_decode(pair.raw_value, true);
    if (!name || !value) {
      return fail(bad_request("invalid query encoding"));
    }
    // Names and keys become protocol strings (BARE/CBOR/JSON text): refuse bytes that are not
    // UTF-8 instead of storing them (JSON would list two such keys as the same U+FFFD text).
    if (!protocol::text::is_valid_utf8(*name) || !protocol::text::is_valid_utf8(*value)) {
      return fail(bad_request("query parameter is not valid UTF-8"));
    }
    bool ok = false;
    for (auto a : allowed) {
      ok = ok || a == *name;
    }
    if (!ok) {
      return fail(bad_request("unknown query parameter `" + *name + "`"));
    }
    q.params[*name] = std::move(*value);
  }
  return q;
}

std::optional<std::string> get(const Query& q, std::string_view name) {
  auto it = q.params.find(name);
  return it == q.params.end() ? std::nullopt : std::optional<std::string>(it->second);
}

Result<Value> parse_body(const std::string& body) {
  auto parsed = protocol::json_parse(body);
  if (!parsed || !parsed->is_object()) {
    return fail(bad_request("body is not a JSON object"));
  }
  return std::move(*parsed);
}

Result<std::optional<std::string>> string_field(const Value& body,
                                                std::string_view name,
                                                bool required) {
  const Value* v = body.find(name);
  if (v == nullptr || v->is_null() || v->is_undefined()) {
    if (required) {
      return fail(bad_request("missing field `" + std::string(name) + "`"));
    }
    return std::optional<std::string>{};
  }
  if (!v->is_string()) {
    return fail(bad_request("field `" + std::string(name) + "` must be a string"));
  }
  return std::optional<std::string>{v->as_string()};
}

/// Fields accepted in create / get-or-create bodies (the engine denies unknown fields).
Result<storage::ActorRecord> record_from_body(LocalContext& ctx,
                                              const Value& body,
                                              bool key_required) {
  static const std::set<std::string, std::less<>> kAllowed = {
      "datacenter", "name", "key", "runner_name_selector", "crash_policy", "input"};
  for (const auto& m : body.as_object()) {
    if (kAllowed.count(m.key) == 0) {
      return fail(bad_request("unknown field `" + m.key + "`"));
    }
  }
  auto name = string_field(body, "name", true);
  if (!name) {
    return fail(name.error());
  }
  auto key = string_field(body, "key", key_required);
  if (!key) {
    return fail(key.error());
  }
  auto input = string_field(body, "input", false);
  if (!input) {
    return fail(input.error());
  }
  auto crash = string_field(body, "crash_policy", false);
  if (!crash) {
    return fail(crash.error());
  }
  if ((*name)->empty() || (*name)->size() > kMaxNameLength) {
    return fail(invalid_input("Actor name must be 1 to 64 characters"));
  }
  if (*key && (*key)->size() > kMaxKeyLength) {
    return fail(invalid_input("Actor key is too long"));
  }
  if (!ctx.runtime.definition(**name)) {
    return fail(core::unknown_actor_name(**name));
  }
  storage::ActorRecord record;
  record.actor_id = core::new_actor_id();
  record.name = **name;
  record.key = key->value_or("/");
  if (*input) {
    auto bytes = protocol::base64_decode(**input);
    if (!bytes) {
      return fail(bad_request("`input` is not valid base64"));
    }
    record.input = std::string(bytes->begin(), bytes->end());
  }
  if (*crash) {
    if (**crash != "sleep" && **crash != "restart" && **crash != "destroy") {
      return fail(bad_request("invalid crash_policy"));
    }
    record.crash_policy = **crash;
  }
  record.create_ts = ctx.clock().now_ms();
  record.generation = 0;
  return record;
}

Value actors_page(const std::vector<storage::ActorRecord>& records, bool more) {
  Array actors;
  actors.reserve(records.size());
  for (const auto& r : records) {
    actors.push_back(actor_json(r));
  }
  Value cursor;
  if (more && !records.empty()) {
    cursor = std::to_string(records.back().create_ts);
  }
  return Value::object(
      {{"actors", Value{std::move(actors)}}, {"pagination", Value::object({{"cursor", cursor}})}});
}

Task<net::HttpResponse> list_actors(std::shared_ptr<LocalContext> ctx, net::HttpRequest request) {
  auto target = util::split_target(request.target);
  auto query = parse_query(target.query, {"namespace", "name", "key", "actor_ids", "actor_id",
                                          "include_destroyed", "limit", "cursor"});
  if (!query) {
    co_return engine_error(query.error());
  }
  auto ids = get(*query, "actor_ids");
  if (!ids) {
    ids = get(*query, "actor_id");
  }
  auto name = get(*query, "name");
  auto key = get(*query, "key");
  if (ids) {
    if (name || key) {
      co_return engine_error(invalid_input(
          "Cannot provide both actor_id and (name + key). Use either actor_id or (name + key)."));
    }
    std::vector<storage::ActorRecord> found;
    std::size_t count = 0;
    std::string_view rest = *ids;
    while (!rest.empty()) {
      auto comma = rest.find(',');
      std::string id(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      if (id.empty()) {
        continue;
      }
      if (++count > kMaxActorIds) {
        co_return engine_error(invalid_input("Too many actor ids (at most 32)"));
      }
      auto get_op = ctx->directory->get_for_id(id);
      auto record = co_await std::move(get_op);
      if (!record) {
        co_return engine_error(record.error());
      }
      if (*record) {
        found.push_back(std::move(**record));
      }
    }
    co_return json_response(actors_page(found, false));
  }
  if (!name) {
    if (key) {
      co_return engine_error(invalid_input("`key` requires `name`"));
    }
    co_return engine_error(invalid_input("Listing actors requires `name` or `actor_ids`"));
  }
  storage::ListQuery list;
  list.name = *name;
  list.key = key;
  if (auto limit = get(*query, "limit")) {
    std::size_t n = 0;
    auto [ptr, ec] = std::from_chars(limit->data(), limit->data() + limit->size(), n);
    if (ec != std::errc() || ptr != limit->data() + limit->size() || n == 0) {
      co_return engine_error(bad_request("invalid limit"));
    }
    list.limit = std::min(n, kMaxListLimit);
  }
  if (auto cursor = get(*query, "cursor")) {
    std::int64_t ts = 0;
    auto [ptr, ec] = std::from_chars(cursor->data(), cursor->data() + cursor->size(), ts);
    if (ec != std::errc() || ptr != cursor->data() + cursor->size()) {
      co_return engine_error(bad_request("invalid cursor"));
    }
    list.before_create_ts = ts;
  }
  if (auto inc = get(*query, "include_destroyed")) {
    list.include_destroyed = *inc == "true" || *inc == "1";
  }
  std::size_t limit = list.limit;
  list.limit = limit + 1;  // one extra row tells whether there is another page
  auto list_op = ctx->directory->list(std::move(list));
  auto records = co_await std::move(list_op);
  if (!records) {
    co_return engine_error(records.error());
  }
  bool more = records->size() > limit;
  if (more) {
    records->resize(limit);
  }
  co_return json_response(actors_page(*records, more));
}

// A created actor with a run handler (a workflow among them) starts at once, as the engine starts
// every actor it creates: its background work must not wait for a first request. One without a
// run handler starts at its first request.
Task<void> start_created(std::shared_ptr<LocalContext> ctx, storage::ActorRecord record) {
  const std::string actor_id = record.actor_id;
  auto op = acquire_actor(ctx, std::move(record));
  auto started = co_await std::move(op);
  if (!started) {
    log::debug("created actor did not start actor_id={}: {}.{}", actor_id, started.error().group,
               started.error().code);
  }
}

void start_if_running(const std::shared_ptr<LocalContext>& ctx,
                      const storage::ActorRecord& record) {
  auto definition = ctx->runtime.definition(record.name);
  if (definition && definition->hooks.run) {
    util::spawn(ctx->runtime.executor(), start_created(ctx, record), "start created actor");
  }
}

Task<net::HttpResponse> create_actor(std::shared_ptr<LocalContext> ctx,
                                     net::HttpRequest request,
                                     bool get_or_create) {
  auto target = util::split_target(request.target);
  auto query = parse_query(target.query, {"namespace"});
  if (!query) {
    co_return engine_error(query.error());
  }
  auto body = parse_body(request.body);
  if (!body) {
    co_return engine_error(body.error());
  }
  auto record = record_from_body(*ctx, *body, get_or_create);
  if (!record) {
    co_return engine_error(record.error());
  }
  if (get_or_create) {
    auto op = ctx->directory->get_or_create(std::move(*record));
    auto result = co_await std::move(op);
    if (!result) {
      co_return engine_error(result.error());
    }
    if (result->created) {
      start_if_running(ctx, result->actor);
    }
    co_return json_response(
        Value::object({{"actor", actor_json(result->actor)}, {"created", result->created}}));
  }
  auto op = ctx->directory->create(std::move(*record));
  auto result = co_await std::move(op);
  if (!result) {
    co_return engine_error(result.error());
  }
  start_if_running(ctx, *result);
  co_return json_response(Value::object({{"actor", actor_json(*result)}}));
}

Task<net::HttpResponse> destroy_route(std::shared_ptr<LocalContext> ctx, std::string actor_id) {
  auto op = destroy_actor(ctx, actor_id);
  auto destroyed = co_await std::move(op);
  if (!destroyed) {
    co_return engine_error(destroyed.error());
  }
  if (!*destroyed) {
    co_return engine_error(core::actor_not_found(actor_id));
  }
  co_return json_response(Value{Object{}});
}

// GET /actors/{id}/kv/keys/{base64 key}: one key of the actor's KV as the engine's API answers
// it ({value: base64, update_ts}); how an operator or Rivet's dashboard reads the inspector
// token (key 0x03, "Aw==") in both modes. The actor may be asleep: the store answers.
Task<net::HttpResponse> kv_get_route(std::shared_ptr<LocalContext> ctx,
                                     std::string actor_id,
                                     std::string raw_key) {
  auto key = util::percent_decode(raw_key);
  auto bytes = key ? protocol::base64_decode(*key) : std::nullopt;
  if (!bytes) {
    co_return engine_error(
        Error{"api", "invalid_request", "The key must be base64", std::nullopt, true});
  }
  auto get_op = ctx->store->get_actor(actor_id);
  auto record = co_await std::move(get_op);
  if (!record) {
    co_return engine_error(record.error());
  }
  if (!*record || (*record)->destroy_ts) {
    co_return engine_error(core::actor_not_found(actor_id));
  }
  auto store = ctx->store->actor_store(actor_id);
  std::vector<std::string> keys;
  keys.emplace_back(bytes->begin(), bytes->end());
  auto read_op = store->kv_store().get(std::move(keys));
  auto values = co_await std::move(read_op);
  if (!values) {
    co_return engine_error(values.error());
  }
  if (!values->front()) {
    co_return engine_error(
        Error{"actor", "kv_key_not_found", "The KV key was not found", std::nullopt, true});
  }
  const auto& value = *values->front();
  co_return json_response(Value::object(
      {{"value", protocol::base64_encode(std::span<const std::uint8_t>(
                     reinterpret_cast<const std::uint8_t*>(value.data()), value.size()))},
       {"update_ts", ctx->clock().now_ms()}}));
}

}  // namespace

Value actor_json(const storage::ActorRecord& r) {
  Value destroy_ts = r.destroy_ts ? Value{*r.destroy_ts} : Value{};
  Value running_ts = r.destroy_ts ? Value{} : Value{r.create_ts};
  return Value::object({{"actor_id", r.actor_id},
                        {"name", r.name},
                        {"key", r.key},
                        {"namespace_id", "default"},
                        {"datacenter", "default"},
                        {"runner_name_selector", "default"},
                        {"crash_policy", r.crash_policy},
                        {"create_ts", r.create_ts},
                        {"start_ts", running_ts},
                        {"pending_allocation_ts", Value{}},
                        {"connectable_ts", running_ts},
                        {"sleep_ts", Value{}},
                        {"reschedule_ts", Value{}},
                        {"destroy_ts", destroy_ts}});
}

Task<net::HttpResponse> handle_rest(std::shared_ptr<LocalContext> ctx, net::HttpRequest request) {
  auto target = util::split_target(request.target);
  std::string_view path = target.path;
  const std::string& method = request.method;
  if (path == "/actors" || path == "/actors/") {
    if (method == "GET") {
      auto op = list_actors(ctx, std::move(request));
      co_return co_await std::move(op);
    }
    if (method == "PUT" || method == "POST") {
      auto op = create_actor(ctx, std::move(request), method == "PUT");
      co_return co_await std::move(op);
    }
  } else if (path == "/actors/names" && method == "GET") {
    Value names{Object{}};
    for (const auto& name : ctx->runtime.actor_names()) {
      names.set(name, Value::object({{"metadata", Value{Object{}}}}));
    }
    co_return json_response(
        Value::object({{"names", names}, {"pagination", Value::object({{"cursor", Value{}}})}}));
  } else if (auto kv = path.find("/kv/keys/");
             path.substr(0, 8) == "/actors/" && kv != std::string_view::npos && method == "GET") {
    auto id = util::percent_decode(path.substr(8, kv - 8));
    if (id && !id->empty() && id->find('/') == std::string::npos) {
      auto op = kv_get_route(ctx, std::move(*id), std::string(path.substr(kv + 9)));
      co_return co_await std::move(op);
    }
  } else if (path.substr(0, 8) == "/actors/" && method == "DELETE") {
    auto id = util::percent_decode(path.substr(8));
    if (id && !id->empty() && id->find('/') == std::string::npos) {
      auto op = destroy_route(ctx, std::move(*id));
      co_return co_await std::move(op);
    }
  } else if (path == "/datacenters" && method == "GET") {
    std::string url = "http://" + ctx->config.host + ":" + std::to_string(ctx->config.port) + "/";
    co_return json_response(Value::object(
        {{"datacenters",
          Value::array({Value::object({{"label", 1}, {"name", "default"}, {"url", url}})})},
         {"pagination", Value::object({{"cursor", Value{}}})}}));
  }
  co_return engine_error(
      Error{"api", "not_found", "The requested resource was not found", std::nullopt, true});
}

}  // namespace rivetkit::local
