// Gateway resolution: actor id or (name, key) -> running ActorInstance, creating actors for
// getOrCreate and waking sleeping ones.

#include <boost/asio/this_coro.hpp>

#include "core/errors.hpp"
#include "core/ids.hpp"
#include "core/keys.hpp"
#include "local/local_context.hpp"

namespace rivetkit::local {

Error unknown_actor_name(const std::string& name) {
  return Error{"actor", "unknown_name", "No actor named '" + name + "' is registered",
               Value::object({{"name", name}}), true};
}

namespace {

// Builds what a new instance needs. Every start is a new generation (as in the engine, where each
// wake is a new allocation); the counter is persisted so it keeps growing across restarts.
Task<Result<core::ActorInstance::Spec>> make_instance_spec(
    std::shared_ptr<LocalContext> ctx, storage::ActorRecord record,
    std::shared_ptr<const detail::ActorDefinitionData> definition) {
  auto gen_op = ctx->store->acquire_generation(record.actor_id);
  auto generation = co_await std::move(gen_op);
  if (!generation) {
    co_return fail(generation.error());
  }
  core::ActorInstance::Spec spec;
  spec.actor_id = record.actor_id;
  spec.name = record.name;
  auto key = core::parse_key(record.key);
  spec.key = key ? std::move(*key) : std::vector<std::string>{record.key};
  spec.generation = *generation;
  spec.definition = std::move(definition);
  spec.store = ctx->store->actor_store(record.actor_id);
  spec.driver = ctx->driver;
  co_return spec;
}

}  // namespace

Task<Result<std::shared_ptr<core::ActorInstance>>> acquire_actor(std::shared_ptr<LocalContext> ctx,
                                                                 storage::ActorRecord record) {
  if (record.destroy_ts) {
    co_return fail(core::actor_not_found(record.actor_id));
  }
  auto definition = ctx->runtime.definition(record.name);
  if (!definition) {
    co_return fail(unknown_actor_name(record.name));
  }
  std::string actor_id = record.actor_id;
  core::Runtime::SpecFactory make_spec = [ctx, record = std::move(record), definition]() {
    return make_instance_spec(ctx, record, definition);
  };
  auto op = ctx->runtime.acquire(std::move(actor_id), std::move(make_spec));
  co_return co_await std::move(op);
}

Task<Result<std::shared_ptr<core::ActorInstance>>> acquire_actor_id(
    std::shared_ptr<LocalContext> ctx, std::string actor_id) {
  if (auto cached = ctx->directory.by_id(actor_id)) {
    auto op = acquire_actor(ctx, std::move(*cached));
    auto acquired = co_await std::move(op);
    if (acquired || acquired.error().code != "not_found") {
      co_return acquired;
    }
    ctx->directory.erase(actor_id);
  }
  auto get_op = ctx->store->get_actor(actor_id);
  auto record = co_await std::move(get_op);
  if (!record) {
    co_return fail(record.error());
  }
  if (!*record || (*record)->destroy_ts) {
    co_return fail(core::actor_not_found(actor_id));
  }
  ctx->directory.put(**record);
  auto op = acquire_actor(ctx, std::move(**record));
  co_return co_await std::move(op);
}

Task<Result<std::shared_ptr<core::ActorInstance>>> resolve_gateway(std::shared_ptr<LocalContext> ctx,
                                                                   GatewayRequest target) {
  if (target.direct) {
    auto op = acquire_actor_id(ctx, target.direct->actor_id);
    co_return co_await std::move(op);
  }
  QueryTarget& q = *target.query;
  if (!ctx->runtime.definition(q.name)) {
    co_return fail(unknown_actor_name(q.name));
  }
  std::string key = core::serialize_key(q.key);
  if (auto cached = ctx->directory.by_key(q.name, key)) {
    std::string cached_id = cached->actor_id;
    auto op = acquire_actor(ctx, std::move(*cached));
    auto acquired = co_await std::move(op);
    if (acquired || acquired.error().code != "not_found") {
      co_return acquired;
    }
    // Destroyed since it was cached: forget it and resolve from the store.
    ctx->directory.erase(cached_id);
  }
  if (q.method == QueryTarget::Method::kGet) {
    auto find_op = ctx->store->find_actor(q.name, key);
    auto found = co_await std::move(find_op);
    if (!found) {
      co_return fail(found.error());
    }
    if (!*found) {
      co_return fail(Error{"actor", "not_found", "The actor does not exist or was destroyed.",
                           std::nullopt, true});
    }
    ctx->directory.put(**found);
    auto op = acquire_actor(ctx, std::move(**found));
    co_return co_await std::move(op);
  }
  storage::ActorRecord record;
  record.actor_id = core::new_actor_id();
  record.name = q.name;
  record.key = std::move(key);
  record.input = q.input;
  record.crash_policy = q.crash_policy.value_or("sleep");
  record.create_ts = ctx->clock().now_ms();
  record.generation = 0;
  auto create_op = ctx->store->get_or_create_actor(std::move(record));
  auto created = co_await std::move(create_op);
  if (!created) {
    co_return fail(created.error());
  }
  ctx->directory.put(created->first);
  auto op = acquire_actor(ctx, std::move(created->first));
  co_return co_await std::move(op);
}

core::ActorTarget make_target(std::shared_ptr<LocalContext> ctx,
                              std::shared_ptr<core::ActorInstance> instance) {
  core::ActorTarget target;
  target.runtime = &ctx->runtime;
  target.instance = std::move(instance);
  target.sockets = &ctx->sockets;
  return target;
}

Task<Result<bool>> destroy_actor(std::shared_ptr<LocalContext> ctx, std::string actor_id) {
  auto get_op = ctx->store->get_actor(actor_id);
  auto record = co_await std::move(get_op);
  if (!record) {
    co_return fail(record.error());
  }
  if (!*record || (*record)->destroy_ts) {
    co_return false;
  }
  // Nobody reaches the actor from here on; the running instance (if any) drains within its grace
  // period, runs on_destroy and closes its connections; then the data goes.
  ctx->directory.erase(actor_id);
  auto stop_op = ctx->runtime.stop(actor_id, core::StopReason::kDestroy);
  co_await std::move(stop_op);
  auto destroy_op = ctx->store->destroy_actor(actor_id, ctx->clock().now_ms());
  auto destroyed = co_await std::move(destroy_op);
  ctx->runtime.forget(actor_id);
  if (ctx->driver != nullptr) {
    ctx->driver->alarm_changed(actor_id, std::nullopt);
  }
  if (!destroyed) {
    co_return fail(destroyed.error());
  }
  co_return *destroyed;
}

}  // namespace rivetkit::local
