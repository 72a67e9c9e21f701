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
  auto mapped = user_kv::get_keys(std::move(keys), store_.kv_max_key_size());
  if (!mapped) {
    throw ActorError(mapped.error());
  }
  auto op = store_.kv_get(std::move(*mapped));
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
  auto query = user_kv::query(list, store_.kv_max_key_size());
  if (!query) {
    throw ActorError(query.error());
  }
  auto op = store_.kv_list(std::move(*query));
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
  auto batch = user_kv::writes(std::move(writes), store_.kv_max_key_size());
  if (!batch) {
    throw ActorError(batch.error());
  }
  if (batch->empty()) {
    co_return;
  }
  if (host_.kv_loading()) {
    storage::ActorWrite write;
    write.kv = std::move(*batch);
    auto op = store_.commit(std::move(write));
    auto r = co_await std::move(op);
    if (!r) {
      log::error("KV write failed actor_id={}: {}.{}: {}", actor_id_, r.error().group,
                 r.error().code, r.error().message);
      throw ActorError(r.error());
    }
    co_return;
  }
  unsaved_.append(std::move(*batch));
  auto op = host_.save_now();
  auto r = co_await std::move(op);
  if (!r) {
    throw ActorError(r.error());
  }
}

void ActorKv::take_changes(storage::ActorWrite& write) {
  if (!unsaved_.empty()) {
    write.kv.append(std::move(unsaved_));
    unsaved_ = storage::KvBatch{};
  }
}

}  // namespace rivetkit::core
