#pragma once
/// The actor's key-value store (`c.kv()`, RivetKit's `c.kv`): durable bytes under byte keys,
/// private to the actor, kept across sleeps and deleted when the actor is destroyed.
///
///     co_await c.kv().put("greeting", "hello");
///     std::optional<std::string> v = co_await c.kv().get("greeting");
///     for (auto& [key, value] : co_await c.kv().list("user:")) { ... }
///
/// Durability: a write resumes its caller once it is durable. It rides the actor's commit, so
/// when one turn changed the state and wrote KV both are written in one atomic batch, and the
/// call's reply (or event) is released only after both are durable. Reads see every write whose
/// call completed.
///
/// Order: keys compare by their bytes (shorter first on a common prefix); list and list_range
/// return entries in that order, or reversed.
///
/// Limits (RivetKit's): a key at most 2,047 bytes (2,045 in engine mode, where the engine counts
/// keys differently), a value at most 128 KiB, one batch at most 16,384 entries and 64 MiB.
/// Breaking one throws `kv.key_too_large`, `kv.value_too_large` or `kv.batch_too_large` and
/// writes nothing; a range whose start is after its end throws `kv.invalid_range`. A call after
/// the actor stopped throws `kv.actor_stopped`. All are public errors (the client sees them).
///
/// Atomicity: a turn's writes are atomic in both modes. In engine mode a turn larger than one
/// engine request (128 keys, 976 KiB), or deleting and putting, goes through a commit journal
/// and costs its size twice (docs/storage.md).

#include <rivetkit/detail/access.hpp>
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/kv_types.hpp>
#include <rivetkit/task.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rivetkit {

class Kv {
 public:
  /// The value of `key`, or nullopt.
  Task<std::optional<std::string>> get(std::string key) const;
  /// The value of each key, in the order given (nullopt for an absent one).
  Task<std::vector<std::optional<std::string>>> batch_get(std::vector<std::string> keys) const {
    return api_->get(std::move(keys));
  }
  Task<void> put(std::string key, std::string value) const {
    std::vector<detail::KvWrite> w;
    w.push_back({detail::KvWrite::Kind::kPut, std::move(key), std::move(value)});
    return api_->write(std::move(w));
  }
  /// Writes every pair at once (later pairs win over earlier ones with the same key).
  Task<void> batch_put(std::vector<KvPair> entries) const {
    std::vector<detail::KvWrite> w;
    w.reserve(entries.size());
    for (auto& [key, value] : entries) {
      w.push_back({detail::KvWrite::Kind::kPut, std::move(key), std::move(value)});
    }
    return api_->write(std::move(w));
  }
  /// Deletes `key` (absent: nothing to do).
  Task<void> remove(std::string key) const {
    std::vector<detail::KvWrite> w;
    w.push_back({detail::KvWrite::Kind::kDelete, std::move(key), {}});
    return api_->write(std::move(w));
  }
  Task<void> batch_remove(std::vector<std::string> keys) const {
    std::vector<detail::KvWrite> w;
    w.reserve(keys.size());
    for (auto& key : keys) {
      w.push_back({detail::KvWrite::Kind::kDelete, std::move(key), {}});
    }
    return api_->write(std::move(w));
  }
  /// Deletes every key in [start, end) (RivetKit's `deleteRange`).
  Task<void> remove_range(std::string start, std::string end) const {
    std::vector<detail::KvWrite> w;
    w.push_back({detail::KvWrite::Kind::kDeleteRange, std::move(start), std::move(end)});
    return api_->write(std::move(w));
  }
  /// The entries whose key starts with `prefix` ("" lists everything).
  Task<std::vector<KvPair>> list(std::string prefix, KvListOptions options = {}) const {
    return api_->list(detail::KvList{true, std::move(prefix), {}, options});
  }
  /// The entries with start <= key < end.
  Task<std::vector<KvPair>> list_range(std::string start,
                                       std::string end,
                                       KvListOptions options = {}) const {
    return api_->list(detail::KvList{false, std::move(start), std::move(end), options});
  }

 private:
  friend struct detail::Access;
  explicit Kv(detail::KvApi* api) : api_(api) {}
  detail::KvApi* api_;
};

namespace detail {
// A free coroutine (not a member): `auto op = c.kv().get(k)` stays valid after the Kv temporary
// is gone, as the frame holds the api pointer itself.
inline Task<std::optional<std::string>> kv_get_one(KvApi* api, std::string key) {
  std::vector<std::string> keys;
  keys.push_back(std::move(key));
  auto op = api->get(std::move(keys));
  auto values = co_await std::move(op);
  co_return values.empty() ? std::nullopt : std::move(values.front());
}
}  // namespace detail

inline Task<std::optional<std::string>> Kv::get(std::string key) const {
  return detail::kv_get_one(api_, std::move(key));
}

}  // namespace rivetkit
