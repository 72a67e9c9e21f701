#pragma once
// What the actor runtime needs to persist one actor. Local mode implements it over the local
// SQLite database (local_store.hpp); engine mode over the engine's per-actor storage.
//
// Contract: commit() calls from one actor are applied in the order they were made (the order of
// their co_await), and a commit resumes its caller only once the write is durable (fsynced
// locally, acknowledged by the engine remotely). Many concurrent commits may share one
// transaction/fsync (group commit).

#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace rivetkit::storage {

/// The persisted part of an actor (core-semantics.md §2.2: `_rivet_actor` + `_rivet_actor_state`).
struct PersistedActor {
  bool has_initialized = false;
  std::optional<std::string> input;  // compat-CBOR bytes of the create input
  std::optional<std::string> state;  // CBOR bytes of the user state; nullopt before the first save
};

/// One atomic write. Fields left empty are not touched.
struct ActorWrite {
  std::optional<std::string> state;
  std::optional<bool> has_initialized;
};

class ActorStore {
 public:
  virtual ~ActorStore() = default;
  virtual Task<Result<PersistedActor>> load() = 0;
  virtual Task<Result<void>> commit(ActorWrite write) = 0;
};

}  // namespace rivetkit::storage
