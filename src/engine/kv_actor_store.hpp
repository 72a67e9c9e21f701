#pragma once
// Engine mode's storage::ActorStore: an actor's persisted data (state, connections, schedules)
// lives in the engine's per-actor KV store (envoy-protocol.md §4.8), so whichever process the
// engine starts the actor on finds it. Why KV and not the SQLite page store: docs/engine-mode.md.
//
// Layout (runtime_keys.hpp): one head key (owner, sealed flag, created flag, the state or where
// its chunks are), one key per hibernating connection, one per schedule, the create input, all
// in one epoch's key space under 0x03; large state in chunks behind the head. A commit is ONE
// EngineActorKv write of the keys it changes (a connection's message-index update writes that
// connection's key only), atomic with the user's KV writes; a state above 96 KiB first writes its
// chunks into the slot the head does not name, then the head names them in that atomic write.
// No size limit: an 8 MiB state is 69 chunks.
//
// Fencing between generations: the engine does not fence KV writes, and an instance that lost
// the engine for a moment may still write (the link stops writing before the engine declares it
// lost, envoy_link.cpp, but in-flight requests may land later). So a generation writes only in
// an epoch that no earlier live generation can write:
// - A clean stop seals the epoch (close(): the head says the owner writes nothing more). The next
//   generation takes a sealed epoch over as it is: one put of the head naming it the owner.
// - Otherwise (the owner crashed, failed over, lost the engine) the next generation copies the
//   data into a new epoch numbered with its own generation and deletes the older ones; a stale
//   owner's writes then land in an epoch nobody reads.
// - A generation that finds an epoch or an owner newer than itself is stale and does not start.
//
// Migration: an actor written by earlier releases (one BARE record under 0x01, record_codec.hpp)
// is copied into the keys on its first load and the record deleted.
//
// The actor's ordered KV (storage/kv.hpp: user KV under 0x04, queues, workflows, SQLite pages) is
// stored as is, next to these keys, and written in the same atomic write as a commit's records:
// one request when it fits one (128 keys, 976 KiB, puts only or one kind of delete), else
// through a commit journal (kv_commit_journal.hpp) that makes it atomic all the same.

#include "engine/engine_actor_kv.hpp"
#include "engine/engine_kv.hpp"
#include "engine/runtime_keys.hpp"
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

  /// Seals the epoch: this generation stopped cleanly and writes nothing more (commits after it
  /// fail), so the next one takes the keys over without copying them.
  Task<void> close() override;

 private:
  /// The actor as epoch `epoch`'s records (and chunks) hold it.
  Task<Result<storage::PersistedActor>> read_epoch(std::uint32_t epoch,
                                                   const runtime_keys::Head& head,
                                                   const std::vector<storage::KvEntry>& records);
  /// Writes all of `actor` into a new epoch of this generation (the copy that fences out older
  /// generations), then deletes what older epochs and the old record format left.
  Task<Result<void>> take_over(const storage::PersistedActor& actor, bool legacy);
  /// Puts `state` as chunks of `slot` (outside any atomic write: nothing names them yet) and
  /// returns the head that names them.
  Task<Result<runtime_keys::Head>> write_chunks(const std::string& state, std::uint8_t slot);
  /// After a take-over: deletes what older epochs (and the old format) left.
  Task<void> take_over_cleanup(bool legacy);
  /// The newest complete record of the old format at or below this generation.
  Result<std::optional<storage::PersistedActor>> decode_legacy(
      const std::vector<storage::KvEntry>& entries) const;
  Error stale(std::uint32_t newer) const;
  /// Deletes the tombstones this generation wrote or found (requests of 128 keys).
  Task<void> sweep_tombstones();
  /// Deletes [start, end); a failure only leaves garbage nothing reads (logged).
  Task<void> clean(std::pair<std::string, std::string> range);

  std::shared_ptr<EngineKv> link_;
  std::string actor_id_;
  std::uint32_t generation_;
  std::optional<std::string> input_;
  ConnsDurable on_conns_durable_;
  /// The epoch this generation writes in, and its head as last written (or to be written).
  std::uint32_t epoch_ = 0;
  runtime_keys::Head head_;
  bool head_written_ = false;
  bool sealed_ = false;
  /// Keys of this epoch holding a tombstone (runtime_keys.hpp), deleted kTombstonesPerDelete at
  /// a time after the commit that reaches that many, and at close().
  static constexpr std::size_t kTombstonesPerDelete = 128;
  std::vector<std::string> tombstones_;
  /// The actor's keys (the records, the features' namespaces), with the engine's limits.
  EngineActorKv kv_;
};

}  // namespace rivetkit::engine
