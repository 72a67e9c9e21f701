#pragma once
// An actor's persisted data (state, hibernating connections, schedules, the created flag and the
// create input) as keys of its ordered KV (actor_kv.hpp): the ActorStore over any ActorKv.
// Engine mode uses it over the engine's KV (engine/kv_actor_store.hpp), fenced between
// generations; local mode will use it over the local store's rows (unfenced: one process owns a
// data directory).
//
// Layout (runtime_records.hpp): one head key (owner, sealed flag, created flag, the state or where
// its chunks are), one key per hibernating connection, one per schedule, the create input, all
// in one epoch's key space under 0x03; large state in chunks behind the head. A commit is ONE
// ActorKv write of the keys it changes, atomic with the user's KV writes. Message indexes, the
// part of a hibernating connection that nearly every message moves, live in the head (up to
// runtime_records::kIndexTableBytes of them), so that a message which changes the state and any
// number of connections' indexes writes one key: the head; a state above 96 KiB first writes its
// chunks into the slot the head does not name, then the head names them in that atomic write.
// No size limit: an 8 MiB state is 69 chunks.
//
// Fencing between generations (KvActorStoreOptions::fenced): where the store does not fence
// writes itself (the engine's KV), an instance that lost its owner for a moment may still write.
// So a generation writes only in an epoch that no earlier live generation can write:
// - A clean stop seals the epoch (close(): the head says the owner writes nothing more). The next
//   generation takes a sealed epoch over as it is: one put of the head naming it the owner.
// - Otherwise (the owner crashed, failed over, lost the engine) the next generation copies the
//   data into a new epoch numbered with its own generation and deletes the older ones; a stale
//   owner's writes then land in an epoch nobody reads.
// - A generation that finds an epoch or an owner newer than itself is stale and does not start.
//
// Migration: records of an earlier format (KvActorStoreOptions::legacy: engine mode's one BARE
// record under 0x01) are copied into the keys on the first load and deleted.
//
// The actor's ordered KV (storage/kv.hpp: user KV under 0x04, queues, workflows, SQLite pages) is
// stored as is, next to these keys, and written in the same atomic ActorKv write as a commit's
// records (in engine mode one request when it fits one, else through its commit journal).

#include "storage/actor_kv.hpp"
#include "storage/actor_store.hpp"
#include "storage/runtime_records.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace rivetkit::storage {

/// Records of an earlier format under [start, end) (before the records' prefix): read when no
/// record of this format exists, copied into keys, then deleted.
struct LegacyRecords {
  std::string start;
  std::string end;
  std::function<Result<std::optional<PersistedActor>>(const std::vector<KvEntry>&)> decode;
};

struct KvActorStoreOptions {
  std::uint32_t generation = 1;
  /// The create input the start was given (kept when the actor is created; wins over the kept
  /// one when set).
  std::optional<std::string> input;
  /// Hand-over between generations fenced by epochs and seals (see the file comment). Without
  /// it everything is in epoch 0: nothing is sealed or copied (one process owns the data).
  bool fenced = true;
  /// Keep the create input under the records (engine mode). Local mode keeps it in the actor
  /// directory instead, and sets the loaded actor's input itself.
  bool store_input = true;
  /// Told, after a commit is durable, which connections it saved.
  std::function<void(std::vector<PersistedConn>)> on_conns_durable;
  std::optional<LegacyRecords> legacy;
};

/// The earliest trigger time of an actor's schedules after a commit (nullopt: none left).
struct NextAlarm {
  std::optional<std::int64_t> at;
};

class KvActorStore : public ActorStore {
 public:
  KvActorStore(std::string actor_id, std::unique_ptr<ActorKv> kv, KvActorStoreOptions options);

  Task<Result<PersistedActor>> load() override;
  /// Loads first when load() has not succeeded yet (a commit builds on the stored head).
  Task<Result<void>> commit(ActorWrite write) override;
  ActorKv& kv_store() override { return *kv_; }
  /// Seals the epoch: this generation stopped cleanly and writes nothing more (commits after it
  /// fail), so the next one takes the keys over without copying them.
  Task<void> close() override;

 protected:
  /// Writes one commit's batch atomically. `alarm` is set when the commit changes the earliest
  /// schedule's time: a store that keeps it next to the actor (local mode's directory, for
  /// wake-ups without a scan) writes it in the same transaction.
  virtual Task<Result<void>> write_commit(KvBatch batch, std::optional<NextAlarm> alarm);
  std::unique_ptr<ActorKv>& kv() { return kv_; }

 private:
  /// load(): reads the newest epoch and makes it this generation's (see the file comment).
  Task<Result<PersistedActor>> read_and_own();
  /// The actor as epoch `epoch`'s records (and chunks) hold it.
  Task<Result<PersistedActor>> read_epoch(std::uint32_t epoch,
                                          const runtime_records::Head& head,
                                          const std::vector<KvEntry>& records);
  /// Writes all of `actor` into a new epoch of this generation (the copy that fences out older
  /// generations), then deletes what older epochs and the earlier format left.
  Task<Result<void>> take_over(const PersistedActor& actor, bool legacy);
  /// Puts `state` as chunks of `slot` (outside any atomic write: nothing names them yet) and
  /// returns the head that names them.
  Task<Result<runtime_records::Head>> write_chunks(const std::string& state, std::uint8_t slot);
  /// After a take-over: deletes what older epochs (and the earlier format) left.
  Task<void> take_over_cleanup(bool legacy);
  Error stale(std::uint32_t newer) const;
  /// Deletes the tombstones this generation wrote or found (128 keys at a time).
  Task<void> sweep_tombstones();
  /// Deletes [start, end); a failure only leaves garbage nothing reads (logged).
  Task<void> clean(std::pair<std::string, std::string> range);

  std::string actor_id_;
  std::unique_ptr<ActorKv> kv_;
  KvActorStoreOptions options_;
  std::uint32_t generation_;
  /// The epoch this generation writes in, and its head as last written (or to be written).
  std::uint32_t epoch_;
  runtime_records::Head head_;
  bool head_written_ = false;
  bool loaded_ = false;
  bool sealed_ = false;
  /// Keys of this epoch holding a tombstone (runtime_records.hpp), deleted kTombstonesPerDelete
  /// at a time after the commit that reaches that many, and at close().
  static constexpr std::size_t kTombstonesPerDelete = 128;
  std::vector<std::string> tombstones_;
  /// Each stored connection's key without its message indexes, as this generation last read or
  /// wrote it: an upsert that changes nothing else, of a connection the head's index table
  /// holds, writes the head alone.
  std::unordered_map<std::string, std::string> cold_;
  /// Each stored schedule's trigger time, and those times sorted: the next alarm.
  std::unordered_map<std::string, std::int64_t> schedule_at_;
  std::multiset<std::int64_t> trigger_times_;
};

}  // namespace rivetkit::storage
