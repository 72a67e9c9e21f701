// The database part alone (core/actor/actor_database.hpp), over an in-memory store and a host the
// test drives: migrations on open; SQL's committed pages reach storage only through the actor's
// write (take_changes), and a reopened database sees exactly what was taken; an open transaction
// gives nothing to take and holds other callers' statements until it ends; a database larger
// than the preload is read page by page from the store; a shrunk database deletes its tail; an
// actor without a database gets database.not_enabled.

#include "core/actor/actor_database.hpp"

#include "memory_kv.hpp"
#include <rivetkit/error.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core {
namespace {

namespace asio = boost::asio;

class MemoryStore final : public testing::MapKvStore {
 public:
  Task<Result<storage::PersistedActor>> load() override { co_return storage::PersistedActor{}; }
  Task<Result<void>> commit(storage::ActorWrite write) override {
    storage::apply_kv(kv, write.kv);
    co_return Result<void>{};
  }
};

class ActorDatabaseTest : public ::testing::Test, public ActorDatabase::Host {
 protected:
  bool db_open() const override { return true; }
  void database_changed() override { ++changed; }
  std::shared_ptr<void> hold() override { return owner; }

  std::unique_ptr<ActorDatabase> make(const detail::DatabaseDefinition* def) {
    return std::make_unique<ActorDatabase>("actor-1", def, store, io.get_executor(),
                                           std::chrono::seconds(30), *this);
  }

  // Runs `task` on the io_context until it finishes (the SQL workers do the rest).
  template <class T>
  std::pair<std::optional<T>, std::exception_ptr> run(Task<T> task, int ms = 10'000) {
    auto done = std::make_shared<std::pair<std::optional<T>, std::exception_ptr>>();
    auto finished = std::make_shared<bool>(false);
    asio::co_spawn(io, std::move(task), [done, finished](std::exception_ptr e, T v) {
      done->second = e;
      if (!e) {
        done->first = std::move(v);
      }
      *finished = true;
    });
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (!*finished && std::chrono::steady_clock::now() < until) {
      io.restart();
      io.run_for(std::chrono::milliseconds(5));
    }
    return *done;
  }
  SqlResult sql(ActorDatabase& db, std::string text) {
    auto [r, e] = run(db.execute(std::move(text), SqlParams{}));
    EXPECT_TRUE(r.has_value()) << code_of(e);
    return r.value_or(SqlResult{});
  }
  bool open(ActorDatabase& db) {
    auto wrap = [](ActorDatabase& d) -> Task<bool> {
      auto op = d.open();
      auto r = co_await std::move(op);
      co_return r.has_value();
    };
    return run(wrap(db)).first.value_or(false);
  }
  void close(ActorDatabase& db) {
    auto wrap = [](ActorDatabase& d) -> Task<bool> {
      co_await d.close();
      co_return true;
    };
    run(wrap(db));
  }
  // The actor's write: what the database changed, applied to the store.
  std::size_t save(ActorDatabase& db) {
    storage::ActorWrite write;
    db.take_changes(write);
    const auto ops = write.kv.ops().size();
    storage::apply_kv(store.kv, write.kv);
    return ops;
  }
  static std::string code_of(std::exception_ptr e) {
    if (!e) {
      return "";
    }
    try {
      std::rethrow_exception(e);
    } catch (const ActorError& err) {
      return err.error().group + "." + err.error().code;
    } catch (...) {
      return "?";
    }
  }

  asio::io_context io;
  MemoryStore store;
  std::shared_ptr<int> owner = std::make_shared<int>(0);
  int changed = 0;
  detail::DatabaseDefinition schema{{{1, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"}}, {}};
};

TEST_F(ActorDatabaseTest, CommittedPagesReachTheStoreOnlyThroughTheActorsWrite) {
  auto db = make(&schema);
  ASSERT_TRUE(open(*db));
  EXPECT_TRUE(db->has_changes()) << "the migration committed";
  EXPECT_TRUE(store.kv.empty()) << "nothing is written by the database itself";
  sql(*db, "INSERT INTO t (v) VALUES ('a')");
  EXPECT_GE(changed, 1);
  EXPECT_GT(save(*db), 1U);
  EXPECT_FALSE(db->has_changes());
  EXPECT_EQ(store.kv.count(database_keys::size_key()), 1U);
  // Committed after the last write: not in the store.
  sql(*db, "INSERT INTO t (v) VALUES ('lost')");
  close(*db);

  auto again = make(&schema);
  ASSERT_TRUE(open(*again));
  auto r = sql(*again, "SELECT v FROM t ORDER BY id");
  ASSERT_EQ(r.rows.size(), 1U);
  EXPECT_EQ(r.rows[0][0], Value("a"));
  EXPECT_FALSE(again->has_changes()) << "migrations already applied";
  close(*again);
}

TEST_F(ActorDatabaseTest, AnOpenTransactionGivesNothingAndHoldsOtherStatements) {
  auto db = make(&schema);
  ASSERT_TRUE(open(*db));
  save(*db);
  auto [txn, e] = run(db->begin(std::nullopt));
  ASSERT_TRUE(txn) << code_of(e);
  run(db->execute_in(*txn, "INSERT INTO t (v) VALUES ('in-tx')", SqlParams{}));
  EXPECT_FALSE(db->has_changes());
  // Another caller's statement waits for the transaction.
  auto other = std::make_shared<bool>(false);
  auto outside = [](ActorDatabase& d, std::shared_ptr<bool> done) -> Task<void> {
    auto op = d.execute("INSERT INTO t (v) VALUES ('outside')", SqlParams{});
    co_await std::move(op);
    *done = true;
  };
  asio::co_spawn(io, outside(*db, other), asio::detached);
  io.restart();
  io.run_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(*other) << "ran inside someone else's transaction";
  auto wrap = [](ActorDatabase& d, std::uint64_t id) -> Task<bool> {
    co_await d.commit(id);
    co_return true;
  };
  ASSERT_TRUE(run(wrap(*db, *txn)).first);
  for (int i = 0; i < 400 && !*other; ++i) {
    io.restart();
    io.run_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(*other);
  auto r = sql(*db, "SELECT v FROM t ORDER BY id");
  ASSERT_EQ(r.rows.size(), 2U);
  EXPECT_EQ(r.rows[0][0], Value("in-tx"));
  EXPECT_EQ(r.rows[1][0], Value("outside"));
  // A second commit of the same transaction is refused.
  auto [again, error] = run(wrap(*db, *txn));
  EXPECT_EQ(code_of(error), "sqlite.transaction_closed");
  close(*db);
}

TEST_F(ActorDatabaseTest, ALargeDatabaseIsReadFromTheStorePageByPage) {
  auto db = make(&schema);
  ASSERT_TRUE(open(*db));
  // ~2 MiB: more pages than the preload.
  sql(*db,
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 500) "
      "INSERT INTO t (v) SELECT hex(randomblob(2000)) FROM c");
  save(*db);
  close(*db);
  std::size_t pages = 0;
  for (const auto& [key, value] : store.kv) {
    pages += database_keys::page_of(key).has_value() ? 1U : 0U;
  }
  ASSERT_GT(pages, ActorDatabase::kPreloadPages);

  auto again = make(&schema);
  ASSERT_TRUE(open(*again));
  auto r = sql(*again, "SELECT count(*), sum(length(v)) FROM t");
  EXPECT_EQ(r.rows.at(0).at(0), Value(500));
  EXPECT_EQ(r.rows.at(0).at(1), Value(500 * 4000));
  EXPECT_EQ(sql(*again, "PRAGMA integrity_check").rows.at(0).at(0), Value("ok"));

  // Shrinking deletes the stored pages past the new end.
  sql(*again, "DELETE FROM t");
  sql(*again, "VACUUM");
  save(*again);
  std::size_t left = 0;
  for (const auto& [key, value] : store.kv) {
    left += database_keys::page_of(key).has_value() ? 1U : 0U;
  }
  EXPECT_LT(left, 10U);
  close(*again);
}

TEST_F(ActorDatabaseTest, AnActorWithoutADatabaseGetsNotEnabled) {
  auto db = make(nullptr);
  ASSERT_TRUE(open(*db));
  auto [r, e] = run(db->execute("SELECT 1", SqlParams{}));
  EXPECT_FALSE(r);
  EXPECT_EQ(code_of(e), "database.not_enabled");
  EXPECT_TRUE(store.kv.empty());
}

}  // namespace
}  // namespace rivetkit::core
