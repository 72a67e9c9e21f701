#include "core/actor/actor_database.hpp"

#include "sql/sql_workers.hpp"
#include "util/log.hpp"
#include <rivetkit/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <future>
#include <utility>

namespace rivetkit::core {

namespace asio = boost::asio;

namespace database_keys {

namespace {
std::string be32(std::uint32_t v) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) {
    out[static_cast<std::size_t>(i)] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
  }
  return out;
}
std::uint32_t read_be32(std::string_view s) {
  std::uint32_t v = 0;
  for (char c : s.substr(0, 4)) {
    v = (v << 8) | static_cast<unsigned char>(c);
  }
  return v;
}
}  // namespace

std::string size_key() {
  return std::string{kPrefix, '\x00'};
}

std::string page_key(std::uint32_t pgno) {
  return std::string{kPrefix, '\x01'} + be32(pgno);
}

std::optional<std::uint32_t> page_of(std::string_view key) {
  if (key.size() != 6 || key[0] != kPrefix || key[1] != '\x01') {
    return std::nullopt;
  }
  return read_be32(key.substr(2));
}

std::optional<std::uint32_t> size_of(std::string_view value) {
  if (value.size() != 4) {
    return std::nullopt;
  }
  return read_be32(value);
}

std::string size_value(std::uint32_t pages) {
  return be32(pages);
}

}  // namespace database_keys

namespace {

using Job = std::function<Result<SqlResult>(sql::SqlConnection&)>;

// How long a worker waits for a page read before failing the statement (the store answers long
// before unless it is gone).
constexpr auto kPageReadTimeout = std::chrono::seconds(60);

Error not_enabled() {
  return Error{"database", "not_enabled",
               "This actor has no database: declare one with .database(...) in its definition to "
               "use c.db()",
               std::nullopt, true};
}

Error closed() {
  return Error{"sqlite", "closed", "The actor's database is closed: the actor has stopped",
               std::nullopt, false};
}

Error transaction_closed(std::uint64_t txn) {
  return Error{"sqlite", "transaction_closed",
               "Transaction " + std::to_string(txn) + " has already ended", std::nullopt, false};
}

// Pages not in memory, read from the actor's store on its strand while the worker waits.
class StorePages final : public sql::PageSource {
 public:
  StorePages(storage::ActorStore& store, asio::any_io_executor strand, std::weak_ptr<void> owner)
      : store_(store), strand_(std::move(strand)), owner_(std::move(owner)) {}

  Result<std::optional<std::string>> read_page(std::uint32_t pgno) override {
    auto read = [](storage::ActorStore* store, std::weak_ptr<void> owner,
                   std::string key) -> asio::awaitable<Result<std::optional<std::string>>> {
      auto held = owner.lock();
      if (!held) {
        co_return fail(closed());
      }
      std::vector<std::string> keys;
      keys.push_back(std::move(key));
      auto op = store->kv_store().get(std::move(keys));
      auto values = co_await std::move(op);
      if (!values) {
        co_return fail(values.error());
      }
      co_return std::move(values->at(0));
    };
    auto future = asio::co_spawn(strand_, read(&store_, owner_, database_keys::page_key(pgno)),
                                 asio::use_future);
    if (future.wait_for(kPageReadTimeout) != std::future_status::ready) {
      return fail(Error{"sqlite", "io_error", "Reading a page of the database timed out",
                        std::nullopt, false});
    }
    try {
      return future.get();
    } catch (const std::exception& e) {
      return fail(Error{"sqlite", "io_error", std::string("Reading a page failed: ") + e.what(),
                        std::nullopt, false});
    }
  }

 private:
  storage::ActorStore& store_;
  asio::any_io_executor strand_;
  std::weak_ptr<void> owner_;
};

// Runs `job` on a SQL worker, then completes on the caller's executor. Deliberately not
// cancellable: a statement cannot be abandoned half-way (the connection stays in use until it
// returns), so a caller that stops waiting (the action timed out) still waits for it; statements
// are bounded by their deadline instead.
template <class R, class Token>
auto async_on_worker(std::function<R()> job, Token&& token) {
  return asio::async_initiate<Token, void(std::exception_ptr, R)>(
      [](auto handler, std::function<R()> work) {
        auto caller = asio::get_associated_executor(handler);
        auto guard = asio::make_work_guard(caller);
        asio::post(sql::sql_executor(), [work = std::move(work), handler = std::move(handler),
                                         guard = std::move(guard)]() mutable {
          std::exception_ptr failed;
          std::optional<R> out;
          try {
            out.emplace(work());
          } catch (...) {
            failed = std::current_exception();
          }
          auto ex = guard.get_executor();
          asio::post(ex, [handler = std::move(handler), failed, out = std::move(out)]() mutable {
            std::move(handler)(failed, out ? std::move(*out) : R{});
          });
        });
      },
      token, std::move(job));
}

template <class R>
Task<R> on_worker(std::function<R()> job) {
  auto op = async_on_worker<R>(std::move(job), asio::use_awaitable);
  co_return co_await std::move(op);
}

}  // namespace

// ---- the lease ----------------------------------------------------------------------------------

Task<ActorDatabase::Lease> ActorDatabase::acquire() {
  if (!leased_) {
    leased_ = true;
    co_return Lease(this);
  }
  auto waiter = std::make_shared<Waiter>(strand_);
  waiters_.push_back(waiter);
  // Whatever ends this wait (the lease handed over, or the waiting coroutine destroyed), the
  // lease is never lost: a grant nobody takes is passed on.
  struct Guard {
    ActorDatabase* db;
    std::shared_ptr<Waiter> waiter;
    bool taken = false;
    ~Guard() {
      if (taken) {
        return;
      }
      if (waiter->granted) {
        db->release();
      } else {
        std::erase(db->waiters_, waiter);
      }
    }
  } guard{this, waiter};
  while (!waiter->granted && !waiter->rejected) {
    auto op = waiter->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    co_await std::move(op);
  }
  guard.taken = true;
  if (waiter->rejected) {
    throw ActorError(*waiter->rejected);
  }
  co_return Lease(this);
}

void ActorDatabase::release() {
  if (waiters_.empty()) {
    leased_ = false;
    return;
  }
  auto next = waiters_.front();
  waiters_.pop_front();
  next->granted = true;
  next->timer.cancel();
}

// ---- the part -----------------------------------------------------------------------------------

ActorDatabase::ActorDatabase(std::string actor_id,
                             const detail::DatabaseDefinition* definition,
                             storage::ActorStore& store,
                             asio::any_io_executor strand,
                             std::chrono::milliseconds statement_timeout,
                             Host& host)
    : actor_id_(std::move(actor_id)),
      definition_(definition),
      store_(store),
      strand_(std::move(strand)),
      statement_timeout_(statement_timeout),
      host_(host) {}

ActorDatabase::~ActorDatabase() = default;

Task<Result<void>> ActorDatabase::open() {
  if (definition_ == nullptr) {
    co_return Result<void>{};
  }
  auto hold = host_.hold();
  storage::KvQuery query;
  query.prefix = std::string(1, database_keys::kPrefix);
  query.limit = kPreloadPages + 1;
  auto list_op = store_.kv_store().list(std::move(query));
  auto listed = co_await std::move(list_op);
  if (!listed) {
    co_return fail(listed.error());
  }
  std::uint32_t size_pages = 0;
  std::map<std::uint32_t, std::string> pages;
  for (auto& entry : *listed) {
    if (entry.key == database_keys::size_key()) {
      size_pages = database_keys::size_of(entry.value).value_or(0);
    } else if (auto pgno = database_keys::page_of(entry.key)) {
      pages.emplace(*pgno, std::move(entry.value));
    }
  }
  stored_size_ = size_pages;
  file_ = std::make_shared<sql::PageFile>(
      size_pages, std::move(pages), std::make_shared<StorePages>(store_, strand_, hold),
      std::max(kMinCachePages, definition_->options.page_cache_pages));
  auto lease = co_await acquire();
  auto file = file_;
  const auto* definition = definition_;
  std::function<Result<std::shared_ptr<sql::SqlConnection>>()> work = [file, definition]() {
    auto conn = sql::SqlConnection::open(file, kMaxResultBytes);
    if (!conn) {
      return Result<std::shared_ptr<sql::SqlConnection>>(fail(conn.error()));
    }
    std::shared_ptr<sql::SqlConnection> shared(std::move(*conn));
    if (auto m = shared->migrate(definition->migrations); !m) {
      return Result<std::shared_ptr<sql::SqlConnection>>(fail(m.error()));
    }
    return Result<std::shared_ptr<sql::SqlConnection>>(std::move(shared));
  };
  auto open_op = on_worker(std::move(work));
  auto opened = co_await std::move(open_op);
  if (!opened) {
    log::error("database open failed actor_id={}: {}.{}: {}", actor_id_, opened.error().group,
               opened.error().code, opened.error().message);
    file_.reset();
    co_return fail(opened.error());
  }
  conn_ = std::move(*opened);
  after_job();
  co_return Result<void>{};
}

Task<void> ActorDatabase::close() {
  if (!conn_ || closed_) {
    closed_ = true;
    co_return;
  }
  auto hold = host_.hold();
  auto lease = co_await acquire();
  closed_ = true;
  auto conn = std::move(conn_);
  open_txn_ = 0;
  // Closing runs on a worker too: it may roll back a transaction left open.
  std::function<int()> work = [conn = std::move(conn)]() mutable {
    conn->rollback();
    conn.reset();
    return 0;
  };
  auto close_op = on_worker(std::move(work));
  co_await std::move(close_op);
  file_.reset();
}

void ActorDatabase::take_changes(storage::ActorWrite& write) {
  if (!file_) {
    return;
  }
  auto committed = file_->take_committed();
  if (!committed) {
    return;
  }
  for (auto& [pgno, page] : committed->pages) {
    write.kv.put(database_keys::page_key(pgno), std::move(page));
  }
  if (committed->size_pages != stored_size_) {
    if (committed->size_pages < stored_size_) {
      write.kv.remove_range(database_keys::page_key(committed->size_pages + 1),
                            database_keys::page_key(stored_size_) + '\x00');
    }
    write.kv.put(database_keys::size_key(), database_keys::size_value(committed->size_pages));
    stored_size_ = committed->size_pages;
  }
}

void ActorDatabase::write_durable() {
  if (file_) {
    file_->durable();
  }
}

void ActorDatabase::check_usable() const {
  if (definition_ == nullptr) {
    throw ActorError(not_enabled());
  }
  if (closed_ || !conn_ || !host_.db_open()) {
    throw ActorError(closed());
  }
}

void ActorDatabase::after_job() {
  if (!file_) {
    return;
  }
  // The caller resumes in this handler: the pages go to the next write together with what it
  // changes before it waits again (PageFile::publish).
  file_->publish();
  if (file_->has_committed()) {
    host_.database_changed();
  }
}

Task<Result<SqlResult>> ActorDatabase::run(
    std::function<Result<SqlResult>(sql::SqlConnection&)> job) {
  auto conn = conn_;
  auto deadline = std::chrono::steady_clock::now() + statement_timeout_;
  std::function<Result<SqlResult>()> work = [conn, deadline, job = std::move(job)]() {
    conn->set_deadline(deadline);
    auto out = job(*conn);
    conn->set_deadline(std::nullopt);
    return out;
  };
  auto work_op = on_worker(std::move(work));
  auto r = co_await std::move(work_op);
  after_job();
  co_return r;
}

Task<SqlResult> ActorDatabase::run_or_throw(
    std::function<Result<SqlResult>(sql::SqlConnection&)> job) {
  auto op = run(std::move(job));
  auto r = co_await std::move(op);
  if (!r) {
    log::debug("sql failed actor_id={}: {}.{}: {}", actor_id_, r.error().group, r.error().code,
               r.error().message);
    throw ActorError(r.error());
  }
  co_return std::move(*r);
}

Task<SqlResult> ActorDatabase::execute(std::string sql, SqlParams params) {
  auto hold = host_.hold();
  check_usable();
  auto lease = co_await acquire();
  check_usable();
  Job job = [sql = std::move(sql), params = std::move(params)](sql::SqlConnection& c) {
    return c.execute(sql, params);
  };
  auto op = run_or_throw(std::move(job));
  auto result = co_await std::move(op);
  // A plain BEGIN left open across calls: the next callers' statements run inside it (the lease
  // only orders statements). RivetKit warns once per database; so do we.
  if (conn_ && open_txn_ == 0 && conn_->in_transaction() && !warned_manual_
      && definition_->options.warn_on_manual_transactions) {
    warned_manual_ = true;
    log::warn(
        "actor {}: Manual cross-call SQLite transactions can interleave with the statements of "
        "other calls (a BEGIN run through execute() stays open after the call). Use "
        "c.db().transaction(...) instead. Set warnOnManualTransactions: false "
        "(DatabaseOptions::warn_on_manual_transactions) to silence this warning.",
        actor_id_);
  }
  co_return result;
}

Task<std::uint64_t> ActorDatabase::begin(std::optional<std::chrono::milliseconds> timeout) {
  auto hold = host_.hold();
  check_usable();
  auto lease = co_await acquire();
  check_usable();
  Job job = [](sql::SqlConnection& c) {
    return c.execute("BEGIN IMMEDIATE", SqlParams{});
  };
  auto op = run_or_throw(std::move(job));
  co_await std::move(op);
  const auto txn = next_txn_++;
  open_txn_ = txn;
  txn_lease_.emplace(std::move(lease));
  // A deadlock backstop (RivetKit's transaction timeout): a transaction that waits for itself (a
  // statement of the outer database, or a nested transaction, inside its body) would hold every
  // other statement of the actor for ever.
  const auto after = timeout.value_or(statement_timeout_);
  txn_watchdog_ = std::make_shared<asio::steady_timer>(strand_, after);
  auto watchdog = [](ActorDatabase* self, std::shared_ptr<void> held,
                     std::shared_ptr<asio::steady_timer> timer, std::uint64_t id,
                     std::chrono::milliseconds ms) -> Task<void> {
    auto wait_op = timer->async_wait(asio::as_tuple(asio::use_awaitable));
    auto [ec] = co_await std::move(wait_op);
    if (!ec && self->open_txn_ == id) {
      log::warn("transaction {} of actor {} still open after {} ms: rolled back", id,
                self->actor_id_, ms.count());
      self->expire(id, ms);
    }
    (void)held;
  };
  asio::co_spawn(strand_, watchdog(this, hold, txn_watchdog_, txn, after), asio::detached);
  co_return txn;
}

Error ActorDatabase::expired_error(std::uint64_t txn) const {
  auto it = expired_.find(txn);
  const auto ms = it == expired_.end() ? 0 : it->second;
  return Error{"sqlite", "transaction_expired",
               "The SQLite transaction expired after " + std::to_string(ms) +
                   " ms and was rolled back. The timeout is a deadlock safety backstop: raise the "
                   "transaction's timeout if it really needs longer, and look for a nested "
                   "transaction or a statement run on the outer `db` (c.db()) instead of `tx` "
                   "inside the transaction's body.",
               Value::object({{"timeoutMs", ms}}), false};
}

void ActorDatabase::expire(std::uint64_t txn, std::chrono::milliseconds after) {
  if (txn != open_txn_ || txn == 0) {
    return;
  }
  if (expired_.size() > 1024) {
    expired_.clear();
  }
  expired_[txn] = after.count();
  open_txn_ = 0;
  if (txn_watchdog_) {
    txn_watchdog_->cancel();
    txn_watchdog_.reset();
  }
  // What waited behind it never runs.
  auto error = expired_error(txn);
  for (auto& waiter : waiters_) {
    waiter->rejected = error;
    waiter->timer.cancel();
  }
  waiters_.clear();
  expired_lease_.emplace(std::move(*txn_lease_));
  txn_lease_.reset();
  if (txn_busy_) {
    finish_after_statement_ = true;  // the connection is in use: roll back once it returns
  } else {
    asio::co_spawn(strand_, finish_expired(host_.hold()), asio::detached);
  }
}

Task<void> ActorDatabase::finish_expired(std::shared_ptr<void> held) {
  if (conn_ && !closed_) {
    Job job = [](sql::SqlConnection& c) -> Result<SqlResult> {
      c.rollback();
      return SqlResult{};
    };
    auto op = run(std::move(job));
    co_await std::move(op);
  }
  expired_lease_.reset();  // the next caller's turn
  (void)held;
}

Task<SqlResult> ActorDatabase::execute_in(std::uint64_t txn, std::string sql, SqlParams params) {
  auto hold = host_.hold();
  check_usable();
  if (expired_.count(txn) != 0) {
    throw ActorError(expired_error(txn));
  }
  if (txn != open_txn_) {
    throw ActorError(transaction_closed(txn));
  }
  Job job = [sql = std::move(sql), params = std::move(params)](sql::SqlConnection& c) {
    return c.execute(sql, params);
  };
  txn_busy_ = true;
  auto op = run(std::move(job));
  auto r = co_await std::move(op);
  txn_busy_ = false;
  if (finish_after_statement_) {
    finish_after_statement_ = false;
    asio::co_spawn(strand_, finish_expired(hold), asio::detached);
  }
  if (expired_.count(txn) != 0) {
    throw ActorError(expired_error(txn));
  }
  if (!r) {
    throw ActorError(r.error());
  }
  co_return std::move(*r);
}

Task<void> ActorDatabase::end_transaction(std::uint64_t txn, bool commit) {
  auto hold = host_.hold();
  if (expired_.count(txn) != 0) {
    throw ActorError(expired_error(txn));
  }
  if (txn != open_txn_ || txn == 0) {
    throw ActorError(transaction_closed(txn));
  }
  open_txn_ = 0;
  if (txn_watchdog_) {
    txn_watchdog_->cancel();
    txn_watchdog_.reset();
  }
  auto lease = std::move(*txn_lease_);
  txn_lease_.reset();
  if (closed_ || !conn_) {
    throw ActorError(closed());
  }
  Job job = [commit](sql::SqlConnection& c) -> Result<SqlResult> {
    if (commit) {
      auto r = c.execute("COMMIT", SqlParams{});
      if (!r) {
        c.rollback();
      }
      return r;
    }
    c.rollback();
    return SqlResult{};
  };
  auto op = run(std::move(job));
  auto r = co_await std::move(op);
  if (!r) {
    throw ActorError(r.error());
  }
}

Task<void> ActorDatabase::commit(std::uint64_t txn) {
  return end_transaction(txn, true);
}

Task<void> ActorDatabase::rollback(std::uint64_t txn) {
  return end_transaction(txn, false);
}

void ActorDatabase::abandon(std::uint64_t txn) {
  if (txn != open_txn_ || txn == 0) {
    return;
  }
  auto rollback_task = [](ActorDatabase* self, std::shared_ptr<void> held,
                          std::uint64_t id) -> Task<void> {
    try {
      auto op = self->end_transaction(id, false);
      co_await std::move(op);
    } catch (const ActorError& e) {
      log::debug("rolling back transaction {} failed: {}", id, e.error().message);
    }
    (void)held;
  };
  asio::co_spawn(strand_, rollback_task(this, host_.hold(), txn), asio::detached);
}

}  // namespace rivetkit::core
