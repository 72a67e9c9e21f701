#pragma once
// SqlConnection: one actor's SQLite connection over its PageFile (page_vfs.hpp), with the rules
// that keep the database the actor's own and durable:
// - set up once: locking_mode=EXCLUSIVE, journal_mode=MEMORY, temp_store=MEMORY, 4 KiB pages;
// - an authorizer refuses ATTACH/DETACH and pragmas that would change those settings or break
//   durability (journal_mode, synchronous, locking_mode, page_size, temp_store, writable_schema,
//   mmap_size), each with a message naming what was refused; extensions can never load (the VFS
//   has no loader and loading stays disabled);
// - prepared statements are cached (by their SQL, at most kStatementCacheSize);
// - a result is cut off at max_result_bytes (`sqlite.result_too_large`);
// - interrupt() (any thread) stops the running statement (`sqlite.interrupted`).
//
// Errors are RivetKit's group "sqlite" with a code per SQLite result class (sql_error,
// constraint_violation, not_authorized, interrupted, io_error, too_big, busy, full, corrupt,
// invalid_parameter, result_too_large); their metadata carries SQLite's extended result code.
// They are not public: a client sees an internal error unless the action rethrows.
//
// Threads: one thread at a time (the actor's SQL jobs are serialized), except interrupt().

#include "sql/page_file.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/sql_types.hpp>

#include <chrono>
#include <cstddef>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace rivetkit::sql {

inline constexpr std::size_t kStatementCacheSize = 64;

class SqlConnection {
 public:
  static Result<std::unique_ptr<SqlConnection>> open(std::shared_ptr<PageFile> file,
                                                     std::size_t max_result_bytes);
  ~SqlConnection();
  SqlConnection(const SqlConnection&) = delete;
  SqlConnection& operator=(const SqlConnection&) = delete;

  /// Runs every statement of `sql` in order; `params` bind to each statement that has
  /// parameters. The result is the last statement's that returned rows (else the last one's).
  Result<SqlResult> execute(std::string_view sql, const SqlParams& params);
  /// Applies the steps newer than the database's version, each in its own transaction; a failing
  /// step (SQL text or code) is rolled back and reported as `database.migration_failed` (earlier
  /// steps stay).
  Result<void> migrate(const std::vector<Migration>& steps);
  /// The latest migration version applied (0: none).
  Result<std::int64_t> schema_version();
  /// Stops the running statement (any thread).
  void interrupt();
  /// Statements still running at `deadline` are interrupted (`sqlite.interrupted`); nullopt:
  /// none. Set by the thread that runs them, before it does.
  void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline);
  /// Whether a transaction is open (BEGIN without COMMIT/ROLLBACK yet).
  bool in_transaction() const;
  /// Rolls back an open transaction (the actor stops with one open, or a transaction callback
  /// failed).
  void rollback();

 private:
  SqlConnection(sqlite3* db, std::shared_ptr<PageFile> file, std::size_t max_result_bytes);
  Result<SqlResult> run(sqlite3_stmt* stmt, const SqlParams& params, bool& returned_rows);
  /// A step written as code, inside the transaction migrate() opened for it.
  Result<void> run_step(const Migration& step);
  Result<sqlite3_stmt*> cached_statement(std::string_view sql);
  Result<void> exec_internal(const char* sql);
  Error error(int rc, std::string_view context) const;
  static int authorize(
      void* self, int action, const char* a, const char* b, const char*, const char*);

  sqlite3* db_;
  std::shared_ptr<PageFile> file_;  // outlives db_ (closed first)
  std::size_t max_result_bytes_;
  static int progress(void* self);

  std::optional<std::chrono::steady_clock::time_point> deadline_;
  bool setting_up_ = true;  // the connection's own pragmas pass the authorizer
  std::string refused_;     // why the authorizer refused the last statement
  // The statement cache: most recently used first.
  std::list<std::pair<std::string, sqlite3_stmt*>> lru_;
  std::unordered_map<std::string_view, std::list<std::pair<std::string, sqlite3_stmt*>>::iterator>
      by_sql_;
};

}  // namespace rivetkit::sql
