// The per-actor ordered KV (storage/kv.hpp): KvBatch normalization against sequential
// application, and local mode's actor_kv table (byte order, prefixes, ranges, reverse, limit,
// atomic with state, isolation between actors, destroy wipe, the v2 -> v3 migration).

#include "storage/kv.hpp"

#include "storage/local_store.hpp"
#include "storage/schema.hpp"
#include "storage/sqlite.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace rivetkit::storage {
namespace {

using test::make_record;
using test::open_store;
using test::run_sync;
using test::TempDir;

std::string b(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) {
    s.push_back(static_cast<char>(v));
  }
  return s;
}

std::vector<std::string> keys_of(const std::vector<KvEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    out.push_back(e.key);
  }
  return out;
}

// --- KvBatch -------------------------------------------------------------------------------------

TEST(KvBatch, NormalizedHasTheEffectOfApplyingInOrder) {
  // Random batches over a small key space: ranges, then deletes and puts, must give the same map
  // as the ops one by one.
  std::mt19937 rng(7);
  const std::vector<std::string> keys = {"", "a", "ab", "b", "ba", "c", b({0}), b({0xff})};
  auto pick = [&] {
    return keys[rng() % keys.size()];
  };
  for (int round = 0; round < 2000; ++round) {
    std::map<std::string, std::string> initial;
    for (const auto& k : keys) {
      if (rng() % 2 != 0U) {
        initial[k] = "init";
      }
    }
    KvBatch batch;
    const int ops = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < ops; ++i) {
      switch (rng() % 3) {
        case 0:
          batch.put(pick(), "v" + std::to_string(i));
          break;
        case 1:
          batch.remove(pick());
          break;
        default:
          batch.remove_range(pick(), pick());
      }
    }
    auto sequential = initial;
    apply_kv(sequential, batch);
    auto normalized = initial;
    auto n = batch.normalized();
    for (const auto& [start, end] : n.ranges) {
      ASSERT_LT(start, end);
      normalized.erase(normalized.lower_bound(start), normalized.lower_bound(end));
    }
    for (const auto& k : n.deletes) {
      normalized.erase(k);
    }
    for (const auto& e : n.puts) {
      normalized[e.key] = e.value;
    }
    ASSERT_EQ(sequential, normalized) << "round " << round;
  }
}

TEST(KvBatch, PrefixEnd) {
  EXPECT_EQ(prefix_end("ab"), "ac");
  EXPECT_EQ(prefix_end(b({0x04})), b({0x05}));
  EXPECT_EQ(prefix_end(b({0x61, 0xff, 0xff})), "b");
  EXPECT_EQ(prefix_end(b({0xff})), std::nullopt);
  EXPECT_EQ(prefix_end(""), std::nullopt);
}

// --- local store ---------------------------------------------------------------------------------

class LocalKvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = open_store(dir_.path());
    ASSERT_TRUE(store_);
    for (const char* id : {"a1", "a2"}) {
      ASSERT_TRUE(run_sync(store_->create_actor(make_record(id, "kv", id, 1))));
    }
    a1_ = store_->actor_store("a1");
    a2_ = store_->actor_store("a2");
  }
  void TearDown() override {
    if (store_) {
      auto ok = run_sync(store_->verify_consistency_for_test());
      EXPECT_TRUE(ok) << ok.error().message;
      store_->close();
    }
  }
  static void write(ActorStore& s, KvBatch batch) {
    ActorWrite w;
    w.kv = std::move(batch);
    auto r = run_sync(s.commit(std::move(w)));
    ASSERT_TRUE(r) << r.error().message;
  }
  static std::vector<KvEntry> list(ActorStore& s, KvQuery q) {
    auto r = run_sync(s.kv_store().list(std::move(q)));
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : std::vector<KvEntry>{};
  }
  static KvQuery prefix(std::string p,
                        bool reverse = false,
                        std::optional<std::uint64_t> limit = std::nullopt) {
    KvQuery q;
    q.prefix = std::move(p);
    q.reverse = reverse;
    q.limit = limit;
    return q;
  }
  static KvQuery range(std::string start,
                       std::optional<std::string> end,
                       bool reverse = false,
                       std::optional<std::uint64_t> limit = std::nullopt) {
    KvQuery q;
    q.start = std::move(start);
    q.end = std::move(end);
    q.reverse = reverse;
    q.limit = limit;
    return q;
  }

  TempDir dir_;
  std::shared_ptr<LocalStore> store_;
  std::unique_ptr<ActorStore> a1_, a2_;
};

TEST_F(LocalKvTest, GetPutDeleteInBytesOrder) {
  KvBatch batch;
  for (const auto& k : {b({1, 0xff}), b({1, 0}), b({1}), b({1, 0, 0}), b({2}), b({0})}) {
    batch.put(k, "v" + k);
  }
  batch.put(b({1}), "");  // later wins; an empty value is a value
  write(*a1_, std::move(batch));
  EXPECT_EQ(keys_of(list(*a1_, prefix(b({1})))),
            (std::vector<std::string>{b({1}), b({1, 0}), b({1, 0, 0}), b({1, 0xff})}));
  EXPECT_EQ(keys_of(list(*a1_, prefix(b({1}), true, 2))),
            (std::vector<std::string>{b({1, 0xff}), b({1, 0, 0})}));
  EXPECT_EQ(list(*a1_, prefix(b({1}), false, 0)).size(), 0u);
  EXPECT_EQ(keys_of(list(*a1_, range(b({1, 0}), b({2})))),
            (std::vector<std::string>{b({1, 0}), b({1, 0, 0}), b({1, 0xff})}));
  EXPECT_EQ(keys_of(list(*a1_, range(b({1, 0xff}), std::nullopt))),
            (std::vector<std::string>{b({1, 0xff}), b({2})}));
  EXPECT_TRUE(list(*a1_, range("b", "a")).empty());
  auto got = run_sync(a1_->kv_store().get({b({1}), b({9}), b({0}), b({1})}));
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, (std::vector<std::optional<std::string>>{"", std::nullopt, "v" + b({0}), ""}));

  KvBatch del;
  del.remove(b({0}));
  del.remove_range(b({1, 0}), b({1, 0xff}));
  del.put(b({1, 0, 5}), "after the range");  // a write after a range stays
  write(*a1_, std::move(del));
  EXPECT_EQ(keys_of(list(*a1_, prefix(""))),
            (std::vector<std::string>{b({1}), b({1, 0, 5}), b({1, 0xff}), b({2})}));
  EXPECT_TRUE(list(*a2_, prefix("")).empty()) << "another actor's KV is separate";
}

TEST_F(LocalKvTest, KvCommitsAtomicallyWithStateAndSurvivesReopen) {
  ActorWrite w;
  w.state = "state-1";
  w.has_initialized = true;
  w.kv.put("k", "v");
  ASSERT_TRUE(run_sync(a1_->commit(std::move(w))));
  // A failing op in the same write (an unknown actor) leaves nothing: here, a commit to a
  // destroyed actor writes no KV.
  ASSERT_TRUE(run_sync(store_->destroy_actor("a2", 5)));
  ActorWrite w2;
  w2.kv.put("x", "y");
  EXPECT_FALSE(run_sync(a2_->commit(std::move(w2))));

  store_->close();
  store_ = open_store(dir_.path());
  ASSERT_TRUE(store_);
  a1_ = store_->actor_store("a1");
  auto loaded = run_sync(a1_->load());
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->state, "state-1");
  auto got = run_sync(a1_->kv_store().get({"k"}));
  ASSERT_TRUE(got);
  EXPECT_EQ((*got)[0], "v");
}

TEST_F(LocalKvTest, TheActorKvWritesABatchDurablyOnItsOwn) {
  KvBatch batch;
  batch.put("a", "1");
  batch.put("b", "2");
  batch.remove("a");
  ASSERT_TRUE(run_sync(a1_->kv_store().write(std::move(batch))));
  store_->close();
  store_ = open_store(dir_.path());
  ASSERT_TRUE(store_);
  a1_ = store_->actor_store("a1");
  auto got = run_sync(a1_->kv_store().get({"a", "b"}));
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, (std::vector<std::optional<std::string>>{std::nullopt, "2"}));
  EXPECT_EQ(a1_->kv_store().max_key_size(), a2_->kv_store().max_key_size());
}

TEST_F(LocalKvTest, DestroyWipesTheKv) {
  KvBatch batch;
  batch.put("k", "v");
  write(*a1_, std::move(batch));
  ASSERT_TRUE(run_sync(store_->destroy_actor("a1", 9)));
  EXPECT_TRUE(list(*a1_, prefix("")).empty());
  // TearDown's consistency check: no KV rows of a destroyed actor.
}

TEST(LocalKvMigration, VersionTwoFileGainsTheKvTable) {
  TempDir dir;
  {
    auto db = sqlite::Database::open(
        dir.db_path(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
    ASSERT_TRUE(db) << db.error().message;
    ASSERT_TRUE(db->exec("PRAGMA journal_mode = WAL"));
    ASSERT_TRUE(migrate_to(*db, 2));
    ASSERT_TRUE(db->exec(
        "INSERT INTO actors(actor_id, name, key, input, crash_policy, create_ts, generation) "
        "VALUES ('old', 'kv', 'k', NULL, 'sleep', 10, 1);"
        "INSERT INTO actor_state(rid, has_initialized, state) VALUES (1, 1, x'a0');"));
    EXPECT_FALSE(db->query_int64("SELECT count(*) FROM actor_kv"));  // no such table yet
  }
  auto store = open_store(dir.path());
  ASSERT_TRUE(store);
  auto s = store->actor_store("old");
  auto loaded = run_sync(s->load());
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->state, b({0xa0}));
  ActorWrite w;
  w.kv.put("k", "v");
  ASSERT_TRUE(run_sync(s->commit(std::move(w))));
  auto got = run_sync(s->kv_store().get({"k"}));
  ASSERT_TRUE(got);
  EXPECT_EQ((*got)[0], "v");
  auto ok = run_sync(store->verify_consistency_for_test());
  EXPECT_TRUE(ok) << ok.error().message;
  store->close();
}

}  // namespace
}  // namespace rivetkit::storage
