#include "storage/schema.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>

namespace rivetkit::storage {

namespace {

struct Migration {
  std::int64_t version;
  std::string_view sql;
};

// Append-only. Never edit a step that has shipped; add a new one.
constexpr std::array<Migration, 1> kMigrations = {{
    {1, R"sql(
CREATE TABLE meta(
  key TEXT PRIMARY KEY NOT NULL,
  value ANY
) STRICT, WITHOUT ROWID;

CREATE TABLE actors(
  rid INTEGER PRIMARY KEY,
  actor_id TEXT NOT NULL,
  name TEXT NOT NULL,
  key TEXT,
  input BLOB,
  crash_policy TEXT NOT NULL,
  create_ts INTEGER NOT NULL,
  destroy_ts INTEGER,
  generation INTEGER NOT NULL DEFAULT 1
) STRICT;
CREATE UNIQUE INDEX actors_by_id ON actors(actor_id);
CREATE UNIQUE INDEX actors_live_key ON actors(name, key) WHERE destroy_ts IS NULL;
CREATE INDEX actors_by_name_key ON actors(name, key, create_ts);
CREATE INDEX actors_by_name ON actors(name, create_ts);
CREATE INDEX actors_live_by_name ON actors(name, create_ts) WHERE destroy_ts IS NULL;

CREATE TABLE actor_state(
  rid INTEGER PRIMARY KEY,
  has_initialized INTEGER NOT NULL DEFAULT 0,
  state BLOB
) STRICT;

INSERT INTO meta(key, value) VALUES ('created_by_schema', 1);
)sql"},
}};

static_assert(kMigrations.back().version == kSchemaVersion);

}  // namespace

Result<void> migrate_to(sqlite::Database& db, std::int64_t target) {
  auto version = db.query_int64("PRAGMA user_version");
  if (!version) {
    return fail(std::move(version.error()));
  }
  auto app_id = db.query_int64("PRAGMA application_id");
  if (!app_id) {
    return fail(std::move(app_id.error()));
  }
  if (*version != 0 && *app_id != kApplicationId) {
    return fail(Error{"storage",
                      "incompatible_database",
                      fmt::format("not a rivetkit local store (application_id {}, user_version {})",
                                  *app_id, *version),
                      {},
                      false});
  }
  if (*version > kSchemaVersion) {
    return fail(Error{"storage",
                      "incompatible_database",
                      fmt::format("database schema version {} is newer than this build ({})",
                                  *version, kSchemaVersion),
                      {},
                      false});
  }
  if (*version == 0) {
    // A brand-new file must be empty; refuse to take over someone else's database.
    auto tables = db.query_int64("SELECT count(*) FROM sqlite_schema");
    if (!tables) {
      return fail(std::move(tables.error()));
    }
    if (*tables != 0) {
      return fail(Error{"storage",
                        "incompatible_database",
                        "not a rivetkit local store (unversioned database with tables)",
                        {},
                        false});
    }
  }
  for (const Migration& m : kMigrations) {
    if (m.version <= *version || m.version > target) {
      continue;
    }
    // BEGIN IMMEDIATE also serializes two processes migrating the same file at once; re-read
    // the version under the lock.
    if (auto r = db.exec("BEGIN IMMEDIATE"); !r) {
      return r;
    }
    auto current = db.query_int64("PRAGMA user_version");
    if (!current) {
      (void)db.exec("ROLLBACK");
      return fail(std::move(current.error()));
    }
    if (*current >= m.version) {
      (void)db.exec("ROLLBACK");
      continue;
    }
    std::string bump = fmt::format("PRAGMA user_version = {}; PRAGMA application_id = {};",
                                   m.version, kApplicationId);
    auto r = db.exec(m.sql);
    if (r) {
      r = db.exec(bump);
    }
    if (r) {
      r = db.exec("COMMIT");
    }
    if (!r) {
      if (db.in_transaction()) {
        (void)db.exec("ROLLBACK");
      }
      Error e = std::move(r.error());
      e.message = fmt::format("schema migration to version {}: {}", m.version, e.message);
      return fail(std::move(e));
    }
  }
  return {};
}

Result<void> migrate(sqlite::Database& db) {
  return migrate_to(db, kSchemaVersion);
}

std::string list_actors_sql(bool by_key, bool include_destroyed) {
  return fmt::format(
      "SELECT {} FROM actors WHERE name = ?1{}{} AND create_ts < ?2 "
      "ORDER BY create_ts DESC, rid DESC LIMIT ?3",
      kActorColumns, by_key ? " AND key = ?4" : "",
      include_destroyed ? "" : " AND destroy_ts IS NULL");
}

}  // namespace rivetkit::storage
