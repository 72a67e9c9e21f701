#pragma once
// Point reads of a KV held in a map, for the in-memory stores of the core tests (ranges:
// storage::list_kv).

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core::testing {

inline std::vector<std::optional<std::string>> read_keys(
    const std::map<std::string, std::string>& kv, const std::vector<std::string>& keys) {
  std::vector<std::optional<std::string>> out;
  out.reserve(keys.size());
  for (const auto& k : keys) {
    auto it = kv.find(k);
    out.push_back(it == kv.end() ? std::nullopt : std::optional<std::string>(it->second));
  }
  return out;
}

}  // namespace rivetkit::core::testing
