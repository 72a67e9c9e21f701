#pragma once
// Engine mode's storage::ActorStore: an actor's persisted data (state, connections, schedules)
// lives in the engine's per-actor KV store (envoy-protocol.md §4.8), so whichever process the
// engine starts the actor on finds it. Why KV and not the SQLite page store: docs/engine-mode.md.
//
// Layout: the whole record (record_codec.hpp) is written under its generation,
//   key = 0x01 | generation (u32 big-endian) | chunk (u16 big-endian), value = up to 120 KiB,
// chunk 0 starting with the chunk count. Every commit writes the complete record in ONE put
// (atomic in the engine: each KV request is its own transaction).
//
// Fencing: a generation only ever writes its own keys, and a loading generation reads the
// newest record whose generation is <= its own, then immediately copies it under its own
// generation. A stale instance of an older generation (e.g. on a process that lost the engine
// for a moment) can therefore never overwrite what a newer generation wrote or read.
//
// Limits: the record must fit one put (976 KiB in the engine), so state + connections +
// schedules of one actor are limited to about 950 KiB in engine mode.
//
// The actor's ordered KV (storage/kv.hpp: user KV under 0x04, SQLite pages under 0x08) is
// stored as is, next to the record. A commit's KV writes and the record are one set of writes:
// one EngineActorKv write (engine_actor_kv.hpp): one request when they fit one (128 keys,
// 976 KiB, puts only or one kind of delete), else through a commit journal
// (kv_commit_journal.hpp) that makes them atomic all the same.
// The commit reports durable only once every request is acknowledged. Fencing covers the record
// only: KV writes of a stale generation are not fenced.

#include "engine/engine_actor_kv.hpp"
#include "engine/engine_kv.hpp"
#include "storage/actor_store.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rivetkit::engine {

class KvActorStore final : public storage::ActorStore {
 public:
  /// Told, after a commit is durable, which tunneled connections it saved (with their message
  /// indexes), so their sockets can acknowledge what is now safe (envoy-protocol.md §4.11).
  using ConnsDurable = std::function<void(std::vector<storage::PersistedConn>)>;

  KvActorStore(std::shared_ptr<EngineKv> link,
               std::string actor_id,
               std::uint32_t generation,
               std::optional<std::string> input,
               ConnsDurable on_conns_durable = nullptr);

  Task<Result<storage::PersistedActor>> load() override;
  Task<Result<void>> commit(storage::ActorWrite write) override;
  storage::ActorKv& kv_store() override { return kv_; }

  /// Wipes every key of the actor (used when it is destroyed at its own request).
  static Task<Result<void>> drop(std::shared_ptr<EngineKv> link, std::string actor_id);

 private:
  /// The record's put request (nullopt + error when it is too large).
  Result<envoy::KvPutRequest> record_put() const;
  Task<Result<void>> put_record();
  /// After this generation's first record write: its older generations' records go.
  Task<void> drop_older_generations();

  std::shared_ptr<EngineKv> link_;
  std::string actor_id_;
  std::uint32_t generation_;
  std::optional<std::string> input_;
  ConnsDurable on_conns_durable_;
  storage::PersistedActor current_;
  /// Older generations' keys still exist and are deleted after our first successful write.
  bool older_generations_ = false;
  /// The actor's keys (the record, the features' namespaces), with the engine's limits.
  EngineActorKv kv_;
};

}  // namespace rivetkit::engine
