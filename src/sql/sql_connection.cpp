#include "sql/sql_connection.hpp"

#include "sql/page_vfs.hpp"
#include <rivetkit/error.hpp>

#include <sqlite3.h>

#include <cctype>
#include <cstring>
#include <string>

namespace rivetkit::sql {
namespace {

Error sqlite_error(std::string code, std::string message, int rc) {
  return Error{"sqlite", std::move(code), std::move(message),
               Value::object({{"sqliteCode", static_cast<std::int64_t>(rc)}}), false};
}

std::string code_for(int rc) {
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
      return "constraint_violation";
    case SQLITE_AUTH:
      return "not_authorized";
    case SQLITE_INTERRUPT:
      return "interrupted";
    case SQLITE_IOERR:
      return "io_error";
    case SQLITE_TOOBIG:
      return "too_big";
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "busy";
    case SQLITE_FULL:
      return "full";
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return "corrupt";
    case SQLITE_RANGE:
    case SQLITE_MISMATCH:
      return "invalid_parameter";
    default:
      return "sql_error";
  }
}

bool blank(const char* p, const char* end) {
  for (; p < end; ++p) {
    if (!std::isspace(static_cast<unsigned char>(*p)) && *p != ';') {
      return false;
    }
  }
  return true;
}

// Pragmas that would move the database off its pages, change how commits reach storage, or
// corrupt it: settable only by the connection's own setup.
constexpr const char* kLockedPragmas[] = {
    "journal_mode",   "synchronous",          "locking_mode",    "page_size",
    "temp_store",     "temp_store_directory", "writable_schema", "mmap_size",
    "schema_version", "data_store_directory",
};

std::size_t value_bytes(const Value& v) {
  if (v.is_string()) {
    return v.as_string().size();
  }
  if (v.is_bytes()) {
    return v.as_bytes().size();
  }
  return 8;
}

}  // namespace

Result<std::unique_ptr<SqlConnection>> SqlConnection::open(std::shared_ptr<PageFile> file,
                                                           std::size_t max_result_bytes) {
  auto db = open_on_pages(*file);
  if (!db) {
    return fail(db.error());
  }
  std::unique_ptr<SqlConnection> conn(new SqlConnection(*db, std::move(file), max_result_bytes));
  sqlite3_set_authorizer(conn->db_, &SqlConnection::authorize, conn.get());
  // EXCLUSIVE first: the journal mode is then settled without any other connection in mind.
  for (const char* pragma :
       {"PRAGMA locking_mode=EXCLUSIVE", "PRAGMA page_size=4096", "PRAGMA journal_mode=MEMORY",
        "PRAGMA temp_store=MEMORY", "PRAGMA synchronous=NORMAL"}) {
    if (auto r = conn->exec_internal(pragma); !r) {
      return fail(r.error());
    }
  }
  conn->setting_up_ = false;
  return conn;
}

SqlConnection::SqlConnection(sqlite3* db,
                             std::shared_ptr<PageFile> file,
                             std::size_t max_result_bytes)
    : db_(db), file_(std::move(file)), max_result_bytes_(max_result_bytes) {}

SqlConnection::~SqlConnection() {
  for (auto& [sql, stmt] : lru_) {
    sqlite3_finalize(stmt);
  }
  sqlite3_close_v2(db_);
}

int SqlConnection::authorize(
    void* self_ptr, int action, const char* a, const char* b, const char*, const char*) {
  auto* self = static_cast<SqlConnection*>(self_ptr);
  if (self->setting_up_) {
    return SQLITE_OK;
  }
  switch (action) {
    case SQLITE_DETACH:
      return SQLITE_OK;  // only what was attached can be detached
    case SQLITE_ATTACH:
      if (a != nullptr && a[0] == '\0') {
        // A temporary database in memory (temp_store=MEMORY): what VACUUM attaches.
        return SQLITE_OK;
      }
      self->refused_ =
          "ATTACH is not allowed: the actor's database is its own and the only one it may use";
      return SQLITE_DENY;
    case SQLITE_PRAGMA: {
      if (a == nullptr) {
        return SQLITE_OK;
      }
      for (const char* locked : kLockedPragmas) {
        if (sqlite3_stricmp(a, locked) == 0
            && (b != nullptr || std::strcmp(locked, "writable_schema") == 0)) {
          self->refused_ = std::string("PRAGMA ") + a +
                           " cannot be changed: the runtime sets it so that every committed "
                           "transaction reaches the actor's storage";
          return SQLITE_DENY;
        }
      }
      return SQLITE_OK;
    }
    case SQLITE_FUNCTION:
      if (b != nullptr && sqlite3_stricmp(b, "load_extension") == 0) {
        self->refused_ = "load_extension is not allowed: extensions cannot be loaded";
        return SQLITE_DENY;
      }
      return SQLITE_OK;
    default:
      return SQLITE_OK;
  }
}

Error SqlConnection::error(int rc, std::string_view context) const {
  std::string message;
  if (((rc & 0xff) == SQLITE_AUTH || (rc & 0xff) == SQLITE_INTERRUPT) && !refused_.empty()) {
    message = refused_;
  } else {
    message = sqlite3_errmsg(db_);
  }
  if (!context.empty()) {
    message = std::string(context) + ": " + message;
  }
  return sqlite_error(code_for(rc), std::move(message), rc);
}

Result<void> SqlConnection::exec_internal(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string message = err != nullptr ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    return fail(sqlite_error(code_for(rc), std::string(sql) + ": " + message, rc));
  }
  return {};
}

Result<sqlite3_stmt*> SqlConnection::cached_statement(std::string_view sql) {
  if (auto it = by_sql_.find(sql); it != by_sql_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }
  return static_cast<sqlite3_stmt*>(nullptr);
}

Result<SqlResult> SqlConnection::run(sqlite3_stmt* stmt,
                                     const SqlParams& params,
                                     bool& returned_rows) {
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  int count = sqlite3_bind_parameter_count(stmt);
  std::size_t next_positional = 0;
  for (int i = 1; i <= count; ++i) {
    const char* name = sqlite3_bind_parameter_name(stmt, i);
    const Value* value = nullptr;
    std::string label;
    if (name == nullptr || name[0] == '?') {
      std::size_t index = next_positional;
      if (name != nullptr && name[1] != '\0') {
        index = static_cast<std::size_t>(std::strtoull(name + 1, nullptr, 10)) - 1;
      }
      next_positional = index + 1;
      label = "?" + std::to_string(index + 1);
      if (index < params.positional.size()) {
        value = &params.positional[index];
      }
    } else {
      label = name;
      for (const auto& m : params.named) {
        if (m.key == name + 1 || m.key == name) {
          value = &m.value;
          break;
        }
      }
    }
    if (value == nullptr) {
      return fail(
          sqlite_error("invalid_parameter", "No value given for parameter " + label, SQLITE_RANGE));
    }
    int rc = SQLITE_OK;
    switch (value->kind()) {
      case Value::Kind::kUndefined:
      case Value::Kind::kNull:
        rc = sqlite3_bind_null(stmt, i);
        break;
      case Value::Kind::kBool:
        rc = sqlite3_bind_int64(stmt, i, value->as_bool() ? 1 : 0);
        break;
      case Value::Kind::kInt:
        rc = sqlite3_bind_int64(stmt, i, value->as_int());
        break;
      case Value::Kind::kDouble:
        rc = sqlite3_bind_double(stmt, i, value->as_double());
        break;
      case Value::Kind::kString:
        rc = sqlite3_bind_text64(stmt, i, value->as_string().data(), value->as_string().size(),
                                 SQLITE_TRANSIENT, SQLITE_UTF8);
        break;
      case Value::Kind::kBytes:
        rc = sqlite3_bind_blob64(stmt, i, value->as_bytes().data(), value->as_bytes().size(),
                                 SQLITE_TRANSIENT);
        break;
      default:
        return fail(sqlite_error(
            "invalid_parameter",
            "Parameter " + label + " is " + std::string(value->kind_name())
                + ": SQLite takes null, booleans, integers, doubles, strings and bytes",
            SQLITE_MISMATCH));
    }
    if (rc != SQLITE_OK) {
      return fail(error(rc, "binding " + label));
    }
  }
  SqlResult out;
  int columns = sqlite3_column_count(stmt);
  returned_rows = columns > 0;
  for (int c = 0; c < columns; ++c) {
    const char* n = sqlite3_column_name(stmt, c);
    out.columns.emplace_back(n != nullptr ? n : "");
  }
  std::size_t bytes = 0;
  refused_.clear();
  while (true) {
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) {
      break;
    }
    if (rc != SQLITE_ROW) {
      auto err = error(rc, "");
      sqlite3_reset(stmt);
      return fail(std::move(err));
    }
    Array row;
    row.reserve(static_cast<std::size_t>(columns));
    for (int c = 0; c < columns; ++c) {
      switch (sqlite3_column_type(stmt, c)) {
        case SQLITE_INTEGER:
          row.emplace_back(static_cast<std::int64_t>(sqlite3_column_int64(stmt, c)));
          break;
        case SQLITE_FLOAT:
          row.emplace_back(sqlite3_column_double(stmt, c));
          break;
        case SQLITE_TEXT: {
          const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
          row.emplace_back(std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt, c))));
          break;
        }
        case SQLITE_BLOB: {
          const auto* p = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt, c));
          auto n = static_cast<std::size_t>(sqlite3_column_bytes(stmt, c));
          row.emplace_back(Bytes(p, p + n));
          break;
        }
        default:
          row.emplace_back(nullptr);
      }
      bytes += value_bytes(row.back());
    }
    if (bytes > max_result_bytes_) {
      sqlite3_reset(stmt);
      return fail(sqlite_error("result_too_large",
                               "The result is larger than " + std::to_string(max_result_bytes_)
                                   + " bytes: select fewer rows or columns (LIMIT)",
                               SQLITE_TOOBIG));
    }
    out.rows.push_back(std::move(row));
  }
  out.changes = sqlite3_changes64(db_);
  out.last_insert_row_id = sqlite3_last_insert_rowid(db_);
  sqlite3_reset(stmt);
  return out;
}

Result<SqlResult> SqlConnection::execute(std::string_view sql, const SqlParams& params) {
  refused_.clear();
  auto cached = cached_statement(sql);
  if (*cached != nullptr) {
    bool rows = false;
    return run(*cached, params, rows);
  }
  const char* p = sql.data();
  const char* end = sql.data() + sql.size();
  SqlResult result;
  bool have_rows_result = false;
  bool first = true;
  while (p < end) {
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    int rc = sqlite3_prepare_v3(db_, p, static_cast<int>(end - p),
                                first ? SQLITE_PREPARE_PERSISTENT : 0, &stmt, &tail);
    if (rc != SQLITE_OK) {
      return fail(error(rc, ""));
    }
    if (stmt == nullptr) {  // only a comment or white space was left
      break;
    }
    bool single = first && blank(tail, end);
    first = false;
    bool rows = false;
    auto r = run(stmt, params, rows);
    if (single) {
      // Keep it for the next call with the same SQL.
      lru_.emplace_front(std::string(sql), stmt);
      by_sql_[lru_.front().first] = lru_.begin();
      if (lru_.size() > kStatementCacheSize) {
        by_sql_.erase(lru_.back().first);
        sqlite3_finalize(lru_.back().second);
        lru_.pop_back();
      }
    } else {
      sqlite3_finalize(stmt);
    }
    if (!r) {
      return fail(r.error());
    }
    if (rows || !have_rows_result) {
      std::int64_t changes = r->changes;
      std::int64_t rowid = r->last_insert_row_id;
      if (rows || result.columns.empty()) {
        result = std::move(*r);
        have_rows_result = rows;
      }
      result.changes = changes;
      result.last_insert_row_id = rowid;
    } else {
      result.changes = r->changes;
      result.last_insert_row_id = r->last_insert_row_id;
    }
    p = tail;
  }
  return result;
}

Result<std::int64_t> SqlConnection::schema_version() {
  setting_up_ = true;
  auto created = exec_internal(
      "CREATE TABLE IF NOT EXISTS _rivetkit_migrations (version INTEGER PRIMARY KEY, "
      "applied_at INTEGER NOT NULL)");
  setting_up_ = false;
  if (!created) {
    return fail(created.error());
  }
  auto r = execute("SELECT coalesce(max(version), 0) FROM _rivetkit_migrations", {});
  if (!r) {
    return fail(r.error());
  }
  return r->rows.at(0).at(0).as_int();
}

namespace {

// A code step's view of the connection: its statements throw instead of returning errors.
class StepDb final : public MigrationDb {
 public:
  explicit StepDb(SqlConnection& conn) : conn_(conn) {}

 protected:
  SqlResult run(std::string sql, SqlParams params) override {
    auto r = conn_.execute(sql, params);
    if (!r) {
      throw ActorError(r.error());
    }
    return std::move(*r);
  }

 private:
  SqlConnection& conn_;
};

}  // namespace

Result<void> SqlConnection::run_step(const Migration& step) {
  StepDb db(*this);
  try {
    step.run(db);
  } catch (const ActorError& e) {
    return fail(e.error());
  } catch (const std::exception& e) {
    return fail(Error{"database", "migration_threw", e.what(), std::nullopt, false});
  } catch (...) {
    return fail(Error{"database", "migration_threw", "the step threw a non-exception", std::nullopt,
                      false});
  }
  if (!in_transaction()) {
    return fail(Error{"database", "migration_misuse",
                      "the step ended its own transaction (COMMIT or ROLLBACK inside a step)",
                      std::nullopt, false});
  }
  return {};
}

Result<void> SqlConnection::migrate(const std::vector<Migration>& steps) {
  auto version = schema_version();
  if (!version) {
    return fail(version.error());
  }
  for (const auto& step : steps) {
    if (step.version <= *version) {
      continue;
    }
    auto failed = [&](const Error& e) -> Error {
      rollback();
      return Error{"database", "migration_failed",
                   "Migration " + std::to_string(step.version) + " failed (the database stays at "
                       "version " + std::to_string(*version) + "): " + e.message,
                   Value::object({{"version", step.version},
                                  {"sqliteError", e.group + "." + e.code}}),
                   // Public: whoever calls the actor learns why it cannot start (RivetKit passes
                   // the migration's error on too).
                   true};
    };
    if (auto r = exec_internal("BEGIN IMMEDIATE"); !r) {
      return fail(failed(r.error()));
    }
    if (step.run) {
      if (auto r = run_step(step); !r) {
        return fail(failed(r.error()));
      }
    } else if (auto r = execute(step.sql, {}); !r) {
      return fail(failed(r.error()));
    }
    SqlParams record;
    record.positional = {step.version};
    auto r = execute(
        "INSERT INTO _rivetkit_migrations (version, applied_at) VALUES (?, unixepoch() * 1000)",
        record);
    if (!r) {
      return fail(failed(r.error()));
    }
    if (auto c = exec_internal("COMMIT"); !c) {
      return fail(failed(c.error()));
    }
    *version = step.version;
  }
  return {};
}

void SqlConnection::interrupt() {
  sqlite3_interrupt(db_);
}

void SqlConnection::set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) {
  deadline_ = deadline;
  // Checked every few thousand virtual machine steps: a handful of clock reads per millisecond
  // of a long statement, none for a short one.
  sqlite3_progress_handler(db_, deadline ? 4096 : 0, deadline ? &SqlConnection::progress : nullptr,
                           this);
}

int SqlConnection::progress(void* self_ptr) {
  auto* self = static_cast<SqlConnection*>(self_ptr);
  if (self->deadline_ && std::chrono::steady_clock::now() >= *self->deadline_) {
    self->refused_ = "the statement ran past the action timeout and was interrupted";
    return 1;
  }
  return 0;
}

bool SqlConnection::in_transaction() const {
  return sqlite3_get_autocommit(db_) == 0;
}

void SqlConnection::rollback() {
  if (in_transaction()) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

}  // namespace rivetkit::sql
