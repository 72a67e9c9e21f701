#include "core/actor/actor_kv.hpp"

#include "core/user_kv.hpp"
#include "util/log.hpp"

namespace rivetkit::core {

ActorKv::ActorKv(std::string actor_id, storage::ActorStore& store, Host& host)
    : actor_id_(std::move(actor_id)), store_(store), host_(host) {}

void ActorKv::check_open() const {
  if (!host_.kv_open()) {
    throw ActorError(user_kv::actor_stopped());
  }
}

Task<std::vector<std::optional<std::string>>> ActorKv::get(std::vector<std::string> keys) {
  auto hold = host_.hold();
  check_open();
  auto mapped = user_kv::get_keys(std::move(keys), store_.kv_store().max_key_size());
  if (!mapped) {
    throw ActorError(mapped.error());
  }
  auto op = store_.kv_store().get(std::move(*mapped));
  auto values = co_await std::move(op);
  if (!values) {
    log::error("KV read failed actor_id={}: {}.{}: {}", actor_id_, values.error().group,
               values.error().code, values.error().message);
    throw ActorError(values.error());
  }
  co_return std::move(*values);
}

Task<std::vector<std::pair<std::string, std::string>>> ActorKv::list(detail::KvList list) {
  auto hold = host_.hold();
  check_open();
  auto query = user_kv::query(list, store_.kv_store().max_key_size());
  if (!query) {
    throw ActorError(query.error());
  }
  auto op = store_.kv_store().list(std::move(*query));
  auto entries = co_await std::move(op);
  if (!entries) {
    log::error("KV list failed actor_id={}: {}.{}: {}", actor_id_, entries.error().group,
               entries.error().code, entries.error().message);
    throw ActorError(entries.error());
  }
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(entries->size());
  for (auto& e : *entries) {
    out.emplace_back(user_kv::user_key(e.key), std::move(e.value));
  }
  co_return out;
}

Task<void> ActorKv::write(std::vector<detail::KvWrite> writes) {
  auto hold = host_.hold();
  check_open();
  auto batch = user_kv::writes(std::move(writes), store_.kv_store().max_key_size());
  if (!batch) {
    throw ActorError(batch.error());
  }
  auto op = commit_batch(std::move(*batch));
  auto r = co_await std::move(op);
  if (!r) {
    throw ActorError(r.error());
  }
}

Task<Result<void>> ActorKv::commit_batch(storage::KvBatch batch) {
  if (batch.empty()) {
    co_return Result<void>{};
  }
  if (host_.kv_loading()) {
    storage::ActorWrite write;
    write.kv = std::move(batch);
    auto op = store_.commit(std::move(write));
    auto r = co_await std::move(op);
    if (!r) {
      log::error("KV write failed actor_id={}: {}.{}: {}", actor_id_, r.error().group,
                 r.error().code, r.error().message);
    }
    co_return r;
  }
  unsaved_.append(std::move(batch));
  auto op = host_.save_now();
  co_return co_await std::move(op);
}

Task<Result<std::optional<std::string>>> ActorKv::runtime_get(std::string key) {
  auto hold = host_.hold();
  std::vector<std::string> keys;
  keys.push_back(std::move(key));
  auto op = store_.kv_store().get(std::move(keys));
  auto values = co_await std::move(op);
  if (!values) {
    co_return fail(values.error());
  }
  co_return std::move(values->front());
}

Task<Result<void>> ActorKv::runtime_put(std::string key, std::string value) {
  auto hold = host_.hold();
  if (!host_.kv_open()) {
    co_return fail(user_kv::actor_stopped());
  }
  storage::KvBatch batch;
  batch.put(std::move(key), std::move(value));
  auto op = commit_batch(std::move(batch));
  co_return co_await std::move(op);
}

void ActorKv::take_changes(storage::ActorWrite& write) {
  if (!unsaved_.empty()) {
    write.kv.append(std::move(unsaved_));
    unsaved_ = storage::KvBatch{};
  }
}

}  // namespace rivetkit::core
