// LocalStore over SQLite: one writer thread (group commit) and one reader thread.
//
// Design note. Every write is an Op queued to the writer Worker. The writer takes everything
// queued (up to max_batch_ops), opens one IMMEDIATE transaction, runs each op inside its own
// SAVEPOINT (a failing op rolls back to it; the others keep their changes), commits once (one
// fsync with synchronous=FULL) and only then posts every op's result to its caller's executor.
// So a caller resumes only after its write is durable, and writes apply in queue order.
// Reads run on a second connection on the reader thread. WAL gives each read statement a
// snapshot that includes every transaction committed before the statement started, and a write
// completes only after its COMMIT returned, so a read issued after a write completed sees it.
// See INVARIANTS.md.

#include "storage/local_store.hpp"

#include "storage/fault_injection.hpp"
#include "storage/fault_vfs.hpp"
#include "storage/schema.hpp"
#include "storage/sqlite.hpp"
#include "storage/worker.hpp"
#include "util/log.hpp"

#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <filesystem>
#include <limits>
#include <mutex>
#include <system_error>
#include <utility>

namespace rivetkit::storage {

namespace {

using sqlite::Database;
using sqlite::Statement;
using sqlite::StatementScope;

Error not_found(std::string_view actor_id) {
  return Error{"actor", "not_found", fmt::format("Actor instance '{}' was not found", actor_id),
               std::nullopt, true};
}

Error duplicate_key(std::string existing_actor_id, std::string key) {
  return Error{
      "actor", "duplicate_key", "Actor already exists with this key",
      Value::object({{"existing_actor_id", std::move(existing_actor_id)}, {"key", std::move(key)}}),
      true};
}

Error invalid_record(std::string_view what) {
  return Error{"storage", "invalid_argument", std::string(what), std::nullopt, false};
}

Error injected(std::string_view what) {
  return Error{"storage", "sqlite_error", fmt::format("injected {}", what),
               Value::object({{"code", SQLITE_IOERR}}), false};
}

std::uint32_t to_generation(std::int64_t v) {
  if (v < 0) {
    return 0;
  }
  if (v > std::numeric_limits<std::uint32_t>::max()) {
    return std::numeric_limits<std::uint32_t>::max();
  }
  return static_cast<std::uint32_t>(v);
}

/// Reads the kActorColumns of the current row.
ActorRecord read_record(const Statement& s) {
  ActorRecord r;
  r.actor_id = s.column_text(0);
  r.name = s.column_text(1);
  r.key = s.column_text(2);  // NULL (keyless) -> ""
  r.input = s.column_optional_blob(3);
  r.crash_policy = s.column_text(4);
  r.create_ts = s.column_int64(5);
  r.destroy_ts = s.column_optional_int64(6);
  r.generation = to_generation(s.column_int64(7));
  return r;
}

/// Binds a key: "" (keyless) -> NULL.
void bind_key(Statement& s, int index, const std::string& key) {
  if (key.empty()) {
    s.bind_null(index);
  } else {
    s.bind_text(index, key);
  }
}

Result<std::optional<ActorRecord>> query_one(Statement& s) {
  auto row = s.step();
  if (!row) {
    return fail(std::move(row.error()));
  }
  if (!*row) {
    return std::optional<ActorRecord>();
  }
  return std::optional<ActorRecord>(read_record(s));
}

Result<std::optional<ActorRecord>> find_live(Statement& s,
                                             const std::string& name,
                                             const std::string& key) {
  if (key.empty()) {
    return std::optional<ActorRecord>();  // keyless actors are never found by key
  }
  StatementScope scope(s);
  s.bind_text(1, name);
  s.bind_text(2, key);
  return query_one(s);
}

Result<void> run_once(Statement& s) {
  StatementScope scope(s);
  return s.run();
}

// ---------------------------------------------------------------------------------------------
// Connections

struct Stats {
  std::atomic<std::uint64_t> write_ops{0};
  std::atomic<std::uint64_t> transactions{0};
  std::atomic<std::uint64_t> failed_transactions{0};
  std::atomic<std::uint64_t> max_batch{0};
  std::atomic<std::uint64_t> read_ops{0};
};

struct WriterConn {
  Database db;
  Statement begin, commit, rollback, savepoint, release, rollback_to;
  Statement find_live, insert_actor, destroy_mark, delete_state, next_generation, upsert_state;

  void close() {
    *this = WriterConn{};  // finalizes the statements, then closes the connection
  }
};

struct ReaderConn {
  Database db;
  Statement get_by_id, find_live, load;
  // [has key][include destroyed]
  std::array<std::array<Statement, 2>, 2> list;

  void close() { *this = ReaderConn{}; }
};

template <class Conn>
struct Preparer {
  Conn& conn;
  std::optional<Error> error;
  void operator()(Statement& out, std::string_view sql) {
    if (error) {
      return;
    }
    auto s = conn.db.prepare(sql);
    if (!s) {
      error = std::move(s.error());
      return;
    }
    out = std::move(*s);
  }
};

Result<void> prepare_writer(WriterConn& c) {
  Preparer<WriterConn> p{c, std::nullopt};
  p(c.begin, "BEGIN IMMEDIATE");
  p(c.commit, "COMMIT");
  p(c.rollback, "ROLLBACK");
  p(c.savepoint, "SAVEPOINT op");
  p(c.release, "RELEASE op");
  p(c.rollback_to, "ROLLBACK TO op");
  p(c.find_live, fmt::format("SELECT {} FROM actors WHERE name = ?1 AND key = ?2 AND destroy_ts IS "
                             "NULL",
                             kActorColumns));
  p(c.insert_actor,
    "INSERT INTO actors(actor_id, name, key, input, crash_policy, create_ts, destroy_ts, "
    "generation) VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, ?7)");
  p(c.destroy_mark,
    "UPDATE actors SET destroy_ts = ?2, input = NULL WHERE actor_id = ?1 AND destroy_ts IS NULL "
    "RETURNING rid");
  p(c.delete_state, "DELETE FROM actor_state WHERE rid = ?1");
  p(c.next_generation,
    "UPDATE actors SET generation = generation + 1 WHERE actor_id = ?1 AND destroy_ts IS NULL "
    "RETURNING generation");
  // The WHERE clause also keeps the parser from reading ON CONFLICT as a join constraint.
  p(c.upsert_state,
    "INSERT INTO actor_state(rid, has_initialized, state) "
    "SELECT rid, coalesce(?2, 0), ?3 FROM actors WHERE actor_id = ?1 AND destroy_ts IS NULL "
    "ON CONFLICT(rid) DO UPDATE SET has_initialized = coalesce(?2, has_initialized), "
    "state = coalesce(?3, state)");
  if (p.error) {
    return fail(std::move(*p.error));
  }
  return {};
}

Result<void> prepare_reader(ReaderConn& c) {
  Preparer<ReaderConn> p{c, std::nullopt};
  p(c.get_by_id, fmt::format("SELECT {} FROM actors WHERE actor_id = ?1", kActorColumns));
  p(c.find_live, fmt::format("SELECT {} FROM actors WHERE name = ?1 AND key = ?2 AND destroy_ts IS "
                             "NULL",
                             kActorColumns));
  p(c.load,
    "SELECT a.destroy_ts, a.input, s.has_initialized, s.state FROM actors a "
    "LEFT JOIN actor_state s ON s.rid = a.rid WHERE a.actor_id = ?1");
  // One statement per shape (schema.hpp list_actors_sql).
  for (std::size_t by_key = 0; by_key < 2; ++by_key) {
    for (std::size_t all = 0; all < 2; ++all) {
      p(c.list[by_key][all], list_actors_sql(by_key != 0, all != 0));
    }
  }
  if (p.error) {
    return fail(std::move(*p.error));
  }
  return {};
}

Result<void> apply_pragmas(Database& db, int busy_timeout_ms) {
  if (int rc = sqlite3_busy_timeout(db.get(), busy_timeout_ms); rc != SQLITE_OK) {
    return fail(sqlite::make_error(db.get(), rc, "busy_timeout"));
  }
  return db.exec("PRAGMA temp_store = MEMORY; PRAGMA cache_size = -16384;");
}

Result<Database> open_writer(const std::string& path,
                             const LocalStoreOptions& options,
                             const char* vfs) {
  auto db =
      Database::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, vfs);
  if (!db) {
    return db;
  }
  if (auto r = apply_pragmas(*db, options.busy_timeout_ms); !r) {
    return fail(std::move(r.error()));
  }
  auto mode = db->query_text("PRAGMA journal_mode = WAL");
  if (!mode) {
    return fail(std::move(mode.error()));
  }
  if (*mode != "wal") {
    return fail(Error{"storage", "sqlite_error",
                      fmt::format("could not enable WAL (journal_mode is {})", *mode), std::nullopt,
                      false});
  }
  std::string pragmas = fmt::format(
      "PRAGMA synchronous = {}; PRAGMA secure_delete = OFF; PRAGMA foreign_keys = OFF; "
      "PRAGMA journal_size_limit = 67108864;",
      options.synchronous_full ? "FULL" : "NORMAL");
  if (auto r = db->exec(pragmas); !r) {
    return fail(std::move(r.error()));
  }
  if (auto r = migrate(*db); !r) {
    return fail(std::move(r.error()));
  }
  return db;
}

Result<Database> open_reader(const std::string& path,
                             const LocalStoreOptions& options,
                             const char* vfs) {
  auto db = Database::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, vfs);
  if (!db) {
    return db;
  }
  if (auto r = apply_pragmas(*db, options.busy_timeout_ms); !r) {
    return fail(std::move(r.error()));
  }
  if (auto r = db->exec("PRAGMA query_only = 1;"); !r) {
    return fail(std::move(r.error()));
  }
  return db;
}

using WriteOp = detail::Op<WriterConn>;
using ReadOp = detail::Op<ReaderConn>;

// ---------------------------------------------------------------------------------------------

class LocalStoreImpl;

class ActorStoreImpl final : public ActorStore {
 public:
  ActorStoreImpl(std::shared_ptr<LocalStoreImpl> store, std::string actor_id)
      : store_(std::move(store)), actor_id_(std::move(actor_id)) {}
  Task<Result<PersistedActor>> load() override;
  Task<Result<void>> commit(ActorWrite write) override;

 private:
  std::shared_ptr<LocalStoreImpl> store_;
  std::string actor_id_;
};

class LocalStoreImpl final : public LocalStore,
                             public std::enable_shared_from_this<LocalStoreImpl> {
 public:
  LocalStoreImpl(LocalStoreOptions options, std::unique_ptr<FaultVfs> vfs)
      : options_(std::move(options)), vfs_(std::move(vfs)) {}

  ~LocalStoreImpl() override { close(); }

  Result<void> start(WriterConn writer, ReaderConn reader) {
    writer_ = std::make_unique<detail::Worker<WriterConn>>(
        "storage writer", std::move(writer), options_.max_batch_ops,
        [this](WriterConn& c, std::vector<std::unique_ptr<WriteOp>>& batch) {
          process_writes(c, batch);
        });
    reader_ = std::make_unique<detail::Worker<ReaderConn>>(
        "storage reader", std::move(reader), 64,
        [this](ReaderConn& c, std::vector<std::unique_ptr<ReadOp>>& batch) {
          for (auto& op : batch) {
            op->run(c);
            stats_.read_ops.fetch_add(1, std::memory_order_relaxed);
          }
        });
    try {
      writer_->start();
      reader_->start();
    } catch (const std::system_error& e) {
      close();
      return fail(Error{"storage", "internal_error",
                        fmt::format("cannot start storage threads: {}", e.what()), std::nullopt,
                        false});
    }
    return {};
  }

  // --- writes ------------------------------------------------------------------------------------

  Task<Result<ActorRecord>> create_actor(ActorRecord record) override {
    return submit_write<ActorRecord>(
        "create_actor", [record = std::move(record)](WriterConn& c) -> Result<ActorRecord> {
          if (auto existing = find_live(c.find_live, record.name, record.key); !existing) {
            return fail(std::move(existing.error()));
          } else if (*existing) {
            return fail(duplicate_key((*existing)->actor_id, record.key));
          }
          return insert_actor(c, record);
        });
  }

  Task<Result<std::pair<ActorRecord, bool>>> get_or_create_actor(ActorRecord record) override {
    using Out = std::pair<ActorRecord, bool>;
    return submit_write<Out>("get_or_create_actor",
                             [record = std::move(record)](WriterConn& c) -> Result<Out> {
                               auto existing = find_live(c.find_live, record.name, record.key);
                               if (!existing) {
                                 return fail(std::move(existing.error()));
                               }
                               if (*existing) {
                                 return Out(std::move(**existing), false);
                               }
                               auto inserted = insert_actor(c, record);
                               if (!inserted) {
                                 return fail(std::move(inserted.error()));
                               }
                               return Out(std::move(*inserted), true);
                             });
  }

  Task<Result<bool>> destroy_actor(std::string actor_id, std::int64_t now_ms) override {
    return submit_write<bool>(
        "destroy_actor", [actor_id = std::move(actor_id), now_ms](WriterConn& c) -> Result<bool> {
          std::int64_t rid = 0;
          {
            StatementScope scope(c.destroy_mark);
            c.destroy_mark.bind_text(1, actor_id);
            c.destroy_mark.bind_int64(2, now_ms);
            auto row = c.destroy_mark.step();
            if (!row) {
              return fail(std::move(row.error()));
            }
            if (!*row) {
              return false;  // unknown or already destroyed
            }
            rid = c.destroy_mark.column_int64(0);
            if (auto done = c.destroy_mark.run(); !done) {
              return fail(std::move(done.error()));
            }
          }
          // Wipe the persisted data. Later per-actor tables (conns, schedules, KV, queues) join
          // here.
          StatementScope scope(c.delete_state);
          c.delete_state.bind_int64(1, rid);
          if (auto r = c.delete_state.run(); !r) {
            return fail(std::move(r.error()));
          }
          return true;
        });
  }

  Task<Result<std::uint32_t>> next_generation(std::string actor_id) override {
    return submit_write<std::uint32_t>(
        "next_generation",
        [actor_id = std::move(actor_id)](WriterConn& c) -> Result<std::uint32_t> {
          StatementScope scope(c.next_generation);
          c.next_generation.bind_text(1, actor_id);
          auto row = c.next_generation.step();
          if (!row) {
            return fail(std::move(row.error()));
          }
          if (!*row) {
            return fail(not_found(actor_id));
          }
          std::uint32_t generation = to_generation(c.next_generation.column_int64(0));
          if (auto done = c.next_generation.run(); !done) {
            return fail(std::move(done.error()));
          }
          return generation;
        });
  }

  Task<Result<void>> commit_actor(std::string actor_id, ActorWrite write) {
    return submit_write<void>(
        "commit",
        [actor_id = std::move(actor_id), write = std::move(write)](WriterConn& c) -> Result<void> {
          StatementScope scope(c.upsert_state);
          c.upsert_state.bind_text(1, actor_id);
          if (write.has_initialized) {
            c.upsert_state.bind_int64(2, *write.has_initialized ? 1 : 0);
          } else {
            c.upsert_state.bind_null(2);
          }
          c.upsert_state.bind_optional_blob(3, write.state);
          if (auto r = c.upsert_state.run(); !r) {
            return fail(std::move(r.error()));
          }
          if (c.db.changes() == 0) {
            return fail(not_found(actor_id));  // unknown or destroyed
          }
          return {};
        });
  }

  // --- reads -------------------------------------------------------------------------------------

  Task<Result<std::optional<ActorRecord>>> get_actor(std::string actor_id) override {
    using Out = std::optional<ActorRecord>;
    return submit_read<Out>("get_actor",
                            [actor_id = std::move(actor_id)](ReaderConn& c) -> Result<Out> {
                              StatementScope scope(c.get_by_id);
                              c.get_by_id.bind_text(1, actor_id);
                              return query_one(c.get_by_id);
                            });
  }

  Task<Result<std::optional<ActorRecord>>> find_actor(std::string name, std::string key) override {
    using Out = std::optional<ActorRecord>;
    return submit_read<Out>(
        "find_actor", [name = std::move(name), key = std::move(key)](ReaderConn& c) -> Result<Out> {
          return find_live(c.find_live, name, key);
        });
  }

  Task<Result<std::vector<ActorRecord>>> list_actors(ListQuery query) override {
    using Out = std::vector<ActorRecord>;
    return submit_read<Out>(
        "list_actors", [query = std::move(query)](ReaderConn& c) -> Result<Out> {
          Out out;
          if (query.limit == 0 || (query.key && query.key->empty())) {
            return out;  // keyless actors are never matched by key
          }
          Statement& s = c.list[query.key ? 1 : 0][query.include_destroyed ? 1 : 0];
          StatementScope scope(s);
          s.bind_text(1, query.name);
          s.bind_int64(2,
                       query.before_create_ts.value_or(std::numeric_limits<std::int64_t>::max()));
          constexpr auto kMaxLimit =
              static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
          s.bind_int64(3, static_cast<std::int64_t>(std::min(query.limit, kMaxLimit)));
          if (query.key) {
            s.bind_text(4, *query.key);
          }
          while (true) {
            auto row = s.step();
            if (!row) {
              return fail(std::move(row.error()));
            }
            if (!*row) {
              break;
            }
            out.push_back(read_record(s));
          }
          return out;
        });
  }

  Task<Result<PersistedActor>> load_actor(std::string actor_id) {
    return submit_read<PersistedActor>(
        "load", [actor_id = std::move(actor_id)](ReaderConn& c) -> Result<PersistedActor> {
          StatementScope scope(c.load);
          c.load.bind_text(1, actor_id);
          auto row = c.load.step();
          if (!row) {
            return fail(std::move(row.error()));
          }
          if (!*row || !c.load.column_is_null(0)) {
            return fail(not_found(actor_id));  // unknown or destroyed
          }
          PersistedActor out;
          out.input = c.load.column_optional_blob(1);
          out.has_initialized = !c.load.column_is_null(2) && c.load.column_int64(2) != 0;
          out.state = c.load.column_optional_blob(3);
          return out;
        });
  }

  Task<Result<void>> verify_consistency_for_test() override {
    return submit_read<void>("verify_consistency", [](ReaderConn& c) -> Result<void> {
      auto integrity = c.db.query_text("PRAGMA integrity_check");
      if (!integrity) {
        return fail(std::move(integrity.error()));
      }
      if (*integrity != "ok") {
        return fail(invalid_record(fmt::format("integrity_check: {}", *integrity)));
      }
      struct Check {
        const char* what;
        const char* sql;
        std::int64_t expected;
      };
      const std::array<Check, 5> checks = {{
          {"schema version", "PRAGMA user_version", kSchemaVersion},
          {"state rows without a live actor",
           "SELECT count(*) FROM actor_state s LEFT JOIN actors a ON a.rid = s.rid "
           "WHERE a.rid IS NULL OR a.destroy_ts IS NOT NULL",
           0},
          {"tombstones keeping input",
           "SELECT count(*) FROM actors WHERE destroy_ts IS NOT NULL AND input IS NOT NULL", 0},
          {"generations below 1", "SELECT count(*) FROM actors WHERE generation < 1", 0},
          {"duplicate live keys",
           "SELECT count(*) FROM (SELECT 1 FROM actors WHERE destroy_ts IS NULL AND key IS NOT "
           "NULL GROUP BY name, key HAVING count(*) > 1)",
           0},
      }};
      for (const Check& check : checks) {
        auto v = c.db.query_int64(check.sql);
        if (!v) {
          return fail(std::move(v.error()));
        }
        if (*v != check.expected) {
          return fail(invalid_record(
              fmt::format("consistency: {} = {} (expected {})", check.what, *v, check.expected)));
        }
      }
      return {};
    });
  }

  // --- misc --------------------------------------------------------------------------------------

  std::unique_ptr<ActorStore> actor_store(std::string actor_id) override {
    return std::make_unique<ActorStoreImpl>(shared_from_this(), std::move(actor_id));
  }

  void close() override {
    std::lock_guard<std::mutex> lock(close_mu_);
    if (closed_) {
      return;
    }
    closed_ = true;
    // Reader first: the last connection to close checkpoints the WAL, and that should be the
    // writer, after it drained every queued write.
    if (reader_) {
      reader_->stop();
      reader_->conn().close();
    }
    if (writer_) {
      writer_->stop();
      writer_->conn().close();
    }
  }

  LocalStoreStats stats() const override {
    LocalStoreStats s;
    s.write_ops = stats_.write_ops.load();
    s.transactions = stats_.transactions.load();
    s.failed_transactions = stats_.failed_transactions.load();
    s.max_batch = stats_.max_batch.load();
    s.read_ops = stats_.read_ops.load();
    return s;
  }

  void pause_writer_for_test(bool paused) override { writer_->set_paused(paused); }
  std::size_t queued_writes_for_test() const override { return writer_->queued(); }

 private:
  template <class T, class Fn>
  Task<Result<T>> submit_write(const char* name, Fn fn) {
    return detail::async_submit<T>(*writer_, shared_from_this(), name, std::move(fn),
                                   boost::asio::use_awaitable);
  }

  template <class T, class Fn>
  Task<Result<T>> submit_read(const char* name, Fn fn) {
    return detail::async_submit<T>(*reader_, shared_from_this(), name, std::move(fn),
                                   boost::asio::use_awaitable);
  }

  static Result<ActorRecord> insert_actor(WriterConn& c, const ActorRecord& record) {
    if (record.actor_id.empty() || record.name.empty()) {
      return fail(invalid_record("an actor needs an actor_id and a name"));
    }
    StatementScope scope(c.insert_actor);
    c.insert_actor.bind_text(1, record.actor_id);
    c.insert_actor.bind_text(2, record.name);
    bind_key(c.insert_actor, 3, record.key);
    c.insert_actor.bind_optional_blob(4, record.input);
    c.insert_actor.bind_text(5, record.crash_policy);
    c.insert_actor.bind_int64(6, record.create_ts);
    c.insert_actor.bind_int64(7, static_cast<std::int64_t>(record.generation));
    if (auto r = c.insert_actor.run(); !r) {
      return fail(std::move(r.error()));
    }
    ActorRecord out = record;
    out.destroy_ts = std::nullopt;
    return out;
  }

  /// Runs one group commit. Every op leaves with a result, and an op reports success only if
  /// the transaction holding its changes committed.
  void process_writes(WriterConn& c, std::vector<std::unique_ptr<WriteOp>>& batch) {
    bool committed = false;
    try {
      run_group_commit(c, batch, committed);
    } catch (...) {
      // Unexpected (out of memory, a throwing formatter): nothing of an uncommitted batch may be
      // reported as done.
      Error e = detail::exception_error("group commit", std::current_exception());
      if (c.db.in_transaction()) {
        (void)run_once(c.rollback);
      }
      if (!committed) {
        stats_.failed_transactions.fetch_add(1, std::memory_order_relaxed);
      }
      for (auto& op : batch) {
        if (!op->has_result() || (!committed && op->ok())) {
          op->fail(e);
        }
      }
    }
  }

  void run_group_commit(WriterConn& c,
                        std::vector<std::unique_ptr<WriteOp>>& batch,
                        bool& committed) {
    FaultInjector* faults = options_.faults.get();
    const auto n = static_cast<std::uint64_t>(batch.size());
    std::uint64_t prev = stats_.max_batch.load();
    while (prev < n && !stats_.max_batch.compare_exchange_weak(prev, n)) {
    }

    std::vector<WriteOp*> in_txn;  // succeeded ops whose changes are in the open transaction
    in_txn.reserve(batch.size());
    auto fail_txn = [&](const Error& cause, std::string_view why) {
      for (WriteOp* op : in_txn) {
        Error e = cause;
        e.message = fmt::format("{}: {}", why, cause.message);
        op->fail(std::move(e));
      }
      in_txn.clear();
    };

    for (auto& op_ptr : batch) {
      WriteOp& op = *op_ptr;
      if (!c.db.in_transaction()) {
        // First op, or SQLite rolled the transaction back by itself after an error (I/O error,
        // disk full, out of memory): the ops already run lost their changes.
        if (!in_txn.empty()) {
          fail_txn(c.db.last_error("transaction"), "transaction rolled back");
          stats_.failed_transactions.fetch_add(1, std::memory_order_relaxed);
        }
        if (auto r = run_once(c.begin); !r) {
          op.fail(std::move(r.error()));
          continue;
        }
      }
      if (auto r = run_once(c.savepoint); !r) {
        op.fail(std::move(r.error()));
        continue;
      }
      op.run(c);
      stats_.write_ops.fetch_add(1, std::memory_order_relaxed);
      if (op.ok() && faults != nullptr && faults->should_fail_op(op.name())) {
        op.fail(injected(fmt::format("failure of {}", op.name())));
      }
      if (!c.db.in_transaction()) {
        if (op.ok()) {
          op.fail(c.db.last_error("transaction"));
        }
        continue;  // handled at the top of the next iteration / before commit
      }
      if (op.ok()) {
        if (auto r = run_once(c.release); r) {
          in_txn.push_back(&op);
          continue;
        } else {
          op.fail(std::move(r.error()));
        }
      }
      // Undo this op only. If even that fails, abandon the whole transaction.
      auto undo = run_once(c.rollback_to);
      if (undo) {
        undo = run_once(c.release);
      }
      if (!undo) {
        fail_txn(undo.error(), "transaction rolled back");
        (void)run_once(c.rollback);
        stats_.failed_transactions.fetch_add(1, std::memory_order_relaxed);
      }
    }

    if (!c.db.in_transaction()) {
      if (!in_txn.empty()) {
        fail_txn(c.db.last_error("transaction"), "transaction rolled back");
        stats_.failed_transactions.fetch_add(1, std::memory_order_relaxed);
      }
      return;
    }
    if (in_txn.empty()) {
      (void)run_once(c.rollback);  // nothing to keep: skip the fsync
      return;
    }
    if (faults != nullptr && faults->take_commit_fault()) {
      (void)run_once(c.rollback);
      fail_txn(injected("commit failure"), "commit failed");
      stats_.failed_transactions.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (auto r = run_once(c.commit); !r) {
      if (c.db.in_transaction()) {
        (void)run_once(c.rollback);
      }
      log::warn("storage: group commit of {} writes failed: {}", in_txn.size(), r.error().message);
      fail_txn(r.error(), "commit failed");
      stats_.failed_transactions.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    committed = true;
    stats_.transactions.fetch_add(1, std::memory_order_relaxed);
  }

  LocalStoreOptions options_;
  std::unique_ptr<FaultVfs> vfs_;  // first: must outlive the connections below
  Stats stats_;
  std::unique_ptr<detail::Worker<WriterConn>> writer_;
  std::unique_ptr<detail::Worker<ReaderConn>> reader_;
  std::mutex close_mu_;
  bool closed_ = false;
};

Task<Result<PersistedActor>> ActorStoreImpl::load() {
  return store_->load_actor(actor_id_);
}

Task<Result<void>> ActorStoreImpl::commit(ActorWrite write) {
  return store_->commit_actor(actor_id_, std::move(write));
}

}  // namespace

Result<std::shared_ptr<LocalStore>> LocalStore::open(const std::string& dir,
                                                     LocalStoreOptions options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return fail(Error{"storage", "io_error",
                      fmt::format("cannot create data directory {}: {}", dir, ec.message()),
                      std::nullopt, false});
  }
  const std::string path = (std::filesystem::path(dir) / "rivetkit.db").string();

  std::unique_ptr<FaultVfs> vfs;
  if (options.faults) {
    vfs = FaultVfs::create(options.faults);
    if (!vfs) {
      return fail(Error{"storage", "internal_error", "cannot register the fault-injection VFS",
                        std::nullopt, false});
    }
  }
  const char* vfs_name = vfs ? vfs->name() : nullptr;

  WriterConn writer;
  ReaderConn reader;
  auto wdb = open_writer(path, options, vfs_name);
  if (!wdb) {
    return fail(std::move(wdb.error()));
  }
  writer.db = std::move(*wdb);
  if (auto r = prepare_writer(writer); !r) {
    return fail(std::move(r.error()));
  }
  auto rdb = open_reader(path, options, vfs_name);
  if (!rdb) {
    return fail(std::move(rdb.error()));
  }
  reader.db = std::move(*rdb);
  if (auto r = prepare_reader(reader); !r) {
    return fail(std::move(r.error()));
  }

  auto store = std::make_shared<LocalStoreImpl>(std::move(options), std::move(vfs));
  if (auto r = store->start(std::move(writer), std::move(reader)); !r) {
    return fail(std::move(r.error()));
  }
  return std::shared_ptr<LocalStore>(std::move(store));
}

}  // namespace rivetkit::storage
