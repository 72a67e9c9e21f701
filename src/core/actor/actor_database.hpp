#pragma once
// ActorDatabase: an actor's SQLite database (`c.db()`, include/rivetkit/database.hpp) as a part
// of the instance.
//
// Where it lives: in the actor's ordered KV (storage/kv.hpp), one 4 KiB page a key under the
// 0x08 namespace (database_keys below) plus a size key; in local mode that is the actor_kv table
// of the local store, in engine mode the engine's actor KV. So the database needs no file of its
// own, costs an actor without one nothing, moves with the data directory, and is deleted with the
// actor's other keys when it is destroyed.
//
// How it commits: SQLite runs over the page VFS (src/sql/page_vfs.hpp). A transaction SQLite
// commits becomes a set of pages in memory that the actor's next write takes (take_changes) with
// its state, connections, schedules and KV: one atomic write, through the output gate, so a
// reply waits for the rows it reports and rows never outlive or precede the state of their
// turn. While the start hooks run, nothing is written: what they commit goes with the creation
// write, or with the first write after the start.
//
// How it runs: every statement is a job on the SQL workers (src/sql/sql_workers.hpp), one at a
// time per actor and in call order (a FIFO lease on the actor's strand); a transaction holds the
// lease from begin to commit or rollback. Pages not in memory are read from the store by the
// worker, which waits for the read on the actor's strand. The first pages (up to kPreloadPages)
// are read when the database opens; at most DatabaseOptions::page_cache_pages stay in memory
// (sql/page_file.hpp), so an awake actor's memory does not grow with its database.
//
// Single strand, except the jobs (on a worker, each with the lease).

#include "sql/page_file.hpp"
#include "sql/sql_connection.hpp"
#include "storage/actor_store.hpp"
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace rivetkit::core {

namespace database_keys {
/// First byte of every key of the database.
inline constexpr char kPrefix = '\x08';
/// The database's size in pages (u32 big-endian).
std::string size_key();
/// Page `pgno` (1-based): kPrefix, 0x01, pgno (u32 big-endian).
std::string page_key(std::uint32_t pgno);
/// The page of a page key; nullopt for any other key.
std::optional<std::uint32_t> page_of(std::string_view key);
/// The value of the size key, and back.
std::optional<std::uint32_t> size_of(std::string_view value);
std::string size_value(std::uint32_t pages);
}  // namespace database_keys

class ActorDatabase final : public detail::DbApi {
 public:
  /// Pages read in one go when the database opens (1 MiB).
  static constexpr std::size_t kPreloadPages = 256;
  /// The fewest pages kept in memory while the actor is awake (DatabaseOptions::page_cache_pages,
  /// 2048 by default: 8 MiB), besides those not yet durable; the rest is read from the store when
  /// SQLite needs it (above this, SQLite's own page cache).
  static constexpr std::size_t kMinCachePages = 16;
  /// The most one result may hold in memory.
  static constexpr std::size_t kMaxResultBytes = 64 * 1024 * 1024;

  class Host {
   public:
    virtual ~Host() = default;
    /// Whether the instance's storage is still open to user calls.
    virtual bool db_open() const = 0;
    /// The database committed changes: the next write must take them.
    virtual void database_changed() = 0;
    /// Keeps the owner alive for the duration of a call.
    virtual std::shared_ptr<void> hold() = 0;
  };

  /// `definition`: the actor's declared database, or nullptr (every call then fails with
  /// database.not_enabled). `statement_timeout`: a statement running longer is interrupted.
  ActorDatabase(std::string actor_id,
                const detail::DatabaseDefinition* definition,
                storage::ActorStore& store,
                boost::asio::any_io_executor strand,
                std::chrono::milliseconds statement_timeout,
                Host& host);
  ~ActorDatabase() override;

  bool enabled() const { return definition_ != nullptr; }
  /// Opens the database and applies its migrations (the start, before any hook).
  Task<Result<void>> open();
  /// Closes it once the actor's last write is done (rolling back a transaction left open).
  Task<void> close();
  /// Whether committed transactions changed something not yet taken.
  bool has_changes() const { return file_ && file_->has_committed(); }
  /// Moves what committed transactions changed into `write`.
  void take_changes(storage::ActorWrite& write);
  /// The write that took the last changes is durable: their pages may leave memory.
  void write_durable();

  // ---- detail::DbApi --------------------------------------------------------------------------
  Task<SqlResult> execute(std::string sql, SqlParams params) override;
  Task<std::uint64_t> begin(std::optional<std::chrono::milliseconds> timeout) override;
  Task<SqlResult> execute_in(std::uint64_t txn, std::string sql, SqlParams params) override;
  Task<void> commit(std::uint64_t txn) override;
  Task<void> rollback(std::uint64_t txn) override;
  void abandon(std::uint64_t txn) override;

 private:
  // One caller waiting for the lease.
  struct Waiter {
    explicit Waiter(const boost::asio::any_io_executor& ex)
        : timer(ex, boost::asio::steady_timer::time_point::max()) {}
    boost::asio::steady_timer timer;
    bool granted = false;
    // Set instead of granted: the transaction it waited behind expired (the statement must not
    // run, as in RivetKit).
    std::optional<Error> rejected;
  };
  // The right to run statements, passed on when it is dropped.
  class Lease {
   public:
    explicit Lease(ActorDatabase* db) : db_(db) {}
    Lease(Lease&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (db_ != nullptr) {
        db_->release();
      }
    }

   private:
    ActorDatabase* db_;
  };

  Task<Lease> acquire();
  void release();
  void check_usable() const;
  /// Runs `job` on a SQL worker with the connection (the caller holds the lease).
  Task<Result<SqlResult>> run(std::function<Result<SqlResult>(sql::SqlConnection&)> job);
  Task<SqlResult> run_or_throw(std::function<Result<SqlResult>(sql::SqlConnection&)> job);
  /// After a job: pages committed by it are announced to the host.
  void after_job();
  Task<void> end_transaction(std::uint64_t txn, bool commit);
  /// The open transaction outlived its timeout: it is rolled back, the statements parked behind
  /// it are rejected, and its handle only answers with the expiry from now on.
  void expire(std::uint64_t txn, std::chrono::milliseconds after);
  /// Rolls back the expired transaction's work and passes its lease on.
  Task<void> finish_expired(std::shared_ptr<void> held);
  Error expired_error(std::uint64_t txn) const;

  std::string actor_id_;
  const detail::DatabaseDefinition* definition_;
  storage::ActorStore& store_;
  boost::asio::any_io_executor strand_;
  std::chrono::milliseconds statement_timeout_;
  Host& host_;
  std::shared_ptr<sql::PageFile> file_;
  std::shared_ptr<sql::SqlConnection> conn_;
  bool closed_ = false;
  bool warned_manual_ = false;  // the manual-transaction warning, once per database
  // The lease: whoever runs statements now; the others wait in order.
  bool leased_ = false;
  std::deque<std::shared_ptr<Waiter>> waiters_;
  // The open transaction (its lease held from begin to its end).
  std::uint64_t next_txn_ = 1;
  std::uint64_t open_txn_ = 0;
  std::optional<Lease> txn_lease_;
  std::shared_ptr<boost::asio::steady_timer> txn_watchdog_;
  bool txn_busy_ = false;                // a statement of the open transaction is running
  bool finish_after_statement_ = false;  // it expired meanwhile: roll back once it returns
  std::optional<Lease> expired_lease_;   // held until the expired transaction is rolled back
  std::map<std::uint64_t, std::int64_t> expired_;  // transaction -> its timeout (ms)
  // The size in pages the store holds (pages past a smaller new size are deleted).
  std::uint32_t stored_size_ = 0;
};

}  // namespace rivetkit::core
