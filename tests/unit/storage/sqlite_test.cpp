// The SQLite wrappers and the schema ladder.

#include "storage/sqlite.hpp"

#include "storage/local_store.hpp"
#include "storage/schema.hpp"
#include "test_util.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

namespace rivetkit::storage {
namespace {

using test::open_store;
using test::TempDir;

constexpr int kOpenCreate = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;

TEST(Sqlite, BlobsKeepEmptyNullAndEmbeddedNul) {
  auto db = sqlite::Database::open(":memory:", kOpenCreate);
  ASSERT_TRUE(db) << db.error().message;
  ASSERT_TRUE(db->exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)"));
  auto ins = db->prepare("INSERT INTO t(id, v) VALUES (?1, ?2)");
  ASSERT_TRUE(ins);
  const std::string with_nul("a\0b", 3);
  for (int i = 0; i < 3; ++i) {
    sqlite::StatementScope scope(*ins);
    ins->bind_int64(1, i);
    if (i == 0) {
      ins->bind_optional_blob(2, std::nullopt);
    } else if (i == 1) {
      ins->bind_blob(2, std::string());
    } else {
      ins->bind_blob(2, with_nul);
    }
    ASSERT_TRUE(ins->run());
  }
  auto sel = db->prepare("SELECT v FROM t ORDER BY id");
  ASSERT_TRUE(sel);
  std::vector<std::optional<std::string>> got;
  while (true) {
    auto row = sel->step();
    ASSERT_TRUE(row);
    if (!*row) {
      break;
    }
    got.push_back(sel->column_optional_blob(0));
  }
  ASSERT_EQ(got.size(), 3u);
  EXPECT_FALSE(got[0].has_value());
  ASSERT_TRUE(got[1].has_value());
  EXPECT_EQ(*got[1], "");
  EXPECT_EQ(got[2], with_nul);
}

TEST(Sqlite, ErrorsCarryTheSqliteMessageAndCode) {
  auto db = sqlite::Database::open(":memory:", kOpenCreate);
  ASSERT_TRUE(db);
  auto bad = db->prepare("SELECT * FROM missing_table");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().qualified_code(), "storage.sqlite_error");
  EXPECT_NE(bad.error().message.find("no such table"), std::string::npos) << bad.error().message;
  ASSERT_TRUE(db->exec("CREATE TABLE u(x INTEGER UNIQUE)"));
  ASSERT_TRUE(db->exec("INSERT INTO u VALUES (1)"));
  auto ins = db->prepare("INSERT INTO u VALUES (1)");
  ASSERT_TRUE(ins);
  auto r = ins->run();
  ASSERT_FALSE(r);
  ASSERT_TRUE(r.error().metadata);
  EXPECT_EQ(r.error().metadata->find("code")->as_int(), SQLITE_CONSTRAINT_UNIQUE);
  auto bad_exec = db->exec("NOT SQL");
  ASSERT_FALSE(bad_exec);
  EXPECT_NE(bad_exec.error().message.find("syntax error"), std::string::npos);
}

TEST(Schema, FreshDatabaseMigratesToCurrentVersion) {
  auto db = sqlite::Database::open(":memory:", kOpenCreate);
  ASSERT_TRUE(db);
  ASSERT_TRUE(migrate(*db));
  EXPECT_EQ(*db->query_int64("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(*db->query_int64("PRAGMA application_id"), kApplicationId);
  // Idempotent.
  ASSERT_TRUE(migrate(*db));
  EXPECT_EQ(*db->query_int64("SELECT count(*) FROM meta WHERE key = 'created_by_schema'"), 1);
  // A partial target stops early.
  auto db0 = sqlite::Database::open(":memory:", kOpenCreate);
  ASSERT_TRUE(db0);
  ASSERT_TRUE(migrate_to(*db0, 0));
  EXPECT_EQ(*db0->query_int64("PRAGMA user_version"), 0);
}

TEST(Schema, RefusesNewerVersion) {
  TempDir dir;
  {
    auto store = open_store(dir.path());
    ASSERT_TRUE(store);
    store->close();
  }
  {
    auto db = sqlite::Database::open(dir.db_path(), kOpenCreate);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion + 1)));
  }
  auto opened = LocalStore::open(dir.path());
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().qualified_code(), "storage.incompatible_database");
  EXPECT_NE(opened.error().message.find("newer"), std::string::npos) << opened.error().message;
}

TEST(Schema, RefusesForeignDatabase) {
  TempDir dir;
  {
    auto db = sqlite::Database::open(dir.db_path(), kOpenCreate);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->exec("CREATE TABLE someone_elses(x)"));
  }
  auto opened = LocalStore::open(dir.path());
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().qualified_code(), "storage.incompatible_database");
  {
    auto db = sqlite::Database::open(dir.db_path(), kOpenCreate);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->exec("PRAGMA user_version = 1"));  // versioned but no application_id
  }
  opened = LocalStore::open(dir.path());
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().qualified_code(), "storage.incompatible_database");
}

TEST(Schema, StoreUsesWalAndConfiguredPragmas) {
  TempDir dir;
  auto store = open_store(dir.path());
  ASSERT_TRUE(store);
  auto db = sqlite::Database::open(dir.db_path(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->query_text("PRAGMA journal_mode"), "wal");
  store->close();
}

}  // namespace
}  // namespace rivetkit::storage
