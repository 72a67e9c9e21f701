// LocalStore behaviour: the actor directory, persisted data, ordering, group commit, restart.

#include "storage/local_store.hpp"

#include "storage/schema.hpp"
#include "storage/sqlite.hpp"
#include "test_util.hpp"
#include "util/spawn.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace rivetkit::storage {
namespace {

using test::make_record;
using test::open_store;
using test::run_sync;
using test::state_write;
using test::TempDir;

ListQuery q(std::string name,
            std::optional<std::string> key = std::nullopt,
            std::size_t limit = 100,
            bool include_destroyed = false,
            std::optional<std::int64_t> before = std::nullopt) {
  ListQuery query;
  query.name = std::move(name);
  query.key = std::move(key);
  query.limit = limit;
  query.include_destroyed = include_destroyed;
  query.before_create_ts = before;
  return query;
}

class LocalStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = open_store(dir_.path());
    ASSERT_TRUE(store_);
  }

  void TearDown() override {
    if (store_) {
      auto ok = run_sync(store_->verify_consistency_for_test());
      EXPECT_TRUE(ok) << ok.error().message;
      store_->close();
    }
  }

  void reopen(LocalStoreOptions options = {}) {
    store_->close();
    store_.reset();
    store_ = open_store(dir_.path(), std::move(options));
    ASSERT_TRUE(store_);
  }

  ActorRecord create(std::string id, std::string name, std::string key, std::int64_t ts) {
    auto r = run_sync(
        store_->create_actor(make_record(std::move(id), std::move(name), std::move(key), ts)));
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : ActorRecord{};
  }

  std::vector<std::string> list_ids(ListQuery q) {
    auto r = run_sync(store_->list_actors(std::move(q)));
    EXPECT_TRUE(r) << r.error().message;
    std::vector<std::string> ids;
    if (r) {
      for (const auto& a : *r) {
        ids.push_back(a.actor_id);
      }
    }
    return ids;
  }

  TempDir dir_;
  std::shared_ptr<LocalStore> store_;
};

TEST_F(LocalStoreTest, CreateThenGetAndFind) {
  ActorRecord rec = make_record("a1", "counter", "k1", 1000);
  rec.input = std::string("\x01\x00\x02", 3);
  rec.crash_policy = "restart";
  auto created = run_sync(store_->create_actor(rec));
  ASSERT_TRUE(created) << created.error().message;
  EXPECT_EQ(created->actor_id, "a1");
  EXPECT_EQ(created->generation, 1u);

  auto got = run_sync(store_->get_actor("a1"));
  ASSERT_TRUE(got);
  ASSERT_TRUE(got->has_value());
  const ActorRecord& a = **got;
  EXPECT_EQ(a.name, "counter");
  EXPECT_EQ(a.key, "k1");
  EXPECT_EQ(a.input, rec.input);  // embedded NUL survives
  EXPECT_EQ(a.crash_policy, "restart");
  EXPECT_EQ(a.create_ts, 1000);
  EXPECT_FALSE(a.destroy_ts);
  EXPECT_EQ(a.generation, 1u);

  auto found = run_sync(store_->find_actor("counter", "k1"));
  ASSERT_TRUE(found);
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->actor_id, "a1");

  auto missing = run_sync(store_->find_actor("counter", "other"));
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
  auto other_name = run_sync(store_->find_actor("chat", "k1"));
  ASSERT_TRUE(other_name);
  EXPECT_FALSE(other_name->has_value());
  auto unknown = run_sync(store_->get_actor("nope"));
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(unknown->has_value());
}

TEST_F(LocalStoreTest, NoInputStaysNullAndEmptyInputStaysEmpty) {
  create("a1", "n", "k1", 1);
  ActorRecord rec = make_record("a2", "n", "k2", 2);
  rec.input = std::string();
  ASSERT_TRUE(run_sync(store_->create_actor(rec)));
  auto a1 = run_sync(store_->get_actor("a1"));
  auto a2 = run_sync(store_->get_actor("a2"));
  ASSERT_TRUE(a1 && a1->has_value() && a2 && a2->has_value());
  EXPECT_FALSE((*a1)->input.has_value());
  ASSERT_TRUE((*a2)->input.has_value());
  EXPECT_EQ(*(*a2)->input, "");
}

TEST_F(LocalStoreTest, DuplicateKeyFailsWithMetadata) {
  create("a1", "counter", "k1", 1000);
  auto dup = run_sync(store_->create_actor(make_record("a2", "counter", "k1", 2000)));
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().group, "actor");
  EXPECT_EQ(dup.error().code, "duplicate_key");
  EXPECT_EQ(dup.error().message, "Actor already exists with this key");
  ASSERT_TRUE(dup.error().metadata);
  const Value* existing = dup.error().metadata->find("existing_actor_id");
  const Value* key = dup.error().metadata->find("key");
  ASSERT_TRUE(existing && key);
  EXPECT_EQ(existing->as_string(), "a1");
  EXPECT_EQ(key->as_string(), "k1");
  // The failed create left nothing behind.
  auto a2 = run_sync(store_->get_actor("a2"));
  ASSERT_TRUE(a2);
  EXPECT_FALSE(a2->has_value());
  // Same key under another name is fine.
  create("a3", "chat", "k1", 3000);
}

TEST_F(LocalStoreTest, DuplicateActorIdFails) {
  create("a1", "counter", "k1", 1000);
  auto dup = run_sync(store_->create_actor(make_record("a1", "counter", "k2", 2000)));
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().group, "storage");
  EXPECT_EQ(dup.error().code, "sqlite_error");
  EXPECT_NE(dup.error().message.find("UNIQUE"), std::string::npos) << dup.error().message;
}

TEST_F(LocalStoreTest, RejectsRecordsWithoutIdOrName) {
  auto no_id = run_sync(store_->create_actor(make_record("", "counter", "k", 1)));
  ASSERT_FALSE(no_id);
  EXPECT_EQ(no_id.error().code, "invalid_argument");
  auto no_name = run_sync(store_->create_actor(make_record("x", "", "k", 1)));
  ASSERT_FALSE(no_name);
}

TEST_F(LocalStoreTest, KeylessActorsAreNeverUniqueNorFound) {
  create("a1", "worker", "", 1);
  create("a2", "worker", "", 2);
  auto g1 = run_sync(store_->get_or_create_actor(make_record("a3", "worker", "", 3)));
  ASSERT_TRUE(g1);
  EXPECT_TRUE(g1->second);
  auto found = run_sync(store_->find_actor("worker", ""));
  ASSERT_TRUE(found);
  EXPECT_FALSE(found->has_value());
  auto got = run_sync(store_->get_actor("a1"));
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->key, "");
  EXPECT_EQ(list_ids(q("worker")), (std::vector<std::string>{"a3", "a2", "a1"}));
  EXPECT_TRUE(list_ids(q("worker", std::string())).empty());
}

TEST_F(LocalStoreTest, ListNewestFirstWithPaginationAndFilters) {
  // 25 actors of "counter" at distinct timestamps, 3 of "chat".
  for (int i = 0; i < 25; ++i) {
    create(fmt::format("c{:02}", i), "counter", fmt::format("k{}", i), 1000 + i);
  }
  for (int i = 0; i < 3; ++i) {
    create(fmt::format("x{}", i), "chat", fmt::format("k{}", i), 5000 + i);
  }

  // Page through 25 with limit 10: 10 + 10 + 5, newest first, no overlap or gap.
  std::vector<std::string> all;
  std::optional<std::int64_t> cursor;
  for (int page = 0; page < 10; ++page) {
    auto r = run_sync(store_->list_actors(q("counter", std::nullopt, 10, false, cursor)));
    ASSERT_TRUE(r);
    if (r->empty()) {
      break;
    }
    EXPECT_LE(r->size(), 10u);
    for (const auto& a : *r) {
      all.push_back(a.actor_id);
    }
    cursor = r->back().create_ts;
  }
  ASSERT_EQ(all.size(), 25u);
  for (int i = 0; i < 25; ++i) {
    EXPECT_EQ(all[static_cast<std::size_t>(i)], fmt::format("c{:02}", 24 - i));
  }

  // Key filter.
  EXPECT_EQ(list_ids(q("counter", "k7")), std::vector<std::string>{"c07"});
  EXPECT_TRUE(list_ids(q("counter", "nope")).empty());
  // Limit 0 returns nothing; unknown name nothing.
  EXPECT_TRUE(list_ids(q("counter", std::nullopt, 0)).empty());
  EXPECT_TRUE(list_ids(q("unknown")).empty());

  // Destroyed ones are hidden unless asked for.
  auto d = run_sync(store_->destroy_actor("c24", 9000));
  ASSERT_TRUE(d && *d);
  auto live = list_ids(q("counter", std::nullopt, 2));
  EXPECT_EQ(live, (std::vector<std::string>{"c23", "c22"}));
  auto with_destroyed = list_ids(q("counter", std::nullopt, 2, true));
  EXPECT_EQ(with_destroyed, (std::vector<std::string>{"c24", "c23"}));
  EXPECT_TRUE(list_ids(q("counter", "k24")).empty());
  EXPECT_EQ(list_ids(q("counter", "k24", 100, true)), std::vector<std::string>{"c24"});
}

TEST_F(LocalStoreTest, ListTiesOnCreateTsAreDeterministic) {
  create("b", "n", "k1", 100);
  create("a", "n", "k2", 100);
  create("c", "n", "k3", 100);
  // Same create_ts: newest insert first, every time.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(list_ids(q("n")), (std::vector<std::string>{"c", "a", "b"}));
  }
}

TEST_F(LocalStoreTest, ListQueriesWalkAnIndexWithoutSorting) {
  auto db = sqlite::Database::open(dir_.db_path(), 0x00000002 /* SQLITE_OPEN_READWRITE */);
  ASSERT_TRUE(db) << db.error().message;
  for (bool by_key : {false, true}) {
    for (bool all : {false, true}) {
      auto stmt = db->prepare("EXPLAIN QUERY PLAN " + list_actors_sql(by_key, all));
      ASSERT_TRUE(stmt) << stmt.error().message;
      std::string plan;
      while (true) {
        auto row = stmt->step();
        ASSERT_TRUE(row);
        if (!*row) {
          break;
        }
        plan += stmt->column_text(3) + "\n";
      }
      SCOPED_TRACE(plan);
      EXPECT_NE(plan.find("USING INDEX"), std::string::npos);
      EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos);  // no sort step
      EXPECT_EQ(plan.find("SCAN"), std::string::npos);         // no full scan
    }
  }
  for (const char* sql : {"SELECT rid FROM actors WHERE actor_id = 'x'",
                          "SELECT rid FROM actors WHERE name = 'n' AND key = 'k' AND destroy_ts "
                          "IS NULL"}) {
    auto stmt = db->prepare(std::string("EXPLAIN QUERY PLAN ") + sql);
    ASSERT_TRUE(stmt);
    auto row = stmt->step();
    ASSERT_TRUE(row && *row);
    EXPECT_NE(stmt->column_text(3).find("USING"), std::string::npos) << stmt->column_text(3);
    EXPECT_EQ(stmt->column_text(3).find("SCAN"), std::string::npos) << stmt->column_text(3);
  }
}

TEST_F(LocalStoreTest, GetOrCreateReturnsExistingOrCreates) {
  auto first = run_sync(store_->get_or_create_actor(make_record("a1", "counter", "k", 1)));
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->second);
  EXPECT_EQ(first->first.actor_id, "a1");
  auto second = run_sync(store_->get_or_create_actor(make_record("a2", "counter", "k", 2)));
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->second);
  EXPECT_EQ(second->first.actor_id, "a1");
  EXPECT_EQ(second->first.create_ts, 1);
}

Task<void> race_get_or_create(std::shared_ptr<LocalStore> store,
                              int i,
                              std::mutex* mu,
                              std::vector<std::pair<std::string, bool>>* results) {
  ActorRecord rec = make_record(fmt::format("racer-{}", i), "counter", "contested", 100 + i);
  auto op = store->get_or_create_actor(std::move(rec));
  auto r = co_await std::move(op);
  std::lock_guard<std::mutex> lock(*mu);
  if (r) {
    results->emplace_back(r->first.actor_id, r->second);
  } else {
    results->emplace_back("error: " + r.error().message, false);
  }
}

TEST_F(LocalStoreTest, GetOrCreateIsAtomicUnderConcurrentCalls) {
  constexpr int kRacers = 64;
  boost::asio::io_context io(2);
  std::mutex mu;
  std::vector<std::pair<std::string, bool>> results;
  for (int i = 0; i < kRacers; ++i) {
    util::spawn(io.get_executor(), race_get_or_create(store_, i, &mu, &results), "racer");
  }
  std::thread second([&io] { io.run(); });
  io.run();
  second.join();

  ASSERT_EQ(results.size(), static_cast<std::size_t>(kRacers));
  int created = 0;
  std::set<std::string> ids;
  for (const auto& [id, was_created] : results) {
    ids.insert(id);
    created += was_created ? 1 : 0;
  }
  EXPECT_EQ(created, 1);
  EXPECT_EQ(ids.size(), 1u) << *ids.begin();
  EXPECT_EQ(list_ids(q("counter", std::nullopt, 100, true)).size(), 1u);
}

TEST_F(LocalStoreTest, DestroyKeepsTombstoneWipesDataAndFreesKey) {
  ActorRecord rec = make_record("a1", "counter", "k", 100);
  rec.input = "input-bytes";
  ASSERT_TRUE(run_sync(store_->create_actor(rec)));
  auto as = store_->actor_store("a1");
  ASSERT_TRUE(run_sync(as->commit(state_write("state-1"))));

  auto destroyed = run_sync(store_->destroy_actor("a1", 5000));
  ASSERT_TRUE(destroyed);
  EXPECT_TRUE(*destroyed);
  auto again = run_sync(store_->destroy_actor("a1", 6000));
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
  auto unknown = run_sync(store_->destroy_actor("nope", 6000));
  ASSERT_TRUE(unknown);
  EXPECT_FALSE(*unknown);

  // get by id still returns the tombstone; find does not.
  auto got = run_sync(store_->get_actor("a1"));
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->destroy_ts, 5000);
  EXPECT_EQ((*got)->name, "counter");
  EXPECT_EQ((*got)->key, "k");
  EXPECT_FALSE((*got)->input.has_value());  // persisted data wiped
  auto found = run_sync(store_->find_actor("counter", "k"));
  ASSERT_TRUE(found);
  EXPECT_FALSE(found->has_value());

  // The actor's data is gone: load and commit fail with actor.not_found.
  auto loaded = run_sync(as->load());
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().qualified_code(), "actor.not_found");
  auto committed = run_sync(as->commit(state_write("late")));
  ASSERT_FALSE(committed);
  EXPECT_EQ(committed.error().qualified_code(), "actor.not_found");
  auto gen = run_sync(store_->next_generation("a1"));
  ASSERT_FALSE(gen);
  EXPECT_EQ(gen.error().qualified_code(), "actor.not_found");

  // The key is free again; a re-create is a new row with fresh data.
  auto recreated = run_sync(store_->get_or_create_actor(make_record("a2", "counter", "k", 7000)));
  ASSERT_TRUE(recreated);
  EXPECT_TRUE(recreated->second);
  EXPECT_EQ(recreated->first.actor_id, "a2");
  auto fresh = run_sync(store_->actor_store("a2")->load());
  ASSERT_TRUE(fresh);
  EXPECT_FALSE(fresh->has_initialized);
  EXPECT_FALSE(fresh->state.has_value());
  EXPECT_EQ(list_ids(q("counter", "k", 100, true)), (std::vector<std::string>{"a2", "a1"}));
  EXPECT_EQ(list_ids(q("counter", "k")), std::vector<std::string>{"a2"});
}

TEST_F(LocalStoreTest, NextGenerationBumpsAndPersists) {
  create("a1", "counter", "k", 1);
  for (std::uint32_t expected = 2; expected <= 5; ++expected) {
    auto g = run_sync(store_->next_generation("a1"));
    ASSERT_TRUE(g) << g.error().message;
    EXPECT_EQ(*g, expected);
  }
  auto unknown = run_sync(store_->next_generation("nope"));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().qualified_code(), "actor.not_found");
  reopen();
  auto got = run_sync(store_->get_actor("a1"));
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->generation, 5u);
  auto g = run_sync(store_->next_generation("a1"));
  ASSERT_TRUE(g);
  EXPECT_EQ(*g, 6u);
}

TEST_F(LocalStoreTest, LoadAndCommitPersistedData) {
  ActorRecord rec = make_record("a1", "counter", "k", 1);
  rec.input = "the-input";
  ASSERT_TRUE(run_sync(store_->create_actor(rec)));
  auto as = store_->actor_store("a1");

  auto initial = run_sync(as->load());
  ASSERT_TRUE(initial) << initial.error().message;
  EXPECT_FALSE(initial->has_initialized);
  EXPECT_EQ(initial->input, "the-input");
  EXPECT_FALSE(initial->state.has_value());

  // has_initialized only: state stays absent.
  ActorWrite init;
  init.has_initialized = true;
  ASSERT_TRUE(run_sync(as->commit(init)));
  auto after_init = run_sync(as->load());
  ASSERT_TRUE(after_init);
  EXPECT_TRUE(after_init->has_initialized);
  EXPECT_FALSE(after_init->state.has_value());

  // state only: has_initialized untouched.
  ASSERT_TRUE(run_sync(as->commit(state_write(std::string("\xa1\x00\xff", 3), std::nullopt))));
  auto after_state = run_sync(as->load());
  ASSERT_TRUE(after_state);
  EXPECT_TRUE(after_state->has_initialized);
  EXPECT_EQ(after_state->state, std::string("\xa1\x00\xff", 3));

  // An empty state is a value, not "absent".
  ASSERT_TRUE(run_sync(as->commit(state_write(""))));
  auto empty = run_sync(as->load());
  ASSERT_TRUE(empty);
  ASSERT_TRUE(empty->state.has_value());
  EXPECT_EQ(*empty->state, "");

  // An empty write still checks the actor and changes nothing.
  ASSERT_TRUE(run_sync(as->commit(ActorWrite{})));

  // Survives restart.
  ASSERT_TRUE(run_sync(as->commit(state_write("final"))));
  as.reset();
  reopen();
  auto reloaded = run_sync(store_->actor_store("a1")->load());
  ASSERT_TRUE(reloaded);
  EXPECT_TRUE(reloaded->has_initialized);
  EXPECT_EQ(reloaded->state, "final");
  EXPECT_EQ(reloaded->input, "the-input");
}

TEST_F(LocalStoreTest, UnknownActorLoadAndCommitFail) {
  auto as = store_->actor_store("ghost");
  auto loaded = run_sync(as->load());
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().qualified_code(), "actor.not_found");
  auto committed = run_sync(as->commit(state_write("x")));
  ASSERT_FALSE(committed);
  EXPECT_EQ(committed.error().qualified_code(), "actor.not_found");
}

TEST_F(LocalStoreTest, DirectoryAndLargeStateSurviveRestart) {
  constexpr int kActors = 200;
  for (int i = 0; i < kActors; ++i) {
    create(fmt::format("a{:03}", i), i % 2 == 0 ? "even" : "odd", fmt::format("k{}", i), i);
  }
  std::string big(256 * 1024, 'x');
  big[1000] = '\0';
  ASSERT_TRUE(run_sync(store_->actor_store("a007")->commit(state_write(big))));
  ASSERT_TRUE(run_sync(store_->destroy_actor("a010", 999)));
  reopen();
  EXPECT_EQ(list_ids(q("even", std::nullopt, 1000)).size(),
            static_cast<std::size_t>(kActors / 2 - 1));
  EXPECT_EQ(list_ids(q("odd", std::nullopt, 1000)).size(), static_cast<std::size_t>(kActors / 2));
  auto loaded = run_sync(store_->actor_store("a007")->load());
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->state, big);
  auto tomb = run_sync(store_->get_actor("a010"));
  ASSERT_TRUE(tomb && tomb->has_value());
  EXPECT_EQ((*tomb)->destroy_ts, 999);
}

// --- ordering and group commit ---------------------------------------------------------------

Task<void> commit_in_order(std::shared_ptr<ActorStore> as,
                           int i,
                           std::vector<int>* completions,
                           std::atomic<int>* failures) {
  ActorWrite w = state_write(fmt::format("v{}", i));
  auto op = as->commit(std::move(w));
  auto r = co_await std::move(op);
  if (!r) {
    failures->fetch_add(1);
  }
  completions->push_back(i);  // single-threaded io_context: no lock needed
}

TEST_F(LocalStoreTest, CommitsApplyInTheOrderTheirAwaitStarted) {
  LocalStoreOptions options;
  options.max_batch_ops = 16;  // force many batches
  reopen(options);
  create("a1", "counter", "k", 1);
  std::shared_ptr<ActorStore> as = store_->actor_store("a1");

  constexpr int kCommits = 300;
  boost::asio::io_context io(1);
  std::vector<int> completions;
  std::atomic<int> failures{0};
  for (int i = 0; i < kCommits; ++i) {
    util::spawn(io.get_executor(), commit_in_order(as, i, &completions, &failures), "commit");
  }
  io.run();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_EQ(completions.size(), static_cast<std::size_t>(kCommits));
  for (int i = 0; i < kCommits; ++i) {
    EXPECT_EQ(completions[static_cast<std::size_t>(i)], i);
  }
  auto loaded = run_sync(as->load());
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->state, fmt::format("v{}", kCommits - 1));
  EXPECT_GT(store_->stats().transactions, 1u);
  EXPECT_LE(store_->stats().max_batch, 16u);
}

Task<void> commit_to(std::shared_ptr<LocalStore> store,
                     std::string actor_id,
                     int i,
                     std::atomic<int>* ok,
                     std::atomic<int>* failures) {
  auto as = store->actor_store(std::move(actor_id));
  auto load_op = as->load();  // a commit builds on what it read (kv_actor_store.hpp)
  co_await std::move(load_op);
  ActorWrite w = state_write(fmt::format("s{}", i));
  auto op = as->commit(std::move(w));
  auto r = co_await std::move(op);
  (r ? ok : failures)->fetch_add(1);
}

TEST_F(LocalStoreTest, GroupCommitBatchesQueuedWritesIntoOneTransaction) {
  constexpr int kActors = 10;
  constexpr int kCommits = 1000;
  for (int a = 0; a < kActors; ++a) {
    create(fmt::format("a{}", a), "counter", fmt::format("k{}", a), a);
  }
  const LocalStoreStats before = store_->stats();

  // Hold the writer so every commit is queued before the first batch starts.
  store_->pause_writer_for_test(true);
  boost::asio::io_context io(1);
  std::atomic<int> ok{0};
  std::atomic<int> failures{0};
  for (int i = 0; i < kCommits; ++i) {
    util::spawn(io.get_executor(),
                commit_to(store_, fmt::format("a{}", i % kActors), i, &ok, &failures), "commit");
  }
  // Each commit loads first (a read on the reader thread), then queues its write.
  for (const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       std::chrono::steady_clock::now() < until && store_->queued_writes_for_test() < kCommits;) {
    io.poll();
  }
  ASSERT_EQ(store_->queued_writes_for_test(), static_cast<std::size_t>(kCommits));
  store_->pause_writer_for_test(false);
  io.run();

  EXPECT_EQ(ok.load(), kCommits);
  EXPECT_EQ(failures.load(), 0);
  const LocalStoreStats after = store_->stats();
  EXPECT_EQ(after.write_ops - before.write_ops, static_cast<std::uint64_t>(kCommits));
  EXPECT_EQ(after.transactions - before.transactions, 1u);
  EXPECT_EQ(after.max_batch, static_cast<std::uint64_t>(kCommits));
  // Last writer wins per actor: actor a gets commits a, a+10, ..., the last is 990 + a.
  for (int a = 0; a < kActors; ++a) {
    auto loaded = run_sync(store_->actor_store(fmt::format("a{}", a))->load());
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->state, fmt::format("s{}", kCommits - kActors + a));
  }
}

TEST_F(LocalStoreTest, ConcurrentCommitsShareTransactions) {
  // Unpaused: 1000 commits from a 2-thread io_context. How many transactions that takes depends on
  // timing, so only correctness is asserted; the count is reported.
  constexpr int kActors = 10;
  constexpr int kCommits = 1000;
  for (int a = 0; a < kActors; ++a) {
    create(fmt::format("a{}", a), "counter", fmt::format("k{}", a), a);
  }
  const LocalStoreStats before = store_->stats();
  boost::asio::io_context io(2);
  std::atomic<int> ok{0};
  std::atomic<int> failures{0};
  for (int i = 0; i < kCommits; ++i) {
    util::spawn(io.get_executor(),
                commit_to(store_, fmt::format("a{}", i % kActors), i, &ok, &failures), "commit");
  }
  std::thread second([&io] { io.run(); });
  io.run();
  second.join();
  EXPECT_EQ(ok.load(), kCommits);
  EXPECT_EQ(failures.load(), 0);
  const LocalStoreStats after = store_->stats();
  const auto txns = after.transactions - before.transactions;
  EXPECT_GE(txns, 1u);
  EXPECT_LE(txns, static_cast<std::uint64_t>(kCommits));
  RecordProperty("transactions_for_1000_commits", static_cast<int>(txns));
  std::printf("[ info ] %d concurrent commits -> %llu transactions (max batch %llu)\n", kCommits,
              static_cast<unsigned long long>(txns),
              static_cast<unsigned long long>(after.max_batch));
}

TEST_F(LocalStoreTest, ReadAfterCompletedWriteSeesIt) {
  // Alternate write and read many times: each read is issued after the write completed, so it
  // must see it even though it runs on the other connection and thread.
  create("a1", "counter", "k", 1);
  auto as = store_->actor_store("a1");
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(run_sync(as->commit(state_write(fmt::format("r{}", i)))));
    auto loaded = run_sync(as->load());
    ASSERT_TRUE(loaded);
    ASSERT_EQ(loaded->state, fmt::format("r{}", i));
    auto id = fmt::format("n{}", i);
    ASSERT_TRUE(run_sync(store_->create_actor(make_record(id, "many", id, i))));
    auto got = run_sync(store_->get_actor(id));
    ASSERT_TRUE(got && got->has_value()) << i;
  }
}

TEST_F(LocalStoreTest, OperationsAfterCloseFailWithClosed) {
  create("a1", "counter", "k", 1);
  auto as = store_->actor_store("a1");
  store_->close();
  store_->close();  // idempotent
  auto w = run_sync(as->commit(state_write("x")));
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().qualified_code(), "storage.closed");
  auto r = run_sync(store_->get_actor("a1"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().qualified_code(), "storage.closed");
  store_.reset();  // nothing to verify on a closed store
}

TEST_F(LocalStoreTest, CloseDrainsQueuedWrites) {
  create("a1", "counter", "k", 1);
  auto as = store_->actor_store("a1");
  store_->pause_writer_for_test(true);
  boost::asio::io_context io(1);
  std::atomic<int> ok{0};
  std::atomic<int> failures{0};
  for (int i = 0; i < 50; ++i) {
    util::spawn(io.get_executor(), commit_to(store_, "a1", i, &ok, &failures), "commit");
  }
  // Each commit loads first (a read on the reader thread), then queues its write.
  for (const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       std::chrono::steady_clock::now() < until && store_->queued_writes_for_test() < 50;) {
    io.poll();
  }
  ASSERT_EQ(store_->queued_writes_for_test(), 50u);
  store_->close();  // still paused: close must drain anyway
  io.run();
  EXPECT_EQ(ok.load(), 50);
  EXPECT_EQ(failures.load(), 0);
  as.reset();
  store_.reset();
  store_ = open_store(dir_.path());
  auto loaded = run_sync(store_->actor_store("a1")->load());
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->state, "s49");
}

TEST_F(LocalStoreTest, DestructorWithoutCloseIsSafe) {
  create("a1", "counter", "k", 1);
  {
    auto as = store_->actor_store("a1");
    ASSERT_TRUE(run_sync(as->commit(state_write("kept"))));
  }
  store_.reset();  // no close()
  store_ = open_store(dir_.path());
  auto loaded = run_sync(store_->actor_store("a1")->load());
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->state, "kept");
}

TEST_F(LocalStoreTest, ActorStoreKeepsStoreAlive) {
  create("a1", "counter", "k", 1);
  auto as = store_->actor_store("a1");
  auto op = as->commit(state_write("alive"));  // created, not yet awaited
  store_.reset();                              // the handle still holds the store
  auto r = run_sync(std::move(op));
  EXPECT_TRUE(r);
  auto loaded = run_sync(as->load());
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->state, "alive");
}

TEST_F(LocalStoreTest, NormalSynchronousModeWorks) {
  LocalStoreOptions options;
  options.synchronous_full = false;
  reopen(options);
  create("a1", "counter", "k", 1);
  ASSERT_TRUE(run_sync(store_->actor_store("a1")->commit(state_write("n"))));
  reopen();
  auto loaded = run_sync(store_->actor_store("a1")->load());
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->state, "n");
}

TEST(LocalStoreOpen, CreatesNestedDirectory) {
  TempDir dir;
  std::string nested = dir.path() + "/a/b/c";
  auto store = open_store(nested);
  ASSERT_TRUE(store);
  store->close();
  EXPECT_TRUE(std::filesystem::exists(nested + "/rivetkit.db"));
}

TEST(LocalStoreOpen, FailsOnUncreatableDirectory) {
  TempDir dir;
  std::string file = dir.path() + "/file";
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_TRUE(f);
    std::fclose(f);
  }
  auto opened = LocalStore::open(file + "/sub");
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().group, "storage");
}

}  // namespace
}  // namespace rivetkit::storage
