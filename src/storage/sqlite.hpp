#pragma once
// Small RAII wrappers over the SQLite C API (sqlite3, sqlite3_stmt).
//
// Threading: a Database and its Statements belong to one thread at a time (connections are
// opened with SQLITE_OPEN_NOMUTEX, cpp-guide §1.5). Nothing here synchronizes.
//
// Errors: every failure is a rivetkit::Error `storage.sqlite_error` whose message carries the
// SQLite message and whose metadata is {code: <extended result code>}.
//
// Binding: bind_text/bind_blob use SQLITE_STATIC, i.e. the bound bytes must stay alive until the
// statement is reset. Use StatementScope so a statement is reset (and its implicit read
// transaction ends) as soon as the caller is done with it.

#include <rivetkit/result.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace rivetkit::storage::sqlite {

/// Builds `storage.sqlite_error` from a result code and the connection's last message.
Error make_error(sqlite3* db, int rc, std::string_view context);

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  /// Parameters are 1-based. A failing bind is reported by the next step().
  void bind_null(int index);
  void bind_int64(int index, std::int64_t value);
  void bind_text(int index, std::string_view value);
  /// An empty value binds a zero-length BLOB (not NULL).
  void bind_blob(int index, std::string_view value);
  void bind_optional_blob(int index, const std::optional<std::string>& value);
  void bind_optional_int64(int index, std::optional<std::int64_t> value);

  /// true: a row is available; false: the statement ran to completion.
  Result<bool> step();
  /// Steps until done, ignoring rows.
  Result<void> run();

  bool column_is_null(int index) const;
  std::int64_t column_int64(int index) const;
  std::string column_text(int index) const;
  std::string column_blob(int index) const;
  std::optional<std::string> column_optional_text(int index) const;
  std::optional<std::string> column_optional_blob(int index) const;
  std::optional<std::int64_t> column_optional_int64(int index) const;

  /// Resets the statement and clears its bindings (ends its read transaction, if any).
  void reset() noexcept;

  std::string sql() const;
  sqlite3_stmt* get() const { return stmt_; }
  explicit operator bool() const { return stmt_ != nullptr; }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  int bind_rc_ = 0;  // first failing bind since the last reset (0 = SQLITE_OK)
};

/// Resets a statement when the scope ends.
class StatementScope {
 public:
  explicit StatementScope(Statement& stmt) : stmt_(stmt) {}
  ~StatementScope() { stmt_.reset(); }
  StatementScope(const StatementScope&) = delete;
  StatementScope& operator=(const StatementScope&) = delete;

 private:
  Statement& stmt_;
};

class Database {
 public:
  Database() = default;
  ~Database();
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// `flags` are sqlite3_open_v2 flags; `vfs` nullptr = the default VFS. Extended result codes
  /// are turned on.
  static Result<Database> open(const std::string& path, int flags, const char* vfs = nullptr);

  /// Runs one or more statements without results.
  Result<void> exec(std::string_view sql);
  /// Prepares one statement meant to be kept and reused (SQLITE_PREPARE_PERSISTENT).
  Result<Statement> prepare(std::string_view sql);
  /// Runs a query expected to return one row and returns its first column as text.
  Result<std::string> query_text(std::string_view sql);
  Result<std::int64_t> query_int64(std::string_view sql);

  /// True while a transaction is open (SQLite rolls back on some errors by itself).
  bool in_transaction() const;
  std::int64_t changes() const;
  Error last_error(std::string_view context) const;

  void close() noexcept;
  sqlite3* get() const { return db_; }
  explicit operator bool() const { return db_ != nullptr; }

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

}  // namespace rivetkit::storage::sqlite
