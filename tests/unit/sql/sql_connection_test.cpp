// The page VFS and SqlConnection (src/sql/): a database whose pages live in a PageSource (here
// an in-memory map standing in for the actor's KV) keeps every committed transaction and nothing
// else, reopens from its stored pages, and enforces the sandbox, migrations and limits.

#include "sql/sql_connection.hpp"

#include "map_source.hpp"
#include "sql/page_file.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>

namespace rivetkit::sql {
namespace {

using testing::MapSource;

struct Db {
  std::shared_ptr<MapSource> source;
  std::shared_ptr<PageFile> file;
  std::unique_ptr<SqlConnection> conn;

  explicit Db(std::shared_ptr<MapSource> s, bool preload = false, std::size_t cache_pages = 4096)
      : source(std::move(s)) {
    std::map<std::uint32_t, std::string> pre;
    if (preload) {
      pre = source->pages;
    }
    file = std::make_shared<PageFile>(source->size_pages, std::move(pre), source, cache_pages);
    auto c = SqlConnection::open(file, 1 << 20);
    EXPECT_TRUE(c) << c.error().message;
    conn = std::move(*c);
  }
  SqlResult exec(const std::string& sql, SqlParams params = {}) {
    auto r = conn->execute(sql, params);
    EXPECT_TRUE(r) << sql << ": " << (r ? "" : r.error().message);
    return r ? std::move(*r) : SqlResult{};
  }
  Error fail(const std::string& sql, SqlParams params = {}) {
    auto r = conn->execute(sql, params);
    EXPECT_FALSE(r) << sql;
    return r ? Error{} : r.error();
  }
  /// Makes what was committed durable.
  bool save() {
    file->publish();
    auto c = file->take_committed();
    if (c) {
      source->apply(*c);
      file->durable();
    }
    return c.has_value();
  }
};

TEST(SqlConnectionTest, CommittedRowsReachTheSourceAndReopen) {
  auto source = std::make_shared<MapSource>();
  {
    Db db(source);
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, data BLOB, score REAL)");
    SqlParams p;
    p.positional = {"alice", Value(Bytes{0, 1, 2}), 1.5};
    auto r = db.exec("INSERT INTO t (name, data, score) VALUES (?, ?, ?)", p);
    EXPECT_EQ(r.changes, 1);
    EXPECT_EQ(r.last_insert_row_id, 1);
    ASSERT_TRUE(db.save());
    EXPECT_FALSE(db.save()) << "nothing committed since";
    EXPECT_GE(source->size_pages, 2U);
  }
  Db again(source);
  auto rows = again.exec("SELECT id, name, data, score, NULL AS n FROM t");
  ASSERT_EQ(rows.rows.size(), 1U);
  EXPECT_EQ(rows.columns, (std::vector<std::string>{"id", "name", "data", "score", "n"}));
  EXPECT_EQ(rows.rows[0][0], Value(1));
  EXPECT_EQ(rows.rows[0][1], Value("alice"));
  EXPECT_EQ(rows.rows[0][2], Value(Bytes{0, 1, 2}));
  EXPECT_EQ(rows.rows[0][3], Value(1.5));
  EXPECT_TRUE(rows.rows[0][4].is_null());
  EXPECT_GT(source->reads, 0);
}

TEST(SqlConnectionTest, ARolledBackOrUncommittedTransactionNeverReachesTheSource) {
  auto source = std::make_shared<MapSource>();
  Db db(source);
  db.exec("CREATE TABLE t (v INTEGER)");
  ASSERT_TRUE(db.save());
  auto stored = source->pages;
  db.exec("BEGIN");
  db.exec("INSERT INTO t VALUES (1)");
  EXPECT_FALSE(db.save()) << "an open transaction is not committed";
  db.exec("ROLLBACK");
  EXPECT_FALSE(db.save());
  EXPECT_EQ(source->pages, stored);
  EXPECT_EQ(db.exec("SELECT count(*) FROM t").rows[0][0], Value(0));
  // A transaction large enough to spill SQLite's page cache to the file, then rolled back.
  db.exec("PRAGMA cache_size=10");
  db.exec("BEGIN");
  for (int i = 0; i < 2000; ++i) {
    SqlParams p;
    p.positional = {std::string(200, 'x')};
    db.exec("INSERT INTO t VALUES (?)", p);
  }
  db.exec("ROLLBACK");
  EXPECT_EQ(db.exec("SELECT count(*) FROM t").rows[0][0], Value(0));
  db.save();
  Db reopened(source);
  EXPECT_EQ(reopened.exec("SELECT count(*) FROM t").rows[0][0], Value(0));
  EXPECT_EQ(reopened.exec("PRAGMA integrity_check").rows[0][0], Value("ok"));
}

TEST(SqlConnectionTest, AStoreWithoutTheLastCommitsIsTheDatabaseBeforeThem) {
  // The actor's commit failed (or the process died) after SQLite committed: the source keeps
  // the previous database, whole.
  auto source = std::make_shared<MapSource>();
  {
    Db db(source);
    db.exec("CREATE TABLE t (v TEXT)");
    db.exec("INSERT INTO t VALUES ('kept')");
    ASSERT_TRUE(db.save());
    for (int i = 0; i < 500; ++i) {
      db.exec("INSERT INTO t VALUES ('" + std::string(300, 'y') + "')");
    }
    // Not saved.
  }
  Db again(source, true);
  EXPECT_EQ(again.exec("SELECT count(*) FROM t").rows[0][0], Value(1));
  EXPECT_EQ(again.exec("PRAGMA integrity_check").rows[0][0], Value("ok"));
}

TEST(SqlConnectionTest, ShrinkingTheFileDropsStoredPagesPastItsEnd) {
  auto source = std::make_shared<MapSource>();
  Db db(source);
  db.exec("CREATE TABLE t (v TEXT)");
  for (int i = 0; i < 200; ++i) {
    db.exec("INSERT INTO t VALUES ('" + std::string(1000, 'z') + "')");
  }
  db.save();
  auto big = source->size_pages;
  db.exec("DELETE FROM t");
  db.exec("VACUUM");
  db.save();
  EXPECT_LT(source->size_pages, big);
  EXPECT_EQ(source->pages.rbegin()->first, source->size_pages);
  Db again(source);
  EXPECT_EQ(again.exec("PRAGMA integrity_check").rows[0][0], Value("ok"));
}

TEST(SqlConnectionTest, ADatabaseManyTimesTheCacheIsReadOnDemandWithinTheBound) {
  auto source = std::make_shared<MapSource>();
  {
    Db db(source, false, 16);
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, data TEXT)");
    for (int turn = 0; turn < 10; ++turn) {
      db.exec(
          "INSERT INTO t (data) WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM "
          "s WHERE i < 100) SELECT printf('%.500c', 'x') FROM s");
      db.save();
      EXPECT_LE(db.file->cached_pages(), 16u);
    }
  }
  ASSERT_GT(source->size_pages, 120u);  // 500 KB of rows: eight times the cache
  // Reopened: SQLite reads what it needs through the cache of 16 pages.
  Db db(source, false, 16);
  source->reads = 0;
  auto r = db.exec("SELECT count(*), sum(length(data)) FROM t");
  EXPECT_EQ(r.rows.at(0).at(0).as_int(), 1000);
  EXPECT_EQ(r.rows.at(0).at(1).as_int(), 500000);
  EXPECT_GT(source->reads, 120);
  EXPECT_LE(db.file->cached_pages(), 16u);
  EXPECT_EQ(db.exec("PRAGMA integrity_check").rows.at(0).at(0).as_string(), "ok");
}

TEST(SqlConnectionTest, ParametersPositionalNumberedAndNamed) {
  Db db(std::make_shared<MapSource>());
  db.exec("CREATE TABLE t (a, b)");
  SqlParams named;
  named.named = {{"a", 1}, {"b", "two"}};
  db.exec("INSERT INTO t VALUES (:a, $b)", named);
  SqlParams numbered;
  numbered.positional = {"x", "y"};
  db.exec("INSERT INTO t VALUES (?2, ?1)", numbered);
  auto r = db.exec("SELECT a, b FROM t ORDER BY rowid");
  EXPECT_EQ(r.objects()[0], Value::object({{"a", 1}, {"b", "two"}}));
  EXPECT_EQ(r.rows[1], (Array{"y", "x"}));
  auto missing = db.fail("SELECT ?", {});
  EXPECT_EQ(missing.code, "invalid_parameter");
  SqlParams bad;
  bad.positional = {Value::array({1})};
  EXPECT_EQ(db.fail("SELECT ?", bad).code, "invalid_parameter");
  // Text with a NUL byte round-trips whole.
  SqlParams nul;
  nul.positional = {std::string("a\0b", 3)};
  auto t = db.exec("SELECT ?, length(?1), hex(?1)", nul);
  EXPECT_EQ(t.rows[0][0], Value(std::string("a\0b", 3)));
  EXPECT_EQ(t.rows[0][2], Value("610062"));
}

TEST(SqlConnectionTest, SeveralStatementsRunInOrderAndTheLastRowsAreTheResult) {
  Db db(std::make_shared<MapSource>());
  auto r = db.exec(
      "CREATE TABLE t (v); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2);\n"
      "SELECT sum(v) AS s FROM t; -- done");
  EXPECT_EQ(r.columns, (std::vector<std::string>{"s"}));
  EXPECT_EQ(r.rows[0][0], Value(3));
}

TEST(SqlConnectionTest, ErrorsCarryRivetKitsGroupAndACodePerKind) {
  Db db(std::make_shared<MapSource>());
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)");
  db.exec("INSERT INTO t (v) VALUES ('a')");
  auto dup = db.fail("INSERT INTO t (v) VALUES ('a')");
  EXPECT_EQ(dup.group, "sqlite");
  EXPECT_EQ(dup.code, "constraint_violation");
  EXPECT_NE(dup.message.find("UNIQUE"), std::string::npos);
  auto syntax = db.fail("SELEC 1");
  EXPECT_EQ(syntax.code, "sql_error");
  EXPECT_NE(syntax.message.find("syntax"), std::string::npos);
  EXPECT_EQ(db.fail("SELECT * FROM missing").code, "sql_error");
}

TEST(SqlConnectionTest, TheSandboxRefusesOtherFilesExtensionsAndDurabilitySettings) {
  Db db(std::make_shared<MapSource>());
  for (const char* sql : {"ATTACH DATABASE '/tmp/other.db' AS other", "PRAGMA journal_mode=WAL",
                          "PRAGMA journal_mode=OFF", "PRAGMA synchronous=OFF",
                          "PRAGMA locking_mode=NORMAL", "PRAGMA writable_schema=ON",
                          "PRAGMA page_size=65536", "SELECT load_extension('/tmp/x.so')"}) {
    auto e = db.fail(sql);
    EXPECT_EQ(e.group, "sqlite") << sql;
    EXPECT_TRUE(e.code == "not_authorized" || e.code == "sql_error") << sql << ": " << e.code;
    EXPECT_FALSE(e.message.empty()) << sql;
  }
  EXPECT_NE(db.fail("ATTACH DATABASE ':memory:' AS m").message.find("ATTACH"), std::string::npos);
  EXPECT_NE(db.fail("PRAGMA synchronous=OFF").message.find("synchronous"), std::string::npos);
  // Reading them is fine, and the settings held.
  EXPECT_EQ(db.exec("PRAGMA journal_mode").rows[0][0], Value("memory"));
  EXPECT_EQ(db.exec("PRAGMA locking_mode").rows[0][0], Value("exclusive"));
  db.exec("PRAGMA user_version=7");
  EXPECT_EQ(db.exec("PRAGMA user_version").rows[0][0], Value(7));
}

TEST(SqlConnectionTest, MigrationsRunOnceInOrderAndAFailedStepLeavesThePreviousVersion) {
  auto source = std::make_shared<MapSource>();
  std::vector<Migration> steps{{1, "CREATE TABLE a (v)"}, {2, "INSERT INTO a VALUES (2)"}};
  {
    Db db(source);
    ASSERT_TRUE(db.conn->migrate(steps));
    ASSERT_TRUE(db.conn->migrate(steps)) << "applied steps are skipped";
    EXPECT_EQ(db.exec("SELECT count(*) FROM a").rows[0][0], Value(1));
    db.save();
  }
  Db db(source);
  steps.push_back({3, "INSERT INTO a VALUES (3); INSERT INTO nope VALUES (1)"});
  auto r = db.conn->migrate(steps);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().group, "database");
  EXPECT_EQ(r.error().code, "migration_failed");
  EXPECT_NE(r.error().message.find("Migration 3"), std::string::npos);
  EXPECT_EQ(*db.conn->schema_version(), 2);
  EXPECT_EQ(db.exec("SELECT count(*) FROM a").rows[0][0], Value(1)) << "step 3 rolled back";
  EXPECT_FALSE(db.conn->in_transaction());
}

TEST(SqlConnectionTest, AnInterruptStopsALongStatement) {
  Db db(std::make_shared<MapSource>());
  std::atomic<bool> stop{false};
  std::thread interrupter([&] {
    while (!stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      db.conn->interrupt();
    }
  });
  auto e = db.fail(
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c");
  stop = true;
  interrupter.join();
  EXPECT_EQ(e.code, "interrupted");
  EXPECT_EQ(db.exec("SELECT 1").rows[0][0], Value(1)) << "the connection still works";
}

TEST(SqlConnectionTest, AResultOverTheLimitFailsCleanly) {
  Db db(std::make_shared<MapSource>());
  auto e = db.fail(
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000) "
      "SELECT x, zeroblob(1000) FROM c");
  EXPECT_EQ(e.code, "result_too_large");
  EXPECT_EQ(db.exec("SELECT 2").rows[0][0], Value(2));
}

TEST(SqlConnectionTest, AFailingSourceFailsTheStatementNotTheProcess) {
  auto source = std::make_shared<MapSource>();
  {
    Db db(source);
    db.exec("CREATE TABLE t (v)");
    db.save();
  }
  Db db(source);
  source->failing = true;
  auto e = db.fail("SELECT * FROM t");
  EXPECT_EQ(e.code, "io_error");
  source->failing = false;
  EXPECT_EQ(db.exec("SELECT count(*) FROM t").rows[0][0], Value(0));
}

}  // namespace
}  // namespace rivetkit::sql
