#pragma once
// ActorDirectory: where a mode keeps its actors (RivetKit's ManagerDriver): find one by id or by
// (name, key), create one, destroy one, list them. Local mode implements it over its SQLite
// store (src/local/local_directory.*); engine mode over the engine's actor API. The gateway, the
// REST API and actor-to-actor calls find actors through it, then hand them work through
// Runtime::dispatch.
//
// A record's `key` is the serialized key (client-protocol.md §4.4; "" for a keyless actor, which
// is never found by key). All functions may be called from any executor.

#include "storage/local_store.hpp"
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <optional>
#include <string>
#include <vector>

namespace rivetkit::core {

using ActorRecord = storage::ActorRecord;
using ActorListQuery = storage::ListQuery;

class ActorDirectory {
 public:
  struct GetOrCreated {
    ActorRecord actor;
    bool created = false;
  };

  virtual ~ActorDirectory() = default;

  /// The actor with this id, destroyed ones included (their destroy_ts is set); nullopt: none.
  virtual Task<Result<std::optional<ActorRecord>>> get_for_id(std::string actor_id) = 0;
  /// The live actor with (name, key); nullopt: none.
  virtual Task<Result<std::optional<ActorRecord>>> get_with_key(std::string name,
                                                                std::string key) = 0;
  /// The live actor with (wanted.name, wanted.key), or a new one made from `wanted` (its id,
  /// input and crash policy). Concurrent calls for one key create one actor.
  virtual Task<Result<GetOrCreated>> get_or_create(ActorRecord wanted) = 0;
  /// A new actor; a live one with the same (name, key) -> actor.duplicate_key.
  virtual Task<Result<ActorRecord>> create(ActorRecord wanted) = 0;
  /// Destroys the actor for good: its instance stops (on_destroy runs, connections close) and
  /// its data goes. false: no such live actor.
  virtual Task<Result<bool>> destroy(std::string actor_id) = 0;
  /// Actors named query.name (and with query.key), newest first.
  virtual Task<Result<std::vector<ActorRecord>>> list(ActorListQuery query) = 0;
};

}  // namespace rivetkit::core
