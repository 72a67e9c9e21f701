#include "storage/sqlite.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <utility>

namespace rivetkit::storage::sqlite {

Error make_error(sqlite3* db, int rc, std::string_view context) {
  // sqlite3_errmsg describes the most recent failure on the connection; fall back to the generic
  // text for the code when the connection is gone or the message belongs to another code.
  std::string detail = sqlite3_errstr(rc);
  if (db != nullptr && sqlite3_extended_errcode(db) == rc) {
    detail = sqlite3_errmsg(db);
  }
  return Error{"storage", "sqlite_error",
               fmt::format("{}: {} (sqlite code {})", context, detail, rc),
               Value::object({{"code", rc}}), false};
}

// ---------------------------------------------------------------------------------------------
// Statement

Statement::~Statement() {
  if (stmt_ != nullptr) {
    sqlite3_finalize(stmt_);
  }
}

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      bind_rc_(std::exchange(other.bind_rc_, 0)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) {
      sqlite3_finalize(stmt_);
    }
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_rc_ = std::exchange(other.bind_rc_, 0);
  }
  return *this;
}

namespace {
void note_bind(int& slot, int rc) {
  if (rc != SQLITE_OK && slot == SQLITE_OK) {
    slot = rc;
  }
}
}  // namespace

void Statement::bind_null(int index) {
  note_bind(bind_rc_, sqlite3_bind_null(stmt_, index));
}

void Statement::bind_int64(int index, std::int64_t value) {
  note_bind(bind_rc_, sqlite3_bind_int64(stmt_, index, value));
}

void Statement::bind_text(int index, std::string_view value) {
  // data() of an empty string_view may be null, which SQLite would bind as NULL.
  const char* p = value.data() != nullptr ? value.data() : "";
  note_bind(bind_rc_,
            sqlite3_bind_text64(stmt_, index, p, value.size(), SQLITE_STATIC, SQLITE_UTF8));
}

void Statement::bind_blob(int index, std::string_view value) {
  const char* p = value.data() != nullptr ? value.data() : "";
  note_bind(bind_rc_, sqlite3_bind_blob64(stmt_, index, p, value.size(), SQLITE_STATIC));
}

void Statement::bind_optional_blob(int index, const std::optional<std::string>& value) {
  if (value) {
    bind_blob(index, *value);
  } else {
    bind_null(index);
  }
}

void Statement::bind_optional_int64(int index, std::optional<std::int64_t> value) {
  if (value) {
    bind_int64(index, *value);
  } else {
    bind_null(index);
  }
}

Result<bool> Statement::step() {
  if (bind_rc_ != SQLITE_OK) {
    return fail(make_error(db_, bind_rc_, "bind"));
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    return true;
  }
  if (rc == SQLITE_DONE) {
    return false;
  }
  return fail(make_error(db_, rc, "step"));
}

Result<void> Statement::run() {
  while (true) {
    auto r = step();
    if (!r) {
      return fail(std::move(r.error()));
    }
    if (!*r) {
      return {};
    }
  }
}

bool Statement::column_is_null(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

std::int64_t Statement::column_int64(int index) const {
  return sqlite3_column_int64(stmt_, index);
}

std::string Statement::column_text(int index) const {
  const unsigned char* p = sqlite3_column_text(stmt_, index);
  int n = sqlite3_column_bytes(stmt_, index);
  if (p == nullptr || n <= 0) {
    return {};
  }
  return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
}

std::string Statement::column_blob(int index) const {
  // A zero-length BLOB comes back as a null pointer.
  const void* p = sqlite3_column_blob(stmt_, index);
  int n = sqlite3_column_bytes(stmt_, index);
  if (p == nullptr || n <= 0) {
    return {};
  }
  return std::string(static_cast<const char*>(p), static_cast<std::size_t>(n));
}

std::optional<std::string> Statement::column_optional_text(int index) const {
  if (column_is_null(index)) {
    return std::nullopt;
  }
  return column_text(index);
}

std::optional<std::string> Statement::column_optional_blob(int index) const {
  if (column_is_null(index)) {
    return std::nullopt;
  }
  return column_blob(index);
}

std::optional<std::int64_t> Statement::column_optional_int64(int index) const {
  if (column_is_null(index)) {
    return std::nullopt;
  }
  return column_int64(index);
}

void Statement::reset() noexcept {
  if (stmt_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  bind_rc_ = SQLITE_OK;
}

std::string Statement::sql() const {
  const char* s = stmt_ != nullptr ? sqlite3_sql(stmt_) : nullptr;
  return s != nullptr ? std::string(s) : std::string();
}

// ---------------------------------------------------------------------------------------------
// Database

Database::~Database() {
  close();
}

Database::Database(Database&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    close();
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

void Database::close() noexcept {
  if (db_ != nullptr) {
    // close_v2 defers the close until every statement is finalized, so member order does not
    // matter.
    sqlite3_close_v2(db_);
    db_ = nullptr;
  }
}

Result<Database> Database::open(const std::string& path, int flags, const char* vfs) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, vfs);
  Database db(raw);  // owns the handle even on failure
  if (rc != SQLITE_OK) {
    return fail(make_error(raw, rc, fmt::format("open {}", path)));
  }
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

Result<void> Database::exec(std::string_view sql) {
  std::string text(sql);
  char* msg = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &msg);
  if (rc != SQLITE_OK) {
    std::string detail = msg != nullptr ? msg : sqlite3_errstr(rc);
    sqlite3_free(msg);
    return fail(Error{"storage", "sqlite_error",
                      fmt::format("exec: {} (sqlite code {})", detail, rc),
                      Value::object({{"code", rc}}), false});
  }
  return {};
}

Result<Statement> Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, &tail);
  if (rc != SQLITE_OK) {
    return fail(make_error(db_, rc, fmt::format("prepare `{}`", sql)));
  }
  return Statement(db_, stmt);
}

Result<std::string> Database::query_text(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt) {
    return fail(std::move(stmt.error()));
  }
  auto row = stmt->step();
  if (!row) {
    return fail(std::move(row.error()));
  }
  if (!*row) {
    return std::string();
  }
  return stmt->column_text(0);
}

Result<std::int64_t> Database::query_int64(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt) {
    return fail(std::move(stmt.error()));
  }
  auto row = stmt->step();
  if (!row) {
    return fail(std::move(row.error()));
  }
  if (!*row) {
    return 0;
  }
  return stmt->column_int64(0);
}

bool Database::in_transaction() const {
  return db_ != nullptr && sqlite3_get_autocommit(db_) == 0;
}

std::int64_t Database::changes() const {
  return sqlite3_changes64(db_);
}

Error Database::last_error(std::string_view context) const {
  return make_error(db_, db_ != nullptr ? sqlite3_extended_errcode(db_) : SQLITE_MISUSE, context);
}

}  // namespace rivetkit::storage::sqlite
