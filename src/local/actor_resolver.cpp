// Gateway resolution: actor id or (name, key) -> running ActorInstance, creating actors for
// getOrCreate and waking sleeping ones.

#include "core/errors.hpp"
#include "core/ids.hpp"
#include "core/keys.hpp"
#include "local/local_context.hpp"
#include "util/spawn.hpp"

#include <boost/asio/this_coro.hpp>

namespace rivetkit::local {

namespace {

// Builds what a new instance needs. Every start is a new generation (as in the engine, where each
// wake is a new allocation); the counter is persisted so it keeps growing across restarts.
Task<Result<core::ActorInstance::Spec>> make_instance_spec(
    std::shared_ptr<LocalContext> ctx,
    storage::ActorRecord record,
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
    co_return fail(core::unknown_actor_name(record.name));
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
  auto get_op = ctx->directory->get_for_id(actor_id);
  auto record = co_await std::move(get_op);
  if (!record) {
    co_return fail(record.error());
  }
  if (!*record || (*record)->destroy_ts) {
    co_return fail(core::actor_not_found(actor_id));
  }
  auto op = acquire_actor(ctx, std::move(**record));
  auto acquired = co_await std::move(op);
  if (!acquired) {
    ctx->directory->forget_cached(actor_id);  // e.g. destroyed since it was cached
  }
  co_return acquired;
}

namespace {

// Starts a getOrCreate's actor; one destroyed since the directory answered is created anew.
Task<Result<std::shared_ptr<core::ActorInstance>>> get_or_create_started(
    std::shared_ptr<LocalContext> ctx, storage::ActorRecord wanted) {
  for (int attempt = 0;; ++attempt) {
    auto create_op = ctx->directory->get_or_create(wanted);
    auto found = co_await std::move(create_op);
    if (!found) {
      co_return fail(found.error());
    }
    std::string actor_id = found->actor.actor_id;
    auto op = acquire_actor(ctx, std::move(found->actor));
    auto acquired = co_await std::move(op);
    if (acquired || attempt > 0) {
      co_return acquired;
    }
    ctx->directory->forget_cached(actor_id);
    auto get_op = ctx->directory->get_for_id(actor_id);
    auto now = co_await std::move(get_op);
    if (!now || (*now && !(*now)->destroy_ts)) {
      co_return acquired;  // it exists and did not start: that is the answer
    }
    wanted.actor_id = core::new_actor_id();
  }
}

}  // namespace

Task<Result<std::shared_ptr<core::ActorInstance>>> resolve_gateway(
    std::shared_ptr<LocalContext> ctx, GatewayRequest target) {
  if (target.direct) {
    auto op = acquire_actor_id(ctx, target.direct->actor_id);
    co_return co_await std::move(op);
  }
  QueryTarget& q = *target.query;
  if (!ctx->runtime.definition(q.name)) {
    co_return fail(core::unknown_actor_name(q.name));
  }
  std::string key = core::serialize_key(q.key);
  if (q.method == QueryTarget::Method::kGet) {
    auto find_op = ctx->directory->get_with_key(q.name, key);
    auto found = co_await std::move(find_op);
    if (!found) {
      co_return fail(found.error());
    }
    if (!*found) {
      co_return fail(Error{"actor", "not_found", "The actor does not exist or was destroyed.",
                           std::nullopt, true});
    }
    std::string actor_id = (*found)->actor_id;
    auto op = acquire_actor(ctx, std::move(**found));
    auto acquired = co_await std::move(op);
    if (!acquired) {
      ctx->directory->forget_cached(actor_id);
    }
    co_return acquired;
  }
  storage::ActorRecord record;
  record.actor_id = core::new_actor_id();
  record.name = q.name;
  record.key = std::move(key);
  record.input = q.input;
  record.crash_policy = q.crash_policy.value_or("sleep");
  record.create_ts = ctx->clock().now_ms();
  record.generation = 0;
  auto op = get_or_create_started(ctx, std::move(record));
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

Task<Result<void>> serve_actor_socket(std::shared_ptr<LocalContext> ctx,
                                      std::string actor_id,
                                      net::HttpRequest request,
                                      std::shared_ptr<net::WebSocket> socket) {
  auto acquire_op = acquire_actor_id(ctx, std::move(actor_id));
  auto instance = co_await std::move(acquire_op);
  if (!instance) {
    co_return fail(instance.error());
  }
  std::string path = request.target;
  util::spawn(
      ctx->runtime.executor(),
      core::ActorRouter::handle_websocket(make_target(ctx, std::move(*instance)),
                                          std::move(request), std::move(path), std::move(socket)),
      "in-process actor socket");
  co_return Result<void>{};
}

Task<Result<bool>> destroy_actor(std::shared_ptr<LocalContext> ctx, std::string actor_id) {
  auto op = ctx->directory->destroy(std::move(actor_id));
  co_return co_await std::move(op);
}

}  // namespace rivetkit::local
