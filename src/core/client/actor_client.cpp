#include "core/client/actor_client.hpp"

#include "core/actor/stored_value.hpp"
#include "core/errors.hpp"
#include "core/ids.hpp"
#include "core/keys.hpp"

namespace rivetkit::core {

namespace {

[[noreturn]] void throw_for_client(const Error& error) {
  throw ActorError(sanitize_for_client(error));
}

bool is_not_found(const Error& error) {
  return error.group == "actor" && error.code == "not_found";
}

}  // namespace

ActorClient::ActorClient(ActorDirectory& directory,
                         ActionCaller& caller,
                         KnownName known_name,
                         std::shared_ptr<util::Clock> clock)
    : directory_(directory),
      caller_(caller),
      known_name_(std::move(known_name)),
      clock_(std::move(clock)) {}

Task<Result<std::string>> ActorClient::find(const detail::ActorQuery& query) {
  using Kind = detail::ActorQuery::Kind;
  if (query.kind == Kind::kGetForId) {
    co_return query.actor_id;  // the call finds out whether it exists (and wakes it)
  }
  if (!known_name_(query.name)) {
    co_return fail(unknown_actor_name(query.name));
  }
  std::string key = serialize_key(query.key);
  if (query.kind == Kind::kGet) {
    auto op = directory_.get_with_key(query.name, key);
    auto found = co_await std::move(op);
    if (!found) {
      co_return fail(found.error());
    }
    if (!*found) {
      co_return fail(Error{"actor", "not_found", "The actor does not exist or was destroyed.",
                           Value::object({{"name", query.name}, {"key", key}}), true});
    }
    co_return std::move((*found)->actor_id);
  }
  ActorRecord wanted;
  wanted.actor_id = new_actor_id();
  wanted.name = query.name;
  wanted.key = std::move(key);
  if (!query.input.is_undefined()) {
    wanted.input = encode_stored(query.input);
  }
  wanted.create_ts = clock_->now_ms();
  wanted.generation = 0;
  if (query.kind == Kind::kCreate) {
    auto op = directory_.create(std::move(wanted));
    auto created = co_await std::move(op);
    if (!created) {
      co_return fail(created.error());
    }
    co_return std::move(created->actor_id);
  }
  auto op = directory_.get_or_create(std::move(wanted));
  auto found = co_await std::move(op);
  if (!found) {
    co_return fail(found.error());
  }
  co_return std::move(found->actor.actor_id);
}

Task<std::string> ActorClient::resolve(detail::ActorQuery query) {
  auto op = find(query);
  auto id = co_await std::move(op);
  if (!id) {
    throw_for_client(id.error());
  }
  co_return std::move(*id);
}

Task<Value> ActorClient::call(detail::ActorQuery query,
                              std::string action,
                              Array args,
                              Value params) {
  if (caller_.routes_query(query)) {
    if (!known_name_(query.name)) {
      throw_for_client(unknown_actor_name(query.name));
    }
    auto op =
        caller_.call_query(std::move(query), std::move(action), std::move(args), std::move(params));
    auto result = co_await std::move(op);
    if (!result) {
      throw_for_client(result.error());
    }
    co_return std::move(*result);
  }
  // A get-or-create handle whose actor was destroyed between finding it and calling it creates
  // it anew, once (the directory no longer answers a destroyed actor for its key).
  const int attempts = query.kind == detail::ActorQuery::Kind::kGetOrCreate ? 2 : 1;
  for (int attempt = 1;; ++attempt) {
    auto find_op = find(query);
    auto id = co_await std::move(find_op);
    if (!id) {
      throw_for_client(id.error());
    }
    auto call_op = caller_.call(std::move(*id), action, attempt < attempts ? args : std::move(args),
                                attempt < attempts ? params : std::move(params));
    auto result = co_await std::move(call_op);
    if (result) {
      co_return std::move(*result);
    }
    if (attempt >= attempts || !is_not_found(result.error())) {
      throw_for_client(result.error());
    }
  }
}

Task<void> ActorClient::destroy(detail::ActorQuery query) {
  auto find_op = find(query);
  auto id = co_await std::move(find_op);
  if (!id) {
    throw_for_client(id.error());
  }
  auto op = directory_.destroy(*id);
  auto destroyed = co_await std::move(op);
  if (!destroyed) {
    throw_for_client(destroyed.error());
  }
  if (!*destroyed) {
    throw_for_client(actor_not_found(*id));
  }
}

}  // namespace rivetkit::core
