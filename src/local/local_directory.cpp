#include "local/local_directory.hpp"

namespace rivetkit::local {

LocalDirectory::LocalDirectory(std::shared_ptr<storage::LocalStore> store,
                               core::Runtime& runtime,
                               std::function<void(const std::string&)> destroyed)
    : store_(std::move(store)), runtime_(runtime), destroyed_(std::move(destroyed)) {}

Task<Result<std::optional<core::ActorRecord>>> LocalDirectory::get_for_id(std::string actor_id) {
  if (auto cached = cache_.by_id(actor_id)) {
    co_return cached;
  }
  auto op = store_->get_actor(std::move(actor_id));
  auto record = co_await std::move(op);
  if (record && *record) {
    cache_.put(**record);  // (destroyed records are not cached)
  }
  co_return record;
}

Task<Result<std::optional<core::ActorRecord>>> LocalDirectory::get_with_key(std::string name,
                                                                            std::string key) {
  if (key.empty()) {
    co_return std::optional<core::ActorRecord>();  // a keyless actor is never found by key
  }
  if (auto cached = cache_.by_key(name, key)) {
    co_return cached;
  }
  auto op = store_->find_actor(std::move(name), std::move(key));
  auto record = co_await std::move(op);
  if (record && *record) {
    cache_.put(**record);
  }
  co_return record;
}

Task<Result<LocalDirectory::GetOrCreated>> LocalDirectory::get_or_create(core::ActorRecord wanted) {
  if (!wanted.key.empty()) {
    if (auto cached = cache_.by_key(wanted.name, wanted.key)) {
      co_return GetOrCreated{std::move(*cached), false};
    }
  }
  // The store's get-or-create is one statement on its single writer: concurrent calls for one
  // key create one actor.
  auto op = store_->get_or_create_actor(std::move(wanted));
  auto result = co_await std::move(op);
  if (!result) {
    co_return fail(result.error());
  }
  cache_.put(result->first);
  co_return GetOrCreated{std::move(result->first), result->second};
}

Task<Result<core::ActorRecord>> LocalDirectory::create(core::ActorRecord wanted) {
  auto op = store_->create_actor(std::move(wanted));
  auto created = co_await std::move(op);
  if (created) {
    cache_.put(*created);
  }
  co_return created;
}

Task<Result<bool>> LocalDirectory::destroy(std::string actor_id) {
  auto get_op = store_->get_actor(actor_id);
  auto record = co_await std::move(get_op);
  if (!record) {
    co_return fail(record.error());
  }
  if (!*record || (*record)->destroy_ts) {
    co_return false;
  }
  // Nobody reaches the actor from here on; the running instance (if any) drains within its grace
  // period, runs on_destroy and closes its connections; then the data goes.
  cache_.erase_destroyed(actor_id);
  auto stop_op = runtime_.stop(actor_id, core::StopReason::kDestroy);
  co_await std::move(stop_op);
  auto destroy_op = store_->destroy_actor(actor_id, runtime_.config().clock->now_ms());
  auto destroyed = co_await std::move(destroy_op);
  runtime_.forget(actor_id);
  if (destroyed_) {
    destroyed_(actor_id);
  }
  co_return destroyed;
}

Task<Result<std::vector<core::ActorRecord>>> LocalDirectory::list(core::ActorListQuery query) {
  auto op = store_->list_actors(std::move(query));
  co_return co_await std::move(op);
}

}  // namespace rivetkit::local
