#pragma once
// The KV half of the in-memory stores of the core tests: reads of a KV held in a map. Subclasses
// say how writes reach `kv` (at once, or when the test releases them).

#include "storage/actor_store.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core::testing {

class MapKvStore : public storage::ActorStore {
 public:
  std::map<std::string, std::string> kv;  // what is durable

  Task<Result<std::vector<std::optional<std::string>>>> kv_get(
      std::vector<std::string> keys) override {
    std::vector<std::optional<std::string>> out;
    out.reserve(keys.size());
    for (const auto& k : keys) {
      auto it = kv.find(k);
      out.push_back(it == kv.end() ? std::nullopt : std::optional<std::string>(it->second));
    }
    co_return out;
  }
  Task<Result<std::vector<storage::KvEntry>>> kv_list(storage::KvQuery query) override {
    co_return storage::list_kv(kv, query);
  }
  std::size_t kv_max_key_size() const override { return 2048; }
};

}  // namespace rivetkit::core::testing
