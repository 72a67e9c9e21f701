#include "engine/engine_actor_kv.hpp"

#include "engine/kv_commit_journal.hpp"
#include "util/log.hpp"
#include "util/metrics.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <string_view>

namespace rivetkit::engine {

namespace {

using journal::kMaxKeysPerRequest;          // engine limits (envoy-protocol.md §4.8)
constexpr std::uint64_t kListPage = 16384;  // the engine's default list limit

Error storage_error(std::string code, std::string message) {
  return Error{"engine", std::move(code), std::move(message), std::nullopt, false};
}

}  // namespace

EngineActorKv::EngineActorKv(std::shared_ptr<EngineKv> link,
                             std::string actor_id,
                             std::uint32_t generation)
    : link_(std::move(link)), actor_id_(std::move(actor_id)), generation_(generation) {}

Task<Result<void>> EngineActorKv::recover() {
  storage::KvQuery query;
  query.prefix = std::string(1, journal::kJournalPrefix);
  auto list_op = list(std::move(query));
  auto listed = co_await std::move(list_op);
  if (!listed) {
    co_return fail(listed.error());
  }
  if (listed->empty()) {
    co_return Result<void>{};
  }
  auto found = journal::complete_journals(*listed, generation_);
  if (!found) {
    co_return fail(found.error());
  }
  for (auto& j : *found) {
    log::info("actor {}: re-applying the commit journal of generation {}", actor_id_, j.generation);
    auto requests = journal::apply_requests(std::move(j.writes));
    for (auto& request : requests) {
      auto op = send(std::move(request));
      if (auto r = co_await std::move(op); !r) {
        co_return r;
      }
    }
  }
  auto [start, end] = journal::journal_range_through(generation_);
  auto del_op = send(envoy::KvDeleteRangeRequest{std::move(start), std::move(end)});
  auto deleted = co_await std::move(del_op);
  co_return deleted;
}

Task<Result<void>> EngineActorKv::send(envoy::KvRequestData request) {
  const auto start = std::chrono::steady_clock::now();
  auto op = link_->kv(actor_id_, std::move(request));
  auto r = co_await std::move(op);
  metrics::runtime().engine_kv_write.get().observe(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count()));
  if (!r) {
    co_return fail(r.error());
  }
  if (const auto* err = std::get_if<envoy::KvErrorResponse>(&*r)) {
    co_return fail(storage_error("kv_error", "The engine refused a KV write: " + err->message));
  }
  co_return Result<void>{};
}

Task<Result<void>> EngineActorKv::write(storage::KvBatch batch) {
  journal::Writes writes = batch.normalized();
  batch = storage::KvBatch{};
  auto requests = journal::apply_requests(writes);
  const bool journaled = requests.size() > 1;
  if (journaled) {
    // Not one request: the journal first, so that a crash at any point leaves all or nothing.
    auto puts = journal::journal_puts(writes, generation_, ++journal_seq_);
    for (auto& put : puts) {
      auto op = send(std::move(put));
      if (auto r = co_await std::move(op); !r) {
        co_return r;
      }
    }
  }
  writes = journal::Writes{};
  for (auto& request : requests) {
    auto op = send(std::move(request));
    if (auto r = co_await std::move(op); !r) {
      co_return r;
    }
  }
  if (journaled) {
    auto [start, end] = journal::journal_range_of(generation_);
    auto op = send(envoy::KvDeleteRangeRequest{std::move(start), std::move(end)});
    if (auto r = co_await std::move(op); !r) {
      co_return r;
    }
  }
  co_return Result<void>{};
}

Task<Result<void>> EngineActorKv::write_loose(storage::KvBatch batch) {
  auto requests = journal::apply_requests(batch.normalized());
  batch = storage::KvBatch{};
  for (auto& request : requests) {
    auto op = send(std::move(request));
    if (auto r = co_await std::move(op); !r) {
      co_return r;
    }
  }
  co_return Result<void>{};
}

Task<Result<std::vector<std::optional<std::string>>>> EngineActorKv::get(
    std::vector<std::string> keys) {
  std::vector<std::optional<std::string>> out(keys.size());
  for (std::size_t i = 0; i < keys.size(); i += kMaxKeysPerRequest) {
    envoy::KvGetRequest get;
    const std::size_t last = std::min(keys.size(), i + kMaxKeysPerRequest);
    get.keys.assign(keys.begin() + static_cast<std::ptrdiff_t>(i),
                    keys.begin() + static_cast<std::ptrdiff_t>(last));
    auto op = link_->kv(actor_id_, std::move(get));
    auto r = co_await std::move(op);
    if (!r) {
      co_return fail(r.error());
    }
    if (const auto* err = std::get_if<envoy::KvErrorResponse>(&*r)) {
      co_return fail(storage_error("kv_error", "The engine refused a KV read: " + err->message));
    }
    const auto* resp = std::get_if<envoy::KvGetResponse>(&*r);
    if (resp == nullptr || resp->keys.size() != resp->values.size()) {
      co_return fail(storage_error("kv_unexpected", "Unexpected answer to a KV get"));
    }
    // Only the keys that exist come back: match them by key (a key may be asked twice).
    std::map<std::string_view, const std::string*> found;
    for (std::size_t k = 0; k < resp->keys.size(); ++k) {
      found.emplace(resp->keys[k], &resp->values[k]);
    }
    for (std::size_t j = i; j < last; ++j) {
      if (auto it = found.find(keys[j]); it != found.end()) {
        out[j] = *it->second;
      }
    }
  }
  co_return out;
}

Task<Result<std::vector<storage::KvEntry>>> EngineActorKv::list(storage::KvQuery query) {
  std::vector<storage::KvEntry> out;
  std::string start = query.prefix ? *query.prefix : query.start;
  std::optional<std::string> end = query.prefix ? storage::prefix_end(*query.prefix) : query.end;
  if ((end && start >= *end) || query.limit == std::uint64_t{0}) {
    co_return out;
  }
  if (!end) {
    // Every key from start on, but the one made of 2046 0xff bytes (the engine takes no longer
    // range key); no namespace of kv.hpp starts with 0xff.
    end = std::string(max_key_size(), '\xff');
  }
  const std::uint64_t limit = query.limit.value_or(UINT64_MAX);
  // Pages of at most 16,384 (the engine's default), until the limit or the range is exhausted.
  while (out.size() < limit) {
    const std::uint64_t page = std::min<std::uint64_t>(kListPage, limit - out.size());
    envoy::KvListRequest list;
    list.query = envoy::KvListRangeQuery{start, *end, true};
    list.reverse = query.reverse;
    list.limit = page;
    auto op = link_->kv(actor_id_, std::move(list));
    auto r = co_await std::move(op);
    if (!r) {
      co_return fail(r.error());
    }
    if (const auto* err = std::get_if<envoy::KvErrorResponse>(&*r)) {
      co_return fail(storage_error("kv_error", "The engine refused a KV list: " + err->message));
    }
    const auto* resp = std::get_if<envoy::KvListResponse>(&*r);
    if (resp == nullptr || resp->keys.size() != resp->values.size()) {
      co_return fail(storage_error("kv_unexpected", "Unexpected answer to a KV list"));
    }
    for (std::size_t i = 0; i < resp->keys.size(); ++i) {
      out.push_back(storage::KvEntry{resp->keys[i], resp->values[i]});
    }
    if (resp->keys.size() < page) {
      break;
    }
    // The next page: after the last key (forward) or before it (reverse).
    if (!query.reverse) {
      start = resp->keys.back() + '\0';
    } else {
      end = resp->keys.back();
    }
    if (start >= *end) {
      break;
    }
  }
  co_return out;
}

}  // namespace rivetkit::engine
