#pragma once
/// The values of the actor's SQLite database (`c.db()`, database.hpp): a statement's result,
/// its parameters, and the migrations an actor declares.

#include <rivetkit/convert.hpp>
#include <rivetkit/value.hpp>

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

/// One step of an actor's schema: run once, in version order, when the actor starts with an
/// older database (its version is SQLite's `user_version`). Each step is one transaction.
struct Migration {
  std::int64_t version = 0;
  std::string sql;
};

/// How an actor's database behaves (ActorBuilder::database).
struct DatabaseOptions {
  /// Log a warning (once per database) when a transaction begun with a plain `BEGIN` stays open
  /// across calls: other calls' statements then run inside it (RivetKit's
  /// `warnOnManualTransactions`). Use Database::transaction instead, or turn this off.
  bool warn_on_manual_transactions = true;
};

}  // namespace rivetkit
