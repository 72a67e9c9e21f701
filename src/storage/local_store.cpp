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

#include "storage/dir_lock.hpp"
#include "storage/fault_injection.hpp"
#include "storage/fault_vfs.hpp"
#include "storage/kv_actor_store.hpp"
#include "storage/schema.hpp"
#include "storage/sqlite.hpp"
#include "storage/worker.hpp"
#include "util/heap_trimmer.hpp"
#include "util/log.hpp"
#include "util/metrics.hpp"

#include <boost/asio/use_awaitable.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <limits>
#include <mutex>
#include <system_error>
#include <utility>

namespace rivetkit::storage {

namespace {

/// The longest KV key (prefix included): RivetKit's user-KV limit (core-semantics.md §6). The
/// table itself has none; the limit keeps the data movable to engine mode and back.
constexpr std::size_t kMaxKvKeySize = 2048;

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

template <class T>
T clamp_to(std::int64_t v) {
  if (v < 0) {
    return 0;
  }
  if (static_cast<std::uint64_t>(v) > std::numeric_limits<T>::max()) {
    return std::numeric_limits<T>::max();
  }
  return static_cast<T>(v);
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

/// A read transaction on the reader connection: every statement in it sees one snapshot. Ended
/// (rolled back: it wrote nothing) when the scope ends, so the reader never pins a WAL snapshot.
class ReadTransaction {
 public:
  explicit ReadTransaction(Database& db, Statement& begin, Statement& rollback)
      : db_(db), rollback_(rollback), begun_(run_once(begin)) {}
  ~ReadTransaction() {
    if (db_.in_transaction()) {
      (void)run_once(rollback_);
    }
  }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;
  /// Whether BEGIN succeeded.
  const Result<void>& begun() const { return begun_; }

 private:
  Database& db_;
  Statement& rollback_;
  Result<void> begun_;
};

/// Runs `s` (already bound) to completion, calling `row(s)` for each row.
template <class Fn>
Result<void> for_each_row(Statement& s, Fn&& row) {
  while (true) {
    auto more = s.step();
    if (!more) {
      return fail(std::move(more.error()));
    }
    if (!*more) {
      return {};
    }
    if (auto r = row(s); !r) {
      return r;
    }
  }
}

struct Stats {
  std::atomic<std::uint64_t> write_ops{0};
  std::atomic<std::uint64_t> transactions{0};
  std::atomic<std::uint64_t> failed_transactions{0};
  std::atomic<std::uint64_t> max_batch{0};
  std::atomic<std::uint64_t> read_ops{0};
  std::atomic<std::uint64_t> generations_reserved{0};
  std::atomic<std::uint64_t> generations_from_memory{0};
};

struct WriterConn {
  Database db;
  Statement begin, commit, rollback, savepoint, release, rollback_to;
  Statement find_live, insert_actor, destroy_mark, reserve_generation;
  Statement live_rid, set_alarm;
  Statement kv_put, kv_delete, kv_delete_range;
  // destroy_actor: every per-actor table
  Statement delete_kv;

  void close() {
    *this = WriterConn{};  // finalizes the statements, then closes the connection
  }
};

struct ReaderConn {
  Database db;
  Statement begin, rollback;  // a read transaction: one snapshot for several statements
  Statement get_by_id, find_live, load, live_generation, pending_alarms;
  Statement live_counts;
  // [has key][include destroyed]
  std::array<std::array<Statement, 2>, 2> list;
  Statement kv_get;
  // [has end][reverse]
  std::array<std::array<Statement, 2>, 2> kv_list;

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
    "UPDATE actors SET destroy_ts = ?2, input = NULL, next_alarm = NULL WHERE actor_id = ?1 AND "
    "destroy_ts IS NULL RETURNING rid");
  p(c.delete_kv, "DELETE FROM actor_kv WHERE rid = ?1");
  p(c.kv_put, "INSERT OR REPLACE INTO actor_kv(rid, key, value) VALUES (?1, ?2, ?3)");
  p(c.kv_delete, "DELETE FROM actor_kv WHERE rid = ?1 AND key = ?2");
  p(c.kv_delete_range, "DELETE FROM actor_kv WHERE rid = ?1 AND key >= ?2 AND key < ?3");
  p(c.reserve_generation,
    "UPDATE actors SET generation = generation + ?2 WHERE actor_id = ?1 AND destroy_ts IS NULL "
    "RETURNING rid, generation");
  p(c.live_rid, "SELECT rid FROM actors WHERE actor_id = ?1 AND destroy_ts IS NULL");
  p(c.set_alarm, "UPDATE actors SET next_alarm = ?2 WHERE rid = ?1");
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
  p(c.begin, "BEGIN");
  p(c.rollback, "ROLLBACK");
  p(c.load, "SELECT destroy_ts, input FROM actors WHERE actor_id = ?1");
  p(c.live_generation,
    "SELECT rid, generation FROM actors WHERE actor_id = ?1 AND destroy_ts IS NULL");
  p(c.pending_alarms, kPendingAlarmsSql);
  // Served by the partial index actors_live_by_name.
  p(c.live_counts,
    "SELECT name, count(*) FROM actors WHERE destroy_ts IS NULL GROUP BY name ORDER BY name");
  // One statement per shape (schema.hpp list_actors_sql).
  for (std::size_t by_key = 0; by_key < 2; ++by_key) {
    for (std::size_t all = 0; all < 2; ++all) {
      p(c.list[by_key][all], list_actors_sql(by_key != 0, all != 0));
    }
  }
  // KV reads of a live actor (a destroyed one has no rows: destroy_actor wiped them).
  constexpr const char* kKvRid =
      "(SELECT rid FROM actors WHERE actor_id = ?1 AND destroy_ts IS NULL)";
  p(c.kv_get, fmt::format("SELECT value FROM actor_kv WHERE rid = {} AND key = ?2", kKvRid));
  for (std::size_t has_end = 0; has_end < 2; ++has_end) {
    for (std::size_t reverse = 0; reverse < 2; ++reverse) {
      // ?4: the limit; a negative one means none.
      p(c.kv_list[has_end][reverse],
        fmt::format("SELECT key, value FROM actor_kv WHERE rid = {} AND key >= ?2{} ORDER BY key{} "
                    "LIMIT ?4",
                    kKvRid, has_end != 0 ? " AND key < ?3" : "", reverse != 0 ? " DESC" : ""));
    }
  }
  if (p.error) {
    return fail(std::move(*p.error));
  }
  return {};
}

/// Idle hook of both storage threads (Worker::set_idle_hook): when the burst of work that filled
/// a connection's page cache is over, give the cache's pages back and return them to the OS.
/// Left alone, the two caches (up to 2 MiB each) would stay resident after thousands of actors
/// went to sleep; refilling them costs reads from the OS page cache on the next burst.
void release_page_cache(Database& db) {
  constexpr int kKeepBytes = 256 * 1024;  // below this, keeping the cache costs nothing worth it
  int used = 0;
  int highwater = 0;
  if (sqlite3_db_status(db.get(), SQLITE_DBSTATUS_CACHE_USED, &used, &highwater, 0) != SQLITE_OK
      || used < kKeepBytes) {
    return;
  }
  sqlite3_db_release_memory(db.get());
  util::trim_heap();
}

Result<void> apply_pragmas(Database& db, int busy_timeout_ms) {
  if (int rc = sqlite3_busy_timeout(db.get(), busy_timeout_ms); rc != SQLITE_OK) {
    return fail(sqlite::make_error(db.get(), rc, "busy_timeout"));
  }
  // A small page cache per connection (2 MiB): pages beyond it come from the OS page cache,
  // which does not count against the process. Sleeping actors must cost (almost) no memory.
  return db.exec("PRAGMA temp_store = MEMORY; PRAGMA cache_size = -2048;");
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

/// Applies one commit to the live actor `rid` (inside the op's savepoint): its KV batch and, when
/// it changes, the actor's next alarm.
Result<void> apply_write(WriterConn& c,
                         std::int64_t rid,
                         const KvBatch& batch,
                         const std::optional<NextAlarm>& alarm) {
  if (alarm) {
    StatementScope scope(c.set_alarm);
    c.set_alarm.bind_int64(1, rid);
    c.set_alarm.bind_optional_int64(2, alarm->at);
    if (auto r = c.set_alarm.run(); !r) {
      return r;
    }
  }
  // In order: SQLite applies an ordered list as given, inside the op's savepoint.
  for (const KvOp& op : batch.ops()) {
    Statement* s = nullptr;
    if (const auto* put = std::get_if<KvPut>(&op)) {
      s = &c.kv_put;
      s->bind_int64(1, rid);
      s->bind_blob(2, put->key);
      s->bind_blob(3, put->value);
    } else if (const auto* del = std::get_if<KvDelete>(&op)) {
      s = &c.kv_delete;
      s->bind_int64(1, rid);
      s->bind_blob(2, del->key);
    } else {
      const auto& range = std::get<KvDeleteRange>(op);
      s = &c.kv_delete_range;
      s->bind_int64(1, rid);
      s->bind_blob(2, range.start);
      s->bind_blob(3, range.end);
    }
    StatementScope scope(*s);
    if (auto r = s->run(); !r) {
      return r;
    }
  }
  return {};
}

/// The (rid, new generation) of a durable bump by `count` of a live actor.
struct Reserved {
  std::int64_t rid = 0;
  std::uint32_t ceiling = 0;
};

Result<Reserved> reserve_generations(WriterConn& c,
                                     const std::string& actor_id,
                                     std::uint32_t count) {
  StatementScope scope(c.reserve_generation);
  c.reserve_generation.bind_text(1, actor_id);
  c.reserve_generation.bind_int64(2, count);
  auto row = c.reserve_generation.step();
  if (!row) {
    return fail(std::move(row.error()));
  }
  if (!*row) {
    return fail(not_found(actor_id));
  }
  const std::int64_t rid = c.reserve_generation.column_int64(0);
  const std::int64_t ceiling = c.reserve_generation.column_int64(1);
  if (auto done = c.reserve_generation.run(); !done) {
    return fail(std::move(done.error()));
  }
  if (ceiling > std::numeric_limits<std::uint32_t>::max()) {
    // Failing the op rolls the bump back (its savepoint).
    return fail(Error{"storage", "generation_exhausted",
                      fmt::format("actor '{}' has used every generation", actor_id), std::nullopt,
                      false});
  }
  return Reserved{rid, static_cast<std::uint32_t>(ceiling)};
}

// ---------------------------------------------------------------------------------------------
// Generation blocks in memory (see "generations" in LocalStoreImpl)

struct GenerationBlock {
  std::uint32_t last = 0;
  std::uint32_t ceiling = 0;
};

/// rid -> GenerationBlock for at most `max_entries` actors, in one flat array (open addressing,
/// linear probing, backward-shift deletion). One entry per actor stays for as long as the process
/// runs, sleeping actors included, so it must not be a node per actor: thousands of small
/// long-lived nodes allocated during a burst of wakes would pin a page of the allocator's arena
/// each after the burst's other memory was freed. The array holds 16 bytes per slot, at least
/// 4/3 slots per entry, and shrinks again when most entries are gone. Not thread-safe.
class GenerationTable {
 public:
  explicit GenerationTable(std::size_t max_entries) : max_entries_(max_entries) {}

  GenerationBlock* find(std::int64_t rid) {
    if (size_ == 0 || rid == kEmpty) {
      return nullptr;
    }
    for (std::size_t i = home(rid);; i = next(i)) {
      if (slots_[i].rid == rid) {
        return &slots_[i].block;
      }
      if (slots_[i].rid == kEmpty) {
        return nullptr;
      }
    }
  }

  /// Inserts a new entry (the caller checked find() first). When full, forgets another entry.
  void insert(std::int64_t rid, GenerationBlock block) {
    if (max_entries_ == 0 || rid == kEmpty) {
      return;
    }
    if (size_ >= max_entries_) {
      evict_one();
    }
    if ((size_ + 1) * 4 > slots_.size() * 3) {
      rehash(std::max<std::size_t>(kMinSlots, slots_.size() * 2));
    }
    std::size_t i = home(rid);
    while (slots_[i].rid != kEmpty) {
      i = next(i);
    }
    slots_[i] = Slot{rid, block};
    ++size_;
  }

  void erase(std::int64_t rid) {
    if (size_ == 0 || rid == kEmpty) {
      return;
    }
    std::size_t i = home(rid);
    while (slots_[i].rid != rid) {
      if (slots_[i].rid == kEmpty) {
        return;
      }
      i = next(i);
    }
    remove_at(i);
    if (size_ == 0) {
      std::vector<Slot>().swap(slots_);
    } else if (slots_.size() > kMinSlots && size_ * 8 < slots_.size()) {
      rehash(slots_.size() / 2);
    }
  }

  std::size_t size() const { return size_; }

 private:
  static constexpr std::int64_t kEmpty = std::numeric_limits<std::int64_t>::min();
  static constexpr std::size_t kMinSlots = 64;
  struct Slot {
    std::int64_t rid = kEmpty;
    GenerationBlock block;
  };

  std::size_t home(std::int64_t rid) const {
    // Fibonacci hashing: rids are consecutive, so spread them over the whole table.
    const auto h = static_cast<std::uint64_t>(rid) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h >> 32) & (slots_.size() - 1);
  }
  std::size_t next(std::size_t i) const { return (i + 1) & (slots_.size() - 1); }

  /// Empties slot `i` and moves later entries of its probe run back (no tombstones).
  void remove_at(std::size_t i) {
    std::size_t hole = i;
    for (std::size_t j = next(i); slots_[j].rid != kEmpty; j = next(j)) {
      const std::size_t want = home(slots_[j].rid);
      // Entry j may fill the hole if its home is not in the cyclic range (hole, j].
      const bool home_after_hole =
          hole < j ? (want > hole && want <= j) : (want > hole || want <= j);
      if (!home_after_hole) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = Slot{};
    --size_;
  }

  /// Forgets an arbitrary entry (forgetting a block only skips its unused numbers).
  void evict_one() {
    for (std::size_t n = 0; n < slots_.size(); ++n) {
      cursor_ = next(cursor_);
      if (slots_[cursor_].rid != kEmpty) {
        remove_at(cursor_);
        return;
      }
    }
  }

  void rehash(std::size_t slot_count) {
    std::vector<Slot> old(slot_count);
    old.swap(slots_);
    cursor_ = 0;
    for (const Slot& s : old) {
      if (s.rid != kEmpty) {
        std::size_t i = home(s.rid);
        while (slots_[i].rid != kEmpty) {
          i = next(i);
        }
        slots_[i] = s;
      }
    }
  }

  std::size_t max_entries_;
  std::vector<Slot> slots_;  // size 0 or a power of two
  std::size_t size_ = 0;
  std::size_t cursor_ = 0;
};

using WriteOp = detail::Op<WriterConn>;
using ReadOp = detail::Op<ReaderConn>;

// ---------------------------------------------------------------------------------------------

class LocalStoreImpl;

// One actor's ordered KV: its rows of the actor_kv table.
class LocalActorKv final : public ActorKv {
 public:
  LocalActorKv(std::shared_ptr<LocalStoreImpl> store, std::string actor_id)
      : store_(std::move(store)), actor_id_(std::move(actor_id)) {}

  Task<Result<std::vector<std::optional<std::string>>>> get(std::vector<std::string> keys) override;
  Task<Result<std::vector<KvEntry>>> list(KvQuery query) override;
  /// One write of the shared group commit (and its fsync).
  Task<Result<void>> write(KvBatch batch) override;
  std::size_t max_key_size() const override { return kMaxKvKeySize; }

 private:
  std::shared_ptr<LocalStoreImpl> store_;
  std::string actor_id_;
};

// One actor's persisted data: the runtime's records as keys of its KV (kv_actor_store.hpp),
// unfenced (this process owns the data directory), with the create input in the directory row
// and the next alarm written to it in the commit's transaction.
class LocalActorStore final : public KvActorStore {
 public:
  LocalActorStore(std::shared_ptr<LocalStoreImpl> store, std::string actor_id);
  /// `actor.not_found` for an unknown or destroyed actor.
  Task<Result<PersistedActor>> load() override;

 protected:
  Task<Result<void>> write_commit(KvBatch batch, std::optional<NextAlarm> alarm) override;

 private:
  std::shared_ptr<LocalStoreImpl> store_;
  std::string actor_id_;
};

KvActorStoreOptions local_store_options() {
  KvActorStoreOptions options;
  options.generation = 0;
  options.fenced = false;
  options.store_input = false;
  return options;
}

class LocalStoreImpl final : public LocalStore,
                             public std::enable_shared_from_this<LocalStoreImpl> {
 public:
  LocalStoreImpl(LocalStoreOptions options, std::unique_ptr<FaultVfs> vfs, DirLock lock)
      : options_(std::move(options)), vfs_(std::move(vfs)), lock_(std::move(lock)) {}

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
    if (options_.release_cache_after_ms > 0) {
      const std::chrono::milliseconds after(options_.release_cache_after_ms);
      writer_->set_idle_hook(after, [](WriterConn& c) { release_page_cache(c.db); });
      reader_->set_idle_hook(after, [](ReaderConn& c) { release_page_cache(c.db); });
    }
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
        "destroy_actor",
        [this, actor_id = std::move(actor_id), now_ms](WriterConn& c) -> Result<bool> {
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
          // Wipe the persisted data: every key of the actor (records, user KV, ...).
          {
            StatementScope scope(c.delete_kv);
            c.delete_kv.bind_int64(1, rid);
            if (auto r = c.delete_kv.run(); !r) {
              return fail(std::move(r.error()));
            }
          }
          // Safe even if this write rolls back: forgetting a block only skips its numbers.
          forget_generations(rid);
          return true;
        });
  }

  Task<Result<std::uint32_t>> next_generation(std::string actor_id) override {
    return reserve_and_take(shared_from_this(), std::move(actor_id), 1, "next_generation");
  }

  Task<Result<std::uint32_t>> acquire_generation(std::string actor_id) override {
    return acquire_generation_impl(shared_from_this(), std::move(actor_id));
  }

  Task<Result<void>> commit_actor(std::string actor_id,
                                  KvBatch batch,
                                  std::optional<NextAlarm> alarm) {
    // An empty write still goes through the queue: it completes after every earlier write (a
    // barrier) and checks the actor. It changes nothing, so a batch of only such writes commits
    // without writing the WAL, i.e. without an fsync.
    return submit_write<void>("commit",
                              [actor_id = std::move(actor_id), batch = std::move(batch),
                               alarm = std::move(alarm)](WriterConn& c) -> Result<void> {
                                std::int64_t rid = 0;
                                {
                                  StatementScope scope(c.live_rid);
                                  c.live_rid.bind_text(1, actor_id);
                                  auto row = c.live_rid.step();
                                  if (!row) {
                                    return fail(std::move(row.error()));
                                  }
                                  if (!*row) {
                                    return fail(not_found(actor_id));  // unknown or destroyed
                                  }
                                  rid = c.live_rid.column_int64(0);
                                }
                                // All of it or nothing: a failure rolls the op's savepoint back.
                                return apply_write(c, rid, batch, alarm);
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
          auto done = for_each_row(s, [&out](const Statement& row) -> Result<void> {
            out.push_back(read_record(row));
            return {};
          });
          if (!done) {
            return fail(std::move(done.error()));
          }
          return out;
        });
  }

  Task<Result<std::vector<std::pair<std::string, std::uint64_t>>>> live_actor_counts() override {
    using Out = std::vector<std::pair<std::string, std::uint64_t>>;
    return submit_read<Out>("live_actor_counts", [](ReaderConn& c) -> Result<Out> {
      Out out;
      Statement& s = c.live_counts;
      StatementScope scope(s);
      auto done = for_each_row(s, [&out](const Statement& row) -> Result<void> {
        out.emplace_back(row.column_text(0), static_cast<std::uint64_t>(row.column_int64(1)));
        return {};
      });
      if (!done) {
        return fail(std::move(done.error()));
      }
      return out;
    });
  }

  /// The create input of a live actor; `actor.not_found` for an unknown or destroyed one.
  Task<Result<std::optional<std::string>>> load_directory(std::string actor_id) {
    using Out = std::optional<std::string>;
    return submit_read<Out>("load", [actor_id = std::move(actor_id)](ReaderConn& c) -> Result<Out> {
      StatementScope scope(c.load);
      c.load.bind_text(1, actor_id);
      auto row = c.load.step();
      if (!row) {
        return fail(std::move(row.error()));
      }
      if (!*row || !c.load.column_is_null(0)) {
        return fail(not_found(actor_id));  // unknown or destroyed
      }
      return c.load.column_optional_blob(1);
    });
  }

  Task<Result<std::vector<std::optional<std::string>>>> kv_get_actor(
      std::string actor_id, std::vector<std::string> keys) {
    using Out = std::vector<std::optional<std::string>>;
    return submit_read<Out>(
        "kv_get",
        [actor_id = std::move(actor_id), keys = std::move(keys)](ReaderConn& c) -> Result<Out> {
          ReadTransaction txn(c.db, c.begin, c.rollback);  // one snapshot for every key
          if (!txn.begun()) {
            return fail(txn.begun().error());
          }
          Out out;
          out.reserve(keys.size());
          for (const std::string& key : keys) {
            StatementScope scope(c.kv_get);
            c.kv_get.bind_text(1, actor_id);
            c.kv_get.bind_blob(2, key);
            auto row = c.kv_get.step();
            if (!row) {
              return fail(std::move(row.error()));
            }
            out.push_back(*row ? std::optional<std::string>(c.kv_get.column_blob(0))
                               : std::nullopt);
          }
          return out;
        });
  }

  Task<Result<std::vector<KvEntry>>> kv_list_actor(std::string actor_id, KvQuery query) {
    using Out = std::vector<KvEntry>;
    return submit_read<Out>(
        "kv_list",
        [actor_id = std::move(actor_id), query = std::move(query)](ReaderConn& c) -> Result<Out> {
          Out out;
          std::string start = query.prefix ? *query.prefix : query.start;
          std::optional<std::string> end = query.prefix ? prefix_end(*query.prefix) : query.end;
          if ((end && start >= *end) || query.limit == std::uint64_t{0}) {
            return out;
          }
          Statement& s = c.kv_list[end ? 1 : 0][query.reverse ? 1 : 0];
          StatementScope scope(s);
          s.bind_text(1, actor_id);
          s.bind_blob(2, start);
          if (end) {
            s.bind_blob(3, *end);
          }
          constexpr auto kMax =
              static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
          s.bind_int64(4,
                       query.limit ? static_cast<std::int64_t>(std::min(*query.limit, kMax)) : -1);
          auto r = for_each_row(s, [&out](const Statement& row) -> Result<void> {
            out.push_back(KvEntry{row.column_blob(0), row.column_blob(1)});
            return {};
          });
          if (!r) {
            return fail(std::move(r.error()));
          }
          return out;
        });
  }

  Task<Result<std::vector<PendingAlarm>>> pending_alarms() override {
    using Out = std::vector<PendingAlarm>;
    return submit_read<Out>("pending_alarms", [](ReaderConn& c) -> Result<Out> {
      Out out;
      StatementScope scope(c.pending_alarms);
      auto r = for_each_row(c.pending_alarms, [&out](const Statement& row) -> Result<void> {
        out.push_back(PendingAlarm{row.column_text(0), row.column_int64(1)});
        return {};
      });
      if (!r) {
        return fail(std::move(r.error()));
      }
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
      const std::array<Check, 7> checks = {{
          {"schema version", "PRAGMA user_version", kSchemaVersion},
          {"KV rows without a live actor",
           "SELECT count(*) FROM actor_kv s LEFT JOIN actors a ON a.rid = s.rid "
           "WHERE a.rid IS NULL OR a.destroy_ts IS NOT NULL",
           0},
          {"alarms of destroyed actors",
           "SELECT count(*) FROM actors WHERE destroy_ts IS NOT NULL AND next_alarm IS NOT NULL",
           0},
          {"alarms of actors without a schedule key",
           "SELECT count(*) FROM actors a WHERE next_alarm IS NOT NULL AND NOT EXISTS (SELECT 1 "
           "FROM actor_kv k WHERE k.rid = a.rid AND k.key >= x'0372' AND k.key < x'0373' AND "
           "substr(k.key, 7, 1) = x'61' AND length(k.value) > 0)",
           0},
          {"tombstones keeping input",
           "SELECT count(*) FROM actors WHERE destroy_ts IS NOT NULL AND input IS NOT NULL", 0},
          {"generations outside u32",
           "SELECT count(*) FROM actors WHERE generation NOT BETWEEN 0 AND 4294967295", 0},
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
    return std::make_unique<LocalActorStore>(shared_from_this(), std::move(actor_id));
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
    lock_.release();  // last: the database is closed, another process may take over
  }

  LocalStoreStats stats() const override {
    LocalStoreStats s;
    s.write_ops = stats_.write_ops.load();
    s.transactions = stats_.transactions.load();
    s.failed_transactions = stats_.failed_transactions.load();
    s.max_batch = stats_.max_batch.load();
    s.read_ops = stats_.read_ops.load();
    s.generations_reserved = stats_.generations_reserved.load();
    s.generations_from_memory = stats_.generations_from_memory.load();
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

  // --- generations ------------------------------------------------------------------------------
  //
  // actors.generation is the durable ceiling: every generation ever handed out for the actor is
  // <= it (it is bumped and committed before a number above the old ceiling is returned).
  // blocks_[rid] = {last, ceiling} records a block this process reserved with a committed write:
  // (ceiling - block, ceiling] was above every earlier ceiling, so no process handed any of it out
  // before; `last` is the highest number of it handed out. Handing out last + 1 <= ceiling from
  // memory therefore needs no write: after a crash the numbers above `last` are simply skipped,
  // since the next process starts with a fresh block above the durable ceiling.
  // Entries are set only after their write committed (in the awaiting coroutine), and a block
  // replaces an entry only if its ceiling is higher, so `last` only grows.

  /// Result of the reader-side fast path: the actor's rid, and a generation if memory had one.
  struct FastGeneration {
    std::int64_t rid = 0;
    std::optional<std::uint32_t> generation;
  };

  void remember_block(std::int64_t rid, GenerationBlock block) {
    std::lock_guard<std::mutex> lock(blocks_mu_);
    if (GenerationBlock* known = blocks_.find(rid)) {
      if (known->ceiling < block.ceiling) {
        *known = block;
      }
      return;
    }
    blocks_.insert(rid, block);
  }

  void forget_generations(std::int64_t rid) {
    std::lock_guard<std::mutex> lock(blocks_mu_);
    blocks_.erase(rid);
  }

  /// Reader thread: the live actor's rid and, if this process holds a block with numbers left
  /// that the committed ceiling covers, the next number of it.
  Result<FastGeneration> take_from_memory(ReaderConn& c, const std::string& actor_id) {
    StatementScope scope(c.live_generation);
    c.live_generation.bind_text(1, actor_id);
    auto row = c.live_generation.step();
    if (!row) {
      return fail(std::move(row.error()));
    }
    if (!*row) {
      return fail(not_found(actor_id));  // unknown or destroyed
    }
    FastGeneration out;
    out.rid = c.live_generation.column_int64(0);
    const std::int64_t durable = c.live_generation.column_int64(1);
    std::lock_guard<std::mutex> lock(blocks_mu_);
    GenerationBlock* block = blocks_.find(out.rid);
    if (block != nullptr && block->last < block->ceiling
        && static_cast<std::int64_t>(block->ceiling) <= durable) {
      out.generation = ++block->last;
    }
    return out;
  }

  /// Durably bumps the ceiling by `count` and returns the first number of the new block (the
  /// rest, if any, is remembered for acquire_generation).
  static Task<Result<std::uint32_t>> reserve_and_take(std::shared_ptr<LocalStoreImpl> self,
                                                      std::string actor_id,
                                                      std::uint32_t count,
                                                      const char* op_name) {
    auto op = self->submit_write<Reserved>(
        op_name, [actor_id = std::move(actor_id), count](WriterConn& c) -> Result<Reserved> {
          return reserve_generations(c, actor_id, count);
        });
    auto reserved = co_await std::move(op);
    if (!reserved) {
      co_return fail(std::move(reserved.error()));
    }
    const std::uint32_t first = reserved->ceiling - count + 1;
    // Committed: from now on the whole block is ours.
    self->remember_block(reserved->rid, GenerationBlock{first, reserved->ceiling});
    co_return first;
  }

  static Task<Result<std::uint32_t>> acquire_generation_impl(std::shared_ptr<LocalStoreImpl> self,
                                                             std::string actor_id) {
    LocalStoreImpl* store = self.get();
    auto fast_op = self->submit_read<FastGeneration>(
        "acquire_generation", [store, actor_id](ReaderConn& c) -> Result<FastGeneration> {
          return store->take_from_memory(c, actor_id);
        });
    auto fast = co_await std::move(fast_op);
    if (!fast) {
      co_return fail(std::move(fast.error()));
    }
    if (fast->generation) {
      self->stats_.generations_from_memory.fetch_add(1, std::memory_order_relaxed);
      co_return *fast->generation;
    }
    self->stats_.generations_reserved.fetch_add(1, std::memory_order_relaxed);
    const std::uint32_t block = std::max<std::uint32_t>(1, self->options_.generation_block);
    auto slow_op = reserve_and_take(self, std::move(actor_id), block, "acquire_generation");
    co_return co_await std::move(slow_op);
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
    metrics::runtime().commit_batch.get().observe(in_txn.size());
    const auto commit_start = std::chrono::steady_clock::now();
    auto commit_result = run_once(c.commit);
    metrics::runtime().commit_duration.get().observe(
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::steady_clock::now() - commit_start)
                                       .count()));
    if (auto& r = commit_result; !r) {
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
  DirLock lock_;                   // held while the database is open (close() releases it)
  Stats stats_;
  std::mutex blocks_mu_;
  GenerationTable blocks_{options_.generation_cache_entries};  // by rid; see "generations"

  std::unique_ptr<detail::Worker<WriterConn>> writer_;
  std::unique_ptr<detail::Worker<ReaderConn>> reader_;
  std::mutex close_mu_;
  bool closed_ = false;
};

LocalActorStore::LocalActorStore(std::shared_ptr<LocalStoreImpl> store, std::string actor_id)
    : KvActorStore(
        actor_id, std::make_unique<LocalActorKv>(store, actor_id), local_store_options()),
      store_(std::move(store)),
      actor_id_(std::move(actor_id)) {}

Task<Result<PersistedActor>> LocalActorStore::load() {
  auto directory_op = store_->load_directory(actor_id_);
  auto input = co_await std::move(directory_op);
  if (!input) {
    co_return fail(std::move(input.error()));
  }
  auto load_op = KvActorStore::load();
  auto actor = co_await std::move(load_op);
  if (actor) {
    actor->input = std::move(*input);
  }
  co_return actor;
}

Task<Result<void>> LocalActorStore::write_commit(KvBatch batch, std::optional<NextAlarm> alarm) {
  return store_->commit_actor(actor_id_, std::move(batch), std::move(alarm));
}

Task<Result<std::vector<std::optional<std::string>>>> LocalActorKv::get(
    std::vector<std::string> keys) {
  return store_->kv_get_actor(actor_id_, std::move(keys));
}

Task<Result<std::vector<KvEntry>>> LocalActorKv::list(KvQuery query) {
  return store_->kv_list_actor(actor_id_, std::move(query));
}

Task<Result<void>> LocalActorKv::write(KvBatch batch) {
  return store_->commit_actor(actor_id_, std::move(batch), std::nullopt);
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
  // Checked at start, with a clear error, instead of failing at the first actor's write (or
  // with SQLite's "unable to open database file"). An empty file, created and removed: it
  // needs no space, so a full disk still starts (and answers its writes with storage errors).
  const std::string probe = (std::filesystem::path(dir) / ".rivetkit-write-check").string();
  int probe_fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (probe_fd < 0) {
    return fail(Error{"storage", "data_dir_not_writable",
                      fmt::format("data directory {} is not writable: {}", dir,
                                  std::generic_category().message(errno)),
                      std::nullopt, false});
  }
  ::close(probe_fd);
  ::unlink(probe.c_str());
  const std::string path = (std::filesystem::path(dir) / "rivetkit.db").string();
  // Before the database is touched: a second process must not even run recovery on it.
  auto lock = DirLock::acquire(dir);
  if (!lock) {
    return fail(std::move(lock.error()));
  }

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

  auto store =
      std::make_shared<LocalStoreImpl>(std::move(options), std::move(vfs), std::move(*lock));
  if (auto r = store->start(std::move(writer), std::move(reader)); !r) {
    return fail(std::move(r.error()));
  }
  return std::shared_ptr<LocalStore>(std::move(store));
}

}  // namespace rivetkit::storage
