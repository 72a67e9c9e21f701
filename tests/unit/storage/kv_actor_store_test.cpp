// storage::KvActorStore over an ActorKv in memory, unfenced (one process owns the data, local
// mode's case): one epoch, no hand-over writes, and every record kind and state size round-trips.
// The fenced hand-over, crashes and the engine's limits: tests/unit/engine/kv_actor_store_test.cpp.

#include "storage/kv_actor_store.hpp"

#include "unit/run_task.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::storage {
namespace {

/// An ordered map as the actor's KV; counts the writes it applied.
class MapActorKv final : public ActorKv {
 public:
  explicit MapActorKv(std::shared_ptr<std::map<std::string, std::string>> data)
      : data_(std::move(data)) {}
  static inline int writes = 0;

  Task<Result<std::vector<std::optional<std::string>>>> get(
      std::vector<std::string> keys) override {
    std::vector<std::optional<std::string>> out;
    for (const auto& k : keys) {
      auto it = data_->find(k);
      out.push_back(it == data_->end() ? std::nullopt : std::optional<std::string>(it->second));
    }
    co_return out;
  }
  Task<Result<std::vector<KvEntry>>> list(KvQuery query) override {
    co_return list_kv(*data_, query);
  }
  Task<Result<void>> write(KvBatch batch) override {
    ++writes;
    apply_kv(*data_, batch);
    co_return Result<void>{};
  }
  std::size_t max_key_size() const override { return 2047; }

 private:
  std::shared_ptr<std::map<std::string, std::string>> data_;
};

using rivetkit::testing::run;

std::unique_ptr<KvActorStore> unfenced(std::shared_ptr<std::map<std::string, std::string>> data,
                                       std::uint32_t generation,
                                       std::optional<std::string> input = std::nullopt) {
  KvActorStoreOptions options;
  options.generation = generation;
  options.input = std::move(input);
  options.fenced = false;
  return std::make_unique<KvActorStore>("a1", std::make_unique<MapActorKv>(std::move(data)),
                                        std::move(options));
}

TEST(KvActorStoreUnfencedTest, EveryRecordKindRoundTripsInOneEpochWithoutHandOverWrites) {
  auto data = std::make_shared<std::map<std::string, std::string>>();
  {
    auto store = unfenced(data, 1, std::string("input"));
    auto fresh = run(store->load());
    ASSERT_TRUE(fresh);
    EXPECT_EQ(fresh->input, "input");
    EXPECT_FALSE(fresh->state.has_value());
    ActorWrite w;
    w.has_initialized = true;
    w.state = std::string(300 * 1024, 's');  // chunked
    PersistedConn c;
    c.conn_id = "c1";
    c.subscriptions = {"x"};
    w.conn_upserts = {c};
    PersistedSchedule s;
    s.event_id = "e1";
    s.trigger_at = 5;
    s.action = "tick";
    w.schedule_upserts = {s};
    w.kv.put("\x04user", "v");
    ASSERT_TRUE(run(store->commit(std::move(w))));
    ActorWrite gone;
    gone.state = "small";
    gone.conn_deletes = {"c1"};
    ASSERT_TRUE(run(store->commit(std::move(gone))));
    run(store->close());
  }
  for (const auto& [k, v] : *data) {
    if (k[0] == runtime_records::kPrefix) {
      EXPECT_EQ(k.substr(2, 4), std::string(4, '\0')) << "epoch 0 only";
    }
  }
  const int before = MapActorKv::writes;
  auto store = unfenced(data, 7);
  auto loaded = run(store->load());
  ASSERT_TRUE(loaded);
  EXPECT_EQ(MapActorKv::writes, before) << "a load writes nothing";
  EXPECT_TRUE(loaded->has_initialized);
  EXPECT_EQ(loaded->input, "input");  // kept at creation
  EXPECT_EQ(loaded->state, "small");
  EXPECT_TRUE(loaded->conns.empty());
  ASSERT_EQ(loaded->schedules.size(), 1u);
  EXPECT_EQ(loaded->schedules[0].action, "tick");
  EXPECT_EQ(data->count("\x04user"), 1u);
  std::size_t chunks = 0;
  for (const auto& [k, v] : *data) {
    chunks +=
        k.starts_with(std::string{runtime_records::kPrefix, runtime_records::kChunks}) ? 1u : 0u;
  }
  EXPECT_EQ(chunks, 0u) << "the large state's chunks went with it";
}

}  // namespace
}  // namespace rivetkit::storage
