// Engine mode's ActorKv (engine/engine_actor_kv.hpp) over a link that records every request it
// sends to a model of the engine's KV (memory_engine_kv.hpp, which refuses requests over the
// engine's limits): a batch that fits one request is that one request; a larger one is written
// as a journal (chunk 0 last and alone), applied within the limits (128 keys, 976 KiB of puts)
// in the order ranges, deletes, puts, and its journal deleted; gets go 128 keys at a time and
// answer in the order asked; lists page past the engine's 16,384 per request, forward and
// reversed, and stop at their limit.

#include "engine/engine_actor_kv.hpp"

#include "engine/kv_commit_journal.hpp"
#include "memory_engine_kv.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace rivetkit::engine {
namespace {

const std::string kActor = "actor-1";

using testing::run;

/// The link: every request, in order, then the engine model's answer.
class RecordingKv final : public EngineKv {
 public:
  testing::MemoryEngineKv engine;
  std::vector<envoy::KvRequestData> sent;

  Task<Result<envoy::KvResponseData>> kv(std::string actor_id,
                                         envoy::KvRequestData request) override {
    sent.push_back(request);
    auto op = engine.kv(std::move(actor_id), std::move(request));
    co_return co_await std::move(op);
  }
};

std::string key(int i) {
  std::string k = "\x04k";
  for (int shift = 24; shift >= 0; shift -= 8) {
    k += static_cast<char>((i >> shift) & 0xff);
  }
  return k;
}

template <class R>
const R* as(const envoy::KvRequestData& r) {
  return std::get_if<R>(&r);
}

TEST(EngineActorKvTest, ABatchThatFitsOneRequestIsThatRequest) {
  auto link = std::make_shared<RecordingKv>();
  EngineActorKv kv(link, kActor, 1);
  storage::KvBatch batch;
  for (int i = 0; i < 128; ++i) {
    batch.put(key(i), "v");
  }
  ASSERT_TRUE(run(kv.write(std::move(batch))));
  ASSERT_EQ(link->sent.size(), 1u);
  ASSERT_NE(as<envoy::KvPutRequest>(link->sent[0]), nullptr);
  EXPECT_EQ(as<envoy::KvPutRequest>(link->sent[0])->keys.size(), 128u);
}

TEST(EngineActorKvTest, ALargerBatchIsJournaledThenAppliedWithinTheLimitsInOrder) {
  auto link = std::make_shared<RecordingKv>();
  EngineActorKv kv(link, kActor, 7);
  {
    storage::KvBatch seed;
    for (int i = 0; i < 10; ++i) {
      seed.put(key(1000 + i), "old");
    }
    ASSERT_TRUE(run(kv.write(std::move(seed))));
  }
  link->sent.clear();
  // 300 puts (three of them 100 KiB: past 976 KiB together with the rest), a delete, a range.
  storage::KvBatch batch;
  for (int i = 0; i < 300; ++i) {
    batch.put(key(i), std::string(i % 100 == 0 ? 100 * 1024 : 3000, 'x'));
  }
  batch.remove(key(1000));
  batch.remove_range(key(1005), key(1008));
  ASSERT_TRUE(run(kv.write(std::move(batch))));

  // The journal: puts under 0x02, the last one chunk 0 alone (the commit point).
  std::size_t i = 0;
  std::size_t journal_puts = 0;
  for (; i < link->sent.size(); ++i) {
    const auto* put = as<envoy::KvPutRequest>(link->sent[i]);
    if (put == nullptr || put->keys.empty() || put->keys[0][0] != journal::kJournalPrefix) {
      break;
    }
    ++journal_puts;
  }
  ASSERT_GE(journal_puts, 2u);
  EXPECT_EQ(as<envoy::KvPutRequest>(link->sent[i - 1])->keys.size(), 1u);
  // Then the writes: the range, the delete, the puts within the limits, in key order.
  ASSERT_NE(as<envoy::KvDeleteRangeRequest>(link->sent[i]), nullptr);
  ASSERT_NE(as<envoy::KvDeleteRequest>(link->sent[i + 1]), nullptr);
  std::vector<std::string> put_keys;
  std::size_t put_requests = 0;
  for (i += 2; i < link->sent.size(); ++i) {
    const auto* put = as<envoy::KvPutRequest>(link->sent[i]);
    if (put == nullptr) {
      break;
    }
    ++put_requests;
    std::size_t bytes = 0;
    for (std::size_t k = 0; k < put->keys.size(); ++k) {
      bytes += put->keys[k].size() + 2 + put->values[k].size();
    }
    EXPECT_LE(put->keys.size(), journal::kMaxKeysPerRequest);
    EXPECT_LE(bytes, journal::kMaxPutBytes);
    put_keys.insert(put_keys.end(), put->keys.begin(), put->keys.end());
  }
  EXPECT_GE(put_requests, 3u);
  ASSERT_EQ(put_keys.size(), 300u);
  EXPECT_TRUE(std::is_sorted(put_keys.begin(), put_keys.end()));
  // Last, the journal goes.
  ASSERT_EQ(i + 1, link->sent.size());
  ASSERT_NE(as<envoy::KvDeleteRangeRequest>(link->sent[i]), nullptr);

  const auto& data = link->engine.actors[kActor];
  EXPECT_EQ(data.count(key(1000)), 0u);
  EXPECT_EQ(data.count(key(1006)), 0u);
  EXPECT_EQ(data.count(key(1009)), 1u);
  EXPECT_EQ(data.at(key(100)).size(), 100u * 1024);
  for (const auto& [k, v] : data) {
    EXPECT_NE(k[0], journal::kJournalPrefix) << "a journal key left";
  }
}

TEST(EngineActorKvTest, GetsGo128KeysAtATimeAndAnswerInTheOrderAsked) {
  auto link = std::make_shared<RecordingKv>();
  EngineActorKv kv(link, kActor, 1);
  storage::KvBatch batch;
  for (int i = 0; i < 300; i += 2) {
    batch.put(key(i), std::to_string(i));
  }
  ASSERT_TRUE(run(kv.write(std::move(batch))));
  link->sent.clear();
  std::vector<std::string> asked;
  for (int i = 299; i >= 0; --i) {
    asked.push_back(key(i));
  }
  asked.push_back(key(4));  // twice
  auto got = run(kv.get(asked));
  ASSERT_TRUE(got);
  EXPECT_EQ(link->sent.size(), 3u);
  ASSERT_EQ(got->size(), asked.size());
  for (std::size_t j = 0; j < 300; ++j) {
    const int i = 299 - static_cast<int>(j);
    if (i % 2 == 0) {
      EXPECT_EQ((*got)[j], std::to_string(i));
    } else {
      EXPECT_FALSE((*got)[j]);
    }
  }
  EXPECT_EQ(got->back(), "4");
}

TEST(EngineActorKvTest, ListsPagePastTheEnginesPageSizeBothWaysAndStopAtTheirLimit) {
  auto link = std::make_shared<RecordingKv>();
  EngineActorKv kv(link, kActor, 1);
  constexpr int kKeys = 16384 + 500;
  for (int i = 0; i < kKeys; i += 128) {
    storage::KvBatch batch;
    for (int j = i; j < std::min(kKeys, i + 128); ++j) {
      batch.put(key(j), "v");
    }
    ASSERT_TRUE(run(kv.write(std::move(batch))));
  }
  link->sent.clear();
  storage::KvQuery all;
  all.prefix = std::string(1, '\x04');
  auto forward = run(kv.list(all));
  ASSERT_TRUE(forward);
  ASSERT_EQ(forward->size(), static_cast<std::size_t>(kKeys));
  EXPECT_EQ(link->sent.size(), 2u) << "two pages";
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_EQ((*forward)[static_cast<std::size_t>(i)].key, key(i));
  }
  all.reverse = true;
  auto backward = run(kv.list(all));
  ASSERT_TRUE(backward);
  ASSERT_EQ(backward->size(), static_cast<std::size_t>(kKeys));
  EXPECT_EQ(backward->front().key, key(kKeys - 1));
  EXPECT_EQ(backward->back().key, key(0));
  all.reverse = false;
  all.limit = 16384 + 10;
  auto limited = run(kv.list(all));
  ASSERT_TRUE(limited);
  EXPECT_EQ(limited->size(), 16394u);
  EXPECT_EQ(limited->back().key, key(16393));
}

}  // namespace
}  // namespace rivetkit::engine
