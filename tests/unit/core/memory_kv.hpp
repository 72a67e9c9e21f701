#pragma once
// The KV half of the in-memory stores of the core tests: the ActorKv of a KV held in a map.
// Subclasses say how writes reach `kv` (at once, or when the test releases them).

#include "storage/actor_store.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core::testing {

class MapKvStore : public storage::ActorStore, public storage::ActorKv {
 public:
  std::map<std::string, std::string> kv;  // what is durable

  storage::ActorKv& kv_store() override { return *this; }
  Task<Result<std::vector<std::optional<std::string>>>> get(
      std::vector<std::string> keys) override {
    std::vector<std::optional<std::string>> out;
    out.reserve(keys.size());
    for (const auto& k : keys) {
      auto it = kv.find(k);
      out.push_back(it == kv.end() ? std::nullopt : std::optional<std::string>(it->second));
    }
    co_return out;
  }
  Task<Result<std::vector<storage::KvEntry>>> list(storage::KvQuery query) override {
    co_return storage::list_kv(kv, query);
  }
  /// A commit of the batch alone (through the subclass's commit, so a test's gate applies).
  Task<Result<void>> write(storage::KvBatch batch) override {
    storage::ActorWrite w;
    w.kv = std::move(batch);
    return commit(std::move(w));
  }
  std::size_t max_key_size() const override { return 2048; }
};

}  // namespace rivetkit::core::testing
