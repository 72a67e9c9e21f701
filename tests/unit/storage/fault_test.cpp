// DuckDB-style fault injection: fail a commit, an fsync, or tear a write; then restart (reopen the
// database) and check what survived. The rule checked everywhere: a write whose co_await returned
// success is present after restart; the database is consistent; a failed write may be absent.

#include "storage/fault_injection.hpp"
#include "storage/local_store.hpp"
#include "test_util.hpp"
#include "util/spawn.hpp"

#include <boost/asio/io_context.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
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

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    faults_ = std::make_shared<FaultInjector>();
    open();
    ASSERT_TRUE(run_sync(store_->create_actor(make_record("a1", "counter", "k1", 1))));
    ASSERT_TRUE(run_sync(store_->create_actor(make_record("a2", "counter", "k2", 2))));
  }

  void TearDown() override {
    if (store_) {
      check_consistent();
      store_->close();
    }
  }

  void open(bool synchronous_full = true) {
    LocalStoreOptions options;
    options.faults = faults_;
    options.synchronous_full = synchronous_full;
    store_ = open_store(dir_.path(), options);
    ASSERT_TRUE(store_);
  }

  /// Closes and reopens the store: the "restart" of restart-and-check.
  void restart(bool synchronous_full = true) {
    store_->close();
    store_.reset();
    open(synchronous_full);
  }

  void check_consistent() {
    auto ok = run_sync(store_->verify_consistency_for_test());
    EXPECT_TRUE(ok) << ok.error().message;
  }

  std::optional<std::string> state_of(const std::string& actor_id) {
    auto loaded = run_sync(store_->actor_store(actor_id)->load());
    EXPECT_TRUE(loaded) << loaded.error().message;
    return loaded ? loaded->state : std::nullopt;
  }

  Result<void> commit(const std::string& actor_id, std::string state) {
    return run_sync(store_->actor_store(actor_id)->commit(state_write(std::move(state))));
  }

  TempDir dir_;
  std::shared_ptr<FaultInjector> faults_;
  std::shared_ptr<LocalStore> store_;
};

TEST_F(FaultTest, FailedCommitIsReportedAndRolledBack) {
  ASSERT_TRUE(commit("a1", "acked"));
  const auto before = store_->stats();
  faults_->fail_next_commits();
  auto failed = commit("a1", "lost");
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().qualified_code(), "storage.sqlite_error");
  EXPECT_NE(failed.error().message.find("injected"), std::string::npos) << failed.error().message;
  EXPECT_EQ(store_->stats().failed_transactions - before.failed_transactions, 1u);
  EXPECT_EQ(state_of("a1"), "acked");

  // The store keeps working after the failure.
  ASSERT_TRUE(commit("a2", "after"));
  restart();
  EXPECT_EQ(state_of("a1"), "acked");
  EXPECT_EQ(state_of("a2"), "after");
}

Task<void> commit_state(std::shared_ptr<LocalStore> store,
                        std::string actor_id,
                        std::string state,
                        std::atomic<int>* ok,
                        std::atomic<int>* failed) {
  auto as = store->actor_store(std::move(actor_id));
  auto load_op = as->load();  // a commit builds on what it read (kv_actor_store.hpp)
  co_await std::move(load_op);
  ActorWrite w = state_write(std::move(state));
  auto op = as->commit(std::move(w));
  auto r = co_await std::move(op);
  (r ? ok : failed)->fetch_add(1);
}

TEST_F(FaultTest, FailedGroupCommitFailsEveryWriteInTheBatch) {
  store_->pause_writer_for_test(true);
  boost::asio::io_context io(1);
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
  for (int i = 0; i < 20; ++i) {
    util::spawn(io.get_executor(),
                commit_state(store_, i % 2 == 0 ? "a1" : "a2", fmt::format("b{}", i), &ok, &failed),
                "commit");
  }
  // Each commit loads first (a read on the reader thread), then queues its write.
  for (const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       std::chrono::steady_clock::now() < until && store_->queued_writes_for_test() < 20;) {
    io.poll();
  }
  ASSERT_EQ(store_->queued_writes_for_test(), 20u);
  faults_->fail_next_commits();
  store_->pause_writer_for_test(false);
  io.run();
  EXPECT_EQ(ok.load(), 0);
  EXPECT_EQ(failed.load(), 20);
  restart();
  EXPECT_FALSE(state_of("a1").has_value());
  EXPECT_FALSE(state_of("a2").has_value());
}

TEST_F(FaultTest, FailingOneWriteRollsBackOnlyThatWrite) {
  ASSERT_TRUE(commit("a1", "a1-state"));
  // In one batch: destroy a1 (made to fail after its statements ran), commit a2, create a3.
  faults_->set_op_filter([](std::string_view op) { return op == "destroy_actor"; });
  store_->pause_writer_for_test(true);
  boost::asio::io_context io(1);
  std::optional<Result<bool>> destroyed;
  std::optional<Result<void>> committed;
  std::optional<Result<ActorRecord>> created;
  auto destroy_op = store_->destroy_actor("a1", 99);
  auto a2 = store_->actor_store("a2");  // alive until its commit completes
  ASSERT_TRUE(run_sync(a2->load()));
  auto commit_op = a2->commit(state_write("a2-state"));
  auto create_op = store_->create_actor(make_record("a3", "counter", "k3", 3));
  boost::asio::co_spawn(io, std::move(destroy_op),
                        [&](std::exception_ptr, Result<bool> r) { destroyed = std::move(r); });
  boost::asio::co_spawn(io, std::move(commit_op),
                        [&](std::exception_ptr, Result<void> r) { committed = std::move(r); });
  boost::asio::co_spawn(io, std::move(create_op),
                        [&](std::exception_ptr, Result<ActorRecord> r) { created = std::move(r); });
  // Each commit loads first (a read on the reader thread), then queues its write.
  for (const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       std::chrono::steady_clock::now() < until && store_->queued_writes_for_test() < 3;) {
    io.poll();
  }
  ASSERT_EQ(store_->queued_writes_for_test(), 3u);
  const auto before = store_->stats();
  store_->pause_writer_for_test(false);
  io.run();
  faults_->set_op_filter(nullptr);

  ASSERT_TRUE(destroyed && committed && created);
  EXPECT_FALSE(*destroyed);
  EXPECT_TRUE(*committed);
  EXPECT_TRUE(*created);
  EXPECT_EQ(store_->stats().transactions - before.transactions, 1u);  // one shared transaction

  restart();
  // The failed destroy left no trace: a1 is live and keeps its data.
  auto a1 = run_sync(store_->get_actor("a1"));
  ASSERT_TRUE(a1 && a1->has_value());
  EXPECT_FALSE((*a1)->destroy_ts.has_value());
  EXPECT_EQ(state_of("a1"), "a1-state");
  EXPECT_EQ(state_of("a2"), "a2-state");
  auto a3 = run_sync(store_->get_actor("a3"));
  ASSERT_TRUE(a3 && a3->has_value());
}

TEST_F(FaultTest, ExceptionInTheWriterFailsTheWholeUncommittedBatch) {
  // The filter throws on the writer thread after create_actor already ran successfully in the
  // same batch: neither write may be reported as done, and neither may persist.
  faults_->set_op_filter([](std::string_view op) -> bool {
    if (op == "destroy_actor") {
      throw std::runtime_error("filter exploded");
    }
    return false;
  });
  store_->pause_writer_for_test(true);
  boost::asio::io_context io(1);
  std::optional<Result<ActorRecord>> created;
  std::optional<Result<bool>> destroyed;
  auto create_op = store_->create_actor(make_record("a3", "counter", "k3", 3));
  auto destroy_op = store_->destroy_actor("a1", 99);
  boost::asio::co_spawn(io, std::move(create_op),
                        [&](std::exception_ptr, Result<ActorRecord> r) { created = std::move(r); });
  boost::asio::co_spawn(io, std::move(destroy_op),
                        [&](std::exception_ptr, Result<bool> r) { destroyed = std::move(r); });
  for (const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       std::chrono::steady_clock::now() < until && store_->queued_writes_for_test() < 2;) {
    io.poll();
  }
  ASSERT_EQ(store_->queued_writes_for_test(), 2u);
  store_->pause_writer_for_test(false);
  io.run();
  faults_->set_op_filter(nullptr);
  ASSERT_TRUE(created && destroyed);
  ASSERT_FALSE(*created);
  EXPECT_EQ(created->error().qualified_code(), "storage.internal_error");
  EXPECT_NE(created->error().message.find("filter exploded"), std::string::npos);
  EXPECT_FALSE(*destroyed);
  // The writer survives and the batch left nothing behind.
  ASSERT_TRUE(commit("a2", "after"));
  restart();
  auto a3 = run_sync(store_->get_actor("a3"));
  ASSERT_TRUE(a3);
  EXPECT_FALSE(a3->has_value());
  auto a1 = run_sync(store_->get_actor("a1"));
  ASSERT_TRUE(a1 && a1->has_value());
  EXPECT_FALSE((*a1)->destroy_ts.has_value());
  EXPECT_EQ(state_of("a2"), "after");
}

TEST_F(FaultTest, FullSynchronousFsyncsEveryCommitAndNormalDoesNot) {
  std::uint64_t before = faults_->syncs();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(commit("a1", fmt::format("f{}", i)));
  }
  EXPECT_GE(faults_->syncs() - before, 5u);  // one fsync (at least) per acknowledged commit

  restart(/*synchronous_full=*/false);
  // The first commit after opening starts a new WAL, whose header is synced once in any mode.
  ASSERT_TRUE(commit("a1", "warm-up"));
  before = faults_->syncs();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(commit("a1", fmt::format("n{}", i)));
  }
  EXPECT_EQ(faults_->syncs() - before, 0u);  // NORMAL: the WAL is not synced on commit
}

TEST_F(FaultTest, FailedFsyncFailsTheCommitAndTheStoreRecovers) {
  ASSERT_TRUE(commit("a1", "v1"));
  faults_->fail_next_syncs();
  auto failed = commit("a1", "v2");
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().qualified_code(), "storage.sqlite_error");
  // Not visible to readers: the commit did not complete.
  EXPECT_EQ(state_of("a1"), "v1");
  // The next commit goes through and is durable.
  ASSERT_TRUE(commit("a1", "v3"));
  restart();
  EXPECT_EQ(state_of("a1"), "v3");
}

TEST_F(FaultTest, FailedFsyncThenRestartKeepsAckedDataOutcomeOfFailedOneUnknown) {
  ASSERT_TRUE(commit("a1", "v1"));
  ASSERT_TRUE(commit("a2", "w1"));
  faults_->fail_next_syncs();
  ASSERT_FALSE(commit("a1", "v2"));
  restart();
  // The failed commit's frames may have reached the WAL intact, so recovery may keep it: a
  // failed commit has an unknown outcome, as in any database. Acknowledged data is always there.
  auto a1 = state_of("a1");
  EXPECT_TRUE(a1 == "v1" || a1 == "v2") << a1.value_or("<none>");
  EXPECT_EQ(state_of("a2"), "w1");
}

TEST_F(FaultTest, TornWalWriteLosesOnlyTheFailedCommit) {
  ASSERT_TRUE(commit("a1", "v1"));
  ASSERT_TRUE(commit("a2", "w1"));
  faults_->fail_next_writes(1, /*tear=*/true);
  auto failed = commit("a1", std::string(20000, 't'));  // spans several WAL frames
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().qualified_code(), "storage.sqlite_error");
  restart();
  EXPECT_EQ(state_of("a1"), "v1");
  EXPECT_EQ(state_of("a2"), "w1");
  // And the store is writable again after the restart.
  ASSERT_TRUE(commit("a1", "v3"));
  restart();
  EXPECT_EQ(state_of("a1"), "v3");
}

TEST_F(FaultTest, FailedWriteWithoutRestartKeepsWorking) {
  ASSERT_TRUE(commit("a1", "v1"));
  faults_->fail_next_writes(1);
  ASSERT_FALSE(commit("a1", "v2"));
  EXPECT_EQ(state_of("a1"), "v1");
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(commit("a2", fmt::format("w{}", i)));
  }
  ASSERT_TRUE(commit("a1", "v3"));
  restart();
  EXPECT_EQ(state_of("a1"), "v3");
  EXPECT_EQ(state_of("a2"), "w19");
}

TEST_F(FaultTest, FailuresDuringCheckpointKeepAckedData) {
  // Enough WAL to trigger automatic checkpoints (1000 pages) while faults are armed repeatedly.
  std::string big(8000, 'c');
  int acked = -1;
  for (int i = 0; i < 400; ++i) {
    if (i % 37 == 5) {
      faults_->fail_next_syncs();
    }
    if (i % 53 == 7) {
      faults_->fail_next_writes(1, i % 2 == 0);
    }
    big[0] = static_cast<char>('a' + i % 26);
    auto r = commit("a1", fmt::format("{}:{}", i, big));
    if (r) {
      acked = i;
    }
  }
  ASSERT_GE(acked, 0);
  restart();
  auto st = state_of("a1");
  ASSERT_TRUE(st.has_value());
  // The newest acknowledged commit, or a later failed one (unknown outcome), never older.
  int seen = std::stoi(st->substr(0, st->find(':')));
  EXPECT_GE(seen, acked);
}

// --- connections, schedules, generations --------------------------------------------------------

PersistedConn conn_with(std::string conn_id, std::uint16_t index, std::string state) {
  PersistedConn c;
  c.conn_id = std::move(conn_id);
  c.server_message_index = index;
  c.state = std::move(state);
  c.subscriptions = {"ev"};
  return c;
}

PersistedSchedule schedule_at(std::string event_id, std::int64_t trigger_at) {
  PersistedSchedule s;
  s.event_id = std::move(event_id);
  s.trigger_at = trigger_at;
  s.action = "tick";
  return s;
}

/// Everything of an actor's persisted data as one comparable string.
std::string describe(const PersistedActor& a) {
  std::string out =
      fmt::format("init={} state={} |", a.has_initialized, a.state.value_or("<none>"));
  for (const auto& c : a.conns) {
    out += fmt::format(" conn {} {} {} [{}]", c.conn_id, c.server_message_index, c.state,
                       fmt::join(c.subscriptions, ","));
  }
  out += " |";
  for (const auto& s : a.schedules) {
    out += fmt::format(" sched {} {} {}", s.event_id, s.trigger_at, s.attempts);
  }
  return out;
}

/// A write touching every part: state, has_initialized, a conn upsert and delete, a schedule
/// upsert, update and delete.
ActorWrite everything_write(const std::string& tag) {
  ActorWrite w;
  w.state = "state-" + tag;
  w.has_initialized = true;
  w.conn_upserts = {conn_with("c-new-" + tag, 9, tag), conn_with("c-keep", 65535, tag)};
  w.conn_deletes = {"c-gone"};
  PersistedSchedule retried = schedule_at("e-keep", 5);
  retried.attempts = 4;
  w.schedule_upserts = {schedule_at("e-new-" + tag, 1), retried};
  w.schedule_deletes = {"e-gone"};
  return w;
}

class FaultPersistedTest : public FaultTest {
 protected:
  void SetUp() override {
    FaultTest::SetUp();
    ActorWrite base;
    base.state = "base";
    base.conn_upserts = {conn_with("c-keep", 1, "k"), conn_with("c-gone", 2, "g")};
    base.schedule_upserts = {schedule_at("e-keep", 50), schedule_at("e-gone", 20)};
    ASSERT_TRUE(run_sync(store_->actor_store("a1")->commit(base)));
    baseline_ = describe(load("a1"));
  }

  PersistedActor load(const std::string& actor_id) {
    auto loaded = run_sync(store_->actor_store(actor_id)->load());
    EXPECT_TRUE(loaded) << loaded.error().message;
    return loaded ? std::move(*loaded) : PersistedActor{};
  }

  std::int64_t first_alarm() {
    auto alarms = run_sync(store_->pending_alarms());
    EXPECT_TRUE(alarms && alarms->size() == 1u);
    return alarms && !alarms->empty() ? (*alarms)[0].trigger_at : -1;
  }

  std::string baseline_;
};

TEST_F(FaultPersistedTest, FailingCommitWithStateConnsAndSchedulesLeavesNothingBehind) {
  EXPECT_EQ(first_alarm(), 20);
  // The op's statements all run, then the op is failed inside its savepoint.
  faults_->set_op_filter([](std::string_view op) { return op == "commit"; });
  auto failed = run_sync(store_->actor_store("a1")->commit(everything_write("x")));
  faults_->set_op_filter(nullptr);
  ASSERT_FALSE(failed);
  EXPECT_EQ(describe(load("a1")), baseline_);
  EXPECT_EQ(first_alarm(), 20);
  restart();
  EXPECT_EQ(describe(load("a1")), baseline_);

  // The same write without the fault lands whole.
  ASSERT_TRUE(run_sync(store_->actor_store("a1")->commit(everything_write("y"))));
  restart();
  PersistedActor a = load("a1");
  EXPECT_EQ(a.state, "state-y");
  EXPECT_TRUE(a.has_initialized);
  ASSERT_EQ(a.conns.size(), 2u);
  EXPECT_EQ(a.conns[0].conn_id, "c-keep");
  EXPECT_EQ(a.conns[0].server_message_index, 65535);
  EXPECT_EQ(a.conns[1].conn_id, "c-new-y");
  ASSERT_EQ(a.schedules.size(), 2u);
  EXPECT_EQ(a.schedules[0].event_id, "e-new-y");
  EXPECT_EQ(a.schedules[1].event_id, "e-keep");
  EXPECT_EQ(a.schedules[1].attempts, 4u);
  EXPECT_EQ(first_alarm(), 1);
}

TEST_F(FaultPersistedTest, FailedGroupCommitLosesTheWholeWrite) {
  faults_->fail_next_commits();
  ASSERT_FALSE(run_sync(store_->actor_store("a1")->commit(everything_write("x"))));
  EXPECT_EQ(describe(load("a1")), baseline_);
  restart();
  EXPECT_EQ(describe(load("a1")), baseline_);
}

TEST_F(FaultPersistedTest, TornWalWriteLosesTheWholeWrite) {
  ActorWrite big = everything_write("t");
  big.state = std::string(20000, 's');  // several WAL frames, torn in the middle
  faults_->fail_next_writes(1, /*tear=*/true);
  ASSERT_FALSE(run_sync(store_->actor_store("a1")->commit(big)));
  restart();
  EXPECT_EQ(describe(load("a1")), baseline_);
}

TEST_F(FaultPersistedTest, FailingDestroyKeepsConnsAndSchedules) {
  faults_->set_op_filter([](std::string_view op) { return op == "destroy_actor"; });
  auto destroyed = run_sync(store_->destroy_actor("a1", 5));
  faults_->set_op_filter(nullptr);
  ASSERT_FALSE(destroyed);
  restart();
  EXPECT_EQ(describe(load("a1")), baseline_);
  EXPECT_EQ(first_alarm(), 20);
}

TEST_F(FaultPersistedTest, EmptyWriteCostsNoFsync) {
  const std::uint64_t before = faults_->syncs();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(run_sync(store_->actor_store("a1")->commit(ActorWrite{})));
  }
  EXPECT_EQ(faults_->syncs(), before);
  auto ghost = run_sync(store_->actor_store("ghost")->commit(ActorWrite{}));
  ASSERT_FALSE(ghost);
  EXPECT_EQ(ghost.error().qualified_code(), "actor.not_found");
  EXPECT_EQ(describe(load("a1")), baseline_);
}

TEST_F(FaultPersistedTest, FailedGenerationReservationHandsOutNothingTwice) {
  const std::uint32_t block = LocalStoreOptions{}.generation_block;
  auto first = run_sync(store_->acquire_generation("a1"));
  ASSERT_TRUE(first);
  std::uint32_t last = *first;
  for (std::uint32_t i = 1; i < block; ++i) {  // the rest of the block, from memory
    auto g = run_sync(store_->acquire_generation("a1"));
    ASSERT_TRUE(g);
    EXPECT_EQ(*g, last + 1);
    last = *g;
  }
  EXPECT_EQ(store_->stats().generations_reserved, 1u);
  // The next call must reserve; its commit fails, so it hands out nothing.
  faults_->fail_next_commits();
  auto failed = run_sync(store_->acquire_generation("a1"));
  ASSERT_FALSE(failed);
  auto after = run_sync(store_->acquire_generation("a1"));
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_GT(*after, last);
  restart();
  auto restarted = run_sync(store_->acquire_generation("a1"));
  ASSERT_TRUE(restarted);
  EXPECT_GT(*restarted, *after);
}

// --- wake path: what a wake costs (load + generation) ------------------------------------------

struct WakeCost {
  double median_us = 0;
  double mean_us = 0;
  double max_us = 0;
  std::uint64_t syncs = 0;
};

Task<void> background_commits(std::shared_ptr<LocalStore> store,
                              std::atomic<bool>* stop,
                              std::atomic<int>* done) {
  auto as = store->actor_store("a2");
  for (int i = 0; i < 100000 && !stop->load(); ++i) {
    ActorWrite w = state_write(fmt::format("bg{}", i));
    auto op = as->commit(std::move(w));
    auto r = co_await std::move(op);
    if (!r) {
      break;
    }
    done->fetch_add(1);
  }
}

TEST_F(FaultTest, WakePathCost) {
  // Reports (no timing assertions) what load + generation costs per wake, with next_generation
  // (a durable write per wake) and acquire_generation (from memory after the first wake), on an
  // idle store and while another actor commits in a loop. Asserts only the fsync counts.
  constexpr int kWakes = 40;
  auto measure = [&](bool acquire) {
    WakeCost cost;
    const std::uint64_t syncs_before = faults_->syncs();
    auto as = store_->actor_store("a1");
    double total = 0;
    std::vector<double> samples;
    for (int i = 0; i < kWakes; ++i) {
      auto start = std::chrono::steady_clock::now();
      auto g = run_sync(acquire ? store_->acquire_generation("a1") : store_->next_generation("a1"));
      auto loaded = run_sync(as->load());
      auto us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                    .count();
      EXPECT_TRUE(g && loaded);
      total += us;
      samples.push_back(us);
      cost.max_us = std::max(cost.max_us, us);
    }
    cost.mean_us = total / kWakes;
    std::sort(samples.begin(), samples.end());
    cost.median_us = samples[samples.size() / 2];
    cost.syncs = faults_->syncs() - syncs_before;
    return cost;
  };
  auto report = [](const char* what, const WakeCost& c) {
    std::printf(
        "[ info ] wake (%s): median %.0f us, mean %.0f us, max %.0f us, %llu fsyncs (whole store) "
        "for %d wakes\n",
        what, c.median_us, c.mean_us, c.max_us, static_cast<unsigned long long>(c.syncs), kWakes);
  };
  (void)run_sync(store_->acquire_generation("a1"));  // the first block: a write, as after restart

  WakeCost next_idle = measure(false);
  WakeCost acquire_idle = measure(true);
  report("next_generation, idle", next_idle);
  report("acquire_generation, idle", acquire_idle);
  EXPECT_GE(next_idle.syncs, static_cast<std::uint64_t>(kWakes));  // one commit per wake
  // Blocks of 16: at most ceil(40 / 16) + 1 reservations.
  EXPECT_LE(acquire_idle.syncs, 4u * 2u);  // a commit syncs the WAL (and at most a header)

  std::atomic<bool> stop{false};
  std::atomic<int> done{0};
  boost::asio::io_context bg_io(1);
  util::spawn(bg_io.get_executor(), background_commits(store_, &stop, &done), "background");
  std::thread bg([&bg_io] { bg_io.run(); });
  for (int spins = 0; spins < 100000 && done.load() < 3; ++spins) {
    std::this_thread::yield();
  }
  WakeCost next_busy = measure(false);
  WakeCost acquire_busy = measure(true);
  stop = true;
  bg.join();
  report("next_generation, busy", next_busy);
  report("acquire_generation, busy", acquire_busy);
  RecordProperty("wake_next_generation_idle_us", static_cast<int>(next_idle.mean_us));
  RecordProperty("wake_acquire_generation_idle_us", static_cast<int>(acquire_idle.mean_us));
  RecordProperty("wake_next_generation_busy_us", static_cast<int>(next_busy.mean_us));
  RecordProperty("wake_acquire_generation_busy_us", static_cast<int>(acquire_busy.mean_us));
}

}  // namespace
}  // namespace rivetkit::storage
