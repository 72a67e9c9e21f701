#pragma once
// User KV (`c.kv()`, include/rivetkit/kv.hpp) over the actor's ordered KV (storage/kv.hpp):
// checks a call against RivetKit's limits and maps user keys into their namespace (the 0x04
// prefix) and back. A user key can therefore never name a runtime key. Every check happens
// before anything is written: a refused call writes nothing.

#include "storage/kv.hpp"
#include <rivetkit/error.hpp>
#include <rivetkit/kv_types.hpp>
#include <rivetkit/result.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rivetkit::core::user_kv {

/// Most entries of one call, and most bytes of its keys and values.
inline constexpr std::size_t kMaxBatchEntries = 16384;
inline constexpr std::size_t kMaxBatchBytes = 64 * 1024 * 1024;

/// The store key of a user key, after checking its size against the store's limit.
Result<std::string> store_key(std::string_view user_key, std::size_t max_key_size);
/// The user key of a store key (the prefix dropped).
std::string user_key(std::string_view store_key);

/// The keys of a batch_get, checked and mapped.
Result<std::vector<std::string>> get_keys(std::vector<std::string> keys, std::size_t max_key_size);
/// The writes of one call, checked and mapped.
Result<storage::KvBatch> writes(std::vector<detail::KvWrite> writes, std::size_t max_key_size);
/// A list call, checked and mapped (its range inside the user namespace).
Result<storage::KvQuery> query(const detail::KvList& list, std::size_t max_key_size);

Error actor_stopped();

}  // namespace rivetkit::core::user_kv
