#include "core/user_kv.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <limits>

namespace rivetkit::core::user_kv {

namespace {

Error kv_error(std::string code, std::string message) {
  return Error{"kv", std::move(code), std::move(message), std::nullopt, true};
}

Result<void> check_value(std::string_view value) {
  if (value.size() > storage::kMaxKvValueSize) {
    return fail(kv_error("value_too_large", fmt::format("KV value is {} bytes; the limit is {}",
                                                        value.size(), storage::kMaxKvValueSize)));
  }
  return {};
}

Result<void> check_batch(std::size_t entries, std::size_t bytes) {
  if (entries > kMaxBatchEntries || bytes > kMaxBatchBytes) {
    return fail(kv_error(
        "batch_too_large",
        fmt::format("KV batch has {} entries and {} bytes; the limits are {} entries and {} bytes",
                    entries, bytes, kMaxBatchEntries, kMaxBatchBytes)));
  }
  return {};
}

}  // namespace

Result<std::string> store_key(std::string_view user_key, std::size_t max_key_size) {
  if (user_key.size() + 1 > max_key_size) {
    return fail(kv_error("key_too_large", fmt::format("KV key is {} bytes; the limit is {}",
                                                      user_key.size(), max_key_size - 1)));
  }
  std::string key;
  key.reserve(user_key.size() + 1);
  key += storage::kUserKvPrefix;
  key += user_key;
  return key;
}

std::string user_key(std::string_view store_key) {
  return std::string(store_key.empty() ? store_key : store_key.substr(1));
}

Result<std::vector<std::string>> get_keys(std::vector<std::string> keys, std::size_t max_key_size) {
  std::size_t bytes = 0;
  for (const auto& k : keys) {
    bytes += k.size();
  }
  if (auto r = check_batch(keys.size(), bytes); !r) {
    return fail(r.error());
  }
  for (auto& k : keys) {
    auto mapped = store_key(k, max_key_size);
    if (!mapped) {
      return fail(mapped.error());
    }
    k = std::move(*mapped);
  }
  return keys;
}

Result<storage::KvBatch> writes(std::vector<detail::KvWrite> writes, std::size_t max_key_size) {
  std::size_t bytes = 0;
  for (const auto& w : writes) {
    bytes += w.key.size() + w.value.size();
  }
  if (auto r = check_batch(writes.size(), bytes); !r) {
    return fail(r.error());
  }
  storage::KvBatch batch;
  for (auto& w : writes) {
    auto key = store_key(w.key, max_key_size);
    if (!key) {
      return fail(key.error());
    }
    switch (w.kind) {
      case detail::KvWrite::Kind::kPut:
        if (auto r = check_value(w.value); !r) {
          return fail(r.error());
        }
        batch.put(std::move(*key), std::move(w.value));
        break;
      case detail::KvWrite::Kind::kDelete:
        batch.remove(std::move(*key));
        break;
      case detail::KvWrite::Kind::kDeleteRange: {
        if (w.key > w.value) {
          return fail(kv_error("invalid_range", "KV range start is after its end"));
        }
        auto end = store_key(w.value, max_key_size);
        if (!end) {
          return fail(end.error());
        }
        batch.remove_range(std::move(*key), std::move(*end));
        break;
      }
    }
  }
  return batch;
}

Result<storage::KvQuery> query(const detail::KvList& list, std::size_t max_key_size) {
  storage::KvQuery q;
  q.reverse = list.options.reverse;
  if (list.options.limit) {
    const std::int64_t limit = *list.options.limit;
    if (limit < 0 || limit > std::int64_t{std::numeric_limits<std::uint32_t>::max()}) {
      return fail(
          kv_error("invalid_limit", fmt::format("KV list limit {} is not between 0 and {}", limit,
                                                std::numeric_limits<std::uint32_t>::max())));
    }
    q.limit = static_cast<std::uint64_t>(limit);
  }
  auto start = store_key(list.start, max_key_size);
  if (!start) {
    return fail(start.error());
  }
  if (list.prefix) {
    q.prefix = std::move(*start);
    return q;
  }
  if (list.start > list.end) {
    return fail(kv_error("invalid_range", "KV range start is after its end"));
  }
  auto end = store_key(list.end, max_key_size);
  if (!end) {
    return fail(end.error());
  }
  q.start = std::move(*start);
  q.end = std::move(*end);
  return q;
}

Error actor_stopped() {
  return kv_error("actor_stopped", "The actor has stopped: its KV is no longer available");
}

}  // namespace rivetkit::core::user_kv
