#pragma once
// Engine mode's storage::ActorStore: an actor's persisted data lives in the engine's per-actor KV
// store (envoy-protocol.md §4.8), so whichever process the engine starts the actor on finds it.
// Why KV and not the SQLite page store: docs/engine-mode.md.
//
// The layout, the commit and the fencing between generations are storage::KvActorStore's
// (storage/kv_actor_store.hpp) over EngineActorKv (engine_actor_kv.hpp: the engine's request
// limits, paging and commit journal), fenced: the engine does not fence KV writes, and an
// instance that lost the engine for a moment may still write (the link stops writing before the
// engine declares it lost, envoy_link.cpp, but a request in flight may land later). What is
// engine-only here: the record of earlier releases (one BARE record under
// 0x01 | generation u32 BE | chunk u16 BE, record_codec.hpp), migrated into keys on first load,
// and drop().

#include "engine/engine_kv.hpp"
#include "storage/kv_actor_store.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::engine {

class KvActorStore final : public storage::KvActorStore {
 public:
  /// Told, after a commit is durable, which tunneled connections it saved (with their message
  /// indexes), so their sockets can acknowledge what is now safe (envoy-protocol.md §4.11).
  using ConnsDurable = std::function<void(std::vector<storage::PersistedConn>)>;

  KvActorStore(std::shared_ptr<EngineKv> link,
               std::string actor_id,
               std::uint32_t generation,
               std::optional<std::string> input,
               ConnsDurable on_conns_durable = nullptr);

  /// Wipes every key of the actor (used when it is destroyed at its own request).
  static Task<Result<void>> drop(std::shared_ptr<EngineKv> link, std::string actor_id);
};

}  // namespace rivetkit::engine
