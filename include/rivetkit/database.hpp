#pragma once
/// The actor's SQLite database (`c.db()`, RivetKit's `c.db`): tables private to the actor, kept
/// across sleeps, deleted when the actor is destroyed.
///
///     rivetkit::actor<State>("notes")
///         .database({{1, "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)"},
///                    {2, "ALTER TABLE notes ADD COLUMN at INTEGER"}})
///         .action("add", [](auto& c, std::string text) -> rivetkit::Task<std::int64_t> {
///           auto r = co_await c.db().execute("INSERT INTO notes (text) VALUES (?)", text);
///           co_return r.last_insert_row_id;
///         })
///         .action("list", [](auto& c) -> rivetkit::Task<rivetkit::Array> {
///           co_return (co_await c.db().execute("SELECT id, text FROM notes")).objects();
///         });
///
/// Migrations: each step runs once, in version order, when the actor starts with an older
/// database, before create_state / on_create / create_vars / on_wake; each is one transaction, so
/// a failing step changes nothing and fails the start (`database.migration_failed`), leaving the
/// database at the previous version.
///
/// Durability: a statement's changes are visible to the actor's next statements at once and are
/// committed to storage with the actor's state, connections, schedules and KV writes of the same
/// turn, in one atomic write; the call's reply (and any event after it) leaves only once that
/// write is durable. A crash therefore loses no acknowledged row, and never keeps rows without
/// the state change that went with them (or the reverse).
///
/// Statements run on SQL worker threads, one at a time per actor and in call order, so a long
/// query does not hold up other actors. One running past the action timeout is interrupted
/// (`sqlite.interrupted`).
///
/// Errors (ActorError): group "sqlite" for what SQLite refuses (`sql_error`,
/// `constraint_violation`, `not_authorized` for the sandbox: ATTACH, extensions, pragmas that
/// change durability, `invalid_parameter`, `result_too_large`, ...), not shown to clients unless
/// rethrown; `database.not_enabled` (public) when the actor declares no database.

#include <rivetkit/detail/access.hpp>
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/error.hpp>
#include <rivetkit/sql_types.hpp>
#include <rivetkit/task.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace rivetkit {

namespace detail {
template <class... A>
SqlParams positional(const A&... args) {
  SqlParams p;
  p.positional = Array{to_value(args)...};
  return p;
}
template <class T>
struct TaskResult;
template <class T>
struct TaskResult<Task<T>> {
  using type = T;
};
}  // namespace detail

/// An open transaction (Database::transaction / Database::begin). Statements run through it;
/// everyone else's wait until it ends. Dropped without commit() or rollback(), it rolls back.
class Transaction {
 public:
  Transaction(Transaction&& other) noexcept
      : api_(std::exchange(other.api_, nullptr)), id_(other.id_), ended_(other.ended_) {}
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (api_ != nullptr && ended_ == nullptr) {
      api_->abandon(id_);
    }
  }

  template <class... A>
  Task<SqlResult> execute(std::string sql, const A&... params) const {
    return open()->execute_in(id_, std::move(sql), detail::positional(params...));
  }
  /// With named parameters (`:name`, `@name`, `$name`).
  Task<SqlResult> execute_named(std::string sql, Object params) const {
    SqlParams p;
    p.named = std::move(params);
    return open()->execute_in(id_, std::move(sql), std::move(p));
  }
  /// Commits; the transaction is over: using it again throws `sqlite.transaction_closed`.
  Task<void> commit() {
    auto* api = open();
    ended_ = "committed";
    return api->commit(id_);
  }
  Task<void> rollback() {
    auto* api = open();
    ended_ = "rolled back";
    return api->rollback(id_);
  }

 private:
  friend struct detail::Access;
  Transaction(detail::DbApi* api, std::uint64_t id) : api_(api), id_(id) {}
  detail::DbApi* open() const {
    if (api_ == nullptr || ended_ != nullptr) {
      throw ActorError(Error{"sqlite", "transaction_closed",
                             std::string("The transaction has already ")
                                 + (ended_ != nullptr ? ended_ : "ended")
                                 + ": run statements before its commit or rollback",
                             std::nullopt, false});
    }
    return api_;
  }

  detail::DbApi* api_;
  std::uint64_t id_;
  const char* ended_ = nullptr;  // "committed" or "rolled back" once over
};

namespace detail {
// The coroutines behind Database: free functions that copy what they use into their frame, so
// `auto op = c.db().transaction(...)` stays valid after the Database temporary is gone.
inline Task<Transaction> begin_transaction(DbApi* api,
                                           std::optional<std::chrono::milliseconds> timeout) {
  auto op = api->begin(timeout);
  auto id = co_await std::move(op);
  co_return Access::make<Transaction>(api, id);
}

template <class F>
Task<typename TaskResult<std::invoke_result_t<F&, Transaction&>>::type> run_transaction(
    DbApi* api, F body, std::optional<std::chrono::milliseconds> timeout) {
  using R = typename TaskResult<std::invoke_result_t<F&, Transaction&>>::type;
  auto begin_op = begin_transaction(api, timeout);
  auto tx = co_await std::move(begin_op);
  std::exception_ptr failed;
  if constexpr (std::is_void_v<R>) {
    try {
      co_await body(tx);
    } catch (...) {
      failed = std::current_exception();
    }
    if (failed) {
      co_await tx.rollback();
      std::rethrow_exception(failed);
    }
    co_await tx.commit();
  } else {
    std::optional<R> out;
    try {
      out.emplace(co_await body(tx));
    } catch (...) {
      failed = std::current_exception();
    }
    if (failed) {
      co_await tx.rollback();
      std::rethrow_exception(failed);
    }
    co_await tx.commit();
    co_return std::move(*out);
  }
}
}  // namespace detail

class Database {
 public:
  /// Runs `sql` with positional parameters bound to `?` (or `?N`). Several statements separated
  /// by `;` run in order; the result is the last one's that returned rows.
  template <class... A>
  Task<SqlResult> execute(std::string sql, const A&... params) const {
    return api_->execute(std::move(sql), detail::positional(params...));
  }
  /// With named parameters (`:name`, `@name`, `$name`), given without their sigil.
  Task<SqlResult> execute_named(std::string sql, Object params) const {
    SqlParams p;
    p.named = std::move(params);
    return api_->execute(std::move(sql), std::move(p));
  }

  /// Begins a transaction; commit it with `co_await tx.commit()`.
  /// Past `timeout` (default: the action timeout plus a second) it expires: rolled back, the
  /// statements of other calls waiting behind it rejected, and the handle answers
  /// `sqlite.transaction_expired` (a backstop against a transaction that waits for itself).
  Task<Transaction> begin(std::optional<std::chrono::milliseconds> timeout = std::nullopt) const {
    return detail::begin_transaction(api_, timeout);
  }

  /// Runs `body(tx)` in a transaction: committed when it returns, rolled back (and the exception
  /// rethrown) when it throws.
  ///     co_await c.db().transaction([&](rivetkit::Transaction& tx) -> rivetkit::Task<void> {
  ///       co_await tx.execute("UPDATE accounts SET balance = balance - ? WHERE id = ?", n, a);
  ///       co_await tx.execute("UPDATE accounts SET balance = balance + ? WHERE id = ?", n, b);
  ///     });
  /// `timeout`: as for begin().
  template <class F>
  Task<typename detail::TaskResult<std::invoke_result_t<F&, Transaction&>>::type> transaction(
      F body, std::optional<std::chrono::milliseconds> timeout = std::nullopt) const {
    return detail::run_transaction(api_, std::move(body), timeout);
  }

 private:
  friend struct detail::Access;
  explicit Database(detail::DbApi* api) : api_(api) {}
  detail::DbApi* api_;
};

}  // namespace rivetkit
