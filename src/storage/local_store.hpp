#pragma once
// Local mode's storage: one SQLite database (WAL) under the data directory holding the actor
// directory (ids, names, keys, input, timestamps) and every actor's persisted data.
//
// Threading: SQLite work runs on a dedicated writer thread (plus a reader connection for loads
// and lookups), never on the I/O threads. Every coroutine below resumes on the caller's executor.
// Writes submitted while a transaction is being committed are batched into the next one, so
// concurrent commits share one fsync (group commit). With `synchronous_full` (the default) a
// commit is durable across power loss; otherwise across process crashes only.

#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "storage/actor_store.hpp"

namespace rivetkit::storage {

struct LocalStoreOptions {
  bool synchronous_full = true;
};

/// One row of the actor directory. `key` is the serialized key (client-protocol.md §4.4).
struct ActorRecord {
  std::string actor_id;
  std::string name;
  std::string key;
  std::optional<std::string> input;  // compat-CBOR bytes
  std::string crash_policy = "sleep";
  std::int64_t create_ts = 0;        // ms since epoch
  std::optional<std::int64_t> destroy_ts;
  std::uint32_t generation = 1;
};

struct ListQuery {
  std::string name;
  std::optional<std::string> key;
  std::size_t limit = 100;
  /// Only records created strictly before this create_ts (pagination, newest first).
  std::optional<std::int64_t> before_create_ts;
  bool include_destroyed = false;
};

class LocalStore {
 public:
  /// Opens (creating if needed) `<dir>/rivetkit.db`, creating `dir` as well.
  static Result<std::shared_ptr<LocalStore>> open(const std::string& dir,
                                                  LocalStoreOptions options = {});
  virtual ~LocalStore() = default;

  /// Inserts a new actor. A live actor with the same (name, key) -> error
  /// `actor.duplicate_key` with metadata {existing_actor_id, key}.
  virtual Task<Result<ActorRecord>> create_actor(ActorRecord record) = 0;
  /// Returns the live actor with (name, key), or inserts `record` (created = true). Atomic.
  virtual Task<Result<std::pair<ActorRecord, bool>>> get_or_create_actor(ActorRecord record) = 0;
  /// By id, destroyed ones included.
  virtual Task<Result<std::optional<ActorRecord>>> get_actor(std::string actor_id) = 0;
  /// The live actor with (name, key).
  virtual Task<Result<std::optional<ActorRecord>>> find_actor(std::string name, std::string key) = 0;
  /// Newest first.
  virtual Task<Result<std::vector<ActorRecord>>> list_actors(ListQuery query) = 0;
  /// Marks the actor destroyed (destroy_ts = now) and deletes its persisted data. Returns false
  /// when the id is unknown or already destroyed.
  virtual Task<Result<bool>> destroy_actor(std::string actor_id, std::int64_t now_ms) = 0;
  /// Bumps and returns the generation (called on every wake).
  virtual Task<Result<std::uint32_t>> next_generation(std::string actor_id) = 0;

  /// The per-actor persistence handle the runtime uses.
  virtual std::unique_ptr<ActorStore> actor_store(std::string actor_id) = 0;

  /// Blocks until every submitted write is committed, then stops the storage threads.
  virtual void close() = 0;
};

}  // namespace rivetkit::storage
