#pragma once
// ActorKv: one actor's ordered key-value store (kv.hpp), the storage primitive both modes
// provide and every feature of the runtime sits on (user KV, queues, workflows, SQLite pages;
// next the runtime's own records: issue "The runtime's own data as keys").
//
// Implemented by local mode (local_store.cpp: the actor's rows of the local SQLite database),
// by engine mode (engine/engine_actor_kv.hpp: the engine's per-actor KV, with its request limits
// and paging), and in memory for tests (tests/unit/core/memory_kv.hpp).
//
// Contract:
// - Reads see every write that completed before they began.
// - write() applies its batch atomically (all of it or none, whatever crash cuts it) and resumes
//   only once it is durable. Writes of one actor apply in the order they were made.
// - Keys are at most max_key_size() bytes, values at most kMaxKvValueSize (kv.hpp); callers
//   check (the stores refuse larger ones with a storage error).

#include "storage/kv.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::storage {

class ActorKv {
 public:
  virtual ~ActorKv() = default;
  /// The value of each key, in the order asked (nullopt: absent).
  virtual Task<Result<std::vector<std::optional<std::string>>>> get(
      std::vector<std::string> keys) = 0;
  /// The entries `query` selects (a prefix or a range, forward or reversed, up to a limit).
  virtual Task<Result<std::vector<KvEntry>>> list(KvQuery query) = 0;
  /// Applies `batch` atomically; resumes once it is durable.
  virtual Task<Result<void>> write(KvBatch batch) = 0;
  /// Applies `batch` without the promise of atomicity: each part may land on its own, and a
  /// crash may leave some of it. For writes nothing reads until a later atomic write names them
  /// (a large state's chunks), and deletes of what nothing reads. Resumes once all of it is
  /// durable. The engine sends it as plain requests, without its commit journal.
  virtual Task<Result<void>> write_loose(KvBatch batch) { return write(std::move(batch)); }
  /// Finishes or undoes what a crash left half done (engine mode: its commit journal), before
  /// anything reads the actor's keys.
  virtual Task<Result<void>> recover() { co_return Result<void>{}; }
  /// Whether a write with both puts and deletes costs more than one with puts only (the engine
  /// takes them in separate requests, so it needs its commit journal to keep them atomic).
  virtual bool mixed_writes_cost_more() const { return false; }
  /// The longest key this store takes (bytes, any namespace prefix included).
  virtual std::size_t max_key_size() const = 0;
};

}  // namespace rivetkit::storage
