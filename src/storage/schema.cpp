#include "storage/schema.hpp"

#include "storage/records_migration.hpp"

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace rivetkit::storage {

namespace {

struct Migration {
  std::int64_t version;
  std::string_view sql;
  /// Runs after `sql`, in the same transaction (data that SQL alone cannot convert).
  Result<void> (*convert)(sqlite::Database&);
};

// Append-only. Never edit a step that has shipped; add a new one.
constexpr std::array<Migration, 4> kMigrations = {{
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
)sql",
     nullptr},
    {2, R"sql(
CREATE TABLE actor_conns(
  rid INTEGER NOT NULL,
  conn_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  encoding TEXT NOT NULL,
  params BLOB NOT NULL,
  state BLOB NOT NULL,
  subscriptions BLOB NOT NULL,
  request_path TEXT NOT NULL,
  request_headers BLOB NOT NULL,
  gateway_id BLOB NOT NULL,
  request_id BLOB NOT NULL,
  server_message_index INTEGER NOT NULL,
  client_message_index INTEGER NOT NULL,
  PRIMARY KEY(rid, conn_id)
) STRICT;

CREATE TABLE actor_schedules(
  rid INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  trigger_at INTEGER NOT NULL,
  action TEXT NOT NULL,
  args BLOB,
  created_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(rid, event_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX actor_schedules_by_time ON actor_schedules(rid, trigger_at);
)sql",
     nullptr},
    {3, R"sql(
CREATE TABLE actor_kv(
  rid INTEGER NOT NULL,
  key BLOB NOT NULL,
  value BLOB NOT NULL,
  PRIMARY KEY(rid, key)
) STRICT, WITHOUT ROWID;
)sql",
     nullptr},
    {4, R"sql(
ALTER TABLE actors ADD COLUMN next_alarm INTEGER;
CREATE INDEX actors_by_alarm ON actors(next_alarm) WHERE next_alarm IS NOT NULL;
)sql",
     move_records_into_keys},
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
    if (r && m.convert != nullptr) {
      r = m.convert(db);
    }
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

namespace {

constexpr std::uint8_t kCborArray = 0x80;  // major type 4
constexpr std::uint8_t kCborText = 0x60;   // major type 3

void put_head(std::string& out, std::uint8_t major, std::uint64_t n) {
  auto byte = [&out](std::uint64_t b) {
    out.push_back(static_cast<char>(b & 0xFF));
  };
  if (n < 24) {
    byte(major | n);
  } else if (n <= 0xFF) {
    byte(major | 24u);
    byte(n);
  } else if (n <= 0xFFFF) {
    byte(major | 25u);
    byte(n >> 8);
    byte(n);
  } else if (n <= 0xFFFFFFFF) {
    byte(major | 26u);
    for (int shift = 24; shift >= 0; shift -= 8) {
      byte(n >> shift);
    }
  } else {
    byte(major | 27u);
    for (int shift = 56; shift >= 0; shift -= 8) {
      byte(n >> shift);
    }
  }
}

/// Reads one head of major type `major` at `pos`; nullopt on anything else.
std::optional<std::uint64_t> get_head(std::string_view in, std::size_t& pos, std::uint8_t major) {
  if (pos >= in.size()) {
    return std::nullopt;
  }
  const auto first = static_cast<std::uint8_t>(in[pos++]);
  if ((first & 0xE0) != major) {
    return std::nullopt;
  }
  const std::uint8_t info = first & 0x1F;
  if (info < 24) {
    return info;
  }
  if (info > 27) {
    return std::nullopt;  // indefinite lengths and reserved values are never written
  }
  const std::size_t len = std::size_t{1} << (info - 24);
  if (in.size() - pos < len) {
    return std::nullopt;
  }
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < len; ++i) {
    n = (n << 8) | static_cast<std::uint8_t>(in[pos++]);
  }
  return n;
}

Error corrupt(std::string_view what) {
  return Error{"storage", "corrupt_data", std::string(what), std::nullopt, false};
}

}  // namespace

std::string encode_subscriptions(const std::vector<std::string>& names) {
  std::string out;
  std::size_t size = 9;
  for (const std::string& name : names) {
    size += 9 + name.size();
  }
  out.reserve(size);
  put_head(out, kCborArray, names.size());
  for (const std::string& name : names) {
    put_head(out, kCborText, name.size());
    out += name;
  }
  return out;
}

Result<std::vector<std::string>> decode_subscriptions(std::string_view bytes) {
  std::size_t pos = 0;
  auto count = get_head(bytes, pos, kCborArray);
  // Each element takes at least one byte: a larger count is corrupt (and must not be reserved).
  if (!count || *count > bytes.size() - pos) {
    return fail(corrupt("subscriptions: not a CBOR array"));
  }
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(*count));
  for (std::uint64_t i = 0; i < *count; ++i) {
    auto len = get_head(bytes, pos, kCborText);
    if (!len || *len > bytes.size() - pos) {
      return fail(corrupt("subscriptions: not a CBOR text string"));
    }
    const auto n = static_cast<std::size_t>(*len);
    names.emplace_back(bytes.substr(pos, n));
    pos += n;
  }
  if (pos != bytes.size()) {
    return fail(corrupt("subscriptions: trailing bytes"));
  }
  return names;
}

std::string list_actors_sql(bool by_key, bool include_destroyed) {
  return fmt::format(
      "SELECT {} FROM actors WHERE name = ?1{}{} AND create_ts < ?2 "
      "ORDER BY create_ts DESC, rid DESC LIMIT ?3",
      kActorColumns, by_key ? " AND key = ?4" : "",
      include_destroyed ? "" : " AND destroy_ts IS NULL");
}

}  // namespace rivetkit::storage
