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
// Ordering: all writes (create/get_or_create/destroy/next_generation and every ActorStore's
// commit) go through one FIFO queue and are applied in the order their co_await started. A read
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
  /// Test-only: injected I/O and commit failures (opens the database through a shim VFS).
  std::shared_ptr<FaultInjector> faults;
};

/// Counters since open (monotonic; read at any time from any thread).
struct LocalStoreStats {
  std::uint64_t write_ops = 0;            // writes executed by the writer thread
  std::uint64_t transactions = 0;         // committed group-commit transactions
  std::uint64_t failed_transactions = 0;  // batches whose COMMIT failed or was rolled back
  std::uint64_t max_batch = 0;            // most writes in one batch
  std::uint64_t read_ops = 0;             // reads executed by the reader thread
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
  /// Marks the actor destroyed (destroy_ts = now) and deletes its persisted data (state, input;
  /// later also connections, schedules, KV, queues). The tombstone keeps the directory fields so
  /// get_actor still returns it. Returns false
  /// when the id is unknown or already destroyed.
  virtual Task<Result<bool>> destroy_actor(std::string actor_id, std::int64_t now_ms) = 0;
  /// Bumps and returns the generation (called on every wake). Unknown or destroyed -> error
  /// `actor.not_found`.
  virtual Task<Result<std::uint32_t>> next_generation(std::string actor_id) = 0;

  /// The per-actor persistence handle the runtime uses. load() and commit() of an unknown or
  /// destroyed actor fail with `actor.not_found`.
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
