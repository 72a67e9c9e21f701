#pragma once
// An in-memory model of the engine's per-actor KV (envoy-protocol.md §4.8) with its limits, for
// the storage tests that need what the real engine cannot give: a crash injected at an exact
// request. Each request applies atomically, like the engine's; after `crash_after` more mutating
// requests every request fails without effect (the process is gone), and with
// `lose_crashing_answer` the crashing request itself is applied but its answer lost.

#include "engine/engine_kv.hpp"
#include "storage/kv.hpp"
#include "unit/run_task.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace rivetkit::engine::testing {

using rivetkit::testing::run;

class MemoryEngineKv final : public EngineKv {
 public:
  std::map<std::string, std::map<std::string, std::string>> actors;
  int mutating_requests = 0;          // puts, deletes, delete ranges, drops answered so far
  std::vector<std::string> put_keys;  // every key put so far, in order
  std::optional<int> crash_after;
  bool lose_crashing_answer = false;
  bool crashed = false;

  Task<Result<envoy::KvResponseData>> kv(std::string actor_id,
                                         envoy::KvRequestData request) override {
    co_return handle(actors[actor_id], request);
  }

 private:
  static constexpr std::size_t kMaxKeys = 128;
  static constexpr std::size_t kMaxValue = 128 * 1024;
  static constexpr std::size_t kMaxPut = 976 * 1024;

  static Error gone() {
    return Error{"engine", "kv_unavailable", "injected crash", std::nullopt, false};
  }

  Result<envoy::KvResponseData> handle(std::map<std::string, std::string>& data,
                                       const envoy::KvRequestData& request) {
    if (crashed) {
      return fail(gone());
    }
    const bool mutating = !std::holds_alternative<envoy::KvGetRequest>(request)
                          && !std::holds_alternative<envoy::KvListRequest>(request);
    bool lose_answer = false;
    if (mutating && crash_after) {
      if (*crash_after == 0) {
        crashed = true;
        if (!lose_crashing_answer) {
          return fail(gone());
        }
        lose_answer = true;
      } else {
        --*crash_after;
      }
    }
    auto answer = apply(data, request);
    if (const auto* put = std::get_if<envoy::KvPutRequest>(&request);
        put != nullptr && std::holds_alternative<envoy::KvPutResponse>(answer)) {
      put_keys.insert(put_keys.end(), put->keys.begin(), put->keys.end());
    }
    if (mutating) {
      ++mutating_requests;
    }
    if (lose_answer) {
      return fail(gone());
    }
    return answer;
  }

  static envoy::KvResponseData apply(std::map<std::string, std::string>& data,
                                     const envoy::KvRequestData& request) {
    if (const auto* get = std::get_if<envoy::KvGetRequest>(&request)) {
      if (get->keys.size() > kMaxKeys) {
        return envoy::KvErrorResponse{"too many keys"};
      }
      envoy::KvGetResponse out;
      for (const auto& k : get->keys) {
        if (auto it = data.find(k); it != data.end()) {
          out.keys.push_back(k);
          out.values.push_back(it->second);
        }
      }
      return out;
    }
    if (const auto* list = std::get_if<envoy::KvListRequest>(&request)) {
      storage::KvQuery q;
      if (const auto* p = std::get_if<envoy::KvListPrefixQuery>(&list->query)) {
        q.prefix = p->key;
      } else if (const auto* r = std::get_if<envoy::KvListRangeQuery>(&list->query)) {
        q.start = r->start;
        q.end = r->exclusive ? r->end : r->end + '\0';
      }
      q.reverse = list->reverse.value_or(false);
      q.limit = list->limit;
      envoy::KvListResponse out;
      for (auto& e : storage::list_kv(data, q)) {
        out.keys.push_back(std::move(e.key));
        out.values.push_back(std::move(e.value));
      }
      return out;
    }
    if (const auto* put = std::get_if<envoy::KvPutRequest>(&request)) {
      std::size_t bytes = 0;
      for (std::size_t i = 0; i < put->keys.size(); ++i) {
        if (put->values[i].size() > kMaxValue) {
          return envoy::KvErrorResponse{"value too large"};
        }
        bytes += put->keys[i].size() + 2 + put->values[i].size();
      }
      if (put->keys.size() > kMaxKeys || put->keys.size() != put->values.size()
          || bytes > kMaxPut) {
        return envoy::KvErrorResponse{"put over the limits"};
      }
      for (std::size_t i = 0; i < put->keys.size(); ++i) {
        data[put->keys[i]] = put->values[i];
      }
      return envoy::KvPutResponse{};
    }
    if (const auto* del = std::get_if<envoy::KvDeleteRequest>(&request)) {
      if (del->keys.size() > kMaxKeys) {
        return envoy::KvErrorResponse{"too many keys"};
      }
      for (const auto& k : del->keys) {
        data.erase(k);
      }
      return envoy::KvDeleteResponse{};
    }
    if (const auto* range = std::get_if<envoy::KvDeleteRangeRequest>(&request)) {
      if (range->start < range->end) {
        data.erase(data.lower_bound(range->start), data.lower_bound(range->end));
      }
      return envoy::KvDeleteResponse{};
    }
    data.clear();
    return envoy::KvDropResponse{};
  }
};

}  // namespace rivetkit::engine::testing
