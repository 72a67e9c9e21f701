// Persisted connections and schedules (schema v2): round trips of every field, atomic commits,
// load order, pending_alarms, destroy wiping them, the v1 -> v2 migration, query plans, the
// subscriptions encoding and acquire_generation.

#include "storage/local_store.hpp"
#include "storage/schema.hpp"
#include "storage/sqlite.hpp"
#include "test_util.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace rivetkit::storage {
namespace {

using test::make_record;
using test::open_store;
using test::run_sync;
using test::state_write;
using test::TempDir;

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) {
    out.push_back(static_cast<char>(v));
  }
  return out;
}

void expect_conn_eq(const PersistedConn& a, const PersistedConn& b) {
  SCOPED_TRACE("conn " + b.conn_id);
  EXPECT_EQ(a.conn_id, b.conn_id);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.encoding, b.encoding);
  EXPECT_EQ(a.params, b.params);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.subscriptions, b.subscriptions);
  EXPECT_EQ(a.request_path, b.request_path);
  EXPECT_EQ(a.request_headers, b.request_headers);
  EXPECT_EQ(a.tunnel_id, b.tunnel_id);
  EXPECT_EQ(a.server_message_index, b.server_message_index);
  EXPECT_EQ(a.client_message_index, b.client_message_index);
}

void expect_schedule_eq(const PersistedSchedule& a, const PersistedSchedule& b) {
  SCOPED_TRACE("schedule " + b.event_id);
  EXPECT_EQ(a.event_id, b.event_id);
  EXPECT_EQ(a.trigger_at, b.trigger_at);
  EXPECT_EQ(a.action, b.action);
  EXPECT_EQ(a.args, b.args);
  EXPECT_EQ(a.created_at, b.created_at);
  EXPECT_EQ(a.attempts, b.attempts);
}

PersistedConn full_conn() {
  PersistedConn c;
  c.conn_id = "0b5e5c4e-7a53-4b7e-9a4e-1f2e3d4c5b6a";
  c.kind = "websocket";
  c.encoding = "cbor";
  c.params = bytes({0xa1, 0x61, 0x78, 0x00, 0xff, 0x00});
  c.state = bytes({0x00, 0x00, 0x01, 0xfe, 0xff});
  c.subscriptions = {"chat", "", std::string("nul\0inside", 10), "\xff\xfe not utf-8",
                     std::string(300, 's')};
  c.request_path = "/websocket/room?x=1&y=%00";
  c.request_headers = bytes({0xa2, 0x64, 'h', 'o', 's', 't', 0x40, 0x61, 'a', 0x41, 0x00});
  c.tunnel_id = bytes({0x00, 0x01, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00});
  c.server_message_index = 65535;
  c.client_message_index = 65534;
  return c;
}

PersistedSchedule schedule(std::string event_id,
                           std::int64_t trigger_at,
                           std::string action = "tick",
                           std::optional<std::string> args = std::nullopt) {
  PersistedSchedule s;
  s.event_id = std::move(event_id);
  s.trigger_at = trigger_at;
  s.action = std::move(action);
  s.args = std::move(args);
  s.created_at = trigger_at - 10;
  return s;
}

PersistedConn conn(std::string conn_id, std::uint16_t index = 0) {
  PersistedConn c;
  c.conn_id = std::move(conn_id);
  c.server_message_index = index;
  return c;
}

class PersistedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = open_store(dir_.path(), options_);
    ASSERT_TRUE(store_);
    create("a1", "k1");
    create("a2", "k2");
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

  void create(const std::string& id, const std::string& key) {
    auto r = run_sync(store_->create_actor(make_record(id, "counter", key, 1)));
    ASSERT_TRUE(r) << r.error().message;
  }

  Result<void> commit(const std::string& actor_id, ActorWrite w) {
    return run_sync(store_->actor_store(actor_id)->commit(std::move(w)));
  }

  PersistedActor load(const std::string& actor_id) {
    auto r = run_sync(store_->actor_store(actor_id)->load());
    EXPECT_TRUE(r) << r.error().message;
    return r ? std::move(*r) : PersistedActor{};
  }

  std::vector<PendingAlarm> alarms() {
    auto r = run_sync(store_->pending_alarms());
    EXPECT_TRUE(r) << r.error().message;
    return r ? std::move(*r) : std::vector<PendingAlarm>{};
  }

  /// Rows of a per-actor table, counted through a separate connection.
  std::int64_t count_rows(const std::string& sql) {
    auto db = sqlite::Database::open(dir_.db_path(), SQLITE_OPEN_READONLY);
    EXPECT_TRUE(db) << db.error().message;
    if (!db) {
      return -1;
    }
    auto n = db->query_int64(sql);
    EXPECT_TRUE(n) << n.error().message;
    return n ? *n : -1;
  }

  TempDir dir_;
  LocalStoreOptions options_;
  std::shared_ptr<LocalStore> store_;
};

// --- round trips -------------------------------------------------------------------------------

TEST_F(PersistedTest, ConnRoundTripsEveryField) {
  PersistedConn full = full_conn();
  PersistedConn empty;  // every string empty, indexes 0, no subscriptions
  empty.conn_id = "";
  empty.kind = "";
  empty.encoding = "";
  PersistedConn many = conn("many-subscriptions", 1);
  for (int i = 0; i < 70000; i += 233) {  // > 255 names: a two-byte CBOR array head
    many.subscriptions.push_back(fmt::format("event-{}", i));
  }
  PersistedConn long_name = conn("long-name");
  long_name.subscriptions = {std::string(70000, 'n')};  // a four-byte CBOR length head
  ActorWrite w;
  w.conn_upserts = {full, empty, many, long_name};
  ASSERT_TRUE(commit("a1", w));

  auto check = [&](const PersistedActor& a) {
    ASSERT_EQ(a.conns.size(), 4u);
    // conn_id order: "", "0b5e...", "long-name", "many-subscriptions"
    expect_conn_eq(a.conns[0], empty);
    expect_conn_eq(a.conns[1], full);
    expect_conn_eq(a.conns[2], long_name);
    expect_conn_eq(a.conns[3], many);
    // A conns-only write does not create the state row.
    EXPECT_FALSE(a.has_initialized);
    EXPECT_FALSE(a.state.has_value());
    EXPECT_TRUE(a.schedules.empty());
  };
  check(load("a1"));
  reopen();
  check(load("a1"));
  EXPECT_TRUE(load("a2").conns.empty());
}

TEST_F(PersistedTest, ScheduleRoundTripsEveryField) {
  PersistedSchedule no_args = schedule("e-none", 1000);
  PersistedSchedule empty_args = schedule("e-empty", 1001, "", std::string());
  PersistedSchedule binary_args = schedule("e-bin", 1002, "act", bytes({0x82, 0x00, 0xff, 0x00}));
  binary_args.attempts = std::numeric_limits<std::uint32_t>::max();
  binary_args.created_at = std::numeric_limits<std::int64_t>::min();
  PersistedSchedule extreme = schedule("", std::numeric_limits<std::int64_t>::max());
  extreme.created_at = 0;
  PersistedSchedule negative = schedule("e-neg", -5);
  ActorWrite w;
  w.schedule_upserts = {extreme, binary_args, no_args, negative, empty_args};
  ASSERT_TRUE(commit("a1", w));
  auto check = [&](const PersistedActor& a) {
    ASSERT_EQ(a.schedules.size(), 5u);
    expect_schedule_eq(a.schedules[0], negative);
    expect_schedule_eq(a.schedules[1], no_args);
    expect_schedule_eq(a.schedules[2], empty_args);
    expect_schedule_eq(a.schedules[3], binary_args);
    expect_schedule_eq(a.schedules[4], extreme);
    EXPECT_FALSE(a.schedules[1].args.has_value());  // absent stays absent
    ASSERT_TRUE(a.schedules[2].args.has_value());   // empty stays a value
  };
  check(load("a1"));
  reopen();
  check(load("a1"));
}

TEST_F(PersistedTest, LoadOrdersConnsByIdAndSchedulesByTriggerThenId) {
  ActorWrite w;
  for (const char* id : {"c", "a", "B", "b", "a0", "_"}) {
    w.conn_upserts.push_back(conn(id));
  }
  w.schedule_upserts = {schedule("z", 50), schedule("b", 10), schedule("a", 50),
                        schedule("c", 10), schedule("m", 5),  schedule("a0", 50)};
  ASSERT_TRUE(commit("a1", w));
  PersistedActor a = load("a1");
  std::vector<std::string> conn_ids;
  for (const auto& c : a.conns) {
    conn_ids.push_back(c.conn_id);
  }
  EXPECT_EQ(conn_ids, (std::vector<std::string>{"B", "_", "a", "a0", "b", "c"}));  // bytewise
  std::vector<std::string> event_ids;
  for (const auto& s : a.schedules) {
    event_ids.push_back(s.event_id);
  }
  EXPECT_EQ(event_ids, (std::vector<std::string>{"m", "b", "c", "a", "a0", "z"}));
}

TEST_F(PersistedTest, UpsertReplacesWholeRowAndDeletesApplyAfterUpserts) {
  ActorWrite first;
  first.conn_upserts = {full_conn(), conn("other")};
  first.schedule_upserts = {schedule("e1", 100, "act", std::string("args")), schedule("e2", 200)};
  ASSERT_TRUE(commit("a1", first));

  PersistedConn replaced = conn(full_conn().conn_id, 7);  // every other field back to defaults
  PersistedSchedule retried = schedule("e1", 150);        // args now absent
  retried.attempts = 3;
  ActorWrite second;
  second.conn_upserts = {replaced, conn("both")};
  second.conn_deletes = {"other", "both", "never-existed"};
  second.schedule_upserts = {retried, schedule("e3", 300)};
  second.schedule_deletes = {"e2", "e3", "never-existed"};
  ASSERT_TRUE(commit("a1", second));

  PersistedActor a = load("a1");
  ASSERT_EQ(a.conns.size(), 1u);
  expect_conn_eq(a.conns[0], replaced);
  ASSERT_EQ(a.schedules.size(), 1u);
  expect_schedule_eq(a.schedules[0], retried);
}

TEST_F(PersistedTest, CommitAppliesEveryPartTogetherAndLeavesAbsentPartsAlone) {
  ActorWrite w = state_write("s1");
  w.conn_upserts = {conn("c1", 1)};
  w.schedule_upserts = {schedule("e1", 10)};
  ASSERT_TRUE(commit("a1", w));

  // State only: conns and schedules untouched.
  ASSERT_TRUE(commit("a1", state_write("s2", std::nullopt)));
  PersistedActor a = load("a1");
  EXPECT_EQ(a.state, "s2");
  EXPECT_TRUE(a.has_initialized);
  ASSERT_EQ(a.conns.size(), 1u);
  ASSERT_EQ(a.schedules.size(), 1u);

  // Conns only: state untouched.
  ActorWrite conns_only;
  conns_only.conn_upserts = {conn("c1", 2)};
  ASSERT_TRUE(commit("a1", conns_only));
  a = load("a1");
  EXPECT_EQ(a.state, "s2");
  ASSERT_EQ(a.conns.size(), 1u);
  EXPECT_EQ(a.conns[0].server_message_index, 2);
  ASSERT_EQ(a.schedules.size(), 1u);

  // Empty write: succeeds and changes nothing.
  ASSERT_TRUE(commit("a1", ActorWrite{}));
  a = load("a1");
  EXPECT_EQ(a.state, "s2");
  EXPECT_EQ(a.conns.size(), 1u);
  EXPECT_EQ(a.schedules.size(), 1u);
}

TEST_F(PersistedTest, CommitOnUnknownOrDestroyedActorFailsAndWritesNothing) {
  ActorWrite w = state_write("x");
  w.conn_upserts = {conn("c1")};
  w.schedule_upserts = {schedule("e1", 10)};
  auto ghost = commit("ghost", w);
  ASSERT_FALSE(ghost);
  EXPECT_EQ(ghost.error().qualified_code(), "actor.not_found");
  auto empty_ghost = commit("ghost", ActorWrite{});
  ASSERT_FALSE(empty_ghost);
  EXPECT_EQ(empty_ghost.error().qualified_code(), "actor.not_found");

  ASSERT_TRUE(run_sync(store_->destroy_actor("a2", 5)));
  auto destroyed = commit("a2", w);
  ASSERT_FALSE(destroyed);
  EXPECT_EQ(destroyed.error().qualified_code(), "actor.not_found");
  auto empty_destroyed = commit("a2", ActorWrite{});
  ASSERT_FALSE(empty_destroyed);
  EXPECT_EQ(empty_destroyed.error().qualified_code(), "actor.not_found");
  EXPECT_EQ(count_rows("SELECT count(*) FROM actor_kv"), 0);
  EXPECT_TRUE(alarms().empty());
}

TEST_F(PersistedTest, DestroyWipesConnsAndSchedulesOfThatActorOnly) {
  for (const char* id : {"a1", "a2"}) {
    ActorWrite w = state_write(id);
    w.conn_upserts = {conn("c1"), conn("c2")};
    w.schedule_upserts = {schedule("e1", 10), schedule("e2", 20)};
    ASSERT_TRUE(commit(id, w));
  }
  ASSERT_TRUE(run_sync(store_->destroy_actor("a1", 99)));
  // a2 keeps its head, 2 connections and 2 schedules; a1 has no key left.
  EXPECT_EQ(count_rows("SELECT count(*) FROM actor_kv"), 5);
  EXPECT_EQ(count_rows("SELECT count(*) FROM actor_kv k JOIN actors a ON a.rid = k.rid "
                       "WHERE a.actor_id = 'a1'"),
            0);
  EXPECT_EQ(count_rows("SELECT count(*) FROM actors WHERE next_alarm IS NOT NULL"), 1);
  auto loaded = run_sync(store_->actor_store("a1")->load());
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().qualified_code(), "actor.not_found");
  reopen();
  PersistedActor a2 = load("a2");
  EXPECT_EQ(a2.conns.size(), 2u);
  EXPECT_EQ(a2.schedules.size(), 2u);
  auto pending = alarms();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].actor_id, "a2");
}

// --- pending_alarms ----------------------------------------------------------------------------

TEST_F(PersistedTest, PendingAlarmsGiveEachLiveActorsEarliestScheduleInOrder) {
  EXPECT_TRUE(alarms().empty());
  create("a3", "k3");
  create("a4", "k4");
  create("a5", "k5");
  auto with = [](std::vector<PersistedSchedule> s) {
    ActorWrite w;
    w.schedule_upserts = std::move(s);
    return w;
  };
  ASSERT_TRUE(commit("a1", with({schedule("x", 500), schedule("y", 300), schedule("z", 900)})));
  ASSERT_TRUE(commit("a2", with({schedule("x", 100)})));
  ASSERT_TRUE(commit("a3", with({schedule("x", 300), schedule("w", 1000)})));  // ties with a1
  ASSERT_TRUE(commit("a4", with({schedule("x", 50)})));
  ASSERT_TRUE(commit("a5", state_write("no schedules")));

  auto ids_and_times = [&] {
    std::vector<std::pair<std::string, std::int64_t>> out;
    for (const auto& a : alarms()) {
      out.emplace_back(a.actor_id, a.trigger_at);
    }
    return out;
  };
  using Pairs = std::vector<std::pair<std::string, std::int64_t>>;
  // Ties (a1, a3 at 300) in creation order.
  EXPECT_EQ(ids_and_times(), (Pairs{{"a4", 50}, {"a2", 100}, {"a1", 300}, {"a3", 300}}));

  // Destroyed actors drop out; deleting the earliest schedule moves an actor's alarm.
  ASSERT_TRUE(run_sync(store_->destroy_actor("a4", 7)));
  ActorWrite claim;
  claim.schedule_deletes = {"y"};
  ASSERT_TRUE(commit("a1", claim));
  EXPECT_EQ(ids_and_times(), (Pairs{{"a2", 100}, {"a3", 300}, {"a1", 500}}));
  // An actor whose last schedule is gone has no alarm.
  ActorWrite clear;
  clear.schedule_deletes = {"x"};
  ASSERT_TRUE(commit("a2", clear));
  reopen();
  EXPECT_EQ(ids_and_times(), (Pairs{{"a3", 300}, {"a1", 500}}));
}

TEST_F(PersistedTest, PendingAlarmsScaleToManyActors) {
  constexpr int kActors = 300;
  // Submitted together so they share group commits; FIFO order puts each create before its commit.
  boost::asio::io_context io(1);
  int failures = 0;
  auto check = [&failures](std::exception_ptr e, auto r) {
    if (e || !r) {
      ++failures;
    }
  };
  for (int i = 0; i < kActors; ++i) {
    std::string id = fmt::format("m{:03}", i);
    auto create_op = store_->create_actor(make_record(id, "many", id, i));
    boost::asio::co_spawn(io, std::move(create_op), check);
  }
  io.run();
  std::vector<std::unique_ptr<ActorStore>> stores;  // alive until their commits complete
  for (int i = 0; i < kActors; ++i) {
    if (i % 3 == 0) {
      continue;  // most actors have none
    }
    ActorWrite w;
    // Descending trigger times with creation order, so the result is a real sort.
    w.schedule_upserts = {schedule("late", 100000 - i), schedule("early", 50000 - i)};
    stores.push_back(store_->actor_store(fmt::format("m{:03}", i)));
    auto commit_op = stores.back()->commit(std::move(w));
    boost::asio::co_spawn(io, std::move(commit_op), check);
  }
  io.restart();
  io.run();
  ASSERT_EQ(failures, 0);
  auto pending = alarms();
  ASSERT_EQ(pending.size(), static_cast<std::size_t>(kActors - (kActors + 2) / 3));
  for (std::size_t i = 1; i < pending.size(); ++i) {
    EXPECT_LE(pending[i - 1].trigger_at, pending[i].trigger_at);
  }
  EXPECT_EQ(pending.front().actor_id, fmt::format("m{:03}", kActors - 1));
  EXPECT_EQ(pending.front().trigger_at, 50000 - (kActors - 1));
}

// --- query plans -------------------------------------------------------------------------------

std::string plan_of(sqlite::Database& db, const std::string& sql) {
  auto stmt = db.prepare("EXPLAIN QUERY PLAN " + sql);
  EXPECT_TRUE(stmt) << stmt.error().message;
  std::string plan;
  if (!stmt) {
    return plan;
  }
  while (true) {
    auto row = stmt->step();
    EXPECT_TRUE(row);
    if (!row || !*row) {
      break;
    }
    plan += stmt->column_text(3) + "\n";
  }
  return plan;
}

TEST_F(PersistedTest, PendingAlarmsWalkAnIndex) {
  auto db = sqlite::Database::open(dir_.db_path(), SQLITE_OPEN_READWRITE);
  ASSERT_TRUE(db) << db.error().message;
  // pending_alarms: a walk of the partial index of actors with an alarm, in alarm order (no
  // sort), never the whole directory.
  std::string plan = plan_of(*db, kPendingAlarmsSql);
  SCOPED_TRACE(plan);
  EXPECT_NE(plan.find("actors_by_alarm"), std::string::npos);
  EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos);
  EXPECT_EQ(plan.find("SCAN actors\n"), std::string::npos);
}

// --- migration ---------------------------------------------------------------------------------

TEST(PersistedMigration, VersionOneFileUpgradesInPlace) {
  TempDir dir;
  {
    // A file exactly as a v1 build left it: schema v1 with an actor, its state and a tombstone.
    auto db = sqlite::Database::open(
        dir.db_path(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
    ASSERT_TRUE(db) << db.error().message;
    ASSERT_TRUE(db->exec("PRAGMA journal_mode = WAL"));
    ASSERT_TRUE(migrate_to(*db, 1));
    ASSERT_EQ(*db->query_int64("PRAGMA user_version"), 1);
    ASSERT_TRUE(db->exec(
        "INSERT INTO actors(actor_id, name, key, input, crash_policy, create_ts, generation) "
        "VALUES ('old', 'counter', 'k', x'0100ff', 'sleep', 10, 4);"
        "INSERT INTO actor_state(rid, has_initialized, state) VALUES (1, 1, x'a100');"
        "INSERT INTO actors(actor_id, name, key, crash_policy, create_ts, destroy_ts, generation) "
        "VALUES ('gone', 'counter', 'k', 'sleep', 5, 8, 2);"));
    EXPECT_FALSE(db->query_int64("SELECT count(*) FROM actor_conns"));  // no such table yet
  }
  auto store = open_store(dir.path());
  ASSERT_TRUE(store);
  auto consistent = run_sync(store->verify_consistency_for_test());  // checks user_version too
  EXPECT_TRUE(consistent) << consistent.error().message;
  auto loaded = run_sync(store->actor_store("old")->load());
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_TRUE(loaded->has_initialized);
  EXPECT_EQ(loaded->state, bytes({0xa1, 0x00}));
  EXPECT_EQ(loaded->input, bytes({0x01, 0x00, 0xff}));
  EXPECT_TRUE(loaded->conns.empty());
  EXPECT_TRUE(loaded->schedules.empty());
  auto gen = run_sync(store->next_generation("old"));
  ASSERT_TRUE(gen);
  EXPECT_EQ(*gen, 5u);
  auto gone = run_sync(store->get_actor("gone"));
  ASSERT_TRUE(gone && gone->has_value());
  EXPECT_EQ((*gone)->destroy_ts, 8);

  // The new tables work on the upgraded file.
  ActorWrite w;
  w.conn_upserts = {full_conn()};
  w.schedule_upserts = {schedule("e1", 42)};
  ASSERT_TRUE(run_sync(store->actor_store("old")->commit(w)));
  store->close();
  store = open_store(dir.path());
  ASSERT_TRUE(store);
  auto reloaded = run_sync(store->actor_store("old")->load());
  ASSERT_TRUE(reloaded);
  ASSERT_EQ(reloaded->conns.size(), 1u);
  expect_conn_eq(reloaded->conns[0], full_conn());
  auto pending = run_sync(store->pending_alarms());
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].actor_id, "old");
  EXPECT_EQ((*pending)[0].trigger_at, 42);
  store->close();

  auto db = sqlite::Database::open(dir.db_path(), SQLITE_OPEN_READONLY);
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->query_int64("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(*db->query_int64("SELECT count(*) FROM meta WHERE key = 'created_by_schema'"), 1);
}

TEST(PersistedMigration, TheDataDirectoryOfTheLastVersionThreeReleaseMovesIntoKeys) {
  // tests/data/local-v3/README.md: written by the release before this schema, then SIGKILLed.
  TempDir dir;
  std::filesystem::copy_file(std::string(RIVETKIT_TEST_DATA_DIR) + "/local-v3/rivetkit.db",
                             dir.db_path());
  auto store = open_store(dir.path());
  ASSERT_TRUE(store);
  auto consistent = run_sync(store->verify_consistency_for_test());
  EXPECT_TRUE(consistent) << consistent.error().message;

  auto counter = run_sync(store->actor_store("zh7kjtlchf0njntvihfu9scvozll00")->load());
  ASSERT_TRUE(counter) << counter.error().message;
  EXPECT_TRUE(counter->has_initialized);
  EXPECT_EQ(counter->state, bytes({0xa1, 0x65, 'c', 'o', 'u', 'n', 't', 0x18, 42}));  // {count: 42}

  auto with_input = run_sync(store->actor_store("8l3gfhbtceavmcov9fntf8az3esl00")->load());
  ASSERT_TRUE(with_input) << with_input.error().message;
  ASSERT_TRUE(with_input->input.has_value());
  EXPECT_NE(with_input->input->find("from v3"), std::string::npos);

  auto sleepy = run_sync(store->actor_store("nqdh4r93ndvxm94v8xy46h3y3vsl00")->load());
  ASSERT_TRUE(sleepy) << sleepy.error().message;
  ASSERT_EQ(sleepy->schedules.size(), 2u);
  EXPECT_EQ(sleepy->schedules[0].trigger_at, 4102444800000);
  EXPECT_EQ(sleepy->schedules[1].trigger_at, 4102444800001);
  EXPECT_EQ(sleepy->schedules[0].action, "increment");
  ASSERT_EQ(sleepy->conns.size(), 1u);
  EXPECT_EQ(sleepy->conns[0].kind, "connect");
  EXPECT_EQ(sleepy->conns[0].encoding, "json");
  auto pending = run_sync(store->pending_alarms());
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].actor_id, "nqdh4r93ndvxm94v8xy46h3y3vsl00");
  EXPECT_EQ((*pending)[0].trigger_at, 4102444800000);

  // The runs of a schedule move the alarm: the earlier one done, the later one is next.
  auto s = store->actor_store("nqdh4r93ndvxm94v8xy46h3y3vsl00");
  ASSERT_TRUE(run_sync(s->load()));
  ActorWrite ran;
  ran.schedule_deletes = {sleepy->schedules[0].event_id};
  ASSERT_TRUE(run_sync(s->commit(std::move(ran))));
  pending = run_sync(store->pending_alarms());
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].trigger_at, 4102444800001);
  store->close();

  auto db = sqlite::Database::open(dir.db_path(), SQLITE_OPEN_READONLY);
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->query_int64("PRAGMA user_version"), kSchemaVersion);
  EXPECT_FALSE(db->query_int64("SELECT count(*) FROM actor_state"));  // dropped
  EXPECT_FALSE(db->query_int64("SELECT count(*) FROM actor_conns"));
  EXPECT_FALSE(db->query_int64("SELECT count(*) FROM actor_schedules"));
}

TEST(PersistedMigration, AStateTooLargeForTheHeadMovesIntoChunks) {
  TempDir dir;
  std::string big(300 * 1024, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) {
    big[i] = static_cast<char>((i * 7) & 0xff);
  }
  {
    auto db = sqlite::Database::open(
        dir.db_path(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
    ASSERT_TRUE(db) << db.error().message;
    ASSERT_TRUE(db->exec("PRAGMA journal_mode = WAL"));
    ASSERT_TRUE(migrate_to(*db, 3));
    ASSERT_TRUE(
        db->exec("INSERT INTO actors(actor_id, name, key, crash_policy, create_ts, generation) "
                 "VALUES ('big', 'counter', 'k', 'sleep', 10, 4);"));
    auto insert =
        db->prepare("INSERT INTO actor_state(rid, has_initialized, state) VALUES (1, 1, ?1)");
    ASSERT_TRUE(insert);
    insert->bind_blob(1, big);
    ASSERT_TRUE(insert->run());
  }
  auto store = open_store(dir.path());
  ASSERT_TRUE(store);
  auto loaded = run_sync(store->actor_store("big")->load());
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->state, big);
  auto consistent = run_sync(store->verify_consistency_for_test());
  EXPECT_TRUE(consistent) << consistent.error().message;
}

TEST(PersistedMigration, AnUnreadableRowFailsTheMigrationAndLeavesTheFileAsItWas) {
  TempDir dir;
  {
    auto db = sqlite::Database::open(
        dir.db_path(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
    ASSERT_TRUE(db) << db.error().message;
    ASSERT_TRUE(db->exec("PRAGMA journal_mode = WAL"));
    ASSERT_TRUE(migrate_to(*db, 3));
    ASSERT_TRUE(db->exec(
        "INSERT INTO actors(actor_id, name, key, crash_policy, create_ts, generation) "
        "VALUES ('bad', 'counter', 'k', 'sleep', 10, 4);"
        "INSERT INTO actor_conns VALUES (1, 'c1', 'connect', 'json', x'a0', x'f6', x'ff', '/', "
        "x'a0', x'', x'', 0, 0);"));
  }
  auto store = LocalStore::open(dir.path());
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, "corrupt_data");
  EXPECT_NE(store.error().message.find("schema migration to version 4"), std::string::npos);
  auto db = sqlite::Database::open(dir.db_path(), SQLITE_OPEN_READONLY);
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->query_int64("PRAGMA user_version"), 3);
  EXPECT_EQ(*db->query_int64("SELECT count(*) FROM actor_conns"), 1);
  EXPECT_EQ(*db->query_int64("SELECT count(*) FROM actor_kv"), 0);
}

// --- subscriptions encoding --------------------------------------------------------------------

TEST(SubscriptionsEncoding, RoundTripsAndMatchesCbor) {
  EXPECT_EQ(encode_subscriptions({}), bytes({0x80}));
  EXPECT_EQ(encode_subscriptions({"a", ""}), bytes({0x82, 0x61, 'a', 0x60}));
  EXPECT_EQ(encode_subscriptions({std::string(24, 'x')}).substr(0, 3), bytes({0x81, 0x78, 24}));
  EXPECT_EQ(encode_subscriptions({std::string(256, 'x')}).substr(0, 4),
            bytes({0x81, 0x79, 0x01, 0x00}));
  for (const std::vector<std::string>& names :
       {std::vector<std::string>{}, std::vector<std::string>{""},
        std::vector<std::string>{std::string("\0\xff", 2), "b"},
        std::vector<std::string>(30, "same"), std::vector<std::string>{std::string(65536, 'z')}}) {
    auto decoded = decode_subscriptions(encode_subscriptions(names));
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(*decoded, names);
  }
}

TEST(SubscriptionsEncoding, RejectsAnythingElse) {
  for (const std::string& bad : {
           std::string(),                                                  // empty
           bytes({0x81}),                                                  // missing element
           bytes({0x81, 0x62, 'a'}),                                       // truncated string
           bytes({0x80, 0x00}),                                            // trailing byte
           bytes({0xa0}),                                                  // a map
           bytes({0x81, 0x41, 'a'}),                                       // a byte string element
           bytes({0x9f, 0xff}),                                            // indefinite array
           bytes({0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}),  // absurd count
           bytes({0x81, 0x7b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}),  // absurd length
           bytes({0x81, 0x7c}),  // reserved additional info
       }) {
    auto decoded = decode_subscriptions(bad);
    ASSERT_FALSE(decoded) << "accepted " << bad.size() << " bytes";
    EXPECT_EQ(decoded.error().qualified_code(), "storage.corrupt_data");
  }
}

// --- acquire_generation ------------------------------------------------------------------------

TEST_F(PersistedTest, AcquireGenerationIsUniqueAndIncreasingAcrossRestarts) {
  LocalStoreOptions options;
  options.generation_block = 4;
  reopen(options);
  std::set<std::uint32_t> seen;
  std::uint32_t last = 1;  // created with generation 1
  auto take = [&](bool use_next) {
    auto g = run_sync(use_next ? store_->next_generation("a1") : store_->acquire_generation("a1"));
    ASSERT_TRUE(g) << g.error().message;
    EXPECT_GT(*g, last);
    EXPECT_TRUE(seen.insert(*g).second) << *g << " handed out twice";
    last = *g;
  };
  const auto before = store_->stats();
  for (int i = 0; i < 10; ++i) {
    take(false);
  }
  // 10 acquisitions with blocks of 4: 3 reservations (2, 6, 10), the rest from memory.
  EXPECT_EQ(store_->stats().generations_reserved - before.generations_reserved, 3u);
  EXPECT_EQ(store_->stats().generations_from_memory - before.generations_from_memory, 7u);
  EXPECT_EQ(last, 11u);
  // The durable ceiling covers what was handed out.
  auto rec = run_sync(store_->get_actor("a1"));
  ASSERT_TRUE(rec && rec->has_value());
  EXPECT_GE((*rec)->generation, last);

  // next_generation in between: the next acquisitions stay above it.
  take(false);
  take(true);
  take(false);
  take(false);

  // A restart (like a crash: the unused rest of the block is forgotten) never goes back.
  for (int round = 0; round < 3; ++round) {
    reopen(options);
    for (int i = 0; i < 5; ++i) {
      take(i % 4 == 3);
    }
  }
  EXPECT_EQ(seen.size(), 14u + 15u);
}

TEST_F(PersistedTest, AcquireGenerationFailsForUnknownAndDestroyedActors) {
  auto unknown = run_sync(store_->acquire_generation("ghost"));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().qualified_code(), "actor.not_found");
  auto g = run_sync(store_->acquire_generation("a1"));  // a block is now remembered
  ASSERT_TRUE(g);
  ASSERT_TRUE(run_sync(store_->destroy_actor("a1", 3)));
  auto destroyed = run_sync(store_->acquire_generation("a1"));
  ASSERT_FALSE(destroyed);
  EXPECT_EQ(destroyed.error().qualified_code(), "actor.not_found");
}

TEST_F(PersistedTest, AcquireGenerationWithATinyCacheStaysCorrect) {
  LocalStoreOptions options;
  options.generation_cache_entries = 1;  // every other call evicts the other actor's block
  reopen(options);
  std::uint32_t last1 = 0;
  std::uint32_t last2 = 0;
  for (int i = 0; i < 20; ++i) {
    auto g1 = run_sync(store_->acquire_generation("a1"));
    auto g2 = run_sync(store_->acquire_generation("a2"));
    ASSERT_TRUE(g1 && g2);
    EXPECT_GT(*g1, last1);
    EXPECT_GT(*g2, last2);
    last1 = *g1;
    last2 = *g2;
  }
  options.generation_cache_entries = 0;  // no cache: every call reserves
  options.generation_block = 1;
  reopen(options);
  const auto before = store_->stats();
  for (int i = 0; i < 3; ++i) {
    auto g = run_sync(store_->acquire_generation("a1"));
    ASSERT_TRUE(g);
    EXPECT_GT(*g, last1);
    last1 = *g;
  }
  EXPECT_EQ(store_->stats().generations_reserved - before.generations_reserved, 3u);
}

TEST_F(PersistedTest, GenerationsNeverWrapAround) {
  store_->close();
  store_.reset();
  {
    auto db = sqlite::Database::open(dir_.db_path(), SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->exec("UPDATE actors SET generation = 4294967290 WHERE actor_id = 'a1'"));
  }
  store_ = open_store(dir_.path());
  ASSERT_TRUE(store_);
  // A block of 16 does not fit: refused, and the ceiling is not moved.
  auto g = run_sync(store_->acquire_generation("a1"));
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().qualified_code(), "storage.generation_exhausted");
  std::uint32_t last = 4294967290u;
  for (int i = 0; i < 5; ++i) {
    auto n = run_sync(store_->next_generation("a1"));
    ASSERT_TRUE(n) << n.error().message;
    EXPECT_EQ(*n, ++last);
  }
  auto exhausted = run_sync(store_->next_generation("a1"));
  ASSERT_FALSE(exhausted);
  auto rec = run_sync(store_->get_actor("a1"));
  ASSERT_TRUE(rec && rec->has_value());
  EXPECT_EQ((*rec)->generation, std::numeric_limits<std::uint32_t>::max());
}

}  // namespace
}  // namespace rivetkit::storage
