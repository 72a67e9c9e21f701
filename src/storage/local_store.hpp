#pragma once
// Local mode's storage: one SQLite database (WAL) under the data directory holding the actor
// directory (ids, names, keys, input, timestamps) and every actor's persisted data.
//
// Threading: SQLite work runs on a dedicated writer thread (plus a reader connection for loads
// and lookups), never on the I/O threads. Every coroutine below resumes on the caller's executor.
// Writes submitted while a transaction is being committed are batched into the next one, so
// concurrent commits share one fsync (group commit). With `synchronous_full` (the default) a
// commit is durable across power loss; otherwise across process crashes only.
//
// Ordering: all writes (create/get_or_create/destroy/next_generation, the reservations of
// acquire_generation, and every ActorStore's commit) go through one FIFO queue and are applied in
// the order their co_await started. (acquire_generation served from memory is a read.) A read
// issued after a write completed sees that write (reads use a separate WAL reader connection on
// its own thread, so they never wait behind an fsync). Each write runs in its own SAVEPOINT inside
// the shared transaction: one failing write does not affect the others in its batch.
//
// Operations are not cancellable: once started, a write completes (and its caller resumes with
// the result) even if the awaiting coroutine's cancellation slot is signalled.
//
// Lifetime: ActorStore handles keep the LocalStore alive. close() (and the destructor) drain every
// queued write first. An operation started after close() fails with `storage.closed`.
//
// Schema and indexes: see schema.hpp.

#include "storage/actor_store.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::storage {

class FaultInjector;  // fault_injection.hpp (tests)

struct LocalStoreOptions {
  /// PRAGMA synchronous=FULL (fsync per group commit) or NORMAL (no fsync on commit in WAL).
  bool synchronous_full = true;
  /// Most writes per group-commit transaction.
  std::size_t max_batch_ops = 1024;
  /// How long a connection waits for a lock held by another process.
  int busy_timeout_ms = 5000;
  /// acquire_generation: how many generations one durable write reserves for an actor. A larger
  /// block means fewer wakes that wait for a write; up to block - 1 numbers of an actor are
  /// skipped per process restart. 1 makes acquire_generation behave like next_generation.
  std::uint32_t generation_block = 16;
  /// acquire_generation: most actors whose unused reserved generations are remembered in memory
  /// (one 16-byte slot of a flat table that is kept 3/8 to 3/4 full: 21 to 43 bytes each).
  /// Beyond it an arbitrary entry is forgotten: that actor's next wake reserves a new block.
  std::size_t generation_cache_entries = 65536;
  /// Once a storage thread had no work for this long after a burst, its connection's page cache
  /// (cache_size, 2 MiB) is given back and the heap trimmed, so idle actors cost no cache memory.
  /// 0 keeps the caches.
  int release_cache_after_ms = 500;
  /// Test-only: injected I/O and commit failures (opens the database through a shim VFS).
  std::shared_ptr<FaultInjector> faults;
};

/// Counters since open (monotonic; read at any time from any thread).
struct LocalStoreStats {
  std::uint64_t write_ops = 0;                // writes executed by the writer thread
  std::uint64_t transactions = 0;             // committed group-commit transactions
  std::uint64_t failed_transactions = 0;      // batches whose COMMIT failed or was rolled back
  std::uint64_t max_batch = 0;                // most writes in one batch
  std::uint64_t read_ops = 0;                 // reads executed by the reader thread
  std::uint64_t generations_reserved = 0;     // acquire_generation calls that needed a write
  std::uint64_t generations_from_memory = 0;  // acquire_generation calls served without a write
};

/// One entry of pending_alarms().
struct PendingAlarm {
  std::string actor_id;
  std::int64_t trigger_at = 0;  // ms since the epoch: the actor's earliest schedule
};

/// One row of the actor directory. `key` is the serialized key (client-protocol.md §4.4); an empty
/// string means a keyless actor (REST `key: null`; a serialized key is never empty). Keyless
/// actors are never unique and never found by find_actor / get_or_create_actor.
struct ActorRecord {
  std::string actor_id;
  std::string name;
  std::string key;
  std::optional<std::string> input;  // compat-CBOR bytes
  std::string crash_policy = "sleep";
  std::int64_t create_ts = 0;  // ms since epoch
  std::optional<std::int64_t> destroy_ts;
  /// Stored as given by create (0 = never started, the first start is 1). Afterwards the highest
  /// generation handed out or reserved (acquire_generation), not necessarily the running one.
  std::uint32_t generation = 1;
};

struct ListQuery {
  std::string name;
  std::optional<std::string> key;
  std::size_t limit = 100;
  /// Only records created strictly before this create_ts (pagination, newest first). Ties on
  /// create_ts are ordered newest insert first.
  std::optional<std::int64_t> before_create_ts;
  bool include_destroyed = false;
};

class LocalStore {
 public:
  /// Opens (creating if needed) `<dir>/rivetkit.db`, creating `dir` as well.
  static Result<std::shared_ptr<LocalStore>> open(const std::string& dir,
                                                  LocalStoreOptions options = {});
  virtual ~LocalStore() = default;

  /// Inserts a new actor (destroy_ts is ignored: a new actor is live). A live actor with the same
  /// (name, key) -> error `actor.duplicate_key` with metadata {existing_actor_id, key}.
  virtual Task<Result<ActorRecord>> create_actor(ActorRecord record) = 0;
  /// Returns the live actor with (name, key), or inserts `record` (created = true). Atomic.
  virtual Task<Result<std::pair<ActorRecord, bool>>> get_or_create_actor(ActorRecord record) = 0;
  /// By id, destroyed ones included.
  virtual Task<Result<std::optional<ActorRecord>>> get_actor(std::string actor_id) = 0;
  /// The live actor with (name, key).
  virtual Task<Result<std::optional<ActorRecord>>> find_actor(std::string name,
                                                              std::string key) = 0;
  /// Newest first.
  virtual Task<Result<std::vector<ActorRecord>>> list_actors(ListQuery query) = 0;
  /// Live (not destroyed) actors per name, in name order (metrics: awake and asleep).
  virtual Task<Result<std::vector<std::pair<std::string, std::uint64_t>>>> live_actor_counts() = 0;
  /// Marks the actor destroyed (destroy_ts = now) and deletes its persisted data (input, every key
  /// of its KV: state, connections, schedules, user KV, ...) and its alarm in the same write. The
  /// tombstone keeps the directory fields so get_actor still returns it. Returns false when the id
  /// is unknown or already destroyed.
  virtual Task<Result<bool>> destroy_actor(std::string actor_id, std::int64_t now_ms) = 0;
  /// Bumps and returns the generation with a durable write (one group commit, i.e. an fsync with
  /// synchronous_full). Unknown or destroyed -> error `actor.not_found`.
  virtual Task<Result<std::uint32_t>> next_generation(std::string actor_id) = 0;
  /// The generation for a new start of the actor (wake), usually without waiting for a write.
  /// Guarantees, also across crashes (SIGKILL, power loss with synchronous_full): a number is
  /// never returned twice for one actor, and every call returns more than every earlier completed
  /// call (and next_generation) returned for that actor. Numbers are not contiguous: the store
  /// durably reserves `generation_block` numbers at a time (one write; that call waits for it)
  /// and hands out the rest of the block from memory after checking on the reader thread that the
  /// actor is live, so a wake skips the fsync. A restart forgets the unused part of every block.
  /// Unknown or destroyed -> `actor.not_found`. Mixing it with next_generation is allowed.
  virtual Task<Result<std::uint32_t>> acquire_generation(std::string actor_id) = 0;
  /// For every live actor with at least one schedule: (actor_id, earliest trigger_at), ordered by
  /// trigger_at (ties by creation order). Runs on the reader thread; walks the directory's
  /// next-alarm index (schema.hpp), which each commit keeps up to date.
  virtual Task<Result<std::vector<PendingAlarm>>> pending_alarms() = 0;

  /// The per-actor persistence handle the runtime uses: the runtime's records as keys of the
  /// actor's rows of actor_kv (kv_actor_store.hpp, the layout engine mode uses), the input from
  /// the directory. load() and commit() of an unknown or destroyed actor fail with
  /// `actor.not_found`.
  virtual std::unique_ptr<ActorStore> actor_store(std::string actor_id) = 0;

  /// Blocks until every submitted write is committed, then stops the storage threads.
  virtual void close() = 0;

  virtual LocalStoreStats stats() const = 0;

  // --- test hooks ------------------------------------------------------------------------------
  /// While paused, the writer starts no new batch: writes queue up (close() still drains them).
  virtual void pause_writer_for_test(bool paused) = 0;
  /// Writes queued and not yet taken by the writer.
  virtual std::size_t queued_writes_for_test() const = 0;
  /// PRAGMA integrity_check plus the store's own invariants (INVARIANTS.md), on the reader.
  virtual Task<Result<void>> verify_consistency_for_test() = 0;
};

}  // namespace rivetkit::storage
