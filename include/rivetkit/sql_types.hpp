#pragma once
/// The values of the actor's SQLite database (`c.db()`, database.hpp): a statement's result,
/// its parameters, and the migrations an actor declares.

#include <rivetkit/convert.hpp>
#include <rivetkit/value.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace rivetkit {

/// What one `execute` returns.
///
/// Values map SQLite's types: NULL is null, INTEGER an int, REAL a double, TEXT a string (which
/// may hold NUL bytes), BLOB bytes.
struct SqlResult {
  /// The result's column names, in order (empty for a statement without rows).
  std::vector<std::string> columns;
  /// Each row's values, in column order.
  std::vector<Array> rows;
  /// Rows inserted, updated or deleted by the statement (sqlite3_changes).
  std::int64_t changes = 0;
  /// The rowid of the connection's latest successful INSERT.
  std::int64_t last_insert_row_id = 0;

  /// Each row as an object {column: value}: RivetKit's row objects.
  Array objects() const {
    Array out;
    out.reserve(rows.size());
    for (const auto& row : rows) {
      Object obj;
      obj.reserve(columns.size());
      for (std::size_t i = 0; i < columns.size() && i < row.size(); ++i) {
        obj.push_back(Member{columns[i], row[i]});
      }
      out.emplace_back(std::move(obj));
    }
    return out;
  }
  /// Each row converted to `T` (a struct with RIVETKIT_FIELDS whose names are the columns).
  /// Throws ConversionError when a row does not fit.
  template <class T>
  std::vector<T> as() const {
    std::vector<T> out;
    out.reserve(rows.size());
    for (auto& obj : objects()) {
      out.push_back(from_value<T>(obj));
    }
    return out;
  }
};

/// A statement's parameters: positional (`?`, `?NNN`) or named (`:name`, `@name`, `$name`; the
/// names given without their sigil).
struct SqlParams {
  Array positional;
  Object named;
};

/// What a migration step written as code (Migration::run) works with: statements run at once,
/// inside the step's transaction, on the SQL worker that migrates the database. A failing
/// statement throws ActorError (group "sqlite"); a step cannot co_await.
class MigrationDb {
 public:
  virtual ~MigrationDb() = default;
  /// Runs `sql` (one or more statements) with positional parameters.
  template <class... A>
  SqlResult execute(std::string sql, const A&... params) {
    SqlParams p;
    p.positional = Array{to_value(params)...};
    return run(std::move(sql), std::move(p));
  }
  /// With named parameters (`:name`, `@name`, `$name`), given without their sigil.
  SqlResult execute_named(std::string sql, Object params) {
    SqlParams p;
    p.named = std::move(params);
    return run(std::move(sql), std::move(p));
  }

 protected:
  virtual SqlResult run(std::string sql, SqlParams params) = 0;
};

/// One step of an actor's schema: run once, in version order, when the actor starts with an
/// older database (the versions applied are kept in the database's `_rivetkit_migrations`
/// table). Each step is one transaction: SQL text, or code (`run`, RivetKit's `onMigrate`) that
/// may read the database and decide what to change. A step that fails or throws changes nothing
/// and fails the start with `database.migration_failed`, whose message carries the step's error.
///     .database({{1, "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)"},
///                {2, [](rivetkit::MigrationDb& db) { db.execute("..."); }}})
struct Migration {
  Migration() = default;
  Migration(std::int64_t v, std::string statements) : version(v), sql(std::move(statements)) {}
  Migration(std::int64_t v, std::function<void(MigrationDb&)> code)
      : version(v), run(std::move(code)) {}

  std::int64_t version = 0;
  std::string sql;
  /// When set, the step runs this instead of `sql`.
  std::function<void(MigrationDb&)> run;
};

/// How an actor's database behaves (ActorBuilder::database).
struct DatabaseOptions {
  /// Log a warning (once per database) when a transaction begun with a plain `BEGIN` stays open
  /// across calls: other calls' statements then run inside it (RivetKit's
  /// `warnOnManualTransactions`). Use Database::transaction instead, or turn this off.
  bool warn_on_manual_transactions = true;
  /// Database pages an awake actor keeps in memory (4 KiB each; default 8 MiB), besides those
  /// not yet durable; the rest are read from storage when needed. SQLite's own page cache (about
  /// 2 MiB) sits above it. At least 16.
  std::size_t page_cache_pages = 2048;
};

}  // namespace rivetkit
